//! The session deadline on two clocks. The monotonic clock ignores wall
//! steps (an NTP step back cannot extend a session) but stops while the host
//! is suspended; the wall clock keeps counting through a suspend. Whichever
//! expires first ends the session, and the result says which.

use std::time::{Duration, Instant, SystemTime};

pub struct Deadline {
    mono: Instant,
    wall: SystemTime,
}

impl Deadline {
    pub fn after(timeout: Duration) -> Deadline {
        Deadline {
            mono: Instant::now() + timeout,
            wall: SystemTime::now() + timeout,
        }
    }

    /// For tests: a deadline whose clocks expire independently.
    pub fn at(mono: Instant, wall: SystemTime) -> Deadline {
        Deadline { mono, wall }
    }

    /// `Some("monotonic" | "wall" | "both")` once expired.
    pub fn expired(&self) -> Option<&'static str> {
        let mono = Instant::now() >= self.mono;
        let wall = SystemTime::now() >= self.wall;
        match (mono, wall) {
            (true, true) => Some("both"),
            (true, false) => Some("monotonic"),
            (false, true) => Some("wall"),
            (false, false) => None,
        }
    }

    /// Time left on the monotonic clock (all waits are monotonic).
    pub fn remaining(&self) -> Duration {
        self.mono.saturating_duration_since(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_clock_expires_the_deadline() {
        let hour = Duration::from_secs(3600);
        let suspended = Deadline::at(
            Instant::now() + hour,
            SystemTime::now() - Duration::from_secs(1),
        );
        assert_eq!(suspended.expired(), Some("wall"));
        let stepped_back = Deadline::at(
            Instant::now() - Duration::from_millis(1),
            SystemTime::now() + hour,
        );
        assert_eq!(stepped_back.expired(), Some("monotonic"));
        assert_eq!(Deadline::after(hour).expired(), None);
        assert!(Deadline::after(hour).remaining() > Duration::from_secs(3500));
    }
}
