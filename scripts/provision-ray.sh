#!/usr/bin/env bash
# Installs Ray (the head, workers, dashboard and its Jobs REST API) from PyPI
# into a venv kept under ~/.cache, for the ray workspace's end-to-end tests.
#
#   scripts/provision-ray.sh
#
# The venv is ${DROVER_RAY_VENV:-$HOME/.cache/drover-ray}; a venv that already
# holds the pinned version is reused. Safe to run again. Prints how long the
# install took so CI logs show the cost of an empty cache.
#
# The installer is uv (itself a PyPI wheel, unpacked with pip --target under
# ${DROVER_UV_DIR:-$HOME/.cache/drover-uv}, no venv needed): it fetches and
# unpacks ray[default]'s 57 distributions in parallel, and `uv venv` skips
# ensurepip (docs/benchmarks.md has the measured times). Bytecode is compiled
# at install, as pip does: Ray's processes compiling their sources at start
# can miss the raylet's 30 s registration window on a loaded machine.
set -euo pipefail

RAY_VERSION=2.60.0
UV_VERSION=0.13.8
venv="${DROVER_RAY_VENV:-$HOME/.cache/drover-ray}"
uv_dir="${DROVER_UV_DIR:-$HOME/.cache/drover-uv}"
uv="$uv_dir/bin/uv"
ray="$venv/bin/ray"

have_ray() {
    [[ -x "$ray" ]] && [[ "$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("ray"))' 2>/dev/null)" == "$RAY_VERSION" ]]
}

have_uv() {
    [[ -x "$uv" ]] && [[ "$("$uv" --version 2>/dev/null)" == "uv $UV_VERSION"* ]]
}

if ! have_ray; then
    start=$SECONDS
    # The interpreter itself, not a version manager's shim (pyenv's rehash
    # after a pip install can block on a lock another user holds).
    python="$(python3 -c 'import sys; print(sys.executable)')"
    if ! have_uv; then
        echo "installing uv $UV_VERSION into $uv_dir"
        rm -rf "$uv_dir"
        "$python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
            --root-user-action=ignore --target "$uv_dir" "uv==$UV_VERSION"
        have_uv || { echo "error: $uv_dir does not hold uv $UV_VERSION" >&2; exit 1; }
    fi
    echo "installing ray[default]==$RAY_VERSION into $venv"
    export UV_CACHE_DIR="$uv_dir/cache"
    # Replaced whole (an older Ray, a broken install), but only a venv.
    [[ ! -e "$venv" || -f "$venv/pyvenv.cfg" ]] || { echo "error: $venv exists and is not a venv" >&2; exit 1; }
    rm -rf "$venv"
    "$uv" venv --quiet --python "$python" "$venv"
    "$uv" pip install --quiet --compile-bytecode --python "$venv/bin/python" \
        "ray[default]==$RAY_VERSION"
    have_ray || { echo "error: $venv does not hold ray $RAY_VERSION" >&2; exit 1; }
    echo "installed ray $RAY_VERSION in $((SECONDS - start))s"
fi
echo "ray $RAY_VERSION at $ray"
