//! The JavaScript example adapter (examples/js-adapter, componentize-qjs,
//! built by its build.sh) answers through the sandbox as the Python one does.

use crate::support;

use support::echo;

#[test]
fn the_js_adapter_answers_through_the_sandbox() {
    let Some(bytes) = echo::component("DROVER_JS_ADAPTER", "js-adapter") else {
        return;
    };
    echo::assert_answers_like_echo_cli(&bytes, "js-example");
}
