//! drover-drive: driving turns. Four drivers, each on `drover-turn`'s
//! watchdog and verdict rules: [`headless`] runs one non-interactive process
//! per turn; [`interactive`] drives a CLI in a pane (tmux, herdr); [`acp`]
//! speaks the Agent Client Protocol to a long-lived agent process; [`ray`]
//! runs each turn as a Ray job. [`recover`] settles a run whose drover died
//! from its files, with the same rules.
//!
//! What the drivers share is re-exported from `drover-turn`, so a driver
//! names it the same way whichever crate it lives in.

pub mod acp;
pub mod headless;
pub mod interactive;
pub mod jules;
pub mod ray;
pub mod recover;

pub use drover_turn::*;
