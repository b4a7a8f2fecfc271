//! Launch commands. Interactive: `claude [--resume ID | --session-id UUID]
//! [prompt] <bypass> [--model M]`. Headless: the same with `-p PROMPT
//! --output-format json` (`text` when the profile's `[turn] output` says so)
//! and the profile's `[turn]` args.
//!
//! ACP: Claude Code has no ACP mode of its own; an ACP adapter around it
//! (Zed's `claude-agent-acp` from npm) is named by the profile's `[component_settings]
//! acp_command`, a whitespace-separated argv.

use drover_kit::{
    AdapterError, Command, Conversation, LaunchRequest, Profile, invalid, launch, plain_command,
    setting,
};

/// The `[component_settings]` entry naming the ACP adapter's argv.
const ACP_SETTING: &str = "acp_command";

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    launch::resume_or_session_id(conversation, checked_id, checked_uuid)
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    launch::word_id(id, "a Claude session id")
}

/// `--session-id` only accepts a UUID.
fn checked_uuid(id: &str) -> Result<String, AdapterError> {
    launch::uuid_id(id, "claude")
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    launch::interactive(profile, request, conversation_args, None)
}

/// The argv `[component_settings] acp_command` names. The bypass and model flags are
/// Claude Code's, not the ACP adapter's, so a model or replaced bypass args
/// are refused rather than dropped.
pub fn acp(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let argv: Vec<String> = setting(profile, ACP_SETTING)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if argv.is_empty() {
        return Err(AdapterError::Unsupported(format!(
            "Claude Code has no ACP mode; set `{ACP_SETTING}` in the profile's [component_settings] table to an ACP adapter's argv (e.g. \"claude-agent-acp\")"
        )));
    }
    if !request.model.is_empty() || request.extra_args.as_ref().is_some_and(|a| !a.is_empty()) {
        return Err(invalid(format!(
            "the ACP adapter in `{ACP_SETTING}` takes no model or extra args from drover; put them in `{ACP_SETTING}`"
        )));
    }
    Ok(plain_command(argv))
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let format = if drover_kit::text_output(profile) {
        "text"
    } else {
        "json"
    };
    launch::print_mode(profile, request, format, conversation_args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{assert_refused, request};

    #[test]
    fn interactive_matches_the_documented_shape() {
        let mut req = request("/bmad-dev-auto 1-1-a", Conversation::Fresh);
        req.model = "sonnet".to_string();
        let cmd = interactive(&profile(), &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "claude",
                "/bmad-dev-auto 1-1-a",
                "--permission-mode",
                "bypassPermissions",
                "--model",
                "sonnet"
            ]
        );
        let resumed = interactive(&profile(), &request("", Conversation::Resume("abc".into())))
            .expect("builds");
        assert_eq!(
            resumed.argv,
            [
                "claude",
                "--resume",
                "abc",
                "--permission-mode",
                "bypassPermissions"
            ]
        );
    }

    #[test]
    fn headless_new_resumed_and_preset() {
        let fresh = headless(&profile(), &request("hi", Conversation::Fresh)).expect("builds");
        assert_eq!(
            fresh.argv,
            [
                "claude",
                "-p",
                "hi",
                "--output-format",
                "json",
                "--permission-mode",
                "bypassPermissions"
            ]
        );
        let resumed = headless(
            &profile(),
            &request("hi", Conversation::Resume("s-1".into())),
        )
        .expect("builds");
        assert_eq!(&resumed.argv[5..7], ["--resume", "s-1"]);
        let uuid = "123e4567-e89b-12d3-a456-426614174000";
        let preset = headless(
            &profile(),
            &request("hi", Conversation::Preset(uuid.into())),
        )
        .expect("builds");
        assert_eq!(&preset.argv[5..7], ["--session-id", uuid]);
        assert_refused(
            headless,
            &profile(),
            &[
                Conversation::Preset("nope".into()),
                Conversation::Resume("--evil".into()),
            ],
        );
        let mut custom = request("hi", Conversation::Fresh);
        custom.extra_args = Some(vec![]);
        assert_eq!(headless(&profile(), &custom).expect("builds").argv.len(), 5);
    }

    #[test]
    fn a_profile_that_asks_for_text_gets_text() {
        let mut text = profile();
        text.turn_output = "text".to_string();
        let cmd = headless(&text, &request("hi", Conversation::Fresh)).expect("builds");
        assert_eq!(&cmd.argv[3..5], ["--output-format", "text"]);
    }

    #[test]
    fn acp_runs_the_adapter_the_profile_names() {
        let none = acp(&profile(), &request("", Conversation::Fresh));
        assert!(
            matches!(none, Err(AdapterError::Unsupported(ref why)) if why.contains("acp_command"))
        );
        let mut named = profile();
        named.settings = vec![(ACP_SETTING.to_string(), " scripted-cli  --acp ".to_string())];
        let cmd = acp(&named, &request("", Conversation::Resume("s-1".into()))).expect("builds");
        assert_eq!(cmd.argv, ["scripted-cli", "--acp"]);
        let mut with_model = request("", Conversation::Fresh);
        with_model.model = "opus".to_string();
        assert!(matches!(
            acp(&named, &with_model),
            Err(AdapterError::InvalidInput(_))
        ));
    }
}
