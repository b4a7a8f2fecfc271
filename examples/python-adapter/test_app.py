"""Native tests for app.py: run the adapter logic in plain CPython.

    examples/python-adapter/test_app.py

Generates the WIT bindings with the venv's componentize-py (the one build.sh
installs) into a temporary directory, replaces the `host-log` import with a
recorder, and checks each export. No wasm runtime involved.
"""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
VENV = os.environ.get("DROVER_PY_VENV", os.path.expanduser("~/.cache/drover-py"))

_bindings = tempfile.mkdtemp(prefix="drover-py-bindings-")
subprocess.run(
    [os.path.join(VENV, "bin", "componentize-py"), "-d", os.path.join(REPO, "wit"), "-w", "adapter",
     "bindings", _bindings],
    check=True,
    stdout=subprocess.DEVNULL,
)
sys.path[:0] = [_bindings, HERE]

from componentize_py_types import Err  # noqa: E402
from wit_world.imports import host_log  # noqa: E402
from wit_world.imports.types import (  # noqa: E402
    AdapterError_InvalidInput,
    AdapterError_Unsupported,
    CanonicalEvent,
    Capability,
    Conversation_Fresh,
    Conversation_Preset,
    Conversation_Resume,
    FaultKind,
    GlobBase,
    HookInstall,
    LaunchRequest,
    LocationContext,
    Profile,
    PromptKind,
    Screen,
    SeatState,
    TurnOutcome,
    TurnOutput,
)

LOGGED = []
host_log.log = lambda level, message: LOGGED.append((level, message))

import app  # noqa: E402
import drover_kit  # noqa: E402

CLI = app.Cli()


def profile(**overrides) -> Profile:
    fields = dict(
        name="echo", binary="echo-cli", prompt_template="{prompt}", launch_args=[],
        bypass_args=["--yes"], model_flag="--model", dialect="", hook_events=[],
        usage_parser="echo-jsonl", env_fault_patterns=[], turn_args=[], settings=[],
    )
    fields.update(overrides)
    return Profile(**fields)


def request(prompt="hi", conversation=None, model="", extra_args=None) -> LaunchRequest:
    return LaunchRequest(prompt=prompt, model=model, extra_args=extra_args,
                         conversation=conversation or Conversation_Fresh())


def error_of(fn, *args):
    try:
        fn(*args)
    except Err as e:
        return e.value
    raise AssertionError("expected an Err")


class Describe(unittest.TestCase):
    def test_describe(self):
        d = CLI.describe()
        self.assertEqual((d.name, d.wit_version, d.dialects), ("python-example", "0.2.0", []))
        self.assertIn(Capability.USAGE, d.capabilities)
        self.assertNotIn(Capability.HOOK_CONFIG, d.capabilities)
        self.assertEqual(d.usage_parsers[0].name, "echo-jsonl")
        self.assertTrue(LOGGED, "describe logs through host-log")


class RenderPrompt(unittest.TestCase):
    # The cases of components/kit/src/prompt.rs.
    def render(self, template, prompt):
        return CLI.render_prompt(profile(prompt_template=template), prompt)

    def test_kit_cases(self):
        self.assertEqual(
            self.render("Use the ${skill} skill now, and use subagents as needed: {args}", "/bmad-dev-auto 1-1-a"),
            "Use the $bmad-dev-auto skill now, and use subagents as needed: 1-1-a")
        self.assertEqual(self.render("Use the {skill} skill now: {args}", "/bmad-dev-auto 1-1-a"),
                         "Use the bmad-dev-auto skill now: 1-1-a")
        self.assertEqual(self.render("{prompt}", "fix the bug"), "fix the bug")
        self.assertEqual(self.render("[{skill}|{args}]", "hello there"), "[|hello there]")
        self.assertEqual(self.render("{{literal}} {prompt}", "x"), "{literal} x")
        self.assertEqual(drover_kit.split_skill("/review"), ("review", ""))
        self.assertEqual(drover_kit.split_skill("/review   a b  "), ("review", "a b"))

    def test_errors_match_the_kit(self):
        self.assertEqual(
            error_of(self.render, "{promt}", "x"),
            AdapterError_InvalidInput("prompt_template: unknown placeholder {promt} (known: {prompt}, {skill}, {args})"))
        self.assertEqual(error_of(self.render, "oops {prompt", "x"),
                         AdapterError_InvalidInput("prompt_template: unclosed '{' at byte 5"))
        self.assertEqual(
            error_of(self.render, "é } b", "x"),
            AdapterError_InvalidInput("prompt_template: single '}' at byte 3 (write '}}' for a literal brace)"))


class Commands(unittest.TestCase):
    def test_interactive(self):
        cmd = CLI.interactive_command(profile(), request("/review a", model="m1"))
        self.assertEqual(cmd.argv, ["echo-cli", "/review a", "--yes", "--model", "m1"])
        cmd = CLI.interactive_command(profile(), request("", Conversation_Resume("s-1")))
        self.assertEqual(cmd.argv, ["echo-cli", "--resume", "s-1", "--yes"])

    def test_headless(self):
        cmd = CLI.headless_command(profile(turn_args=["--quiet"]), request("hi", Conversation_Preset("abc"), extra_args=[]))
        self.assertEqual(cmd.argv, ["echo-cli", "--headless", "--session", "abc", "--quiet"])
        self.assertEqual(cmd.stdin, "hi")
        self.assertIsInstance(error_of(CLI.headless_command, profile(), request("")), AdapterError_InvalidInput)
        self.assertIsInstance(error_of(CLI.headless_command, profile(), request("x", Conversation_Resume("--evil"))),
                              AdapterError_InvalidInput)


class ParseTurn(unittest.TestCase):
    def out(self, stdout, stderr="", code=0):
        return CLI.parse_turn(profile(), TurnOutput(stdout=stdout, stderr=stderr, exit_code=code, prior_usage=None))

    def test_success(self):
        r = self.out('starting\n{"reply": "hello", "session": "s1", "tokens": {"in": 12, "out": 3}}\n')
        self.assertEqual((r.outcome, r.reply, r.conversation_id), (TurnOutcome.SUCCESS, "hello", "s1"))
        u = r.usage.entries[0].usage
        self.assertEqual((u.input, u.output, u.requests), (12, 3, 1))

    def test_failures(self):
        r = self.out('{"error": "echo-cli: error: rate limited, retry in 5s", "session": "s1"}', code=1)
        self.assertEqual((r.outcome, r.reply, r.error), (TurnOutcome.FAILED, None, "echo-cli: error: rate limited, retry in 5s"))
        r = self.out("", "bad flag --x\n", 2)
        self.assertEqual((r.outcome, r.error), (TurnOutcome.FAILED, "bad flag --x"))
        self.assertEqual(self.out("no json").outcome, TurnOutcome.UNKNOWN)


class Hooks(unittest.TestCase):
    def test_config_is_unsupported(self):
        req = HookInstall(dialect="", relay_command="drover relay", events=[], marker="drover")
        for fn in (CLI.install_hooks, CLI.remove_hooks, CLI.detect_hooks):
            self.assertIsInstance(error_of(fn, "", req), AdapterError_Unsupported)

    def test_payloads(self):
        e = CLI.parse_hook(profile(), "stop", b'{"session": "s1", "cwd": "/w", "reply": "done"}')
        self.assertEqual((e.kind, e.session_id, e.last_message), (CanonicalEvent.STOP, "s1", "done"))
        self.assertEqual(e.fields_found, ["session", "cwd", "reply"])
        mapped = CLI.parse_hook(profile(hook_events=[("exit", "Stop")]), "exit", b"")
        self.assertEqual(mapped.kind, CanonicalEvent.STOP)
        self.assertIsInstance(error_of(CLI.parse_hook, profile(), "stop", b"[1]"), AdapterError_InvalidInput)
        self.assertIsInstance(error_of(CLI.parse_hook, profile(), "stop", b"\xff"), AdapterError_InvalidInput)
        self.assertIsInstance(error_of(CLI.parse_hook, profile(), "stop", b"[" * 100000), AdapterError_InvalidInput)

    def test_nesting_is_refused_before_json_parses_it(self):
        # In wasm the native stack would overflow before Python's recursion
        # limit: depth is checked first.
        nested: list = []
        for _ in range(63):
            nested = [nested]
        self.assertEqual(drover_kit.loads("[" * 64 + "]" * 64), nested)
        with self.assertRaises(RecursionError):
            drover_kit.loads("[" * 65 + "]" * 65)
        self.assertEqual(drover_kit.loads('{"a": "[[[[{{{{"}'), {"a": "[[[[{{{{"})


class Transcripts(unittest.TestCase):
    def test_locations(self):
        g = CLI.transcript_locations(profile(), LocationContext(home="/h", cwd="/w", env=[]))
        self.assertEqual((g[0].base, g[0].pattern), (GlobBase.HOME, ".echo-cli/sessions/*.jsonl"))
        g = CLI.transcript_locations(profile(), LocationContext(home="/h", cwd="/w", env=[("ECHO_CLI_HOME", "/e/")]))
        self.assertEqual((g[0].base, g[0].pattern), (GlobBase.ABSOLUTE, "/e/sessions/*.jsonl"))

    def tally(self, text, chunk=7, parser="echo-jsonl"):
        t = app.Tally(parser)
        t.begin_file("/h/.echo-cli/sessions/file-sess.jsonl")
        data = text.encode()
        for i in range(0, len(data), chunk):
            t.feed(data[i:i + chunk])
        return t.finish()

    def test_lines_split_across_chunks_are_joined(self):
        text = "\n".join([
            '{"ts": "2026-11-30T10:00:00Z", "session": "s1", "model": "m", "tokens": {"in": 10, "out": 2}}',
            '{"ts": "2026-11-30T11:00:00Z", "session": "s1", "model": "m", "tokens": {"in": 5, "out": 1}}',
            '{"role": "user", "text": "no usage here"}',
            '{"tokens": {"in": 7, "out": -4}}',
            'not json "tokens"',
        ])
        for chunk in (1, 7, 1000):
            r = self.tally(text, chunk)
            self.assertEqual(r.rejected_rows, 1)
            cells = {(e.session, e.day, e.model): (e.usage.input, e.usage.output, e.usage.requests) for e in r.entries}
            self.assertEqual(cells, {("s1", "2026-11-30", "m"): (15, 3, 2), ("file-sess", "", ""): (7, 0, 1)})

    def test_none_and_unknown_parser(self):
        self.assertIsNone(self.tally('{"role": "user"}\n'))
        self.assertIsInstance(error_of(self.tally, "x", 7, "nope"), AdapterError_Unsupported)


class Faults(unittest.TestCase):
    def test_rules_and_profile_patterns(self):
        f = CLI.classify_fault(profile(), ["ok", "\x1b[31mecho-cli: error: rate limited, retry in 2 minutes\x1b[0m", ""])
        self.assertEqual((f.kind, f.rule, f.retry_after_secs), (FaultKind.RATE_LIMIT, "echo/rate-limit", 120))
        self.assertIsNone(CLI.classify_fault(profile(), ["we handle echo-cli: error: rate limited in prose"]))
        f = CLI.classify_fault(profile(env_fault_patterns=["(unclosed", "^boom: connection"]), ["boom: connection lost"])
        self.assertEqual((f.kind, f.rule), (FaultKind.NETWORK, "profile:1"))


class Screens(unittest.TestCase):
    def read(self, text):
        return CLI.read_screen(profile(), Screen(rows=text.split("\n"), title=""))

    def test_states(self):
        self.assertEqual(self.read("> hi\nthinking… (esc to cancel)\n\necho> ").state, SeatState.WORKING)
        r = self.read("> rm x\nAllow shell? [y/n]\n")
        self.assertEqual((r.state, r.prompt_kind), (SeatState.BLOCKED, PromptKind.PERMISSION))
        self.assertEqual(self.read("hello\n\necho> \n\n").state, SeatState.IDLE)
        self.assertEqual(self.read("random").rule, "none")


if __name__ == "__main__":
    unittest.main(verbosity=1)
