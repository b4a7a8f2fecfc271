//! Dollar cost of token usage: a pinned snapshot of LiteLLM's model price
//! table embedded in the binary (so pricing works offline), with the user's
//! override file laid over it, and the billing rules in [`rates`].
//!
//! `scripts/update-pricing.py` refreshes the snapshot; docs/usage.md
//! ("Cost") has the rules and the model-name normalisation.

mod names;
mod rates;
mod table;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use rates::{Billable, Rates, Tier};

/// The embedded snapshot (one model per line, LiteLLM field names).
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
    /// Override files laid over the snapshot, in order.
    pub overrides: Vec<String>,
}

/// A model's prices as found.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The table's name for the model (may differ from the transcript's).
    pub key: &'a str,
    pub rates: &'a Rates,
}

pub struct Prices {
    source: Source,
    models: HashMap<String, Rates>,
}

#[derive(serde::Deserialize)]
struct Snapshot {
    source: String,
    date: String,
    sha256: String,
    models: serde_json::Map<String, serde_json::Value>,
}

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
                table::merge_entries(&mut models, "embedded snapshot", entries)
                    .ok()
                    .map(|()| (s, models))
            });
        let Some((snapshot, models)) = parsed else {
            tracing::error!("the embedded price table does not parse; costs are unavailable");
            return Prices {
                source: Source {
                    snapshot: "none".to_string(),
                    snapshot_date: String::new(),
                    snapshot_sha256: String::new(),
                    overrides: Vec::new(),
                },
                models: HashMap::new(),
            };
        };
        Prices {
            source: Source {
                snapshot: snapshot.source,
                snapshot_date: snapshot.date,
                snapshot_sha256: snapshot.sha256,
                overrides: Vec::new(),
            },
            models,
        }
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
        table::merge(&mut self.models, &shown, &text)?;
        self.source.overrides.push(shown);
        Ok(())
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// A model's prices, trying the name as written and then its
    /// normalisations (provider prefixes, date suffixes, dotted versions;
    /// [`names::candidates`]). `None` when none is in the table or the
    /// entry has no input and output price.
    pub fn find(&self, model: &str) -> Option<Found<'_>> {
        names::candidates(model).into_iter().find_map(|name| {
            self.models
                .get_key_value(name.as_str())
                .filter(|(_, rates)| rates.is_priced())
                .map(|(key, rates)| Found { key, rates })
        })
    }
}

/// `pricing.json` in drover's user config directory.
pub fn user_file() -> Option<PathBuf> {
    drover_config::user_dir().map(|d| d.join("pricing.json"))
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
    fn unknown_models_are_not_priced() {
        let prices = Prices::embedded();
        assert!(prices.find("claude-sonnet-5-1").is_none());
        assert!(prices.find("").is_none());
        assert!(prices.find("<synthetic>").is_none());
    }
}
