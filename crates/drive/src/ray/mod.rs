//! The ray workspace's driver: each turn of a seat runs as a Ray job on a
//! cluster ([`drover_ray`] is the cluster client). The node runs one
//! headless turn (`drover ray-turn`) and prints its journal and result in
//! the job's log ([`wire`]); [`driver`] submits, follows and settles.

pub mod driver;
pub mod wire;
