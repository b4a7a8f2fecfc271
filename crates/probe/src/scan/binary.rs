//! The CLI binary: where it is, and what `--version` and `--help` print.

use super::Scan;
use crate::binary;
use crate::report::Binary;
use crate::sanitize::{Clean, clean};

/// Lines of `--version` and `--help` kept.
const VERSION_LINES: usize = 5;
const HELP_LINES: usize = 80;

impl Scan<'_> {
    pub(super) fn binary(&mut self, name: &str) -> Binary {
        let mut binary = Binary {
            name: self.s.path(name, false),
            ..Binary::default()
        };
        let Some(path) = binary::locate(name) else {
            self.warn(
                "binary.missing",
                clean!(
                    "binary {} not found on PATH: version and help unavailable (the scan continues from on-disk conventions)",
                    binary.name
                ),
            );
            return binary;
        };
        binary.found = true;
        binary.path = Some(self.s.path(&path.to_string_lossy(), false));
        for (arg, lines) in [("--version", VERSION_LINES), ("--help", HELP_LINES)] {
            let run = binary::run(&path, &[arg], self.opts.command_timeout);
            let text = run.text().map(|t| self.s.text(t, lines));
            match &run {
                binary::Run::TimedOut { .. } => self.warn(
                    "binary.timeout",
                    clean!(
                        "`{} {}` did not finish within {} s and was stopped",
                        binary.name,
                        Clean::lit(if arg == "--help" {
                            "--help"
                        } else {
                            "--version"
                        }),
                        Clean::count(self.opts.command_timeout.as_secs())
                    ),
                ),
                binary::Run::Failed(e) => self.warn(
                    "binary.run",
                    clean!(
                        "{} could not be started: {}",
                        binary.name,
                        self.s.text(&e.to_string(), 1)
                    ),
                ),
                binary::Run::Printed {
                    exit_code: Some(code),
                    ..
                } if *code != 0 => self.info(
                    "binary.exit",
                    clean!(
                        "`{} {}` exited with status {}",
                        binary.name,
                        Clean::lit(if arg == "--help" {
                            "--help"
                        } else {
                            "--version"
                        }),
                        self.s.identifier(&code.to_string())
                    ),
                ),
                binary::Run::Printed { .. } => {}
            }
            if arg == "--version" {
                binary.version = text;
            } else {
                binary.help = text;
            }
        }
        binary
    }
}
