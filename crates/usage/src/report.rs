//! From records to the report: the `--since`/`--until`/`--project` cuts,
//! cost per record, the `--by` rows, per-session rows and totals. The JSON
//! shape is versioned ([`SCHEMA_VERSION`], docs/usage.md).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::Serialize;

use super::Warning;
use super::blocks::{self, BurnRate, Point, Projection};
use super::record::{Record, Tokens, When};
use super::time::{Day, Zone, format_instant};
use crate::pricing::{Prices, Rates, Source};

/// Bumped whenever a field changes meaning or goes away (adding one does
/// not bump it). docs/usage.md describes version 2.
pub const SCHEMA_VERSION: u32 = 2;

/// `--by`.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum By {
    #[default]
    Session,
    Day,
    Month,
    Model,
    Block,
}

/// What to keep and how to group it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub by: By,
    pub since: Option<Day>,
    pub until: Option<Day>,
    pub zone: Zone,
    /// Keep only conversations whose working directory is this one or
    /// below it.
    pub project: Option<String>,
    /// "Now", for the open block (milliseconds since the epoch).
    pub now: i64,
}

/// The filters as applied, echoed in the JSON document.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Filters {
    pub since: Option<String>,
    pub until: Option<String>,
    pub tz: String,
    pub project: Option<String>,
}

/// A `--by` row's (or a session's) identity.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum Label {
    Session {
        cli: String,
        session: String,
        /// Local days; empty when no request of the session carries a time.
        first_day: String,
        last_day: String,
        /// Working directories the session ran in, where known.
        projects: Vec<String>,
    },
    Day {
        day: String,
    },
    Month {
        month: String,
    },
    Model {
        cli: String,
        model: String,
    },
    Block {
        cli: String,
        /// RFC 3339, UTC.
        start: String,
        end: String,
        last_request: String,
        active: bool,
        /// Only for the open block.
        burn_rate: Option<BurnRate>,
        projection: Option<Projection>,
    },
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Row {
    #[serde(flatten)]
    pub label: Label,
    pub clis: Vec<String>,
    pub models: Vec<String>,
    pub sessions: usize,
    #[serde(flatten)]
    pub usage: Tokens,
    /// Dollars for the priced part; `null` when nothing in the row could be
    /// priced (see `unpriced_models`).
    pub cost_usd: Option<f64>,
    /// Models in the row the price table does not know: their tokens are
    /// counted above, their cost is not in `cost_usd`.
    pub unpriced_models: Vec<String>,
    /// `--by model` rows of a model the latest LiteLLM release no longer
    /// lists, priced at its last known price.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub retired: bool,
    /// With `retired`: the last LiteLLM release that listed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired_after: Option<String>,
}

/// How one model name of the transcripts was priced.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct PricedAs {
    /// As the transcripts spell it.
    pub model: String,
    /// The price table's name for it.
    pub price_key: String,
    /// For a model the latest LiteLLM release no longer lists: the last
    /// release that did, whose price this is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired_after: Option<String>,
}

/// Tokens of a model the price table does not know.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Unpriced {
    pub cli: String,
    pub model: String,
    #[serde(flatten)]
    pub usage: Tokens,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Totals {
    #[serde(flatten)]
    pub usage: Tokens,
    pub cost_usd: Option<f64>,
    pub unpriced_models: Vec<String>,
}

/// Why a file was or was not read (`--explain-files`).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct FileNote {
    pub path: String,
    pub cli: Option<String>,
    pub parser: Option<String>,
    /// `read`, `skipped` or `failed`.
    pub status: &'static str,
    pub reason: String,
}

/// The whole `drover usage` answer (and its `--json` document).
#[derive(Serialize, Debug)]
pub struct Report {
    pub schema_version: u32,
    pub pricing: Source,
    pub filters: Filters,
    pub by: By,
    pub totals: Totals,
    pub groups: Vec<Row>,
    /// Per (CLI, session), oldest activity first, whatever `--by` says.
    pub sessions: Vec<Row>,
    pub unpriced: Vec<Unpriced>,
    /// Each priced model name and the table entry that priced it.
    pub priced_as: Vec<PricedAs>,
    /// Transcript files and databases read.
    pub files: usize,
    /// Copies of requests already counted from another row or file.
    pub repeated_requests: u64,
    /// Rows the parsers saw as usage but could not read.
    pub rejected_rows: u64,
    /// With `--explain-files`: every file considered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain_files: Option<Vec<FileNote>>,
    pub warnings: Vec<Warning>,
}

/// A model's lookup: its rates and how it was found.
struct Lookup {
    rates: Rates,
    key: String,
    retired_after: Option<String>,
}

/// Prices records, remembering each model's lookup.
struct Coster<'a> {
    prices: &'a Prices,
    cache: HashMap<String, Option<Lookup>>,
}

impl Coster<'_> {
    fn lookup(&mut self, model: &str) -> Option<&Lookup> {
        let prices = self.prices;
        // Records of one model come in runs: look the name up without
        // allocating once it is cached.
        if !self.cache.contains_key(model) {
            let found = prices.find(model).map(|f| Lookup {
                rates: f.rates.clone(),
                key: f.key.to_string(),
                retired_after: f.retired_after.map(str::to_string),
            });
            self.cache.insert(model.to_string(), found);
        }
        self.cache.get(model)?.as_ref()
    }

    /// `Some(dollars)`, or `None` when the model is not in the table (a
    /// record without tokens costs nothing whatever its model).
    fn cost(&mut self, r: &Record) -> Option<f64> {
        if r.tokens.total() == 0 {
            return Some(0.0);
        }
        let rates = &self.lookup(&r.model)?.rates;
        if r.single {
            rates.cost(&crate::record::billable(&r.tokens))
        } else {
            rates.cost_of_sum(&crate::record::billable(&r.tokens))
        }
    }
}

#[derive(Default)]
struct Acc {
    clis: BTreeSet<Arc<str>>,
    models: BTreeSet<String>,
    sessions: BTreeSet<(Arc<str>, String)>,
    days: BTreeSet<Day>,
    projects: BTreeSet<String>,
    tokens: Tokens,
    cost: f64,
    priced: bool,
    unpriced: BTreeSet<String>,
}

impl Acc {
    fn add(&mut self, r: &Record, day: Option<&Day>, cost: Option<f64>) {
        self.clis.insert(Arc::clone(&r.cli));
        if !r.model.is_empty() {
            self.models.insert(r.model.clone());
        }
        self.sessions
            .insert((Arc::clone(&r.cli), r.session.clone()));
        if let Some(day) = day {
            self.days.insert(day.clone());
        }
        if !r.cwd.is_empty() {
            self.projects.insert(r.cwd.clone());
        }
        self.tokens.add(&r.tokens);
        match cost {
            Some(c) => {
                self.cost += c;
                self.priced = true;
            }
            None => {
                self.unpriced.insert(model_name(&r.model));
            }
        }
    }

    fn cost_usd(&self) -> Option<f64> {
        (self.priced || self.unpriced.is_empty()).then_some(self.cost)
    }

    fn row(&self, label: Label) -> Row {
        Row {
            label,
            clis: self.clis.iter().map(|c| c.to_string()).collect(),
            models: self.models.iter().cloned().collect(),
            sessions: self.sessions.len(),
            usage: self.tokens,
            cost_usd: self.cost_usd(),
            unpriced_models: self.unpriced.iter().cloned().collect(),
            retired: false,
            retired_after: None,
        }
    }
}

fn model_name(model: &str) -> String {
    if model.is_empty() {
        "(unknown model)".to_string()
    } else {
        model.to_string()
    }
}

/// Whether `cwd` is `project` or inside it.
fn within(cwd: &str, project: &str) -> bool {
    let project = project.trim_end_matches('/');
    cwd == project
        || cwd
            .strip_prefix(project)
            .is_some_and(|rest| rest.starts_with('/'))
        || project.is_empty()
}

/// What the report is built from besides the records.
pub struct Inputs {
    pub files: usize,
    pub repeated_requests: u64,
    pub rejected_rows: u64,
    pub explain_files: Option<Vec<FileNote>>,
    pub warnings: Vec<Warning>,
}

/// Cuts, prices and groups the records.
pub fn build(records: &[Record], options: &Options, prices: &Prices, inputs: Inputs) -> Report {
    let mut warnings = inputs.warnings;
    let mut coster = Coster {
        prices,
        cache: HashMap::new(),
    };
    let dated = options.since.is_some() || options.until.is_some();
    let mut totals = Acc::default();
    let mut sessions: BTreeMap<(Arc<str>, String), Acc> = BTreeMap::new();
    let mut groups: BTreeMap<(String, String), Acc> = BTreeMap::new();
    let mut unpriced: BTreeMap<(Arc<str>, String), Tokens> = BTreeMap::new();
    let mut points: BTreeMap<Arc<str>, Vec<(Point, usize)>> = BTreeMap::new();
    let (mut undated, mut untimed, mut no_cwd) = (0u64, 0u64, 0u64);
    for (index, r) in records.iter().enumerate() {
        let day = match &r.when {
            When::At(ms) => Some(options.zone.day(*ms)),
            When::Day(day) => Some(day.clone()),
            When::Unknown => None,
        };
        if dated {
            let Some(d) = &day else {
                undated += r.tokens.requests;
                continue;
            };
            if options.since.as_ref().is_some_and(|s| d < s)
                || options.until.as_ref().is_some_and(|u| d > u)
            {
                continue;
            }
        }
        if let Some(project) = &options.project {
            if r.cwd.is_empty() {
                no_cwd += r.tokens.requests;
                continue;
            }
            if !within(&r.cwd, project) {
                continue;
            }
        }
        let cost = coster.cost(r);
        if cost.is_none() {
            unpriced
                .entry((Arc::clone(&r.cli), model_name(&r.model)))
                .or_default()
                .add(&r.tokens);
        }
        totals.add(r, day.as_ref(), cost);
        sessions
            .entry((Arc::clone(&r.cli), r.session.clone()))
            .or_default()
            .add(r, day.as_ref(), cost);
        let key = match options.by {
            By::Session | By::Block => None,
            By::Day => Some((
                day.as_ref().map(|d| d.to_string()).unwrap_or_default(),
                String::new(),
            )),
            By::Month => Some((
                day.as_ref()
                    .map(|d| d.month().to_string())
                    .unwrap_or_default(),
                String::new(),
            )),
            By::Model => Some((r.cli.to_string(), r.model.clone())),
        };
        if let Some(key) = key {
            groups.entry(key).or_default().add(r, day.as_ref(), cost);
        }
        if options.by == By::Block {
            match r.when {
                When::At(at) => points.entry(Arc::clone(&r.cli)).or_default().push((
                    Point {
                        at,
                        tokens: r.tokens.total(),
                        cost: cost.unwrap_or(0.0),
                    },
                    index,
                )),
                _ => untimed += r.tokens.requests,
            }
        }
    }
    if undated > 0 {
        warnings.push(Warning::general(format!(
            "{undated} requests carry no date and are left out by --since/--until"
        )));
    }
    if no_cwd > 0 {
        warnings.push(Warning::general(format!(
            "{no_cwd} requests do not say which directory they ran in and are left out by --project \
             (their component reports no working directory)"
        )));
    }
    if untimed > 0 {
        warnings.push(Warning::general(format!(
            "{untimed} requests carry no time of day and are in no block \
             (their component reports only days)"
        )));
    }

    let session_row = |(cli, session): &(Arc<str>, String), acc: &Acc| {
        acc.row(Label::Session {
            cli: cli.to_string(),
            session: session.clone(),
            first_day: acc.days.first().map(|d| d.to_string()).unwrap_or_default(),
            last_day: acc.days.last().map(|d| d.to_string()).unwrap_or_default(),
            projects: acc.projects.iter().cloned().collect(),
        })
    };
    let mut session_rows: Vec<Row> = sessions
        .iter()
        .map(|(k, acc)| session_row(k, acc))
        .collect();
    // Oldest activity first, so the latest sessions sit above the total.
    let order = |row: &Row| match &row.label {
        Label::Session {
            cli,
            session,
            first_day,
            last_day,
            ..
        } => (
            last_day.clone(),
            first_day.clone(),
            cli.clone(),
            session.clone(),
        ),
        _ => Default::default(),
    };
    session_rows.sort_by_key(order);

    let rows = match options.by {
        By::Session => session_rows.clone(),
        By::Day => groups
            .iter()
            .map(|((day, _), acc)| acc.row(Label::Day { day: day.clone() }))
            .collect(),
        By::Month => groups
            .iter()
            .map(|((month, _), acc)| {
                acc.row(Label::Month {
                    month: month.clone(),
                })
            })
            .collect(),
        By::Model => groups
            .iter()
            .map(|((cli, model), acc)| {
                let retired_after = coster.lookup(model).and_then(|l| l.retired_after.clone());
                Row {
                    retired: retired_after.is_some(),
                    retired_after,
                    ..acc.row(Label::Model {
                        cli: cli.clone(),
                        model: model.clone(),
                    })
                }
            })
            .collect(),
        By::Block => block_rows(records, &points, options, &mut coster),
    };

    let mut priced_as: Vec<PricedAs> = coster
        .cache
        .iter()
        .filter_map(|(model, lookup)| {
            let l = lookup.as_ref()?;
            Some(PricedAs {
                model: model.clone(),
                price_key: l.key.clone(),
                retired_after: l.retired_after.clone(),
            })
        })
        .collect();
    priced_as.sort_by(|a, b| a.model.cmp(&b.model));

    Report {
        schema_version: SCHEMA_VERSION,
        pricing: prices.source().clone(),
        filters: Filters {
            since: options.since.as_ref().map(Day::to_string),
            until: options.until.as_ref().map(Day::to_string),
            tz: options.zone.name().to_string(),
            project: options.project.clone(),
        },
        by: options.by,
        totals: Totals {
            usage: totals.tokens,
            cost_usd: totals.cost_usd(),
            unpriced_models: totals.unpriced.iter().cloned().collect(),
        },
        groups: rows,
        sessions: session_rows,
        unpriced: unpriced
            .into_iter()
            .map(|((cli, model), usage)| Unpriced {
                cli: cli.to_string(),
                model,
                usage,
            })
            .collect(),
        priced_as,
        files: inputs.files,
        repeated_requests: inputs.repeated_requests,
        rejected_rows: inputs.rejected_rows,
        explain_files: inputs.explain_files,
        warnings,
    }
}

fn block_rows(
    records: &[Record],
    points: &BTreeMap<Arc<str>, Vec<(Point, usize)>>,
    options: &Options,
    coster: &mut Coster<'_>,
) -> Vec<Row> {
    let mut rows: Vec<(i64, Row)> = Vec::new();
    for (cli, cli_points) in points {
        let just_points: Vec<Point> = cli_points.iter().map(|(p, _)| *p).collect();
        for window in blocks::windows(&just_points) {
            let mut acc = Acc::default();
            for &member in &window.members {
                let r = &records[cli_points[member].1];
                let day = match r.when {
                    When::At(ms) => Some(options.zone.day(ms)),
                    _ => None,
                };
                acc.add(r, day.as_ref(), coster.cost(r));
            }
            let active = window.active(options.now);
            let total = acc.tokens.total();
            let row = acc.row(Label::Block {
                cli: cli.to_string(),
                start: format_instant(window.start),
                end: format_instant(window.end),
                last_request: format_instant(window.last),
                active,
                burn_rate: active.then(|| window.burn_rate(total, acc.cost)).flatten(),
                projection: active
                    .then(|| window.projection(options.now, total, acc.cost))
                    .flatten(),
            });
            rows.push((window.start, row));
        }
    }
    rows.sort_by_key(|(start, _)| *start);
    rows.into_iter().map(|(_, row)| row).collect()
}

#[cfg(test)]
mod tests;
