//! Dates for `drover usage`: request times to local days and months in the
//! `--tz` time zone (UTC by default), and the `--since`/`--until` days.

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// A calendar day, `YYYY-MM-DD` (strings of this form compare as dates).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(String);

impl Day {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `YYYY-MM`.
    pub fn month(&self) -> &str {
        &self.0[..7]
    }
}

impl FromStr for Day {
    type Err = String;
    fn from_str(s: &str) -> Result<Day, String> {
        let b = s.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        let ok = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && digits(0..4)
            && digits(5..7)
            && digits(8..10);
        let month: u32 = s.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(0);
        let day: u32 = s.get(8..10).and_then(|d| d.parse().ok()).unwrap_or(0);
        if ok && (1..=12).contains(&month) && (1..=31).contains(&day) {
            Ok(Day(s.to_string()))
        } else {
            Err(format!("'{s}' is not a date of the form YYYY-MM-DD"))
        }
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `--tz` zone: where a request's day and month are read.
#[derive(Debug, Clone)]
pub struct Zone {
    tz: TimeZone,
    name: String,
}

impl Default for Zone {
    fn default() -> Zone {
        Zone {
            tz: TimeZone::UTC,
            name: "UTC".to_string(),
        }
    }
}

impl FromStr for Zone {
    type Err = String;
    /// An IANA name (`Europe/Paris`), `UTC`, or `local` for this machine's
    /// zone.
    fn from_str(s: &str) -> Result<Zone, String> {
        if s.eq_ignore_ascii_case("utc") {
            return Ok(Zone::default());
        }
        if s == "local" {
            let tz = TimeZone::try_system()
                .map_err(|e| format!("cannot tell this machine's time zone: {e}"))?;
            let name = tz.iana_name().unwrap_or("local").to_string();
            return Ok(Zone { tz, name });
        }
        TimeZone::get(s)
            .map(|tz| Zone {
                tz,
                name: s.to_string(),
            })
            .map_err(|_| format!("'{s}' is not a time zone name (e.g. UTC, Europe/Paris, local)"))
    }
}

impl Zone {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The local day of a time in milliseconds since the epoch.
    pub fn day(&self, millis: i64) -> Day {
        let at = Timestamp::from_millisecond(millis).unwrap_or(Timestamp::UNIX_EPOCH);
        Day(self
            .tz
            .to_datetime(at)
            .date()
            .strftime("%Y-%m-%d")
            .to_string())
    }
}

impl Zone {
    /// The local wall-clock time of a time in milliseconds since the epoch,
    /// `HH:MM:SS`.
    pub fn time_of_day(&self, millis: i64) -> String {
        let at = Timestamp::from_millisecond(millis).unwrap_or(Timestamp::UNIX_EPOCH);
        self.tz.to_datetime(at).strftime("%H:%M:%S").to_string()
    }
}

/// Milliseconds since the epoch of an RFC 3339 time (`2026-11-30T10:00:00Z`,
/// any offset); `None` for anything else.
pub fn parse_instant(text: &str) -> Option<i64> {
    text.parse::<Timestamp>()
        .ok()
        .map(Timestamp::as_millisecond)
}

/// An instant as RFC 3339 UTC with milliseconds.
pub fn format_instant(millis: i64) -> String {
    Timestamp::from_millisecond(millis)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

/// Now, in milliseconds since the epoch.
pub fn now_millis() -> i64 {
    Timestamp::now().as_millisecond()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_parse_strictly() {
        assert!("2026-11-30".parse::<Day>().is_ok());
        for bad in [
            "2026-13-01",
            "2026-1-1",
            "yesterday",
            "2026-11-30T00",
            "2026-00-10",
        ] {
            assert!(bad.parse::<Day>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_request_near_midnight_falls_on_the_zones_day() {
        let at = parse_instant("2026-11-30T23:30:00Z").expect("instant");
        assert_eq!(Zone::default().day(at).as_str(), "2026-11-30");
        let tokyo: Zone = "Asia/Tokyo".parse().expect("zone");
        assert_eq!(tokyo.day(at).as_str(), "2026-12-01");
        let la: Zone = "America/Los_Angeles".parse().expect("zone");
        let early = parse_instant("2026-12-01T05:00:00+00:00").expect("instant");
        assert_eq!(la.day(early).as_str(), "2026-11-30");
        assert_eq!(la.day(early).month(), "2026-11");
        assert!("Mars/Olympus".parse::<Zone>().is_err());
    }

    #[test]
    fn instants_round_trip_and_garbage_is_none() {
        let at = parse_instant("2026-11-30T10:00:00.250+01:00").expect("instant");
        assert_eq!(format_instant(at), "2026-11-30T09:00:00.250Z");
        assert_eq!(parse_instant("2026-11-30"), None);
        assert_eq!(parse_instant(""), None);
    }
}
