#!/usr/bin/env python3
"""Every model name in the built-in adapters' real captures.

    scripts/capture-models.py

Reads every JSON and JSONL file under components/*/fixtures/ and
tests/fixtures/ (JSON inside a JSON string too, as opencode stores rows) and
prints each model name once with the files it is in. A model name is a
string under a key that contains `model` (`model`, `modelID`,
`currentModel`, `COPILOT_MODEL`, …) or a key of an object under such a key
(`modelUsage: {"claude-opus-5-5": {…}}`), less the keys in NOT_A_MODEL.

The pricing test's table (crates/usage/src/pricing/captures.rs) is made
from this list: each name has the table entry it must price as, or the
reason it cannot be priced. That test walks the same files by the same rules
and fails on a name its table lacks.
"""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = re.compile("model", re.IGNORECASE)
# Keys with `model` in their name whose values are not model names.
NOT_A_MODEL = {
    "model_provider",  # Codex: the provider's name
    "model_provider_id",
    "modelProvider",
    "model_catalog",  # Codex: a catalog digest
    "model_search_state",
    "QWEN_CODE_MODEL_IDENTITY",  # Qwen: model@hash, an identity
}
# Keys of an object of per-model entries whose own keys are fields.
FIELD_OBJECTS = {"model"}


def names(value, out, path):
    if isinstance(value, dict):
        for key, inner in value.items():
            if KEY.search(key) and key not in NOT_A_MODEL:
                if isinstance(inner, str) and inner[:1] not in "{[":
                    out.setdefault(inner, set()).add(path)
                elif isinstance(inner, dict) and key not in FIELD_OBJECTS:
                    # Keyed by model: the keys are names, the values
                    # entries (whose own keys are fields, whatever a model
                    # name in them says).
                    for model, entry in inner.items():
                        out.setdefault(model, set()).add(path)
                        names(entry, out, path)
                    continue
            names(inner, out, path)
    elif isinstance(value, list):
        for inner in value:
            names(inner, out, path)
    elif isinstance(value, str) and value[:1] in "{[":
        try:
            names(json.loads(value), out, path)
        except ValueError:
            pass


def documents(text):
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    for line in text.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            pass


def main():
    roots = [os.path.join(ROOT, "tests", "fixtures")]
    components = os.path.join(ROOT, "components")
    roots += sorted(os.path.join(components, c, "fixtures") for c in os.listdir(components))
    found = {}
    for root in roots:
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                if not name.endswith((".json", ".jsonl")):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for doc in documents(f.read()):
                        names(doc, found, os.path.relpath(path, ROOT))
    for model in sorted(found):
        files = sorted(found[model])
        more = f" (+{len(files) - 1} more)" if len(files) > 1 else ""
        print(f"{model}\t{files[0]}{more}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
