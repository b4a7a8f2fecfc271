#!/usr/bin/env bash
# Builds app.py (next to this script) into a drover adapter component with
# componentize-py, against the WIT in wit/ next to it. The Python example
# and every `drover adapter new --lang python` scaffold use this script.
#
#   build.sh [OUT.wasm]
#
# OUT defaults to target/<this directory's name>.wasm next to the script.
# componentize-py is installed with pip into a venv at
# ${DROVER_PY_VENV:-$HOME/.cache/drover-py} the first time; later runs reuse
# it. Safe to run again.
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/target/$(basename "$here").wasm}"
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
# componentize-py does not follow a symlinked module: where drover_kit.py is
# a link (the example's is), its real directory goes on the path too.
paths=(-p "$here")
kit_dir="$(dirname "$(readlink -f "$here/drover_kit.py")")"
[[ "$kit_dir" == "$here" ]] || paths+=(-p "$kit_dir")
start=$(date +%s.%N)
"$tool" -d "$here/wit" -w adapter componentize --stub-wasi "${paths[@]}" app -o "$tmp"
end=$(date +%s.%N)
mv -f "$tmp" "$out"
trap - EXIT

size=$(stat -c %s "$out")
awk -v out="$out" -v size="$size" -v t="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" \
    -v v="$COMPONENTIZE_PY_VERSION" \
    'BEGIN { printf "built %s\n  size: %d bytes (%.1f MB)\n  build time: %.1f s (componentize-py %s, --stub-wasi)\n", out, size, size / 1e6, t, v }'
