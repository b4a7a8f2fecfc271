//! When a rate limit or quota resets, read from the CLI's own sentence.
//!
//! The engine suspends a seat whose turn ended in a `rate-limit` or `quota`
//! fault and resumes it `retry-after-secs` after the classification, so this
//! module turns every way a CLI states the reset into seconds from now:
//!
//! * a wait: "try again in 2 hours 5 minutes", "Please retry in 35.38s",
//!   "Your quota will reset after 2h21m27s", "resets in 4h", "retrying in 2m
//!   22s", `"retryDelay": "34s"`, `Retry-After: 30`;
//! * a Unix time: `Claude AI usage limit reached|1735689600`, `"resets_at":
//!   1775317531`, `"resetsAtMs": 1796400000000`;
//! * a date and time: `2025-10-20T19:14:08Z`, "reset at 2026-07-30 16:11:46
//!   +0800";
//! * a time of day, with or without a date: "resets 3pm (America/Los_Angeles)",
//!   "resets Sep 24 at 3pm (Australia/Brisbane)", "try again at 3:04 PM.",
//!   "try again at Oct 5th, 2025 3:04 PM.". A time without a date is its next
//!   occurrence.
//!
//! A wall-clock time is read in the zone the sentence names. Where it names
//! none (Codex prints the host's local time), it is read in the profile's
//! `[component_settings] timezone` (an IANA name, `UTC`, or an offset such
//! as `+02:00`): the sandbox has no environment, so the guest cannot see the
//! host's zone, and a guess would be hours off. Without that setting such a
//! time is not read, and the engine backs off instead.
//!
//! IANA names other than `UTC`/`Etc/GMT±N` need the bundled time-zone
//! database (`crate::tz`, the kit's `tz` feature, about 310 KB of .wasm).
//! An adapter whose CLI names zones passes its lookup in the [`Clock`];
//! no other component links it (a feature is unified across the one cargo
//! run that builds them all, so the lookup is a function an adapter hands
//! over, not a code path every adapter reaches). Without it such a zone
//! reads as unknown (`None`), never as a guess.
//!
//! Waits are rounded up to whole seconds (resuming early only fails again).
//! A reset already past reads as 0.

use crate::Profile;
use crate::patterns::compiled;

/// The `[component_settings]` entry naming the host's time zone, for times a
/// CLI prints without one.
pub const TIMEZONE_SETTING: &str = "timezone";

/// A time zone: a fixed offset, or a named zone's rules.
#[derive(Clone)]
pub enum Zone {
    /// Seconds east of UTC.
    Fixed(i32),
    /// A zone whose offset changes (DST), as its name and its offset at a
    /// Unix time; [`crate::tz`] makes these from the bundled database.
    Rules {
        name: String,
        offset_at: std::sync::Arc<dyn Fn(i64) -> i32 + Send + Sync>,
    },
}

impl std::fmt::Debug for Zone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Zone::Fixed(offset) => write!(f, "Fixed({offset})"),
            Zone::Rules { name, .. } => write!(f, "Rules({name})"),
        }
    }
}

impl PartialEq for Zone {
    fn eq(&self, other: &Zone) -> bool {
        match (self, other) {
            (Zone::Fixed(a), Zone::Fixed(b)) => a == b,
            (Zone::Rules { name: a, .. }, Zone::Rules { name: b, .. }) => a == b,
            _ => false,
        }
    }
}

/// Looks up a named zone (an IANA name) that [`Zone::parse`] does not know.
pub type NamedZones = fn(&str) -> Option<Zone>;

impl Zone {
    /// The fixed zone `name` means: `UTC`/`GMT`/`Z`, `Etc/GMT±N` (POSIX
    /// signs: `Etc/GMT+5` is five hours west), or an offset (`+08:00`,
    /// `+0800`, `UTC-5`). Other names need a [`NamedZones`].
    pub fn parse(name: &str) -> Option<Zone> {
        let name = name.trim();
        match name {
            "UTC" | "GMT" | "Z" | "Etc/UTC" | "Etc/GMT" | "Etc/Universal" | "Etc/Zulu"
            | "Universal" | "Zulu" | "UCT" | "Etc/UCT" => return Some(Zone::Fixed(0)),
            _ => {}
        }
        if let Some(hours) = name.strip_prefix("Etc/GMT") {
            // POSIX: the sign is inverted.
            return offset_of(hours).map(|secs| Zone::Fixed(-secs));
        }
        for prefix in ["UTC", "GMT"] {
            if let Some(rest) = name.strip_prefix(prefix) {
                return offset_of(rest).map(Zone::Fixed);
            }
        }
        if name.starts_with(['+', '-']) {
            return offset_of(name).map(Zone::Fixed);
        }
        None
    }

    /// Seconds east of UTC at Unix time `secs`.
    pub fn offset_at(&self, secs: i64) -> i32 {
        match self {
            Zone::Fixed(offset) => *offset,
            Zone::Rules { offset_at, .. } => offset_at(secs),
        }
    }

    /// The Unix time of wall-clock `civil` seconds (seconds since the epoch
    /// as if the zone were UTC). In a DST gap or overlap the offset before
    /// the change is used, which is at most its hour off.
    fn instant_of(&self, civil: i64) -> i64 {
        let first = civil - i64::from(self.offset_at(civil));
        civil - i64::from(self.offset_at(first))
    }
}

/// `±HH`, `±HH:MM`, `±HHMM` as seconds; `None` for anything else (an empty
/// string included) or offsets past ±14 hours.
fn offset_of(text: &str) -> Option<i32> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m) = match digits.len() {
        1 | 2 => (digits.parse::<i32>().ok()?, 0),
        3 => (
            digits[..1].parse::<i32>().ok()?,
            digits[1..].parse::<i32>().ok()?,
        ),
        _ => (
            digits[..2].parse::<i32>().ok()?,
            digits[2..].parse::<i32>().ok()?,
        ),
    };
    (h <= 14 && m < 60).then_some(sign * (h * 3600 + m * 60))
}

/// The time a classification is made at, the host's zone where the
/// profile names it, and how named zones are looked up where the adapter
/// bundles the database.
#[derive(Clone, Debug)]
pub struct Clock {
    /// Unix time in milliseconds.
    pub now_ms: u64,
    /// The zone of times a CLI prints without one.
    pub local: Option<Zone>,
    /// Named zones beyond [`Zone::parse`]'s; `None` reads them as unknown.
    pub names: Option<NamedZones>,
}

impl Clock {
    /// Now (the component's WASI wall clock), with no local zone.
    pub fn system() -> Clock {
        Clock::at(now_ms(), None)
    }

    /// Now, with the zone `[component_settings] timezone` names (an offset
    /// or `UTC`; an IANA name where `names` is given).
    pub fn of(profile: &Profile, names: Option<NamedZones>) -> Clock {
        let mut clock = Clock::system();
        clock.names = names;
        clock.local = crate::setting(profile, TIMEZONE_SETTING).and_then(|n| clock.zone(n));
        clock
    }

    /// A fixed time, for tests.
    pub fn at(now_ms: u64, local: Option<Zone>) -> Clock {
        Clock {
            now_ms,
            local,
            names: None,
        }
    }

    /// The zone `name` means, named ones looked up where this clock can.
    pub fn zone(&self, name: &str) -> Option<Zone> {
        Zone::parse(name).or_else(|| self.names.and_then(|names| names(name)))
    }
}

/// Milliseconds since the Unix epoch, now (0 if the clock is before it).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Seconds from `clock`'s now until the reset `text` states, if it states
/// one. The earliest statement in the text wins.
pub fn reset_after(text: &str, clock: &Clock) -> Option<u32> {
    let now = i64::try_from(clock.now_ms / 1000).ok()?;
    let readings = [
        wait(text),
        unix_time(text).map(|(at, secs)| (at, secs - now)),
        date_time(text, clock.local.as_ref()).map(|(at, secs)| (at, secs - now)),
        time_of_day(text, now, clock).map(|(at, secs)| (at, secs - now)),
    ];
    let (_, secs) = readings.into_iter().flatten().min_by_key(|(at, _)| *at)?;
    Some(u32::try_from(secs.max(0)).unwrap_or(u32::MAX))
}

/// Seconds `text` says to wait, with where the statement starts.
pub fn wait(text: &str) -> Option<(usize, i64)> {
    // Each phrase is followed by a duration. Lowercase ASCII keeps byte
    // offsets equal to the original's.
    const PHRASES: &[&str] = &[
        "try again in ",
        "retry in ",
        "retrying in ",
        "retry after ",
        "retrying after ",
        "reset after ",
        "resets after ",
        "resets in ",
        "reset in ",
        "retry-after: ",
        "retry-after:",
        "\"retrydelay\": \"",
        "\"retrydelay\":\"",
        "quotaresetdelay: '",
        "\"quotaresetdelay\": \"",
        "\"quotaresetdelay\":\"",
    ];
    const SECONDS_KEYS: &[&str] = &["\"resets_in_seconds\":", "\"resets_in_seconds\": "];
    let lower = text.to_ascii_lowercase();
    let mut best: Option<(usize, i64)> = None;
    let mut consider = |at: usize, secs: Option<i64>| {
        if let Some(secs) = secs
            && best.is_none_or(|(b, _)| at < b)
        {
            best = Some((at, secs));
        }
    };
    for phrase in PHRASES {
        for (at, _) in lower.match_indices(phrase) {
            consider(at, duration(&lower[at + phrase.len()..], true));
        }
    }
    for key in SECONDS_KEYS {
        for (at, _) in lower.match_indices(key) {
            consider(at, duration(&lower[at + key.len()..], true));
        }
    }
    best
}

/// A duration such as "4 days 20 hours 9 minutes", "71h15m27.79s", "3h
/// 21min", "250ms" at the start of `text` (lowercase), in whole seconds
/// rounded up. A bare number is seconds when `bare_secs`. `None` when there
/// is none, or when the text ends in a number with no unit after others
/// (a wrapped line: "… 22 hours 11" / "minutes.").
fn duration(text: &str, bare_secs: bool) -> Option<i64> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut total_ms: u128 = 0;
    let mut units = 0;
    loop {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() && i - start < 9 {
            i += 1;
        }
        if i == start {
            break;
        }
        let whole: u128 = text[start..i].parse().ok()?;
        // A fraction, as (numerator, denominator), at most 9 digits.
        let (mut frac, mut denom) = (0u128, 1u128);
        if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                if denom < 1_000_000_000 {
                    frac = frac * 10 + u128::from(bytes[i] - b'0');
                    denom *= 10;
                }
                i += 1;
            }
        }
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        let unit_start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let scale_ms: u128 = match &text[unit_start..i] {
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 1,
            "s" | "sec" | "secs" | "second" | "seconds" => 1000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000,
            "d" | "day" | "days" => 86_400_000,
            "w" | "week" | "weeks" => 604_800_000,
            "" if units == 0 && bare_secs => 1000,
            // "… 11" at the end after other units: the unit wrapped away.
            "" if units > 0 && text[i..].trim().is_empty() => return None,
            _ => {
                if units == 0 {
                    return None;
                }
                break;
            }
        };
        total_ms += whole * scale_ms + frac * scale_ms / denom;
        units += 1;
        if scale_ms == 1000 && unit_start == i {
            break; // a bare number of seconds takes nothing after it
        }
        // Separators between parts: "4 days, 20 hours and 9 minutes".
        let rest = &text[i..];
        let skipped = rest.len()
            - rest
                .trim_start_matches([' ', ','])
                .trim_start_matches("and ")
                .len();
        i += skipped;
        if total_ms > u128::from(u32::MAX) * 1000 {
            return Some(i64::from(u32::MAX));
        }
    }
    (units > 0).then(|| i64::try_from(total_ms.div_ceil(1000)).unwrap_or(i64::MAX))
}

/// A Unix time in seconds (10 digits) or milliseconds (13) that a sentence
/// or error object gives as the reset, as (where, Unix seconds).
fn unix_time(text: &str) -> Option<(usize, i64)> {
    const PATTERN: &str = r#"(?i)(?:limit reached\||"?(?:resets_at|resetsAt|resetsAtMs|reset_at|resetAt|resetAtMs)"?\s*[:=]\s*)(\d{10}|\d{13})\b"#;
    let caps = compiled(PATTERN)?.captures(text)?;
    let whole = caps.get(0)?;
    let digits = caps.get(1)?.as_str();
    let value: i64 = digits.parse().ok()?;
    let secs = if digits.len() == 13 {
        (value + 999) / 1000
    } else {
        value
    };
    Some((whole.start(), secs))
}

/// A date and time (`2025-10-20T19:14:08Z`, `2026-07-30 16:11:46 +0800`)
/// stated as the reset, as (where, Unix seconds). Without an offset it is
/// read in `local`; a date and time elsewhere in a line (a log stamp) is
/// not a reset.
fn date_time(text: &str, local: Option<&Zone>) -> Option<(usize, i64)> {
    const PATTERN: &str = r#"(?i)(?:resets?|reset\w{0,12}|try again|retry)\b[^0-9\n]{0,24}?(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:\s?(Z|[+-]\d{2}:?\d{2})\b)?"#;
    let caps = compiled(PATTERN)?.captures(text)?;
    let num = |n: usize| -> Option<i64> { caps.get(n)?.as_str().parse().ok() };
    let second = caps.get(6).map_or(Some(0), |m| m.as_str().parse().ok())?;
    let civil = civil_secs(num(1)?, num(2)?, num(3)?, num(4)?, num(5)?, second)?;
    let zone = match caps.get(7) {
        Some(m) if m.as_str().eq_ignore_ascii_case("z") => Zone::Fixed(0),
        Some(m) => Zone::Fixed(offset_of(m.as_str())?),
        None => local?.clone(),
    };
    Some((caps.get(0)?.start(), zone.instant_of(civil)))
}

/// A time of day, maybe with a date, stated as the reset ("resets 3pm
/// (America/Los_Angeles)", "try again at Oct 5th, 2025 3:04 PM."), as
/// (where, Unix seconds). Read in the zone named in parentheses, else
/// the clock's local one; a time without a date is its next occurrence after `now`, a date
/// without a year its next occurrence (a day's grace for a stale message).
fn time_of_day(text: &str, now: i64, clock: &Clock) -> Option<(usize, i64)> {
    const PATTERN: &str = r"(?i)\b(?:resets?|try again)\s+(?:at\s+|on\s+)?(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6},?\s+)?(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?(?:\s+(\d{4}),?)?\s+(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\b\.?(?:\s*\(([A-Za-z][A-Za-z0-9_+\-]{0,30}(?:/[A-Za-z0-9_+\-]{1,30}){0,2})\))?";
    let caps = compiled(PATTERN)?.captures(text)?;
    let zone = match caps.get(7) {
        Some(name) => clock.zone(name.as_str())?,
        None => clock.local.clone()?,
    };
    let num = |n: usize| -> Option<i64> { caps.get(n)?.as_str().parse().ok() };
    let hour12 = num(4)?;
    let minute = caps.get(5).map_or(Some(0), |m| m.as_str().parse().ok())?;
    if !(1..=12).contains(&hour12) || minute > 59 {
        return None;
    }
    let pm = caps.get(6)?.as_str().eq_ignore_ascii_case("p");
    let hour = hour12 % 12 + if pm { 12 } else { 0 };
    let local_now = now + i64::from(zone.offset_at(now));
    let (this_year, today_month, today_day) = civil_of(local_now.div_euclid(86_400));
    let at = caps.get(0)?.start();
    let instant = match caps.get(1) {
        Some(month_name) => {
            let month = month_number(month_name.as_str())?;
            let day = num(2)?;
            match caps.get(3) {
                Some(_) => zone.instant_of(civil_secs(num(3)?, month, day, hour, minute, 0)?),
                None => {
                    let this = zone.instant_of(civil_secs(this_year, month, day, hour, minute, 0)?);
                    if this < now - 86_400 {
                        zone.instant_of(civil_secs(this_year + 1, month, day, hour, minute, 0)?)
                    } else {
                        this
                    }
                }
            }
        }
        None => {
            let today = civil_secs(this_year, today_month, today_day, hour, minute, 0)?;
            let instant = zone.instant_of(today);
            if instant > now {
                instant
            } else {
                zone.instant_of(today + 86_400)
            }
        }
    };
    Some((at, instant))
}

/// Seconds since the epoch of a wall-clock date and time read as UTC;
/// `None` for an impossible one.
pub fn civil_secs(year: i64, month: i64, day: i64, hour: i64, min: i64, sec: i64) -> Option<i64> {
    let valid = (1970..=9999).contains(&year)
        && (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && (0..24).contains(&hour)
        && (0..60).contains(&min)
        && (0..=60).contains(&sec);
    if !valid {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3600 + min * 60 + sec)
}

/// (year, month, day) of days since the epoch.
fn civil_of(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

fn month_number(name: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let prefix = name.get(..3)?.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| *m == prefix)
        .and_then(|i| i64::try_from(i + 1).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-15T12:00:00Z, a Thursday in winter (no DST in the north).
    const NOON_UTC: u64 = 1_768_478_400_000;

    fn utc(now_ms: u64) -> Clock {
        Clock::at(now_ms, Some(Zone::Fixed(0)))
    }

    #[test]
    fn the_anchor_is_what_it_says() {
        assert_eq!(civil_secs(2026, 1, 15, 12, 0, 0), Some(1_768_478_400));
        assert_eq!(civil_of(1_768_478_400 / 86_400), (2026, 1, 15));
    }

    #[test]
    fn waits_of_every_shape() {
        let clock = Clock::at(NOON_UTC, None);
        let cases: &[(&str, Option<u32>)] = &[
            ("try again in 2 hours 5 minutes.", Some(7500)),
            (
                "or try again in 4 days 20 hours 9 minutes.",
                Some(((4 * 24 + 20) * 60 + 9) * 60),
            ),
            ("Please retry in 35.380354s.", Some(36)),
            (
                "Your quota will reset after 2h21m27s.",
                Some(2 * 3600 + 21 * 60 + 27),
            ),
            ("quota resets in 4h", Some(4 * 3600)),
            ("Resets in 71h15m27.79s.", Some(71 * 3600 + 15 * 60 + 28)),
            ("(resets in 3h 21min)", Some(3 * 3600 + 21 * 60)),
            ("[retrying in 2m 22s #8]", Some(142)),
            ("Retrying in 60s (attempt 1/10)", Some(60)),
            ("✻ 529 Overloaded · retrying in 1s · attempt 2/2", Some(1)),
            ("Retry-After: 30", Some(30)),
            ("Please retry in 250ms", Some(1)),
            (r#""retryDelay": "34s""#, Some(34)),
            ("quotaResetDelay: '539.477544ms'", Some(1)),
            (r#"{"resets_in_seconds":602705}"#, Some(602_705)),
            ("4 days, 20 hours and 9 minutes", None),
            ("try again in a moment", None),
            ("try again later.", None),
            ("Try again in less than a minute.", None),
            ("no wait here", None),
        ];
        for (line, want) in cases {
            assert_eq!(reset_after(line, &clock), *want, "{line}");
        }
    }

    #[test]
    fn a_wait_cut_by_a_wrapped_line_is_not_read_short() {
        let clock = Clock::at(NOON_UTC, None);
        assert_eq!(
            reset_after("or try again in 5 days 22 hours 11", &clock),
            None
        );
        assert_eq!(
            reset_after("or try again in 5 days 22 hours 11 minutes.", &clock),
            Some(((5 * 24 + 22) * 60 + 11) * 60)
        );
    }

    #[test]
    fn huge_waits_saturate() {
        let clock = Clock::at(NOON_UTC, None);
        assert_eq!(reset_after("resets in 99999999h", &clock), Some(u32::MAX));
    }

    #[test]
    fn unix_times_in_seconds_or_milliseconds() {
        let clock = Clock::at(NOON_UTC, None);
        let in_an_hour = NOON_UTC / 1000 + 3600;
        let cases = [
            format!("Claude AI usage limit reached|{in_an_hour}"),
            format!(r#"{{"resets_at":{in_an_hour}}}"#),
            format!(r#"{{"quota":{{"resetsAtMs":{}}}}}"#, in_an_hour * 1000),
        ];
        for line in &cases {
            assert_eq!(reset_after(line, &clock), Some(3600), "{line}");
        }
        // A stale reset reads as now.
        let past = format!("Claude AI usage limit reached|{}", NOON_UTC / 1000 - 60);
        assert_eq!(reset_after(&past, &clock), Some(0));
        // Other ten-digit numbers are no reset.
        assert_eq!(reset_after("request 1768478400 failed", &clock), None);
    }

    #[test]
    fn dates_and_times_with_and_without_offsets() {
        let no_zone = Clock::at(NOON_UTC, None);
        assert_eq!(
            reset_after("quotaResetTimeStamp: '2026-01-15T13:30:00Z'", &no_zone),
            Some(5400)
        );
        assert_eq!(
            reset_after("It will reset at 2026-01-16 04:00:00 +0800 CST.", &no_zone),
            Some(8 * 3600)
        );
        // No offset: the profile's zone, else nothing.
        let line = "Your limit will reset at 2026-01-15 14:00:00";
        assert_eq!(reset_after(line, &no_zone), None);
        assert_eq!(reset_after(line, &utc(NOON_UTC)), Some(7200));
        let berlin = Clock::at(NOON_UTC, Some(Zone::Fixed(3600)));
        assert_eq!(reset_after(line, &berlin), Some(3600));
        // A log stamp is no reset.
        assert_eq!(
            reset_after(r#""timestamp":"2026-01-15T16:40:06.075Z""#, &utc(NOON_UTC)),
            None
        );
    }

    #[test]
    fn times_of_day_are_their_next_occurrence() {
        let clock = utc(NOON_UTC);
        assert_eq!(
            reset_after("try again at 3:04 PM.", &clock),
            Some(3 * 3600 + 240)
        );
        // 11 AM has passed today: tomorrow's.
        assert_eq!(
            reset_after("try again at 11:00 AM.", &clock),
            Some(23 * 3600)
        );
        assert_eq!(
            reset_after("Your limit will reset at 12am.", &clock),
            Some(12 * 3600)
        );
        assert_eq!(reset_after("resets 12pm (UTC)", &clock), Some(24 * 3600));
        // In the zone named: 3pm at UTC-5 is 20:00 UTC.
        assert_eq!(
            reset_after(
                "Your limit will reset at 3pm (Etc/GMT+5).",
                &Clock::at(NOON_UTC, None)
            ),
            Some(8 * 3600)
        );
        // Without a zone anywhere, no guess.
        assert_eq!(
            reset_after("try again at 3:04 PM.", &Clock::at(NOON_UTC, None)),
            None
        );
    }

    #[test]
    fn times_with_dates() {
        let clock = utc(NOON_UTC);
        assert_eq!(
            reset_after("or try again at Jan 17th, 2026 1:47 AM.", &clock),
            Some(37 * 3600 + 47 * 60)
        );
        assert_eq!(
            reset_after("or try again at Jan 17, 2026, 1:47 AM.", &clock),
            Some(37 * 3600 + 47 * 60)
        );
        assert_eq!(
            reset_after("resets Jan 16 at 3pm (UTC)", &clock),
            Some(27 * 3600)
        );
        // A date without a year that has passed is next year's.
        let next_year = reset_after("resets Jan 10 at 3pm (UTC)", &clock).map(u64::from);
        assert_eq!(next_year, Some((365 - 5) * 86_400 + 3 * 3600));
    }

    #[test]
    fn zones_parse_or_are_unknown() {
        assert_eq!(Zone::parse("UTC"), Some(Zone::Fixed(0)));
        assert_eq!(Zone::parse("Etc/GMT+5"), Some(Zone::Fixed(-5 * 3600)));
        assert_eq!(Zone::parse("Etc/GMT-14"), Some(Zone::Fixed(14 * 3600)));
        assert_eq!(Zone::parse("+05:30"), Some(Zone::Fixed(5 * 3600 + 1800)));
        assert_eq!(Zone::parse("UTC-3"), Some(Zone::Fixed(-3 * 3600)));
        assert_eq!(Zone::parse("+99:00"), None);
        assert_eq!(Zone::parse("Mars/Olympus"), None);
        assert_eq!(Zone::parse(""), None);
    }

    #[test]
    fn named_zones_are_looked_up_only_where_the_clock_can() {
        // A stand-in lookup: "Test/Plus2" is UTC+2.
        fn names(name: &str) -> Option<Zone> {
            (name == "Test/Plus2").then_some(Zone::Fixed(7200))
        }
        let line = "resets 3pm (Test/Plus2)";
        assert_eq!(reset_after(line, &Clock::at(NOON_UTC, None)), None);
        let mut clock = Clock::at(NOON_UTC, None);
        clock.names = Some(names);
        // 3pm at UTC+2 is 13:00 UTC.
        assert_eq!(reset_after(line, &clock), Some(3600));
    }
}
