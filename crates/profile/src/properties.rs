//! Property tests of the two settings parsers a checkout feeds: profiles
//! and `config.toml`. Whatever the text, parsing never panics, and an error
//! names the file and, where it points at a line, a line the file has.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use crate::{Profile, ProfileSource};
use drover_config::{ConfigError, ConfigFile, Scope};

const CLAUDE: &str = include_str!("../../../profiles/claude.toml");

fn source() -> ProfileSource {
    ProfileSource::Project(PathBuf::from("/p/.drover/profiles/x.toml"))
}

/// Text that looks like TOML often enough to get past the first check.
fn tomlish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("name = \"x\"\n".to_string()),
            Just("binary = \"x\"\n".to_string()),
            Just("[hooks]\n".to_string()),
            Just("dialect = \"none\"\n".to_string()),
            Just("[turn]\n".to_string()),
            Just("args = [\"-p\", 3]\n".to_string()),
            Just("[env]\n".to_string()),
            Just("[[notify]]\n".to_string()),
            "[a-z_.]{1,12} = [0-9\"\\[\\]{}a-z,. ]{0,16}\n",
            "\\PC{0,20}\n",
        ],
        0..16,
    )
    .prop_map(|parts| parts.concat())
}

/// Fields of the Claude profile, each set to a value of the wrong kind.
fn wrong_kind() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        ("binary = \"claude\"", "binary = 7"),
        ("prompt_template = \"{prompt}\"", "prompt_template = [1]"),
        ("launch_args = []", "launch_args = 3"),
    ])
}

fn lines(text: &str) -> usize {
    text.lines().count().max(1)
}

proptest! {
    #[test]
    fn a_profile_of_any_text_parses_or_errs_naming_the_file(text in prop_oneof![tomlish(), "\\PC{0,400}"]) {
        if let Err(e) = Profile::parse(&text, &source()) {
            prop_assert!(e.to_string().starts_with("profile /p/.drover/profiles/x.toml"), "{}", e);
            if let Some(line) = e.line {
                prop_assert!((1..=lines(&text) + 1).contains(&line), "line {} of {}: {}", line, lines(&text), e);
            }
        }
    }

    #[test]
    fn a_field_of_the_wrong_kind_is_named_with_its_line((from, to) in wrong_kind()) {
        prop_assume!(CLAUDE.contains(from));
        let text = CLAUDE.replacen(from, to, 1);
        let field = to.split(' ').next().unwrap_or_default();
        // Refused, or (bmad-loop's coercions) read with a warning: either
        // way the field and its line are named.
        let said = match Profile::parse(&text, &source()) {
            Err(e) => vec![e],
            Ok(profile) => profile.warnings,
        };
        prop_assert!(
            said.iter().any(|e| e.field.as_deref() == Some(field) && e.line.is_some()),
            "{:?}", said
        );
    }

    #[test]
    fn a_config_of_any_text_parses_or_errs_naming_the_file_and_line(text in prop_oneof![tomlish(), "\\PC{0,400}"]) {
        match ConfigFile::parse(Path::new("/p/.drover/config.toml"), Scope::Project, text.clone(), |_, _| false) {
            Ok(file) => prop_assert_eq!(file.text(), text.as_str()),
            Err(ConfigError::Syntax { path, line, .. }) => {
                prop_assert_eq!(path, "/p/.drover/config.toml");
                if let Some(line) = line {
                    prop_assert!((1..=lines(&text) + 1).contains(&line), "line {} of {}", line, lines(&text));
                }
            }
            Err(other) => prop_assert!(false, "parsing read a file: {}", other),
        }
    }
}
