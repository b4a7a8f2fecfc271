//! Reads the WIT package version (`package drover:adapter@X.Y.Z;`) from
//! `wit/adapter.wit`, the file the latest bindings are generated from, so
//! `WIT_VERSION` cannot drift from it.
#![allow(
    clippy::disallowed_macros,
    reason = "a build script talks to cargo on stdout; nothing here reaches a user's terminal"
)]

use std::path::Path;

fn main() {
    let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit/adapter.wit");
    println!("cargo:rerun-if-changed={}", wit.display());
    let text =
        std::fs::read_to_string(&wit).unwrap_or_else(|e| panic!("reading {}: {e}", wit.display()));
    let version = text
        .lines()
        .find_map(|line| line.strip_prefix("package drover:adapter@"))
        .and_then(|rest| rest.trim_end().strip_suffix(';'))
        .unwrap_or_else(|| {
            panic!(
                "{} has no `package drover:adapter@X.Y.Z;` line",
                wit.display()
            )
        });
    println!("cargo:rustc-env=DROVER_WIT_VERSION={version}");
}
