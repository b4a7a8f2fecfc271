//! drover's MCP tools: their schemas and descriptions (each says what the
//! tool does and what it costs), their argument checks, and the calls.
//!
//! Every tool calls the function its command calls — `list_seats` what
//! `drover seats --json` prints, `start_seat` `drover up`'s start (through
//! `Prepared::launch`, the trust and launch gate), `send` `drover send`'s
//! delivery (which refuses a human seat), and so on — with the command's
//! own argument structs, built by clap from an argument vector, so the
//! defaults and value checks are the command line's. Arguments are checked
//! here first, and a bad one is a tool error naming it; an engine error is
//! a tool error too. A result is the JSON document the command prints with
//! `--json`, as text (with C1 controls escaped, as on a terminal: the text
//! is the same JSON).

use std::path::Path;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::cli::{answer, events, seats, usage, wait};

/// What the server tells the client about itself.
pub const INSTRUCTIONS: &str = "drover drives coding-agent CLIs (Claude Code, Codex, Gemini CLI, …) as named seats. \
Start a seat with start_seat, give it work with send (wait=false returns at once; follow with wait), \
answer a question it is blocked on with answer, read what happened with events and list_seats, \
and what it cost with usage. send runs model turns, which cost tokens; reading is free.";

/// The longest `send` may run a turn, and the longest `wait` may block.
const MAX_WAIT: &str = "3h";
/// The most journal lines one `events` call returns.
const MAX_EVENTS: u64 = 1000;
const DEFAULT_EVENTS: u64 = 100;

/// Every tool, as `tools/list` shows it.
pub fn all() -> Vec<Tool> {
    let workspaces: Vec<&str> = crate::workspace::WorkspaceKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    let states = ["working", "idle", "done", "blocked", "unknown", "settled"];
    vec![
        tool(
            "list_seats",
            "Lists every seat of the project with its state (working, idle, blocked with its question, …), \
             its CLI, role, workspace, cost so far and budgets: what `drover seats --json` prints. \
             Cost: free — reads drover's records; no model call, no process started.",
            json!({}),
            &[],
            true,
        ),
        tool(
            "start_seat",
            "Starts a named seat: launches a coding CLI on this machine (through drover's trust gate: \
             only a built-in, user or trusted project profile runs) and records it under the nickname; \
             as `drover up`. Returns the seat's record and state. \
             Cost: starts a process (a pane, a headless conversation or an agent); no model turn is run \
             until a message is sent, though some CLIs make a small request when they start.",
            json!({
                "nick": {"type": "string", "description": "The seat's nickname: letters, digits, '.', '_' or '-'."},
                "cli": {"type": "string", "description": "The CLI profile to run (claude, codex, gemini, …; `drover profiles` lists them)."},
                "role": {"type": "string", "description": "What the seat is for (default: agent); `wait` and `events` can pick seats by role."},
                "workspace": {"type": "string", "enum": workspaces, "description": "Where the CLI runs (default: the project's [workspace] setting)."},
                "model": {"type": "string", "description": "The model the CLI uses (default: the CLI's own)."},
            }),
            &["nick", "cli"],
            false,
        ),
        tool(
            "send",
            "Sends a message to a seat: runs one model turn on that seat's CLI, which costs tokens/dollars \
             (the seat's budget, if any, applies). With wait=true (the default) returns when the turn ends, \
             with its verdict and reply (as `drover send --json`); with wait=false returns once the turn has \
             started (as `drover send --no-wait --json`) — follow it with `wait`. A human seat is refused: \
             drover never types into it.",
            json!({
                "nick": {"type": "string", "description": "The seat to send to."},
                "prompt": {"type": "string", "description": "The message."},
                "wait": {"type": "boolean", "description": "Wait for the turn to end (default true)."},
                "timeout": {"type": "string", "description": "How long the turn may take, e.g. 10m, 90m (default 90m, at most 3h)."},
            }),
            &["nick", "prompt"],
            false,
        ),
        tool(
            "wait",
            "Waits until seats reach (or leave) a state: named seats, every seat of a role, or all seats; \
             every one of them (default) or any one; as `drover wait --json`. Returns each seat's state and \
             whether the condition held (held=false: the timeout passed). \
             Cost: free — follows drover's journals; blocks up to the timeout.",
            json!({
                "targets": {"type": "array", "items": {"type": "string"}, "description": "Seats' nicknames (or run ids, RUN/TASK)."},
                "role": {"type": "string", "description": "Every seat of this role."},
                "all": {"type": "boolean", "description": "Every seat of the project."},
                "any": {"type": "boolean", "description": "Return when any one target holds (default: every one)."},
                "until": {"type": "string", "enum": states, "description": "Until the state is this (default: settled or blocked)."},
                "not": {"type": "string", "enum": states, "description": "Until the state is no longer this."},
                "timeout": {"type": "string", "description": "Give up after this long, e.g. 30s, 10m (default 10m, at most 3h)."},
            }),
            &[],
            true,
        ),
        tool(
            "answer",
            "Answers the question a blocked seat waits on (a permission request, a dialog), with one of its \
             options, on the operator's behalf; as `drover answer --json`. The seat's question and options \
             are in list_seats. \
             Cost: the answer lets the seat go on — allowing a tool lets it run — and the rest of its turn \
             costs tokens. A human seat is refused.",
            json!({
                "seat": {"type": "string", "description": "The blocked seat."},
                "option": {"type": "string", "description": "The option: its id, kind (allow_once, reject_once, …), label, or position (1 = first)."},
            }),
            &["seat", "option"],
            false,
        ),
        tool(
            "events",
            "Reads the project's journal: every state transition and verdict of its seats and runs, oldest \
             first, each line as `drover events --json` prints it; at most `limit` lines (default 100, at \
             most 1000) after the first `after` matching ones. `next` is the `after` to pass to read on. \
             Cost: free — reads drover's journals.",
            json!({
                "since": {"type": "string", "description": "Only lines at or after this time: RFC 3339 (2026-12-01T10:00:00Z) or a duration back from now (10m)."},
                "after": {"type": "integer", "minimum": 0, "description": "Skip this many matching lines (the `next` of an earlier call)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_EVENTS, "description": "The most lines to return (default 100)."},
                "seat": {"type": "string", "description": "Only this seat."},
                "role": {"type": "string", "description": "Only seats of this role."},
                "run": {"type": "string", "description": "Only this run."},
            }),
            &[],
            true,
        ),
        tool(
            "usage",
            "Token usage and its cost from the CLIs' transcripts on this machine, for conversations run in \
             this project: rows by session, day, month, model or 5-hour block, and totals; as \
             `drover usage --json`. Cost: free — reads local files (may take seconds); no model call.",
            json!({
                "since": {"type": "string", "description": "Only usage on or after this day, YYYY-MM-DD."},
                "until": {"type": "string", "description": "Only usage on or before this day, YYYY-MM-DD."},
                "by": {"type": "string", "enum": ["session", "day", "month", "model", "block"], "description": "Rows of the report (default session)."},
                "cli": {"type": "array", "items": {"type": "string"}, "description": "Only these CLI profiles."},
                "tz": {"type": "string", "description": "The time zone days are counted in: an IANA name, UTC (default) or local."},
            }),
            &[],
            true,
        ),
        tool(
            "down",
            "Stops a seat: closes its CLI (its pane, agent or Ray job) and forgets the seat; as \
             `drover down --json`. Cost: free; the seat's conversation is no longer reachable through drover.",
            json!({
                "nick": {"type": "string", "description": "The seat to stop."},
            }),
            &["nick"],
            false,
        ),
    ]
}

fn tool(
    name: &'static str,
    description: &'static str,
    properties: Value,
    required: &[&str],
    read_only: bool,
) -> Tool {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), properties);
    schema.insert("required".into(), json!(required));
    schema.insert("additionalProperties".into(), json!(false));
    // A seat's CLI talks to its model's API: what starts, prompts or
    // unblocks one reaches beyond this machine.
    let annotations = ToolAnnotations::new()
        .read_only(read_only)
        .destructive(name == "down")
        .open_world(matches!(name, "start_seat" | "send" | "answer"));
    Tool::new(name, description, Arc::new(schema)).with_annotations(annotations)
}

/// Runs tool `name`; a bad argument, an unknown tool or an engine error is
/// a tool error, in words.
pub fn call(
    project: &Path,
    explicit_project: bool,
    name: &str,
    args: &JsonObject,
) -> CallToolResult {
    let args = Arguments { map: args };
    let result = match name {
        "list_seats" => args.only(&[]).map(|()| seats::seats_json(project)),
        "start_seat" => start_seat(project, &args),
        "send" => send(project, &args),
        "wait" => wait_for(project, &args),
        "answer" => answer_question(project, &args),
        "events" => read_events(project, &args),
        "usage" => read_usage(project, explicit_project, &args),
        "down" => down(project, &args),
        other => Err(format!(
            "no tool named {other} (drover's tools: list_seats, start_seat, send, wait, answer, events, usage, down)"
        )),
    };
    match result.and_then(|doc| serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())) {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(
            crate::cli::output::terminal_json(&text),
        )]),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(
            crate::cli::output::terminal_json(&message),
        )]),
    }
}

/// An engine error in words, with its causes.
fn engine(error: anyhow::Error) -> String {
    format!("{error:#}")
}

fn start_seat(project: &Path, args: &Arguments) -> Result<Value, String> {
    args.only(&["nick", "cli", "role", "workspace", "model"])?;
    let nick = args.nick("nick")?;
    let cli = args.required("cli")?;
    let mut argv = vec![nick, "--cli".into(), cli, "--json".into()];
    if let Some(role) = args.string("role")? {
        argv.extend(["--role".into(), role]);
    }
    let names: Vec<&str> = crate::workspace::WorkspaceKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    if let Some(workspace) = args.one_of("workspace", &names)? {
        argv.extend(["--workspace".into(), workspace]);
    }
    if let Some(model) = args.string("model")? {
        argv.extend(["--model".into(), model]);
    }
    let up: seats::UpArgs = parse(argv)?;
    let started = seats::start(project, &up).map_err(engine)?;
    Ok(started.to_json())
}

fn send(project: &Path, args: &Arguments) -> Result<Value, String> {
    args.only(&["nick", "prompt", "wait", "timeout"])?;
    let nick = args.nick("nick")?;
    let prompt = args.required("prompt")?;
    let timeout = args.duration("timeout")?.unwrap_or_else(|| "90m".into());
    let mut argv = vec!["--timeout".into(), timeout, "--json".into()];
    if !args.boolean("wait")?.unwrap_or(true) {
        argv.push("--no-wait".into());
    }
    // Positionals after `--`: a prompt may start with a dash.
    argv.extend(["--".into(), nick, prompt]);
    let send: seats::SendArgs = parse(argv)?;
    seats::deliver(project, &send)
        .map_err(engine)?
        .to_json()
        .map_err(engine)
}

fn wait_for(project: &Path, args: &Arguments) -> Result<Value, String> {
    args.only(&["targets", "role", "all", "any", "until", "not", "timeout"])?;
    let targets = args.strings("targets")?;
    for target in &targets {
        // A seat, a run id or RUN/TASK: each part a safe name.
        if target
            .split('/')
            .any(|part| crate::run::safe_segment(part) != part)
        {
            return Err(format!(
                "argument `targets`: '{target}' is not a seat's nickname or a run id"
            ));
        }
    }
    let role = args.string("role")?;
    let all = args.boolean("all")?.unwrap_or(false);
    if targets.is_empty() && role.is_none() && !all {
        return Err("name what to wait on: `targets` (seats), `role`, or `all: true`".into());
    }
    let states = ["working", "idle", "done", "blocked", "unknown", "settled"];
    let until = args.one_of("until", &states)?;
    let not = args.one_of("not", &states)?;
    if until.is_some() && not.is_some() {
        return Err("arguments `until` and `not` exclude each other: give one".into());
    }
    let timeout = args.duration("timeout")?.unwrap_or_else(|| "10m".into());
    let mut argv = vec!["--json".into(), "--timeout".into(), timeout];
    if let Some(role) = role {
        argv.extend(["--role".into(), role]);
    }
    if all {
        argv.push("--all".into());
    }
    if args.boolean("any")?.unwrap_or(false) {
        argv.push("--any".into());
    }
    if let Some(until) = until {
        argv.extend(["--until".into(), until]);
    }
    if let Some(not) = not {
        argv.extend(["--not".into(), not]);
    }
    argv.push("--".into());
    argv.extend(targets);
    let wait: wait::Args = parse(argv)?;
    wait::wait(project, &wait).map(|waited| waited.doc)
}

fn answer_question(project: &Path, args: &Arguments) -> Result<Value, String> {
    args.only(&["seat", "option"])?;
    let seat = args.nick("seat")?;
    let option = args.required("option")?;
    let answer: answer::Args = parse(vec!["--json".into(), "--".into(), seat, option])?;
    answer::answer(project, &answer).map_err(engine)
}

fn read_events(project: &Path, args: &Arguments) -> Result<Value, String> {
    args.only(&["since", "after", "limit", "seat", "role", "run"])?;
    let mut argv: Vec<String> = vec!["--json".into()];
    if let Some(since) = args.string("since")? {
        events::parse_since(&since).map_err(|e| format!("argument `since`: {e}"))?;
        argv.extend(["--since".into(), since]);
    }
    for name in ["seat", "role", "run"] {
        if let Some(value) = args.string(name)? {
            argv.extend([format!("--{name}"), value]);
        }
    }
    let after = args.integer("after")?.unwrap_or(0);
    let limit = args.integer("limit")?.unwrap_or(DEFAULT_EVENTS);
    if !(1..=MAX_EVENTS).contains(&limit) {
        return Err(format!(
            "argument `limit`: {limit} is out of range (1 to {MAX_EVENTS})"
        ));
    }
    let events_args: events::Args = parse(argv)?;
    let lines = events::matching(project, &events_args)?;
    let total = lines.len() as u64;
    let page: Vec<Value> = lines
        .iter()
        .skip(usize::try_from(after).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(crate::run::RunEvent::to_json)
        .collect();
    let next = after
        .saturating_add(page.len() as u64)
        .min(total.max(after));
    Ok(json!({"events": page, "after": after, "next": next, "total": total}))
}

fn read_usage(project: &Path, explicit_project: bool, args: &Arguments) -> Result<Value, String> {
    args.only(&["since", "until", "by", "cli", "tz"])?;
    let mut argv: Vec<String> = vec!["--json".into()];
    for name in ["since", "until", "tz"] {
        if let Some(value) = args.string(name)? {
            argv.extend([format!("--{name}"), value]);
        }
    }
    if let Some(by) = args.one_of("by", &["session", "day", "month", "model", "block"])? {
        argv.extend(["--by".into(), by]);
    }
    for cli in args.strings("cli")? {
        argv.extend(["--cli".into(), cli]);
    }
    let usage_args: usage::Args = parse(argv)?;
    let report = usage::report(project, explicit_project, &usage_args, &crate::usage::Quiet)
        .map_err(|e| e.to_string())?;
    serde_json::to_value(&report).map_err(|e| e.to_string())
}

fn down(project: &Path, args: &Arguments) -> Result<Value, String> {
    args.only(&["nick"])?;
    let nick = args.nick("nick")?;
    let down: seats::DownArgs = parse(vec!["--json".into(), "--".into(), nick])?;
    seats::stop(project, &down).map_err(engine)
}

/// A command's arguments from an argument vector, by the command's own
/// clap definition (its defaults and value parsers).
fn parse<T: clap::Args + clap::FromArgMatches>(argv: Vec<String>) -> Result<T, String> {
    let command = T::augment_args(clap::Command::new("drover").no_binary_name(true));
    let matches = command
        .try_get_matches_from(argv)
        .map_err(|e| e.render().to_string().trim().to_string())?;
    T::from_arg_matches(&matches).map_err(|e| e.to_string())
}

/// A tool call's arguments, read with errors that name the argument.
struct Arguments<'a> {
    map: &'a JsonObject,
}

impl Arguments<'_> {
    /// Refuses an argument the tool does not take (a misspelt one would
    /// otherwise be ignored silently).
    fn only(&self, known: &[&str]) -> Result<(), String> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(key) if known.is_empty() => {
                Err(format!("unknown argument `{key}`: this tool takes none"))
            }
            Some(key) => Err(format!(
                "unknown argument `{key}` (this tool takes: {})",
                known.join(", ")
            )),
        }
    }

    /// A string argument, if given; an empty string counts as not given.
    fn string(&self, name: &str) -> Result<Option<String>, String> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!(
                "argument `{name}`: must be a string, not {}",
                kind(other)
            )),
        }
    }

    fn required(&self, name: &str) -> Result<String, String> {
        self.string(name)?
            .ok_or_else(|| format!("argument `{name}` is required (a non-empty string)"))
    }

    /// A seat's nickname, as `drover up` accepts them.
    fn nick(&self, name: &str) -> Result<String, String> {
        let nick = self.required(name)?;
        if crate::run::safe_segment(&nick) != nick {
            return Err(format!(
                "argument `{name}`: '{nick}' is not a seat nickname (letters, digits, '.', '_' or '-')"
            ));
        }
        Ok(nick)
    }

    fn boolean(&self, name: &str) -> Result<Option<bool>, String> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(format!(
                "argument `{name}`: must be true or false, not {}",
                kind(other)
            )),
        }
    }

    fn integer(&self, name: &str) -> Result<Option<u64>, String> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| {
                format!("argument `{name}`: must be a whole number of 0 or more, not {n}")
            }),
            Some(other) => Err(format!(
                "argument `{name}`: must be a whole number, not {}",
                kind(other)
            )),
        }
    }

    /// A list of strings; a single string is a list of one.
    fn strings(&self, name: &str) -> Result<Vec<String>, String> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
                    other => Err(format!(
                        "argument `{name}`: every item must be a non-empty string, not {}",
                        kind(other)
                    )),
                })
                .collect(),
            Some(other) => Err(format!(
                "argument `{name}`: must be a list of strings, not {}",
                kind(other)
            )),
        }
    }

    fn one_of(&self, name: &str, options: &[&str]) -> Result<Option<String>, String> {
        match self.string(name)? {
            Some(value) if !options.contains(&value.as_str()) => Err(format!(
                "argument `{name}`: '{value}' is not one of {}",
                options.join(", ")
            )),
            value => Ok(value),
        }
    }

    /// A duration (90m, 30s), at most [`MAX_WAIT`].
    fn duration(&self, name: &str) -> Result<Option<String>, String> {
        let Some(text) = self.string(name)? else {
            return Ok(None);
        };
        let parsed = crate::cli::run::parse_duration(&text)
            .map_err(|e| format!("argument `{name}`: {e}"))?;
        let max = crate::cli::run::parse_duration(MAX_WAIT).map_err(|e| e.to_string())?;
        if parsed > max || parsed.is_zero() {
            return Err(format!(
                "argument `{name}`: '{text}' is out of range (more than 0, at most {MAX_WAIT})"
            ));
        }
        Ok(Some(text))
    }
}

/// A JSON value's kind, for an error message.
fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    fn error_text(result: &CallToolResult) -> String {
        assert_eq!(result.is_error, Some(true), "{result:?}");
        serde_json::to_value(&result.content).map_or_else(|e| e.to_string(), |v| v.to_string())
    }

    #[test]
    fn bad_arguments_are_tool_errors_naming_the_argument() {
        let project = std::env::temp_dir();
        let cases = [
            (
                "send",
                json!({"nick": "a"}),
                "argument `prompt` is required",
            ),
            (
                "send",
                json!({"nick": 7, "prompt": "hi"}),
                "argument `nick`: must be a string, not 7",
            ),
            (
                "send",
                json!({"nick": "../x", "prompt": "hi"}),
                "argument `nick`: '../x' is not a seat nickname",
            ),
            (
                "send",
                json!({"nick": "a", "prompt": "hi", "wait": "yes"}),
                "argument `wait`: must be true or false",
            ),
            (
                "send",
                json!({"nick": "a", "prompt": "hi", "timeout": "forever"}),
                "argument `timeout`",
            ),
            (
                "send",
                json!({"nick": "a", "prompt": "hi", "timeout": "9h"}),
                "out of range",
            ),
            (
                "send",
                json!({"nick": "a", "prompt": "hi", "model": "x"}),
                "unknown argument `model`",
            ),
            (
                "start_seat",
                json!({"nick": "a", "cli": "x", "workspace": "moon"}),
                "argument `workspace`: 'moon' is not one of",
            ),
            ("wait", json!({}), "name what to wait on"),
            (
                "wait",
                json!({"all": true, "until": "idle", "not": "working"}),
                "exclude each other",
            ),
            (
                "events",
                json!({"limit": 5000}),
                "argument `limit`: 5000 is out of range",
            ),
            (
                "events",
                json!({"since": "yesterday-ish"}),
                "argument `since`",
            ),
            (
                "events",
                json!({"after": -1}),
                "argument `after`: must be a whole number of 0 or more",
            ),
            (
                "usage",
                json!({"by": "year"}),
                "argument `by`: 'year' is not one of",
            ),
            (
                "list_seats",
                json!({"x": 1}),
                "unknown argument `x`: this tool takes none",
            ),
            (
                "launch_missiles",
                json!({}),
                "no tool named launch_missiles",
            ),
        ];
        for (name, args, expected) in cases {
            let text = error_text(&call(&project, false, name, &object(args.clone())));
            assert!(text.contains(expected), "{name} {args}: {text}");
        }
    }

    #[test]
    fn every_tool_says_what_it_costs() {
        let tools = all();
        assert_eq!(tools.len(), 8);
        for tool in tools {
            let description = tool.description.unwrap_or_default();
            assert!(
                description.contains("Cost") || description.contains("cost"),
                "{}",
                tool.name
            );
        }
    }
}
