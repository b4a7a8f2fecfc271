//! Launch commands. Interactive: `grok [-r ID | -s UUID] <bypass> [--model M]
//! [PROMPT]` (a positional prompt starts the TUI on it and keeps the session
//! open). Headless: `grok -p PROMPT --output-format json [-r ID | -s UUID]`
//! plus the profile's `[turn]` args. ACP: `grok agent [--always-approve]
//! [--model M] stdio`.

use drover_kit::{
    AdapterError, Command, Conversation, LaunchRequest, Profile, common_launch_tail, launch,
    plain_command, prompt,
};

fn conversation_args(conversation: &Conversation) -> Result<Vec<String>, AdapterError> {
    launch::resume_or_session_id(conversation, checked_id, checked_uuid)
}

fn checked_id(id: &str) -> Result<String, AdapterError> {
    launch::word_id(id, "a Grok session id")
}

/// `--session-id` only accepts a UUID.
fn checked_uuid(id: &str) -> Result<String, AdapterError> {
    launch::uuid_id(id, "grok")
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(profile.launch_args.iter().cloned());
    argv.extend(conversation_args(&request.conversation)?);
    argv.extend(common_launch_tail(profile, request));
    if !request.prompt.is_empty() {
        // After every flag: grok reads the first positional argument as the
        // initial prompt.
        argv.push(prompt::render(&profile.prompt_template, &request.prompt)?);
    }
    Ok(plain_command(argv))
}

/// Of the bypass args, the ones `grok agent` takes: it has
/// `--always-approve` but no `--trust` (an ACP client opens the session in a
/// directory it chose).
const AGENT_BYPASS: &[&str] = &["--always-approve"];

/// `grok agent <options> stdio`: the options belong to `agent`, before the
/// subcommand. Args the user gave in place of the bypass pass unchanged.
pub fn acp(profile: &Profile, request: &LaunchRequest) -> Command {
    let mut argv = vec![profile.binary.clone(), "agent".to_string()];
    match &request.extra_args {
        Some(extra) => argv.extend(extra.iter().cloned()),
        None => argv.extend(
            profile
                .bypass_args
                .iter()
                .filter(|arg| AGENT_BYPASS.contains(&arg.as_str()))
                .cloned(),
        ),
    }
    if !request.model.is_empty() {
        argv.push(profile.model_flag.clone());
        argv.push(request.model.clone());
    }
    argv.push("stdio".to_string());
    plain_command(argv)
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
    fn headless_prints_json_and_resumes_by_id() {
        let fresh = headless(&profile(), &request("fix it", Conversation::Fresh)).expect("argv");
        assert_eq!(
            fresh.argv,
            [
                "grok",
                "-p",
                "fix it",
                "--output-format",
                "json",
                "--always-approve",
                "--trust"
            ]
        );
        let id = "01a232b4-758f-7130-a8e5-21646eb750e3";
        let resumed = headless(
            &profile(),
            &request("more", Conversation::Resume(id.into())),
        )
        .expect("argv");
        assert_eq!(resumed.argv[5..7], ["--resume", id]);
        assert!(headless(&profile(), &request("", Conversation::Fresh)).is_err());
    }

    #[test]
    fn interactive_puts_the_prompt_last_and_checks_ids() {
        let mut req = request(
            "hello",
            Conversation::Preset("0d3c2b1a-0000-4000-8000-00000000abcd".into()),
        );
        req.model = "grok-build".into();
        let argv = interactive(&profile(), &req).expect("argv").argv;
        assert_eq!(
            argv,
            [
                "grok",
                "--session-id",
                "0d3c2b1a-0000-4000-8000-00000000abcd",
                "--always-approve",
                "--trust",
                "--model",
                "grok-build",
                "hello"
            ]
        );
        let bare = interactive(&profile(), &request("", Conversation::Fresh)).expect("argv");
        assert_eq!(bare.argv, ["grok", "--always-approve", "--trust"]);
        for bad in ["", "-x", "a b"] {
            let r = interactive(&profile(), &request("x", Conversation::Resume(bad.into())));
            assert!(r.is_err(), "{bad:?}");
        }
        let r = interactive(
            &profile(),
            &request("x", Conversation::Preset("not-a-uuid".into())),
        );
        assert!(r.is_err());
    }

    #[test]
    fn acp_puts_the_agent_options_before_stdio_and_drops_trust() {
        let mut req = request("", Conversation::Resume("ignored".into()));
        req.model = "grok-4".to_string();
        let cmd = acp(&profile(), &req);
        assert_eq!(
            cmd.argv,
            [
                "grok",
                "agent",
                "--always-approve",
                "--model",
                "grok-4",
                "stdio"
            ]
        );
        req.extra_args = Some(vec![]);
        req.model = String::new();
        assert_eq!(acp(&profile(), &req).argv, ["grok", "agent", "stdio"]);
    }
}
