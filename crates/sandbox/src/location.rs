//! Which of the user's environment variables a component may read. A
//! component lists names in `description.location-env` and gets their values
//! in `location-context`, to find a CLI's transcripts when the user moved its
//! config directory. Only a directory's location is that: a name shaped like
//! one (`*_HOME`, `*_DIR`: `CLAUDE_CONFIG_DIR`, `XDG_DATA_HOME`) and naming no
//! secret. Anything else (`GITHUB_TOKEN`, `ANTHROPIC_API_KEY`) is refused as
//! the description crosses the boundary ([`crate::bounds`]), so no caller that
//! builds a location context from a description can hand a component a token.

/// Words that mark a variable as holding a secret rather than a place.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
];

/// The endings a location variable's name has.
const LOCATION_SUFFIXES: &[&str] = &["_HOME", "_DIR"];

/// Whether a component may read `name` through `location-context`.
pub fn is_location_variable(name: &str) -> bool {
    let shaped = name
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && name.starts_with(|c: char| c.is_ascii_uppercase());
    shaped
        && LOCATION_SUFFIXES
            .iter()
            .any(|suffix| name.len() > suffix.len() && name.ends_with(suffix))
        && name
            .split('_')
            .all(|word| !SECRET_WORDS.iter().any(|secret| word.contains(secret)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_directories_pass_and_secrets_do_not() {
        for name in [
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "GEMINI_CLI_HOME",
            "XDG_DATA_HOME",
            "QWEN_RUNTIME_DIR",
            "OLD_HOME",
        ] {
            assert!(is_location_variable(name), "{name}");
        }
        for name in [
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "HOME",
            "_DIR",
            "PATH",
            "ANTHROPIC_BASE_URL",
            "TOKEN_HOME",
            "API_KEYS_DIR",
            "AUTH_DIR",
            "lower_home",
            "",
        ] {
            assert!(!is_location_variable(name), "{name}");
        }
    }
}
