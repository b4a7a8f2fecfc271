//! The test guests of `tests/guests/` (misbehaving components, one that
//! fails every conformance check it can, ones of other WIT versions), built
//! by this crate's build script. drover's tests take this crate as a
//! dev-dependency, so only they build the guests.

/// The directory the guests' `.wasm` files are in
/// (`drover_test_hostile.wasm`, ...).
pub const DIR: &str = env!("DROVER_TEST_GUESTS_DIR");
