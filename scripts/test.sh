#!/usr/bin/env bash
# The whole test suite, with every set-up step a fresh machine needs:
# the wasm32-wasip2 target, tmux, Node 22 and the pinned vendor CLIs (in
# ~/.cache/drover-clis), componentize-py (in ~/.cache/drover-py) and
# componentize-qjs (in ~/.cache/drover-js) for the Python and JavaScript
# example adapters and scaffolds, Ray (in ~/.cache/drover-ray, installed with
# uv from ~/.cache/drover-uv) for the ray workspace's tests against a real
# local cluster; then formatting, lints, the tests of both workspaces (the
# engine's and the components'), and `drover adapter check` on the examples.
# The installs run in the background while both workspaces compile, and one
# compile per workspace both lints and builds (scripts/clippy-rustc).
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

step "toolchain: wasm32-wasip2, rustfmt, clippy"
rustup target add wasm32-wasip2
rustup component add rustfmt clippy

step "formatting"
cargo fmt --all --check
(cd components && cargo fmt --all --check)

# The tools the tests need install in the background while the workspaces
# compile: downloads wait on the network, the compile on the CPU.
setup_log="$target/setup.log"
mkdir -p "$target/examples"
export DROVER_PYTHON_ADAPTER="$target/examples/python-adapter.wasm"
export DROVER_JS_ADAPTER="$target/examples/js-adapter.wasm"
# Installs Debian packages when a command is missing.
apt_install() {
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}
setup() {
    step "tmux"
    command -v tmux >/dev/null 2>&1 || apt_install tmux
    tmux -V
    step "chromium and chromedriver (drover serve's browser test)"
    { command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } \
        || apt_install chromium chromium-driver
    chromium --version
    step "vendor CLIs (Node 22, pinned npm packages, the grok wheel)"
    scripts/provision-clis.sh
    step "Python example adapter (componentize-py)"
    examples/python-adapter/build.sh "$DROVER_PYTHON_ADAPTER"
    step "JavaScript example adapter (componentize-qjs)"
    examples/js-adapter/build.sh "$DROVER_JS_ADAPTER"
    step "Ray (ray[default] from PyPI with uv, for the ray workspace's cluster tests)"
    scripts/provision-ray.sh
}
step "tools, in the background (log: $setup_log)"
setup >"$setup_log" 2>&1 </dev/null &
setup_pid=$!
# A failed or interrupted run does not leave the installs running.
trap 'kill "$setup_pid" 2>/dev/null || true' EXIT

# One compile lints and builds each workspace: its own crates go through
# clippy-driver (scripts/clippy-rustc), so the lints cost no second compile
# of the dependencies, and `cargo test` below reuses every artifact (same
# flags, same features: --all-targets turns the dev-dependencies on as
# `cargo test` does). Incremental compilation only slows a one-off build and
# fills the disk.
export RUSTC_WORKSPACE_WRAPPER="$repo/scripts/clippy-rustc"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

step "build and lints: the engine's workspace (every target)"
cargo build --workspace --all-targets -j2

step "build and lints: the components' workspace (natively, every target)"
(cd components && cargo build --workspace --all-targets -j2)

step "waiting for the tools"
setup_status=0
wait "$setup_pid" || setup_status=$?
trap - EXIT
cat "$setup_log"
if [ "$setup_status" != 0 ]; then
    echo "installing the tools failed (exit $setup_status); the log is above" >&2
    exit "$setup_status"
fi

step "tests: components"
(cd components && cargo test --workspace -j2)

step "tests: engine, end to end, real CLIs"
# Most end-to-end cases wait on a CLI (the real ones' fault cases sit in
# their own back-off for minutes), not on the CPU: four at a time keep both
# cores busy where two left them idle.
RUST_TEST_THREADS="${RUST_TEST_THREADS:-4}" cargo test --workspace -j2

step "adapter check: the example adapters, conformance included"
# The compile cache the tests filled, so the components are not compiled again.
export DROVER_CACHE_DIR="$target/tmp/drover-cache"
"$target/debug/drover" adapter check "$DROVER_PYTHON_ADAPTER"
"$target/debug/drover" adapter check "$DROVER_JS_ADAPTER"
step "done"
