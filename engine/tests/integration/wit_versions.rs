//! Components of every hosted `drover:adapter` version load side by side:
//! a 0.1 component (built with wit-bindgen alone against `wit/since_v0_1`)
//! answers through the engine's latest types, and a component of a version
//! this drover does not host is refused by name before any of its code runs.

use std::path::PathBuf;

use drover::sandbox::{CompileCache, Limits, Sandbox, SandboxError, WitVersion};
use drover::types::wit;

fn guest(file: &str) -> Vec<u8> {
    let path = PathBuf::from(drover_guest_builds::DIR).join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("test guest missing at {}: {e}", path.display()))
}

fn profile() -> wit::Profile {
    wit::Profile {
        name: "old-cli".into(),
        binary: "oldcli".into(),
        prompt_template: "{prompt}".into(),
        launch_args: vec![],
        bypass_args: vec![],
        model_flag: "--model".into(),
        dialect: "none".into(),
        hook_events: vec![],
        usage_parser: "lines".into(),
        env_fault_patterns: vec![],
        turn_args: vec![],
        settings: vec![("K".into(), "V".into())],
        turn_argv: vec![],
        turn_resume: vec![],
        turn_session_id: vec![],
        turn_output: String::new(),
    }
}

#[test]
fn a_0_1_component_loads_and_its_answers_come_through() {
    let sandbox = Sandbox::new(CompileCache::disabled()).expect("engine");
    let (old, _) = sandbox
        .load(
            "old",
            &guest("drover_test_v0_1.wasm"),
            "v0_1",
            Limits::default(),
        )
        .expect("a 0.1 component loads");
    assert_eq!(old.wit_version(), WitVersion::V0_1);
    let p = profile();

    let d = old.describe().expect("describes");
    assert_eq!((d.name.as_str(), d.wit_version.as_str()), ("old", "0.1.0"));
    assert_eq!(
        d.capabilities,
        [
            wit::Capability::Prompt,
            wit::Capability::Headless,
            wit::Capability::Screen
        ]
    );
    assert_eq!(d.usage_parsers[0].needles, ["n"]);

    let rendered = old.render_prompt(&p, "hi").expect("no trap");
    assert_eq!(rendered, Ok("old-cli says: hi".to_string()));

    let request = wit::LaunchRequest {
        prompt: "go".into(),
        model: String::new(),
        extra_args: Some(vec!["--x".into()]),
        conversation: wit::Conversation::Resume("c9".into()),
    };
    let command = old
        .headless_command(&p, &request)
        .expect("no trap")
        .expect("answers");
    assert_eq!(command.argv, ["oldcli", "resume:c9", "--x"]);
    assert_eq!(command.env, [("K".to_string(), "V".to_string())]);
    assert_eq!(command.stdin.as_deref(), Some("go"));
    assert!(matches!(
        old.interactive_command(&p, &request),
        Ok(Err(wit::AdapterError::Unsupported(m))) if m.contains("interactive-command")
    ));

    let output = wit::TurnOutput {
        stdout: "out".into(),
        stderr: "err".into(),
        exit_code: Some(1),
        prior_usage: Some(wit::Usage {
            input: 41,
            output: 0,
            cache_read: 0,
            cache_write: 0,
            reasoning: 0,
            requests: 0,
        }),
    };
    let turn = old
        .parse_turn(&p, &output)
        .expect("no trap")
        .expect("answers");
    assert_eq!(turn.outcome, wit::TurnOutcome::Blocked);
    assert_eq!(turn.prompt_kind, Some(wit::PromptKind::TrustDialog));
    assert_eq!(
        (turn.reply.as_deref(), turn.error.as_deref()),
        (Some("out"), Some("err"))
    );
    let usage = &turn.usage.expect("usage").entries[0].usage;
    assert_eq!((usage.input, usage.reasoning, usage.requests), (42, 5, 1));

    let install = wit::HookInstall {
        dialect: "none".into(),
        relay_command: "drover hook".into(),
        events: vec![],
        marker: "drover".into(),
    };
    assert_eq!(
        old.detect_hooks("", &install).expect("no trap"),
        Err(wit::AdapterError::InvalidInput(
            "v0.1 guest: refuses".into()
        ))
    );

    let event = old
        .parse_hook(&p, "Done", b"abc")
        .expect("no trap")
        .expect("answers");
    assert_eq!(event.kind, wit::CanonicalEvent::Stop);
    assert_eq!(
        (event.native.as_str(), event.session_id.as_deref()),
        ("Done", Some("abc"))
    );
    assert!(event.subagent);
    assert_eq!(event.prompt_kind, Some(wit::PromptKind::Question));

    let context = wit::LocationContext {
        home: "/h".into(),
        cwd: "/w".into(),
        env: vec![("OLD_HOME".into(), "/o".into())],
    };
    let globs = old.transcript_locations(&p, &context).expect("no trap");
    assert_eq!(globs.len(), 1);
    assert_eq!(
        (globs[0].base, globs[0].pattern.as_str()),
        (wit::GlobBase::Absolute, "/o/*.log")
    );

    let fault = old
        .classify_fault(&p, &["slow down".to_string()])
        .expect("no trap")
        .expect("a fault");
    assert_eq!(fault.kind, wit::FaultKind::RateLimit);
    assert_eq!(
        (fault.evidence.as_str(), fault.retry_after_secs),
        ("slow down", Some(30))
    );

    let screen = wit::Screen {
        rows: vec![],
        title: "ready".into(),
    };
    let reading = old.read_screen(&p, &screen).expect("no trap");
    assert_eq!(
        (reading.state, reading.evidence.as_str()),
        (wit::SeatState::Idle, "ready")
    );

    let mut tally = old.tally("lines", Limits::default()).expect("a tally");
    tally.begin_file("a.log").expect("begins");
    tally.feed(b"one\ntwo\n").expect("no trap").expect("feeds");
    let report = tally.finish().expect("no trap").expect("usage");
    assert_eq!(report.entries[0].usage.input, 2);
}

#[test]
fn a_component_of_an_unhosted_version_is_refused_by_name() {
    let sandbox = Sandbox::new(CompileCache::disabled()).expect("engine");
    let refused = sandbox.load(
        "future",
        &guest("drover_test_future.wasm"),
        "future",
        Limits::default(),
    );
    let Err(error) = refused else {
        panic!("a drover:adapter@0.9.0 component loaded");
    };
    assert!(
        matches!(&error, SandboxError::Incompatible { found, .. } if found == "0.9.0"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "component future targets drover:adapter@0.9.0; this drover hosts drover:adapter 0.1.x and 0.2.x"
    );
}

#[test]
fn built_in_components_are_the_latest_version() {
    let sandbox = Sandbox::new(CompileCache::disabled()).expect("engine");
    let builtin = drover::builtin::find("claude").expect("built in");
    let (claude, _) = sandbox
        .load_builtin(builtin, Limits::default())
        .expect("loads");
    assert_eq!(claude.wit_version(), WitVersion::LATEST);
    assert_eq!(
        claude.describe().expect("describes").wit_version,
        drover::sandbox::WIT_VERSION
    );
}
