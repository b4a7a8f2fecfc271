//! Reading a session's token usage from its transcript through the
//! adapter's `tally`, fed in chunks, and what it cost.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::Tokens;
use crate::pricing::Prices;
use crate::sandbox::{Adapter, Limits, wit};

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
        let tokens = crate::usage::Tokens::of_wit(&entry.usage);
        if tokens.total() == 0 {
            return Some(sum);
        }
        let found = prices().find(&entry.model)?;
        Some(sum + found.rates.cost_of_sum(&tokens.billable())?)
    })
}

const CHUNK: usize = 1 << 20;

/// Usage of one transcript, or `None` when the parser finds none (or the
/// profile has no parser). Errors are logged and read as `None`.
pub fn read(adapter: &Adapter, parser: &str, transcript: &Path) -> Option<wit::UsageReport> {
    if parser == "none" {
        return None;
    }
    let limits = Limits {
        memory_bytes: 256 << 20,
        ..adapter.limits()
    };
    let mut tally = adapter.tally(parser, limits).ok()?;
    let mut file = std::fs::File::open(transcript).ok()?;
    tally.begin_file(&transcript.to_string_lossy()).ok()?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        if let Err(e) = tally.feed(&buf[..n]) {
            tracing::warn!(path = %transcript.display(), "usage tally failed: {e}");
            return None;
        }
    }
    tally.finish().ok().flatten()
}

/// Polls [`read`] until it reports usage or `grace` passes (CLIs that flush
/// totals late, like Copilot). A zero grace reads exactly once.
pub fn read_with_grace(
    adapter: &Adapter,
    parser: &str,
    transcript: &Path,
    grace: Duration,
) -> Option<Spent> {
    let until = Instant::now() + grace;
    loop {
        if let Some(report) = read(adapter, parser, transcript) {
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
