//! A CLI no component knows, described by a profile alone, runs end to end
//! through the built-in generic adapter: headless from its `[turn]` table,
//! on tmux from its hook dialect and the common screen shapes, with its
//! family's fault rules and its own `env_fault_patterns`. The stand-in CLI
//! is the scripted one (Claude Code's formats, hooks read from
//! `.scripted/settings.json`) under a name drover does not know, and a
//! shell script.

use crate::support;

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;
use support::{Project, tmux_required};

/// A user profile (user profiles need no trust) called `acme` for the
/// scripted CLI, with no `component`: the generic adapter drives it.
fn acme(turn: &str) -> String {
    format!(
        r#"name = "acme"
binary = "scripted-cli"
bypass_args = ["--permission-mode", "bypassPermissions"]
usage_parser = "claude-jsonl"
env_fault_patterns = ["^ACME-E\\d+ "]

[env]
IS_SANDBOX = "1"

[hooks]
dialect = "claude-settings-json"
config_path = ".scripted/settings.json"

[hooks.events]
SessionStart = "SessionStart"
Stop = "Stop"
SessionEnd = "SessionEnd"
{turn}"#
    )
}

const TURN: &str = r#"
[turn]
argv = ["-p", "{prompt}", "--output-format", "json"]
resume = ["--resume", "{id}"]
session_id = ["--session-id", "{id}"]
output = "json"
"#;

fn user_profile(p: &Project, text: &str) {
    named_user_profile(p, "acme", text);
}

/// A user profile `NAME.toml` (user profiles need no trust).
fn named_user_profile(p: &Project, name: &str, text: &str) {
    let dir = p.home.join(".config/drover/profiles");
    std::fs::create_dir_all(&dir).expect("profiles dir");
    std::fs::write(dir.join(format!("{name}.toml")), text).expect("profile");
}

/// An executable stand-in CLI in the project's home.
fn script(p: &Project, name: &str, text: &str) -> std::path::PathBuf {
    let path = p.home.join(name);
    std::fs::write(&path, text).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn a_profile_only_cli_runs_headless_from_its_turn_table() {
    let p = Project::new();
    user_profile(&p, &acme(TURN));
    let (doc, code) = p.run(&["--cli", "acme", "Reply with exactly: FROM ACME"]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    assert_eq!(doc["reply"], "FROM ACME");
    // The result object's counts, read by their common key names.
    assert_eq!(doc["usage"]["input"], 1201, "{doc:#}");
    assert_eq!(doc["usage"]["cache_write"], 1302);
    assert_eq!(doc["usage"]["cache_read"], 1403);
    assert_eq!(doc["usage"]["output"], 57);
    let conversation = doc["session_id"].as_str().expect("conversation id");

    // `[turn] resume` continues it.
    let (again, code) = p.run(&[
        "--cli",
        "acme",
        "--resume",
        conversation,
        "Reply with exactly: AGAIN",
    ]);
    assert_eq!(
        (again["status"].as_str(), code),
        (Some("completed"), 0),
        "{again:#}"
    );
    assert_eq!(again["session_id"], conversation);

    // The hook dialect's family (Claude's) classifies the CLI's faults.
    let (doc, code) = p.run(&["--cli", "acme", "work @fault=529"]);
    assert_eq!(code, 1);
    assert_eq!(doc["fault"]["kind"], "overload", "{doc:#}");
}

#[test]
fn the_profiles_own_fault_patterns_apply() {
    let p = Project::new();
    let script = script(
        &p,
        "acme-cli",
        "#!/bin/sh\necho 'ACME-E42 daily quota exhausted' >&2\nexit 3\n",
    );
    user_profile(
        &p,
        &acme(TURN).replace(
            "binary = \"scripted-cli\"",
            &format!("binary = \"{}\"", script.display()),
        ),
    );
    let (doc, code) = p.run(&["--cli", "acme", "hello"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_ne!(doc["status"], "completed", "{doc:#}");
    assert!(
        doc["fault"]["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("ACME-E42 daily quota exhausted")),
        "{doc:#}"
    );
}

#[test]
fn without_a_turn_table_it_runs_on_tmux_only_and_says_so() {
    let p = Project::new();
    user_profile(&p, &acme(""));
    let (doc, code) = p.run(&["--workspace", "headless", "--cli", "acme", "hi"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_ne!(doc["status"], "completed", "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("has no [turn] argv, so it runs on tmux only")),
        "{doc:#}"
    );

    let profiles = json(&p.output(&["profiles", "--json"]));
    let row = profiles["profiles"]
        .as_array()
        .expect("profiles")
        .iter()
        .find(|r| r["name"] == "acme")
        .cloned()
        .expect("acme listed");
    assert_eq!(
        row["driver"], "generic (dialect claude-settings-json)",
        "{row:#}"
    );

    let validate = json(&p.output(&["validate", "--cli", "acme", "--json"]));
    let generic: Vec<&Value> = validate["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["check"] == "profile.generic")
        .collect();
    assert!(
        generic.iter().any(|f| f["severity"] == "warning"
            && f["message"]
                .as_str()
                .is_some_and(|m| m.contains("runs on tmux only"))),
        "{validate:#}"
    );
    assert!(
        generic
            .iter()
            .any(|f| f["detail"]["limitations"]
                .as_array()
                .is_some_and(|l| l.iter().any(|x| x
                    .as_str()
                    .is_some_and(|x| x.contains("cannot tell done from idle"))))),
        "{validate:#}"
    );
}

#[test]
fn on_tmux_its_hooks_and_the_common_screen_shapes_drive_it() {
    tmux_required();
    let p = Project::new();
    user_profile(&p, &acme(""));
    p.install_hooks("acme");
    let settings = std::fs::read_to_string(p.path().join(".scripted/settings.json"))
        .expect("the dialect's hook config was written");
    assert!(settings.contains("drover"), "{settings}");
    let (doc, code) = p.run(&[
        "--cli",
        "acme",
        "--workspace",
        "tmux",
        "--teardown-grace",
        "2s",
        "--timeout",
        "2m",
        "Reply with exactly: ON TMUX",
    ]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    let run_id = doc["run_id"].as_str().expect("run id");
    let states = p.states(run_id);
    assert!(states.contains(&"working".to_string()), "{states:?}");
    assert_eq!(
        states.last().map(String::as_str),
        Some("done"),
        "{states:?}"
    );
}

/// A stand-in for a hookless CLI that prints for people (aider's shape): a
/// banner, warnings, model and repo lines, the reply, and a rounded token
/// summary. `--message TEXT` is the turn; a message containing `FAIL`
/// fails the way such CLIs do, on stderr.
const TEXT_CLI: &str = r#"#!/bin/sh
[ "$1" = "--message" ] || { echo "usage: textcli --message TEXT" >&2; exit 2; }
case "$2" in *FAIL*) echo "litellm.AuthenticationError: invalid api key" >&2; exit 1;; esac
printf '\033[1mTextcli v0.86.1\033[0m\n'
echo "Warning: could not fetch the model price list"
echo "Model: anthropic/claude-sonnet-4-5-20250929 with diff edit format"
echo "Git repo: none"
echo
echo "${2#Reply with exactly: }"
echo
echo "Tokens: 3.1k sent, 77 received."
"#;

fn text_cli_profile(p: &Project, extra_top: &str) -> String {
    let script = script(p, "textcli", TEXT_CLI);
    format!(
        r#"name = "textcli"
binary = "{}"
{extra_top}
env_fault_patterns = ["AuthenticationError"]

[hooks]
dialect = "none"

[turn]
argv = ["--message", "{{prompt}}"]
output = "text"
drop = ["^Textcli v", "^Warning:", "^Model:", "^Git repo:", "^Tokens:"]

[turn.usage]
input = 'Tokens: ([\d.,]+[kM]?) sent'
output = 'sent, ([\d.,]+[kM]?) received'
model = '(?m)^Model: (\S+)'
"#,
        script.display()
    )
}

#[test]
fn a_hookless_text_cli_runs_from_its_profile_alone() {
    // No `adapter`, no `component`: a hookless profile with [turn] is the
    // generic adapter's; `adapter = "generic"` says the same.
    for extra in ["", "adapter = \"generic\""] {
        let p = Project::new();
        named_user_profile(&p, "textcli", &text_cli_profile(&p, extra));
        let (doc, code) = p.run(&["--cli", "textcli", "Reply with exactly: HELLO TEXT"]);
        assert_eq!(
            (doc["status"].as_str(), code),
            (Some("completed"), 0),
            "{extra}: {doc:#}"
        );
        // The reply alone: no banner, warning, model line or token line.
        assert_eq!(doc["reply"], "HELLO TEXT", "{doc:#}");
        assert_eq!(doc["usage"]["input"], 3100, "{doc:#}");
        assert_eq!(doc["usage"]["output"], 77);
        assert_eq!(doc["usage_approximate"], true, "{doc:#}");
        // The model it printed is priced: Sonnet 4.5 at $3 and $15 per
        // million input and output tokens.
        let cost = doc["cost_usd"].as_f64().expect("a priced model");
        assert!(
            (cost - (3100.0 * 3e-6 + 77.0 * 15e-6)).abs() < 1e-9,
            "{cost}"
        );

        // People see the figures marked as estimates.
        let human = p
            .drover()
            .args(["run", "--cli", "textcli", "Reply with exactly: AGAIN"])
            .output()
            .expect("run");
        let text = String::from_utf8_lossy(&human.stdout);
        assert!(human.status.success(), "{text}");
        assert!(text.contains("usage is approximate"), "{text}");
        assert!(text.contains("input ~3100 · output ~77"), "{text}");
        assert!(text.contains("cost: ~$0.0105"), "{text}");

        // The journal's verdict, `status` and a seat's cost say so too.
        let run_id = doc["run_id"].as_str().expect("run id");
        let verdict = p
            .journal(run_id)
            .into_iter()
            .find(|e| e["kind"] == "verdict")
            .expect("a verdict line");
        assert_eq!(verdict["detail"]["usage_approximate"], true, "{verdict:#}");
        let status = String::from_utf8_lossy(&p.output(&["status"]).stdout).into_owned();
        assert!(status.contains("~$0.01"), "{status}");
        let up = p.output(&["up", "tx", "--cli", "textcli", "--workspace", "headless"]);
        assert!(
            up.status.success(),
            "{}",
            String::from_utf8_lossy(&up.stderr)
        );
        let sent = p.output(&["send", "tx", "Reply with exactly: SEATED"]);
        assert!(
            sent.status.success(),
            "{}",
            String::from_utf8_lossy(&sent.stderr)
        );
        let seats = json(&p.output(&["seats", "--json"]));
        assert_eq!(seats["seats"][0]["cost_approximate"], true, "{seats:#}");
        let listed = String::from_utf8_lossy(&p.output(&["seats"]).stdout).into_owned();
        assert!(listed.contains("~$0.01"), "{listed}");
        assert!(p.output(&["down", "--all"]).status.success());

        // A failing turn is a failure with the CLI's sentence, classified
        // by the profile's own patterns.
        let (doc, code) = p.run(&["--cli", "textcli", "FAIL please"]);
        assert_eq!(code, 1, "{doc:#}");
        assert!(
            doc["fault"]["evidence"]
                .as_str()
                .is_some_and(|e| e.contains("invalid api key")),
            "{doc:#}"
        );
    }
}

/// A hookless CLI with a prompt of its own (`> `), for panes: it prints a
/// banner, then for each line typed the reply and a token line, and shows
/// its prompt again.
const TEXT_REPL: &str = r#"#!/bin/sh
echo "Textrepl v1.0 (no hooks)"
while printf '> ' && read -r line; do
  echo "${line#Reply with exactly: }"
  echo "Tokens: 1.2k sent, 9 received."
done
"#;

#[test]
fn on_tmux_a_hookless_turn_ends_when_its_idle_screen_settles() {
    tmux_required();
    let p = Project::new();
    let script = script(&p, "textrepl", TEXT_REPL);
    named_user_profile(
        &p,
        "textrepl",
        &format!(
            "name = \"textrepl\"\nbinary = \"{}\"\nscreen_settle_s = 1.5\n\n[hooks]\ndialect = \"none\"\n\n[turn]\nargv = [\"{{prompt}}\"]\n",
            script.display()
        ),
    );
    let (doc, code) = p.run(&[
        "--cli",
        "textrepl",
        "--workspace",
        "tmux",
        "--teardown-grace",
        "2s",
        "--timeout",
        "2m",
        "Reply with exactly: SETTLED",
    ]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("the idle screen settled")),
        "{doc:#}"
    );
    let run_id = doc["run_id"].as_str().expect("run id");
    let events = p.journal(run_id);
    assert!(
        events
            .iter()
            .any(|e| e["state"] == "done" && e["source"] == "screen:settled"),
        "{events:#?}"
    );
    // `validate` says what reading the end off the screen cannot tell apart.
    let validate = json(&p.output(&["validate", "--cli", "textrepl", "--json"]));
    let hookless = validate["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["check"] == "hooks.none")
        .cloned()
        .unwrap_or_else(|| panic!("no hooks.none finding: {validate:#}"));
    assert_eq!(hookless["severity"], "warning", "{hookless:#}");
    assert!(
        hookless["message"]
            .as_str()
            .is_some_and(|m| m.contains("unchanged for 1.5s") && m.contains("cannot tell apart")),
        "{hookless:#}"
    );
}

/// The text stand-in, given `--session ID`, also writes what it sent to a
/// JSON-lines log of its own (aider's analytics shape): exact OpenAI counts,
/// the input with its cached part, each request with an id, and lines that
/// are not usage.
const LOGGING_CLI: &str = r#"#!/bin/sh
msg=""; session=""
while [ $# -gt 0 ]; do
  case "$1" in
    --message) msg="$2"; shift 2;;
    --session) session="$2"; shift 2;;
    *) shift;;
  esac
done
echo "Textcli v0.86.1"
echo "Model: anthropic/claude-sonnet-4-5-20250929 with diff edit format"
echo
echo "${msg#Reply with exactly: }"
echo
echo "Tokens: 3.1k sent, 77 received."
[ -n "$session" ] || exit 0
log="$HOME/.textcli/logs/$session.jsonl"
mkdir -p "$HOME/.textcli/logs"
n=$( [ -f "$log" ] && wc -l < "$log" || echo 0 )
row="{\"event\":\"message_send\",\"time\":1764756000,\"properties\":{\"id\":\"req-$n\",\"main_model\":\"claude-sonnet-4-5-20250929\",\"prompt_tokens\":3101,\"cached_tokens\":300,\"completion_tokens\":77}}"
# The request is logged twice (a retry of the log write), among other events.
printf '%s\n' '{"event":"launched","time":1764756000}' "$row" "$row" 'not json at all' >> "$log"
"#;

#[test]
fn a_usage_table_gives_exact_usage_from_the_clis_own_logs() {
    let p = Project::new();
    let script = script(&p, "textcli", LOGGING_CLI);
    named_user_profile(
        &p,
        "textcli",
        &format!(
            r#"name = "textcli"
binary = "{}"

[hooks]
dialect = "none"

[turn]
argv = ["--message", "{{prompt}}"]
session_id = ["--session", "{{id}}"]
resume = ["--session", "{{id}}"]
drop = ["^Textcli v", "^Model:", "^Tokens:"]

[turn.usage]
input = 'Tokens: ([\d.,]+[kM]?) sent'
output = 'sent, ([\d.,]+[kM]?) received'

[usage]
files = "~/.textcli/logs/*.jsonl"
where = {{ event = "message_send" }}
input = "properties.prompt_tokens"
input_includes_cache = true
cache_read = "properties.cached_tokens"
output = "properties.completion_tokens"
model = "properties.main_model"
request_id = "properties.id"
timestamp = "time"
"#,
            script.display()
        ),
    );
    let (doc, code) = p.run(&["--cli", "textcli", "Reply with exactly: LOGGED"]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    assert_eq!(doc["reply"], "LOGGED", "{doc:#}");
    // The log's counts, not the printed 3.1k: input net of the cached 300,
    // the logged-twice request once, and no estimate mark.
    assert_eq!(doc["usage"]["input"], 2801, "{doc:#}");
    assert_eq!(doc["usage"]["cache_read"], 300, "{doc:#}");
    assert_eq!(doc["usage"]["output"], 77, "{doc:#}");
    assert_eq!(doc["usage_approximate"], false, "{doc:#}");
    let cost = doc["cost_usd"].as_f64().expect("a priced model");
    let sonnet = 2801.0 * 3e-6 + 300.0 * 0.3e-6 + 77.0 * 15e-6;
    assert!((cost - sonnet).abs() < 1e-9, "{cost} against {sonnet}");
    // drover picked the conversation id; the log is named by it.
    let conversation = doc["session_id"].as_str().expect("a conversation id");
    assert!(
        p.home
            .join(format!(".textcli/logs/{conversation}.jsonl"))
            .is_file()
    );

    // A resumed turn counts only what it added to the log.
    let (again, code) = p.run(&[
        "--cli",
        "textcli",
        "--resume",
        conversation,
        "Reply with exactly: AGAIN",
    ]);
    assert_eq!(
        (again["status"].as_str(), code),
        (Some("completed"), 0),
        "{again:#}"
    );
    assert_eq!(again["usage"]["input"], 2801, "{again:#}");
    assert_eq!(again["usage"]["output"], 77, "{again:#}");

    // `drover usage` reads the same logs: two requests in one session.
    let usage = json(&p.output(&["usage", "--json", "--cli", "textcli", "--by", "session"]));
    let groups = usage["groups"].as_array().cloned().unwrap_or_default();
    let row = groups
        .iter()
        .find(|g| g["session"] == conversation)
        .unwrap_or_else(|| panic!("no group for {conversation}: {usage:#}"));
    assert_eq!(row["input"], 2 * 2801, "{usage:#}");
    assert_eq!(row["cache_read"], 2 * 300, "{usage:#}");
    assert_eq!(row["output"], 2 * 77, "{usage:#}");
    assert_eq!(row["requests"], 2, "{usage:#}");
    assert_eq!(usage["warnings"], serde_json::json!([]), "{usage:#}");
}

/// A CLI that ends before it reads its prompt: drover's write to its stdin
/// fails. That is the CLI's failure, recorded as a verdict; it must not
/// end drover (a default SIGPIPE would kill it mid-write, leaving no
/// verdict and no exit code).
#[test]
fn a_cli_that_exits_before_reading_its_prompt_gets_a_verdict() {
    use std::io::Write as _;
    let p = Project::new();
    let cli = script(
        &p,
        "quitter",
        "#!/bin/sh\necho 'ACME-E7 refused to start' >&2\nexit 3\n",
    );
    named_user_profile(
        &p,
        "quitter",
        &format!(
            "name = \"quitter\"\nbinary = \"{}\"\nenv_fault_patterns = [\"^ACME-E\\\\d+ \"]\n\n[hooks]\ndialect = \"none\"\n\n[turn]\nargv = [\"--quiet\"]\noutput = \"text\"\n",
            cli.display()
        ),
    );
    // Without `{prompt}` in its argv the prompt goes to the CLI's stdin;
    // four times a pipe's buffer, so the write cannot finish before the
    // CLI has gone.
    let prompt = "Reply with exactly: LATE\n".repeat(12_000);
    let mut child = p
        .drover()
        .args(["run", "--json", "--cli", "quitter", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("drover run");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(prompt.as_bytes())
        .expect("the prompt reaches drover");
    let out = child.wait_with_output().expect("drover run ends");
    assert_eq!(
        out.status.code(),
        Some(1),
        "drover ended by {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out);
    assert_eq!(doc["status"], "crashed", "{doc:#}");
    assert_eq!(doc["exit_code"], 3, "{doc:#}");
    assert!(
        doc["fault"]["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("ACME-E7")),
        "{doc:#}"
    );
    let run_id = doc["run_id"].as_str().expect("run id");
    assert!(
        p.journal(run_id).iter().any(|l| l["kind"] == "verdict"),
        "{:#?}",
        p.journal(run_id)
    );
}
