use super::*;

fn glob(base: wit::GlobBase, pattern: &str, parser: &str) -> wit::TranscriptGlob {
    wit::TranscriptGlob {
        base,
        pattern: pattern.into(),
        format: "jsonl".into(),
        parser: parser.into(),
    }
}

#[test]
fn globs_that_climb_or_name_unknown_parsers_are_caught() {
    let description = wit::Description {
        name: "x".into(),
        adapter_version: "1".into(),
        wit_version: "0.2.0".into(),
        capabilities: vec![],
        dialects: vec![],
        usage_parsers: vec![wit::UsageParser {
            name: "p".into(),
            needles: vec![],
        }],
        location_env: vec![],
        limitations: vec![],
    };
    let problem = |g: wit::TranscriptGlob| glob_problem(&g, &description).map(|(v, _)| v);
    assert_eq!(problem(glob(wit::GlobBase::Home, ".x/*.jsonl", "p")), None);
    assert_eq!(
        problem(glob(wit::GlobBase::Absolute, "/x/*.jsonl", "none")),
        None
    );
    assert_eq!(
        problem(glob(wit::GlobBase::Home, "../../etc/*", "p")),
        Some(Outcome::BrokeBound)
    );
    assert_eq!(
        problem(glob(wit::GlobBase::Cwd, "/etc/*", "p")),
        Some(Outcome::BrokeBound)
    );
    assert_eq!(
        problem(glob(wit::GlobBase::Home, "x\u{1b}[2J", "p")),
        Some(Outcome::BrokeBound)
    );
    assert_eq!(
        problem(glob(wit::GlobBase::Home, ".x/*", "q")),
        Some(Outcome::Disagreed)
    );
}

#[test]
fn split_points_cover_every_byte_of_a_small_sample() {
    assert_eq!(split_points(3).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert!(split_points(10_000).count() <= SPLIT_SAMPLE_MAX + 1);
}
