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
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::shared_cache;

mod bins;
mod fresh;
mod model_server;
mod panes;
mod runs;
mod teardown;

#[allow(
    unused_imports,
    reason = "the harness is shared by test binaries that each use a part of it"
)]
pub use self::{
    bins::{Bins, cli_cache, locate, model_server_exe, require},
    model_server::{MODEL_PROTOCOLS, ModelServer, closed_port, expected_usage, usage_per_request},
    runs::RunOutput,
};

/// The dummy keys; they never leave 127.0.0.1.
pub const ANTHROPIC_KEY: &str = "sk-ant-fake-0123456789abcdefghij";
pub const CODEX_KEY: &str = "sk-fake-codex-0123456789";
pub const GEMINI_KEY: &str = "fake-gemini-key-0123456789";
pub const OPENCODE_KEY: &str = "sk-fake-opencode-0123456789";
pub const QWEN_KEY: &str = "sk-fake-qwen-0123456789";
pub const COPILOT_KEY: &str = "sk-fake-copilot-0123456789";
pub const GROK_KEY: &str = "xai-fake-grok-0123456789";
pub const DROID_KEY: &str = "sk-fake-droid-0123456789";
pub const KILO_KEY: &str = "sk-fake-kilo-0123456789";
pub const CONTINUE_KEY: &str = "sk-fake-continue-0123456789";

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
            "droid" => self.seed_droid(base),
            "kilo" => self.seed_kilo(base),
            "continue" => self.seed_continue(base),
            other => panic!("no seeding known for {other}"),
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

    /// droid with a custom (BYOK) chat-completions model and no login;
    /// airgap mode keeps it from asking Factory's servers for the org's
    /// settings first (6 s a turn otherwise, offline).
    fn seed_droid(&mut self, base: &str) {
        let settings = json!({
            "customModels": [{
                "model": "fake-model",
                "displayName": "Fake",
                "baseUrl": format!("{base}/v1"),
                "apiKey": DROID_KEY,
                "provider": "generic-chat-completion-api",
                "maxOutputTokens": 8192
            }]
        });
        self.write(
            &self.home.join(".factory").join("settings.json"),
            &serde_json::to_string_pretty(&settings).unwrap_or_default(),
        );
        self.set_env("FACTORY_AIRGAP_ENABLED", "1");
    }

    /// cn with one OpenAI-compatible model in its default config file;
    /// without one it goes to Continue's hub and fails offline.
    fn seed_continue(&mut self, base: &str) {
        let config = format!(
            "name: Fake\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: fake-model\n    provider: openai\n    model: fake-model\n    apiBase: {base}/v1\n    apiKey: {CONTINUE_KEY}\n    roles: [chat, edit, apply]\n"
        );
        self.write(&self.home.join(".continue").join("config.yaml"), &config);
    }

    /// kilo with an OpenAI-compatible provider, as opencode is seeded.
    fn seed_kilo(&mut self, base: &str) {
        let config = json!({
            "autoupdate": false,
            "share": "disabled",
            "model": "fake/fake-model",
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake",
                    "options": {"baseURL": format!("{base}/v1"), "apiKey": KILO_KEY},
                    "models": {"fake-model": {"name": "Fake Model", "limit": {"context": 200000, "output": 8192}}}
                }
            }
        });
        self.write(
            &self.home.join(".config").join("kilo").join("kilo.json"),
            &serde_json::to_string_pretty(&config).unwrap_or_default(),
        );
        for (k, v) in [
            ("KILO_DISABLE_MODELS_FETCH", "1"),
            ("KILO_TELEMETRY_LEVEL", "off"),
            ("KILO_DISABLE_SHARE", "1"),
        ] {
            self.set_env(k, v);
        }
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

/// Stops every seat of a tree's project when dropped, whatever the test did.
pub struct Down<'a>(pub &'a Real);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = self.0.output(&["down", "--all"]);
    }
}
