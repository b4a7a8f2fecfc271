#!/usr/bin/env python3
"""Refresh drover's embedded model price table from a pinned LiteLLM release.

    scripts/update-pricing.py VERSION [--date YYYY-MM-DD]

Downloads the `litellm==VERSION` wheel from PyPI with pip (no dependencies),
takes `litellm/model_prices_and_context_window_backup.json` out of it (the
table LiteLLM ships and ccusage and most usage tools price from), keeps the
per-token prices drover bills with, and writes
crates/usage/src/pricing/litellm-prices.json. `--date` is the day the snapshot is
taken (default: today, UTC); `drover usage --json` and `drover doctor` print
it with the version. docs/usage.md ("Cost") says what is kept and why.
"""

import argparse
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "engine", "src", "pricing", "litellm-prices.json")
MEMBER = "litellm/model_prices_and_context_window_backup.json"

BASE_FIELDS = {
    "input_cost_per_token",
    "output_cost_per_token",
    "output_cost_per_reasoning_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
    "cache_creation_input_token_cost_above_1hr",
}
# Long-context tiers: the same prices once a request's prompt passes N
# thousand tokens (`..._above_200k_tokens`).
TIER = re.compile(
    r"^(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost"
    r"|cache_creation_input_token_cost|cache_creation_input_token_cost_above_1hr)"
    r"_above_\d+k_tokens$"
)


def keep(field, value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and (
        field in BASE_FIELDS or TIER.match(field)
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("version")
    parser.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", f"litellm=={args.version}", "-d", tmp],
            check=True,
        )
        wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if len(wheels) != 1:
            sys.exit(f"expected one wheel, got {wheels}")
        raw = zipfile.ZipFile(os.path.join(tmp, wheels[0])).read(MEMBER)
    table = json.loads(raw)
    models = {}
    for name, entry in sorted(table.items()):
        if name == "sample_spec" or not isinstance(entry, dict):
            continue
        prices = {f: v for f, v in sorted(entry.items()) if keep(f, v)}
        if "input_cost_per_token" in prices or "output_cost_per_token" in prices:
            models[name] = prices
    doc = {
        "source": f"litellm {args.version}",
        "file": MEMBER,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "date": args.date,
        "models": models,
    }
    # One model per line, so a refresh reads as a line diff.
    compact = {"separators": (",", ":")}
    head = {k: v for k, v in doc.items() if k != "models"}
    with open(OUT, "w") as f:
        f.write(json.dumps(head, **compact)[:-1] + ',"models":{\n')
        rows = [f"{json.dumps(name)}:{json.dumps(prices, **compact)}" for name, prices in models.items()]
        f.write(",\n".join(rows))
        f.write("\n}}\n")
    print(f"{len(models)} priced models of {len(table)} entries -> {os.path.relpath(OUT, ROOT)} "
          f"({os.path.getsize(OUT):,} bytes)")


if __name__ == "__main__":
    main()
