//! Environment-fault classification: rules over log lines.
//!
//! A rule is a regex for one complete error sentence a CLI prints, with the
//! fault kind it means. Built-in rules are anchored to the shape of the
//! sentence (its prefix, its punctuation) so that prose in which the work
//! merely talks about errors does not match. Profile patterns
//! (`env_fault_patterns`) are matched too; their kind is read from the line.
//!
//! The newest matching line wins, except that a `generic` rule (a catch-all
//! such as Gemini's `[object Object]` last line) only decides when no
//! specific rule matched anywhere.

use regex_lite::Regex;

use crate::patterns::{ascii_spaces, compiled};
use crate::resets::{Clock, reset_after};

use crate::{Fault, FaultKind};

pub struct FaultRule {
    pub id: &'static str,
    pub kind: FaultKind,
    pub pattern: &'static str,
    /// Only used when no specific rule matches.
    pub generic: bool,
}

impl FaultRule {
    pub const fn new(id: &'static str, kind: FaultKind, pattern: &'static str) -> FaultRule {
        FaultRule {
            id,
            kind,
            pattern,
            generic: false,
        }
    }

    pub const fn generic(id: &'static str, kind: FaultKind, pattern: &'static str) -> FaultRule {
        FaultRule {
            id,
            kind,
            pattern,
            generic: true,
        }
    }
}

/// Evidence lines are cut to this many characters.
pub const EVIDENCE_MAX_CHARS: usize = 240;

struct Compiled {
    id: String,
    kind: Option<FaultKind>,
    generic: bool,
    regex: Regex,
}

/// Classifies `lines` (oldest first), reading reset times at the
/// component's clock in no local zone. Built-in rules that fail to compile
/// are a programming error caught by each adapter's tests; a profile pattern
/// that fails to compile is skipped (the engine validates them at load).
pub fn classify(
    rules: &[FaultRule],
    profile_patterns: &[String],
    lines: &[String],
) -> Option<Fault> {
    classify_at(rules, profile_patterns, lines, &Clock::system())
}

/// Lines a wrapped sentence may continue on (a pane or a terminal wraps
/// "… try again in 5 days 22 hours 11" / "minutes.").
const CONTINUATION_LINES: usize = 2;

/// [`classify`] at `clock`: a fault's `retry_after_secs` is the reset its
/// line states ([`reset_after`]), read from the line alone or, where that
/// says none, from it and the next lines it may wrap onto.
pub fn classify_at(
    rules: &[FaultRule],
    profile_patterns: &[String],
    lines: &[String],
    clock: &Clock,
) -> Option<Fault> {
    let mut active: Vec<Compiled> = Vec::new();
    for rule in rules {
        if let Some(regex) = compiled(rule.pattern) {
            active.push(Compiled {
                id: rule.id.to_string(),
                kind: Some(rule.kind),
                generic: rule.generic,
                regex,
            });
        }
    }
    for (n, pattern) in profile_patterns.iter().enumerate() {
        if let Some(regex) = compiled(pattern) {
            active.push(Compiled {
                id: format!("profile:{n}"),
                kind: None,
                generic: false,
                regex,
            });
        }
    }
    let mut generic_hit: Option<Fault> = None;
    for (index, raw) in lines.iter().enumerate().rev() {
        let line = clean(raw);
        let line = line.as_str();
        if line.is_empty() {
            continue;
        }
        for rule in &active {
            if !rule.regex.is_match(line) {
                continue;
            }
            let fault = Fault {
                kind: rule.kind.unwrap_or_else(|| infer_kind(line)),
                evidence: evidence(line),
                retry_after_secs: reset_of(line, &lines[index + 1..], clock),
                rule: rule.id.clone(),
            };
            if !rule.generic {
                return Some(fault);
            }
            if generic_hit.is_none() {
                generic_hit = Some(fault);
            }
        }
    }
    generic_hit
}

/// A line ANSI-stripped, with Unicode spaces made ASCII, trimmed.
fn clean(raw: &str) -> String {
    let stripped;
    let line = if raw.contains('\u{1b}') {
        stripped = strip_ansi_escapes::strip_str(raw);
        stripped.as_str()
    } else {
        raw
    };
    ascii_spaces(line).trim().to_string()
}

/// The reset `line` states, else the one it and the non-blank lines after
/// it state together.
fn reset_of(line: &str, after: &[String], clock: &Clock) -> Option<u32> {
    reset_after(line, clock).or_else(|| {
        let mut joined = line.to_string();
        for next in after.iter().take(CONTINUATION_LINES) {
            let next = clean(next);
            if next.is_empty() {
                break;
            }
            joined.push(' ');
            joined.push_str(&next);
        }
        (joined.len() > line.len())
            .then(|| reset_after(&joined, clock))
            .flatten()
    })
}

fn evidence(line: &str) -> String {
    match line.char_indices().nth(EVIDENCE_MAX_CHARS) {
        Some((cut, _)) => line[..cut].to_string(),
        None => line.to_string(),
    }
}

/// The fault kind a line's own words indicate, for profile patterns that do
/// not carry one.
pub fn infer_kind(line: &str) -> FaultKind {
    let lower = line.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    if has(&["trust this folder", "trust the files", "do you trust"]) {
        FaultKind::TrustDialog
    } else if has(&[
        "401",
        "unauthorized",
        "api key",
        "authentication",
        "unauthenticated",
        "log in",
        "login",
    ]) {
        FaultKind::Auth
    } else if has(&[
        "quota",
        "resource has been exhausted",
        "billing",
        "credit balance",
    ]) {
        FaultKind::Quota
    } else if has(&["429", "rate limit", "rate-limit", "too many requests"]) {
        FaultKind::RateLimit
    } else if has(&["529", "overloaded", "503", "unavailable", "high demand"]) {
        FaultKind::Overload
    } else if has(&[
        "econnrefused",
        "econnreset",
        "etimedout",
        "enotfound",
        "eai_again",
        "connection",
        "connect",
        "network",
        "fetch failed",
        "socket",
        "dns",
    ]) {
        FaultKind::Network
    } else if has(&[
        "500",
        "502",
        "504",
        "internal server error",
        "server error",
        "internal error",
    ]) {
        FaultKind::ServerError
    } else {
        FaultKind::Unknown
    }
}

/// The wait a line states ("retrying in 60s", "retry after 20 seconds",
/// "try again in 2m"), in seconds; [`reset_after`] reads absolute times too.
pub fn retry_after(line: &str) -> Option<u32> {
    let (_, secs) = crate::resets::wait(line)?;
    u32::try_from(secs.max(0)).ok()
}

/// The lines to classify, with a CLI's JSON error lines unwrapped: a line
/// that is a JSON object for which `message` answers becomes that message's
/// lines (headless JSON output quotes the CLI's sentence inside a string,
/// where no line-anchored rule can see it); every other line stays.
pub fn unwrap_json_lines(
    lines: &[String],
    message: impl Fn(&serde_json::Value) -> Option<String>,
) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let unwrapped = line
            .trim_start()
            .starts_with('{')
            .then(|| serde_json::from_str::<serde_json::Value>(line).ok())
            .flatten()
            .and_then(|v| message(&v));
        match unwrapped {
            Some(text) => out.extend(text.lines().map(str::to_string)),
            None => out.push(line.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_are_unwrapped_only_when_the_reader_answers() {
        let lines: Vec<String> = [
            r#"{"type":"error","message":"first\nsecond"}"#,
            r#"{"type":"text","message":"kept as JSON"}"#,
            "{ not json",
            "plain",
        ]
        .map(str::to_string)
        .to_vec();
        let out = unwrap_json_lines(&lines, |v| {
            (v.get("type")?.as_str()? == "error")
                .then(|| v.get("message")?.as_str().map(str::to_string))?
        });
        assert_eq!(
            out,
            ["first", "second", lines[1].as_str(), "{ not json", "plain"]
        );
    }

    const RULES: &[FaultRule] = &[
        FaultRule::new(
            "t/overload",
            FaultKind::Overload,
            r"^API Error: 529 Overloaded\.",
        ),
        FaultRule::new(
            "t/network",
            FaultKind::Network,
            r"^API Error: Connection refused",
        ),
        FaultRule::generic("t/generic", FaultKind::Unknown, r"\[object Object\]$"),
    ];

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn newest_specific_line_wins() {
        let log = lines(
            "API Error: 529 Overloaded. try later\nworking...\nAPI Error: Connection refused — blocked (ECONNREFUSED)\n",
        );
        let fault = classify(RULES, &[], &log).expect("classified");
        assert_eq!(fault.kind, FaultKind::Network);
        assert_eq!(fault.rule, "t/network");
        assert!(fault.evidence.starts_with("API Error: Connection refused"));
    }

    #[test]
    fn generic_rules_only_decide_alone() {
        let log = lines(
            "API Error: 529 Overloaded. x\nAn unexpected critical error occurred:[object Object]",
        );
        assert_eq!(
            classify(RULES, &[], &log).map(|f| f.rule),
            Some("t/overload".to_string())
        );
        let only = lines("An unexpected critical error occurred:[object Object]");
        assert_eq!(
            classify(RULES, &[], &only).map(|f| f.kind),
            Some(FaultKind::Unknown)
        );
    }

    #[test]
    fn no_break_spaces_read_as_spaces() {
        // Claude Code prints `⎿` + U+00A0 before an error sentence.
        let rules = [FaultRule::new(
            "t/key",
            FaultKind::Auth,
            r"^(?:⎿\s*)?Invalid API key · ",
        )];
        let line = "  ⎿ \u{a0} Invalid API key · Fix external API key".to_string();
        let fault = classify(&rules, &[], &[line]).expect("classified");
        assert_eq!(fault.evidence, "⎿   Invalid API key · Fix external API key");
    }

    #[test]
    fn prose_about_errors_is_not_a_fault() {
        let log =
            lines("The story tests how we surface an API Error: 529 Overloaded. message to users");
        assert_eq!(classify(RULES, &[], &log), None);
    }

    #[test]
    fn ansi_is_stripped_and_evidence_is_capped() {
        let long = format!(
            "\u{1b}[31mAPI Error: 529 Overloaded. {}\u{1b}[0m",
            "x".repeat(400)
        );
        let fault = classify(RULES, &[], &[long]).expect("classified");
        assert!(!fault.evidence.contains('\u{1b}'));
        assert_eq!(fault.evidence.chars().count(), EVIDENCE_MAX_CHARS);
    }

    #[test]
    fn profile_patterns_get_a_kind_from_their_line() {
        let patterns = vec!["^Error: (Incorrect API key|Rate limit)".to_string()];
        let fault = classify(
            &[],
            &patterns,
            &lines("Error: Rate limit reached for requests"),
        )
        .expect("hit");
        assert_eq!(
            (fault.kind, fault.rule.as_str()),
            (FaultKind::RateLimit, "profile:0")
        );
        let fault =
            classify(&[], &patterns, &lines("Error: Incorrect API key provided")).expect("hit");
        assert_eq!(fault.kind, FaultKind::Auth);
        let bad = vec!["(unclosed".to_string()];
        assert_eq!(classify(&[], &bad, &lines("(unclosed")), None);
    }

    #[test]
    fn retry_after_reads_stated_waits() {
        assert_eq!(
            retry_after("Retrying in 60s (attempt 1/10): [API Error: 429 Rate limit]"),
            Some(60)
        );
        assert_eq!(
            retry_after("✻ 529 Overloaded · retrying in 1s · attempt 2/2"),
            Some(1)
        );
        assert_eq!(retry_after("please try again in 2 minutes"), Some(120));
        assert_eq!(retry_after("Retry-After: 30"), Some(30));
        assert_eq!(retry_after("try again in a moment"), None);
    }
}
