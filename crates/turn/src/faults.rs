//! Environment-fault classification, run on every non-completed result
//! after teardown: the adapter reads the ANSI-stripped tail of the session's
//! logs (and the CLI's own error sentence, when it gave one).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::{Context, FaultReport};

/// Bytes of each log's tail that are classified.
pub const TAIL_BYTES: u64 = 64 << 10;

/// The last lines of a file, ANSI-stripped, carriage returns as newlines.
pub fn tail_lines(path: &Path) -> Vec<String> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)));
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    lines_of(&bytes)
}

pub fn lines_of(bytes: &[u8]) -> Vec<String> {
    let text = strip_ansi_escapes::strip_str(String::from_utf8_lossy(bytes)).replace('\r', "\n");
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Classifies `lines` (oldest first); a component failure is logged and
/// means "unclassified", never an error for the session.
pub fn classify(ctx: &Context, task: &str, lines: &[String]) -> Option<FaultReport> {
    if lines.is_empty() {
        return None;
    }
    match ctx.adapter().classify_fault(&ctx.profile().to_wit(), lines) {
        Ok(Some(fault)) => {
            ctx.run.lifecycle(
                task,
                "env-fault-classified",
                serde_json::json!({"kind": fault.kind, "rule": fault.rule}),
            );
            let mut report = FaultReport {
                kind: fault.kind,
                evidence: fault.evidence,
                retry_after_secs: fault.retry_after_secs,
                rule: fault.rule,
                hint: None,
            };
            report.hint = crate::privileges::hint(&report);
            Some(report)
        }
        Ok(None) => None,
        Err(e) => {
            ctx.run.lifecycle(
                task,
                "env-fault-unclassified",
                serde_json::json!({"error": e.to_string()}),
            );
            None
        }
    }
}
