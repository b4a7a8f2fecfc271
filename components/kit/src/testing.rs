//! Test support for the adapter crates (feature `testing`).
//!
//! Adapters enable the feature from `[dev-dependencies]` only, so nothing
//! here reaches a component build. What lives here is the same for every
//! CLI: the layout of the real captures under `tests/fixtures/real/<cli>/`,
//! the recorder's hook log, tally feeding.
//! What a CLI is expected to print or count stays in its crate.

use serde_json::Value;

use crate::{GuestTally, TurnOutput, Usage, UsageReport};

/// A fixture of `tests/fixtures/real/<cli>/`, embedded at compile time.
#[doc(hidden)]
#[macro_export]
macro_rules! __real_fixture {
    ($cli:literal, $file:expr) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real/",
            $cli,
            "/",
            $file
        ))
    };
}
pub use __real_fixture as real_fixture;

/// The captured headless run `<case>` of `tests/fixtures/real/<cli>/` as a
/// [`Run`]: `<case>.stdout.<ext>`, `.stderr.txt`, `.exit`, `.hooks.jsonl`.
#[doc(hidden)]
#[macro_export]
macro_rules! __captured_run {
    ($cli:literal, $case:literal, $ext:literal) => {
        $crate::testing::Run {
            stdout: $crate::testing::real_fixture!($cli, concat!($case, ".stdout.", $ext)),
            stderr: $crate::testing::real_fixture!($cli, concat!($case, ".stderr.txt")),
            exit: $crate::testing::real_fixture!($cli, concat!($case, ".exit")),
            hooks: $crate::testing::real_fixture!($cli, concat!($case, ".hooks.jsonl")),
        }
    };
}
pub use __captured_run as captured_run;

/// One captured headless run: its stdout, stderr, exit code and hook log.
pub struct Run {
    pub stdout: &'static str,
    pub stderr: &'static str,
    pub exit: &'static str,
    pub hooks: &'static str,
}

impl Run {
    /// The exit code as drover sees it: `timeout` exits 124 where drover's
    /// own deadline kills the process, which drover reports as no code.
    pub fn exit_code(&self) -> Option<i32> {
        match self.exit.trim().parse().ok() {
            Some(124) => None,
            code => code,
        }
    }

    /// What parse-turn gets for this run.
    pub fn output(&self, prior_usage: Option<Usage>) -> TurnOutput {
        TurnOutput {
            stdout: self.stdout.to_string(),
            stderr: self.stderr.to_string(),
            exit_code: self.exit_code(),
            prior_usage,
        }
    }

    /// stdout's lines, then stderr's.
    pub fn lines(&self) -> Vec<String> {
        self.stdout
            .lines()
            .chain(self.stderr.lines())
            .map(str::to_string)
            .collect()
    }
}

/// Every line of a hook recorder log: (event, payload).
pub fn hook_lines(log: &str) -> Vec<(String, Value)> {
    log.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("recorder line");
            (
                v["event"].as_str().expect("event").to_string(),
                v["payload"].clone(),
            )
        })
        .collect()
}

/// Tallies `files` (name, text) with a `T` for `parser`, fed in `chunk`-byte
/// pieces so rows straddle chunk boundaries.
pub fn tally<T: GuestTally>(
    parser: &str,
    files: &[(&str, &str)],
    chunk: usize,
) -> Option<UsageReport> {
    let t = T::new(parser.to_string());
    for (name, text) in files {
        t.begin_file(name.to_string());
        for piece in text.as_bytes().chunks(chunk) {
            t.feed(piece.to_vec()).expect("feeds");
        }
    }
    t.finish()
}

/// The report's sum; the report must be there.
pub fn total(report: Option<UsageReport>) -> Usage {
    report.expect("usage reported").total()
}
