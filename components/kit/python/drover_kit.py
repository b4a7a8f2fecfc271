"""drover's guest SDK for Python adapters (componentize-py).

Name your exported class `Cli` and derive it from `Adapter`: every function
of the WIT interface `cli` has a default here (`unsupported`, or the empty
answer where the function has no error), so the class holds only what your
CLI needs. `describe` is built from the class attributes. The `tally`
resource defaults to one that declines every parser; give yours with
`export_tally(MyTally)`.

This file is the Python twin of the Rust kit (`drover_kit`, the crate in
components/kit): the same defaults, the same template rules.
"""

import json
import sys
from types import ModuleType
from typing import List, Optional, Sequence, Tuple

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import cli as cli_exports
from wit_world.exports import requests as requests_exports
from wit_world.imports.types import (
    AdapterError_InvalidInput,
    AdapterError_Unsupported,
    Capability,
    Command,
    Description,
    Fault,
    HookEdit,
    HookEvent,
    HookInstall,
    HookStatus,
    LaunchRequest,
    LocationContext,
    Profile,
    Screen,
    ScreenReading,
    SeatState,
    TranscriptGlob,
    TurnOutput,
    TurnResult,
    UsageParser,
    UsageReport,
)

# The `drover:adapter` version this file was written for; `describe` reports it.
WIT_VERSION = "0.2.0"

# The rule of the default `read-screen` answer: the adapter reads no screens.
NO_SCREEN_RULE = "unsupported/no-screen-reading"


def invalid(message: str) -> Err:
    """An `invalid-input` error to raise."""
    return Err(AdapterError_InvalidInput(message))


def unsupported(message: str) -> Err:
    """An `unsupported` error to raise."""
    return Err(AdapterError_Unsupported(message))


class Adapter(exports.Cli):
    """Defaults for every function of `cli`; override what your CLI needs and
    list its capability in CAPABILITIES."""

    NAME: str = "unnamed"
    VERSION: str = "0.1.0"
    CAPABILITIES: Sequence[Capability] = ()
    DIALECTS: Sequence[str] = ()
    # (parser name, needles): lines without a needle may be dropped unread.
    USAGE_PARSERS: Sequence[Tuple[str, Sequence[str]]] = ()
    LOCATION_ENV: Sequence[str] = ()
    LIMITATIONS: Sequence[str] = ()

    def _declined(self, export: str) -> Err:
        return unsupported(f"adapter '{self.NAME}' does not implement {export}")

    def describe(self) -> Description:
        return Description(
            name=self.NAME,
            adapter_version=self.VERSION,
            wit_version=WIT_VERSION,
            capabilities=list(self.CAPABILITIES),
            dialects=list(self.DIALECTS),
            usage_parsers=[UsageParser(name=name, needles=list(needles)) for name, needles in self.USAGE_PARSERS],
            location_env=list(self.LOCATION_ENV),
            limitations=list(self.LIMITATIONS),
        )

    def render_prompt(self, profile: Profile, prompt: str) -> str:
        raise self._declined("render-prompt")

    def interactive_command(self, profile: Profile, request: LaunchRequest) -> Command:
        raise self._declined("interactive-command")

    def headless_command(self, profile: Profile, request: LaunchRequest) -> Command:
        raise self._declined("headless-command")

    def acp_command(self, profile: Profile, request: LaunchRequest) -> Command:
        raise self._declined("acp-command")

    def parse_turn(self, profile: Profile, output: TurnOutput) -> TurnResult:
        raise self._declined("parse-turn")

    def install_hooks(self, existing: str, request: HookInstall) -> HookEdit:
        raise self._declined("install-hooks")

    def remove_hooks(self, existing: str, request: HookInstall) -> HookEdit:
        raise self._declined("remove-hooks")

    def detect_hooks(self, existing: str, request: HookInstall) -> HookStatus:
        raise self._declined("detect-hooks")

    def parse_hook(self, profile: Profile, native_event: str, payload: bytes) -> HookEvent:
        raise self._declined("parse-hook")

    def transcript_locations(self, profile: Profile, context: LocationContext) -> List[TranscriptGlob]:
        return []

    def classify_fault(self, profile: Profile, lines: List[str]) -> Optional[Fault]:
        return None

    def read_screen(self, profile: Profile, screen: Screen) -> ScreenReading:
        return ScreenReading(state=SeatState.UNKNOWN, prompt_kind=None, rule=NO_SCREEN_RULE, evidence="", dialog=None)


class DeclinedTally(cli_exports.Tally):
    """The default `tally`: knows no parser, so every feed is declined."""

    def __init__(self, parser: str) -> None:
        self.parser = parser

    def begin_file(self, name: str) -> None:
        pass

    def feed(self, chunk: bytes) -> None:
        raise unsupported(f"unknown usage parser '{self.parser}'")

    def finish(self) -> Optional[UsageReport]:
        return None


def export_tally(cls) -> None:
    """Makes `cls` the `tally` resource: componentize-py looks an exported
    interface's resources up in a module named after the interface."""
    module = ModuleType("cli")
    module.Tally = cls
    sys.modules["cli"] = module


export_tally(DeclinedTally)


class DeclinedRequestTally(requests_exports.RequestTally):
    """The default `request-tally` (`requests` interface): the adapter's
    parsers report sums through `tally`, which the engine reads when this
    one answers `unsupported`."""

    def __init__(self, parser: str) -> None:
        self.parser = parser

    def begin_file(self, name: str) -> None:
        pass

    def feed(self, chunk: bytes) -> list:
        raise unsupported(f"usage parser '{self.parser}' reports sums, not requests")

    def finish(self):
        raise unsupported(f"usage parser '{self.parser}' reports sums, not requests")


def export_request_tally(cls) -> None:
    """Makes `cls` the `request-tally` resource (module `requests`, as for
    `export_tally`)."""
    module = ModuleType("requests")
    module.RequestTally = cls
    sys.modules["requests"] = module


export_request_tally(DeclinedRequestTally)


# --- hostile JSON ----------------------------------------------------------

# The guest's native stack runs out long before Python's recursion limit, so
# deeply nested JSON would trap instead of raising RecursionError: `loads`
# refuses it before parsing.
MAX_NESTING = 64


def loads(text: str):
    """`json.loads`, raising RecursionError for nesting deeper than MAX_NESTING."""
    depth = 0
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_NESTING:
                raise RecursionError("JSON nested too deeply")
        elif ch in "]}":
            depth -= 1
    return json.loads(text)


# --- prompt templates (the Rust kit's components/kit/src/prompt.rs) --------

# Rust's `str::trim` strips exactly the Unicode White_Space characters;
# Python's `str.strip()` also strips \x1c-\x1f, so spell the set out.
_RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def split_skill(prompt: str) -> Tuple[str, str]:
    """A prompt starting with `/` is `/skill args`; anything else is all args."""
    if not prompt.startswith("/"):
        return "", prompt
    rest = prompt[1:]
    skill, sep, args = rest.partition(" ")
    if not sep:
        return rest, ""
    return skill, args.strip(_RUST_WHITESPACE)


def render(template: str, prompt: str) -> str:
    """Renders `{prompt}`, `{skill}`, `{args}`; `{{`/`}}` are literal braces.

    Works on UTF-8 bytes so error messages give the same byte offsets as the
    Rust kit.
    """
    skill, args = split_skill(prompt)
    values = {b"prompt": prompt, b"skill": skill, b"args": args}
    data = template.encode("utf-8")
    out: List[str] = []
    start = 0
    i = 0
    n = len(data)
    while i < n:
        c = data[i]
        nxt = data[i + 1] if i + 1 < n else None
        if c == 0x7B and nxt == 0x7B:  # "{{"
            out.append(data[start:i + 1].decode("utf-8"))
            i += 2
            start = i
        elif c == 0x7D and nxt == 0x7D:  # "}}"
            out.append(data[start:i + 1].decode("utf-8"))
            i += 2
            start = i
        elif c == 0x7B:  # "{name}"
            out.append(data[start:i].decode("utf-8"))
            close = data.find(b"}", i)
            if close < 0:
                raise invalid(f"prompt_template: unclosed '{{' at byte {i}")
            name = data[i + 1:close]
            if name not in values:
                raise invalid(
                    "prompt_template: unknown placeholder {%s} "
                    "(known: {prompt}, {skill}, {args})" % name.decode("utf-8")
                )
            out.append(values[name])
            i = close + 1
            start = i
        elif c == 0x7D:
            raise invalid(
                f"prompt_template: single '}}' at byte {i} (write '}}}}' for a literal brace)"
            )
        else:
            i += 1
    out.append(data[start:].decode("utf-8"))
    return "".join(out)
