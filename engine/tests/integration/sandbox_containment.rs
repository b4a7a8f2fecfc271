//! A hostile guest cannot escape or take the engine down: every misdeed ends
//! in a typed error, and the next call on the same adapter answers normally.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use drover::sandbox::{CompileCache, Limit, Limits, Sandbox, SandboxError};
use drover::types::wit;

fn hostile_wasm() -> Vec<u8> {
    let path = PathBuf::from(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("hostile guest missing at {}: {e}", path.display()))
}

fn profile() -> wit::Profile {
    wit::Profile {
        name: "hostile".into(),
        binary: "none".into(),
        prompt_template: "{prompt}".into(),
        launch_args: vec![],
        bypass_args: vec![],
        model_flag: "--model".into(),
        dialect: "none".into(),
        hook_events: vec![],
        usage_parser: "none".into(),
        env_fault_patterns: vec![],
        turn_args: vec![],
        settings: vec![],
        turn_argv: vec![],
        turn_resume: vec![],
        turn_session_id: vec![],
        turn_output: String::new(),
    }
}

fn adapter(limits: Limits) -> drover::sandbox::Adapter {
    let sandbox = Sandbox::new(CompileCache::disabled()).expect("engine");
    let wasm = hostile_wasm();
    let (adapter, _) = sandbox
        .load("hostile", &wasm, "test", limits)
        .expect("loads");
    adapter
}

fn prompt(adapter: &drover::sandbox::Adapter, text: &str) -> Result<String, SandboxError> {
    adapter
        .render_prompt(&profile(), text)
        .map(|r| r.expect("the hostile guest answers render-prompt with Ok"))
}

fn still_answers(adapter: &drover::sandbox::Adapter) {
    assert_eq!(
        prompt(adapter, "hello").expect("answers after the misdeed"),
        "echo hello"
    );
}

#[test]
fn an_infinite_loop_stops_at_the_deadline() {
    let limits = Limits {
        call_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let a = adapter(limits);
    let started = Instant::now();
    let err = prompt(&a, "loop").expect_err("interrupted");
    let waited = started.elapsed();
    assert_eq!(
        err.limit(),
        Some(Limit::Time(Duration::from_millis(200))),
        "{err}"
    );
    // Bounded well below "forever"; not a timing assertion on speed.
    assert!(waited < Duration::from_secs(30), "took {waited:?}");
    let text = err.to_string();
    assert!(
        text.contains("component hostile: render-prompt exceeded its time limit of 200 ms"),
        "{text}"
    );
    still_answers(&a);
}

#[test]
fn a_huge_allocation_is_refused_at_the_cap() {
    let a = adapter(Limits::default());
    let err = prompt(&a, "alloc:1024").expect_err("refused");
    assert_eq!(err.limit(), Some(Limit::Memory(64 << 20)), "{err}");
    assert!(err.to_string().contains("memory limit of 64 MiB"), "{err}");
    still_answers(&a);
    // Within the cap is fine.
    assert_eq!(prompt(&a, "alloc:8").expect("fits"), "allocated 8 MiB");
}

#[test]
fn a_panic_surfaces_with_its_message() {
    let a = adapter(Limits::default());
    let err = prompt(&a, "panic:the guest gave up").expect_err("trapped");
    assert!(matches!(err, SandboxError::Trap { .. }), "{err:?}");
    let panic = err
        .panic_message()
        .expect("panic text captured from stderr");
    assert!(panic.contains("the guest gave up"), "{panic}");
    assert!(err.to_string().contains("render-prompt trapped"), "{err}");
    still_answers(&a);
}

#[test]
fn files_and_environment_are_invisible() {
    let a = adapter(Limits::default());
    let answer = prompt(&a, "read-file:/etc/passwd").expect("answers");
    assert!(
        answer.starts_with("error:"),
        "a file was readable: {answer}"
    );
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let answer = prompt(&a, &format!("read-file:{manifest}")).expect("answers");
    assert!(
        answer.starts_with("error:"),
        "a file was readable: {answer}"
    );
    assert!(
        std::env::var_os("PATH").is_some(),
        "the host has an environment to leak"
    );
    let answer = prompt(&a, "env").expect("answers");
    assert!(answer.starts_with("vars=0 args=0 "), "{answer}");
    let host_cwd = std::env::current_dir().expect("host cwd");
    assert!(
        !answer.contains(&*host_cwd.to_string_lossy()),
        "host cwd leaked: {answer}"
    );
}

#[test]
fn a_huge_return_value_is_refused() {
    let a = adapter(Limits::default());
    let err = prompt(&a, "huge:200").expect_err("refused");
    assert_eq!(err.limit(), Some(Limit::Memory(64 << 20)), "{err}");
    still_answers(&a);
}

#[test]
fn stderr_is_bounded_and_a_chatty_guest_keeps_working() {
    let a = adapter(Limits::default());
    // Each call writes 100 KiB; the store is replaced before the pipe fills.
    for _ in 0..8 {
        assert_eq!(prompt(&a, "stderr:100").expect("answers"), "wrote");
    }
    still_answers(&a);
}
