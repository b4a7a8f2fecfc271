#!/usr/bin/env bash
# Builds app.py into a drover adapter component with componentize-py.
#
#   examples/python-adapter/build.sh [OUT.wasm]
#
# OUT defaults to <repo>/target/examples/python_adapter.wasm. componentize-py
# is installed with pip into a venv at ${DROVER_PY_VENV:-$HOME/.cache/drover-py}
# the first time; later runs reuse it. Safe to run again.
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$repo/target/examples/python_adapter.wasm}"
venv="${DROVER_PY_VENV:-$HOME/.cache/drover-py}"
tool="$venv/bin/componentize-py"

have_tool() {
    [[ -x "$tool" ]] && [[ "$("$tool" --version 2>/dev/null)" == "componentize-py $COMPONENTIZE_PY_VERSION" ]]
}

if ! have_tool; then
    echo "installing componentize-py==$COMPONENTIZE_PY_VERSION into $venv"
    [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "componentize-py==$COMPONENTIZE_PY_VERSION"
    have_tool || { echo "error: $tool is not componentize-py $COMPONENTIZE_PY_VERSION" >&2; exit 1; }
fi

mkdir -p "$(dirname "$out")"
# Build next to the target and rename, so a failed build never leaves a
# half-written component where the engine would load it.
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT

# --stub-wasi: the adapter needs no files, environment, clocks or network,
# so every WASI import is replaced by a trapping stub and the component
# imports only drover:adapter/host-log.
start=$(date +%s.%N)
"$tool" -d "$repo/wit" -w adapter componentize --stub-wasi -p "$here" app -o "$tmp"
end=$(date +%s.%N)
mv -f "$tmp" "$out"
trap - EXIT

size=$(stat -c %s "$out")
awk -v out="$out" -v size="$size" -v t="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" \
    -v v="$COMPONENTIZE_PY_VERSION" \
    'BEGIN { printf "built %s\n  size: %d bytes (%.1f MB)\n  build time: %.1f s (componentize-py %s, --stub-wasi)\n", out, size, size / 1e6, t, v }'
