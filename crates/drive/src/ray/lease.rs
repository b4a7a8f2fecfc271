//! The lease a driving drover holds on a turn it gave a Ray worker: it
//! rewrites `<turn>.lease` every [`RENEW_EVERY`]; the worker notes each
//! change on its own clock (so the two machines' clocks never meet), stops
//! the turn at once when the lease is revoked (removed), and stops it and
//! retires when the lease has not changed for [`LAPSE_AFTER`]: a driver
//! killed outright (SIGKILL, a lost laptop) stops renewing, and its turn
//! ends within that bound plus the CLI's teardown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::mailbox::Mailbox;

pub const RENEW_EVERY: Duration = Duration::from_secs(2);
/// Ten missed renewals: a busy machine or a slow shared filesystem delays
/// a few, a dead driver all of them.
pub const LAPSE_AFTER: Duration = Duration::from_secs(20);

/// The driver's side: renews until dropped.
pub struct Renewer {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Renewer {
    pub fn start(mailbox: Mailbox, turn: String) -> Renewer {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut count = 0u64;
                let mut last = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    if last.elapsed() >= RENEW_EVERY {
                        count += 1;
                        last = Instant::now();
                        if let Err(e) = mailbox.renew(&turn, count) {
                            tracing::debug!("cannot renew the turn's lease: {e}");
                        }
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        Renewer {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Renewer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the worker concludes from the lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Yes,
    /// The driver removed it: stop the turn, keep serving.
    Revoked,
    /// No renewal for [`LAPSE_AFTER`]: the driver is gone.
    Lapsed,
}

/// The worker's side: one turn's lease as last seen.
pub struct Watch {
    last: Option<String>,
    changed: Instant,
    lapse_after: Duration,
}

impl Watch {
    pub fn new(lapse_after: Duration) -> Watch {
        Watch {
            last: None,
            changed: Instant::now(),
            lapse_after,
        }
    }

    /// Looks at the lease's current text (`None`: the file is gone).
    pub fn see(&mut self, now: Option<String>) -> Held {
        let Some(now) = now else {
            return Held::Revoked;
        };
        if self.last.as_deref() != Some(now.as_str()) {
            self.last = Some(now);
            self.changed = Instant::now();
        }
        if self.changed.elapsed() >= self.lapse_after {
            Held::Lapsed
        } else {
            Held::Yes
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_lapses_only_when_it_stops_changing() {
        let mut watch = Watch::new(Duration::ZERO);
        // Zero patience: any unchanged look after the first is a lapse.
        assert_eq!(watch.see(Some("1".into())), Held::Lapsed);
        let mut watch = Watch::new(Duration::from_secs(3600));
        assert_eq!(watch.see(Some("1".into())), Held::Yes);
        assert_eq!(watch.see(Some("2".into())), Held::Yes);
        assert_eq!(watch.see(None), Held::Revoked);
    }
}
