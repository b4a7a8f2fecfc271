"""drover adapter for `echo-cli`, a fictional CLI, written in Python.

This is the example of a drover adapter component built with componentize-py
(see README.md), on drover's Python SDK (`drover_kit.py`, from
components/kit/python). It implements every export of
`drover:adapter/cli@0.2.0`: the functions below are methods of `Cli`, a
`drover_kit.Adapter` whose class attributes make up `describe`, and the
`tally` resource is the class `Tally`, which the last line exports.

Like every adapter, it is pure over its inputs: it never reads files, the
environment or the network. It is built with `--stub-wasi`, so it could not
even if it tried: every WASI import traps.

What echo-cli does (the facts this adapter encodes):
- `echo-cli [--resume ID | --session ID] [PROMPT]` starts an interactive
  session; its prompt line is `echo> `, it shows `thinking… (esc to cancel)`
  while busy and `Allow <tool>? [y/n]` when it needs permission.
- `echo-cli --headless` reads the prompt from stdin and prints one JSON line
  `{"reply": "...", "session": "...", "tokens": {"in": N, "out": M}}`
  (optionally `"model"`), or `{"error": "...", "session": "..."}` on failure.
  Token counts are per turn, not cumulative.
- It runs the command given in `--on-event CMD` with a JSON payload per event
  (`session-start`, `prompt`, `stop`, `error`, `exit`) but has no config file,
  so drover cannot install hooks for it (`hook-config` is unsupported).
- It writes one JSONL transcript per session to
  `$ECHO_CLI_HOME/sessions/<session>.jsonl` (default `~/.echo-cli`); each
  model call is a line with a `tokens` object.
- Fault sentences start with `echo-cli: error: `.
"""

import json
import re
from typing import List, Optional

from drover_kit import Adapter, export_tally, invalid, loads, render, unsupported
from wit_world.exports import cli as cli_exports
from wit_world.imports import host_log
from wit_world.imports.types import (
    CanonicalEvent,
    Capability,
    Command,
    Conversation_Fresh,
    Conversation_Preset,
    Conversation_Resume,
    Fault,
    FaultKind,
    GlobBase,
    HookEdit,
    HookEvent,
    HookInstall,
    HookStatus,
    LaunchRequest,
    LocationContext,
    Profile,
    PromptKind,
    Screen,
    ScreenReading,
    SeatState,
    TranscriptGlob,
    TurnOutcome,
    TurnOutput,
    TurnResult,
    Usage,
    UsageEntry,
    UsageReport,
)

ADAPTER_VERSION = "0.1.0"
PARSER = "echo-jsonl"
HOME_ENV = "ECHO_CLI_HOME"


# --- launch commands --------------------------------------------------------

def checked_id(conversation_id: str) -> str:
    if (
        not conversation_id
        or conversation_id.startswith("-")
        or any(ch.isspace() for ch in conversation_id)
    ):
        raise invalid(f"conversation id '{conversation_id}' is not an echo-cli session id")
    return conversation_id


def conversation_args(conversation) -> List[str]:
    if isinstance(conversation, Conversation_Fresh):
        return []
    if isinstance(conversation, Conversation_Resume):
        return ["--resume", checked_id(conversation.value)]
    if isinstance(conversation, Conversation_Preset):
        return ["--session", checked_id(conversation.value)]
    raise invalid(f"unknown conversation variant {conversation!r}")


def launch_tail(profile: Profile, request: LaunchRequest) -> List[str]:
    """Bypass args (or the request's replacement), then the model flag."""
    argv = list(request.extra_args if request.extra_args is not None else profile.bypass_args)
    if request.model:
        argv += [profile.model_flag or "--model", request.model]
    return argv


# --- headless turns ---------------------------------------------------------

def last_line(text: str) -> Optional[str]:
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()
    return None


def count(value) -> int:
    """A token count as the Rust kit reads one: negative or non-numbers are 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float):
        value = int(value) if value == value and value > 0 and value != float("inf") else 0
    return min(max(value, 0), (1 << 64) - 1)


def result_object(stdout: str) -> Optional[dict]:
    """The last stdout line that is a JSON object with a reply or an error."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and ("reply" in obj or "error" in obj):
            return obj
    return None


def turn_usage(obj: dict) -> Optional[UsageReport]:
    tokens = obj.get("tokens")
    if not isinstance(tokens, dict):
        return None
    session = obj.get("session") if isinstance(obj.get("session"), str) else ""
    model = obj.get("model") if isinstance(obj.get("model"), str) else ""
    usage = Usage(
        input=count(tokens.get("in")),
        output=count(tokens.get("out")),
        cache_read=0,
        cache_write=0,
        reasoning=0,
        requests=1,
    )
    return UsageReport(
        entries=[UsageEntry(session=session, day="", model=model, usage=usage)],
        rejected_rows=0,
    )


def parse_turn(output: TurnOutput) -> TurnResult:
    obj = result_object(output.stdout)
    if obj is None:
        return TurnResult(
            outcome=TurnOutcome.UNKNOWN if output.exit_code == 0 else TurnOutcome.FAILED,
            reply=None,
            conversation_id=None,
            error=last_line(output.stderr) or last_line(output.stdout),
            usage=None,
            prompt_kind=None,
        )
    session = obj.get("session") if isinstance(obj.get("session"), str) and obj.get("session") else None
    error = obj.get("error") if isinstance(obj.get("error"), str) else None
    failed = error is not None or (output.exit_code is not None and output.exit_code != 0)
    reply = obj.get("reply") if isinstance(obj.get("reply"), str) else None
    return TurnResult(
        outcome=TurnOutcome.FAILED if failed else TurnOutcome.SUCCESS,
        reply=None if failed else reply,
        conversation_id=session,
        error=(error or last_line(output.stderr) or f"echo-cli exited with {output.exit_code}") if failed else None,
        usage=turn_usage(obj),
        prompt_kind=None,
    )


# --- hook payloads ----------------------------------------------------------

NATIVE_EVENTS = {
    "session-start": CanonicalEvent.SESSION_START,
    "prompt": CanonicalEvent.PROMPT_SUBMIT,
    "stop": CanonicalEvent.STOP,
    "error": CanonicalEvent.STOP_FAILURE,
    "exit": CanonicalEvent.SESSION_END,
}

# The canonical names profiles use in `[hooks.events]` (kit: CanonicalEvent::from_name).
CANONICAL_NAMES = {
    "SessionStart": CanonicalEvent.SESSION_START,
    "UserPromptSubmit": CanonicalEvent.PROMPT_SUBMIT,
    "PromptSubmit": CanonicalEvent.PROMPT_SUBMIT,
    "Stop": CanonicalEvent.STOP,
    "StopFailure": CanonicalEvent.STOP_FAILURE,
    "SubagentStop": CanonicalEvent.SUBAGENT_STOP,
    "SessionEnd": CanonicalEvent.SESSION_END,
    "PreCompact": CanonicalEvent.PRE_COMPACT,
    "Notification": CanonicalEvent.NOTIFICATION,
    "PermissionRequest": CanonicalEvent.PERMISSION_REQUEST,
    "PreToolUse": CanonicalEvent.TOOL_START,
    "ToolStart": CanonicalEvent.TOOL_START,
    "PostToolUse": CanonicalEvent.TOOL_END,
    "ToolEnd": CanonicalEvent.TOOL_END,
}


def parse_hook(profile: Profile, native: str, payload: bytes) -> HookEvent:
    text = bytes(payload).strip()
    obj: dict = {}
    if text:
        try:
            obj = loads(text.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise invalid(f"hook payload is not UTF-8 (byte {e.start})")
        except json.JSONDecodeError as e:
            raise invalid(f"hook payload is not valid JSON (line {e.lineno}, column {e.colno}): {e.msg}")
        except RecursionError:
            raise invalid("hook payload is nested too deeply")
        if not isinstance(obj, dict):
            raise invalid(f"hook payload is a JSON {type(obj).__name__}, expected an object")
    found: List[str] = []

    def field(key: str) -> Optional[str]:
        value = obj.get(key)
        if isinstance(value, str) and value:
            found.append(key)
            return value
        return None

    mapped = next((CANONICAL_NAMES.get(c) for n, c in profile.hook_events if n == native), None)
    kind = mapped or NATIVE_EVENTS.get(native, CanonicalEvent.OTHER)
    event = HookEvent(
        kind=kind,
        native=native,
        session_id=field("session"),
        transcript_path=field("transcript"),
        cwd=field("cwd"),
        subagent=False,
        reason=None,
        prompt_kind=None,
        last_message=None,
        fields_found=found,
    )
    if kind == CanonicalEvent.STOP:
        event.last_message = field("reply")
    elif kind == CanonicalEvent.STOP_FAILURE:
        event.reason = field("error")
    elif kind == CanonicalEvent.SESSION_END:
        event.reason = field("reason")
    return event


# --- transcripts and usage ------------------------------------------------------

MAX_LINE_BYTES = 16 << 20


def day_of(timestamp: str) -> str:
    """`YYYY-MM-DD` from an ISO timestamp, or empty."""
    return timestamp[:10] if re.match(r"\d{4}-\d{2}-\d{2}", timestamp or "", re.ASCII) else ""


class Tally(cli_exports.Tally):
    """Sums `tokens` rows of echo-cli JSONL transcripts, per (session, day, model).

    Rows: `{"ts": "2026-11-30T10:00:00Z", "session": "s1", "model": "m",
    "tokens": {"in": 12, "out": 34}}`; `session` defaults to the file name.
    """

    def __init__(self, parser: str) -> None:
        self.parser = parser
        self.cells: dict = {}
        self.rejected = 0
        self.saw_usage = False
        self.partial = bytearray()
        self.skipping = False
        self.file_session = ""

    def begin_file(self, name: str) -> None:
        self._end_file()
        base = name.rsplit("/", 1)[-1]
        self.file_session = base[: -len(".jsonl")] if base.endswith(".jsonl") else base

    def feed(self, chunk: bytes) -> None:
        if self.parser != PARSER:
            raise unsupported(f"unknown usage parser '{self.parser}' (this adapter reads '{PARSER}')")
        data = bytes(chunk)
        lines = data.split(b"\n")
        # Every element but the last ended with a newline.
        for piece in lines[:-1]:
            if self.skipping:
                self.skipping = False
                self.partial.clear()
                continue
            if self.partial:
                self.partial += piece
                line = bytes(self.partial)
                self.partial.clear()
            else:
                line = piece
            self._row(line)
        if self.skipping:
            return
        if len(self.partial) + len(lines[-1]) > MAX_LINE_BYTES:
            self.partial.clear()
            self.skipping = True
            self.rejected += 1
            return
        self.partial += lines[-1]

    def finish(self) -> Optional[UsageReport]:
        self._end_file()
        if not self.saw_usage:
            return None
        entries = [
            UsageEntry(
                session=session,
                day=day,
                model=model,
                usage=Usage(input=i, output=o, cache_read=0, cache_write=0, reasoning=0, requests=r),
            )
            for (session, day, model), (i, o, r) in sorted(self.cells.items())
            if (i, o, r) != (0, 0, 0)
        ]
        return UsageReport(entries=entries, rejected_rows=self.rejected)

    def _end_file(self) -> None:
        if self.partial and not self.skipping:
            self._row(bytes(self.partial))
        self.partial.clear()
        self.skipping = False

    def _row(self, line: bytes) -> None:
        if b'"tokens"' not in line:
            return
        try:
            row = loads(line.decode("utf-8"))
        except (ValueError, RecursionError):  # bad JSON, bad UTF-8, absurd nesting
            self.rejected += 1
            return
        if not isinstance(row, dict) or not isinstance(row.get("tokens"), dict):
            self.rejected += 1
            return
        self.saw_usage = True
        tokens = row["tokens"]
        session = row.get("session") if isinstance(row.get("session"), str) and row.get("session") else self.file_session
        day = day_of(row.get("ts")) if isinstance(row.get("ts"), str) else ""
        model = row.get("model") if isinstance(row.get("model"), str) else ""
        key = (session, day, model)
        i, o, r = self.cells.get(key, (0, 0, 0))
        cap = (1 << 64) - 1
        self.cells[key] = (
            min(i + count(tokens.get("in")), cap),
            min(o + count(tokens.get("out")), cap),
            min(r + 1, cap),
        )


# --- faults -----------------------------------------------------------------

EVIDENCE_MAX_CHARS = 240
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

# (rule id, kind, pattern); anchored at the start so prose that quotes a
# sentence does not match.
FAULT_RULES = [
    ("echo/auth", FaultKind.AUTH, r"^echo-cli: error: (?:not logged in|invalid api key)"),
    ("echo/rate-limit", FaultKind.RATE_LIMIT, r"^echo-cli: error: rate limited\b"),
    ("echo/quota", FaultKind.QUOTA, r"^echo-cli: error: quota exceeded\b"),
    ("echo/overload", FaultKind.OVERLOAD, r"^echo-cli: error: server overloaded\b"),
    ("echo/server-error", FaultKind.SERVER_ERROR, r"^echo-cli: error: server error \d{3}\b"),
    ("echo/network", FaultKind.NETWORK, r"^echo-cli: error: (?:cannot connect|connection reset|timed out)\b"),
]


def infer_kind(line: str) -> FaultKind:
    """The kind a profile pattern's line indicates (kit: faults::infer_kind)."""
    lower = line.lower()

    def has(*needles: str) -> bool:
        return any(n in lower for n in needles)

    if has("trust this folder", "trust the files", "do you trust"):
        return FaultKind.TRUST_DIALOG
    if has("401", "unauthorized", "api key", "authentication", "unauthenticated", "log in", "login"):
        return FaultKind.AUTH
    if has("quota", "resource has been exhausted", "billing", "credit balance"):
        return FaultKind.QUOTA
    if has("429", "rate limit", "rate-limit", "too many requests"):
        return FaultKind.RATE_LIMIT
    if has("529", "overloaded", "503", "unavailable", "high demand"):
        return FaultKind.OVERLOAD
    if has("econnrefused", "econnreset", "etimedout", "enotfound", "eai_again", "connection",
           "connect", "network", "fetch failed", "socket", "dns"):
        return FaultKind.NETWORK
    if has("500", "502", "504", "internal server error", "server error", "internal error"):
        return FaultKind.SERVER_ERROR
    return FaultKind.UNKNOWN


_RETRY = re.compile(
    r"(?i)(?:retry(?:ing)?|try again)\s+in\s+(\d+)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b"
    r"|retry-after:\s*(\d+)"
)


def retry_after(line: str) -> Optional[int]:
    m = _RETRY.search(line)
    if not m:
        return None
    amount = int(m.group(1) or m.group(3))
    unit = (m.group(2) or "").lower()
    if unit.startswith("ms") or unit.startswith("milli"):
        secs = -(-amount // 1000)
    elif unit.startswith("m"):
        secs = amount * 60
    elif unit.startswith("h"):
        secs = amount * 3600
    else:
        secs = amount
    return secs if secs < (1 << 32) else None


def classify_fault(profile: Profile, lines: List[str]) -> Optional[Fault]:
    rules = [(rid, kind, re.compile(p)) for rid, kind, p in FAULT_RULES]
    for n, pattern in enumerate(profile.env_fault_patterns):
        try:
            rules.append((f"profile:{n}", None, re.compile(pattern)))
        except (re.error, OverflowError, RecursionError, ValueError):
            continue  # the engine validates profile patterns (Rust regex syntax) at load
    for raw in reversed(lines):
        line = _ANSI.sub("", raw).strip()
        if not line:
            continue
        for rid, kind, regex in rules:
            if regex.search(line):
                return Fault(
                    kind=kind or infer_kind(line),
                    evidence=line[:EVIDENCE_MAX_CHARS],
                    retry_after_secs=retry_after(line),
                    rule=rid,
                )
    return None


# --- screens ----------------------------------------------------------------

# (rule id, rows to look at from the bottom (0 = all), pattern, state, prompt kind)
SCREEN_RULES = [
    ("echo/v1/thinking", 6, r"(?i)\besc to cancel\b", SeatState.WORKING, None),
    ("echo/v1/permission", 6, r"^\s*Allow \S.*\? \[y/n\]\s*$", SeatState.BLOCKED, PromptKind.PERMISSION),
    ("echo/v1/prompt", 3, r"^echo>\s*$", SeatState.IDLE, None),
]


def read_screen(screen: Screen) -> ScreenReading:
    rows = [r.rstrip() for r in screen.rows]
    non_blank = [r for r in rows if r.strip()]
    for rid, bottom, pattern, state, kind in SCREEN_RULES:
        regex = re.compile(pattern)
        candidates = non_blank[-bottom:] if bottom else rows
        for row in candidates:
            if regex.search(row):
                return ScreenReading(state=state, prompt_kind=kind, rule=rid, evidence=row.strip(), dialog=None)
    return ScreenReading(state=SeatState.UNKNOWN, prompt_kind=None, rule="none", evidence="", dialog=None)


# --- the exported interface ---------------------------------------------------

class Cli(Adapter):
    NAME = "python-example"
    VERSION = ADAPTER_VERSION
    CAPABILITIES = [
        Capability.PROMPT,
        Capability.COMMANDS,
        Capability.HEADLESS,
        Capability.HOOK_PAYLOADS,
        Capability.TRANSCRIPTS,
        Capability.USAGE,
        Capability.FAULTS,
        Capability.SCREEN,
    ]
    USAGE_PARSERS = [(PARSER, ['"tokens"'])]
    LOCATION_ENV = [HOME_ENV]
    LIMITATIONS = [
        "echo-cli has no hook config file: drover cannot install hooks for it",
        "an interactive pane cannot tell done from idle",
    ]

    def describe(self):
        host_log.log(host_log.Level.DEBUG, f"python-example {ADAPTER_VERSION}: describe (componentize-py guest)")
        return super().describe()

    def render_prompt(self, profile: Profile, prompt: str) -> str:
        return render(profile.prompt_template, prompt)

    def interactive_command(self, profile: Profile, request: LaunchRequest) -> Command:
        argv = [profile.binary or "echo-cli", *profile.launch_args, *conversation_args(request.conversation)]
        if request.prompt:
            argv.append(render(profile.prompt_template, request.prompt))
        argv += launch_tail(profile, request)
        return Command(argv=argv, env=[], stdin=None)

    def headless_command(self, profile: Profile, request: LaunchRequest) -> Command:
        if not request.prompt:
            raise invalid("a headless turn needs a prompt")
        argv = [profile.binary or "echo-cli", "--headless", *conversation_args(request.conversation)]
        argv += profile.turn_args
        argv += launch_tail(profile, request)
        # The prompt goes on stdin, so it never shows up in `ps`.
        return Command(
            argv=argv,
            env=[("NO_COLOR", "1")],
            stdin=render(profile.prompt_template, request.prompt),
        )

    def acp_command(self, profile: Profile, request: LaunchRequest) -> Command:
        # The component model has no default methods: every export is written.
        raise unsupported("echo-cli has no Agent Client Protocol mode")

    def parse_turn(self, profile: Profile, output: TurnOutput) -> TurnResult:
        return parse_turn(output)

    def install_hooks(self, existing: str, request: HookInstall) -> HookEdit:
        raise unsupported("echo-cli has no hook config file; pass `--on-event CMD` in launch_args instead")

    def remove_hooks(self, existing: str, request: HookInstall) -> HookEdit:
        raise unsupported("echo-cli has no hook config file; nothing to remove")

    def detect_hooks(self, existing: str, request: HookInstall) -> HookStatus:
        raise unsupported("echo-cli has no hook config file; nothing to detect")

    def parse_hook(self, profile: Profile, native_event: str, payload: bytes) -> HookEvent:
        return parse_hook(profile, native_event, payload)

    def transcript_locations(self, profile: Profile, context: LocationContext) -> List[TranscriptGlob]:
        home = next((v for k, v in context.env if k == HOME_ENV and v), None)
        if home:
            return [TranscriptGlob(GlobBase.ABSOLUTE, home.rstrip("/") + "/sessions/*.jsonl", "jsonl", PARSER)]
        return [TranscriptGlob(GlobBase.HOME, ".echo-cli/sessions/*.jsonl", "jsonl", PARSER)]

    def classify_fault(self, profile: Profile, lines: List[str]) -> Optional[Fault]:
        return classify_fault(profile, lines)

    def read_screen(self, profile: Profile, screen: Screen) -> ScreenReading:
        return read_screen(screen)


export_tally(Tally)
