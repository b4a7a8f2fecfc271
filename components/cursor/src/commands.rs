//! Launch commands. Interactive: `cursor-agent [--resume ID] [PROMPT]
//! <bypass> [--model M]`. Headless: `cursor-agent -p PROMPT --output-format
//! json [--resume ID] <[turn] args> <bypass> [--model M]`. `-p` is
//! `--print` (a switch); the prompt is the positional argument after it.
//! Cursor cannot start a chat under a chosen id (`create-chat` mints one).

use drover_kit::{AdapterError, Command, Conversation, LaunchRequest, Profile, invalid, launch};

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    match conversation {
        Conversation::Fresh => Ok(Vec::new()),
        Conversation::Resume(id) => Ok(vec!["--resume".to_string(), checked_id(id)?]),
        Conversation::Preset(id) => Err(invalid(format!(
            "cursor-agent cannot start a chat with a chosen id ('{id}'); start fresh and read session_id from the result"
        ))),
    }
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    launch::printable_word_id(id, "a Cursor chat id")
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
    use drover_kit::testing::{assert_refused, request};

    #[test]
    fn interactive_puts_the_prompt_before_the_flags() {
        let mut req = request("fix the bug", Conversation::Fresh);
        req.model = "composer-2.5".to_string();
        let cmd = interactive(&profile(), &req).expect("builds");
        let rendered = "LOAD the FULL .agents/skills//SKILL.md, read its entire contents and follow its directions exactly: fix the bug";
        assert_eq!(
            cmd.argv,
            [
                "cursor-agent",
                rendered,
                "--force",
                "--trust",
                "--model",
                "composer-2.5"
            ]
        );
        let resumed = interactive(
            &profile(),
            &request("", Conversation::Resume("sess-42".into())),
        )
        .expect("builds");
        assert_eq!(
            resumed.argv,
            ["cursor-agent", "--resume", "sess-42", "--force", "--trust"]
        );
    }

    #[test]
    fn headless_new_and_resumed_but_never_preset() {
        let fresh = headless(
            &profile(),
            &request("/bmad-dev-auto 1-1-a", Conversation::Fresh),
        )
        .expect("builds");
        let rendered = "LOAD the FULL .agents/skills/bmad-dev-auto/SKILL.md, read its entire contents and follow its directions exactly: 1-1-a";
        assert_eq!(
            fresh.argv,
            [
                "cursor-agent",
                "-p",
                rendered,
                "--output-format",
                "json",
                "--force",
                "--trust"
            ]
        );
        let resumed = headless(
            &profile(),
            &request("hi", Conversation::Resume("sess-42".into())),
        )
        .expect("builds");
        assert_eq!(&resumed.argv[5..7], ["--resume", "sess-42"]);
        assert!(matches!(
            headless(&profile(), &request("hi", Conversation::Preset("sess-43".into()))),
            Err(AdapterError::InvalidInput(m)) if m.contains("chosen id")
        ));
        assert_refused(
            headless,
            &profile(),
            &[Conversation::Resume("--force".into())],
        );
        assert!(headless(&profile(), &request("", Conversation::Fresh)).is_err());
    }
}
