//! A plain-text turn as the profile's `[turn]` patterns read it: lines that
//! are not the reply (`drop`), where the reply is (`reply`, a regex with a
//! `reply` group), and usage from the CLI's printed summary (`[turn.usage]`,
//! one regex per count). The patterns arrive as `turn.*` settings; drover
//! checked them when it loaded the profile.
//!
//! Printed counts are what a person reads (`Tokens: 3.1k sent`): `k` and
//! `M` are accepted, and drover marks such usage approximate.

use drover_kit::{AdapterError, Profile, Usage};
use regex_lite::Regex;

const DROP: &str = "turn.drop";
const REPLY: &str = "turn.reply";
const USAGE: &str = "turn.usage.";

/// The compiled `[turn]` text patterns of a profile.
pub struct Printed {
    drop: Vec<Regex>,
    reply: Option<Regex>,
    usage: Vec<(String, Regex)>,
}

fn compile(field: &str, pattern: &str) -> Result<Regex, AdapterError> {
    Regex::new(pattern)
        .map_err(|e| drover_kit::invalid(format!("[turn] {field}: not a valid regex: {e}")))
}

impl Printed {
    pub fn of(profile: &Profile) -> Result<Printed, AdapterError> {
        let mut printed = Printed {
            drop: Vec::new(),
            reply: None,
            usage: Vec::new(),
        };
        for (key, value) in &profile.settings {
            if key == DROP {
                for line in value.lines() {
                    printed.drop.push(compile("drop", line)?);
                }
            } else if key == REPLY {
                printed.reply = Some(compile("reply", value)?);
            } else if let Some(count) = key.strip_prefix(USAGE) {
                printed.usage.push((
                    count.to_string(),
                    compile(&format!("usage.{count}"), value)?,
                ));
            }
        }
        Ok(printed)
    }

    /// The output without terminal escapes, which every pattern reads.
    pub fn plain(stdout: &str) -> String {
        stdout
            .lines()
            .map(drover_kit::output::strip_ansi)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The plain output without its dropped lines.
    pub fn kept(&self, plain: &str) -> String {
        plain
            .lines()
            .filter(|line| !self.drop.iter().any(|re| re.is_match(line)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The reply in the kept output: the `reply` group of the first match,
    /// or all of it; `None` when the pattern does not match.
    pub fn reply(&self, kept: &str) -> Option<String> {
        let reply = match &self.reply {
            Some(re) => re.captures(kept)?.name("reply")?.as_str(),
            None => kept,
        };
        Some(reply.trim().to_string())
    }

    /// Usage from the printed summary, with the model it names: each count
    /// is its pattern's last match in the whole output (the summary comes
    /// last); `None` when no count pattern matched.
    pub fn usage(&self, plain: &str) -> Option<(Usage, String)> {
        let mut usage = Usage {
            input: 0,
            output: 0,
            cache_read: 0,
            cache_write: 0,
            reasoning: 0,
            requests: 1,
        };
        let mut found = false;
        let mut model = String::new();
        for (count, re) in &self.usage {
            let Some(figure) = re.captures_iter(plain).last().and_then(|c| {
                c.name("n")
                    .or_else(|| c.iter().skip(1).flatten().next())
                    .map(|m| m.as_str())
            }) else {
                continue;
            };
            if count == "model" {
                model = figure.trim().to_string();
                continue;
            }
            let slot = match count.as_str() {
                "input" => &mut usage.input,
                "output" => &mut usage.output,
                "cache_read" => &mut usage.cache_read,
                "cache_write" => &mut usage.cache_write,
                "reasoning" => &mut usage.reasoning,
                _ => continue,
            };
            if let Some(n) = figure_of(figure) {
                *slot = n;
                found = true;
            }
        }
        found.then_some((usage, model))
    }
}

/// `3,100`, `3.1k`, `1.2M`, `77` -> a count (`k` and `M` scale the
/// figure, which is then an estimate).
pub fn figure_of(text: &str) -> Option<u64> {
    let text = text.trim().replace([',', '_'], "");
    let (number, scale) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 1_000.0),
        'm' | 'M' => (&text[..text.len() - 1], 1_000_000.0),
        _ => (text.as_str(), 1.0),
    };
    let value: f64 = number.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0 && value * scale < u64::MAX as f64)
        .then(|| (value * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;

    fn with(settings: &[(&str, &str)]) -> Printed {
        let mut p = profile();
        p.settings = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Printed::of(&p).expect("compiles")
    }

    const AIDER_LIKE: &str = "\u{1b}[1mAider v0.86.1\u{1b}[0m\nWarning: could not fetch the model price list\nModel: openai/scripted with whole edit format\nGit repo: none\n\nHello from the stand-in.\nSecond line.\n\nTokens: 3.1k sent, 77 received.\n";

    #[test]
    fn dropped_lines_leave_the_reply() {
        let printed = with(&[(
            "turn.drop",
            "^Aider v\n^Warning:\n^Model:\n^Git repo:\n^Tokens:",
        )]);
        let kept = printed.kept(&Printed::plain(AIDER_LIKE));
        assert_eq!(
            printed.reply(&kept).as_deref(),
            Some("Hello from the stand-in.\nSecond line.")
        );
    }

    #[test]
    fn a_reply_pattern_takes_its_group_or_nothing() {
        let printed = with(&[(
            "turn.reply",
            r"(?s)Git repo: none\n(?P<reply>.*?)\n+Tokens:",
        )]);
        let kept = printed.kept(&Printed::plain(AIDER_LIKE));
        assert_eq!(
            printed.reply(&kept).as_deref(),
            Some("Hello from the stand-in.\nSecond line.")
        );
        assert_eq!(printed.reply("no such shape"), None);
    }

    #[test]
    fn printed_counts_read_with_their_suffixes() {
        let printed = with(&[
            ("turn.usage.input", r"Tokens: ([\d.,]+[kM]?) sent"),
            ("turn.usage.output", r"sent, (?P<n>[\d.,]+[kM]?) received"),
        ]);
        let (usage, model) = printed.usage(&Printed::plain(AIDER_LIKE)).expect("usage");
        assert_eq!((usage.input, usage.output, usage.requests), (3100, 77, 1));
        assert_eq!(model, "");
        let with_model = with(&[
            ("turn.usage.input", r"Tokens: ([\d.,]+[kM]?) sent"),
            ("turn.usage.model", r"(?m)^Model: (\S+)"),
        ]);
        let (_, model) = with_model
            .usage(&Printed::plain(AIDER_LIKE))
            .expect("usage");
        assert_eq!(model, "openai/scripted");
        assert_eq!(printed.usage("no summary"), None);
        assert_eq!(figure_of("1.25M"), Some(1_250_000));
        assert_eq!(figure_of("3,100"), Some(3100));
        assert_eq!(figure_of("lots"), None);
        assert_eq!(figure_of("-3"), None);
    }
}
