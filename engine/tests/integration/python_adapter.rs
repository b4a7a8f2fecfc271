//! The WIT is usable outside Rust: the componentize-py example adapter
//! (examples/python-adapter, built by its build.sh) loads in drover and
//! answers through the sandbox like a Rust one.

use crate::support;

use support::echo;

#[test]
fn the_python_adapter_answers_through_the_sandbox() {
    let Some(bytes) = echo::component("DROVER_PYTHON_ADAPTER", "python-adapter") else {
        return;
    };
    echo::assert_answers_like_echo_cli(&bytes, "python-example");
}
