//! Settling a run from its files, with the component that reads them.

use super::*;
use crate::conversations::{self, Entry};
use crate::records::{ProcessRecord, Record};
use drover_sandbox::CompileCache;
use drover_types::Tokens;

/// `codex exec --json` after a resume: `turn.completed.usage` is the
/// thread's running total (4202 in, 2000 of them cached; 134 out, 10 of
/// them reasoning), which includes the first turn's 2101/1000/67/5.
const RESUMED: &str = include_str!("../../../../components/codex/fixtures/exec-resumed.jsonl");
const THREAD: &str = "019a9776-0a34-7842-8627-112b63d66e90";

fn codex_context(project: &Path, run: &RunDir, cache: &Path) -> Context {
    let sandbox = Sandbox::new(CompileCache::at(cache.to_path_buf())).expect("sandbox");
    let profile = Catalog::load(project)
        .find("codex")
        .cloned()
        .expect("the built-in codex profile");
    let prepared = crate::launch::Prepared::assess(project, profile, &sandbox).expect("prepared");
    Context::new(project.to_path_buf(), run.clone(), prepared)
}

/// A Codex turn that resumed a conversation, whose drover died while it
/// ran, is settled by `drover status`: its usage is the turn's own, as the
/// live driver would have counted it, not the thread's running total
/// (which would count the first turn twice on the bill).
#[test]
fn a_resumed_codex_turn_settled_later_counts_only_its_own_usage() {
    let project = tempfile::tempdir().expect("project");
    let cache = tempfile::tempdir().expect("cache");
    let p = project.path();
    conversations::record(
        p,
        &Entry {
            ts: 1,
            cli: "codex".to_string(),
            conversation: THREAD.to_string(),
            run: "r0".to_string(),
            task: "t".to_string(),
            usage: Some(Tokens {
                input: 1101,
                output: 67,
                cache_read: 1000,
                reasoning: 5,
                requests: 1,
                ..Tokens::default()
            }),
            cost_usd: None,
        },
    );
    let run = RunDir::create(p, "r1").expect("run");
    let info = RunInfo {
        run_id: "r1".to_string(),
        created_ns: 0,
        cli: "codex".to_string(),
        workspace: WorkspaceKind::Headless,
        project: p.to_path_buf(),
        tasks: vec!["t".to_string()],
        driver_pid: 0,
        driver_start: None,
    };
    std::fs::create_dir_all(run.task_dir("t")).expect("task dir");
    std::fs::write(run.stdout_log("t"), RESUMED).expect("output");
    ProcessRecord {
        pid: 0,
        identity: None,
        argv: vec!["codex".to_string(), "exec".to_string()],
        launched_ns: 0,
        stdout_offset: 0,
        stderr_offset: 0,
        conversation: Some(THREAD.to_string()),
    }
    .write(&run, "t")
    .expect("process record");
    let ctx = codex_context(p, &run, cache.path());

    let result = settle(&ctx, &info, "t").expect("settled");

    assert_eq!(result.status, Verdict::Completed, "{}", result.reason);
    assert!(
        result
            .reason
            .ends_with("(reconciled: drover was not running)")
    );
    assert_eq!(result.reply.as_deref(), Some("SECOND"));
    let usage = result.usage.expect("usage");
    assert_eq!(
        (usage.input, usage.cache_read, usage.output, usage.reasoning),
        (1101, 1000, 67, 5),
        "the turn's own usage, not the thread's total"
    );
}

/// A process record a checkout committed (not sealed by this user's
/// drover) settles nothing: its process is not asked after and its output
/// is not read as this run's.
#[test]
fn an_unsealed_process_record_settles_nothing() {
    let project = tempfile::tempdir().expect("project");
    let cache = tempfile::tempdir().expect("cache");
    let p = project.path();
    let run = RunDir::create(p, "r1").expect("run");
    let info = RunInfo {
        run_id: "r1".to_string(),
        created_ns: 0,
        cli: "codex".to_string(),
        workspace: WorkspaceKind::Headless,
        project: p.to_path_buf(),
        tasks: vec!["t".to_string()],
        driver_pid: 0,
        driver_start: None,
    };
    std::fs::create_dir_all(run.task_dir("t")).expect("task dir");
    std::fs::write(run.stdout_log("t"), RESUMED).expect("output");
    std::fs::write(
        ProcessRecord::path(&run, "t"),
        r#"{"pid":1,"identity":{"pid":1,"start":1},"argv":["codex"],"launched_ns":0,"stdout_offset":0,"stderr_offset":0}"#,
    )
    .expect("planted record");
    let ctx = codex_context(p, &run, cache.path());
    assert!(settle(&ctx, &info, "t").is_none());
}
