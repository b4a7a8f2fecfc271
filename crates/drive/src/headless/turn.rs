//! One headless turn: spawning the CLI, watching it, and reading its output.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use super::{Session, TurnRun, adapter_message};
use crate::records::{ProcessRecord, Record};
use crate::watchdog::{Activity, Alarm};
use crate::{Context, Conversation, conversations};
use drover_gate::Cleared;
use drover_types::wit;
use drover_workspace::{self as workspace, CliCommand, TurnRunner};

/// Bytes of each output stream handed to the adapter (the tail).
const OUTPUT_MAX: u64 = 16 << 20;
/// How often the loop looks at the process between events.
const TICK: Duration = Duration::from_millis(200);

impl Session<'_> {
    /// Spawns the turn and waits for it, the deadline, a stall or the budget.
    pub(super) fn run_turn(
        &mut self,
        command: &Cleared<CliCommand>,
        launched: u64,
    ) -> Result<TurnRun, String> {
        let (ctx, spec) = (self.ctx, self.spec);
        let task = spec.task.as_str();
        let program = command.argv.first().cloned().unwrap_or_default();
        let out_path = ctx.run.stdout_log(task);
        let err_path = ctx.run.stderr_log(task);
        let backend: &dyn TurnRunner = &workspace::Headless;
        let mut child = backend
            .run_turn(&workspace::headless::TurnLaunch {
                command,
                cwd: &spec.cwd,
                stdout: out_path.clone(),
                stderr: err_path.clone(),
            })
            .map_err(|e| e.to_string())?;
        let identity = child.identity;
        let (out_start, err_start) = (child.stdout_offset, child.stderr_offset);
        let record = ProcessRecord {
            pid: child.pid(),
            identity,
            argv: command.argv.clone(),
            launched_ns: launched,
            stdout_offset: out_start,
            stderr_offset: err_start,
            conversation: resumed_id(&spec.conversation),
        };
        if let Err(e) = record.write(&ctx.run, task) {
            tracing::warn!("cannot record the turn's process: {e}");
        }
        let offsets = (out_start, err_start);
        ctx.run.lifecycle(
            task,
            "spawned",
            serde_json::json!({"pid": child.pid(), "argv0": program}),
        );

        let mut activity = Activity::new(offsets);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    // Hooks fired just before exit may still be landing.
                    for event in self
                        .watcher
                        .poll()
                        .into_iter()
                        .filter(|e| e.task == task && e.ts >= launched)
                    {
                        self.seen.absorb(ctx, task, &event);
                    }
                    return Ok(TurnRun {
                        exit_code: status.code(),
                        offsets,
                        ..TurnRun::default()
                    });
                }
                Ok(None) => {}
                Err(e) => return Err(format!("cannot wait for {program}: {e}")),
            }
            activity.observe((len_of(&out_path), len_of(&err_path)));
            let alarm = self
                .watchdog
                .check(ctx, spec, self.seen.transcript_path.as_deref());
            let stopped = match alarm {
                Some(Alarm::Cancelled) => Some(TurnRun {
                    cancelled: true,
                    ..TurnRun::default()
                }),
                Some(Alarm::Timeout(which)) => Some(TurnRun {
                    timed_out: Some(which),
                    ..TurnRun::default()
                }),
                Some(Alarm::OverBudget) => Some(TurnRun {
                    over_budget: true,
                    ..TurnRun::default()
                }),
                // A headless turn cannot be told anything mid-turn: the
                // grace runs, then the turn is stopped.
                Some(Alarm::BudgetNudge) | None => {
                    activity.stalled(spec.stall_grace).then(|| TurnRun {
                        stalled: true,
                        ..TurnRun::default()
                    })
                }
            };
            if let Some(stopped) = stopped {
                child.stop(spec.teardown_grace);
                return Ok(TurnRun { offsets, ..stopped });
            }
            for event in self
                .watcher
                .wait(TICK.min(self.watchdog.deadline.remaining()))
                .into_iter()
                .filter(|e| e.task == task && e.ts >= launched)
            {
                self.seen.absorb(ctx, task, &event);
            }
        }
    }
}

fn len_of(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The id of the conversation a turn resumes, if it resumes one.
pub(crate) fn resumed_id(conversation: &Conversation) -> Option<String> {
    match conversation {
        Conversation::Resume(id) => Some(id.clone()),
        Conversation::Fresh | Conversation::Preset(_) => None,
    }
}

/// Reads the turn's output from where it started in the task's logs and
/// asks the adapter how the turn went. `conversation` is every id the
/// conversation is known by (the one a hook reported, the one resumed):
/// the first with recorded usage gives the prior usage the adapter takes
/// off a running total. Live turns and recovery both read turns here.
pub(crate) fn parse_outcome(
    ctx: &Context,
    task: &str,
    offsets: (u64, u64),
    conversation: &[Option<&str>],
    exit_code: Option<i32>,
) -> wit::TurnResult {
    let stdout = read_from(&ctx.run.stdout_log(task), offsets.0);
    let stderr = read_from(&ctx.run.stderr_log(task), offsets.1);
    let prior = conversations::prior_usage_of(&ctx.project, &ctx.profile().name, conversation);
    let output = wit::TurnOutput {
        stdout,
        stderr,
        exit_code,
        prior_usage: prior.map(|p| p.tokens.to_wit()),
    };
    match ctx.adapter().parse_turn(&ctx.profile().to_wit(), &output) {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => failed(format!(
            "the adapter could not read the output: {}",
            adapter_message(&e)
        )),
        Err(e) => failed(format!("the adapter failed reading the output: {e}")),
    }
}

fn failed(error: String) -> wit::TurnResult {
    wit::TurnResult {
        outcome: wit::TurnOutcome::Unknown,
        reply: None,
        conversation_id: None,
        error: Some(error),
        usage: None,
        prompt_kind: None,
    }
}

/// The tail of a file from `offset`, as lossy text.
pub fn read_from(path: &Path, offset: u64) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = offset.max(len.saturating_sub(OUTPUT_MAX));
    let _ = file.seek(SeekFrom::Start(start));
    let mut bytes = Vec::new();
    let _ = file.take(OUTPUT_MAX).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}
