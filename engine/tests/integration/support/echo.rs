//! The echo-cli example adapters (examples/python-adapter and
//! examples/js-adapter, each built by its build.sh) answer through the
//! sandbox as the examples' READMEs say, and as each other.

use std::path::PathBuf;

use drover::sandbox::{CompileCache, Limits, Sandbox};
use drover::types::wit;
use sha2::Digest;

/// The example built at `$<env_var>`, else at
/// `examples/<dir>/target/<dir>.wasm`; `None` (skip) when it was not built,
/// except under CI, which builds both.
pub fn component(env_var: &str, dir: &str) -> Option<Vec<u8>> {
    let path = std::env::var_os(env_var)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../examples/{dir}/target/{dir}.wasm"))
        });
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(_) if std::env::var_os("CI").is_some() => panic!(
            "{} is missing: CI builds it with examples/{dir}/build.sh",
            path.display()
        ),
        Err(_) => {
            eprintln!(
                "skipping: {} not built (run examples/{dir}/build.sh)",
                path.display()
            );
            None
        }
    }
}

fn profile() -> wit::Profile {
    wit::Profile {
        name: "echo".into(),
        binary: "echo-cli".into(),
        prompt_template: "Use {skill}: {args}".into(),
        launch_args: vec![],
        bypass_args: vec!["--yes".into()],
        model_flag: "--model".into(),
        dialect: "none".into(),
        hook_events: vec![],
        usage_parser: "echo-jsonl".into(),
        env_fault_patterns: vec![],
        turn_args: vec![],
        settings: vec![],
        turn_argv: vec![],
        turn_resume: vec![],
        turn_session_id: vec![],
        turn_output: String::new(),
    }
}

/// Loads the component as `name` and checks its answers.
pub fn assert_answers_like_echo_cli(bytes: &[u8], name: &str) {
    let cache = CompileCache::at(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("drover-cache"));
    let sandbox = Sandbox::new(cache).expect("engine");
    let sha = drover::types::text::hex(&sha2::Sha256::digest(bytes));
    // Python and JavaScript guests are large: give them room (docs/authoring.md).
    let limits = Limits {
        memory_bytes: 256 << 20,
        call_timeout: std::time::Duration::from_secs(10),
        ..Limits::default()
    };
    let (adapter, _) = sandbox.load(name, bytes, &sha, limits).expect("loads");
    let d = adapter.describe().expect("describe");
    assert_eq!((d.name.as_str(), d.wit_version.as_str()), (name, "0.2.0"));
    assert!(d.usage_parsers.iter().any(|p| p.name == "echo-jsonl"));

    let rendered = adapter
        .render_prompt(&profile(), "/review src/main.rs")
        .expect("no trap");
    assert_eq!(rendered, Ok("Use review: src/main.rs".to_string()));
    let bad = adapter
        .render_prompt(
            &wit::Profile {
                prompt_template: "{promt}".into(),
                ..profile()
            },
            "x",
        )
        .expect("no trap");
    assert!(
        matches!(bad, Err(wit::AdapterError::InvalidInput(m)) if m.contains("unknown placeholder {promt}"))
    );

    let output = wit::TurnOutput {
        stdout: "noise\n{\"reply\": \"hi\", \"session\": \"s9\", \"tokens\": {\"in\": 12, \"out\": 34}}\n".into(),
        stderr: String::new(),
        exit_code: Some(0),
        prior_usage: None,
    };
    let turn = adapter
        .parse_turn(&profile(), &output)
        .expect("no trap")
        .expect("parses");
    assert_eq!(turn.outcome, wit::TurnOutcome::Success);
    assert_eq!(
        (turn.reply.as_deref(), turn.conversation_id.as_deref()),
        (Some("hi"), Some("s9"))
    );

    // Lines split across chunks are joined inside the guest.
    let mut tally = adapter.tally("echo-jsonl", limits).expect("tally");
    tally
        .begin_file("/h/.echo-cli/sessions/s1.jsonl")
        .expect("begin");
    let data = b"{\"ts\": \"2026-11-30T10:00:00Z\", \"session\": \"s1\", \"model\": \"m\", \"tokens\": {\"in\": 12, \"out\": 34}}\n{\"session\": \"s1\", \"tokens\": {\"in\": 8, \"out\": 6}}\nnot json \"tokens\"\n";
    for chunk in data.chunks(7) {
        tally.feed(chunk).expect("no trap").expect("fed");
    }
    let report = tally.finish().expect("no trap").expect("usage");
    let (input, output): (u64, u64) = report
        .entries
        .iter()
        .fold((0, 0), |(i, o), e| (i + e.usage.input, o + e.usage.output));
    assert_eq!((input, output, report.rejected_rows), (20, 40, 1));

    let event = adapter
        .parse_hook(
            &profile(),
            "stop",
            br#"{"session": "s1", "cwd": "/w", "reply": "done"}"#,
        )
        .expect("no trap")
        .expect("parses");
    assert_eq!(event.kind, wit::CanonicalEvent::Stop);
    assert_eq!(
        (event.session_id.as_deref(), event.last_message.as_deref()),
        (Some("s1"), Some("done"))
    );
    assert_eq!(event.fields_found, ["session", "cwd", "reply"]);

    let fault = adapter
        .classify_fault(
            &profile(),
            &["echo-cli: error: rate limited, retry in 2 minutes".to_string()],
        )
        .expect("no trap")
        .expect("a fault");
    assert_eq!(
        (fault.kind, fault.retry_after_secs, fault.rule.as_str()),
        (wit::FaultKind::RateLimit, Some(120), "echo/rate-limit")
    );

    let busy = wit::Screen {
        rows: vec!["echo> fix it".into(), "thinking… (esc to cancel)".into()],
        title: String::new(),
    };
    let reading = adapter.read_screen(&profile(), &busy).expect("no trap");
    assert_eq!(
        (reading.state, reading.rule.as_str()),
        (wit::SeatState::Working, "echo/v1/thinking")
    );

    let install = wit::HookInstall {
        dialect: "none".into(),
        relay_command: "drover hook --cli echo".into(),
        events: vec![],
        marker: "drover hook".into(),
    };
    assert!(matches!(
        adapter.install_hooks("", &install).expect("no trap"),
        Err(wit::AdapterError::Unsupported(_))
    ));
}
