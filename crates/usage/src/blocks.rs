//! `--by block`: usage in the 5-hour windows subscription limits are counted
//! in. A window opens at its first request's hour (UTC) and covers five
//! hours; a request at or after its end, or more than five hours after the
//! previous request, opens the next one. The window still open now gets a
//! burn rate and a projection to its end.

use serde::Serialize;

/// Window length.
pub const HOURS: i64 = 5;
const HOUR_MS: i64 = 3_600_000;
const WINDOW_MS: i64 = HOURS * HOUR_MS;

/// One request's time and size, for windowing.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub at: i64,
    pub tokens: u64,
    pub cost: f64,
}

/// A window: indexes into the points it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub start: i64,
    pub end: i64,
    pub first: i64,
    pub last: i64,
    pub members: Vec<usize>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct BurnRate {
    pub tokens_per_minute: f64,
    pub cost_usd_per_hour: f64,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Projection {
    pub remaining_minutes: i64,
    pub total_tokens: u64,
    pub cost_usd: f64,
}

/// Splits points (any order) into windows, oldest first.
pub fn windows(points: &[Point]) -> Vec<Window> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| points[i].at);
    let mut out: Vec<Window> = Vec::new();
    for i in order {
        let at = points[i].at;
        match out.last_mut() {
            Some(w) if at < w.end && at - w.last <= WINDOW_MS => {
                w.last = at;
                w.members.push(i);
            }
            _ => {
                let start = at.div_euclid(HOUR_MS) * HOUR_MS;
                out.push(Window {
                    start,
                    end: start + WINDOW_MS,
                    first: at,
                    last: at,
                    members: vec![i],
                });
            }
        }
    }
    out
}

impl Window {
    /// Whether the window is still open at `now`.
    pub fn active(&self, now: i64) -> bool {
        now < self.end && now - self.last < WINDOW_MS
    }

    /// Tokens per minute and dollars per hour between the first and last
    /// request; `None` until two requests are a minute apart.
    pub fn burn_rate(&self, tokens: u64, cost: f64) -> Option<BurnRate> {
        let minutes = (self.last - self.first) as f64 / 60_000.0;
        (minutes >= 1.0).then(|| BurnRate {
            tokens_per_minute: tokens as f64 / minutes,
            cost_usd_per_hour: cost / minutes * 60.0,
        })
    }

    /// What the window will hold at its end if the burn rate holds.
    pub fn projection(&self, now: i64, tokens: u64, cost: f64) -> Option<Projection> {
        let rate = self.burn_rate(tokens, cost)?;
        let remaining = ((self.end - now).max(0) as f64) / 60_000.0;
        Some(Projection {
            remaining_minutes: remaining.round() as i64,
            total_tokens: tokens + (rate.tokens_per_minute * remaining).round() as u64,
            cost_usd: cost + rate.cost_usd_per_hour * remaining / 60.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_796_032_800_000; // 2026-11-30T10:00:00Z

    fn at(minutes: i64) -> Point {
        Point {
            at: T0 + minutes * 60_000,
            tokens: 100,
            cost: 1.0,
        }
    }

    #[test]
    fn windows_open_on_the_hour_and_last_five_hours() {
        // 10:20, 11:00, 14:59 in one window; 15:00 opens the next (at its
        // end), 21:00 another (a gap over five hours).
        let points = [at(20), at(60), at(299), at(300), at(660)];
        let w = windows(&points);
        assert_eq!(w.len(), 3);
        assert_eq!((w[0].start, w[0].end), (T0, T0 + WINDOW_MS));
        assert_eq!(w[0].members, [0, 1, 2]);
        assert_eq!(w[1].start, T0 + 5 * HOUR_MS);
        assert_eq!(w[1].members, [3]);
        assert_eq!(w[2].start, T0 + 11 * HOUR_MS);
    }

    #[test]
    fn order_of_input_does_not_matter() {
        let w = windows(&[at(200), at(20), at(100)]);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].members, [1, 2, 0]);
        assert_eq!(
            (w[0].first, w[0].last),
            (T0 + 20 * 60_000, T0 + 200 * 60_000)
        );
    }

    #[test]
    fn the_open_window_burns_and_projects() {
        let w = &windows(&[at(0), at(60)])[0];
        let now = T0 + 120 * 60_000;
        assert!(w.active(now));
        assert!(!w.active(T0 + WINDOW_MS));
        let rate = w.burn_rate(200, 2.0).expect("an hour of data");
        assert_eq!(rate.tokens_per_minute, 200.0 / 60.0);
        assert_eq!(rate.cost_usd_per_hour, 2.0);
        let p = w.projection(now, 200, 2.0).expect("projection");
        assert_eq!(p.remaining_minutes, 180);
        assert_eq!(p.total_tokens, 200 + 600);
        assert!((p.cost_usd - 8.0).abs() < 1e-9);
        // One request: no rate yet.
        assert_eq!(windows(&[at(0)])[0].burn_rate(100, 1.0), None);
    }
}
