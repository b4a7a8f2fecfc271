//! Every model name in the built-in adapters' real captures
//! (components/*/fixtures/, tests/fixtures/) must price, or say why it
//! cannot. The table was made from `scripts/capture-models.py`'s list; the
//! walk below finds the names by the script's rules, so a capture with a new
//! model fails here until the table says how it prices.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Prices;

enum Expect {
    /// The table entry it prices as, and the last LiteLLM release that had
    /// it when the latest no longer does.
    Priced(&'static str, Option<&'static str>),
    /// Why no price applies.
    Unpriceable(&'static str),
}
use Expect::{Priced, Unpriceable};

const SCRIPTED: &str =
    "the scripted model server's stand-in name (tests/model-server), no real model";

const CAPTURED: &[(&str, Expect)] = &[
    (
        "<synthetic>",
        Unpriceable(
            "Claude Code's name for its own API-error rows, which carry no tokens and cost nothing",
        ),
    ),
    ("claude-haiku-4.5", Priced("claude-haiku-4-5", None)),
    ("claude-opus-5-5", Priced("claude-opus-5-5", None)),
    (
        "claude-sonnet-4",
        Priced("claude-sonnet-4-20250514", Some("1.103.6")),
    ),
    (
        "composer-2.5",
        Unpriceable("Cursor's own model: LiteLLM has no price, and drover reads no Cursor usage"),
    ),
    ("fake-model", Unpriceable(SCRIPTED)),
    ("fake-reasoner", Unpriceable(SCRIPTED)),
    ("fake/fake-model", Unpriceable(SCRIPTED)),
    ("gemini-2.5-pro", Priced("gemini-2.5-pro", None)),
    (
        "gemini-3.1-pro-preview",
        Priced("gemini-3.1-pro-preview", None),
    ),
    (
        "gemini-3.5-flash-lite",
        Priced("gemini-3.5-flash-lite", None),
    ),
    (
        "gemini-3.7-flash-high",
        Unpriceable(
            "Antigravity's name for an effort setting of gemini-3.7-flash; drover reads no Antigravity usage",
        ),
    ),
    ("gemini-3.8-flash", Priced("gemini-3.8-flash", None)),
    ("gpt-4.1", Priced("gpt-4.1", None)),
    ("gpt-5", Priced("gpt-5", None)),
    ("gpt-5-mini", Priced("gpt-5-mini", None)),
    ("gpt-5.4", Priced("gpt-5.4", None)),
    ("gpt-5.5", Priced("gpt-5.5", None)),
    ("gpt-6-sol", Priced("gpt-6-sol", None)),
    ("grok-4.5", Priced("xai/grok-4.5", None)),
];

#[test]
fn every_captured_model_prices_as_its_table_entry_or_says_why_not() {
    let prices = Prices::embedded();
    for (model, expect) in CAPTURED {
        let found = prices.find(model);
        match expect {
            Priced(key, retired) => {
                let found = found.unwrap_or_else(|| panic!("{model} has no price"));
                assert_eq!(
                    (found.key, found.retired_after),
                    (*key, *retired),
                    "{model}"
                );
            }
            Unpriceable(why) => {
                assert!(!why.is_empty());
                assert!(
                    found.is_none(),
                    "{model} prices as {:?}",
                    found.map(|f| f.key)
                );
            }
        }
    }
}

#[test]
fn the_table_lists_every_model_name_in_the_captures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut roots = vec![root.join("tests/fixtures")];
    let components = std::fs::read_dir(root.join("components")).expect("components/");
    roots.extend(components.flatten().map(|c| c.path().join("fixtures")));
    let mut found = BTreeSet::new();
    let mut files = 0;
    for dir in roots {
        for path in walk(&dir) {
            let text = std::fs::read_to_string(&path).expect("a fixture reads");
            files += 1;
            match serde_json::from_str::<Value>(&text) {
                Ok(doc) => names(&doc, &mut found),
                Err(_) => text
                    .lines()
                    .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                    .for_each(|doc| names(&doc, &mut found)),
            }
        }
    }
    assert!(files > 100, "{files} capture files found");
    let listed: BTreeSet<String> = CAPTURED.iter().map(|(m, _)| m.to_string()).collect();
    assert_eq!(
        found, listed,
        "the captures' model names (left) against the table (right); scripts/capture-models.py lists them"
    );
}

/// JSON and JSONL files below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path
            .extension()
            .is_some_and(|e| e == "json" || e == "jsonl")
        {
            out.push(path);
        }
    }
    out
}

/// Keys with `model` in their name whose values are not model names
/// (scripts/capture-models.py's NOT_A_MODEL).
const NOT_A_MODEL: [&str; 6] = [
    "model_provider",
    "model_provider_id",
    "modelProvider",
    "model_catalog",
    "model_search_state",
    "QWEN_CODE_MODEL_IDENTITY",
];

/// Model names in `value` by scripts/capture-models.py's rules.
fn names(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let model_key = key.to_ascii_lowercase().contains("model")
                    && !NOT_A_MODEL.contains(&key.as_str());
                match inner {
                    Value::String(s) if model_key && !s.starts_with(['{', '[']) => {
                        out.insert(s.clone());
                    }
                    Value::Object(per_model) if model_key && key != "model" => {
                        for (model, entry) in per_model {
                            out.insert(model.clone());
                            names(entry, out);
                        }
                        continue;
                    }
                    _ => {}
                }
                names(inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| names(v, out)),
        Value::String(s) if s.starts_with(['{', '[']) => {
            if let Ok(inner) = serde_json::from_str::<Value>(s) {
                names(&inner, out);
            }
        }
        _ => {}
    }
}
