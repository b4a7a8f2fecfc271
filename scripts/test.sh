#!/usr/bin/env bash
# The whole test suite, with every set-up step a fresh machine needs:
# the wasm32-wasip2 target, tmux, Node 22 and the pinned vendor CLIs (in
# ~/.cache/drover-clis), componentize-py (in ~/.cache/drover-py) and
# componentize-qjs (in ~/.cache/drover-js) for the Python and JavaScript
# example adapters and scaffolds, Ray (in ~/.cache/drover-ray, installed with
# uv from ~/.cache/drover-uv) for the ray workspace's tests against a real
# local cluster; then formatting, lints, the tests of both workspaces (the
# engine's and the components'), and `drover adapter check` on the examples.
#
# Honours CARGO_TARGET_DIR (CI keeps it under ~/.cache). Safe to re-run:
# every install step skips what is already there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"
target="${CARGO_TARGET_DIR:-$repo/target}"

started=$SECONDS
# Each step says how far into the run it starts, so CI logs show where the
# time goes.
step() { printf '\n== %s (at %ds)\n' "$*" $((SECONDS - started)); }

step "toolchain: wasm32-wasip2"
rustup target add wasm32-wasip2

step "tmux"
if ! command -v tmux >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux
    else
        sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux
    fi
fi
tmux -V

step "vendor CLIs (Node 22, pinned npm packages, the grok wheel)"
scripts/provision-clis.sh

step "Python example adapter (componentize-py)"
export DROVER_PYTHON_ADAPTER="$target/examples/python-adapter.wasm"
examples/python-adapter/build.sh "$DROVER_PYTHON_ADAPTER"

step "JavaScript example adapter (componentize-qjs)"
export DROVER_JS_ADAPTER="$target/examples/js-adapter.wasm"
examples/js-adapter/build.sh "$DROVER_JS_ADAPTER"

step "Ray (ray[default] from PyPI with uv, for the ray workspace's cluster tests)"
scripts/provision-ray.sh

step "formatting"
cargo fmt --all --check
(cd components && cargo fmt --all --check)

step "lints"
cargo clippy --workspace --all-targets -j2 -- -D warnings
(cd components && cargo clippy --workspace --all-targets -j2 -- -D warnings)

step "build (the e2e tests run the workspace's binaries)"
# With --tests the binaries get the same feature set `cargo test` uses, so
# the test step below reuses them instead of compiling wasmtime again.
cargo build --workspace --bins --tests -j2

step "tests: components"
(cd components && cargo test --workspace -j2)

step "tests: engine, end to end, real CLIs"
cargo test --workspace -j2

step "adapter check: the example adapters, conformance included"
# The compile cache the tests filled, so the components are not compiled again.
export DROVER_CACHE_DIR="$target/tmp/drover-cache"
"$target/debug/drover" adapter check "$DROVER_PYTHON_ADAPTER"
"$target/debug/drover" adapter check "$DROVER_JS_ADAPTER"
