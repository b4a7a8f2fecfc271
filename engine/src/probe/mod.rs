//! `drover probe-adapter`: a sanitized report of what a CLI and its adapter
//! look like on this machine (docs/probe-adapter.md).

pub mod sanitize;
