//! Launch commands. Interactive: `agy [--conversation ID] -i PROMPT
//! --dangerously-skip-permissions [--model M]` (bmad-loop's launch shape).
//! Headless: `agy -p PROMPT --output-format stream-json [--conversation ID]
//! <[turn] args> <bypass> [--model M]` (print mode with structured output
//! since agy 1.1.8; `--conversation` resumes, verified with agy 1.2.5 by a
//! third party). agy cannot start a conversation under a chosen id.

use drover_kit::{AdapterError, Command, Conversation, LaunchRequest, Profile, invalid, launch};

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    match conversation {
        Conversation::Fresh => Ok(Vec::new()),
        Conversation::Resume(id) => Ok(vec!["--conversation".to_string(), checked_id(id)?]),
        Conversation::Preset(id) => Err(invalid(format!(
            "agy cannot start a conversation with a chosen id ('{id}'); start fresh and read the id from the init event"
        ))),
    }
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    launch::printable_word_id(id, "an agy conversation id")
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
    launch::print_mode(profile, request, "stream-json", conversation_args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{assert_refused, request};

    #[test]
    fn interactive_matches_the_bmad_loop_launch_shape() {
        let mut req = request("/bmad-dev-auto 1-1-a", Conversation::Fresh);
        req.model = "gemini-3.7-flash-high".to_string();
        let cmd = interactive(&profile(), &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "agy",
                "-i",
                "/bmad-dev-auto 1-1-a",
                "--dangerously-skip-permissions",
                "--model",
                "gemini-3.7-flash-high"
            ]
        );
        let resumed = interactive(
            &profile(),
            &request("", Conversation::Resume("4df4b685".into())),
        )
        .expect("builds");
        assert_eq!(
            resumed.argv,
            [
                "agy",
                "--conversation",
                "4df4b685",
                "--dangerously-skip-permissions"
            ]
        );
    }

    #[test]
    fn headless_new_and_resumed_but_never_preset() {
        let fresh = headless(&profile(), &request("hi", Conversation::Fresh)).expect("builds");
        assert_eq!(
            fresh.argv,
            [
                "agy",
                "-p",
                "hi",
                "--output-format",
                "stream-json",
                "--dangerously-skip-permissions"
            ]
        );
        let id = "4df4b685-e326-4498-b423-4732961ac2e4";
        let resumed =
            headless(&profile(), &request("hi", Conversation::Resume(id.into()))).expect("builds");
        assert_eq!(&resumed.argv[5..7], ["--conversation", id]);
        assert!(matches!(
            headless(&profile(), &request("hi", Conversation::Preset(id.into()))),
            Err(AdapterError::InvalidInput(m)) if m.contains("chosen id")
        ));
        assert_refused(headless, &profile(), &[Conversation::Resume("-x".into())]);
        assert!(headless(&profile(), &request("", Conversation::Fresh)).is_err());
    }
}
