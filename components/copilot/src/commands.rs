//! Launch commands. Interactive: `copilot [--resume=ID | --session-id=UUID]
//! -i PROMPT <bypass> [--model M]`. Headless: `copilot -p PROMPT
//! --output-format json [conversation] <[turn] args> <bypass> [--model M]`.
//!
//! `--resume=ID` is written with `=` because a bare `--resume` opens the
//! session picker; `--session-id=UUID` (1.0.51+) starts a new session with a
//! chosen id.

use drover_kit::{AdapterError, Command, Conversation, LaunchRequest, Profile, launch};

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    Ok(match conversation {
        Conversation::Fresh => Vec::new(),
        Conversation::Resume(id) => vec![format!("--resume={}", checked_id(id)?)],
        Conversation::Preset(id) => vec![format!("--session-id={}", checked_uuid(id)?)],
    })
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    launch::printable_word_id(id, "a Copilot session id")
}

/// `--session-id` only accepts a UUID.
fn checked_uuid(id: &str) -> Result<String, AdapterError> {
    launch::uuid_id(id, "copilot")
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    launch::interactive_after_flag(
        profile,
        request,
        conversation_args,
        &["-i", "--interactive"],
    )
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    launch::print_mode(profile, request, "json", conversation_args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{assert_refused, request};

    const SKILL_PROMPT: &str = "LOAD the FULL .agents/skills/bmad-dev-auto/SKILL.md, read its entire contents and follow its directions exactly, using subagents as needed: 1-1-a";

    #[test]
    fn interactive_matches_the_bmad_loop_launch_shape() {
        let mut req = request("/bmad-dev-auto 1-1-a", Conversation::Fresh);
        req.model = "gpt-5.4".to_string();
        let cmd = interactive(&profile(), &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "copilot",
                "-i",
                SKILL_PROMPT,
                "--allow-all-tools",
                "--allow-all-paths",
                "--model",
                "gpt-5.4"
            ]
        );
        assert_eq!(cmd.stdin, None);
    }

    #[test]
    fn resuming_without_a_prompt_drops_the_dangling_i() {
        let cmd = interactive(
            &profile(),
            &request("", Conversation::Resume("8a216c49".into())),
        )
        .expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "copilot",
                "--resume=8a216c49",
                "--allow-all-tools",
                "--allow-all-paths"
            ]
        );
    }

    #[test]
    fn headless_new_resumed_and_preset() {
        let fresh = headless(&profile(), &request("hi", Conversation::Fresh)).expect("builds");
        let hi = "LOAD the FULL .agents/skills//SKILL.md, read its entire contents and follow its directions exactly, using subagents as needed: hi";
        assert_eq!(
            fresh.argv,
            [
                "copilot",
                "-p",
                hi,
                "--output-format",
                "json",
                "--no-ask-user",
                "--allow-all-tools",
                "--allow-all-paths"
            ]
        );
        let id = "8a216c49-e51c-4eef-9405-bf83298fced2";
        let resumed =
            headless(&profile(), &request("hi", Conversation::Resume(id.into()))).expect("builds");
        assert_eq!(resumed.argv[5], format!("--resume={id}"));
        let preset =
            headless(&profile(), &request("hi", Conversation::Preset(id.into()))).expect("builds");
        assert_eq!(preset.argv[5], format!("--session-id={id}"));
        assert_refused(
            headless,
            &profile(),
            &[
                Conversation::Preset("not-a-uuid".into()),
                Conversation::Resume("--evil".into()),
            ],
        );
        assert!(headless(&profile(), &request("", Conversation::Fresh)).is_err());
    }

    #[test]
    fn extra_args_replace_bypass() {
        let mut req = request("hi", Conversation::Fresh);
        req.extra_args = Some(vec!["--allow-all".to_string()]);
        let cmd = headless(&profile(), &req).expect("builds");
        assert_eq!(cmd.argv.last().map(String::as_str), Some("--allow-all"));
        assert!(!cmd.argv.iter().any(|a| a == "--allow-all-tools"));
    }
}
