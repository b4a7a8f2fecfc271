//! The engine's end-to-end tests, one module per concern, linked into one
//! binary (each test binary links wasmtime and the whole engine). Select
//! by module: `cargo test -p drover --test integration real_claude::`.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a test program: printing what it saw is the point"
)]

mod support;

mod adapter_new;
mod arbitrary_input;
mod builtin_components;
mod compile_cache;
mod conformance;
mod dialogs;
mod draft_profile;
mod generic_adapter;
mod js_adapter;
mod jules;
mod mcp;
mod muse;
mod probe_adapter;
mod probe_live;
mod python_adapter;
mod real_claude;
mod real_codex;
mod real_continue;
mod real_copilot;
mod real_droid;
mod real_gemini;
mod real_grok;
mod real_kilo;
mod real_opencode;
mod real_qwen;
mod relay_and_recovery;
mod running_as_root;
mod sandbox_containment;
mod seats;
mod security;
mod serve;
mod sessions;
mod team;
mod untrusted_checkout;
mod untrusted_component;
mod usage;
mod usage_prefilter;
mod wit_versions;
