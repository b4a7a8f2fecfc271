#!/usr/bin/env bash
# Builds adapter.js (next to this script) into a drover adapter component
# with componentize-qjs (QuickJS), against the WIT in wit/ next to it. The
# JavaScript example and every `drover adapter new --lang js` scaffold use
# this script.
#
#   build.sh [OUT.wasm]
#
# OUT defaults to target/<this directory's name>.wasm next to the script.
# componentize-qjs (the npm package jco uses for QuickJS components) is
# installed with npm into ${DROVER_JS_TOOLS:-$HOME/.cache/drover-js} the
# first time; later runs reuse it. Needs node and npm on PATH. Safe to run
# again.
set -euo pipefail

COMPONENTIZE_QJS_VERSION=0.4.5
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/target/$(basename "$here").wasm}"
tools="${DROVER_JS_TOOLS:-$HOME/.cache/drover-js}"
tool="$tools/node_modules/.bin/componentize-qjs"
manifest="$tools/node_modules/componentize-qjs/package.json"

have_tool() {
    [[ -x "$tool" && -f "$manifest" ]] &&
        grep -q "\"version\": \"$COMPONENTIZE_QJS_VERSION\"" "$manifest"
}

if ! have_tool; then
    command -v npm >/dev/null || { echo "error: npm is not on PATH (install Node.js 20 or later)" >&2; exit 1; }
    echo "installing componentize-qjs@$COMPONENTIZE_QJS_VERSION into $tools"
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --loglevel=error \
        "componentize-qjs@$COMPONENTIZE_QJS_VERSION"
    have_tool || { echo "error: $tool is not componentize-qjs $COMPONENTIZE_QJS_VERSION" >&2; exit 1; }
fi

mkdir -p "$(dirname "$out")"
# Build next to the target and rename, so a failed build never leaves a
# half-written component where the engine would load it.
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT

# --sync: the engine calls exports synchronously (no component-model async).
# --stub-wasi: the adapter needs no files, environment, clocks or network,
# so every WASI import is replaced by a trapping stub and the component
# imports only drover:adapter/host-log and drover:adapter/types.
start=$(date +%s.%N)
"$tool" --wit "$here/wit" --world adapter --js "$here/adapter.js" --sync --stub-wasi -o "$tmp" >/dev/null
end=$(date +%s.%N)
mv -f "$tmp" "$out"
trap - EXIT

size=$(stat -c %s "$out")
awk -v out="$out" -v size="$size" -v t="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" \
    -v v="$COMPONENTIZE_QJS_VERSION" \
    'BEGIN { printf "built %s\n  size: %d bytes (%.1f MB)\n  build time: %.1f s (componentize-qjs %s, --sync --stub-wasi)\n", out, size, size / 1e6, t, v }'
