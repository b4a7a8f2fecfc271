#!/usr/bin/env python3
"""Generate a realistic Claude Code transcript corpus for `drover usage`
benchmarks, and the totals a correct reader must report.

    scripts/gen-claude-corpus.py OUT [--size-mb 400] [--seed 7] [--plain] [--models A,B,C,…]
                                     [--subagents]

Writes OUT/projects/<project slug>/<session>.jsonl and OUT/truth.json.

Row shapes follow Claude Code transcripts (tests/fixtures/real/claude, Claude
Code 2.1.332 against the scripted model server, and the older `requestId`
form):
- assistant rows, one per content block (thinking / text / tool_use), sharing
  message.id and requestId (older sessions) or requestRef (2.1.332 sessions);
  earlier blocks of a streamed response report less output than the last;
- user rows carrying tool results (file contents, command output), with the
  same content again in `toolUseResult`: most of the bytes;
- attachment, api-request(-shape/-blob), system, last-prompt,
  queue-operation rows, and `cost-state` running totals (repeated unchanged
  now and then);
- some assistant rows written with spaced separators (`"usage": {`);
- `/btw` sidechain logs replaying earlier messages under new request ids
  (isSidechain), next to sidechain answers of their own;
- resumed sessions that begin with a verbatim copy of an earlier session;
- synthetic API-error rows (`isApiErrorMessage`, model `<synthetic>`);
- with `--subagents`, subagent conversations in their own files beside the
  session (`<session>/subagents/agent-<id>.jsonl` and its `.meta.json`, as
  Claude Code writes them since 2.1.2), under the parent's session id;
- 2.1.332 rows carry an all-zero `cache_creation` breakdown beside the real
  `cache_creation_input_tokens`; older rows a filled-in breakdown.

`--plain` leaves out what only some readers count right (spaced separators,
2.1.332 rows, sidechain replays, partial output on early content blocks,
1-hour cache writes), so two correct readers must agree on tokens and any
difference in cost is pricing: scripts/compare-ccusage.sh uses it with
`--models` naming models both price tables know (in place of the opus,
sonnet and haiku ids; any number of names, the first drawn twice as often
as each other one).

truth.json has `totals` (what a correct reader reports: each response once,
input without cache reads, cache writes from cache_creation_input_tokens) and
`ccusage_expected` (the same data read by ccusage's rules: only lines with
`"usage":{`, cache writes from the breakdown when present), plus the parts
that differ and the byte mix.
"""

import argparse
import json
import os
import random
import sys
import uuid

COMPACT = (",", ":")
SPACED = (", ", ": ")

WORDS = (
    "fn let mut impl struct enum match return self pub use mod const static async await "
    "if else for while loop break continue where trait type Some None Ok Err String Vec "
    "HashMap usize u64 i32 bool true false clone into iter map filter collect unwrap_or "
    "value key name path file line error result config request response token usage "
    "cache model session project parser buffer chunk stream worker thread sandbox"
).split()


def text_pool(rng, size):
    """Code-like text with quotes, braces, tabs and some non-ASCII."""
    parts = []
    total = 0
    while total < size:
        indent = "    " * rng.randint(0, 4)
        n = rng.randint(3, 14)
        words = [rng.choice(WORDS) for _ in range(n)]
        roll = rng.random()
        if roll < 0.15:
            line = f'{indent}let {words[0]} = "{" ".join(words[1:4])}";'
        elif roll < 0.2:
            line = f'{indent}// {" ".join(words)} — ünïcödé ✓'
        elif roll < 0.23:
            # JSON inside a tool result: a "usage" key, escaped once the
            # content is a JSON string, so it never looks like a real key.
            line = f'{indent}{{"usage": {{"input_tokens": {rng.randint(1, 99)}}}}}'
        else:
            line = indent + " ".join(words) + (" {" if roll > 0.9 else ";")
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)


class Corpus:
    def __init__(self, out, size_mb, seed, plain=False, models=None, subagents=False):
        self.out = out
        self.plain = plain
        self.subagents = subagents
        self.subagent_files = 0
        self.models = models or ["claude-opus-5-5", "claude-sonnet-5-1", "claude-haiku-5"]
        self.target = size_mb * 1024 * 1024
        self.rng = random.Random(seed)
        self.pool = text_pool(self.rng, 4 * 1024 * 1024)
        self.written = 0
        self.kinds = {}
        # Every response by message id: the usage it really had.
        self.responses = {}
        # Message ids ccusage can see (some row of it has "usage":{).
        self.visible_to_ccusage = set()
        self.spaced_only = set()
        self.synthetic_rows = 0
        self.replays = 0
        self.resumed_copies = 0
        self.sessions = 0
        self.projects = 0
        self.files = 0
        self.counter = 0

    def uid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def content(self, lo, hi):
        n = self.rng.randint(lo, hi)
        start = self.rng.randint(0, len(self.pool) - n - 1)
        return self.pool[start : start + n]

    def stamp(self, day, second):
        h, rest = divmod(second % 86400, 3600)
        m, s = divmod(rest, 60)
        return f"2026-{day[0]:02d}-{day[1]:02d}T{h:02d}:{m:02d}:{s:02d}.{self.rng.randint(0, 999):03d}Z"

    def emit(self, rows, f, row, kind, spaced=False):
        text = json.dumps(row, separators=SPACED if spaced else COMPACT, ensure_ascii=False)
        data = (text + "\n").encode("utf-8")
        f.write(data)
        self.written += len(data)
        self.kinds[kind] = self.kinds.get(kind, 0) + len(data)
        rows.append(text)

    def usage(self, new_style, output):
        rng = self.rng
        write = rng.choice([0, 0, rng.randint(200, 20000)])
        usage = {
            "input_tokens": rng.randint(1, 60) if rng.random() < 0.9 else rng.randint(500, 9000),
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": rng.randint(8000, 160000),
            "output_tokens": output,
            "service_tier": "standard",
        }
        if new_style and not self.plain:
            usage["output_tokens_details"] = {"thinking_tokens": 0}
            usage["cache_creation"] = {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}
            usage["inference_geo"] = ""
            usage["iterations"] = []
            usage["speed"] = "standard"
            usage["fallback_credit"] = None
        else:
            five = rng.randint(0, write)
            if self.plain:
                five = write
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": write - five}
        return usage

    def record(self, message_id, usage, spaced):
        true = {
            "input": usage["input_tokens"],
            "output": usage["output_tokens"],
            "cache_read": usage["cache_read_input_tokens"],
            "cache_write": usage["cache_creation_input_tokens"],
            "breakdown": sum(usage["cache_creation"].values()),
        }
        previous = self.responses.get(message_id)
        if previous is None or true["output"] > previous["output"]:
            self.responses[message_id] = true
        if not spaced:
            self.visible_to_ccusage.add(message_id)

    def session(self, project_dir, cwd, new_style, day, copy_from=None):
        rng = self.rng
        session_id = self.uid()
        path = os.path.join(project_dir, session_id + ".jsonl")
        rows = []
        version = "2.1.332" if new_style else rng.choice(["2.0.14", "2.0.31", "1.0.112"])
        base = {"userType": "external", "entrypoint": "cli", "cwd": cwd, "sessionId": session_id, "version": version, "gitBranch": "main"}
        second = rng.randint(0, 80000)
        with open(path, "wb") as f:
            if copy_from:
                # A resumed session starts with the earlier conversation,
                # copied verbatim (same ids): nothing in it is new usage.
                for text in copy_from[: rng.randint(5, max(6, len(copy_from) // 2))]:
                    data = (text + "\n").encode("utf-8")
                    f.write(data)
                    self.written += len(data)
                    self.kinds["resumed-copy"] = self.kinds.get("resumed-copy", 0) + len(data)
                    self.resumed_copies += 1
            parent = None
            cost = {"input": 0, "output": 0}
            turns = rng.randint(2, 16)
            model = rng.choice([self.models[0], *self.models])
            recent = []
            for _ in range(turns):
                second += rng.randint(20, 600)
                self.emit(rows, f, {"type": "queue-operation", "operation": "enqueue", "timestamp": self.stamp(day, second), "sessionId": session_id, "content": self.content(20, 200)}, "other")
                prompt_uuid = self.uid()
                self.emit(rows, f, {"parentUuid": parent, "isSidechain": False, "type": "user", "message": {"role": "user", "content": self.content(30, 800)}, "uuid": prompt_uuid, "timestamp": self.stamp(day, second), **base}, "user-prompt")
                parent = prompt_uuid
                if rng.random() < 0.4:
                    self.emit(rows, f, {"parentUuid": parent, "isSidechain": False, "attachment": {"type": "file", "content": self.content(800, 40000)}, "type": "attachment", "uuid": self.uid(), "timestamp": self.stamp(day, second), **base}, "attachment")
                if new_style and rng.random() < 0.15:
                    self.emit(rows, f, {"type": "api-request-shape", "sessionId": session_id, "shapeHash": self.uid(), "timestamp": self.stamp(day, second), "version": version, "shape": self.content(10000, 38000)}, "api-request")
                steps = rng.randint(1, 8)
                for step in range(steps):
                    second += rng.randint(2, 90)
                    message_id = "msg_01" + uuid.UUID(int=rng.getrandbits(128)).hex[:22]
                    reference = self.uid()
                    if new_style:
                        self.emit(rows, f, {"type": "api-request", "sessionId": session_id, "id": reference, "timestamp": self.stamp(day, second), "version": version, "querySource": "repl_main_thread", "params": {"model": model, "max_tokens": 32000}, "requestDigest": self.uid()}, "api-request")
                        if rng.random() < 0.3:
                            self.emit(rows, f, {"type": "api-request-blob", "sessionId": session_id, "hash": self.uid(), "message": self.content(1000, 9000)}, "api-request")
                    output = rng.randint(8, 4000)
                    spaced = rng.random() < 0.03 and not self.plain
                    synthetic = rng.random() < 0.01
                    blocks = []
                    if rng.random() < 0.5:
                        blocks.append({"type": "thinking", "thinking": self.content(100, 3000), "signature": self.content(200, 1200)})
                    blocks.append({"type": "text", "text": self.content(20, 2000)})
                    tool = step < steps - 1
                    if tool:
                        big = rng.random() < 0.2
                        blocks.append({"type": "tool_use", "id": "toolu_" + self.uid()[:20], "name": "Write" if big else rng.choice(["Read", "Bash", "Grep", "Edit"]), "input": {"file_path": cwd + "/src/" + rng.choice(WORDS) + ".rs", "content": self.content(2000, 20000) if big else self.content(10, 300)}})
                    if synthetic:
                        self.synthetic_rows += 1
                        row = {"parentUuid": parent, "isSidechain": False, "type": "assistant", "uuid": self.uid(), "timestamp": self.stamp(day, second), "message": {"id": self.uid(), "model": "<synthetic>", "role": "assistant", "stop_reason": "stop_sequence", "type": "message", "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}, "content": [{"type": "text", "text": "API Error: 529 overloaded"}]}, "requestId": "req_fake", "error": "overloaded", "isApiErrorMessage": True, **base}
                        self.emit(rows, f, row, "assistant")
                        continue
                    usage = self.usage(new_style, output)
                    for b, block in enumerate(blocks):
                        partial = dict(usage)
                        if b < len(blocks) - 1:
                            # Streamed: an earlier block saw less output.
                            partial["output_tokens"] = rng.randint(1, output)
                            if self.plain:
                                partial["output_tokens"] = output
                        row = {"parentUuid": parent, "isSidechain": False, "message": {"content": [block], "id": message_id, "model": model, "role": "assistant", "stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None, "type": "message", "usage": partial}}
                        if new_style and not self.plain:
                            row["apiBlockIndex"] = b
                            row["requestRef"] = reference
                        else:
                            row["requestId"] = "req_011" + uuid.UUID(int=rng.getrandbits(128)).hex[:20]
                            if b > 0:
                                row["requestId"] = previous_request
                        previous_request = row.get("requestId")
                        uid = self.uid()
                        row.update({"type": "assistant", "uuid": uid, "timestamp": self.stamp(day, second), **base})
                        self.emit(rows, f, row, "assistant", spaced=spaced)
                        self.record(message_id, partial, spaced)
                        parent = uid
                    recent.append((rows[-1], message_id))
                    if spaced:
                        self.spaced_only.add(message_id)
                    if tool:
                        result = self.content(500, 40000) if rng.random() < 0.7 else self.content(50, 2000)
                        tool_result = {"parentUuid": parent, "isSidechain": False, "type": "user", "message": {"role": "user", "content": [{"tool_use_id": "toolu_x", "type": "tool_result", "content": result}]}, "uuid": self.uid(), "timestamp": self.stamp(day, second), "toolUseResult": {"stdout": result, "stderr": "", "interrupted": False}, **base}
                        if rng.random() < 0.005:
                            # A structured tool result with a real "usage" key:
                            # passes any needle, counts nothing.
                            tool_result["toolUseResult"] = {"usage": {"calls": 3}, "stdout": result[:200]}
                        self.emit(rows, f, tool_result, "tool-result")
                    cost["input"] += usage["input_tokens"]
                    cost["output"] += output
                self.emit(rows, f, {"parentUuid": parent, "isSidechain": False, "type": "system", "subtype": "stop_hook_summary", "hookCount": 1, "level": "info", "timestamp": self.stamp(day, second), "uuid": self.uid(), **base}, "other")
                self.emit(rows, f, {"type": "last-prompt", "lastPrompt": self.content(10, 120), "leafUuid": parent, "sessionId": session_id}, "other")
                state = {"type": "cost-state", "sessionId": session_id, "totalCostUSD": round(cost["input"] * 1e-5, 6), "totalDuration": second, "modelUsage": {model: {"inputTokens": cost["input"], "outputTokens": cost["output"], "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0, "costUSD": 0.1}}, "hasUnknownModelCost": False}
                for _ in range(2 if rng.random() < 0.2 else 1):
                    self.emit(rows, f, state, "other")
            if recent and rng.random() < 0.25 and not self.plain:
                # A /btw sidechain: replays of earlier messages under new
                # request ids, then answers of its own.
                for text, message_id in rng.sample(recent, min(len(recent), rng.randint(1, 6))):
                    replay = json.loads(text)
                    replay["isSidechain"] = True
                    if "requestRef" in replay:
                        replay["requestRef"] = self.uid()
                    else:
                        replay["requestId"] = "req_011" + uuid.UUID(int=rng.getrandbits(128)).hex[:20]
                    replay["uuid"] = self.uid()
                    spaced = ": " in text[:40]
                    self.emit(rows, f, replay, "sidechain-replay", spaced=spaced)
                    self.replays += 1
                for _ in range(rng.randint(1, 3)):
                    message_id = "msg_01" + uuid.UUID(int=rng.getrandbits(128)).hex[:22]
                    usage = self.usage(new_style, rng.randint(8, 600))
                    row = {"parentUuid": parent, "isSidechain": True, "message": {"content": [{"type": "text", "text": self.content(20, 600)}], "id": message_id, "model": model, "role": "assistant", "type": "message", "usage": usage}, "type": "assistant", "uuid": self.uid(), "timestamp": self.stamp(day, second), **base}
                    row["requestRef" if new_style else "requestId"] = self.uid()
                    self.emit(rows, f, row, "assistant")
                    self.record(message_id, usage, False)
        self.sessions += 1
        self.files += 1
        if self.subagents and rng.random() < 0.3:
            for _ in range(rng.randint(1, 3)):
                self.subagent(project_dir, session_id, base, new_style, day, second)
        return rows

    def subagent(self, project_dir, session_id, base, new_style, day, second):
        """A subagent's conversation: its own file under the session's
        folder, each response one row (its requests are new usage)."""
        rng = self.rng
        agent = uuid.UUID(int=rng.getrandbits(128)).hex[:17]
        folder = os.path.join(project_dir, session_id, "subagents")
        os.makedirs(folder, exist_ok=True)
        model = rng.choice(self.models)
        with open(os.path.join(folder, f"agent-{agent}.meta.json"), "w") as f:
            json.dump({"agentType": "general-purpose", "description": self.content(10, 60), "model": model}, f)
        rows = []
        parent = None
        with open(os.path.join(folder, f"agent-{agent}.jsonl"), "wb") as f:
            self.emit(rows, f, {"parentUuid": None, "isSidechain": True, "agentId": agent, "type": "user", "message": {"role": "user", "content": self.content(30, 600)}, "uuid": self.uid(), "timestamp": self.stamp(day, second), **base}, "user-prompt")
            for _ in range(rng.randint(1, 6)):
                second += rng.randint(2, 60)
                message_id = "msg_01" + uuid.UUID(int=rng.getrandbits(128)).hex[:22]
                usage = self.usage(new_style, rng.randint(8, 2000))
                row = {"parentUuid": parent, "isSidechain": True, "agentId": agent, "message": {"content": [{"type": "text", "text": self.content(20, 1500)}], "id": message_id, "model": model, "role": "assistant", "type": "message", "usage": usage}, "type": "assistant", "uuid": self.uid(), "timestamp": self.stamp(day, second), **base}
                row["requestRef" if new_style and not self.plain else "requestId"] = "req_011" + uuid.UUID(int=rng.getrandbits(128)).hex[:20]
                self.emit(rows, f, row, "subagent")
                self.record(message_id, usage, False)
                parent = row["uuid"]
                self.emit(rows, f, {"parentUuid": parent, "isSidechain": True, "agentId": agent, "type": "user", "message": {"role": "user", "content": [{"tool_use_id": "toolu_x", "type": "tool_result", "content": self.content(50, 8000)}]}, "uuid": self.uid(), "timestamp": self.stamp(day, second), **base}, "tool-result")
        self.subagent_files += 1
        self.files += 1

    def generate(self):
        projects_dir = os.path.join(self.out, "projects")
        os.makedirs(projects_dir, exist_ok=True)
        rng = self.rng
        while self.written < self.target:
            slug_words = [rng.choice(WORDS) for _ in range(2)]
            cwd = "/home/dev/work/" + "-".join(slug_words) + str(self.projects)
            project_dir = os.path.join(projects_dir, cwd.replace("/", "-"))
            os.makedirs(project_dir, exist_ok=True)
            self.projects += 1
            previous = None
            for _ in range(rng.randint(2, 20)):
                if self.written >= self.target:
                    break
                day = (rng.choice([10, 11]), rng.randint(1, 30))
                new_style = rng.random() < 0.7 and not self.plain
                copy = previous if previous and rng.random() < 0.15 else None
                previous = self.session(project_dir, cwd, new_style, day, copy)
                sys.stderr.write(f"\r{self.written / 1e6:8.1f} MB")
        sys.stderr.write("\n")

    def truth(self):
        def total(ids, ccusage):
            t = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "reasoning": 0, "requests": 0}
            for message_id in ids:
                r = self.responses[message_id]
                t["input"] += r["input"]
                t["output"] += r["output"]
                t["cache_read"] += r["cache_read"]
                t["cache_write"] += r["breakdown"] if ccusage else r["cache_write"]
                t["requests"] += 1
            return t

        every = sorted(self.responses)
        visible = sorted(self.visible_to_ccusage)
        return {
            "bytes": self.written,
            "files": self.files,
            "projects": self.projects,
            "sessions": self.sessions,
            "totals": total(every, False),
            "ccusage_expected": total(visible, True),
            "spaced_only_responses": len(self.spaced_only - self.visible_to_ccusage),
            "synthetic_rows": self.synthetic_rows,
            "sidechain_replays": self.replays,
            "resumed_copied_rows": self.resumed_copies,
            "subagent_files": self.subagent_files,
            "bytes_by_kind": dict(sorted(self.kinds.items())),
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--size-mb", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--plain", action="store_true")
    parser.add_argument("--models", help="model ids in place of the opus, sonnet and haiku ones (the first drawn twice as often)")
    parser.add_argument("--subagents", action="store_true", help="give some sessions subagent files")
    args = parser.parse_args()
    models = args.models.split(",") if args.models else None
    if models is not None and not all(models):
        parser.error("--models takes comma-separated names")
    corpus = Corpus(args.out, args.size_mb, args.seed, args.plain, models, args.subagents)
    corpus.generate()
    truth = corpus.truth()
    with open(os.path.join(args.out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=2)
        f.write("\n")
    print(json.dumps({k: truth[k] for k in ("bytes", "files", "projects", "totals", "ccusage_expected")}, indent=2))


if __name__ == "__main__":
    main()
