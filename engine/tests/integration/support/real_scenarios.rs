//! The scenarios every real-CLI test file runs, parameterised by a [`Case`]
//! (what differs per CLI: its Stop-equivalent hook, its error sentences, the
//! tool call that needs a permission, the user's own hook config).

#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::real::{Real, RunOutput};

mod blocked;
mod faults;
mod first_run;
mod hooks;
mod probe;
mod turns;

#[allow(
    unused_imports,
    reason = "the harness is shared by test binaries that each use a part of it"
)]
pub use self::{
    blocked::blocked,
    faults::faults,
    first_run::fresh_config,
    hooks::hooks,
    probe::probe,
    turns::{headless, tmux},
};

/// How the model server (or the network) fails for a fault case.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    Status(u16),
    Drop,
    ClosedPort,
}

#[derive(Debug)]
pub struct Fault {
    pub name: &'static str,
    pub mode: Mode,
    /// The fault kind drover must report (`network`, `overload`, …), or
    /// `none` where the CLI prints no sentence at all and retries until
    /// drover's deadline: then the session must time out with no fault
    /// (rather than a guessed one).
    pub kind: &'static str,
    /// Text of the CLI's own sentence the evidence must contain.
    pub evidence: &'static str,
    pub ends: Ends,
}

/// How a fault case's run ends. No case's verdict depends on how fast the
/// machine is: the waits that are not the verdict are bounded by
/// [`crate::support::HANG`], which only catches a hang.
#[derive(Debug, Clone, Copy)]
pub enum Ends {
    /// The CLI gives up and exits, after its own retries.
    Exits,
    /// The CLI retries for ever, saying so: the run is stopped (Ctrl-C)
    /// once the CLI's sentence is in its output, and the fault is read
    /// from what it printed.
    AtSentence,
    /// The CLI retries without a word for longer than drover's deadline,
    /// in seconds, which ends the run: a timeout with no fault. A busier
    /// machine only makes the CLI slower to give up, so the verdict holds.
    AtDeadline(u64),
}

pub struct Case {
    pub cli: &'static str,
    /// drover args for every run (e.g. a pinned model).
    pub args: &'static [&'static str],
    /// The wire protocol the CLI speaks to the server.
    pub protocol: &'static str,
    /// The CLI's own name for its turn-complete hook event.
    pub stop_event: &'static str,
    /// Whether that event carries the reply text.
    pub stop_carries_reply: bool,
    /// drover args that make the CLI ask before running a tool.
    pub blocked_args: &'static [&'static str],
    /// The tool call (`/__fake/tool` body) that needs a permission.
    pub tool: &'static str,
    pub faults: &'static [Fault],
    /// The user's own hook config files (path in the project, text), with a
    /// hook that appends a line to the given file when the turn ends.
    pub user_hooks: fn(record: &Path) -> Vec<(&'static str, String)>,
    /// Which answered requests the CLI accounts for anywhere drover can
    /// read (all of them, except where a CLI keeps no record of a call).
    pub accounted: fn(request: &Value) -> bool,
}

/// Every answered request is in the CLI's own usage report.
pub fn every_request(_: &Value) -> bool {
    true
}

impl Case {
    /// The model calls after `seq` the server answered and the CLI accounts.
    fn accounted_since(&self, real: &Real, seq: u64) -> Vec<Value> {
        real.server
            .answered_since(seq)
            .into_iter()
            .filter(self.accounted)
            .collect()
    }

    fn timeout(&self) -> Duration {
        crate::support::HANG
    }

    fn args_with(&self, extra: &[&'static str]) -> Vec<&'static str> {
        let mut args = extra.to_vec();
        args.extend_from_slice(self.args);
        args
    }
}

fn context(real: &Real, out: &RunOutput) -> String {
    format!(
        "{:#}\ntook {:.1}s, drover stderr: {}\nstates: {:?}\nrelayed: {:?}\n{}",
        out.doc,
        out.elapsed.as_secs_f64(),
        out.stderr,
        real.states(out.run_id()),
        real.relayed(out.run_id())
            .iter()
            .map(|r| r["native"].clone())
            .collect::<Vec<_>>(),
        real.logs(out.run_id())
    )
}

fn timed(cli: &str, what: &str, started: Instant) {
    eprintln!(
        "[real {cli}] {what}: {:.1}s",
        started.elapsed().as_secs_f64()
    );
}
