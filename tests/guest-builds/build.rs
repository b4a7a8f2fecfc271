//! Builds the test guests in `tests/guests/` for `wasm32-wasip2` and tells
//! the crate where they are.
#![allow(
    clippy::disallowed_macros,
    reason = "a build script talks to cargo on stdout; nothing here reaches a user's terminal"
)]

use drover_build::{
    build_workspace, check_target_installed, release_dir, repo_root, wasm_target_dir, watch,
};

fn main() {
    let guests = repo_root().join("tests").join("guests");
    check_target_installed();
    // The test guests share the components' target dir, so a warm cache
    // stays warm; cargo's lock on it orders this run and drover-profile's.
    let target_dir = wasm_target_dir();
    watch(&guests);
    build_workspace(&guests, &target_dir, &[]);
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rustc-env=DROVER_TEST_GUESTS_DIR={}",
        release_dir(&target_dir).display()
    );
}
