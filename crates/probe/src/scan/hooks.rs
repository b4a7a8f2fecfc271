//! The hook config: which of the profile's events carry drover's relay.

use super::{Fed, Loaded, Scan};
use crate::report::{CallOutcome, DeclaredEvent, Hooks};
use crate::sanitize::{Clean, clean};
use drover_hooks::{self as hooks, HookError};
use drover_profile::Profile;
use drover_types::wit;

impl Scan<'_> {
    pub(super) fn hooks(&mut self, profile: &Profile, loaded: Option<&Loaded>) -> Hooks {
        let s = &self.s;
        let mut hooks = Hooks {
            dialect: s.identifier(&profile.hooks.dialect),
            hookless: profile.hookless(),
            config_path: (!profile.hookless()).then(|| s.path(&profile.hooks.config_path, false)),
            registered: None,
            events: profile
                .hooks
                .events
                .iter()
                .map(|(native, canonical)| DeclaredEvent {
                    native: s.identifier(native),
                    canonical: s.identifier(canonical),
                    registered: None,
                })
                .collect(),
            captured: Vec::new(),
        };
        if profile.hookless() {
            return hooks;
        }
        let Some(loaded) = loaded else {
            return hooks;
        };
        let config = hooks.config_path.clone().unwrap_or_default();
        match hooks::status(&loaded.adapter, profile, &self.project) {
            Ok(status) => {
                for (event, (native, _)) in hooks.events.iter_mut().zip(&profile.hooks.events) {
                    event.registered = Some(status.registered.contains(native));
                }
                let all = status.missing.is_empty() && !status.registered.is_empty();
                hooks.registered = Some(all);
                self.record(
                    "detect-hooks",
                    CallOutcome::Ok,
                    clean!(
                        "{} of {} mapped events carry the relay",
                        Clean::count(status.registered.len() as u64),
                        Clean::count(profile.hooks.events.len() as u64)
                    ),
                );
                if !all {
                    let cli = self.s.identifier(&profile.name);
                    self.warn(
                        "hooks.registered",
                        clean!(
                            "drover's relay is not registered in {} for every mapped event",
                            config
                        ),
                    );
                    self.next_steps.push(clean!(
                        "run `drover hooks install --cli {}` so the CLI reports turn ends to drover",
                        cli
                    ));
                }
            }
            Err(HookError::Sandbox(e)) => self.call_failed("detect-hooks", &e, Fed::HookConfig),
            Err(HookError::Config { message, .. }) => {
                let error = match message.strip_prefix("unsupported: ") {
                    Some(m) => wit::AdapterError::Unsupported(m.to_string()),
                    None => wit::AdapterError::InvalidInput(message),
                };
                let (outcome, detail) = self.adapter_error(&error, loaded.trusted, Fed::HookConfig);
                self.warn(
                    "hooks.config",
                    clean!(
                        "the hook config {} could not be checked: {}",
                        config,
                        detail
                    ),
                );
                self.record("detect-hooks", outcome, detail);
            }
            Err(
                e @ (HookError::Io { .. }
                | HookError::Executable(_)
                | HookError::Relay(_)
                | HookError::Hookless { .. }
                | HookError::Refused(_)),
            ) => {
                let detail = self.s.text(&e.to_string(), 2);
                self.warn(
                    "hooks.config",
                    clean!("hook status unavailable: {}", detail),
                );
            }
        }
        hooks
    }
}
