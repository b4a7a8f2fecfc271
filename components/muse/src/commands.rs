//! Launch commands. Headless: `muse exec --json --workspace .
//! [--session-id UUID | RESUME_FLAG ID] --prompt-file /dev/stdin <[turn]
//! args> <bypass> [--model M]` with the prompt on stdin: `exec` takes the
//! prompt from a file and keeps stdin for `--api-key-stdin`, which drover
//! never passes, so the file is stdin and no prompt is written to disk.
//! Interactive: `muse <launch args> [--session-id UUID] [PROMPT] <bypass>
//! [--model M]`.

use drover_kit::{
    AdapterError, Command, Conversation, LaunchRequest, Profile, common_launch_tail, invalid,
    launch, plain_command, prompt, setting, unsupported,
};

/// `[component_settings]`: the flag `muse exec --help` lists for resuming a
/// session, once it does (the sources disagree on whether it exists).
pub const RESUME_SETTING: &str = "resume_flag";

fn conversation_args(
    profile: &Profile,
    conversation: &Conversation,
) -> Result<Vec<String>, AdapterError> {
    Ok(match conversation {
        Conversation::Fresh => Vec::new(),
        Conversation::Preset(id) => vec!["--session-id".to_string(), launch::uuid_id(id, "muse")?],
        Conversation::Resume(id) => match setting(profile, RESUME_SETTING) {
            Some(flag) if flag.starts_with('-') && !flag.contains(char::is_whitespace) => {
                vec![flag.to_string(), launch::word_id(id, "a Muse session id")?]
            }
            Some(flag) => {
                return Err(invalid(format!(
                    "[component_settings] {RESUME_SETTING} = '{flag}' is not one flag"
                )));
            }
            None => {
                return Err(unsupported(format!(
                    "resuming a Muse session headless is not known to work: no source shows `muse exec` resuming; set [component_settings] {RESUME_SETTING} to the flag `muse exec --help` lists, or use an MSP seat (--workspace msp)"
                )));
            }
        },
    })
}

pub fn headless(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    if request.prompt.is_empty() {
        return Err(invalid("a headless turn needs a prompt"));
    }
    let mut argv: Vec<String> = [&profile.binary, "exec", "--json", "--workspace", "."]
        .map(str::to_string)
        .into();
    argv.extend(conversation_args(profile, &request.conversation)?);
    argv.extend(["--prompt-file".to_string(), "/dev/stdin".to_string()]);
    argv.extend(profile.turn_args.iter().cloned());
    argv.extend(common_launch_tail(profile, request));
    let mut command = plain_command(argv);
    command.stdin = Some(prompt::render_profile(profile, &request.prompt)?);
    // The launcher otherwise swaps in a new binary mid-run (hourly checks).
    command
        .env
        .push(("MUSE_NO_AUTO_UPDATE".to_string(), "1".to_string()));
    Ok(command)
}

/// `muse serve`: the Muse Session Protocol on stdio (the profile's
/// `agent_protocol = "msp"`). Its sessions are MSP's own (started or
/// resumed over the protocol), so no conversation or prompt words; approvals
/// are asked over the protocol, so no bypass.
pub fn serve(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone(), "serve".to_string()];
    if !request.model.is_empty() {
        argv.extend([profile.model_flag.clone(), request.model.clone()]);
    }
    let mut command = plain_command(argv);
    command
        .env
        .push(("MUSE_NO_AUTO_UPDATE".to_string(), "1".to_string()));
    Ok(command)
}

pub fn interactive(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(profile.launch_args.iter().cloned());
    argv.extend(conversation_args(profile, &request.conversation)?);
    if !request.prompt.is_empty() {
        argv.push(prompt::render_profile(profile, &request.prompt)?);
    }
    argv.extend(common_launch_tail(profile, request));
    Ok(plain_command(argv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{assert_refused, request};

    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    #[test]
    fn headless_is_exec_json_with_the_prompt_as_a_file_on_stdin() {
        let mut req = request("fix the build", Conversation::Preset(ID.to_string()));
        req.model = "spark-1.3".to_string();
        let cmd = headless(&profile(), &req).expect("builds");
        assert_eq!(
            cmd.argv,
            [
                "muse",
                "exec",
                "--json",
                "--workspace",
                ".",
                "--session-id",
                ID,
                "--prompt-file",
                "/dev/stdin",
                "--disable-approval",
                "--model",
                "spark-1.3"
            ]
        );
        assert_eq!(cmd.stdin.as_deref(), Some("fix the build"));
        assert!(
            cmd.env
                .contains(&("MUSE_NO_AUTO_UPDATE".into(), "1".into()))
        );
    }

    #[test]
    fn serve_speaks_msp_without_bypass() {
        let mut req = request("", Conversation::Resume(ID.to_string()));
        req.model = "spark-1.3".to_string();
        let cmd = serve(&profile(), &req).expect("builds");
        assert_eq!(cmd.argv, ["muse", "serve", "--model", "spark-1.3"]);
        assert_eq!(cmd.stdin, None);
    }

    #[test]
    fn a_chosen_session_id_must_be_a_uuid() {
        assert_refused(
            headless,
            &profile(),
            &[
                Conversation::Preset("not-a-uuid".into()),
                Conversation::Preset("--help".into()),
            ],
        );
    }

    #[test]
    fn resuming_needs_the_flag_muses_help_lists() {
        let resume = request("again", Conversation::Resume(ID.to_string()));
        let err = headless(&profile(), &resume).expect_err("no flag configured");
        assert!(
            matches!(&err, AdapterError::Unsupported(m) if m.contains(RESUME_SETTING)),
            "{err:?}"
        );
        let mut with_flag = profile();
        with_flag
            .settings
            .push((RESUME_SETTING.to_string(), "--resume".to_string()));
        let cmd = headless(&with_flag, &resume).expect("builds");
        assert!(
            cmd.argv.windows(2).any(|w| w == ["--resume", ID]),
            "{:?}",
            cmd.argv
        );
        with_flag.settings[0].1 = "--resume now".to_string();
        assert_refused(headless, &with_flag, &[Conversation::Resume(ID.into())]);
    }
}
