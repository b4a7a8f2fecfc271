//! Usage bookkeeping shared by every parser: a chunked line reader, the
//! (session, day, model) ledger (which also keeps the requests a parser
//! reports, for the 0.2 `request-tally`), and the tally plumbing.
//!
//! A parser only sees whole lines. Lines split across `feed` calls are
//! joined; a line longer than [`MAX_LINE_BYTES`] is dropped and counted as
//! rejected rather than growing the guest's memory without bound.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

use crate::{Adapter, AdapterError, Request, Usage, UsageEntry, UsageReport, unsupported};

pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Per-cell usage totals. Cells are addressed by index so a parser can
/// adjust a row it counted earlier without re-hashing its strings.
#[derive(Default)]
pub struct Ledger {
    cells: Vec<((String, String, String), Usage)>,
    index: HashMap<u64, usize>,
    rejected: u64,
    saw_usage: bool,
    /// Request key -> (cell, output counted so far).
    seen: HashMap<u64, (usize, u64)>,
    /// Requests not yet taken, when a request tally collects them.
    requests: Option<Vec<Request>>,
}

impl Ledger {
    /// The index of the (session, day, model) cell, created empty if new.
    pub fn cell(&mut self, session: &str, day: &str, model: &str) -> usize {
        let key = key_of(&[session, day, model]);
        if let Some(&at) = self.index.get(&key)
            && let Some(((s, d, m), _)) = self.cells.get(at)
            && s == session
            && d == day
            && m == model
        {
            return at;
        }
        let at = self.cells.len();
        self.cells.push((
            (session.to_string(), day.to_string(), model.to_string()),
            Usage::ZERO,
        ));
        self.index.insert(key, at);
        at
    }

    pub fn add_at(&mut self, cell: usize, usage: &Usage) {
        self.saw_usage = true;
        if let Some((_, total)) = self.cells.get_mut(cell) {
            total.add(usage);
        }
    }

    pub fn add(&mut self, session: &str, day: &str, model: &str, usage: &Usage) {
        let cell = self.cell(session, day, model);
        self.add_at(cell, usage);
    }

    /// One model call. Copies of it (the same non-empty `key`) count once:
    /// a later copy with more output (a streamed response written again as
    /// it grows) adds the difference, and is passed on again so the engine
    /// keeps that copy; other copies are dropped.
    pub fn request(&mut self, request: Request) {
        self.saw_usage = true;
        let key = (!request.key.is_empty()).then(|| key_of(&[&request.key]));
        if let Some(key) = key
            && let Some((cell, counted)) = self.seen.get_mut(&key)
        {
            if request.output > *counted {
                let extra = Usage {
                    output: request.output - *counted,
                    ..Usage::ZERO
                };
                *counted = request.output;
                let cell = *cell;
                self.add_at(cell, &extra);
                if let Some(requests) = self.requests.as_mut() {
                    requests.push(request);
                }
            }
            return;
        }
        let usage = Usage {
            input: request.input,
            output: request.output,
            cache_read: request.cache_read,
            cache_write: request
                .cache_write_5m
                .saturating_add(request.cache_write_1h),
            reasoning: request.reasoning,
            requests: 1,
        };
        let cell = self.cell(&request.session, day_of(&request.timestamp), &request.model);
        self.add_at(cell, &usage);
        if let Some(key) = key {
            self.seen.insert(key, (cell, request.output));
        }
        if let Some(requests) = self.requests.as_mut() {
            requests.push(request);
        }
    }

    /// The requests reported since the last call (for a request tally).
    pub fn take_requests(&mut self) -> Vec<Request> {
        self.requests
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Records that the data carries usage even if nothing was added (so
    /// the report is zero rather than none).
    pub fn mark_seen(&mut self) {
        self.saw_usage = true;
    }

    pub fn reject(&mut self) {
        self.rejected += 1;
    }

    pub fn report(&self) -> Option<UsageReport> {
        if !self.saw_usage {
            return None;
        }
        let mut merged: BTreeMap<&(String, String, String), Usage> = BTreeMap::new();
        for (key, usage) in &self.cells {
            merged.entry(key).or_insert(Usage::ZERO).add(usage);
        }
        Some(UsageReport {
            entries: merged
                .into_iter()
                .filter(|(_, usage)| !usage.is_zero())
                .map(|((session, day, model), usage)| UsageEntry {
                    session: session.clone(),
                    day: day.clone(),
                    model: model.clone(),
                    usage,
                })
                .collect(),
            rejected_rows: self.rejected,
        })
    }
}

/// Joins chunks into lines.
#[derive(Default)]
pub struct Lines {
    partial: Vec<u8>,
    skipping: bool,
}

impl Lines {
    pub fn feed(
        &mut self,
        chunk: &[u8],
        ledger: &mut Ledger,
        mut each: impl FnMut(&[u8], &mut Ledger),
    ) {
        let mut rest = chunk;
        while let Some(pos) = memchr::memchr(b'\n', rest) {
            let (head, tail) = rest.split_at(pos);
            rest = &tail[1..];
            if self.skipping {
                self.skipping = false;
                self.partial.clear();
                continue;
            }
            if self.partial.is_empty() {
                each(head, ledger);
            } else {
                self.partial.extend_from_slice(head);
                let line = std::mem::take(&mut self.partial);
                each(&line, ledger);
            }
        }
        if self.skipping {
            return;
        }
        if self.partial.len() + rest.len() > MAX_LINE_BYTES {
            self.partial.clear();
            self.skipping = true;
            ledger.reject();
            return;
        }
        self.partial.extend_from_slice(rest);
    }

    /// The last line, if the data did not end with a newline.
    pub fn finish(&mut self, ledger: &mut Ledger, mut each: impl FnMut(&[u8], &mut Ledger)) {
        if !self.skipping && !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            each(&line, ledger);
        }
        self.partial.clear();
        self.skipping = false;
    }
}

/// One usage parser's row logic.
pub trait RowParser {
    /// A new file starts; per-file state (cumulative baselines) resets here.
    fn begin_file(&mut self, _name: &str) {}
    /// One whole line (without its newline).
    fn row(&mut self, line: &[u8], ledger: &mut Ledger);
    /// The file ended.
    fn end_file(&mut self, _ledger: &mut Ledger) {}
    /// Whether the parser reports its usage with [`Ledger::request`] (one
    /// row per model call with its key), so it can serve a request tally.
    fn reports_requests(&self) -> bool {
        false
    }
}

struct TallyState {
    parser: Option<Box<dyn RowParser>>,
    parser_name: String,
    ledger: Ledger,
    lines: Lines,
    in_file: bool,
}

impl TallyState {
    fn end_file(&mut self) {
        if let Some(parser) = self.parser.as_mut()
            && self.in_file
        {
            let p = parser.as_mut();
            self.lines
                .finish(&mut self.ledger, |line, ledger| p.row(line, ledger));
            p.end_file(&mut self.ledger);
        }
        self.in_file = false;
    }
}

/// What the `tally` resource does: files begin, chunks are cut into lines
/// for one [`RowParser`], and `finish` reports the ledger. The export wraps
/// it (interior mutability, because resource methods take `&self`); tests
/// and benchmarks drive it directly.
pub struct ChunkedTally {
    state: RefCell<TallyState>,
}

impl ChunkedTally {
    /// A tally for `parser_name`; `parser` is `None` when the adapter has no
    /// parser of that name, and then every `feed` answers `unsupported`.
    pub fn new(parser_name: &str, parser: Option<Box<dyn RowParser>>) -> ChunkedTally {
        ChunkedTally {
            state: RefCell::new(TallyState {
                parser,
                parser_name: parser_name.to_string(),
                ledger: Ledger::default(),
                lines: Lines::default(),
                in_file: false,
            }),
        }
    }

    /// A tally with `A`'s parser of that name.
    pub fn of<A: Adapter>(parser_name: &str) -> ChunkedTally {
        ChunkedTally::new(parser_name, A::usage_parser(parser_name))
    }

    /// A tally that also keeps the requests its parser reports, for
    /// [`ChunkedTally::take_requests`].
    pub fn requesting(parser_name: &str, parser: Option<Box<dyn RowParser>>) -> ChunkedTally {
        let tally = ChunkedTally::new(parser_name, parser);
        tally.state.borrow_mut().ledger.requests = Some(Vec::new());
        tally
    }

    /// Whether the parser reports requests (see [`RowParser::reports_requests`]).
    pub fn reports_requests(&self) -> bool {
        self.state
            .borrow()
            .parser
            .as_ref()
            .is_some_and(|p| p.reports_requests())
    }

    /// The requests reported since the last call.
    pub fn take_requests(&self) -> Vec<Request> {
        self.state.borrow_mut().ledger.take_requests()
    }

    /// Rows that looked like usage but could not be read, so far.
    pub fn rejected_rows(&self) -> u64 {
        self.state.borrow().ledger.rejected
    }

    pub fn begin_file(&self, name: &str) {
        let mut state = self.state.borrow_mut();
        state.end_file();
        if let Some(parser) = state.parser.as_mut() {
            parser.begin_file(name);
        }
        state.in_file = true;
    }

    pub fn feed(&self, chunk: &[u8]) -> Result<(), AdapterError> {
        let mut guard = self.state.borrow_mut();
        let state = &mut *guard;
        let Some(parser) = state.parser.as_mut() else {
            return Err(unsupported(format!(
                "unknown usage parser '{}'",
                state.parser_name
            )));
        };
        if !state.in_file {
            parser.begin_file("");
            state.in_file = true;
        }
        let p = parser.as_mut();
        state
            .lines
            .feed(chunk, &mut state.ledger, |line, ledger| p.row(line, ledger));
        Ok(())
    }

    pub fn finish(&self) -> Option<UsageReport> {
        let mut state = self.state.borrow_mut();
        state.end_file();
        state.ledger.report()
    }
}

/// `YYYY-MM-DD` from an ISO-8601 timestamp, or empty.
pub fn day_of(timestamp: &str) -> &str {
    let bytes = timestamp.as_bytes();
    let looks_like_date = bytes.len() >= 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[5..7].iter().all(u8::is_ascii_digit)
        && bytes[8..10].iter().all(u8::is_ascii_digit);
    if looks_like_date {
        &timestamp[..10]
    } else {
        ""
    }
}

/// `YYYY-MM-DD` (UTC) of a Unix time in milliseconds; empty for 0 and for
/// times past year 9999 (neither is a real message time). opencode and Qwen Code write epoch
/// milliseconds where other CLIs write ISO dates.
pub fn day_of_millis(millis: u64) -> String {
    if millis == 0 {
        return String::new();
    }
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let days = (millis / 86_400_000) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    if year > 9999 {
        return String::new();
    }
    format!("{year:04}-{month:02}-{day:02}")
}

/// RFC 3339 (UTC, with milliseconds) of a Unix time in milliseconds;
/// empty where [`day_of_millis`] is.
pub fn rfc3339_of_millis(millis: u64) -> String {
    let day = day_of_millis(millis);
    if day.is_empty() {
        return day;
    }
    let of_day = millis % 86_400_000;
    let (h, m, s, ms) = (
        of_day / 3_600_000,
        of_day / 60_000 % 60,
        of_day / 1000 % 60,
        of_day % 1000,
    );
    format!("{day}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// A stable 64-bit key for dedupe sets (FNV-1a; deterministic across runs,
/// unlike the std hasher's random keys).
pub fn key_of(parts: &[&str]) -> u64 {
    let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
    for part in parts {
        part.hash(&mut hasher);
    }
    hasher.finish()
}

struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A JSON number as u64: negative, fractional or non-numeric values are 0.
pub fn count(value: Option<&serde_json::Value>) -> u64 {
    match value {
        Some(serde_json::Value::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

/// Whether the line contains `needle` (cheap prefilter before parsing).
pub fn contains(line: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(line, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counter;
    impl RowParser for Counter {
        fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
            let n = std::str::from_utf8(line)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok());
            match n {
                Some(n) => ledger.add(
                    "s",
                    "",
                    "m",
                    &Usage {
                        input: n,
                        requests: 1,
                        ..Usage::ZERO
                    },
                ),
                None => ledger.reject(),
            }
        }
    }
    fn counting(name: &str) -> ChunkedTally {
        let parser = (name == "count").then(|| Box::new(Counter) as Box<dyn RowParser>);
        ChunkedTally::new(name, parser)
    }

    #[test]
    fn lines_split_across_chunks_are_joined() {
        let tally = counting("count");
        for chunk in [&b"1"[..], b"2\n3", b"0\n", b"x\n4"] {
            tally.feed(chunk).expect("feeds");
        }
        let report = tally.finish().expect("usage");
        assert_eq!(report.total().input, 12 + 30 + 4);
        assert_eq!(report.total().requests, 3);
        assert_eq!(report.rejected_rows, 1);
    }

    #[test]
    fn no_rows_is_none_and_unknown_parser_is_an_error() {
        let tally = counting("count");
        assert_eq!(tally.finish(), None);
        let other = counting("nope");
        assert!(matches!(
            other.feed(b"1\n"),
            Err(AdapterError::Unsupported(_))
        ));
    }

    #[test]
    fn an_overlong_line_is_dropped_not_buffered() {
        let tally = counting("count");
        let big = vec![b'9'; MAX_LINE_BYTES + 1];
        tally.feed(&big).expect("feeds");
        tally.feed(b"99\n5\n").expect("feeds");
        let report = tally.finish().expect("usage");
        assert_eq!(report.total().input, 5);
        assert_eq!(report.rejected_rows, 1);
    }

    #[test]
    fn files_end_their_last_line() {
        let tally = counting("count");
        tally.begin_file("a");
        tally.feed(b"7").expect("feeds");
        tally.begin_file("b");
        tally.feed(b"8").expect("feeds");
        assert_eq!(tally.finish().expect("usage").total().input, 15);
    }

    #[test]
    fn epoch_millis_become_utc_days() {
        assert_eq!(day_of_millis(1_796_032_800_000), "2026-11-30");
        assert_eq!(day_of_millis(1_796_083_199_000), "2026-11-30");
        assert_eq!(day_of_millis(1_796_083_200_000), "2026-12-01");
        assert_eq!(day_of_millis(951_782_400_000), "2000-02-29");
        assert_eq!(day_of_millis(1_835_438_400_000), "2028-02-29");
        assert_eq!(day_of_millis(1), "1970-01-01");
        assert_eq!(day_of_millis(253_402_297_200_000), "9999-12-31");
        assert_eq!(day_of_millis(0), "");
        assert_eq!(day_of_millis(u64::MAX), "");
    }

    #[test]
    fn epoch_millis_become_rfc3339_times() {
        assert_eq!(
            rfc3339_of_millis(1_764_756_001_234),
            "2025-12-03T10:00:01.234Z"
        );
        assert_eq!(rfc3339_of_millis(0), "");
    }

    #[test]
    fn day_of_reads_iso_dates_only() {
        assert_eq!(day_of("2026-11-30T12:00:00Z"), "2026-11-30");
        assert_eq!(day_of("yesterday"), "");
        assert_eq!(day_of("2026-1-3"), "");
    }
}

/// A token count read leniently: a non-negative integer is itself; floats
/// are truncated; anything else (null, text, negative) is 0. Transcripts are
/// hostile input and one odd field must not drop a whole row.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct Count(pub u64);

impl<'de> serde::Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Count, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Count;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a token count")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Count, E> {
                Ok(Count(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Count, E> {
                Ok(Count(u64::try_from(v).unwrap_or(0)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Count, E> {
                Ok(Count(if v.is_finite() && v > 0.0 {
                    v as u64
                } else {
                    0
                }))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_str<E>(self, _: &str) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_unit<E>(self) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Count, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Count(0))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Count, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Count(0))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}
