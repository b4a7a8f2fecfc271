//! Running as root. Claude Code refuses to skip its permission checks
//! (`--permission-mode bypassPermissions`, `--dangerously-skip-permissions`)
//! under root unless `IS_SANDBOX=1` is in its environment, and exits 1 with
//! a sentence of its own. In a container drover often is root, so `doctor`
//! and `validate` warn before a run, and the refusal becomes a fault with a
//! hint saying what to do.

use crate::FaultReport;
use drover_profile::Profile;

/// Arguments Claude Code refuses under root.
const CLAUDE_REFUSED: &[&str] = &["--dangerously-skip-permissions", "bypassPermissions"];

pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Why `profile`, driven by `component`, would be refused under root, when
/// it would (checked whoever drover runs as; callers check
/// [`running_as_root`]).
pub fn root_refusal(profile: &Profile, component: &str) -> Option<String> {
    if component != "claude" {
        return None;
    }
    let refused: Vec<&str> = profile
        .bypass_args
        .iter()
        .map(String::as_str)
        .filter(|a| CLAUDE_REFUSED.contains(a))
        .collect();
    let sandbox = |env: &std::collections::BTreeMap<String, String>| {
        env.get("IS_SANDBOX").is_some_and(|v| v == "1")
    };
    if refused.is_empty() || sandbox(&profile.env) {
        return None;
    }
    Some(format!(
        "{}: drover runs as root, and Claude Code refuses {} under root unless IS_SANDBOX=1: in a disposable container or VM set IS_SANDBOX = \"1\" in the profile's [env]; otherwise run drover as a normal user, or run with --no-bypass",
        profile.name,
        refused.join(" ")
    ))
}

/// What to do about a fault, when drover knows.
pub fn hint(fault: &FaultReport) -> Option<String> {
    (fault.kind == drover_types::wit::FaultKind::Privileges).then(|| {
        "The CLI will not skip its permission checks as root (Claude Code: unless IS_SANDBOX=1). Run drover as a normal user; in a disposable container or VM, set IS_SANDBOX = \"1\" in the profile's [env]; or run with --no-bypass (the CLI then asks before acting).".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_profile::ProfileSource;

    fn profile(extra: &str) -> Profile {
        let text = format!(
            "name = \"c\"\nbinary = \"claude\"\nbypass_args = [\"--permission-mode\", \"bypassPermissions\"]\n{extra}\n[hooks]\ndialect = \"none\"\n"
        );
        Profile::parse(&text, &ProfileSource::Builtin("c.toml")).expect("profile")
    }

    #[test]
    fn claude_bypass_under_root_needs_the_sandbox_variable() {
        let warning = root_refusal(&profile(""), "claude").expect("refused");
        assert!(
            warning.contains("refuses bypassPermissions under root unless IS_SANDBOX=1"),
            "{warning}"
        );
        assert_eq!(
            root_refusal(&profile("env = { IS_SANDBOX = \"1\" }"), "claude"),
            None
        );
        assert_eq!(root_refusal(&profile(""), "codex"), None);
    }
}
