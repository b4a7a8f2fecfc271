//! The MCP surface (docs/security.md, "Every effect, its gate and its
//! test"): `start_seat` launches through the same trust gate as `drover
//! up`, a human seat is never typed into (nor answered, nor waited on)
//! through it, and `drover mcp install`/`remove` give the user's config
//! back byte for byte.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use support::Project;
use support::mcp::Client;

struct Down<'a>(&'a Project);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = self.0.output(&["down", "--all"]);
    }
}

fn client(p: &Project) -> Client {
    let mut command = p.drover();
    command.arg("--project").arg(p.path()).arg("mcp");
    Client::start(command)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn an_untrusted_project_profile_cannot_be_started_through_mcp() {
    let p = Project::new();
    let _down = Down(&p);
    // The scripted profile, committed under another name: a project
    // profile, which runs only once the operator trusts it.
    let scripted = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/scripted.toml"),
    )
    .expect("scripted profile");
    let dir = p.path().join(".drover/profiles");
    std::fs::create_dir_all(&dir).expect("profiles");
    std::fs::write(
        dir.join("sneaky.toml"),
        scripted.replace("name = \"scripted\"", "name = \"sneaky\""),
    )
    .expect("profile");

    let mut mcp = client(&p);
    let error = mcp.error(
        "start_seat",
        json!({"nick": "s", "cli": "sneaky", "workspace": "headless"}),
    );
    assert!(error.contains("not trusted"), "{error}");
    assert_eq!(mcp.ok("list_seats", json!({}))["seats"], json!([]));
    let runs = p.path().join(".drover/runs");
    assert!(
        std::fs::read_dir(&runs).map_or(true, |mut d| d.next().is_none()),
        "a run started for an untrusted profile"
    );
    // The server goes on serving after the refusal.
    let started = mcp.ok(
        "start_seat",
        json!({"nick": "ok", "cli": "scripted", "workspace": "headless"}),
    );
    assert_eq!(started["seat"]["cli"], "scripted", "{started:#}");
}

#[test]
fn a_human_seat_is_refused_by_the_tools() {
    support::tmux_required();
    let p = Project::new();
    let _down = Down(&p);
    let out = p.output(&[
        "up",
        "boss",
        "--cli",
        "scripted",
        "--workspace",
        "tmux",
        "--human",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut mcp = client(&p);
    let error = mcp.error(
        "send",
        json!({"nick": "boss", "prompt": "Reply with exactly: NO"}),
    );
    assert!(error.contains("human seat"), "{error}");
    let error = mcp.error(
        "send",
        json!({"nick": "boss", "prompt": "x", "wait": false}),
    );
    assert!(error.contains("human seat"), "{error}");
    let error = mcp.error("answer", json!({"seat": "boss", "option": "1"}));
    assert!(error.contains("human seat"), "{error}");
    let error = mcp.error("wait", json!({"targets": ["boss"], "timeout": "1s"}));
    assert!(error.contains("human seat"), "{error}");
    // Nothing was typed into its pane: no turn in its journal.
    let seats = mcp.ok("list_seats", json!({}));
    assert_ne!(seats["seats"][0]["state"], "working", "{seats:#}");
    let events = mcp.ok("events", json!({"seat": "boss"}));
    assert!(
        !events["events"]
            .as_array()
            .expect("events")
            .iter()
            .any(|e| e["state"] == "working"),
        "{events:#}"
    );
}

/// A user's config in each format, with formatting a rewrite would lose.
const CONFIGS: &[(&str, &str, &str)] = &[
    (
        "claude",
        ".claude.json",
        "{\"numStartups\":3,  \"theme\" : \"dark\",\n \"projects\": {\"/elsewhere\": {\"allowedTools\": []}}}",
    ),
    (
        "codex",
        ".codex/config.toml",
        "# my codex\nmodel = \"gpt-5.5\"   # pinned\n\n[mcp_servers.other]\ncommand = \"other\"\nargs = [ \"a\" ]\n",
    ),
    (
        "gemini",
        ".gemini/settings.json",
        "{\n    \"theme\": \"Dracula\",\n    \"mcpServers\": {\"mine\": {\"command\": \"mine\"}}\n}",
    ),
];

fn mcp_config(p: &Project, action: &str, cli: &str) -> Value {
    mcp_config_for(p, p.path(), action, cli)
}

fn mcp_config_for(p: &Project, project: &Path, action: &str, cli: &str) -> Value {
    let out = p
        .drover()
        .arg("--project")
        .arg(project)
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .args(["mcp", action, "--cli", cli, "--json"])
        .output()
        .expect("drover runs");
    assert!(
        out.status.success(),
        "mcp {action} --cli {cli}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn parse(path: &Path, bytes: &str) -> Value {
    if path.extension().is_some_and(|e| e == "toml") {
        serde_json::to_value(bytes.parse::<toml::Table>().expect("TOML")).expect("value")
    } else {
        serde_json::from_str(bytes).expect("JSON")
    }
}

#[test]
fn mcp_install_and_remove_restore_the_users_file_byte_for_byte() {
    let p = Project::new();
    let project = p.path().canonicalize().expect("project");
    for (cli, file, original) in CONFIGS {
        let path = p.home.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, original).expect("config");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");

        let done = mcp_config(&p, "install", cli);
        assert_eq!(done["change"], "installed", "{cli}: {done:#}");
        let edited = std::fs::read_to_string(&path).expect("edited");
        let doc = parse(&path, &edited);
        let entry = match *cli {
            "claude" => &doc["projects"][project.display().to_string()]["mcpServers"]["drover"],
            "codex" => &doc["mcp_servers"]["drover"],
            _ => &doc["mcpServers"]["drover"],
        };
        assert_eq!(
            entry["args"],
            json!(["--project", project.display().to_string(), "mcp"]),
            "{cli}: {edited}"
        );
        assert!(
            entry["command"]
                .as_str()
                .is_some_and(|c| c.ends_with("/drover")),
            "{cli}: {edited}"
        );
        // The user's own settings are all still there.
        let mut user = doc.clone();
        match *cli {
            "claude" => {
                user["projects"]
                    .as_object_mut()
                    .expect("projects")
                    .shift_remove(&project.display().to_string());
            }
            "codex" => {
                user["mcp_servers"]
                    .as_object_mut()
                    .expect("servers")
                    .shift_remove("drover");
            }
            _ => {
                user["mcpServers"]
                    .as_object_mut()
                    .expect("servers")
                    .shift_remove("drover");
            }
        }
        assert_eq!(user, parse(&path, original), "{cli}: {edited}");
        // A second install changes nothing.
        assert_eq!(mcp_config(&p, "install", cli)["change"], "unchanged");

        let done = mcp_config(&p, "remove", cli);
        assert_eq!(done["change"], "restored", "{cli}: {done:#}");
        assert_eq!(
            std::fs::read(&path).expect("restored"),
            original.as_bytes(),
            "{cli}: not the user's bytes"
        );
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "{cli}: mode");
    }

    // No file before: install creates it (private), remove deletes it.
    let gemini = p.home.join(".gemini/settings.json");
    std::fs::remove_file(&gemini).expect("rm");
    mcp_config(&p, "install", "gemini");
    let mode = std::fs::metadata(&gemini)
        .expect("created")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(mcp_config(&p, "remove", "gemini")["change"], "deleted");
    assert!(!gemini.exists());

    // Changed since the install (as Claude Code rewrites ~/.claude.json):
    // only drover's entry is taken out, the change stays.
    let claude = p.home.join(".claude.json");
    mcp_config(&p, "install", "claude");
    let mut doc = parse(&claude, &std::fs::read_to_string(&claude).expect("read"));
    doc["numStartups"] = json!(4);
    std::fs::write(&claude, doc.to_string()).expect("write");
    assert_eq!(mcp_config(&p, "remove", "claude")["change"], "removed");
    let after = parse(&claude, &std::fs::read_to_string(&claude).expect("read"));
    let mut expected = parse(&claude, CONFIGS[0].2);
    expected["numStartups"] = json!(4);
    assert_eq!(after, expected);

    // Two projects' entries in one file: removed in reverse order, each
    // earlier file comes back byte for byte.
    let other = p.path().join("other");
    std::fs::create_dir_all(&other).expect("other project");
    std::fs::write(&claude, CONFIGS[0].2).expect("write");
    mcp_config(&p, "install", "claude");
    let with_first = std::fs::read(&claude).expect("read");
    mcp_config_for(&p, &other, "install", "claude");
    assert_ne!(std::fs::read(&claude).expect("read"), with_first);
    assert_eq!(
        mcp_config_for(&p, &other, "remove", "claude")["change"],
        "restored"
    );
    assert_eq!(std::fs::read(&claude).expect("read"), with_first);
    assert_eq!(mcp_config(&p, "remove", "claude")["change"], "restored");
    assert_eq!(
        std::fs::read(&claude).expect("read"),
        CONFIGS[0].2.as_bytes()
    );
}
