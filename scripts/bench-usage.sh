#!/usr/bin/env bash
# `drover usage` throughput, side by side in one run, on a generated Claude
# corpus: the drover binary (sandboxed tallies), the same discovery + driver
# with the Claude parser compiled natively in-process (engine/benches/usage.rs),
# and ccusage 20.0.24 (npm; 20.0.26 ships no Linux binary), both as its
# binary and through its npm launcher as `npx ccusage` runs it. Checks every
# tool's totals against the generator's truth.json, and measures each CLI
# run's peak RSS in one more run under /usr/bin/time.
#
#   scripts/bench-usage.sh [SIZE_MB] [RUNS]
#
# Env: DROVER_BENCH_DIR (default ~/.cache/drover-bench), CARGO_TARGET_DIR,
# CARGO_JOBS (default 1). Prints a markdown table for docs/benchmarks.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${1:-400}
RUNS=${2:-5}
WORK=${DROVER_BENCH_DIR:-$HOME/.cache/drover-bench}
CORPUS=$WORK/claude-corpus-$SIZE
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
JOBS=${CARGO_JOBS:-1}
CCUSAGE_DIR=$WORK/ccusage
CCUSAGE=$CCUSAGE_DIR/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage
LAUNCHER=$CCUSAGE_DIR/node_modules/ccusage/src/cli.js

mkdir -p "$WORK"
if [ ! -f "$CORPUS/truth.json" ]; then
  python3 "$ROOT/scripts/gen-claude-corpus.py" "$CORPUS" --size-mb "$SIZE" >/dev/null
fi
if [ ! -f "$CCUSAGE" ]; then
  npm install --prefix "$CCUSAGE_DIR" ccusage@20.0.24 >/dev/null
fi
# The npm launcher (node) execs this binary; run it directly so node's start
# is not charged to ccusage.
chmod +x "$CCUSAGE"

(cd "$ROOT" && CARGO_TARGET_DIR=$TARGET cargo build --release -j"$JOBS" -p drover >&2)
BENCH_OUT=$(mktemp)
# Warm the page cache: every tool reads a hot corpus.
cat "$CORPUS"/projects/*/*.jsonl >/dev/null
(cd "$ROOT" && CARGO_TARGET_DIR=$TARGET DROVER_BENCH_CORPUS=$CORPUS DROVER_BENCH_RUNS=$RUNS DROVER_BENCH_WORKERS=${DROVER_BENCH_WORKERS:-1,$(nproc)} \
  cargo bench -j"$JOBS" -p drover --bench usage 2>/dev/null >"$BENCH_OUT")

python3 - "$CORPUS" "$TARGET/release/drover" "$CCUSAGE" "$RUNS" "$BENCH_OUT" "$LAUNCHER" <<'EOF'
import json, os, resource, shutil, subprocess, sys, tempfile, time

corpus, drover, ccusage, runs, bench_out, launcher = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
truth = json.load(open(os.path.join(corpus, "truth.json")))
mb = truth["bytes"] / 1e6
keys = ["input", "output", "cache_read", "cache_write", "requests"]
home = tempfile.mkdtemp(prefix="drover-bench-home-")
cache = os.path.join(home, "xdg-cache")

def drover_totals(doc):
    return {k: doc["totals"][k] for k in keys}

def ccusage_totals(doc):
    t = doc["totals"]
    return {"input": t["inputTokens"], "output": t["outputTokens"], "cache_read": t["cacheReadTokens"],
            "cache_write": t["cacheCreationTokens"], "requests": None}

base = {"PATH": os.environ["PATH"], "TZ": "UTC", "HOME": home, "CLAUDE_CONFIG_DIR": corpus}
ccu = [ccusage, "claude"]
ccu_flags = ["--json", "--offline", "--mode", "display"]
# (name, argv, extra env, fresh ccusage cache per run, totals reader)
tools = [
    ("drover usage (sandboxed, default workers)", [drover, "usage", "--cli", "claude", "--json"], {}, False, drover_totals),
    ("drover usage --jobs 1", [drover, "usage", "--cli", "claude", "--json", "--jobs", "1"], {}, False, drover_totals),
    # ccusage keeps parsed entries in $XDG_CACHE_HOME/ccusage/cache.db and a
    # warm cache skips parsing: cold runs get a fresh cache directory.
    ("ccusage claude session (cold cache)", ccu + ["session"] + ccu_flags, {"XDG_CACHE_HOME": cache}, True, ccusage_totals),
    ("ccusage claude daily (cold cache)", ccu + ["daily"] + ccu_flags, {"XDG_CACHE_HOME": cache}, True, ccusage_totals),
    ("ccusage claude daily (warm cache)", ccu + ["daily"] + ccu_flags, {"XDG_CACHE_HOME": cache + "-warm"}, False, ccusage_totals),
    # What `npx ccusage@20.0.24` starts once npm has the package: node, the
    # launcher, then the binary.
    ("ccusage claude session via its npm launcher (cold cache)", ["node", launcher, "claude", "session"] + ccu_flags,
     {"XDG_CACHE_HOME": cache}, True, ccusage_totals),
]
best = {}
# Round-robin, so load from other processes hits every tool alike; the
# first round warms caches and is not counted.
for round_ in range(runs + 1):
    for name, argv, extra, fresh, reader in tools:
        if fresh:
            shutil.rmtree(cache, ignore_errors=True)
            os.makedirs(cache)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(argv, env={**base, **extra}, capture_output=True, check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if round_ == 0:
            continue
        old = best.get(name)
        best[name] = (min(wall, old[0]) if old else wall, min(cpu, old[1]) if old else cpu,
                      reader(json.loads(proc.stdout)))

# Peak RSS: one more run of each CLI under /usr/bin/time (KiB).
rss = {}
for name, argv, extra, fresh, _ in tools:
    if fresh:
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
    proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env={**base, **extra}, capture_output=True, check=True)
    rss[name] = int(proc.stderr.decode().strip().splitlines()[-1]) / 1024

rows = [(name, *best[name]) for name, *_ in tools]
extra_rows = []
for line in open(bench_out):
    r = json.loads(line)
    if r["config"].startswith("dedupe+pricing"):
        extra_rows.append(r)
        continue
    rows.append((f"in-process {r['config']} ({r['workers']} workers)", r["seconds"], None,
                 {k: r["totals"][k] for k in keys}))

want = truth["totals"]
print(f"corpus: {mb:.0f} MB, {truth['files']} files in {truth['projects']} projects; best of {runs} "
      f"interleaved runs after a warm-up round, hot page cache\n")
print("| reader | wall s | MB/s | CPU s | MB per CPU-s | peak RSS MB | totals correct? |")
print("|---|---:|---:|---:|---:|---:|---|")
for name, wall, cpu, got in rows:
    wrong = [k for k in keys if got.get(k) is not None and got[k] != want[k]]
    verdict = "yes" if not wrong else "no: " + ", ".join(f"{k} {got[k]:,}" for k in wrong)
    if "prefilter only" in name:
        verdict = "n/a (counts nothing)"

    cpu_cells = f"{cpu:.3f} | {mb / cpu:,.0f}" if cpu else "- | -"
    peak = f"{rss[name]:,.0f}" if name in rss else "-"
    print(f"| {name} | {wall:.3f} | {mb / wall:,.0f} | {cpu_cells} | {peak} | {verdict} |")
print()
for r in extra_rows:
    print(f"{r['config']} (merge by key, price, group by session; engine side): {r['seconds'] * 1000:.1f} ms")
print()
print("true totals:", json.dumps(want))
print("ccusage's rules predict:", json.dumps(truth["ccusage_expected"]))
shutil.rmtree(home, ignore_errors=True)
EOF
rm -f "$BENCH_OUT"
