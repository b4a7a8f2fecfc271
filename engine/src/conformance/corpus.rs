//! The inputs conformance checks feed: every built-in adapter's fixtures and
//! the real CLI captures, embedded at build time (`engine/build.rs`), sorted
//! by what they are.

use drover_types::wit;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Recorder lines `{"event", "payload"}`: payloads with their native event.
    HookLog,
    /// One payload; its native event is not recorded.
    HookPayload,
    Screen,
    TurnStdout,
    TurnStderr,
    TurnExit,
    Transcript,
}

pub(crate) struct Sample {
    pub family: &'static str,
    pub kind: Kind,
    pub name: &'static str,
    pub text: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/conformance_corpus.rs"));

fn of(family: &str, kind: Kind) -> impl Iterator<Item = &'static Sample> + '_ {
    CORPUS
        .iter()
        .filter(move |s| s.family == family && s.kind == kind)
}

/// A payload and the native event to parse it as.
pub(crate) struct Payload {
    pub label: String,
    pub native: String,
    pub bytes: Vec<u8>,
}

/// The family's captured payloads under their native events; a payload
/// whose event was not recorded goes under every event the profile maps.
pub(crate) fn payloads(family: &str, profile: &wit::Profile) -> Vec<Payload> {
    let mut out = Vec::new();
    for sample in of(family, Kind::HookLog) {
        for (n, line) in sample.text.lines().enumerate() {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let (Some(native), Some(payload)) = (value["event"].as_str(), value.get("payload"))
            else {
                continue;
            };
            out.push(Payload {
                label: format!("{family}/{}#{}", sample.name, n + 1),
                native: native.to_string(),
                bytes: payload.to_string().into_bytes(),
            });
        }
    }
    for sample in of(family, Kind::HookPayload) {
        for (native, _) in &profile.hook_events {
            out.push(Payload {
                label: format!("{family}/{} as {native}", sample.name),
                native: native.clone(),
                bytes: sample.text.as_bytes().to_vec(),
            });
        }
    }
    out
}

pub(crate) fn screens(family: &str) -> impl Iterator<Item = (String, wit::Screen)> + '_ {
    of(family, Kind::Screen).map(move |s| (format!("{family}/{}", s.name), screen_of(s.text)))
}

pub(crate) fn screen_of(text: &str) -> wit::Screen {
    wit::Screen {
        rows: text.lines().map(str::to_string).collect(),
        title: String::new(),
    }
}

/// Captured headless runs: stdout with its stderr and exit code where the
/// capture has them (real captures name them `<case>.stdout.*`,
/// `<case>.stderr.txt`, `<case>.exit`), and stderr-only fixtures.
pub(crate) fn turns(family: &str) -> Vec<(String, wit::TurnOutput)> {
    let sibling = |kind: Kind, case: &str| {
        of(family, kind)
            .find(|s| s.name.split('.').next() == Some(case))
            .map(|s| s.text)
    };
    let mut out = Vec::new();
    for stdout in of(family, Kind::TurnStdout) {
        let case = stdout.name.split('.').next().unwrap_or(stdout.name);
        let exit_code = match sibling(Kind::TurnExit, case) {
            Some(text) => text.trim().parse().ok(),
            None => Some(0),
        };
        out.push((
            format!("{family}/{}", stdout.name),
            wit::TurnOutput {
                stdout: stdout.text.to_string(),
                stderr: sibling(Kind::TurnStderr, case)
                    .unwrap_or_default()
                    .to_string(),
                exit_code,
                prior_usage: None,
            },
        ));
    }
    for stderr in of(family, Kind::TurnStderr) {
        let case = stderr.name.split('.').next().unwrap_or(stderr.name);
        if sibling(Kind::TurnStdout, case).is_none() {
            out.push((
                format!("{family}/{}", stderr.name),
                wit::TurnOutput {
                    stdout: String::new(),
                    stderr: stderr.text.to_string(),
                    exit_code: Some(1),
                    prior_usage: None,
                },
            ));
        }
    }
    out
}

/// Log text a fault classifier reads: the family's captured stderr and panes.
pub(crate) fn fault_texts(family: &str) -> impl Iterator<Item = (String, &'static str)> + '_ {
    CORPUS
        .iter()
        .filter(move |s| s.family == family && matches!(s.kind, Kind::TurnStderr | Kind::Screen))
        .map(move |s| (format!("{family}/{}", s.name), s.text))
}

pub(crate) fn transcripts(family: &str) -> impl Iterator<Item = (String, &'static str)> + '_ {
    of(family, Kind::Transcript).map(move |s| (format!("{family}/{}", s.name), s.text))
}

/// Every transcript of every family.
pub(crate) fn all_transcripts() -> impl Iterator<Item = (String, &'static str)> {
    CORPUS
        .iter()
        .filter(|s| s.kind == Kind::Transcript)
        .map(|s| (format!("{}/{}", s.family, s.name), s.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_family_has_inputs_for_each_capability() {
        for builtin in crate::builtin::all() {
            let family = builtin.name;
            // The generic adapter has no family of its own: it serves
            // profile-only CLIs with the logic of the family they name.
            if family == "generic" {
                continue;
            }
            let profile = crate::profile::Catalog::load(std::path::Path::new("/nonexistent"))
                .find(family)
                .map(|p| p.to_wit())
                .expect("a built-in profile per built-in component");
            assert!(
                !payloads(family, &profile).is_empty(),
                "{family}: no payloads"
            );
            assert!(screens(family).count() > 0, "{family}: no screens");
            assert!(!turns(family).is_empty(), "{family}: no headless runs");
            assert!(fault_texts(family).count() > 0, "{family}: no fault texts");
        }
        assert!(all_transcripts().count() >= 8);
    }

    #[test]
    fn captured_runs_carry_their_stderr_and_exit_code() {
        let runs = turns("claude");
        let (_, error) = runs
            .iter()
            .find(|(label, _)| label == "claude/headless-error-401.stdout.json")
            .expect("the 401 run");
        assert!(!error.stderr.is_empty() || error.exit_code != Some(0));
        assert_ne!(error.exit_code, Some(0));
    }
}
