//! Launch commands. Interactive: `qwen [--resume ID | --session-id UUID]
//! [-i PROMPT] <bypass> [--model M]` (a bare positional prompt would run one
//! turn and exit, `-i` keeps the session open). Headless: `qwen -p PROMPT
//! --output-format json [--resume ID]` plus the profile's `[turn]` args.

use drover_kit::{AdapterError, Command, Conversation, LaunchRequest, Profile, invalid, launch};

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    launch::resume_or_session_id(conversation, checked_id, checked_uuid)
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    launch::word_id(id, "a Qwen session id")
}

/// `--session-id` accepts only an RFC 4122 UUID (version 1-5, variant
/// 8/9/a/b); Qwen refuses anything else at startup.
fn checked_uuid(id: &str) -> Result<String, AdapterError> {
    let groups: Vec<&str> = id.split('-').collect();
    let versioned = launch::uuid_shaped(id)
        && matches!(groups[2].as_bytes()[0], b'1'..=b'5')
        && matches!(
            groups[3].as_bytes()[0].to_ascii_lowercase(),
            b'8' | b'9' | b'a' | b'b'
        );
    if !versioned {
        return Err(invalid(format!(
            "qwen --session-id needs an RFC 4122 UUID, got '{id}'"
        )));
    }
    Ok(id.to_string())
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    launch::interactive(profile, request, conversation_args, Some("-i"))
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    launch::print_mode(profile, request, "json", conversation_args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{assert_refused, request};

    #[test]
    fn interactive_keeps_the_session_open_with_dash_i() {
        let mut req = request("/review 1-1-a", Conversation::Fresh);
        req.model = "qwen3-coder-plus".to_string();
        let cmd = interactive(&profile(), &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "qwen",
                "-i",
                "/review 1-1-a",
                "--approval-mode",
                "yolo",
                "--model",
                "qwen3-coder-plus"
            ]
        );
        assert_eq!(cmd.stdin, None);
        let resumed = interactive(&profile(), &request("", Conversation::Resume("abc".into())))
            .expect("builds");
        assert_eq!(
            resumed.argv,
            ["qwen", "--resume", "abc", "--approval-mode", "yolo"]
        );
    }

    #[test]
    fn headless_new_resumed_and_preset() {
        let fresh = headless(
            &profile(),
            &request("Reply with exactly: OK", Conversation::Fresh),
        )
        .expect("builds");
        assert_eq!(
            fresh.argv,
            [
                "qwen",
                "-p",
                "Reply with exactly: OK",
                "--output-format",
                "json",
                "--approval-mode",
                "yolo"
            ]
        );
        let resumed = headless(
            &profile(),
            &request(
                "hi",
                Conversation::Resume("4f1c2a9e-0000-4000-8000-00000000a001".into()),
            ),
        )
        .expect("builds");
        assert_eq!(
            &resumed.argv[5..7],
            ["--resume", "4f1c2a9e-0000-4000-8000-00000000a001"]
        );
        let uuid = "123e4567-e89b-42d3-a456-426614174000";
        let preset = headless(
            &profile(),
            &request("hi", Conversation::Preset(uuid.into())),
        )
        .expect("builds");
        assert_eq!(&preset.argv[5..7], ["--session-id", uuid]);
    }

    #[test]
    fn bad_ids_and_empty_prompts_are_refused() {
        for bad in [
            "nope",
            "123e4567-e89b-02d3-a456-426614174000",
            "123e4567-e89b-42d3-c456-426614174000",
            "123e4567e89b42d3a456426614174000",
        ] {
            assert!(
                headless(&profile(), &request("hi", Conversation::Preset(bad.into()))).is_err(),
                "{bad}"
            );
        }
        assert_refused(
            headless,
            &profile(),
            &[
                Conversation::Resume("--evil".into()),
                Conversation::Resume("a b".into()),
            ],
        );
        assert!(headless(&profile(), &request("", Conversation::Fresh)).is_err());
        let mut custom = request("hi", Conversation::Fresh);
        custom.extra_args = Some(vec!["--yolo".to_string()]);
        assert_eq!(
            headless(&profile(), &custom)
                .expect("builds")
                .argv
                .last()
                .map(String::as_str),
            Some("--yolo")
        );
        let mut turn = profile();
        turn.turn_args = vec!["--max-session-turns".to_string(), "40".to_string()];
        assert_eq!(
            &headless(&turn, &request("hi", Conversation::Fresh))
                .expect("builds")
                .argv[5..7],
            ["--max-session-turns", "40"]
        );
    }
}
