//! Property tests: a journal's reader never panics on any bytes, and a
//! line that is not a transition (torn, binary, hostile) never hides the
//! transitions around it.

use proptest::prelude::*;

use crate::{Record, Transition, parse_transitions};
use drover_types::Verdict;
use drover_types::wit::SeatState;

fn transition() -> impl Strategy<Value = Transition> {
    (
        any::<u64>(),
        "[a-z0-9._-]{1,12}",
        prop::sample::select(vec![
            Record::State {
                state: SeatState::Working,
                prompt_kind: None,
            },
            Record::State {
                state: SeatState::Blocked,
                prompt_kind: Some("permission".to_string()),
            },
            Record::Verdict {
                verdict: Verdict::OverBudget,
            },
            Record::Event {
                name: "tool_call".to_string(),
            },
            Record::Answer {
                option: "1".to_string(),
            },
        ]),
        "(hook|screen|exit):[A-Za-z/]{0,12}",
    )
        .prop_map(|(ts, task, record, source)| Transition {
            ts,
            task,
            record,
            source,
            detail: serde_json::Value::Null,
            origin: None,
        })
}

/// A line that is not a transition: any bytes without a newline.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 0..80)
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = parse_transitions(&bytes);
    }

    #[test]
    fn garbage_lines_hide_no_transition(
        lines in prop::collection::vec(prop_oneof![
            transition().prop_map(Ok),
            garbage().prop_map(Err),
        ], 0..24)
    ) {
        let mut bytes = Vec::new();
        let mut expected = Vec::new();
        for line in &lines {
            match line {
                Ok(t) => {
                    bytes.extend(serde_json::to_vec(t).expect("serializes"));
                    expected.push(t.clone());
                }
                Err(junk) => {
                    // A junk line that happens to be a transition is one.
                    if let Ok(t) = serde_json::from_slice::<Transition>(junk) {
                        expected.push(t);
                    }
                    bytes.extend(junk);
                }
            }
            bytes.push(b'\n');
        }
        prop_assert_eq!(parse_transitions(&bytes), expected);
    }
}

/// A journal a checkout or a crashed writer left with one byte that is not
/// UTF-8 still shows every transition it recorded (it once showed none).
#[test]
fn one_binary_line_loses_no_recorded_transition() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("events.jsonl");
    let line = |state: &str| {
        format!(
            "{{\"ts\":1,\"task\":\"t\",\"kind\":\"state\",\"state\":\"{state}\",\"source\":\"hook:Stop\"}}\n"
        )
    };
    let mut bytes = line("working").into_bytes();
    bytes.extend(b"\xff\xfe torn\n");
    bytes.extend(line("idle").into_bytes());
    std::fs::write(&path, bytes).expect("write");
    let states: Vec<String> = crate::read_transitions(&path)
        .into_iter()
        .map(|t| t.record.value().to_string())
        .collect();
    assert_eq!(states, ["working", "idle"]);
}
