//! Bounds on what a component returns. A component is untrusted code: its
//! answers can be any size the memory cap allows (tens of MiB), and drover
//! prints, journals and writes them. So every answer is bounded as it
//! crosses the boundary, before anything else sees it:
//!
//! - Text drover only shows or records (a reply, evidence, a rule id, a
//!   session id, a reason) is cut to [`TEXT_MAX`] bytes with a visible
//!   marker; lists are cut to [`LIST_MAX`] items.
//! - Usage reports keep up to [`USAGE_ENTRIES_MAX`] entries; the rest are
//!   counted as rejected rows, so totals never silently shrink.
//! - What drover acts on — a command to run, a prompt to type, a hook config
//!   to write — is never cut (a cut command is a different command): past
//!   [`ACT_MAX`] the answer is refused with [`SandboxError::Oversized`].

use super::SandboxError;
use crate::versions::latest::drover::adapter::types as wit;
use crate::versions::latest::exports::drover::adapter::requests;

/// Bytes kept of a text field drover shows or records.
pub const TEXT_MAX: usize = 64 << 10;
/// Items kept of a list.
pub const LIST_MAX: usize = 4096;
/// Entries kept of a usage report.
pub const USAGE_ENTRIES_MAX: usize = 1 << 20;
/// Bytes of one thing drover acts on (an argument, a prompt, a config).
pub const ACT_MAX: usize = 16 << 20;

/// Cuts `text` to [`TEXT_MAX`] bytes (on a character boundary) and says so.
pub fn cut_text(text: &mut String) {
    cut_to(text, TEXT_MAX);
}

fn cut_to(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let dropped = text.len() - max;
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    text.push_str(&format!("…[drover cut {dropped} more bytes]"));
}

fn cut_list<T>(items: &mut Vec<T>) -> usize {
    let dropped = items.len().saturating_sub(LIST_MAX);
    items.truncate(LIST_MAX);
    dropped
}

fn cut_strings(items: &mut Vec<String>) {
    let dropped = cut_list(items);
    items.iter_mut().for_each(cut_text);
    if dropped > 0 {
        items.push(format!("…[drover cut {dropped} more items]"));
    }
}

/// A component answer, bounded in place.
pub trait Bounded {
    fn bound(&mut self);
}

impl Bounded for String {
    fn bound(&mut self) {
        cut_text(self);
    }
}

impl Bounded for Vec<String> {
    fn bound(&mut self) {
        cut_strings(self);
    }
}

impl<T: Bounded> Bounded for Option<T> {
    fn bound(&mut self) {
        if let Some(value) = self {
            value.bound();
        }
    }
}

impl<T: Bounded, E: Bounded> Bounded for Result<T, E> {
    fn bound(&mut self) {
        match self {
            Ok(value) => value.bound(),
            Err(error) => error.bound(),
        }
    }
}

/// Rows are never dropped (totals depend on every one); their text is cut.
impl Bounded for requests::Request {
    fn bound(&mut self) {
        cut_text(&mut self.key);
        cut_text(&mut self.session);
        cut_text(&mut self.timestamp);
        cut_text(&mut self.model);
        cut_text(&mut self.cwd);
    }
}

impl Bounded for Vec<requests::Request> {
    fn bound(&mut self) {
        self.iter_mut().for_each(Bounded::bound);
    }
}

impl Bounded for requests::RequestTail {
    fn bound(&mut self) {
        self.requests.bound();
    }
}

impl Bounded for wit::AdapterError {
    fn bound(&mut self) {
        match self {
            wit::AdapterError::Unsupported(m) | wit::AdapterError::InvalidInput(m) => cut_text(m),
        }
    }
}

impl Bounded for wit::Description {
    fn bound(&mut self) {
        for text in [
            &mut self.name,
            &mut self.adapter_version,
            &mut self.wit_version,
        ] {
            cut_text(text);
        }
        cut_list(&mut self.capabilities);
        cut_strings(&mut self.dialects);
        cut_list(&mut self.usage_parsers);
        for parser in &mut self.usage_parsers {
            cut_text(&mut parser.name);
            cut_strings(&mut parser.needles);
        }
        // Only location variables are ever read for a component: a name
        // that is not one is dropped here, and said so among its limitations.
        let (kept, refused): (Vec<String>, Vec<String>) = std::mem::take(&mut self.location_env)
            .into_iter()
            .partition(|name| super::location::is_location_variable(name));
        self.location_env = kept;
        self.limitations.extend(refused.into_iter().map(|name| {
            format!(
                "location-env {name} refused: a component reads only location variables (*_HOME, *_DIR) that name no secret"
            )
        }));
        cut_strings(&mut self.location_env);
        cut_strings(&mut self.limitations);
    }
}

impl Bounded for wit::UsageReport {
    fn bound(&mut self) {
        let dropped = self.entries.len().saturating_sub(USAGE_ENTRIES_MAX);
        self.entries.truncate(USAGE_ENTRIES_MAX);
        self.rejected_rows = self.rejected_rows.saturating_add(dropped as u64);
        for entry in &mut self.entries {
            for text in [&mut entry.session, &mut entry.day, &mut entry.model] {
                cut_text(text);
            }
        }
    }
}

impl Bounded for wit::TurnResult {
    fn bound(&mut self) {
        self.reply.bound();
        self.conversation_id.bound();
        self.error.bound();
        self.usage.bound();
    }
}

impl Bounded for wit::HookEvent {
    fn bound(&mut self) {
        cut_text(&mut self.native);
        self.session_id.bound();
        self.transcript_path.bound();
        self.cwd.bound();
        self.reason.bound();
        self.last_message.bound();
        cut_strings(&mut self.fields_found);
    }
}

impl Bounded for wit::HookStatus {
    fn bound(&mut self) {
        cut_strings(&mut self.registered);
        cut_strings(&mut self.missing);
    }
}

impl Bounded for Vec<wit::TranscriptGlob> {
    fn bound(&mut self) {
        cut_list(self);
        for glob in self {
            for text in [&mut glob.pattern, &mut glob.format, &mut glob.parser] {
                cut_text(text);
            }
        }
    }
}

impl Bounded for wit::Fault {
    fn bound(&mut self) {
        cut_text(&mut self.evidence);
        cut_text(&mut self.rule);
    }
}

/// Options kept of a dialog; a real one has a handful.
pub const DIALOG_CHOICES_MAX: usize = 32;
/// Keys one option may press; more is not a dialog answer.
pub const KEYS_MAX: usize = 32;

impl Bounded for wit::ScreenReading {
    fn bound(&mut self) {
        cut_text(&mut self.rule);
        cut_text(&mut self.evidence);
        if let Some(dialog) = &mut self.dialog {
            cut_text(&mut dialog.text);
            dialog.choices.truncate(DIALOG_CHOICES_MAX);
            for choice in &mut dialog.choices {
                cut_text(&mut choice.label);
                // Keys are acted on, so never cut: too many means none.
                if choice.keys.len() > KEYS_MAX {
                    choice.keys.clear();
                }
            }
        }
    }
}

/// Refuses an answer drover would act on that is past [`ACT_MAX`] (or a
/// command with more than [`LIST_MAX`] arguments or variables).
pub fn check_act(
    component: &str,
    export: &str,
    what: &str,
    sizes: impl IntoIterator<Item = usize>,
    count: usize,
) -> Result<(), SandboxError> {
    let oversized = |size: String| SandboxError::Oversized {
        component: component.to_string(),
        export: export.to_string(),
        what: what.to_string(),
        size,
    };
    if count > LIST_MAX {
        return Err(oversized(format!(
            "{count} items (the bound is {LIST_MAX})"
        )));
    }
    match sizes.into_iter().max() {
        Some(size) if size > ACT_MAX => Err(oversized(format!(
            "{:.1} MiB (the bound is {} MiB)",
            size as f64 / f64::from(1 << 20),
            ACT_MAX >> 20
        ))),
        _ => Ok(()),
    }
}

/// [`check_act`] for a command: every argument, variable and stdin.
pub fn check_command(
    component: &str,
    export: &str,
    command: &wit::Command,
) -> Result<(), SandboxError> {
    let sizes = command
        .argv
        .iter()
        .map(String::len)
        .chain(command.env.iter().map(|(k, v)| k.len() + v.len()))
        .chain(command.stdin.iter().map(String::len));
    check_act(
        component,
        export,
        "a command",
        sizes,
        command.argv.len().max(command.env.len()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_with_a_marker_on_a_character_boundary() {
        let mut text = "é".repeat(TEXT_MAX);
        cut_text(&mut text);
        assert!(text.len() < TEXT_MAX + 64, "{}", text.len());
        assert!(
            text.ends_with(&format!("…[drover cut {} more bytes]", TEXT_MAX)),
            "{}",
            &text[text.len() - 40..]
        );
        let mut short = "fine".to_string();
        cut_text(&mut short);
        assert_eq!(short, "fine");
    }

    #[test]
    fn lists_are_cut_and_say_how_many_went() {
        let mut items: Vec<String> = (0..LIST_MAX + 10).map(|n| n.to_string()).collect();
        items.bound();
        assert_eq!(items.len(), LIST_MAX + 1);
        assert_eq!(items[LIST_MAX], "…[drover cut 10 more items]");
    }

    #[test]
    fn usage_entries_past_the_bound_count_as_rejected() {
        let entry = wit::UsageEntry {
            session: "s".into(),
            day: String::new(),
            model: "m".into(),
            usage: wit::Usage {
                input: 1,
                output: 0,
                cache_read: 0,
                cache_write: 0,
                reasoning: 0,
                requests: 1,
            },
        };
        let mut report = wit::UsageReport {
            entries: vec![entry; USAGE_ENTRIES_MAX + 3],
            rejected_rows: 2,
        };
        report.bound();
        assert_eq!(report.entries.len(), USAGE_ENTRIES_MAX);
        assert_eq!(report.rejected_rows, 5);
    }

    #[test]
    fn oversized_commands_are_refused_not_cut() {
        let command = wit::Command {
            argv: vec!["cli".into(), "x".repeat(ACT_MAX + 1)],
            env: vec![],
            stdin: None,
        };
        let err = check_command("c", "headless-command", &command).expect_err("refused");
        assert!(
            err.to_string()
                .contains("headless-command returned a command of 16.0 MiB (the bound is 16 MiB)"),
            "{err}"
        );
    }
}
