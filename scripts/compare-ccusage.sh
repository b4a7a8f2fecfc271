#!/usr/bin/env bash
# drover usage's cost against ccusage 20.0.24's own (`ccusage claude daily
# --json --offline --mode calculate`), per model, on generated Claude
# corpora whose models both price tables know:
# - mixed (gen-claude-corpus.py --plain --subagents with Opus 4.1, Opus 4.5,
#   Sonnet 4.5 and Haiku 4.5): rows both tools count alike, subagent files
#   and resumed sessions, and claude-opus-4-1-20250805, which the latest
#   LiteLLM no longer lists. `cargo bench -p drover --bench usage_ccusage`
#   takes cost, wall and CPU time of both side by side in one run on it;
# - plain (gen-claude-corpus.py --plain): rows both tools count alike, so a
#   cost difference is a pricing difference;
# - the bench corpus of scripts/bench-usage.sh with its models renamed (its
#   future model ids are in neither ccusage's offline table nor, for two of
#   them, LiteLLM's): every way real transcripts trip a reader.
#
#   scripts/compare-ccusage.sh [SIZE_MB]
#
# Env: DROVER_BENCH_DIR (default ~/.cache/drover-bench), CARGO_TARGET_DIR,
# CARGO_JOBS (default 1), DROVER_BENCH_RUNS (the bench's rounds, default 5). Prints a markdown table for docs/benchmarks.md;
# docs/usage.md ("Against ccusage") explains each difference.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${1:-400}
WORK=${DROVER_BENCH_DIR:-$HOME/.cache/drover-bench}
CORPUS=$WORK/claude-corpus-$SIZE
PRICED=$WORK/claude-corpus-$SIZE-priced
PLAIN=$WORK/claude-corpus-$SIZE-plain
MIXED=$WORK/claude-corpus-$SIZE-mixed
MODELS=claude-opus-4-5-20251101,claude-sonnet-4-5-20250929,claude-haiku-4-5-20251001
MIXED_MODELS=claude-opus-4-1-20250805,claude-opus-4-5-20251101,claude-sonnet-4-5-20250929,claude-haiku-4-5-20251001
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
JOBS=${CARGO_JOBS:-1}
CCUSAGE_DIR=$WORK/ccusage
CCUSAGE=$CCUSAGE_DIR/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage

mkdir -p "$WORK"
if [ ! -f "$CORPUS/truth.json" ]; then
  python3 "$ROOT/scripts/gen-claude-corpus.py" "$CORPUS" --size-mb "$SIZE" >/dev/null
fi
if [ ! -f "$PLAIN/truth.json" ]; then
  python3 "$ROOT/scripts/gen-claude-corpus.py" "$PLAIN" --size-mb "$SIZE" --plain --models "$MODELS" >/dev/null
fi
if [ ! -f "$MIXED/truth.json" ]; then
  python3 "$ROOT/scripts/gen-claude-corpus.py" "$MIXED" --size-mb "$SIZE" --plain --subagents --models "$MIXED_MODELS" >/dev/null
fi
if [ ! -f "$PRICED/truth.json" ]; then
  rm -rf "$PRICED.tmp"
  cp -r "$CORPUS" "$PRICED.tmp"
  # Same rows and tokens, models both tables price at the same rates.
  find "$PRICED.tmp/projects" -name '*.jsonl' -print0 | xargs -0 sed -i \
    -e 's/"claude-opus-5-5"/"claude-opus-4-5-20251101"/g' \
    -e 's/"claude-sonnet-5-1"/"claude-sonnet-4-5-20250929"/g' \
    -e 's/"claude-haiku-5"/"claude-haiku-4-5-20251001"/g'
  mv "$PRICED.tmp" "$PRICED"
fi
if [ ! -f "$CCUSAGE" ]; then
  npm install --prefix "$CCUSAGE_DIR" ccusage@20.0.24 >/dev/null
fi
chmod +x "$CCUSAGE"
(cd "$ROOT" && CARGO_TARGET_DIR=$TARGET cargo build --release -j"$JOBS" -p drover >&2)

# Warm the page cache: both tools read a hot corpus.
find "$MIXED/projects" -name '*.jsonl' -exec cat {} + >/dev/null
(cd "$ROOT" && CARGO_TARGET_DIR=$TARGET DROVER_BENCH_CORPUS=$MIXED DROVER_BENCH_CCUSAGE=$CCUSAGE \
  cargo bench -j"$JOBS" -p drover --bench usage_ccusage 2>/dev/null)
echo

for corpus in "$PLAIN" "$PRICED"; do
python3 - "$corpus" "$TARGET/release/drover" "$CCUSAGE" <<'EOF'
import json, os, subprocess, sys, tempfile

corpus, drover, ccusage = sys.argv[1:4]
truth = json.load(open(os.path.join(corpus, "truth.json")))["totals"]
home = tempfile.mkdtemp(prefix="drover-compare-home-")
env = {"PATH": os.environ["PATH"], "TZ": "UTC", "HOME": home, "CLAUDE_CONFIG_DIR": corpus,
       "XDG_CACHE_HOME": os.path.join(home, "cache")}
ccu = json.loads(subprocess.run(
    [ccusage, "claude", "daily", "--json", "--offline", "--mode", "calculate", "--breakdown"],
    env=env, capture_output=True, check=True).stdout)
drv = json.loads(subprocess.run(
    [drover, "usage", "--cli", "claude", "--json", "--by", "model"],
    env=env, capture_output=True, check=True).stdout)

ccu_models = {}
for day in ccu["daily"]:
    for b in day["modelBreakdowns"]:
        m = ccu_models.setdefault(b["modelName"], {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0,
                                                   "cost": 0.0, "missing": False})
        m["input"] += b["inputTokens"]
        m["output"] += b["outputTokens"]
        m["cache_read"] += b["cacheReadTokens"]
        m["cache_write"] += b["cacheCreationTokens"]
        m["cost"] += b["cost"]
        m["missing"] |= bool(b.get("missingPricing"))
drv_models = {g["model"]: g for g in drv["groups"]}

def pct(a, b):
    return f"{(a - b) / b * 100:+.2f}%" if b else "-"

print(f"corpus: {os.path.basename(corpus)}; drover prices: {drv['pricing']['snapshot']} "
      f"({drv['pricing']['snapshot_date']}); ccusage 20.0.24 --offline --mode calculate")
print(f"true tokens: {json.dumps(truth)}\n")
print("| model | tool | input | output | cache read | cache write | cost USD | cost vs ccusage |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
total_c, total_d = 0.0, 0.0
for model in sorted(set(ccu_models) | set(drv_models)):
    c, d = ccu_models.get(model), drv_models.get(model)
    if c:
        cost = "unpriced" if c["missing"] else f"{c['cost']:,.2f}"
        print(f"| {model} | ccusage | {c['input']:,} | {c['output']:,} | {c['cache_read']:,} | {c['cache_write']:,} | {cost} | |")
        total_c += c["cost"]
    if d:
        cost = d["cost_usd"]
        shown = "unpriced" if cost is None else f"{cost:,.2f}"
        vs = pct(cost, c["cost"]) if c and cost is not None and not c["missing"] else "-"
        print(f"| {model} | drover | {d['input']:,} | {d['output']:,} | {d['cache_read']:,} | {d['cache_write']:,} | {shown} | {vs} |")
        total_d += cost or 0.0
print(f"| **total** | ccusage | | | | | {total_c:,.2f} | |")
print(f"| **total** | drover | | | | | {total_d:,.2f} | {pct(total_d, total_c)} |")
print()
EOF
done
