//! A model server (or network) that fails: the fault kind and the CLI's
//! own sentence as evidence.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Case, Ends, Fault, Mode, context, timed};
use crate::support::HANG;
use crate::support::real::{Bins, Real, require, wait_for};

/// Each error mode (and a closed port) ends the session not completed,
/// with the right fault kind and the CLI's own sentence as evidence. The
/// modes run side by side, each in its own tree with its own server.
pub fn faults(case: &'static Case) {
    let started = Instant::now();
    let Some(bins) = require(case.cli) else {
        return;
    };
    let handles: Vec<_> = case
        .faults
        .iter()
        .map(|fault| {
            let bins = bins.clone();
            std::thread::spawn(move || fault_one(case, bins, fault))
        })
        .collect();
    let mut failures = Vec::new();
    for handle in handles {
        match handle.join() {
            Ok(Ok(line)) => eprintln!("[real {}] {line}", case.cli),
            Ok(Err(failure)) => failures.push(failure),
            Err(panic) => failures.push(format!("panicked: {panic:?}")),
        }
    }
    timed(case.cli, "faults", started);
    assert!(
        failures.is_empty(),
        "{} of {} fault cases failed:\n\n{}",
        failures.len(),
        case.faults.len(),
        failures.join("\n\n")
    );
}

fn fault_one(case: &Case, bins: Bins, fault: &Fault) -> Result<String, String> {
    let mut real = Real::with(case.cli, bins);
    match fault.mode {
        Mode::Status(status) => {
            real.server
                .control("mode", &json!({"mode": "error", "status": status}));
        }
        Mode::Drop => {
            real.server
                .control("mode", &json!({"mode": "error", "status": "drop"}));
        }
        Mode::ClosedPort => {
            real.point_at_closed_port();
        }
    }
    let prompt = "Reply with exactly: OK";
    let out = match fault.ends {
        Ends::Exits => real.run(HANG, case.args, prompt),
        Ends::AtDeadline(seconds) => real.run(Duration::from_secs(seconds), case.args, prompt),
        Ends::AtSentence => {
            let started = Instant::now();
            let child = real.spawn_run(HANG, case.args, prompt);
            let said = wait_for(HANG, || said_in_logs(&real, fault.evidence).then_some(()));
            // SAFETY: signalling our own child.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGINT);
            }
            let out = Real::finish_run(child, started);
            if said.is_none() {
                return Err(format!(
                    "{}: the CLI never printed {:?} within {HANG:?}\n{}",
                    fault.name,
                    fault.evidence,
                    context(&real, &out)
                ));
            }
            out
        }
    };
    let status = out.status().to_string();
    let kind = out.doc["fault"]["kind"]
        .as_str()
        .unwrap_or("none")
        .to_string();
    let evidence = out.doc["fault"]["evidence"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let line = format!(
        "{}: {status} in {:.1}s, fault {kind} ({}): {evidence}",
        fault.name,
        out.elapsed.as_secs_f64(),
        out.doc["fault"]["rule"].as_str().unwrap_or("-"),
    );
    // A run stopped with Ctrl-C exits 130.
    let code = match fault.ends {
        Ends::AtSentence => 130,
        Ends::Exits | Ends::AtDeadline(_) => 1,
    };
    let ok = if fault.kind == "none" {
        status == "timeout" && out.code == code && out.doc["fault"].is_null()
    } else {
        status != "completed"
            && out.code == code
            && kind == fault.kind
            && evidence.contains(fault.evidence)
    };
    if ok {
        Ok(line)
    } else {
        Err(format!(
            "{line}\n  wanted: not completed, fault {} with evidence containing {:?}\n{}",
            fault.kind,
            fault.evidence,
            context(&real, &out)
        ))
    }
}

/// Whether any log of the tree's runs (the CLI's stdout and stderr as
/// drover kept them) contains `sentence`.
fn said_in_logs(real: &Real, sentence: &str) -> bool {
    let runs = real.work.join(".drover").join("runs");
    let Ok(entries) = std::fs::read_dir(runs) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|run| {
        std::fs::read_dir(run.path().join("logs"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .any(|log| {
                std::fs::read(log.path())
                    .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(sentence))
            })
    })
}
