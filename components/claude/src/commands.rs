//! Launch commands. Interactive: `claude [--resume ID | --session-id UUID]
//! [prompt] <bypass> [--model M]`. Headless: the same with `-p PROMPT
//! --output-format json` and the profile's `[turn]` args.

use drover_kit::{AdapterError, Command, Conversation, LaunchRequest, Profile, invalid, launch};

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    Ok(match conversation {
        Conversation::Fresh => Vec::new(),
        Conversation::Resume(id) => vec!["--resume".to_string(), checked_id(id)?],
        Conversation::Preset(id) => vec!["--session-id".to_string(), checked_uuid(id)?],
    })
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    if id.is_empty() || id.starts_with('-') || id.chars().any(char::is_whitespace) {
        return Err(invalid(format!(
            "conversation id '{id}' is not a Claude session id"
        )));
    }
    Ok(id.to_string())
}

/// `--session-id` only accepts a UUID.
fn checked_uuid(id: &str) -> Result<String, AdapterError> {
    if !launch::uuid_shaped(id) {
        return Err(invalid(format!(
            "claude --session-id needs a UUID, got '{id}'"
        )));
    }
    Ok(id.to_string())
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    launch::interactive(profile, request, conversation_args, None)
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    launch::print_mode(profile, request, "json", conversation_args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::request;

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
        assert!(
            headless(
                &profile(),
                &request("hi", Conversation::Preset("nope".into()))
            )
            .is_err()
        );
        assert!(
            headless(
                &profile(),
                &request("hi", Conversation::Resume("--evil".into()))
            )
            .is_err()
        );
        let mut custom = request("hi", Conversation::Fresh);
        custom.extra_args = Some(vec![]);
        assert_eq!(headless(&profile(), &custom).expect("builds").argv.len(), 5);
    }
}
