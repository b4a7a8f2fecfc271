//! Reading a session's token usage from its transcript through the
//! adapter's `tally`, fed in chunks, and what it cost; and finding a
//! conversation's transcript where the adapter says its CLI keeps them, when
//! no hook named it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::Tokens;
use crate::component::Component;
use drover_gate::read::{Roots, secret_stores};
use drover_gate::{Cleared, Provenance, Sourced};
use drover_profile::Profile;
use drover_types::wit;
use drover_usage::discover::Area;
use drover_usage::glob::{self, Budget, Scope};
use drover_usage::pricing::Prices;

/// What a session (or a turn) spent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub tokens: Tokens,
    /// `None` when some of the tokens are of a model the price table does
    /// not know.
    pub cost_usd: Option<f64>,
}

impl Spent {
    pub fn of_report(report: &wit::UsageReport) -> Spent {
        Spent {
            tokens: Tokens::of_report(report),
            cost_usd: cost_of(report),
        }
    }

    pub fn add(&mut self, other: &Spent) {
        self.tokens.add(&other.tokens);
        self.cost_usd = self.cost_usd.zip(other.cost_usd).map(|(a, b)| a + b);
    }

    /// What is left of a conversation's whole spend once its earlier turns'
    /// is taken off; the cost is unknown when either is.
    pub fn minus(&self, earlier: &Spent) -> Spent {
        Spent {
            tokens: self.tokens.minus(&earlier.tokens),
            cost_usd: self
                .cost_usd
                .zip(earlier.cost_usd)
                .map(|(a, b)| (a - b).max(0.0)),
        }
    }
}

/// The table sessions bill from: the snapshot with the user's
/// `pricing.json`, or the snapshot alone when that file is broken (`drover
/// doctor` names the error).
fn prices() -> &'static Prices {
    static PRICES: OnceLock<Prices> = OnceLock::new();
    PRICES.get_or_init(|| {
        Prices::load(None).unwrap_or_else(|e| {
            tracing::warn!("{e}; sessions are priced from the embedded table alone");
            Prices::embedded()
        })
    })
}

/// Dollars for a usage report's entries (each a sum of requests, so base
/// prices); `None` when an entry with tokens names a model the table does
/// not know.
pub fn cost_of(report: &wit::UsageReport) -> Option<f64> {
    report.entries.iter().try_fold(0.0, |sum, entry| {
        let tokens = drover_usage::Tokens::of_wit(&entry.usage);
        if tokens.total() == 0 {
            return Some(sum);
        }
        let found = prices().find(&entry.model)?;
        Some(
            sum + found
                .rates
                .cost_of_sum(&drover_usage::record::billable(&tokens))?,
        )
    })
}

/// Usage of a conversation's transcripts, or `None` when the parser finds
/// none (or the profile has no parser). Errors are logged and read as
/// `None`.
pub fn read(
    adapter: &dyn Component,
    parser: &str,
    transcripts: &[Cleared<PathBuf>],
) -> Option<wit::UsageReport> {
    if parser == "none" || transcripts.is_empty() {
        return None;
    }
    adapter.tally_files(parser, transcripts)
}

/// Polls [`read`] until it reports usage or `grace` passes (CLIs that flush
/// totals late, like Copilot). A zero grace reads exactly once.
pub fn read_with_grace(
    adapter: &dyn Component,
    parser: &str,
    transcripts: &[Cleared<PathBuf>],
    grace: Duration,
) -> Option<Spent> {
    let until = Instant::now() + grace;
    loop {
        if let Some(report) = read(adapter, parser, transcripts) {
            return Some(Spent::of_report(&report));
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(
            Duration::from_millis(500).min(until.saturating_duration_since(Instant::now())),
        );
    }
}

/// A conversation's usage so far, found among the CLI's transcripts (the
/// adapter's transcript locations, read as `drover usage` reads them), for
/// sessions that learned no transcript path from hooks. `None` when no
/// transcript carries that conversation.
pub fn of_conversation(ctx: &super::Context, conversation: &str) -> Option<Spent> {
    if ctx.profile().usage_parser == "none" || conversation.is_empty() {
        return None;
    }
    let request = drover_usage::Request {
        clis: vec![ctx.profile().name.clone()],
        ..drover_usage::Request::default()
    };
    let report = drover_usage::run(&ctx.project, &request, &drover_usage::Quiet)
        .map_err(|e| tracing::debug!("usage of {conversation}: {e}"))
        .ok()?;
    let row = report.sessions.iter().find(|row| {
        matches!(&row.label, drover_usage::Label::Session { session, .. } if session == conversation)
    })?;
    Some(Spent {
        tokens: row.usage,
        cost_usd: row.cost_usd,
    })
}

/// [`of_conversation`] once the CLI has written this turn's usage: a CLI
/// may write its transcript a moment after it answers (Grok's updates
/// file), so until `grace` has passed, a conversation with no usage yet, or
/// with no more than `prior` (what the turns before this one recorded), is
/// read again. What it holds then is the answer.
pub fn of_conversation_with_grace(
    ctx: &super::Context,
    conversation: &str,
    prior: Option<&Spent>,
    grace: Duration,
) -> Option<Spent> {
    let until = Instant::now() + grace;
    loop {
        let whole = of_conversation(ctx, conversation);
        let written = match (&whole, prior) {
            (Some(now), Some(before)) => now.tokens != before.tokens,
            (found, _) => found.is_some(),
        };
        if written || Instant::now() >= until {
            return whole;
        }
        std::thread::sleep(
            Duration::from_millis(250).min(until.saturating_duration_since(Instant::now())),
        );
    }
}

/// The transcripts of `conversation`: among the files the adapter's
/// `transcript-locations` name for the profile's parser, those whose path
/// has a directory or file stem equal to the conversation id (Copilot:
/// `session-state/<id>/events.jsonl`, Claude: `<id>.jsonl` and its
/// subagents' `<id>/subagents/*.jsonl`, Muse: `<id>/session.jsonl` and
/// `<id>/subagent/*/session.jsonl`), oldest first. For headless turns whose
/// output carries no usage and whose hooks did not run (or name no
/// transcript). `cwd` is the CLI's working directory and `env` looks up a
/// variable in the CLI's environment (HOME and the component's
/// `location-env`).
pub fn transcripts_of(
    adapter: &dyn Component,
    profile: &Profile,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    conversation: &str,
) -> Vec<Cleared<PathBuf>> {
    if profile.usage_parser == "none" || conversation.is_empty() {
        return Vec::new();
    }
    let Some((area, globs)) = locations(adapter, profile, cwd, env) else {
        return Vec::new();
    };
    // The same confinement and bounds as `drover usage`: only the CLI's
    // own directories, within one walking budget.
    let mut budget = Budget::new();
    let mut found: Vec<Cleared<PathBuf>> = globs
        .iter()
        .filter(|g| g.parser == profile.usage_parser)
        .filter_map(|g| match area.roots_of(g) {
            Ok(found) => Some((g, found)),
            Err(why) => {
                tracing::warn!("{}: {why}", profile.name);
                None
            }
        })
        .flat_map(|(g, (base, roots))| {
            glob::expand(
                &base,
                &g.pattern,
                Scope::Confined(&roots),
                &mut budget,
                &mut |path, why| tracing::warn!("{}: {why}", path.display()),
            )
        })
        .map(|found| found.file)
        .filter(|file| names_conversation(file.get(), conversation))
        .collect();
    if let Some(stopped) = &budget.stopped {
        tracing::warn!("looking for the transcript of {conversation}: {stopped}");
    }
    found.sort_by_key(|file| {
        std::fs::metadata(file.get())
            .and_then(|m| m.modified())
            .ok()
    });
    found.dedup_by(|a, b| a.get() == b.get());
    found
}

/// A transcript path a hook payload (or a record of one) named, let through
/// only when it lies where a CLI keeps files: the directories of the
/// adapter's `transcript-locations` (confined as `drover usage` confines
/// them), home, or the seat's working directory; never in a secret store,
/// never through a link out. Home stays in because a CLI may write its
/// transcripts where its component does not look (the scripted stand-in's
/// `~/.scripted-cli`). `seat_env` is the seat's own environment, over the
/// profile's and drover's.
pub fn confine(
    ctx: &super::Context,
    cwd: &Path,
    seat_env: &[(String, String)],
    path: &Path,
) -> Option<Cleared<PathBuf>> {
    let env = |name: &str| {
        seat_env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| ctx.profile().env.get(name).cloned())
            .or_else(|| std::env::var(name).ok())
    };
    let home = PathBuf::from(env("HOME").filter(|h| !h.is_empty())?);
    let mut roots = Roots::new(secret_stores(&home));
    if let Some((area, globs)) = locations(ctx.adapter(), ctx.profile(), cwd, &env) {
        for glob in &globs {
            match area.roots_of(glob) {
                Ok((_, found)) => roots.merge(found),
                Err(why) => tracing::warn!("{}: {why}", ctx.profile().name),
            }
        }
    }
    for (what, dir) in [
        ("home", Sourced::new(home, Provenance::User)),
        (
            "the seat's directory",
            Sourced::new(cwd.to_path_buf(), Provenance::Operator),
        ),
    ] {
        if let Err(refused) = roots.add(what, dir) {
            tracing::warn!("{refused}");
        }
    }
    roots
        .confine(
            "the transcript a hook named",
            Sourced::new(path, Provenance::Output),
        )
        .map_err(|refused| tracing::warn!("{refused}"))
        .ok()
}

/// What the adapter answers for where its CLI keeps transcripts, with the
/// area those answers are confined to.
fn locations(
    adapter: &dyn Component,
    profile: &Profile,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<(Area, Vec<wit::TranscriptGlob>)> {
    let home = PathBuf::from(env("HOME").filter(|h| !h.is_empty())?);
    let description = adapter.describe().ok()?;
    let context = wit::LocationContext {
        home: home.to_string_lossy().into_owned(),
        cwd: cwd.to_string_lossy().into_owned(),
        env: description
            .location_env
            .iter()
            .filter_map(|name| env(name).map(|v| (name.clone(), v)))
            .collect(),
    };
    let globs = adapter
        .transcript_locations(&profile.to_wit(), &context)
        .ok()?;
    let globs = globs
        .into_iter()
        .filter(|g| glob::check(&g.pattern).is_ok())
        .collect();
    Some((Area::new(Some(&home), cwd, &context.env), globs))
}

/// Whether a transcript path names the conversation: a directory equal to
/// the id, or a file stem equal to it.
fn names_conversation(path: &Path, conversation: &str) -> bool {
    path.file_stem().is_some_and(|s| s == conversation)
        || path
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .any(|c| c.as_os_str() == conversation)
}

#[cfg(test)]
mod tests {
    use super::names_conversation;
    use std::path::Path;

    #[test]
    fn a_transcript_names_its_conversation_by_directory_or_stem() {
        let id = "76799294-3daa-40b6-96f5-4c0631600087";
        let copilot = format!("/h/.copilot/session-state/{id}/events.jsonl");
        assert!(names_conversation(Path::new(&copilot), id));
        let claude = format!("/h/.claude/projects/-w/{id}.jsonl");
        assert!(names_conversation(Path::new(&claude), id));
        let other = "/h/.copilot/session-state/0d3c/events.jsonl";
        assert!(!names_conversation(Path::new(other), id));
        // A prefix or a file name that only contains the id is not it.
        let longer = format!("/h/.copilot/session-state/{id}-2/events.jsonl");
        assert!(!names_conversation(Path::new(&longer), id));
        assert!(!names_conversation(
            Path::new("/h/events.jsonl"),
            "events.jsonl"
        ));
    }
}
