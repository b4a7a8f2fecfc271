//! Harness for the end-to-end tests against the real vendor CLIs (Claude
//! Code, Codex, Gemini CLI, opencode, Qwen Code, Grok, Copilot CLI), each driven by the real
//! `drover` binary against `drover-model-server` on 127.0.0.1.
//!
//! - **Finding the CLIs.** `scripts/provision-clis.sh` installs them under
//!   `$DROVER_CLI_CACHE` (default `~/.cache/drover-clis`) and writes
//!   `env.sh` with `DROVER_<CLI>_BIN` and `DROVER_NODE22_BIN_DIR`; the same
//!   variables in the test's environment win. A test whose CLI binary is
//!   absent is skipped with a message on stderr, except under `CI`, where it
//!   fails: CI always provisions them.
//! - **Isolation.** Every [`Real`] owns a temp tree `T`: `T/home` is `HOME`
//!   (and the CLI's own config dirs: `CODEX_HOME`, the `XDG_*` dirs),
//!   `T/tmp` is `TMPDIR`, `T/work` is the project (a git repo with one
//!   commit) and `T/server.*` the model server's port file and request log.
//!   `drover` runs with a cleared environment plus exactly these variables,
//!   and passes them on to the CLI (headless and in tmux panes).
//! - **First-run state** is seeded per CLI as docs/adapters/*.md and
//!   tests/fixtures/real/capture/*.sh describe (onboarding, trust, TUI
//!   notices, provider config), with retries bounded where the CLI allows.
//!   Every run also gets drover's own `--timeout`.
//! - **Teardown** kills every process that still carries this tree's `HOME`
//!   (the tmux server, Codex's app-server daemon if one started), then the
//!   model server, then removes the tree and the empty directories Codex and
//!   opencode create under /tmp whatever `TMPDIR` says.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{bin_dir, drover_exe, shared_cache};

/// The dummy keys; they never leave 127.0.0.1.
pub const ANTHROPIC_KEY: &str = "sk-ant-fake-0123456789abcdefghij";
pub const CODEX_KEY: &str = "sk-fake-codex-0123456789";
pub const GEMINI_KEY: &str = "fake-gemini-key-0123456789";
pub const OPENCODE_KEY: &str = "sk-fake-opencode-0123456789";
pub const QWEN_KEY: &str = "sk-fake-qwen-0123456789";
pub const COPILOT_KEY: &str = "sk-fake-copilot-0123456789";
pub const GROK_KEY: &str = "xai-fake-grok-0123456789";

// ---------------------------------------------------------------- binaries

/// Where a provisioned CLI lives.
#[derive(Debug, Clone)]
pub struct Bins {
    pub cli: PathBuf,
    /// node 22's bin dir (the node-based CLIs need it first in PATH).
    pub node_dir: Option<PathBuf>,
    /// opencode's plugin dependency, installed once by provision-clis.sh.
    pub opencode_plugin: Option<PathBuf>,
}

fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// `$DROVER_CLI_CACHE`, else `$HOME/.cache/drover-clis`.
pub fn cli_cache() -> PathBuf {
    match std::env::var_os("DROVER_CLI_CACHE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache")
            .join("drover-clis"),
    }
}

/// The `export NAME='value'` lines of the cache's env.sh.
fn env_file(cache: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(cache.join("env.sh")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('\'')
                .and_then(|v| v.strip_suffix('\''))
                .or_else(|| v.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
                .unwrap_or(v);
            (k.trim().to_string(), v.to_string())
        })
        .collect()
}

/// The CLI's binary and node 22, from the environment or env.sh.
pub fn locate(cli: &str) -> (Option<Bins>, String) {
    let cache = cli_cache();
    let file = env_file(&cache);
    let var = format!("DROVER_{}_BIN", cli.to_uppercase());
    let lookup = |key: &str| {
        std::env::var(key)
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| file.get(key).cloned())
    };
    let Some(bin) = lookup(&var) else {
        return (
            None,
            format!(
                "neither ${var} nor {} names it",
                cache.join("env.sh").display()
            ),
        );
    };
    let bin = PathBuf::from(bin);
    if !bin.is_file() {
        return (None, format!("{} does not exist", bin.display()));
    }
    let node_dir = lookup("DROVER_NODE22_BIN_DIR").map(PathBuf::from);
    let opencode_plugin = lookup("DROVER_OPENCODE_PLUGIN_DIR")
        .map(PathBuf::from)
        .filter(|d| d.join("package-lock.json").is_file());
    (
        Some(Bins {
            cli: bin,
            node_dir,
            opencode_plugin,
        }),
        String::new(),
    )
}

/// The CLI, or `None` after saying on stderr why the test is skipped.
/// Under `CI` a missing CLI is a failure, not a skip.
pub fn require(cli: &str) -> Option<Bins> {
    let (bins, why) = locate(cli);
    if bins.is_some() {
        return bins;
    }
    let message = format!(
        "the real {cli} CLI is not provisioned ({why}); run scripts/provision-clis.sh (or set DROVER_CLI_CACHE)"
    );
    assert!(!is_ci(), "CI is set, so this test must run: {message}");
    eprintln!("SKIPPED: {message}");
    None
}

pub fn model_server_exe() -> PathBuf {
    let path = bin_dir().join("drover-model-server");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace` before the tests",
        path.display()
    );
    path
}

// ------------------------------------------------------------ model server

/// Usage drover reports for one answered request of a protocol: drover's
/// `Tokens` convention (input excludes cache reads, output includes
/// reasoning), from the numbers drover-model-server sends
/// (docs/model-server.md).
pub fn usage_per_request(protocol: &str) -> Value {
    match protocol {
        // input 1201, cache_creation 1302, cache_read 1403, output 57; the
        // server never splits cache writes by lifetime, so no 1-hour part.
        "anthropic" => {
            json!({"input": 1201, "output": 57, "cache_read": 1403, "cache_write": 1302, "cache_write_1h": 0, "reasoning": 0})
        }
        // input 2101 (1000 cached), output 67 (5 reasoning)
        "responses" => {
            json!({"input": 1101, "output": 67, "cache_read": 1000, "cache_write": 0, "cache_write_1h": 0, "reasoning": 5})
        }
        // prompt 3101 (300 cached), completion 77
        "chat" => {
            json!({"input": 2801, "output": 77, "cache_read": 300, "cache_write": 0, "cache_write_1h": 0, "reasoning": 0})
        }
        // prompt 4101 (400 cached), candidates 87, thoughts 9
        "gemini" => {
            json!({"input": 3701, "output": 96, "cache_read": 400, "cache_write": 0, "cache_write_1h": 0, "reasoning": 9})
        }
        other => panic!("no usage known for protocol {other}"),
    }
}

/// The usage document drover should report for these answered requests.
pub fn expected_usage(requests: &[Value]) -> Value {
    let mut total = json!({"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "cache_write_1h": 0, "reasoning": 0, "requests": 0});
    for r in requests {
        let one = usage_per_request(r["protocol"].as_str().unwrap_or_default());
        for key in [
            "input",
            "output",
            "cache_read",
            "cache_write",
            "cache_write_1h",
            "reasoning",
        ] {
            total[key] = json!(total[key].as_u64().unwrap_or(0) + one[key].as_u64().unwrap_or(0));
        }
        total["requests"] = json!(total["requests"].as_u64().unwrap_or(0) + 1);
    }
    total
}

pub const MODEL_PROTOCOLS: &[&str] = &["anthropic", "responses", "chat", "gemini"];

pub struct ModelServer {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl ModelServer {
    pub fn start(dir: &Path) -> ModelServer {
        let port_file = dir.join("server.port");
        let log = dir.join("server.jsonl");
        let child = Command::new(model_server_exe())
            .args(["--port", "0", "--port-file"])
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(dir.join("server.err"))
                    .map(Stdio::from)
                    .unwrap_or_else(|_| Stdio::null()),
            )
            .spawn()
            .expect("drover-model-server starts");
        let mut server = ModelServer {
            child,
            port: 0,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.trim().parse::<u16>().ok())
            {
                server.port = port;
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "drover-model-server wrote no port file within 20 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// POST a control endpoint (`mode`, `tool`, `reset`); panics unless 200.
    pub fn control(&self, endpoint: &str, body: &Value) -> Value {
        let body = body.to_string();
        let mut stream =
            TcpStream::connect(("127.0.0.1", self.port)).expect("connect to the model server");
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        write!(
            stream,
            "POST /__fake/{endpoint} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("send the control request");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "/__fake/{endpoint} {body}: {answer}"
        );
        let json = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(json.trim()).unwrap_or(Value::Null)
    }

    /// Every request the server logged so far.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn last_seq(&self) -> u64 {
        self.requests()
            .iter()
            .filter_map(|r| r["seq"].as_u64())
            .max()
            .unwrap_or(0)
    }

    /// Model calls after `seq` that the server answered with a 200.
    pub fn answered_since(&self, seq: u64) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["seq"].as_u64().is_some_and(|s| s > seq))
            .filter(|r| MODEL_PROTOCOLS.contains(&r["protocol"].as_str().unwrap_or_default()))
            .filter(|r| r["status"] == 200 && r["error"] != true)
            .collect()
    }

    /// Model calls after `seq`, answered or not.
    pub fn model_calls_since(&self, seq: u64) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["seq"].as_u64().is_some_and(|s| s > seq))
            .filter(|r| MODEL_PROTOCOLS.contains(&r["protocol"].as_str().unwrap_or_default()))
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port on 127.0.0.1 with no listener. Chosen below Linux's ephemeral
/// range (32768 and up), where the tests' own servers, which bind port 0,
/// never land: a port freed from that range could be handed to a model
/// server of a test running alongside, and the "closed" CLI would reach it.
pub fn closed_port() -> u16 {
    (20_000..21_000)
        .find(|&port| std::net::TcpStream::connect(("127.0.0.1", port)).is_err())
        .expect("a closed port between 20000 and 21000")
}

// ------------------------------------------------------------- the project

/// What `drover run --json` answered.
#[derive(Debug)]
pub struct RunOutput {
    pub doc: Value,
    pub code: i32,
    pub stderr: String,
    pub elapsed: Duration,
}

impl RunOutput {
    pub fn status(&self) -> &str {
        self.doc["status"].as_str().unwrap_or_default()
    }
    pub fn run_id(&self) -> &str {
        self.doc["run_id"].as_str().unwrap_or_default()
    }
}

/// One isolated tree with a real CLI, its seeded config, a model server and
/// a project for drover.
pub struct Real {
    pub cli: &'static str,
    pub bins: Bins,
    pub root: tempfile::TempDir,
    pub home: PathBuf,
    pub work: PathBuf,
    pub tmp: PathBuf,
    pub server: ModelServer,
    env: BTreeMap<String, String>,
}

impl Real {
    /// A fresh tree for `cli`, or `None` when the CLI is not provisioned
    /// (outside CI).
    pub fn new(cli: &'static str) -> Option<Real> {
        let bins = require(cli)?;
        Some(Real::with(cli, bins))
    }

    /// A fresh tree for `cli` whose config home has nothing pre-accepted:
    /// only what reaches the model server (docs/first-run.md).
    pub fn fresh(cli: &'static str) -> Option<Real> {
        let bins = require(cli)?;
        Some(Real::seeded(cli, bins, Real::seed_fresh))
    }

    pub fn with(cli: &'static str, bins: Bins) -> Real {
        Real::seeded(cli, bins, Real::seed)
    }

    fn seeded(cli: &'static str, bins: Bins, seed: fn(&mut Real, &str)) -> Real {
        let mut root = tempfile::Builder::new()
            .prefix(&format!("drover-real-{cli}-"))
            .tempdir()
            .expect("tempdir");
        // DROVER_REAL_KEEP=1 keeps the tree for a post-mortem.
        if std::env::var_os("DROVER_REAL_KEEP").is_some() {
            root.disable_cleanup(true);
            eprintln!("[real {cli}] keeping {}", root.path().display());
        }
        let base = root.path().canonicalize().expect("canonical tempdir");
        let home = base.join("home");
        let work = base.join("work");
        let tmp = base.join("tmp");
        for dir in [&home, &work, &tmp] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        git_init(&work, &home);
        let server = ModelServer::start(&base);
        let mut real = Real {
            cli,
            bins,
            root,
            home,
            work,
            tmp,
            server,
            env: BTreeMap::new(),
        };
        real.base_env();
        let url = real.server.base();
        seed(&mut real, &url);
        real
    }

    fn base_env(&mut self) {
        let mut path = vec![
            self.bins
                .cli
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        ];
        path.extend(self.bins.node_dir.clone());
        path.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
        let path = std::env::join_paths(path).expect("PATH");
        let home = self.home.display().to_string();
        let mut env = BTreeMap::new();
        env.insert("PATH".into(), path.to_string_lossy().into_owned());
        env.insert("HOME".into(), home.clone());
        env.insert("USER".into(), whoami());
        env.insert("LANG".into(), "C.UTF-8".into());
        env.insert("TMPDIR".into(), self.tmp.display().to_string());
        env.insert("XDG_CONFIG_HOME".into(), format!("{home}/.config"));
        env.insert("XDG_DATA_HOME".into(), format!("{home}/.local/share"));
        env.insert("XDG_CACHE_HOME".into(), format!("{home}/.cache"));
        env.insert("XDG_STATE_HOME".into(), format!("{home}/.local/state"));
        env.insert(
            "DROVER_CACHE_DIR".into(),
            shared_cache().display().to_string(),
        );
        if let Ok(level) = std::env::var("DROVER_LOG") {
            env.insert("DROVER_LOG".into(), level);
        }
        self.env = env;
    }

    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.insert(key.to_string(), value.to_string());
    }

    pub fn env(&self, key: &str) -> Option<&str> {
        self.env.get(key).map(String::as_str)
    }

    /// Seeds the CLI's first-run state and points it at `base` (the model
    /// server, or a closed port).
    pub fn seed(&mut self, base: &str) {
        match self.cli {
            "claude" => self.seed_claude(base),
            "codex" => self.seed_codex(base),
            "gemini" => self.seed_gemini(base),
            "opencode" => self.seed_opencode(base),
            "qwen" => self.seed_qwen(base),
            "copilot" => self.seed_copilot(base),
            "grok" => self.seed_grok(base),
            other => panic!("no seeding known for {other}"),
        }
    }

    /// Only what reaches the model server at `base`: every first-run
    /// dialog stays (components/<cli>/fixtures/first-run/README.md).
    pub fn seed_fresh(&mut self, base: &str) {
        match self.cli {
            "claude" => {
                // Claude's onboarding checks connectivity to
                // api.anthropic.com before any dialog and exits offline;
                // that check is not a dialog, so only it is skipped.
                self.write(
                    &self.home.join(".claude.json"),
                    &json!({"hasCompletedOnboarding": true}).to_string(),
                );
                for (k, v) in [
                    ("ANTHROPIC_BASE_URL", base),
                    ("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
                    ("DISABLE_TELEMETRY", "1"),
                    ("DISABLE_AUTOUPDATER", "1"),
                    ("DISABLE_ERROR_REPORTING", "1"),
                    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                ] {
                    self.set_env(k, v);
                }
                // SAFETY: getuid(2) cannot fail.
                if unsafe { libc::getuid() } == 0 {
                    self.set_env("IS_SANDBOX", "1");
                }
            }
            "codex" => {
                let codex_home = self.home.join(".codex");
                let config = format!(
                    "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"Fake\"\nbase_url = \"{base}/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n"
                );
                self.write(&codex_home.join("config.toml"), &config);
                self.set_env("CODEX_HOME", &codex_home.display().to_string());
                self.set_env("FAKE_API_KEY", CODEX_KEY);
            }
            "gemini" => {
                self.set_env("GEMINI_API_KEY", GEMINI_KEY);
                self.set_env("GOOGLE_GEMINI_BASE_URL", base);
            }
            "qwen" => {
                self.set_env("OPENAI_API_KEY", QWEN_KEY);
                self.set_env("OPENAI_BASE_URL", &format!("{base}/v1"));
                self.set_env("OPENAI_MODEL", "fake-model");
            }
            "copilot" => {
                for (k, v) in [
                    ("COPILOT_PROVIDER_BASE_URL", format!("{base}/v1").as_str()),
                    ("COPILOT_PROVIDER_API_KEY", COPILOT_KEY),
                    ("COPILOT_MODEL", "gpt-4.1"),
                    ("COPILOT_AUTO_UPDATE", "false"),
                ] {
                    self.set_env(k, v);
                }
            }
            "grok" => {
                let config = format!(
                    "[endpoints]\nxai_api_base_url = \"{base}/v1\"\nmodels_base_url = \"{base}/v1\"\n"
                );
                self.write(&self.home.join(".grok").join("config.toml"), &config);
                self.set_env("XAI_API_KEY", GROK_KEY);
                self.set_env("GROK_DISABLE_AUTOUPDATER", "1");
            }
            // opencode shows no dialog; its provider has no variable, so
            // the seed is its own (without the user's `permission` rule).
            "opencode" => self.seed_opencode(base),
            other => panic!("no fresh seeding known for {other}"),
        }
    }

    /// Points the CLI at a port nothing listens on.
    pub fn point_at_closed_port(&mut self) -> u16 {
        let port = closed_port();
        self.seed(&format!("http://127.0.0.1:{port}"));
        port
    }

    fn write(&self, path: &Path, text: &str) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }

    fn seed_claude(&mut self, base: &str) {
        // Onboarding done, the key approved, the project trusted: without
        // these the TUI runs a connectivity check to api.anthropic.com and
        // shows dialogs (docs/adapters/claude.md).
        let last20 = &ANTHROPIC_KEY[ANTHROPIC_KEY.len() - 20..];
        let doc = json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "lastOnboardingVersion": "2.1.332",
            "customApiKeyResponses": {"approved": [last20], "rejected": []},
            "projects": {
                self.work.display().to_string(): {
                    "hasTrustDialogAccepted": true,
                    "hasCompletedProjectOnboarding": true,
                    "allowedTools": []
                }
            }
        });
        self.write(&self.home.join(".claude.json"), &doc.to_string());
        // drover's bypass (`--permission-mode bypassPermissions`) otherwise
        // opens the TUI on a one-time "Bypass Permissions mode" warning
        // (1. No, exit / 2. Yes, I accept), which no seat can answer.
        self.write(
            &self.home.join(".claude").join("settings.json"),
            &json!({"skipDangerousModePermissionPrompt": true}).to_string(),
        );
        for (k, v) in [
            ("ANTHROPIC_BASE_URL", base),
            ("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
        ] {
            self.set_env(k, v);
        }
        // As root, Claude refuses drover's bypass (`--permission-mode
        // bypassPermissions`: "cannot be used with root/sudo privileges")
        // unless it is told it runs in a deliberate sandbox, which a CI
        // container with a throw-away HOME is.
        // SAFETY: getuid(2) cannot fail.
        if unsafe { libc::getuid() } == 0 {
            self.set_env("IS_SANDBOX", "1");
        }
    }

    fn seed_codex(&mut self, base: &str) {
        let codex_home = self.home.join(".codex");
        let config = format!(
            r#"model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.fake]
name = "Fake"
base_url = "{base}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[projects."{work}"]
trust_level = "trusted"

[features]
daemon_auto_start = false

[tui]
screen_reader_detection_done = true

[tui.model_availability_nux]
"gpt-6.1-sol" = 4

[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"
"#,
            work = self.work.display()
        );
        self.write(&codex_home.join("config.toml"), &config);
        self.set_env("CODEX_HOME", &codex_home.display().to_string());
        self.set_env("FAKE_API_KEY", CODEX_KEY);
    }

    fn seed_gemini(&mut self, base: &str) {
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {
                "enableAutoUpdate": false,
                "enableAutoUpdateNotification": false,
                "disableAutoUpdate": true,
                "disableUpdateNag": true,
                "maxAttempts": 1,
                "retryFetchErrors": false
            }
        });
        self.write(
            &self.home.join(".gemini").join("settings.json"),
            &serde_json::to_string_pretty(&settings).unwrap_or_default(),
        );
        self.set_env("GEMINI_API_KEY", GEMINI_KEY);
        self.set_env("GOOGLE_GEMINI_BASE_URL", base);
        self.set_env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    }

    fn seed_opencode(&mut self, base: &str) {
        let config = json!({
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": false,
            "share": "disabled",
            "model": "fake/fake-model",
            // A user who wants to be asked before shell commands: drover's
            // bypass must override it, and without the bypass the TUI asks.
            "permission": {"bash": "ask"},
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake",
                    "options": {"baseURL": format!("{base}/v1"), "apiKey": OPENCODE_KEY},
                    "models": {"fake-model": {"name": "Fake Model", "limit": {"context": 200000, "output": 8192}}}
                }
            }
        });
        let dir = self.home.join(".config").join("opencode");
        self.write(
            &dir.join("opencode.json"),
            &serde_json::to_string_pretty(&config).unwrap_or_default(),
        );
        // Before it loads plugins, opencode installs @opencode-ai/plugin from
        // the registry into each config dir (the global one and the
        // project's .opencode/, which drover's relay plugin creates) unless
        // package.json and package-lock.json there already list it: about
        // 25 s and 64 MB per fresh tree. Seed the provisioned copy instead.
        if let Some(cache) = self.bins.opencode_plugin.clone() {
            for target in [dir.clone(), self.work.join(".opencode")] {
                std::fs::create_dir_all(&target).expect("mkdir");
                for file in ["package.json", "package-lock.json"] {
                    if !target.join(file).exists() {
                        std::fs::copy(cache.join(file), target.join(file)).expect("seed");
                    }
                }
                let modules = target.join("node_modules");
                if !modules.exists() {
                    std::os::unix::fs::symlink(cache.join("node_modules"), &modules)
                        .expect("link node_modules");
                }
            }
        }
        for (k, v) in [
            ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            ("OPENCODE_DISABLE_SHARE", "1"),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
        ] {
            self.set_env(k, v);
        }
    }

    fn seed_qwen(&mut self, base: &str) {
        let settings = json!({
            "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
            "model": {"name": "fake-model", "generationConfig": {"maxRetries": 0}},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "ui": {"autoModeAcknowledged": true},
            "$version": 4
        });
        self.write(
            &self.home.join(".qwen").join("settings.json"),
            &serde_json::to_string_pretty(&settings).unwrap_or_default(),
        );
        self.set_env("OPENAI_API_KEY", QWEN_KEY);
        self.set_env("OPENAI_BASE_URL", &format!("{base}/v1"));
        self.set_env("OPENAI_MODEL", "fake-model");
    }

    fn seed_copilot(&mut self, base: &str) {
        // The project is a trusted folder: otherwise the TUI opens on
        // "Confirm folder trust" and the repo-level hooks drover installs
        // (`.github/copilot/settings.json`) do not load, in -p runs either.
        let config = json!({
            "trustedFolders": [self.work.display().to_string()],
            "appTipShown": true
        });
        self.write(
            &self.home.join(".copilot").join("config.json"),
            &config.to_string(),
        );
        // Bring-your-own-provider mode: no GitHub account, no network but
        // the provider.
        for (k, v) in [
            ("COPILOT_PROVIDER_BASE_URL", format!("{base}/v1").as_str()),
            ("COPILOT_PROVIDER_API_KEY", COPILOT_KEY),
            ("COPILOT_MODEL", "gpt-4.1"),
            ("COPILOT_OFFLINE", "true"),
            ("COPILOT_AUTO_UPDATE", "false"),
        ] {
            self.set_env(k, v);
        }
    }

    fn seed_grok(&mut self, base: &str) {
        // The server for the model list and inference, the model pinned,
        // no retries (a 5xx otherwise retries for minutes), no update check,
        // no telemetry or feedback prompts.
        let config = format!(
            r#"[endpoints]
xai_api_base_url = "{base}/v1"
models_base_url = "{base}/v1"

[cli]
auto_update = false

[models]
default = "fake-model"
max_retries = 0

[features]
telemetry = false
feedback = false
"#
        );
        let grok = self.home.join(".grok");
        self.write(&grok.join("config.toml"), &config);
        // A fresh server port means a fresh model list.
        let _ = std::fs::remove_file(grok.join("models_cache.json"));
        self.set_env("XAI_API_KEY", GROK_KEY);
        self.set_env("GROK_DISABLE_AUTOUPDATER", "1");
    }

    // ------------------------------------------------------------ drover

    /// `drover` in the project, with exactly this tree's environment.
    pub fn drover(&self) -> Command {
        let mut cmd = Command::new(drover_exe());
        cmd.env_clear()
            .envs(&self.env)
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    pub fn output(&self, args: &[&str]) -> std::process::Output {
        self.drover().args(args).output().expect("drover runs")
    }

    /// `drover hooks <action> --cli <cli> --json`; panics unless it succeeds.
    pub fn hooks(&self, action: &str) -> Value {
        let out = self.output(&["hooks", action, "--cli", self.cli, "--json"]);
        assert!(
            out.status.success(),
            "drover hooks {action} --cli {}: {}{}",
            self.cli,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    /// The argv of `drover run --json --cli <cli> --timeout <t> … PROMPT`.
    fn run_argv(&self, timeout: Duration, args: &[&str], prompt: &str) -> Vec<String> {
        let mut argv: Vec<String> = [
            "run",
            "--json",
            "--cli",
            self.cli,
            "--teardown-grace",
            "5s",
            "--timeout",
        ]
        .map(String::from)
        .to_vec();
        argv.push(format!("{}s", timeout.as_secs()));
        argv.extend(args.iter().map(|a| a.to_string()));
        argv.push(prompt.to_string());
        argv
    }

    /// `drover run --json` bounded by drover's own `--timeout`.
    pub fn run(&self, timeout: Duration, args: &[&str], prompt: &str) -> RunOutput {
        let started = Instant::now();
        let out = self
            .drover()
            .args(self.run_argv(timeout, args, prompt))
            .output()
            .expect("drover runs");
        parse_run(out, started.elapsed())
    }

    /// Starts `drover run --json` in the background.
    pub fn spawn_run(&self, timeout: Duration, args: &[&str], prompt: &str) -> Child {
        self.drover()
            .args(self.run_argv(timeout, args, prompt))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("drover runs")
    }

    pub fn finish_run(child: Child, started: Instant) -> RunOutput {
        let out = child.wait_with_output().expect("drover finishes");
        parse_run(out, started.elapsed())
    }

    /// `drover explain --cli <cli> --screen FILE --json` on a pane capture.
    pub fn explain(&self, name: &str, screen: &str) -> Value {
        let dir = self.root.path().join("screens");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = dir.join(format!("{name}.txt"));
        std::fs::write(&file, screen).expect("write screen");
        let out = self.output(&[
            "explain",
            "--cli",
            self.cli,
            "--screen",
            &file.display().to_string(),
            "--json",
        ]);
        assert!(
            out.status.success(),
            "drover explain: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("explain prints JSON")
    }

    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.work.join(".drover").join("runs").join(run_id)
    }

    pub fn journal(&self, run_id: &str) -> Vec<Value> {
        std::fs::read_to_string(self.run_dir(run_id).join("events.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// `state[:prompt_kind]@source` for every state transition.
    pub fn states(&self, run_id: &str) -> Vec<String> {
        self.journal(run_id)
            .iter()
            .filter(|l| l["kind"] == "state")
            .map(|l| {
                let state = l["state"].as_str().unwrap_or_default();
                let source = l["source"].as_str().unwrap_or_default();
                match l["prompt_kind"].as_str() {
                    Some(kind) => format!("{state}:{kind}@{source}"),
                    None => format!("{state}@{source}"),
                }
            })
            .collect()
    }

    /// The hook relay's drops for a run (one record per hook call).
    pub fn relayed(&self, run_id: &str) -> Vec<Value> {
        let mut records: Vec<Value> = std::fs::read_dir(self.run_dir(run_id).join("events"))
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                    .filter_map(|t| serde_json::from_str(&t).ok())
                    .collect()
            })
            .unwrap_or_default();
        records.sort_by_key(|r| r["ts"].as_u64().unwrap_or(0));
        records
    }

    /// The task's logs, for failure messages.
    pub fn logs(&self, run_id: &str) -> String {
        let dir = self.run_dir(run_id).join("logs");
        let mut text = String::new();
        for entry in std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let body = std::fs::read(entry.path()).unwrap_or_default();
            let body = strip_ansi_escapes::strip_str(String::from_utf8_lossy(&body));
            let tail: String = body
                .chars()
                .rev()
                .take(3000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            text.push_str(&format!("--- {}:\n{tail}\n", entry.path().display()));
        }
        text
    }

    // -------------------------------------------------------------- tmux

    pub fn socket(&self) -> String {
        drover::workspace::tmux::socket_for(&self.work)
    }

    fn tmux(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(self.socket())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The id of the newest run in the project (run ids sort by time).
    pub fn newest_run(&self) -> Option<String> {
        let runs = self.work.join(".drover").join("runs");
        std::fs::read_dir(&runs)
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .max()
    }

    /// The pane a run's seat lives in: the newest run's
    /// `tasks/<task>/pane.json`, which drover writes once the pane exists.
    pub fn seat_pane(&self, task: &str) -> Option<String> {
        let text = std::fs::read_to_string(
            self.run_dir(&self.newest_run()?)
                .join("tasks")
                .join(task)
                .join("pane.json"),
        )
        .ok()?;
        let doc: Value = serde_json::from_str(&text).ok()?;
        doc["pane"]["pane"].as_str().map(str::to_string)
    }

    pub fn capture(&self, pane: &str) -> Option<String> {
        self.tmux(&["capture-pane", "-p", "-t", pane])
    }

    // ---------------------------------------------------------- processes

    /// Processes (not this one) whose environment carries this tree's HOME.
    pub fn processes(&self) -> Vec<(i32, String)> {
        let needle = format!("HOME={}", self.home.display());
        let me = std::process::id() as i32;
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if environ
                .split(|b| *b == 0)
                .any(|var| var == needle.as_bytes())
            {
                let cmdline = std::fs::read(entry.path().join("cmdline"))
                    .map(|c| {
                        String::from_utf8_lossy(&c)
                            .replace('\0', " ")
                            .trim()
                            .to_string()
                    })
                    .unwrap_or_default();
                found.push((pid, cmdline));
            }
        }
        found
    }

    /// Processes of this tree that are the CLI itself or a daemon it left.
    pub fn cli_leftovers(&self) -> Vec<(i32, String)> {
        let cli = self.bins.cli.display().to_string();
        self.processes()
            .into_iter()
            .filter(|(_, cmd)| {
                cmd.contains(&cli)
                    || cmd.contains("app-server")
                    || cmd.contains("node_modules")
                    || cmd.split_whitespace().next().is_some_and(|argv0| {
                        Path::new(argv0).file_name().and_then(|n| n.to_str()) == Some(self.cli)
                    })
            })
            .collect()
    }
}

impl Drop for Real {
    fn drop(&mut self) {
        let socket = self.socket();
        let _ = Command::new("tmux")
            .args(["-L", &socket, "kill-server"])
            .output();
        // Whatever still runs with this HOME was started for this tree.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = self.processes();
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            for (pid, _) in &left {
                // SAFETY: plain kill(2) on a pid whose environment names our tree.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Codex creates /tmp/codex-daemon-<uid> and opencode /tmp/opencode
        // whatever TMPDIR says; both are shared names, so only empty ones go.
        // SAFETY: getuid(2) cannot fail.
        let uid = unsafe { libc::getuid() };
        let _ = std::fs::remove_dir(format!("/tmp/codex-daemon-{uid}"));
        let _ = std::fs::remove_dir("/tmp/opencode");
        // tmux keeps its sockets in $TMUX_TMPDIR (not TMPDIR), /tmp by default.
        let tmux_dir = std::env::var_os("TMUX_TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let _ = std::fs::remove_file(tmux_dir.join(format!("tmux-{uid}")).join(&socket));
    }
}

fn parse_run(out: std::process::Output, elapsed: Duration) -> RunOutput {
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!("drover run printed no JSON document ({e}):\nstdout: {text}\nstderr: {stderr}")
    });
    RunOutput {
        doc,
        code: out.status.code().unwrap_or(-1),
        stderr,
        elapsed,
    }
}

/// The account's name (CI shells often leave `USER` unset; the CLIs and
/// drover's sanitizer read it).
fn whoami() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            Command::new("id")
                .arg("-un")
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|u| !u.is_empty())
        })
        .unwrap_or_else(|| "drover".to_string())
}

fn git_init(work: &Path, home: &Path) {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(work)
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "drover-e2e")
            .env("GIT_AUTHOR_EMAIL", "e2e@example.invalid")
            .env("GIT_COMMITTER_NAME", "drover-e2e")
            .env("GIT_COMMITTER_EMAIL", "e2e@example.invalid")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::write(work.join("README.md"), "# drover real-CLI test project\n").expect("write");
    git(&["init", "-q"]);
    git(&["add", "README.md"]);
    git(&["commit", "-qm", "init"]);
}

/// Polls `check` until it answers or `limit` passes.
pub fn wait_for<T>(limit: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = check() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
