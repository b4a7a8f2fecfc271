//! Conformance: for each capability a component claims, run it over the
//! built-in corpus (captured hook payloads, panes, headless output, fault
//! sentences, transcripts) and judge each check:
//!
//! - `answered`: it answered, and where a built-in adapter of the same
//!   family exists, the same way;
//! - `declined`: it answered `unsupported` where the capability it claims
//!   needs an answer;
//! - `disagreed`: its answer differs from the built-in family's, or breaks
//!   the contract (a hostile id on the command line, a fault in prose);
//! - `broke-bound`: it trapped, ran out of time or memory, or answered
//!   something no host may use (control characters in evidence, globs that
//!   climb out of their base).
//!
//! docs/authoring.md lists every check.

mod checks;
mod corpus;

use serde::Serialize;

use crate::sandbox::{Adapter, Limits, SandboxError};
use drover_types::wit;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Answered,
    Declined,
    Disagreed,
    BrokeBound,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Declined => "declined",
            Outcome::Disagreed => "disagreed",
            Outcome::BrokeBound => "broke-bound",
        }
    }
}

/// The result of one check.
#[derive(Debug, Serialize)]
pub struct Finding {
    pub capability: wit::Capability,
    pub check: &'static str,
    pub result: Outcome,
    /// How many inputs the check ran, and the first problem when there is one.
    pub detail: String,
}

impl Finding {
    pub fn failed(&self) -> bool {
        self.result != Outcome::Answered
    }
}

/// The component under test.
pub struct Subject<'a> {
    pub adapter: &'a Adapter,
    pub description: &'a wit::Description,
    /// The profile its calls get when no family profile applies.
    pub profile: wit::Profile,
    /// Limits for the tallies it creates.
    pub limits: Limits,
}

/// A built-in adapter of the same family, whose answers are the reference.
pub struct Reference<'a> {
    pub family: &'static str,
    pub adapter: &'a Adapter,
    /// The built-in profile of that family; both sides get it.
    pub profile: wit::Profile,
}

/// The built-in family a component belongs to: a built-in of the same name,
/// else the first built-in sharing a hook dialect or usage parser with it.
pub fn family_of(
    description: &wit::Description,
    builtins: &[(&'static str, wit::Description)],
) -> Option<&'static str> {
    builtins
        .iter()
        .find(|(name, _)| *name == description.name)
        .or_else(|| {
            builtins.iter().find(|(_, builtin)| {
                builtin
                    .dialects
                    .iter()
                    .any(|d| description.dialects.contains(d))
                    || builtin
                        .usage_parsers
                        .iter()
                        .any(|p| description.usage_parsers.iter().any(|q| q.name == p.name))
            })
        })
        .map(|(name, _)| *name)
}

/// Runs the checks of every capability `subject` claims.
pub fn run(subject: &Subject, reference: Option<&Reference>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for capability in &subject.description.capabilities {
        findings.extend(checks::of(*capability, subject, reference));
    }
    findings
}

/// What one call came to.
enum Answer<T> {
    Ok(T),
    Declined(String),
    Refused(String),
    Broke(String),
}

impl<T> Answer<T> {
    fn of(outcome: Result<Result<T, wit::AdapterError>, SandboxError>) -> Answer<T> {
        match outcome {
            Ok(Ok(value)) => Answer::Ok(value),
            Ok(Err(wit::AdapterError::Unsupported(m))) => Answer::Declined(m),
            Ok(Err(wit::AdapterError::InvalidInput(m))) => Answer::Refused(m),
            Err(e) => Answer::Broke(e.to_string()),
        }
    }

    fn total(outcome: Result<T, SandboxError>) -> Answer<T> {
        match outcome {
            Ok(value) => Answer::Ok(value),
            Err(e) => Answer::Broke(e.to_string()),
        }
    }
}

/// Collects a check's verdict over many inputs: the worst verdict wins and
/// its first instance is the detail.
struct Tally {
    capability: wit::Capability,
    check: &'static str,
    inputs: usize,
    worst: Outcome,
    problem: Option<String>,
    problems: usize,
}

impl Tally {
    fn new(capability: wit::Capability, check: &'static str) -> Tally {
        Tally {
            capability,
            check,
            inputs: 0,
            worst: Outcome::Answered,
            problem: None,
            problems: 0,
        }
    }

    fn pass(&mut self) {
        self.inputs += 1;
    }

    fn fail(&mut self, verdict: Outcome, what: String) {
        self.inputs += 1;
        self.problems += 1;
        if rank(verdict) > rank(self.worst) {
            self.worst = verdict;
            self.problem = Some(what);
        } else if self.problem.is_none() {
            self.problem = Some(what);
        }
    }

    /// Judges an answer that only has to come back: a decline or a trap
    /// fails, a refusal of bad input passes.
    fn answered<T>(&mut self, label: &str, answer: &Answer<T>) -> bool {
        match answer {
            Answer::Ok(_) | Answer::Refused(_) => {
                self.pass();
                true
            }
            Answer::Declined(m) => {
                self.fail(Outcome::Declined, format!("{label}: unsupported: {m}"));
                false
            }
            Answer::Broke(e) => {
                self.fail(Outcome::BrokeBound, format!("{label}: {e}"));
                false
            }
        }
    }

    fn finish(self, what: &str) -> Finding {
        let detail = match &self.problem {
            None => format!("{} {what}", self.inputs),
            Some(problem) => {
                let more = self.problems.saturating_sub(1);
                let tail = if more > 0 {
                    format!(" (and {more} more of {})", self.inputs)
                } else {
                    format!(" ({} inputs)", self.inputs)
                };
                format!("{}{tail}", drover_types::text::truncate_chars(problem, 300))
            }
        };
        Finding {
            capability: self.capability,
            check: self.check,
            result: self.worst,
            detail,
        }
    }
}

fn rank(verdict: Outcome) -> u8 {
    match verdict {
        Outcome::Answered => 0,
        Outcome::Declined => 1,
        Outcome::Disagreed => 2,
        Outcome::BrokeBound => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn description(name: &str, dialects: &[&str], parsers: &[&str]) -> wit::Description {
        wit::Description {
            name: name.into(),
            adapter_version: "1".into(),
            wit_version: "0.2.0".into(),
            capabilities: vec![],
            dialects: dialects.iter().map(|d| d.to_string()).collect(),
            usage_parsers: parsers
                .iter()
                .map(|p| wit::UsageParser {
                    name: p.to_string(),
                    needles: vec![],
                })
                .collect(),
            location_env: vec![],
            limitations: vec![],
        }
    }

    #[test]
    fn the_family_is_the_same_name_else_a_shared_dialect_or_parser() {
        let builtins = [
            (
                "claude",
                description("claude", &["claude-settings-json"], &["claude-jsonl"]),
            ),
            (
                "qwen",
                description("qwen", &["claude-settings-json"], &["qwen-chat"]),
            ),
        ];
        assert_eq!(
            family_of(&description("qwen", &[], &[]), &builtins),
            Some("qwen")
        );
        assert_eq!(
            family_of(&description("fork", &[], &["qwen-chat"]), &builtins),
            Some("qwen")
        );
        assert_eq!(
            family_of(
                &description("fork", &["claude-settings-json"], &[]),
                &builtins
            ),
            Some("claude")
        );
        assert_eq!(
            family_of(&description("new", &["x"], &["y"]), &builtins),
            None
        );
    }

    #[test]
    fn the_worst_verdict_and_its_first_instance_make_the_finding() {
        let mut tally = Tally::new(wit::Capability::Screen, "family-panes");
        tally.pass();
        tally.fail(Outcome::Disagreed, "a: idle vs working".into());
        tally.fail(Outcome::BrokeBound, "b: trapped".into());
        tally.fail(Outcome::Disagreed, "c: idle vs blocked".into());
        let finding = tally.finish("panes agree");
        assert_eq!(finding.result, Outcome::BrokeBound);
        assert_eq!(finding.detail, "b: trapped (and 2 more of 4)");
        let mut clean = Tally::new(wit::Capability::Screen, "family-panes");
        clean.pass();
        assert_eq!(clean.finish("panes agree").detail, "1 panes agree");
    }
}
