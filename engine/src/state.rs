//! drover's state directory, confined to the project: the `drover-state`
//! crate, which the relay binary shares, re-exported under its old path.

pub use drover_state::*;
