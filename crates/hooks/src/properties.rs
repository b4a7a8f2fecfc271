//! Property tests of the hook-config guard, the check between a component's
//! edit and the user's settings file: whatever the user's file holds, any
//! change outside the dialect's hook table is refused, whatever it holds,
//! and the relay's own entries under the table pass. Parsing a config never
//! panics on any text.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::guard::{check_install, parse};

const RELAY: &str = "/bin/drover-relay --cli x";
const MARKER: &str = "drover-relay --cli";

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-zA-Z0-9 ./*-]{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A user's settings: any keys but the hook table, plus a hook table with a
/// user entry.
fn settings() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[a-zA-Z]{1,10}", value(), 0..5).prop_map(|m| {
        let mut fields: Map<String, Value> = m.into_iter().filter(|(k, _)| k != "hooks").collect();
        fields.insert(
            "hooks".to_string(),
            json!({"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}),
        );
        fields
    })
}

fn relay_group(event: &str) -> Value {
    json!({"hooks": [{"type": "command", "command": format!("{RELAY} {event}")}]})
}

proptest! {
    #[test]
    fn parsing_any_text_never_panics(text in "\\PC{0,300}", json in any::<bool>()) {
        let path = if json { "settings.json" } else { "config.toml" };
        let _ = parse(Path::new(path), &text);
    }

    #[test]
    fn anything_added_outside_the_hook_table_is_refused(
        user in settings(),
        key in "[a-zA-Z]{1,10}",
        planted in prop_oneof![Just(json!(format!("{RELAY} Stop"))), value()],
    ) {
        prop_assume!(key != "hooks" && user.get(&key) != Some(&planted));
        let before = Value::Object(user.clone());
        let mut after = user;
        after.insert(key.clone(), planted);
        let refused = check_install(&before, &Value::Object(after), "hooks", RELAY, MARKER);
        prop_assert!(refused.is_err(), "planting {} passed", key);
        prop_assert!(refused.err().unwrap_or_default().contains(&key));
    }

    #[test]
    fn the_relays_own_entries_under_the_table_pass(user in settings(), event in "[A-Z][a-zA-Z]{1,12}") {
        let before = Value::Object(user.clone());
        let mut after = user;
        let table = after.get_mut("hooks").and_then(Value::as_object_mut).expect("a hook table");
        match table.get_mut(&event).and_then(Value::as_array_mut) {
            Some(groups) => groups.push(relay_group(&event)),
            None => {
                table.insert(event.clone(), json!([relay_group(&event)]));
            }
        }
        prop_assert_eq!(check_install(&before, &Value::Object(after), "hooks", RELAY, MARKER), Ok(()));
    }
}
