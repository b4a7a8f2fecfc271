//! The adapter components compiled into this binary (built from
//! `components/` by `build.rs`).

pub use drover_sandbox::Builtin;

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
