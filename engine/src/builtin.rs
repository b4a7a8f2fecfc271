//! The adapter components compiled into this binary (built from
//! `components/` by `build.rs`).

/// One embedded component.
pub struct Builtin {
    pub name: &'static str,
    pub bytes: &'static [u8],
    /// SHA-256 of `bytes`, computed at build time (the compile-cache key).
    pub sha256: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/builtin_components.rs"));
include!(concat!(env!("OUT_DIR"), "/builtin_profiles.rs"));

/// Every built-in component.
pub fn all() -> &'static [Builtin] {
    BUILTIN
}

/// The built-in component called `name`.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|b| b.name == name)
}
