//! Seeding a tree for a fresh config home: only what reaches the model
//! server, every first-run dialog left in place.

use serde_json::json;

use super::{ANTHROPIC_KEY, CODEX_KEY, COPILOT_KEY, GEMINI_KEY, GROK_KEY, QWEN_KEY, Real};

impl Real {
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
}
