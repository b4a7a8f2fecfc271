//! Launch commands. Interactive (the TUI): `opencode [--session ses_…]
//! [--prompt PROMPT] [--model provider/model]`. Headless: `opencode run
//! --format json [--session ses_…] [turn args] [--auto] [--model M] PROMPT`.
//!
//! `--auto` (approve every permission not explicitly denied) exists only on
//! `run`; the TUI has no such flag, so when the bypass args carry it the
//! interactive command drops it and sets `OPENCODE_PERMISSION` to allow
//! everything instead. opencode picks its own session ids (`ses_…`), so a
//! conversation cannot be started with a preset id.
//!
//! ACP: `opencode acp`, which has neither `--auto` nor `--model`: the
//! bypass becomes `OPENCODE_PERMISSION` as for the TUI, and a model is
//! refused (opencode's ACP mode takes it from opencode's config).

use drover_kit::{
    AdapterError, Command, Conversation, LaunchRequest, Profile, common_launch_tail, invalid,
    plain_command, prompt,
};

/// `run` flags that mean "approve everything".
const AUTO_FLAGS: &[&str] = &["--auto", "--yolo", "--dangerously-skip-permissions"];

/// The permission override the TUI reads from the environment.
const ALLOW_ALL: &str = r#"{"*":"allow"}"#;

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    Ok(match conversation {
        Conversation::Fresh => Vec::new(),
        Conversation::Resume(id) => vec!["--session".to_string(), checked_id(id)?],
        Conversation::Preset(id) => {
            return Err(invalid(format!(
                "opencode picks its own session ids; it cannot start a conversation as '{id}'"
            )));
        }
    })
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    let ok = id.len() > 4
        && id.starts_with("ses_")
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !ok {
        return Err(invalid(format!(
            "'{id}' is not an opencode session id (ses_…)"
        )));
    }
    Ok(id.to_string())
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(profile.launch_args.iter().cloned());
    argv.extend(conversation_args(&request.conversation)?);
    if !request.prompt.is_empty() {
        argv.push("--prompt".to_string());
        argv.push(prompt::render(&profile.prompt_template, &request.prompt)?);
    }
    Ok(without_auto_flags(
        argv,
        common_launch_tail(profile, request),
    ))
}

/// `argv` and `tail`, where an "approve everything" flag in `tail` becomes
/// `OPENCODE_PERMISSION` (only `run` has those flags).
fn without_auto_flags(mut argv: Vec<String>, tail: Vec<String>) -> Command {
    let mut env = Vec::new();
    for arg in tail {
        if AUTO_FLAGS.contains(&arg.as_str()) {
            if env.is_empty() {
                env.push(("OPENCODE_PERMISSION".to_string(), ALLOW_ALL.to_string()));
            }
        } else {
            argv.push(arg);
        }
    }
    Command {
        argv,
        env,
        stdin: None,
    }
}

pub fn acp(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    if !request.model.is_empty() {
        return Err(invalid(format!(
            "`opencode acp` takes no --model; set \"model\" in opencode's config instead of '{}'",
            request.model
        )));
    }
    let argv = vec![profile.binary.clone(), "acp".to_string()];
    Ok(without_auto_flags(
        argv,
        common_launch_tail(profile, request),
    ))
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    if request.prompt.is_empty() {
        return Err(invalid("a headless turn needs a prompt"));
    }
    let mut argv = vec![
        profile.binary.clone(),
        "run".to_string(),
        "--format".to_string(),
        "json".to_string(),
    ];
    argv.extend(conversation_args(&request.conversation)?);
    argv.extend(profile.turn_args.iter().cloned());
    argv.extend(common_launch_tail(profile, request));
    let text = prompt::render(&profile.prompt_template, &request.prompt)?;
    // A message that starts with '-' would be read as an option.
    if text.starts_with('-') {
        argv.push("--".to_string());
    }
    argv.push(text);
    Ok(plain_command(argv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{assert_refused, request};

    #[test]
    fn headless_new_and_resumed() {
        let mut req = request("/bmad-dev-auto 1-1-a", Conversation::Fresh);
        req.model = "fake/fake-model".to_string();
        let fresh = headless(&profile(), &req).expect("builds");
        assert_eq!(
            fresh.argv,
            [
                "opencode",
                "run",
                "--format",
                "json",
                "--auto",
                "--model",
                "fake/fake-model",
                "Use the bmad-dev-auto skill now: 1-1-a"
            ]
        );
        assert!(fresh.env.is_empty());
        let resumed = headless(
            &profile(),
            &request(
                "again",
                Conversation::Resume("ses_3a1f0c2b7ffeAbCdEfGhIjKlMn".into()),
            ),
        )
        .expect("builds");
        assert_eq!(
            &resumed.argv[4..6],
            ["--session", "ses_3a1f0c2b7ffeAbCdEfGhIjKlMn"]
        );
        let mut plain = profile();
        plain.prompt_template = "{prompt}".to_string();
        let dashed =
            headless(&plain, &request("-v is a flag", Conversation::Fresh)).expect("builds");
        assert_eq!(
            &dashed.argv[dashed.argv.len() - 2..],
            ["--", "-v is a flag"]
        );
    }

    #[test]
    fn interactive_moves_auto_approval_into_the_environment() {
        let cmd =
            interactive(&profile(), &request("/review it", Conversation::Fresh)).expect("builds");
        assert_eq!(
            cmd.argv,
            ["opencode", "--prompt", "Use the review skill now: it"]
        );
        assert_eq!(
            cmd.env,
            [("OPENCODE_PERMISSION".to_string(), ALLOW_ALL.to_string())]
        );
        let mut plain = request("", Conversation::Resume("ses_abc".into()));
        plain.extra_args = Some(vec![]);
        plain.model = "fake/fake-model".to_string();
        let cmd = interactive(&profile(), &plain).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "opencode",
                "--session",
                "ses_abc",
                "--model",
                "fake/fake-model"
            ]
        );
        assert!(cmd.env.is_empty());
    }

    #[test]
    fn refusals() {
        assert_refused(
            headless,
            &profile(),
            &[Conversation::Preset("ses_x".into())],
        );
        for bad in ["", "ses_", "abc", "--session", "ses_a b", "ses_a;rm"] {
            assert!(
                headless(&profile(), &request("hi", Conversation::Resume(bad.into()))).is_err(),
                "{bad}"
            );
        }
        assert!(headless(&profile(), &request("", Conversation::Fresh)).is_err());
        let mut broken = profile();
        broken.prompt_template = "Use {skil}".to_string();
        assert!(headless(&broken, &request("/x", Conversation::Fresh)).is_err());
    }

    #[test]
    fn acp_turns_the_bypass_into_the_permission_variable_and_refuses_a_model() {
        let cmd = acp(&profile(), &request("", Conversation::Fresh)).expect("builds");
        assert_eq!(cmd.argv, ["opencode", "acp"]);
        assert_eq!(
            cmd.env,
            [("OPENCODE_PERMISSION".to_string(), ALLOW_ALL.to_string())]
        );
        let mut asking = request("", Conversation::Fresh);
        asking.extra_args = Some(vec![]);
        assert!(acp(&profile(), &asking).expect("builds").env.is_empty());
        asking.model = "fake/fake-model".to_string();
        assert!(matches!(
            acp(&profile(), &asking),
            Err(AdapterError::InvalidInput(_))
        ));
    }
}
