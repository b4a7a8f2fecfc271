//! `probe-adapter NAME --draft-profile`: a profile drafted from a CLI's
//! `--help` (and its non-interactive subcommand's help). The recognisers are
//! pure functions over help texts; every field of the draft carries the
//! sentence saying where it came from, or what could not be determined.

use std::sync::LazyLock;

use regex::Regex;

mod help;
mod render;
mod run;

pub use help::Help;
pub use run::{DraftError, DraftOptions, DraftOutcome, TurnOptions, draft_from_binary};

/// One drafted value and how it was found (or why it is missing).
#[derive(Debug, Clone, PartialEq)]
pub struct Found<T> {
    pub value: Option<T>,
    pub how: String,
}

impl<T> Found<T> {
    fn some(value: T, how: String) -> Found<T> {
        Found {
            value: Some(value),
            how,
        }
    }

    fn missing(how: impl Into<String>) -> Found<T> {
        Found {
            value: None,
            how: how.into(),
        }
    }
}

/// A drafted profile, before it is written out.
#[derive(Debug, Clone)]
pub struct Draft {
    pub name: String,
    pub binary: String,
    pub binary_how: String,
    pub version: Option<String>,
    /// The help texts read, e.g. `codex --help`, `codex exec --help`.
    pub read: Vec<String>,
    pub argv: Found<Vec<String>>,
    pub output: Found<String>,
    pub resume: Found<Vec<String>>,
    pub session_id: Found<Vec<String>>,
    pub turn_args: Found<Vec<String>>,
    pub model_flag: Found<String>,
    pub bypass: Found<Vec<String>>,
    /// What the help mentions but a profile cannot use.
    pub notes: Vec<String>,
    /// What one probe turn with the drafted command showed.
    pub probe: Option<String>,
}

/// How the CLI runs a prompt without its interactive UI.
enum Mode<'a> {
    /// An option of the main help, e.g. `-p, --print`.
    Option { opt: &'a help::Opt, strong: bool },
    /// A subcommand such as `exec` or `run`.
    Subcommand(String),
}

/// Subcommands that are a non-interactive mode by their name.
const MODE_SUBCOMMANDS: &[&str] = &["exec", "run"];

/// Option names of a one-shot prompt.
const MODE_OPTIONS: &[&str] = &["print", "prompt", "single", "message", "non-interactive"];

/// What a description says when the option is the non-interactive mode.
static NON_INTERACTIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)non-?interactive|headless|and exits?\b|print(s)? (the )?response|single[- ]turn|one-?shot")
        .expect("valid regex")
});

/// The subcommand whose help the drafter wants as well, if the main help
/// shows no non-interactive option but lists `exec` or `run`.
pub fn wanted_subcommand(main: &Help) -> Option<String> {
    match mode(main) {
        Some(Mode::Subcommand(name)) => Some(name),
        _ => None,
    }
}

fn mode(main: &Help) -> Option<Mode<'_>> {
    let candidates: Vec<&help::Opt> = main
        .options
        .iter()
        .filter(|o| MODE_OPTIONS.iter().any(|m| o.has_long(m)))
        .collect();
    let strong = candidates.iter().find(|o| {
        NON_INTERACTIVE.is_match(&o.desc)
            || o.has_long("print")
            || o.short.as_deref().is_some_and(|s| {
                o.longs.iter().any(|l| {
                    // The prose names it, e.g. "use -p/--prompt for non-interactive".
                    let shape = format!("{s}/--{l} for non-interactive");
                    main.prose.contains(&shape)
                })
            })
    });
    if let Some(opt) = strong {
        return Some(Mode::Option { opt, strong: true });
    }
    if let Some(name) = MODE_SUBCOMMANDS
        .iter()
        .find(|n| main.subcommand(n).is_some())
    {
        return Some(Mode::Subcommand(name.to_string()));
    }
    candidates
        .into_iter()
        .find(|o| o.takes_value())
        .map(|opt| Mode::Option { opt, strong: false })
}

fn quoted(opt: &help::Opt, help: &Help) -> String {
    let mut line = opt.line.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 72 {
        line = line.chars().take(72).collect::<String>() + "…";
    }
    format!("`{line}` in `{}`", help.command)
}

/// Drafts a profile from the main help and, when [`wanted_subcommand`]
/// named one, that subcommand's help.
pub fn draft(name: &str, binary: &str, main: &Help, sub: Option<&Help>) -> Draft {
    let mut read = vec![main.command.clone()];
    read.extend(sub.map(|s| s.command.clone()));
    let mut draft = Draft {
        name: name.to_string(),
        binary: binary.to_string(),
        binary_how: format!("`{binary}`, whose help was read"),
        version: None,
        read,
        argv: Found::missing(""),
        output: Found::missing(""),
        resume: Found::missing(""),
        session_id: Found::missing(""),
        turn_args: Found::missing(""),
        model_flag: Found::missing(""),
        bypass: Found::missing(""),
        notes: Vec::new(),
        probe: None,
    };
    // The help whose options the non-interactive mode takes: the
    // subcommand's when it is one, else the main help.
    let (lead, turn_help): (Vec<String>, &Help) = match (mode(main), sub) {
        (Some(Mode::Option { opt, strong }), _) => {
            let spelling = opt
                .short
                .clone()
                .or_else(|| opt.long().map(|l| format!("--{l}")))
                .unwrap_or_default();
            draft.argv.how = if strong {
                format!(
                    "{} (the non-interactive mode); the prompt follows it",
                    quoted(opt, main)
                )
            } else {
                format!(
                    "{}: a prompt option not described as non-interactive; check that the CLI exits after the reply",
                    quoted(opt, main)
                )
            };
            if opt.desc.to_lowercase().contains("deprecated") {
                draft.argv.how.push_str("; the help marks it deprecated");
            }
            (vec![spelling, "{prompt}".to_string()], main)
        }
        (Some(Mode::Subcommand(name)), Some(sub)) => {
            draft.argv.how = format!(
                "the `{name}` subcommand in `{}` (the non-interactive mode); the prompt is its last argument",
                main.command
            );
            (vec![name, "{prompt}".to_string()], sub)
        }
        (Some(Mode::Subcommand(name)), None) => {
            draft.argv.how = format!(
                "`{name}` looks like the non-interactive mode, but its help could not be read"
            );
            (vec![name, "{prompt}".to_string()], main)
        }
        (None, _) => {
            draft.argv = Found::missing(
                "no non-interactive mode found (no -p/--print/--prompt/--message option, no exec or run subcommand): write [turn] argv by hand, else the profile runs on tmux only",
            );
            (Vec::new(), main)
        }
    };
    // Both helps, the mode's first: a subcommand's own flags win, and a
    // flag only the main help lists still applies to it.
    let helps: Vec<&Help> = if std::ptr::eq(turn_help, main) {
        vec![main]
    } else {
        vec![turn_help, main]
    };
    let output = output_flag(turn_help);
    if !lead.is_empty() {
        let mut argv = lead;
        if let Some((flag, _)) = &output {
            if std::ptr::eq(turn_help, main) {
                // `-p PROMPT --output-format json`: the option takes the prompt.
                argv.extend(flag.iter().cloned());
            } else {
                // A subcommand's options go before its prompt argument.
                let at = argv.len() - 1;
                argv.splice(at..at, flag.iter().cloned());
            }
        }
        draft.argv.value = Some(argv);
    }
    draft.output = match output {
        Some((_, how)) => Found::some("json".to_string(), how),
        None => Found::some(
            "text".to_string(),
            format!(
                "no JSON output option in `{}`: the reply is read as plain text",
                turn_help.command
            ),
        ),
    };
    draft.resume = resume(&helps, &mut draft.notes);
    draft.session_id = session_id(&helps);
    draft.model_flag = model_flag(&helps);
    draft.bypass = bypass(&helps);
    draft.turn_args = no_questions(&helps);
    draft
}

/// The argv that asks for JSON output, and how it was found.
fn output_flag(help: &Help) -> Option<(Vec<String>, String)> {
    static STREAM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)jsonl|events|one json object per line").expect("valid regex")
    });
    let stream_note = |desc: &str, value: &str| {
        if STREAM.is_match(desc) || value.contains("stream") {
            "; it prints a stream of JSON events, and `json` reads the last object, which may not hold the reply (a family format such as codex-jsonl may read it better)"
        } else {
            ""
        }
    };
    for long in ["output-format", "format", "output"] {
        let Some(opt) = help.long(long).filter(|o| o.takes_value()) else {
            continue;
        };
        let choices = opt.choices();
        let pick = ["json", "stream-json", "streaming-json", "jsonl"]
            .into_iter()
            .find(|c| choices.iter().any(|x| x == c));
        if let Some(value) = pick {
            let how = format!(
                "{} offers \"{value}\"{}",
                quoted(opt, help),
                stream_note(&opt.desc, value)
            );
            return Some((vec![format!("--{long}"), value.to_string()], how));
        }
        if choices.is_empty() && opt.desc.to_lowercase().contains("json") {
            let how = format!(
                "{} mentions JSON but lists no choices: the value `json` is a guess",
                quoted(opt, help)
            );
            return Some((vec![format!("--{long}"), "json".to_string()], how));
        }
    }
    if let Some(opt) = help.long("json").filter(|o| !o.takes_value()) {
        let how = format!("{}{}", quoted(opt, help), stream_note(&opt.desc, ""));
        return Some((vec!["--json".to_string()], how));
    }
    // `--output-format <format>` whose line names no format, in a help that
    // speaks of JSON elsewhere (droid's lists `stream-json` under its input
    // format): `json` is likely, and said to be a guess.
    let opt = help
        .long("output-format")
        .filter(|o| o.takes_value() && o.choices().is_empty())?;
    help.prose.to_lowercase().contains("json").then(|| {
        let how = format!(
            "{} names no formats, and the help speaks of JSON elsewhere: the value `json` is a guess",
            quoted(opt, help)
        );
        (vec!["--output-format".to_string(), "json".to_string()], how)
    })
}

fn resume(helps: &[&Help], notes: &mut Vec<String>) -> Found<Vec<String>> {
    for help in helps {
        if help.subcommand("resume").is_some() && help.command.split_whitespace().count() > 2 {
            notes.push(format!(
                "`{}` lists a `resume` subcommand; a profile's resume argv follows the prompt, so it cannot name a subcommand",
                help.command
            ));
        }
        if let Some(opt) = help.long("continue") {
            notes.push(format!(
                "{}: continues the most recent session only; drover resumes by id",
                quoted(opt, help)
            ));
        }
    }
    for long in ["resume", "session"] {
        for help in helps {
            if let Some(opt) = help.long(long).filter(|o| o.takes_value()) {
                let mut how = format!("{} takes a session id", quoted(opt, help));
                if opt.takes == help::Takes::OptionalValue {
                    how.push_str(" (optional: without one it may open a picker)");
                }
                return Found::some(vec![format!("--{long}"), "{id}".to_string()], how);
            }
        }
    }
    Found::missing(
        "no --resume or --session option taking an id: conversations cannot be continued",
    )
}

fn session_id(helps: &[&Help]) -> Found<Vec<String>> {
    for help in helps {
        if let Some(opt) = help.long("session-id").filter(|o| o.takes_value()) {
            let mut how = format!("{} sets a new session's id", quoted(opt, help));
            if opt.desc.to_lowercase().contains("uuid") || opt.line.to_lowercase().contains("uuid")
            {
                how.push_str("; the help says it must be a UUID");
            }
            return Found::some(vec!["--session-id".to_string(), "{id}".to_string()], how);
        }
    }
    Found::missing("no --session-id option: drover cannot choose a new conversation's id")
}

fn model_flag(helps: &[&Help]) -> Found<String> {
    for help in helps {
        if let Some(opt) = help.long("model").filter(|o| o.takes_value()) {
            return Found::some("--model".to_string(), quoted(opt, help));
        }
    }
    Found::missing("no --model option found; `--model` is the default, check it")
}

/// Permission-bypass shapes, most specific first.
fn bypass(helps: &[&Help]) -> Found<Vec<String>> {
    let flag = |long: &str| {
        helps
            .iter()
            .find_map(|h| h.long(long).filter(|o| !o.takes_value()).map(|o| (o, *h)))
    };
    for long in [
        "dangerously-bypass-approvals-and-sandbox",
        "always-approve",
        "allow-all-tools",
        "full-auto",
        "auto",
    ] {
        let Some((opt, help)) = flag(long) else {
            continue;
        };
        // `--auto` means many things; only an approving one bypasses.
        if long == "auto" && !opt.desc.to_lowercase().contains("approv") {
            continue;
        }
        let mut argv = vec![format!("--{long}")];
        let mut how = quoted(opt, help);
        if long == "allow-all-tools"
            && let Some((paths, help)) = flag("allow-all-paths")
        {
            argv.push("--allow-all-paths".to_string());
            how.push_str(&format!(", with {}", quoted(paths, help)));
        }
        return Found::some(argv, how);
    }
    for long in ["permission-mode", "approval-mode"] {
        for help in helps {
            let Some(opt) = help.long(long).filter(|o| o.takes_value()) else {
                continue;
            };
            let choices = opt.choices();
            if let Some(mode) = ["bypassPermissions", "yolo"]
                .into_iter()
                .find(|m| choices.iter().any(|c| c == m))
            {
                let how = format!("{} offers \"{mode}\"", quoted(opt, help));
                return Found::some(vec![format!("--{long}"), mode.to_string()], how);
            }
        }
    }
    for long in [
        "dangerously-skip-permissions",
        "skip-permissions-unsafe",
        "yolo",
        "allow-all",
    ] {
        if let Some((opt, help)) = flag(long) {
            return Found::some(vec![format!("--{long}")], quoted(opt, help));
        }
    }
    Found::missing(
        "no permission-bypass option found: an unattended turn may stop at an approval prompt",
    )
}

/// A flag that keeps a headless turn from asking the user a question it
/// cannot answer.
fn no_questions(helps: &[&Help]) -> Found<Vec<String>> {
    static NO_QUESTIONS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)without asking|never asks?|disable the ask").expect("valid regex")
    });
    for help in helps {
        if let Some(opt) = help
            .options
            .iter()
            .find(|o| !o.takes_value() && o.long().is_some() && NO_QUESTIONS.is_match(&o.desc))
            && let Some(long) = opt.long()
        {
            return Found::some(
                vec![format!("--{long}")],
                format!(
                    "{}: a headless turn cannot answer questions",
                    quoted(opt, help)
                ),
            );
        }
    }
    Found::missing("no option that stops the CLI from asking questions")
}

#[cfg(test)]
mod tests;
