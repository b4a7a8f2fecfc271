//! Command lines most CLIs share: a headless turn in "print mode"
//! (`BINARY -p PROMPT --output-format FORMAT …`), an interactive launch with
//! the prompt as the last word before the common tail, and the checks on
//! conversation ids. An adapter passes how its CLI spells a conversation.

use crate::{
    AdapterError, Command, Conversation, LaunchRequest, Profile, common_launch_tail, invalid,
    plain_command, prompt,
};

/// How a CLI spells a conversation on its command line.
pub type ConversationArgs = fn(&Conversation) -> Result<Vec<String>, AdapterError>;

/// Checks a conversation id and gives it back as the CLI takes it.
pub type IdCheck = fn(&str) -> Result<String, AdapterError>;

/// The conversation words of a CLI that resumes with `--resume ID` and
/// starts a conversation under a chosen id with `--session-id ID`, each id
/// checked first; a fresh conversation adds none.
pub fn resume_or_session_id(
    conversation: &Conversation,
    resume_id: IdCheck,
    session_id: IdCheck,
) -> Result<Vec<String>, AdapterError> {
    Ok(match conversation {
        Conversation::Fresh => Vec::new(),
        Conversation::Resume(id) => vec!["--resume".to_string(), resume_id(id)?],
        Conversation::Preset(id) => vec!["--session-id".to_string(), session_id(id)?],
    })
}

/// `BINARY -p PROMPT --output-format FORMAT <conversation> <[turn] args>
/// <bypass or extra args> [MODEL FLAG MODEL]`.
pub fn print_mode(
    profile: &Profile,
    request: &LaunchRequest,
    format: &str,
    conversation: ConversationArgs,
) -> Result<Command, AdapterError> {
    if request.prompt.is_empty() {
        return Err(invalid("a headless turn needs a prompt"));
    }
    let mut argv = vec![
        profile.binary.clone(),
        "-p".to_string(),
        prompt::render(&profile.prompt_template, &request.prompt)?,
        "--output-format".to_string(),
        format.to_string(),
    ];
    argv.extend(conversation(&request.conversation)?);
    argv.extend(profile.turn_args.iter().cloned());
    argv.extend(common_launch_tail(profile, request));
    Ok(plain_command(argv))
}

/// `BINARY <launch args> <conversation> [PROMPT FLAG] [PROMPT] <bypass or
/// extra args> [MODEL FLAG MODEL]`; no prompt (and no prompt flag) when the
/// request has none.
pub fn interactive(
    profile: &Profile,
    request: &LaunchRequest,
    conversation: ConversationArgs,
    prompt_flag: Option<&str>,
) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(profile.launch_args.iter().cloned());
    argv.extend(conversation(&request.conversation)?);
    if !request.prompt.is_empty() {
        argv.extend(prompt_flag.map(str::to_string));
        argv.push(prompt::render(&profile.prompt_template, &request.prompt)?);
    }
    argv.extend(common_launch_tail(profile, request));
    Ok(plain_command(argv))
}

/// `BINARY <conversation> <launch args> [PROMPT] <bypass or extra args>
/// [MODEL FLAG MODEL]`, for a CLI whose launch args end in the flag that
/// takes the prompt (e.g. `-i`): without a prompt, that flag (one of
/// `prompt_flags`) is left out, as [`launch_args`] does.
pub fn interactive_after_flag(
    profile: &Profile,
    request: &LaunchRequest,
    conversation: ConversationArgs,
    prompt_flags: &[&str],
) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(conversation(&request.conversation)?);
    let has_prompt = !request.prompt.is_empty();
    argv.extend(launch_args(profile, has_prompt, prompt_flags));
    if has_prompt {
        argv.push(prompt::render(&profile.prompt_template, &request.prompt)?);
    }
    argv.extend(common_launch_tail(profile, request));
    Ok(plain_command(argv))
}

/// The profile's launch args, minus a last arg in `prompt_flags` when there
/// is no prompt: a flag such as `-i` with nothing after it would swallow the
/// next argument.
pub fn launch_args(profile: &Profile, has_prompt: bool, prompt_flags: &[&str]) -> Vec<String> {
    let mut args = profile.launch_args.clone();
    if !has_prompt
        && args
            .last()
            .is_some_and(|a| prompt_flags.contains(&a.as_str()))
    {
        args.pop();
    }
    args
}

/// A conversation id the CLI takes as one argument: not empty, not
/// starting with `-` (it would read as a flag) and without whitespace.
/// `what` names such ids in the error, e.g. "a Claude session id".
pub fn word_id(id: &str, what: &str) -> Result<String, AdapterError> {
    checked_word(id, what, char::is_whitespace)
}

/// [`word_id`] that refuses control characters too.
pub fn printable_word_id(id: &str, what: &str) -> Result<String, AdapterError> {
    checked_word(id, what, |c| c.is_whitespace() || c.is_control())
}

fn checked_word(id: &str, what: &str, refused: fn(char) -> bool) -> Result<String, AdapterError> {
    if id.is_empty() || id.starts_with('-') || id.chars().any(refused) {
        return Err(invalid(format!("conversation id '{id}' is not {what}")));
    }
    Ok(id.to_string())
}

/// An id for a `--session-id`-style flag of `cli` that only accepts a UUID.
pub fn uuid_id(id: &str, cli: &str) -> Result<String, AdapterError> {
    if !uuid_shaped(id) {
        return Err(invalid(format!(
            "{cli} --session-id needs a UUID, got '{id}'"
        )));
    }
    Ok(id.to_string())
}

/// Whether `id` has a UUID's shape: five groups of 8-4-4-4-12 hex digits.
pub fn uuid_shaped(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    let lengths = [8, 4, 4, 4, 12];
    groups.len() == 5
        && groups
            .iter()
            .zip(lengths)
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        Profile {
            launch_args: vec!["--tui".into(), "-i".into()],
            bypass_args: vec!["--yes".into()],
            turn_args: vec!["--quiet".into()],
            ..Profile::new("p", "cli", "", "")
        }
    }

    fn resume(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
        match conversation {
            Conversation::Resume(id) => Ok(vec!["--resume".into(), id.clone()]),
            Conversation::Preset(_) => Err(invalid("no presets")),
            Conversation::Fresh => Ok(vec![]),
        }
    }

    fn request(prompt: &str, conversation: Conversation) -> LaunchRequest {
        LaunchRequest {
            prompt: prompt.into(),
            model: "m".into(),
            extra_args: None,
            conversation,
        }
    }

    #[test]
    fn print_mode_puts_every_piece_in_its_place() {
        let cmd = print_mode(
            &profile(),
            &request("hi", Conversation::Resume("s1".into())),
            "json",
            resume,
        )
        .expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "cli",
                "-p",
                "hi",
                "--output-format",
                "json",
                "--resume",
                "s1",
                "--quiet",
                "--yes",
                "--model",
                "m"
            ]
        );
        assert_eq!(cmd.stdin, None);
        assert!(
            print_mode(
                &profile(),
                &request("", Conversation::Fresh),
                "json",
                resume
            )
            .is_err()
        );
        assert!(
            print_mode(
                &profile(),
                &request("hi", Conversation::Preset("x".into())),
                "json",
                resume
            )
            .is_err()
        );
    }

    #[test]
    fn interactive_drops_the_prompt_flag_without_a_prompt() {
        let with = interactive(
            &profile(),
            &request("hi", Conversation::Fresh),
            resume,
            Some("-p"),
        )
        .expect("builds");
        assert_eq!(
            with.argv,
            ["cli", "--tui", "-i", "-p", "hi", "--yes", "--model", "m"]
        );
        let without = interactive(
            &profile(),
            &request("", Conversation::Fresh),
            resume,
            Some("-p"),
        )
        .expect("builds");
        assert_eq!(
            without.argv,
            ["cli", "--tui", "-i", "--yes", "--model", "m"]
        );
        assert_eq!(launch_args(&profile(), false, &["-i"]), ["--tui"]);
        assert_eq!(launch_args(&profile(), true, &["-i"]), ["--tui", "-i"]);
    }

    #[test]
    fn uuids_are_recognised_by_shape() {
        assert!(uuid_shaped("123e4567-e89b-12d3-a456-426614174000"));
        assert!(!uuid_shaped("123e4567-e89b-12d3-a456-42661417400"));
        assert!(!uuid_shaped("123e4567e89b12d3a456426614174000"));
        assert!(!uuid_shaped("g23e4567-e89b-12d3-a456-426614174000"));
    }
}
