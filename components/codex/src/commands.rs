//! Launch commands. Interactive: `codex [resume ID] <launch> [PROMPT] <bypass>
//! [--model M]`. Headless: `codex exec --json <turn args> <bypass> [--model M]
//! [resume ID] PROMPT`, stdin closed. Exec's flags go before `resume`, where
//! exec itself parses them (the measured form is `codex exec --json resume
//! <id> PROMPT`). Codex cannot start a thread with an id of our choosing.

use drover_kit::{
    AdapterError, Command, Conversation, LaunchRequest, Profile, common_launch_tail, invalid,
    launch, plain_command, prompt,
};

/// Renders a canonical prompt. Codex's template wraps a skill invocation
/// (`Use the ${skill} skill now…`); a plain prompt has no skill, and wrapping
/// it would send "Use the $ skill now…", so it goes through verbatim.
pub fn render(profile: &Profile, text: &str) -> Result<String, AdapterError> {
    // Rendered either way so a broken template is reported for every prompt.
    let rendered = prompt::render(&profile.prompt_template, text)?;
    let (skill, _) = prompt::split_skill(text);
    if skill.is_empty()
        && profile
            .prompt_template
            .replace("{{", "")
            .contains("{skill}")
    {
        return Ok(text.to_string());
    }
    Ok(rendered)
}

fn resume_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    match conversation {
        Conversation::Fresh => Ok(Vec::new()),
        Conversation::Resume(id) => Ok(vec!["resume".to_string(), checked_id(id)?]),
        Conversation::Preset(id) => Err(invalid(format!(
            "codex cannot start a thread with a preset id ('{id}'); start fresh and read the id from thread.started"
        ))),
    }
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    launch::word_id(id, "a Codex thread id")
}

/// Appends the prompt and the flags. A prompt that starts with `-` would be
/// read as a flag, so it goes last, after `--`.
fn push_prompt_and_flags(argv: &mut Vec<String>, prompt: Option<String>, flags: Vec<String>) {
    match prompt {
        Some(p) if p.starts_with('-') => {
            argv.extend(flags);
            argv.push("--".to_string());
            argv.push(p);
        }
        Some(p) => {
            argv.push(p);
            argv.extend(flags);
        }
        None => argv.extend(flags),
    }
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(resume_args(&request.conversation)?);
    argv.extend(profile.launch_args.iter().cloned());
    let prompt = match request.prompt.is_empty() {
        true => None,
        false => Some(render(profile, &request.prompt)?),
    };
    push_prompt_and_flags(&mut argv, prompt, common_launch_tail(profile, request));
    Ok(plain_command(argv))
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    if request.prompt.is_empty() {
        return Err(invalid("a headless turn needs a prompt"));
    }
    let prompt = render(profile, &request.prompt)?;
    let resume = resume_args(&request.conversation)?;
    let mut argv = vec![profile.binary.clone(), "exec".to_string()];
    // `[turn] output = "text"`: the reply alone on stdout.
    if !drover_kit::text_output(profile) {
        argv.push("--json".to_string());
    }
    argv.extend(profile.turn_args.iter().cloned());
    argv.extend(common_launch_tail(profile, request));
    argv.extend(resume);
    if prompt.starts_with('-') {
        argv.push("--".to_string());
    }
    argv.push(prompt);
    Ok(plain_command(argv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{assert_refused, request};

    const BYPASS: [&str; 2] = [
        "--dangerously-bypass-approvals-and-sandbox",
        "--dangerously-bypass-hook-trust",
    ];

    #[test]
    fn skill_prompts_use_the_template_and_plain_prompts_go_verbatim() {
        assert_eq!(
            render(&profile(), "/bmad-dev-auto 1-1-a").expect("renders"),
            "Use the $bmad-dev-auto skill now, and use subagents as needed: 1-1-a"
        );
        assert_eq!(
            render(&profile(), "Reply with exactly: OK").expect("renders"),
            "Reply with exactly: OK"
        );
        let mut plain = profile();
        plain.prompt_template = "[{prompt}] {{skill}}".to_string();
        assert_eq!(render(&plain, "hi").expect("renders"), "[hi] {skill}");
        let mut broken = profile();
        broken.prompt_template = "{skil}".to_string();
        assert!(render(&broken, "plain text").is_err());
    }

    #[test]
    fn interactive_matches_the_documented_shape() {
        let mut req = request("/bmad-dev-auto 1-1-a", Conversation::Fresh);
        req.model = "gpt-5.5".to_string();
        let cmd = interactive(&profile(), &req).expect("builds");
        let mut expected = vec!["codex", "-c", "features.daemon_auto_start=false"];
        expected.push("Use the $bmad-dev-auto skill now, and use subagents as needed: 1-1-a");
        expected.extend(BYPASS);
        expected.extend(["--model", "gpt-5.5"]);
        assert_eq!(cmd.argv, expected);
        assert_eq!((cmd.stdin, cmd.env.len()), (None, 0));
        let resumed = interactive(
            &profile(),
            &request("", Conversation::Resume("019a9776-0a34".into())),
        )
        .expect("builds");
        let mut expected = vec![
            "codex",
            "resume",
            "019a9776-0a34",
            "-c",
            "features.daemon_auto_start=false",
        ];
        expected.extend(BYPASS);
        assert_eq!(resumed.argv, expected);
    }

    #[test]
    fn headless_fresh_and_resumed() {
        let fresh = headless(
            &profile(),
            &request("Reply with exactly: OK", Conversation::Fresh),
        )
        .expect("builds");
        let mut expected = vec!["codex", "exec", "--json"];
        expected.extend(BYPASS);
        expected.push("Reply with exactly: OK");
        assert_eq!(fresh.argv, expected);
        assert_eq!(fresh.stdin, None, "stdin is closed");
        let mut req = request(
            "Reply with exactly: SECOND",
            Conversation::Resume("t-1".into()),
        );
        req.model = "gpt-5.5".to_string();
        let resumed = headless(&profile(), &req).expect("builds");
        assert_eq!(&resumed.argv[..3], ["codex", "exec", "--json"]);
        assert_eq!(
            &resumed.argv[5..],
            [
                "--model",
                "gpt-5.5",
                "resume",
                "t-1",
                "Reply with exactly: SECOND"
            ]
        );
    }

    #[test]
    fn preset_ids_bad_ids_and_empty_prompts_are_refused() {
        let preset = headless(
            &profile(),
            &request(
                "hi",
                Conversation::Preset("123e4567-e89b-12d3-a456-426614174000".into()),
            ),
        );
        assert!(matches!(preset, Err(AdapterError::InvalidInput(m)) if m.contains("preset")));
        assert_refused(interactive, &profile(), &[Conversation::Preset("x".into())]);
        assert_refused(
            headless,
            &profile(),
            &[
                Conversation::Resume("--evil".into()),
                Conversation::Resume("a b".into()),
            ],
        );
        assert!(headless(&profile(), &request("", Conversation::Fresh)).is_err());
    }

    #[test]
    fn dash_prompts_come_last_after_a_separator_and_extra_args_replace_bypass() {
        let mut p = profile();
        p.turn_args = vec!["--skip-git-repo-check".to_string()];
        let mut req = request("-x is a flag?", Conversation::Resume("t".into()));
        req.extra_args = Some(vec!["--full-auto".to_string()]);
        let cmd = headless(&p, &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "codex",
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--full-auto",
                "resume",
                "t",
                "--",
                "-x is a flag?"
            ]
        );
        let cmd = interactive(&p, &request("-v", Conversation::Fresh)).expect("builds");
        assert_eq!(&cmd.argv[cmd.argv.len() - 2..], ["--", "-v"]);
    }

    #[test]
    fn a_profile_that_asks_for_text_drops_json() {
        let mut text = profile();
        text.turn_output = "text".to_string();
        let cmd = headless(&text, &request("hi", Conversation::Fresh)).expect("builds");
        assert_eq!(&cmd.argv[..2], ["codex", "exec"]);
        assert!(!cmd.argv.iter().any(|a| a == "--json"), "{:?}", cmd.argv);
    }
}
