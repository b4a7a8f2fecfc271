#!/usr/bin/env python3
"""Refresh drover's embedded model price table from pinned LiteLLM releases.

    scripts/update-pricing.py VERSION... [--date YYYY-MM-DD] [--fresh] [--check]

For each VERSION, oldest first: downloads the `litellm==VERSION` wheel from
PyPI with pip (no dependencies), takes
`litellm/model_prices_and_context_window_backup.json` out of it (the table
LiteLLM ships and ccusage and most usage tools price from), keeps the
per-token prices drover bills with, and merges it into
crates/usage/src/pricing/litellm-prices.json:

- a model in the new release gets the release's prices;
- a model the table had that the release no longer has keeps its last
  known prices, marked `"retired_after": "<the last version that had it>"`:
  a price is never dropped, because users' transcripts still name models
  LiteLLM has since removed (`claude-opus-4-1-20250805` left in 1.103.7);
- `merged` lists every release merged in, oldest first.

`--fresh` starts from an empty table instead of the committed one. The file
is deterministic: merging the version it was last merged with again writes
it byte for byte (the date is kept unless `--date` is given); `--check`
does that and fails if anything would change. `--date` is the day the
snapshot is taken (default: today, UTC, for a new version). `drover usage
--json` and `drover doctor` print the latest version and date.
docs/usage.md ("Cost") says what is kept and why.
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
OUT = os.path.join(ROOT, "crates", "usage", "src", "pricing", "litellm-prices.json")
MEMBER = "litellm/model_prices_and_context_window_backup.json"
RETIRED = "retired_after"

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


def download(version):
    """LiteLLM's price table as shipped in the `litellm==version` wheel."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", f"litellm=={version}", "-d", tmp],
            check=True,
        )
        wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if len(wheels) != 1:
            sys.exit(f"litellm {version}: expected one wheel, got {wheels}")
        return zipfile.ZipFile(os.path.join(tmp, wheels[0])).read(MEMBER)


def priced(raw):
    """The models of one release that have a per-token price, price fields only."""
    models = {}
    for name, entry in sorted(json.loads(raw).items()):
        if name == "sample_spec" or not isinstance(entry, dict):
            continue
        prices = {f: v for f, v in sorted(entry.items()) if keep(f, v)}
        if "input_cost_per_token" in prices or "output_cost_per_token" in prices:
            models[name] = prices
    return models


def load(path):
    with open(path) as f:
        doc = json.load(f)
    # Files written before merging existed name one release in `source`.
    if "merged" not in doc:
        doc["merged"] = [{"source": doc["source"], "sha256": doc["sha256"]}]
    return doc


def merge(doc, version, raw, date):
    """`doc` with release `version` (its file `raw`) merged in."""
    source = f"litellm {version}"
    previous = doc["source"] if doc else None
    fresh = priced(raw)
    models = {}
    for name, entry in (doc["models"] if doc else {}).items():
        if name in fresh:
            continue
        if RETIRED not in entry:
            # In the table until now, gone from this release: its prices are
            # the previous release's.
            entry = {**entry, RETIRED: previous.removeprefix("litellm ")}
        models[name] = entry
    models.update(fresh)
    merged = [m for m in (doc["merged"] if doc else []) if m["source"] != source]
    merged.append({"source": source, "sha256": hashlib.sha256(raw).hexdigest()})
    if date is None:
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        date = doc["date"] if doc and previous == source else today
    return {
        "source": source,
        "file": MEMBER,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "date": date,
        "merged": merged,
        "models": dict(sorted(models.items())),
    }


def render(doc):
    # One model per line, so a refresh reads as a line diff.
    compact = {"separators": (",", ":")}
    head = {k: v for k, v in doc.items() if k != "models"}
    rows = [f"{json.dumps(name)}:{json.dumps(prices, **compact)}" for name, prices in doc["models"].items()]
    return json.dumps(head, **compact)[:-1] + ',"models":{\n' + ",\n".join(rows) + "\n}}\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("versions", nargs="+", metavar="VERSION")
    parser.add_argument("--date")
    parser.add_argument("--fresh", action="store_true", help="start from an empty table")
    parser.add_argument("--check", action="store_true", help="fail if the committed file would change")
    args = parser.parse_args()
    doc = None if args.fresh else load(OUT)
    for i, version in enumerate(args.versions):
        last = i == len(args.versions) - 1
        doc = merge(doc, version, download(version), args.date if last else None)
    text = render(doc)
    if args.check:
        with open(OUT) as f:
            if f.read() != text:
                sys.exit(f"{os.path.relpath(OUT, ROOT)} differs from a merge of {' '.join(args.versions)}")
        print(f"{os.path.relpath(OUT, ROOT)} is what merging {' '.join(args.versions)} writes")
        return
    with open(OUT, "w") as f:
        f.write(text)
    retired = sum(1 for e in doc["models"].values() if RETIRED in e)
    print(f"{len(doc['models'])} priced models ({retired} retired) -> {os.path.relpath(OUT, ROOT)} "
          f"({os.path.getsize(OUT):,} bytes)")


if __name__ == "__main__":
    main()
