//! The ray workspace's driver: each turn of a seat runs on a Ray cluster
//! ([`drover_ray`] is the cluster client). By default a long-lived worker
//! job per placement takes turns from a [`mailbox`] as they come, under a
//! [`lease`] its driver renews; with `[ray] warm = false` each turn is a
//! job of its own. Either way the node runs one headless turn and prints
//! its journal and result as [`wire`] lines; [`driver`] gives, follows and
//! settles.

pub mod driver;
pub mod lease;
pub mod mailbox;
pub mod wire;
