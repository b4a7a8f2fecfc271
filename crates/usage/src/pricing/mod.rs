//! Dollar cost of token usage: pinned LiteLLM releases' model price tables,
//! merged and embedded in the binary (so pricing works offline), with the
//! user's override file laid over them, and the billing rules in [`rates`].
//!
//! `scripts/update-pricing.py` refreshes the snapshot (a model LiteLLM
//! dropped keeps its last price, marked retired); docs/usage.md ("Cost")
//! has the rules and the model-name resolution.

#[cfg(test)]
mod captures;
mod names;
mod rates;
mod table;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use rates::{Billable, Rates, Tier};

/// The embedded snapshot (one model per line, LiteLLM field names, plus
/// `retired_after` on models the latest release no longer has).
const SNAPSHOT: &str = include_str!("litellm-prices.json");

/// An override file larger than this is refused (it is read whole).
const MAX_OVERRIDE_BYTES: u64 = 16 << 20;

#[derive(Debug, thiserror::Error)]
pub enum PricingError {
    #[error("{path}: cannot read: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}:{at}: invalid JSON: {message}")]
    Syntax {
        path: String,
        at: String,
        message: String,
    },
    #[error("{path}: model '{model}': {message}")]
    Entry {
        path: String,
        model: String,
        message: String,
    },
}

/// Where the prices came from, for `--json` and `doctor`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Source {
    /// `litellm <version>`.
    pub snapshot: String,
    /// The day the snapshot was taken (`YYYY-MM-DD`).
    pub snapshot_date: String,
    /// SHA-256 of LiteLLM's file the snapshot was cut from.
    pub snapshot_sha256: String,
    /// Every release merged into the snapshot, oldest first
    /// (`litellm <version>`); models the latest one dropped keep the price
    /// of the last one that had them.
    pub merged: Vec<String>,
    /// Override files laid over the snapshot, in order.
    pub overrides: Vec<String>,
}

/// A model's prices as found.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The table's name for the model (may differ from the transcript's).
    pub key: &'a str,
    pub rates: &'a Rates,
    /// For a model the latest LiteLLM release no longer lists: the last
    /// release whose price this is (`1.103.6`).
    pub retired_after: Option<&'a str>,
}

pub struct Prices {
    source: Source,
    models: HashMap<String, Rates>,
    /// Snapshot models the latest release dropped, with the last release
    /// that had them.
    retired: HashMap<String, String>,
    /// Canonical name ([`names::canonical`]) → the table's one name for it,
    /// or `None` when the table's spellings of it disagree on price.
    aliases: HashMap<String, Option<String>>,
}

#[derive(serde::Deserialize)]
struct Snapshot {
    source: String,
    date: String,
    sha256: String,
    #[serde(default)]
    merged: Vec<Merged>,
    models: serde_json::Map<String, serde_json::Value>,
}

#[derive(serde::Deserialize)]
struct Merged {
    source: String,
}

/// The field update-pricing.py marks a retired model with.
const RETIRED: &str = "retired_after";

impl Prices {
    /// The embedded snapshot alone.
    pub fn embedded() -> Prices {
        // The snapshot is part of the binary and checked by a test, so a
        // parse failure here is a build defect, not user input.
        let parsed = serde_json::from_str::<Snapshot>(SNAPSHOT)
            .ok()
            .and_then(|mut s| {
                let mut models = HashMap::new();
                let entries = std::mem::take(&mut s.models);
                let retired: HashMap<String, String> = entries
                    .iter()
                    .filter_map(|(model, entry)| {
                        let last = entry.get(RETIRED)?.as_str()?;
                        Some((model.clone(), last.to_string()))
                    })
                    .collect();
                table::merge_entries(&mut models, "embedded snapshot", entries)
                    .ok()
                    .map(|_| (s, models, retired))
            });
        let Some((snapshot, models, retired)) = parsed else {
            tracing::error!("the embedded price table does not parse; costs are unavailable");
            return Prices {
                source: Source {
                    snapshot: "none".to_string(),
                    snapshot_date: String::new(),
                    snapshot_sha256: String::new(),
                    merged: Vec::new(),
                    overrides: Vec::new(),
                },
                models: HashMap::new(),
                retired: HashMap::new(),
                aliases: HashMap::new(),
            };
        };
        let mut prices = Prices {
            source: Source {
                snapshot: snapshot.source,
                snapshot_date: snapshot.date,
                snapshot_sha256: snapshot.sha256,
                merged: snapshot.merged.into_iter().map(|m| m.source).collect(),
                overrides: Vec::new(),
            },
            models,
            retired,
            aliases: HashMap::new(),
        };
        prices.index();
        prices
    }

    /// Rebuilds [`Prices::aliases`] from the table: each model of a
    /// vendor's own naming (`claude-…`, `gpt-…`, `anthropic/…`, `xai/…`,
    /// Bedrock's `anthropic.…-v1:0`) under its canonical name, so a
    /// transcript's spelling finds it however the table spells it. Bare ids
    /// win over prefixed ones; spellings that disagree on price are left
    /// ambiguous rather than guessed.
    fn index(&mut self) {
        let rank = |key: &str| {
            const VENDORS: [&str; 5] = ["anthropic/", "anthropic.", "xai/", "gemini/", "openai/"];
            if !key.contains('/') && !key.contains("anthropic.") {
                Some(0)
            } else if VENDORS.iter().any(|v| key.starts_with(v)) {
                Some(1)
            } else {
                None
            }
        };
        let mut keys: Vec<&String> = self.models.keys().collect();
        keys.sort();
        let mut best: HashMap<String, (u8, Option<&String>)> = HashMap::new();
        for key in keys {
            let Some(r) = rank(key) else { continue };
            let name = names::canonical(key);
            if name == *key || self.models.contains_key(&name) {
                continue;
            }
            let current = best.entry(name).or_insert((r, Some(key)));
            match current {
                (held, _) if r > *held => {}
                (held, _) if r < *held => *current = (r, Some(key)),
                (_, Some(held)) if *held == key => {}
                (_, Some(held)) => {
                    if self.models[*held] != self.models[key] {
                        current.1 = None;
                    } else if self.retired.contains_key(*held) && !self.retired.contains_key(key) {
                        // Equal prices: name the one LiteLLM still lists.
                        current.1 = Some(key);
                    }
                }
                (_, None) => {}
            }
        }
        self.aliases = best
            .into_iter()
            .map(|(name, (_, key))| (name, key.cloned()))
            .collect();
    }

    /// The snapshot with the user's overrides: `file` when given (it must
    /// exist), else `pricing.json` in drover's user config directory when
    /// there is one.
    pub fn load(file: Option<&Path>) -> Result<Prices, PricingError> {
        let mut prices = Prices::embedded();
        match file {
            Some(path) => prices.overlay(path)?,
            None => {
                if let Some(path) = user_file().filter(|p| p.exists()) {
                    prices.overlay(&path)?;
                }
            }
        }
        Ok(prices)
    }

    /// Lays a LiteLLM-format file over the table: the fields it gives replace
    /// the snapshot's, field by field; new models are added.
    pub fn overlay(&mut self, path: &Path) -> Result<(), PricingError> {
        let shown = path.display().to_string();
        let read_error = |reason: String| PricingError::Read {
            path: shown.clone(),
            reason,
        };
        let size = std::fs::metadata(path)
            .map_err(|e| read_error(e.to_string()))?
            .len();
        if size > MAX_OVERRIDE_BYTES {
            return Err(read_error(format!(
                "{size} bytes is more than a price file may hold ({MAX_OVERRIDE_BYTES})"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| read_error(e.to_string()))?;
        for model in table::merge(&mut self.models, &shown, &text)? {
            // The user's price, not LiteLLM's last one.
            self.retired.remove(&model);
        }
        self.source.overrides.push(shown);
        self.index();
        Ok(())
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// A model's prices, trying the name as written, then its
    /// normalisations (provider prefixes, date suffixes, dotted versions,
    /// Bedrock ids; [`names::candidates`]), then the table's other spellings
    /// of the same model (dated or undated, vendor-prefixed). `None` when
    /// none is in the table or the entry has no input and output price.
    pub fn find(&self, model: &str) -> Option<Found<'_>> {
        let found = |name: &str| {
            self.models
                .get_key_value(name)
                .filter(|(_, rates)| rates.is_priced())
                .map(|(key, rates)| Found {
                    key,
                    rates,
                    retired_after: self.retired.get(key).map(String::as_str),
                })
        };
        if let Some(hit) = names::candidates(model).iter().find_map(|name| found(name)) {
            return Some(hit);
        }
        let canonical = names::canonical(model);
        found(&canonical).or_else(|| {
            let key = self.aliases.get(&canonical)?.as_deref()?;
            found(key)
        })
    }
}

/// `pricing.json` in drover's user config directory.
pub fn user_file() -> Option<PathBuf> {
    drover_config::user_dir().map(|d| d.join("pricing.json"))
}

/// How to give `models` a price, for the messages that name an unpriced
/// model: the user's `pricing.json` (read by every command) and, where the
/// command has it, `--pricing FILE`.
pub fn how_to_price(models: &[&str], flag: bool) -> String {
    let file = user_file().map_or_else(
        || "pricing.json in drover's config directory".to_string(),
        |p| p.display().to_string(),
    );
    let example = models.first().copied().unwrap_or("MODEL");
    let or_flag = if flag { " or pass --pricing FILE" } else { "" };
    format!(
        "add its prices to {file}{or_flag}, in LiteLLM's format: \
         {{\"{example}\": {{\"input_cost_per_token\": 3e-6, \"output_cost_per_token\": 1.5e-5}}}} \
         (dollars per token; docs/usage.md, \"Cost\")"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_snapshot_parses_and_says_where_it_is_from() {
        let prices = Prices::embedded();
        let source = prices.source();
        assert!(source.snapshot.starts_with("litellm "), "{source:?}");
        assert_eq!(source.snapshot_date.len(), 10);
        assert_eq!(source.snapshot_sha256.len(), 64);
        assert!(prices.models.len() > 1000);
        let opus = prices.find("claude-opus-5-5").expect("in the table");
        assert_eq!(opus.rates.input, Some(4e-6));
        assert_eq!(opus.rates.cache_write_1h, Some(8e-6));
    }

    #[test]
    fn overrides_replace_fields_and_add_models() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("pricing.json");
        std::fs::write(
            &path,
            r#"{"claude-opus-5-5": {"input_cost_per_token": 1e-6},
                "in-house-model": {"input_cost_per_token": 2e-7, "output_cost_per_token": 8e-7}}"#,
        )
        .expect("write");
        let prices = Prices::load(Some(&path)).expect("loads");
        let opus = prices.find("claude-opus-5-5").expect("priced");
        assert_eq!(opus.rates.input, Some(1e-6));
        assert_eq!(opus.rates.output, Some(2e-5), "other fields kept");
        assert!(prices.find("in-house-model").is_some());
        assert_eq!(prices.source().overrides, [path.display().to_string()]);
    }

    #[test]
    fn a_broken_override_file_is_an_error_with_its_place() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("pricing.json");
        std::fs::write(&path, "{\n \"m\": {\"input_cost_per_token\": 1e-6,}\n}").expect("write");
        let e = Prices::load(Some(&path)).err().expect("refused");
        assert!(
            e.to_string().starts_with(&format!("{}:2:", path.display())),
            "{e}"
        );
        let missing = dir.path().join("nope.json");
        assert!(matches!(
            Prices::load(Some(&missing)),
            Err(PricingError::Read { .. })
        ));
    }

    #[test]
    fn retired_models_keep_their_last_price_and_say_so() {
        let prices = Prices::embedded();
        let opus = prices.find("claude-opus-4-1-20250805").expect("kept");
        assert_eq!(opus.key, "claude-opus-4-1-20250805");
        assert_eq!(opus.rates.input, Some(15e-6));
        assert_eq!(opus.rates.output, Some(75e-6));
        assert_eq!(opus.retired_after, Some("1.103.6"));
        let current = prices.find("claude-opus-4-5-20251101").expect("listed");
        assert_eq!(current.retired_after, None);
        assert_eq!(
            prices.source().merged.first().map(String::as_str),
            Some("litellm 1.55.0")
        );
        assert_eq!(
            prices.source().merged.last(),
            Some(&prices.source().snapshot)
        );
    }

    #[test]
    fn an_override_of_a_retired_model_is_no_longer_retired() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("pricing.json");
        std::fs::write(
            &path,
            r#"{"claude-opus-4-1-20250805": {"input_cost_per_token": 1e-5}}"#,
        )
        .expect("write");
        let prices = Prices::load(Some(&path)).expect("loads");
        let opus = prices.find("claude-opus-4-1-20250805").expect("priced");
        assert_eq!((opus.rates.input, opus.retired_after), (Some(1e-5), None));
    }

    #[test]
    fn other_spellings_find_the_table_name() {
        let prices = Prices::embedded();
        let key = |m: &str| prices.find(m).map(|f| f.key.to_string());
        // Undated, where the table has only the dated id.
        assert_eq!(
            key("claude-sonnet-4").as_deref(),
            Some("claude-sonnet-4-20250514")
        );
        // A Bedrock id the table lists is its own entry (Bedrock's price);
        // one it does not list is Anthropic's model.
        assert_eq!(
            key("us.anthropic.claude-opus-4-1-20250805-v1:0").as_deref(),
            Some("us.anthropic.claude-opus-4-1-20250805-v1:0")
        );
        assert_eq!(
            key("apac.anthropic.claude-opus-4-1-20250805-v1:0").as_deref(),
            Some("claude-opus-4-1-20250805")
        );
        // A provider's prefix the table does not list (the date goes
        // before the prefix: the same model, at the same price).
        assert_eq!(
            key("anthropic/claude-opus-4-1-20250805").as_deref(),
            Some("claude-opus-4-1")
        );
        // The vendor's prefix on the table's side.
        assert_eq!(key("grok-4.5").as_deref(), Some("xai/grok-4.5"));
    }

    #[test]
    fn unknown_models_are_not_priced() {
        let prices = Prices::embedded();
        assert!(prices.find("claude-sonnet-5-1").is_none());
        assert!(prices.find("").is_none());
        assert!(prices.find("<synthetic>").is_none());
    }
}
