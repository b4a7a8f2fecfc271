//! Reading a session's token usage from its transcript through the
//! adapter's `tally`, fed in chunks.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use super::Tokens;
use crate::sandbox::{Adapter, Limits, wit};

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
) -> Option<Tokens> {
    let until = Instant::now() + grace;
    loop {
        if let Some(report) = read(adapter, parser, transcript) {
            return Some(Tokens::of_report(&report));
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
pub fn of_conversation(ctx: &super::Context, conversation: &str) -> Option<Tokens> {
    if ctx.profile.usage_parser == "none" || conversation.is_empty() {
        return None;
    }
    let request = crate::usage::Request {
        clis: vec![ctx.profile.name.clone()],
        ..crate::usage::Request::default()
    };
    let report = crate::usage::run(&ctx.project, &request, &crate::usage::Quiet)
        .map_err(|e| tracing::debug!("usage of {conversation}: {e}"))
        .ok()?;
    let session = report.sessions.iter().find(|s| s.session == conversation)?;
    Some(Tokens {
        input: session.usage.input,
        output: session.usage.output,
        cache_read: session.usage.cache_read,
        cache_write: session.usage.cache_write,
        reasoning: session.usage.reasoning,
        requests: session.usage.requests,
    })
}
