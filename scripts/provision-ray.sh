#!/usr/bin/env bash
# Installs Ray (the head, workers, dashboard and its Jobs REST API) from PyPI
# into a venv kept under ~/.cache, for the ray workspace's end-to-end tests.
#
#   scripts/provision-ray.sh
#
# The venv is ${DROVER_RAY_VENV:-$HOME/.cache/drover-ray}; a venv that already
# holds the pinned version is reused. Safe to run again. Prints how long the
# install took so CI logs show the cost of an empty cache.
set -euo pipefail

RAY_VERSION=2.60.0
venv="${DROVER_RAY_VENV:-$HOME/.cache/drover-ray}"
ray="$venv/bin/ray"

have_ray() {
    [[ -x "$ray" ]] && [[ "$("$venv/bin/python" -c 'import ray; print(ray.__version__)' 2>/dev/null)" == "$RAY_VERSION" ]]
}

if ! have_ray; then
    echo "installing ray[default]==$RAY_VERSION into $venv"
    start=$SECONDS
    [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "ray[default]==$RAY_VERSION"
    have_ray || { echo "error: $venv does not hold ray $RAY_VERSION" >&2; exit 1; }
    echo "installed ray $RAY_VERSION in $((SECONDS - start))s"
fi
echo "ray $RAY_VERSION at $ray"
