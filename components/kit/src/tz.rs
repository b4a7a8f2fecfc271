//! Named time zones from the bundled tz database (jiff's), for adapters
//! whose CLI names the zone of a reset time. Pass [`zone`] as a
//! [`Clock`](crate::resets::Clock)'s `names`; only components that do link
//! the database (about 310 KB of .wasm).

use crate::resets::Zone;

/// The zone an IANA name means (`America/Los_Angeles`, `Asia/Calcutta`),
/// with its DST rules.
pub fn zone(name: &str) -> Option<Zone> {
    let tz = jiff::tz::TimeZone::get(name).ok()?;
    Some(Zone::Rules {
        name: name.to_string(),
        offset_at: std::sync::Arc::new(move |secs| {
            jiff::Timestamp::from_second(secs)
                .map(|ts| tz.to_offset(ts).seconds())
                .unwrap_or(0)
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resets::{Clock, reset_after};

    #[test]
    fn named_zones_follow_their_rules() {
        // Los Angeles is UTC-8 in January and UTC-7 in July.
        let la = zone("America/Los_Angeles").expect("bundled");
        assert_eq!(la.offset_at(1_768_478_400), -8 * 3600);
        assert_eq!(la.offset_at(1_784_116_800), -7 * 3600);
        assert_eq!(zone("Mars/Olympus"), None);
        // 2026-01-15T12:00:00Z: 3pm in Los Angeles is 23:00 UTC, 11 h on;
        // 8:30pm in Tokyo (UTC+9) was 11:30 UTC, so tomorrow's.
        let mut clock = Clock::at(1_768_478_400_000, None);
        clock.names = Some(zone);
        assert_eq!(
            reset_after("resets 3pm (America/Los_Angeles)", &clock),
            Some(11 * 3600)
        );
        assert_eq!(
            reset_after("resets 8:30pm (Asia/Tokyo)", &clock),
            Some(23 * 3600 + 1800)
        );
    }
}
