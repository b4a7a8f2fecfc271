//! The recognisers against the real `--help` texts of the built-in CLIs
//! (testdata/help, versions in its README).

use super::*;

fn fixture(name: &str) -> String {
    let path = format!("{}/testdata/help/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Drafts from the fixtures as the command does from a binary: the main
/// help, then the subcommand's when the main help asks for one.
fn drafted(cli: &str) -> Draft {
    let main = Help::parse(&format!("{cli} --help"), &fixture(cli));
    let sub = wanted_subcommand(&main).map(|s| {
        Help::parse(
            &format!("{cli} {s} --help"),
            &fixture(&format!("{cli}-{s}")),
        )
    });
    draft(cli, cli, &main, sub.as_ref())
}

fn strings(items: &[&str]) -> Option<Vec<String>> {
    Some(items.iter().map(|s| s.to_string()).collect())
}

struct Expected {
    argv: &'static [&'static str],
    resume: Option<&'static [&'static str]>,
    session_id: bool,
    bypass: &'static [&'static str],
    args: Option<&'static [&'static str]>,
}

const P_JSON: &[&str] = &["-p", "{prompt}", "--output-format", "json"];
const RESUME: &[&str] = &["--resume", "{id}"];

fn expected(cli: &str) -> Expected {
    match cli {
        "claude" => Expected {
            argv: P_JSON,
            resume: Some(RESUME),
            session_id: true,
            bypass: &["--permission-mode", "bypassPermissions"],
            args: None,
        },
        "codex" => Expected {
            argv: &["exec", "--json", "{prompt}"],
            resume: None,
            session_id: false,
            bypass: &["--dangerously-bypass-approvals-and-sandbox"],
            args: None,
        },
        "gemini" => Expected {
            argv: P_JSON,
            resume: Some(RESUME),
            session_id: true,
            bypass: &["--approval-mode", "yolo"],
            args: None,
        },
        "opencode" => Expected {
            argv: &["run", "--format", "json", "{prompt}"],
            resume: Some(&["--session", "{id}"]),
            session_id: false,
            bypass: &["--auto"],
            args: None,
        },
        "qwen" => Expected {
            argv: P_JSON,
            resume: Some(RESUME),
            session_id: true,
            bypass: &["--approval-mode", "yolo"],
            args: None,
        },
        "copilot" => Expected {
            argv: P_JSON,
            resume: Some(RESUME),
            session_id: true,
            bypass: &["--allow-all-tools", "--allow-all-paths"],
            args: Some(&["--no-ask-user"]),
        },
        "grok" => Expected {
            argv: P_JSON,
            resume: Some(RESUME),
            session_id: true,
            bypass: &["--always-approve"],
            args: None,
        },
        other => panic!("no expectation for {other}"),
    }
}

pub const CLIS: &[&str] = &[
    "claude", "codex", "gemini", "opencode", "qwen", "copilot", "grok",
];

#[test]
fn each_built_in_clis_help_drafts_its_headless_shape() {
    for cli in CLIS {
        let d = drafted(cli);
        let want = expected(cli);
        assert_eq!(
            d.argv.value,
            strings(want.argv),
            "{cli} argv: {}",
            d.argv.how
        );
        assert_eq!(d.output.value.as_deref(), Some("json"), "{cli} output");
        assert_eq!(
            d.resume.value,
            want.resume.and_then(strings),
            "{cli} resume"
        );
        assert_eq!(
            d.session_id.value,
            want.session_id
                .then(|| vec!["--session-id".to_string(), "{id}".to_string()]),
            "{cli} session_id"
        );
        assert_eq!(d.model_flag.value.as_deref(), Some("--model"), "{cli}");
        assert_eq!(d.bypass.value, strings(want.bypass), "{cli} bypass");
        assert_eq!(d.turn_args.value, want.args.and_then(strings), "{cli} args");
    }
}

#[test]
fn a_subcommand_is_read_only_when_no_option_is_the_non_interactive_mode() {
    let wanted: Vec<(&str, Option<String>)> = CLIS
        .iter()
        .map(|cli| {
            let main = Help::parse(&format!("{cli} --help"), &fixture(cli));
            (*cli, wanted_subcommand(&main))
        })
        .filter(|(_, s)| s.is_some())
        .collect();
    assert_eq!(
        wanted,
        vec![
            ("codex", Some("exec".to_string())),
            ("opencode", Some("run".to_string()))
        ]
    );
}

#[test]
fn every_field_says_how_it_was_found() {
    let d = drafted("codex");
    let text = d.render();
    assert!(
        text.contains("`--json` in `codex exec --help`; it prints a stream of JSON events"),
        "{text}"
    );
    assert!(text.contains("# resume = []"), "{text}");
    assert!(
        text.contains("lists a `resume` subcommand"),
        "the resume subcommand is noted: {text}"
    );
    // Every key line has a comment right above it.
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.contains(" = ") && !line.starts_with('#') && !line.starts_with("name") {
            assert!(
                i > 0 && lines[i - 1].starts_with('#'),
                "no comment above {line:?}"
            );
        }
    }
}

#[test]
fn every_draft_parses_as_a_hookless_profile_without_a_component_field() {
    for cli in CLIS {
        let text = drafted(cli).render();
        let source = drover_profile::ProfileSource::User(format!("{cli}.toml").into());
        let profile = drover_profile::Profile::parse(&text, &source)
            .unwrap_or_else(|e| panic!("{cli}: {e}\n{text}"));
        assert!(profile.hookless(), "{cli}");
        assert!(
            !text.contains("\ncomponent") && !text.contains("\nadapter"),
            "{cli}"
        );
        assert_eq!(
            profile.turn.argv,
            drafted(cli).argv.value.unwrap_or_default()
        );
    }
}

#[test]
fn a_help_without_a_non_interactive_mode_says_so() {
    let help = Help::parse(
        "acme --help",
        "Usage: acme [options]\n\nOptions:\n  -v, --verbose   Talk more\n  -h, --help      Show help\n",
    );
    let d = draft("acme", "acme", &help, None);
    assert_eq!(d.argv.value, None);
    assert!(
        d.argv.how.contains("no non-interactive mode"),
        "{}",
        d.argv.how
    );
    assert_eq!(d.output.value.as_deref(), Some("text"));
    assert_eq!(d.bypass.value, None);
    let text = d.render();
    assert!(text.contains("# argv = []"), "{text}");
    assert!(
        drover_profile::Profile::parse(
            &text,
            &drover_profile::ProfileSource::User("a.toml".into())
        )
        .is_ok(),
        "{text}"
    );
}

#[test]
fn an_auto_flag_that_does_not_approve_is_not_a_bypass() {
    let help = Help::parse(
        "acme --help",
        "Options:\n  -p, --print       Print the response and exit\n      --auto        Pick a model automatically\n",
    );
    let d = draft("acme", "acme", &help, None);
    assert_eq!(d.bypass.value, None);
}

/// The two CLIs drover drives by profile alone (profiles/droid.toml,
/// kilo.toml): the drafts find what those profiles run.
#[test]
fn the_profile_only_clis_drafts_find_their_headless_shape() {
    let droid = drafted("droid");
    assert_eq!(
        droid.argv.value,
        strings(&["exec", "--output-format", "json", "{prompt}"]),
        "{}",
        droid.argv.how
    );
    assert_eq!(droid.output.value.as_deref(), Some("json"));
    assert!(droid.output.how.contains("a guess"), "{}", droid.output.how);
    assert_eq!(droid.bypass.value, strings(&["--skip-permissions-unsafe"]));
    let kilo = drafted("kilo");
    assert_eq!(kilo.argv.value.as_ref().map(|a| a[0].as_str()), Some("run"));
    assert_eq!(kilo.resume.value, strings(&["--session", "{id}"]));
    assert_eq!(kilo.bypass.value, strings(&["--auto"]));
}
