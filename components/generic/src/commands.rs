//! Launch commands from the profile alone. Interactive, as bmad-loop's
//! generic adapter launches a pane: `binary <launch args> [conversation]
//! [prompt] <bypass> [--model M]`. Headless, from `[turn]`: `binary <argv,
//! {prompt} filled> [conversation] <turn args> <bypass> [--model M]`, with
//! the prompt on stdin when `argv` has no `{prompt}`.

use drover_kit::{
    AdapterError, Command, Conversation, LaunchRequest, Profile, common_launch_tail, invalid,
    prompt, unsupported,
};

/// `template` with `{name}` replaced by `value` and `{{`/`}}` unescaped
/// (the engine checked at load that no other placeholder appears).
fn fill(template: &str, name: &str, value: &str) -> String {
    let placeholder = format!("{{{name}}}");
    let mut out = String::with_capacity(template.len() + value.len());
    let mut rest = template;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(&placeholder) {
            out.push_str(value);
            rest = after;
        } else if let Some(after) = rest.strip_prefix("{{") {
            out.push('{');
            rest = after;
        } else if let Some(after) = rest.strip_prefix("}}") {
            out.push('}');
            rest = after;
        } else {
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.push(c);
            }
            rest = chars.as_str();
        }
    }
    out
}

/// The argv that puts the CLI on a conversation, from `[turn] resume` and
/// `[turn] session_id`.
fn conversation_args(
    profile: &Profile,
    conversation: &Conversation,
) -> Result<Vec<String>, AdapterError> {
    let (template, id, field) = match conversation {
        Conversation::Fresh => return Ok(Vec::new()),
        Conversation::Resume(id) => (&profile.turn_resume, id, "resume"),
        Conversation::Preset(id) => (&profile.turn_session_id, id, "session_id"),
    };
    if template.is_empty() {
        return Err(invalid(format!(
            "profile {} has no [turn] {field}, so drover cannot pick its conversation",
            profile.name
        )));
    }
    if id.is_empty() || id.starts_with('-') || id.chars().any(char::is_whitespace) {
        return Err(invalid(format!("'{id}' is not a conversation id")));
    }
    Ok(template.iter().map(|t| fill(t, "id", id)).collect())
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(profile.launch_args.iter().cloned());
    argv.extend(conversation_args(profile, &request.conversation)?);
    if !request.prompt.is_empty() {
        argv.push(prompt::render(&profile.prompt_template, &request.prompt)?);
    }
    argv.extend(common_launch_tail(profile, request));
    Ok(drover_kit::plain_command(argv))
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    if profile.turn_argv.is_empty() {
        return Err(unsupported(format!(
            "profile {} has no [turn] argv, so it runs on tmux only; give it one to run headless turns",
            profile.name
        )));
    }
    if request.prompt.is_empty() {
        return Err(invalid("a headless turn needs a prompt"));
    }
    let rendered = prompt::render(&profile.prompt_template, &request.prompt)?;
    let in_argv = profile.turn_argv.iter().any(|t| t.contains("{prompt}"));
    let mut argv = vec![profile.binary.clone()];
    argv.extend(
        profile
            .turn_argv
            .iter()
            .map(|t| fill(t, "prompt", &rendered)),
    );
    argv.extend(conversation_args(profile, &request.conversation)?);
    argv.extend(profile.turn_args.iter().cloned());
    argv.extend(common_launch_tail(profile, request));
    Ok(Command {
        argv,
        env: Vec::new(),
        stdin: (!in_argv).then_some(rendered),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::request;

    #[test]
    fn headless_turns_follow_the_turn_table() {
        let p = profile();
        let fresh = headless(&p, &request("hi {there}", Conversation::Fresh)).expect("builds");
        assert_eq!(
            fresh.argv,
            [
                "acme",
                "-p",
                "hi {there}",
                "--output-format",
                "json",
                "--verbose",
                "--yolo"
            ]
        );
        assert_eq!(fresh.stdin, None);
        let resumed =
            headless(&p, &request("again", Conversation::Resume("s-1".into()))).expect("builds");
        assert_eq!(&resumed.argv[5..7], ["--resume", "s-1"]);
        let preset =
            headless(&p, &request("new", Conversation::Preset("u-1".into()))).expect("builds");
        assert_eq!(preset.argv[5], "--session-id=u-1");
        assert!(headless(&p, &request("x", Conversation::Resume("--evil".into()))).is_err());
    }

    #[test]
    fn without_a_prompt_placeholder_the_prompt_goes_to_stdin() {
        let mut p = profile();
        p.turn_argv = vec!["exec".to_string(), "{{literal}}".to_string()];
        let cmd = headless(&p, &request("hello", Conversation::Fresh)).expect("builds");
        assert_eq!(&cmd.argv[..3], ["acme", "exec", "{literal}"]);
        assert_eq!(cmd.stdin.as_deref(), Some("hello"));
    }

    #[test]
    fn without_a_turn_table_there_is_no_headless_turn() {
        let mut p = profile();
        p.turn_argv.clear();
        let err = headless(&p, &request("hi", Conversation::Fresh)).expect_err("tmux only");
        assert!(format!("{err:?}").contains("runs on tmux only"), "{err:?}");
        let mut p = profile();
        p.turn_session_id.clear();
        assert!(headless(&p, &request("hi", Conversation::Preset("x".into()))).is_err());
    }

    #[test]
    fn interactive_launches_like_bmad_loops_generic_adapter() {
        let mut req = request("/review src", Conversation::Fresh);
        req.model = "m1".to_string();
        let cmd = interactive(&profile(), &req).expect("builds");
        assert_eq!(
            cmd.argv,
            ["acme", "-i", "/review src", "--yolo", "--model", "m1"]
        );
    }
}
