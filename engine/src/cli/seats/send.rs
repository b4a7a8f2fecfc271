//! `drover send`: one message to a seat, waited for or in the background.

use crate::cli::output::outln;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};

use super::host::send_acp;
use super::{SendArgs, context, ray_settings};
use crate::cli::Outcome;
use crate::cli::output::print_json;
use crate::cli::pause::{self, Hold, Holder};
use crate::cli::resume;
use crate::drive::{Conversation, TurnSpec, Verdict, headless, interactive};
use crate::run::now_ns;
use crate::seats::{self, SeatRecord};
use crate::workspace::{self, WorkspaceKind};

/// What `drover send` did: held back by a pause, a turn's report, or a
/// turn started in the background. Printed by the command, returned as
/// JSON by the MCP `send` tool.
pub enum Sent {
    Stopped {
        seat: String,
        why: String,
    },
    Turn {
        seat: String,
        result: Box<crate::drive::TurnReport>,
        outcome: Outcome,
    },
    Background {
        seat: String,
        run: String,
        pid: u32,
        started: Box<crate::run::RunEvent>,
    },
}

impl Sent {
    /// What `drover send --json` prints.
    pub fn to_json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(match self {
            Sent::Stopped { seat, why } => {
                serde_json::json!({"seat": seat, "sent": false, "reason": why})
            }
            Sent::Turn { result, .. } => serde_json::to_value(result)?,
            Sent::Background {
                seat,
                run,
                pid,
                started,
            } => serde_json::json!({
                "seat": seat, "run": run, "task": seat,
                "pid": pid, "started": started.to_json(),
            }),
        })
    }

    pub fn outcome(&self) -> Outcome {
        match self {
            Sent::Stopped { .. } => Outcome::Failed,
            Sent::Turn { outcome, .. } => *outcome,
            Sent::Background { .. } => Outcome::Ok,
        }
    }

    fn print(&self) {
        match self {
            Sent::Stopped { seat, why } => outln!("{seat}: {why}"),
            Sent::Turn { seat, result, .. } => print_turn(seat, result),
            Sent::Background { seat, started, .. } => outln!(
                "{seat}: {} (`drover wait {seat}` for its verdict)",
                started.transition.record.value(),
            ),
        }
    }
}

pub fn send(project: &Path, args: SendArgs) -> anyhow::Result<Outcome> {
    let sent = deliver(project, &args)?;
    if args.json.json {
        print_json(&sent.to_json()?)?;
    } else {
        sent.print();
    }
    Ok(sent.outcome())
}

/// `drover send`'s work: the message delivered (its turn waited for, or
/// started in the background with `no_wait`). A human seat is refused.
pub fn deliver(project: &Path, args: &SendArgs) -> anyhow::Result<Sent> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    let Some(record) = seats::load(&project, &args.nick) else {
        bail!("no seat named {} (see `drover seats`)", args.nick);
    };
    // What runs, where, and which pane is typed into come from the record.
    let mut record = seats::require_sealed(record).map_err(anyhow::Error::msg)?;
    if record.human {
        bail!(
            "{} is a human seat: drover never types into it",
            record.nick
        );
    }
    if args.no_wait {
        return send_in_background(&project, &record, args);
    }
    let interrupted = crate::cli::interrupt_flag()?;
    let held = pause::hold(
        &project,
        Holder::Seat(&record),
        || context(&project, &record),
        args.timeout,
        &interrupted,
    )?;
    if let Hold::Stopped(why) = held {
        return Ok(Sent::Stopped {
            seat: record.nick,
            why,
        });
    }
    if record.workspace == WorkspaceKind::Acp {
        return send_acp(&project, &record, args);
    }
    let ctx = context(&project, &record)?;
    let mut spec = TurnSpec::new(&record.nick, &args.prompt, record.cwd.clone());
    spec.model = record.model.clone();
    spec.extra_args = record.extra_args.clone();
    spec.timeout = args.timeout;
    spec.keep = true;
    spec.cost_budget = record.budget_usd;
    spec.budget_mode = record.budget_mode;
    watch_budgets(&project, &record, &mut spec);
    spec.cancel = Some(std::sync::Arc::clone(&interrupted));
    let opted_out = if record.no_resume {
        Some("the seat was brought up with --no-resume")
    } else if record.workspace == WorkspaceKind::Jules {
        // Its driver already retries the API, backing off, within the turn.
        Some("a jules seat's driver retries the API itself")
    } else {
        None
    };
    let mut resumed = 0;
    let result = loop {
        let result = one_turn(&project, &ctx, &mut record, &spec)?;
        let Some(wait) = resume::plan(&ctx, &record.nick, opted_out, &result, resumed) else {
            break result;
        };
        let gone = || {
            seats::load(&project, &record.nick).is_none_or(|now| now.value.run_id != record.run_id)
        };
        if !resume::wait(
            &ctx,
            &record.nick,
            &result,
            wait,
            resumed,
            &interrupted,
            &gone,
        ) {
            break result;
        }
        resumed += 1;
        spec.prompt = ctx
            .profile()
            .resume
            .message
            .clone()
            .unwrap_or_else(|| args.prompt.clone());
    };
    let outcome = send_outcome(&interrupted, &result);
    Ok(Sent::Turn {
        seat: record.nick,
        result: Box::new(result),
        outcome,
    })
}

/// How often a seat under a `[budget]` has its spend sampled mid-turn.
const LIVE_SAMPLE: Duration = Duration::from_secs(5);

/// Watches the seat's `[budget]` limits while the turn runs: the turn's
/// transcript is sampled (as `--budget-usd` samples it) against what is
/// left under the nearest limit, so the moment a limit is crossed is
/// journaled (`budget-tripped`, and the run's ATTENTION) as it happens.
/// The turn itself is never cut: the pause comes before the next message.
fn watch_budgets(project: &Path, record: &SeatRecord, spec: &mut TurnSpec) {
    // A seat's own enforced budget (`up --budget-usd --budget-mode
    // enforce`) keeps its sampler: it may end the turn, a [budget] may not.
    if spec.budget_mode == crate::drive::BudgetMode::Enforce {
        return;
    }
    let Ok(budgets) = crate::budget::Budgets::load(project) else {
        return;
    };
    let standings = budgets.for_seat(record);
    let left_usd = standings
        .iter()
        .filter_map(|s| s.limit_usd.map(|l| (l - s.spent_usd).max(0.0)))
        .reduce(f64::min);
    let left_tokens = standings
        .iter()
        .filter_map(|s| s.limit_tokens.map(|l| l.saturating_sub(s.spent_tokens)))
        .min();
    if left_usd.is_none() && left_tokens.is_none() {
        return;
    }
    // Sampled often enough that a crossing is seen near when it happens
    // (the transcript's reader is confined once and kept).
    spec.heartbeat = spec.heartbeat.min(LIVE_SAMPLE);
    // The sampler reads the conversation's whole transcript: what it cost
    // before this message is the seat's recorded cost.
    let before = record.cost_usd.unwrap_or(0.0);
    if let Some(left) = left_usd {
        let live = before + left;
        if spec.cost_budget.is_none_or(|own| live < own) {
            spec.cost_budget = Some(live);
            if spec.budget_mode == crate::drive::BudgetMode::Off {
                spec.budget_mode = crate::drive::BudgetMode::Warn;
            }
        }
    }
    if left_tokens.is_some() && spec.token_budget.is_none() && record.cost_usd.is_none() {
        // Weighted tokens of a conversation with no earlier message are
        // this message's own.
        spec.token_budget = left_tokens;
        if spec.budget_mode == crate::drive::BudgetMode::Off {
            spec.budget_mode = crate::drive::BudgetMode::Warn;
        }
    }
}

/// One message's turn on the seat, its conversation and cost recorded.
fn one_turn(
    project: &Path,
    ctx: &crate::drive::Context,
    record: &mut SeatRecord,
    spec: &TurnSpec,
) -> anyhow::Result<crate::drive::TurnReport> {
    let mut spec = spec.clone();
    let kind = record.workspace;
    let result = if kind.has_panes() {
        let pane = record.pane.clone().context("the seat record has no pane")?;
        let seat = interactive::Seat {
            workspace: workspace::open_panes(kind, project)?,
            pane,
            from: crate::gate::Provenance::SealedRecord,
        };
        if let Ok(false) = seat.ws().pane_alive(&seat.pane) {
            bail!(
                "seat {}'s pane is gone; `drover down {}` and bring it up again",
                record.nick,
                record.nick
            );
        }
        interactive::send(ctx, &spec, &seat, record.human)
    } else {
        spec.conversation = record.conversation.clone().map_or_else(
            || Conversation::new_for(ctx.profile()),
            Conversation::Resume,
        );
        if kind == WorkspaceKind::Jules {
            super::jules::refuse_if_followed(ctx, record)?;
            let target = super::jules::target(project, record)?;
            let policy = super::jules::policy(project);
            crate::drive::jules::run(ctx, &spec, &target, &policy)
        } else {
            match record.ray.clone() {
                Some(mut seat) => {
                    let target = crate::drive::ray::driver::Target {
                        settings: ray_settings(project, &record.cli, &seat)?,
                        node: seat.node.clone(),
                    };
                    let result = crate::drive::ray::driver::run(ctx, &spec, &target);
                    if seat.node.is_none()
                        && result.session_id.is_some()
                        && let Some(job) =
                            crate::drive::ray::driver::read_record(&ctx.run, &record.nick)
                                .filter(|job| job.from == crate::gate::Provenance::SealedRecord)
                    {
                        seat.node = job.value.node_id;
                        record.ray = Some(seat);
                        seats::save(project, record)?;
                    }
                    result
                }
                None => headless::run(ctx, &spec),
            }
        }
    };
    let mut changed = false;
    if let Some(id) = &result.session_id {
        record.conversation = Some(id.clone());
        changed = true;
    }
    changed |= add_cost(record, &result);
    if changed {
        seats::save(project, record)?;
    }
    Ok(result)
}

pub(super) fn send_outcome(
    interrupted: &std::sync::atomic::AtomicBool,
    result: &crate::drive::TurnReport,
) -> Outcome {
    if interrupted.load(std::sync::atomic::Ordering::Relaxed) {
        Outcome::Interrupted
    } else if result.status == Verdict::Completed {
        Outcome::Ok
    } else {
        Outcome::Failed
    }
}

/// Adds a message's cost to its seat's record; whether it did. A pane's
/// transcript holds the whole conversation; a headless or acp message
/// reports its own turns.
pub(super) fn add_cost(record: &mut SeatRecord, result: &crate::drive::TurnReport) -> bool {
    let Some(cost) = result.cost_usd else {
        return false;
    };
    record.cost_usd = Some(if record.workspace.has_panes() {
        cost
    } else {
        record.cost_usd.unwrap_or(0.0) + cost
    });
    record.cost_approximate |= result.usage_approximate;
    true
}

fn print_turn(seat: &str, result: &crate::drive::TurnReport) {
    outln!("{seat}: {} ({})", result.status.as_str(), result.reason);
    if let Some(reply) = &result.reply {
        outln!(
            "  reply: {}",
            drover_types::text::truncate_chars(reply.lines().next().unwrap_or_default(), 200)
        );
    }
}

/// `drover send --no-wait`: the same `drover send` in a detached process;
/// returns once that process typed the message (the seat's journal shows
/// it working) or gave up.
pub(super) fn send_in_background(
    project: &Path,
    record: &SeatRecord,
    args: &SendArgs,
) -> anyhow::Result<Sent> {
    let started = now_ns();
    let mut follower = crate::run::Follower::new(project, Some(&record.run_id));
    // A seat paused on its budget journals nothing new for a second held
    // message (its question is asked once): the pause is what it started.
    let paused = follower
        .read_all()
        .into_iter()
        .rev()
        .find(|e| e.transition.task == record.nick)
        .filter(|e| e.transition.prompt_kind() == Some(crate::budget::PROMPT_KIND));
    let mut command = std::process::Command::new(std::env::current_exe()?);
    command
        .arg("--project")
        .arg(project)
        .args(["send", "--timeout"])
        .arg(format!("{}s", args.timeout.as_secs()))
        .arg(&record.nick)
        .arg(&args.prompt)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = crate::workspace::process::detached(&mut command)
        .spawn()
        .context("starting the background send")?;
    let pid = child.id();
    let until = std::time::Instant::now() + Duration::from_secs(120);
    let started_line = loop {
        let line = follower
            .next(Duration::from_millis(200))
            .into_iter()
            .find(|e| e.transition.task == record.nick && e.transition.ts >= started);
        if let Some(line) = line.or_else(|| paused.clone()) {
            break line;
        }
        if let Ok(Some(status)) = child.try_wait() {
            bail!(
                "the background send of {} ended before the turn started ({status})",
                record.nick
            );
        }
        if std::time::Instant::now() >= until {
            bail!(
                "the background send of {} did not start its turn within 2 minutes",
                record.nick
            );
        }
    };
    // Reaped on a thread: the turn may outlive this command, never as a zombie of it.
    std::thread::spawn(move || child.wait());
    Ok(Sent::Background {
        seat: record.nick.clone(),
        run: record.run_id.clone(),
        pid,
        started: Box::new(started_line),
    })
}
