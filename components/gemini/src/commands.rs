//! Launch commands. Interactive: `gemini [--resume ID | --session-id ID]
//! -i PROMPT <bypass> [--model M]`, where `-i` comes from the profile's
//! launch args (a positional prompt would run headless). Headless:
//! `gemini -p PROMPT --output-format json [--resume ID | --session-id ID]`
//! plus the profile's `[turn]` args, bypass args and model. ACP: `gemini
//! --acp [--resume ID] <bypass> [--model M]`.

use drover_kit::{
    AdapterError, Command, Conversation, LaunchRequest, Profile, acp_launch, common_launch_tail,
    invalid, launch, plain_command, prompt,
};

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    launch::resume_or_session_id(conversation, checked_id, checked_session_id)
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    launch::word_id(id, "a Gemini session id")
}

/// `--session-id` refuses anything but letters, digits, `-` and `_`.
fn checked_session_id(id: &str) -> Result<String, AdapterError> {
    let ok = !id.is_empty()
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !ok {
        return Err(invalid(format!(
            "gemini --session-id takes letters, digits, '-' and '_' only (a UUID), got '{id}'"
        )));
    }
    Ok(id.to_string())
}

/// Whether a launch arg is the flag whose value is the interactive prompt.
fn takes_prompt(arg: &str) -> bool {
    arg == "-i" || arg == "--prompt-interactive"
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(conversation_args(&request.conversation)?);
    let mut launch = profile.launch_args.clone();
    if request.prompt.is_empty() {
        // `-i` with nothing after it would swallow the next flag.
        if launch.last().is_some_and(|a| takes_prompt(a)) {
            launch.pop();
        }
        argv.extend(launch);
    } else {
        let text = prompt::render(&profile.prompt_template, &request.prompt)?;
        // yargs reads a value starting with '-' as another flag; the `=`
        // form keeps it the prompt.
        if text.starts_with('-') && launch.last().is_some_and(|a| takes_prompt(a)) {
            launch.pop();
            argv.extend(launch);
            argv.push(format!("--prompt-interactive={text}"));
        } else {
            argv.extend(launch);
            argv.push(text);
        }
    }
    argv.extend(common_launch_tail(profile, request));
    Ok(plain_command(argv))
}

/// Gemini CLI 0.61.0 answers `session/load` with "No previous sessions
/// found for this project." in an agent started without `--resume`: its
/// startup resets the session file it records to. Started with `--resume
/// ID`, the same `session/load` succeeds. A preset id has no ACP form.
pub fn acp(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let mut command = acp_launch(profile, request, &["--acp"]);
    if let Conversation::Resume(id) = &request.conversation {
        let id = checked_id(id)?;
        command.argv.splice(2..2, ["--resume".to_string(), id]);
    }
    Ok(command)
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    if request.prompt.is_empty() {
        return Err(invalid("a headless turn needs a prompt"));
    }
    let text = prompt::render(&profile.prompt_template, &request.prompt)?;
    let mut argv = vec![profile.binary.clone()];
    if text.starts_with('-') {
        argv.push(format!("--prompt={text}"));
    } else {
        argv.push("-p".to_string());
        argv.push(text);
    }
    argv.push("--output-format".to_string());
    argv.push("json".to_string());
    argv.extend(conversation_args(&request.conversation)?);
    argv.extend(profile.turn_args.iter().cloned());
    argv.extend(common_launch_tail(profile, request));
    Ok(plain_command(argv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{assert_refused, request};

    #[test]
    fn interactive_matches_bmad_loops_shape() {
        // bmad-loop.md §4.4: `gemini -i '/bmad-dev-auto 1-1-a' --approval-mode=yolo … --model sonnet`.
        let mut req = request("/bmad-dev-auto 1-1-a", Conversation::Fresh);
        req.model = "sonnet".to_string();
        let cmd = interactive(&profile(), &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "gemini",
                "-i",
                "/bmad-dev-auto 1-1-a",
                "--approval-mode=yolo",
                "--model",
                "sonnet"
            ]
        );
        assert!(cmd.env.is_empty());
        assert_eq!(cmd.stdin, None);
    }

    #[test]
    fn interactive_resume_without_a_prompt_drops_the_dangling_flag() {
        let resumed = interactive(
            &profile(),
            &request("", Conversation::Resume("abc-1".into())),
        )
        .expect("builds");
        assert_eq!(
            resumed.argv,
            ["gemini", "--resume", "abc-1", "--approval-mode=yolo"]
        );
        let with_prompt = interactive(
            &profile(),
            &request("go on", Conversation::Resume("abc-1".into())),
        )
        .expect("builds");
        assert_eq!(
            with_prompt.argv,
            [
                "gemini",
                "--resume",
                "abc-1",
                "-i",
                "go on",
                "--approval-mode=yolo"
            ]
        );
        let dashed =
            interactive(&profile(), &request("-v is a flag", Conversation::Fresh)).expect("builds");
        assert_eq!(
            dashed.argv,
            [
                "gemini",
                "--prompt-interactive=-v is a flag",
                "--approval-mode=yolo"
            ]
        );
    }

    #[test]
    fn headless_new_resumed_and_preset() {
        // docs/adapters/gemini.md: `gemini -p "…" --output-format json [--resume <id>]`.
        let fresh = headless(
            &profile(),
            &request("Reply with exactly: OK", Conversation::Fresh),
        )
        .expect("builds");
        assert_eq!(
            fresh.argv,
            [
                "gemini",
                "-p",
                "Reply with exactly: OK",
                "--output-format",
                "json",
                "--approval-mode=yolo"
            ]
        );
        let resumed = headless(
            &profile(),
            &request("hi", Conversation::Resume("5f0c1d2e".into())),
        )
        .expect("builds");
        assert_eq!(&resumed.argv[5..7], ["--resume", "5f0c1d2e"]);
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
                Conversation::Preset("a b".into()),
                Conversation::Preset("x/y".into()),
                Conversation::Resume("--evil".into()),
            ],
        );
        assert!(headless(&profile(), &request("", Conversation::Fresh)).is_err());
    }

    #[test]
    fn headless_adds_turn_args_model_and_replaced_bypass() {
        let mut p = profile();
        p.turn_args = vec!["--include-directories".to_string(), "../lib".to_string()];
        let mut req = request("-h means help", Conversation::Fresh);
        req.model = "gemini-2.5-pro".to_string();
        req.extra_args = Some(vec![]);
        let cmd = headless(&p, &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "gemini",
                "--prompt=-h means help",
                "--output-format",
                "json",
                "--include-directories",
                "../lib",
                "--model",
                "gemini-2.5-pro"
            ]
        );
    }

    #[test]
    fn acp_mode_takes_the_bypass_the_model_and_the_session_to_resume() {
        let mut req = request("", Conversation::Fresh);
        req.model = "gemini-2.5-pro".to_string();
        let cmd = acp(&profile(), &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "gemini",
                "--acp",
                "--approval-mode=yolo",
                "--model",
                "gemini-2.5-pro"
            ]
        );
        req.extra_args = Some(vec![]);
        req.conversation = Conversation::Resume("abc-1".into());
        let resumed = acp(&profile(), &req).expect("builds");
        assert_eq!(
            resumed.argv,
            [
                "gemini",
                "--acp",
                "--resume",
                "abc-1",
                "--model",
                "gemini-2.5-pro"
            ]
        );
        req.conversation = Conversation::Resume("--evil".into());
        assert!(acp(&profile(), &req).is_err());
    }
}
