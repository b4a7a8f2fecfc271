// drover adapter for `echo-cli`, the fictional CLI of the Python example
// (examples/python-adapter/README.md describes it), written in JavaScript on
// drover's JavaScript SDK (`drover-kit.js`, a link to
// components/kit/js/drover-kit.js) and built with componentize-qjs
// (build.sh). It answers every export the way the Python example does.
//
// Like every adapter it is pure over its inputs, and it is built with
// `--stub-wasi`, so every WASI import traps.

import { log } from "drover:adapter/host-log@0.2.0";
import { adapter, decodeUtf8, invalid, parseJson, render, unsupported } from "./drover-kit.js";

// echo-cli's parser reports sums: the SDK's `requests` declines per-request usage.
export { requests } from "./drover-kit.js";

const PARSER = "echo-jsonl";
const HOME_ENV = "ECHO_CLI_HOME";
const MAX_LINE_BYTES = 16 << 20;
const EVIDENCE_MAX_CHARS = 240;

// --- launch commands ---------------------------------------------------------

function checkedId(id) {
  if (!id || id.startsWith("-") || /\s/.test(id)) {
    throw invalid(`conversation id '${id}' is not an echo-cli session id`);
  }
  return id;
}

function conversationArgs(conversation) {
  switch (conversation.tag) {
    case "fresh":
      return [];
    case "resume":
      return ["--resume", checkedId(conversation.val)];
    case "preset":
      return ["--session", checkedId(conversation.val)];
    default:
      throw invalid(`unknown conversation variant ${conversation.tag}`);
  }
}

/** Bypass args (or the request's replacement), then the model flag. */
function launchTail(profile, request) {
  const argv = [...(request.extraArgs ?? profile.bypassArgs)];
  if (request.model) {
    argv.push(profile.modelFlag || "--model", request.model);
  }
  return argv;
}

// --- headless turns ------------------------------------------------------------

function lastLine(text) {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l);
  return lines.length ? lines[lines.length - 1] : null;
}

/** A token count as the Rust kit reads one: negative or non-numbers are 0. */
function count(value) {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const text = (v) => (typeof v === "string" && v ? v : null);

/** The last stdout line that is a JSON object with a reply or an error. */
function resultObject(stdout) {
  for (const raw of stdout.split("\n").reverse()) {
    const line = raw.trim();
    if (!line.startsWith("{")) {
      continue;
    }
    try {
      const obj = parseJson(line);
      if (isObject(obj) && ("reply" in obj || "error" in obj)) {
        return obj;
      }
    } catch {
      // not JSON: keep looking
    }
  }
  return null;
}

function turnUsage(obj) {
  if (!isObject(obj.tokens)) {
    return null;
  }
  const usage = {
    input: count(obj.tokens.in),
    output: count(obj.tokens.out),
    cacheRead: 0,
    cacheWrite: 0,
    reasoning: 0,
    requests: 1,
  };
  const session = typeof obj.session === "string" ? obj.session : "";
  const model = typeof obj.model === "string" ? obj.model : "";
  return { entries: [{ session, day: "", model, usage }], rejectedRows: 0 };
}

function parseTurn(_profile, output) {
  const obj = resultObject(output.stdout);
  if (obj === null) {
    return {
      outcome: output.exitCode === 0 ? "unknown" : "failed",
      reply: null,
      conversationId: null,
      error: lastLine(output.stderr) ?? lastLine(output.stdout),
      usage: null,
      promptKind: null,
    };
  }
  const error = typeof obj.error === "string" ? obj.error : null;
  const failed = error !== null || (output.exitCode !== null && output.exitCode !== 0);
  return {
    outcome: failed ? "failed" : "success",
    reply: failed ? null : typeof obj.reply === "string" ? obj.reply : null,
    conversationId: text(obj.session),
    error: failed ? error || lastLine(output.stderr) || `echo-cli exited with ${output.exitCode}` : null,
    usage: turnUsage(obj),
    promptKind: null,
  };
}

// --- hook payloads ---------------------------------------------------------------

const NATIVE_EVENTS = {
  "session-start": "session-start",
  prompt: "prompt-submit",
  stop: "stop",
  error: "stop-failure",
  exit: "session-end",
};

// The canonical names profiles use in `[hooks.events]` (kit: CanonicalEvent::from_name).
const CANONICAL_NAMES = {
  SessionStart: "session-start",
  UserPromptSubmit: "prompt-submit",
  PromptSubmit: "prompt-submit",
  Stop: "stop",
  StopFailure: "stop-failure",
  SubagentStop: "subagent-stop",
  SessionEnd: "session-end",
  PreCompact: "pre-compact",
  Notification: "notification",
  PermissionRequest: "permission-request",
  PreToolUse: "tool-start",
  ToolStart: "tool-start",
  PostToolUse: "tool-end",
  ToolEnd: "tool-end",
};

function parseHook(profile, native, payload) {
  const raw = decodeUtf8(payload);
  if (raw === null) {
    throw invalid("hook payload is not UTF-8");
  }
  let obj = {};
  if (raw.trim()) {
    try {
      obj = parseJson(raw);
    } catch (e) {
      throw invalid(`hook payload is not valid JSON: ${e.message}`);
    }
    if (!isObject(obj)) {
      throw invalid(`hook payload is a JSON ${Array.isArray(obj) ? "array" : typeof obj}, expected an object`);
    }
  }
  const found = [];
  const field = (key) => {
    const value = text(obj[key]);
    if (value !== null) {
      found.push(key);
    }
    return value;
  };
  const mapped = profile.hookEvents.find(([n]) => n === native);
  const kind = (mapped && CANONICAL_NAMES[mapped[1]]) || NATIVE_EVENTS[native] || "other";
  const event = {
    kind,
    native,
    sessionId: field("session"),
    transcriptPath: field("transcript"),
    cwd: field("cwd"),
    subagent: false,
    reason: null,
    promptKind: null,
    lastMessage: null,
    fieldsFound: found,
  };
  if (kind === "stop") {
    event.lastMessage = field("reply");
  } else if (kind === "stop-failure") {
    event.reason = field("error");
  } else if (kind === "session-end") {
    event.reason = field("reason");
  }
  return event;
}

// --- transcripts and usage ----------------------------------------------------------

function dayOf(timestamp) {
  return typeof timestamp === "string" && /^\d{4}-\d{2}-\d{2}/.test(timestamp) ? timestamp.slice(0, 10) : "";
}

const NEEDLE = [...'"tokens"'].map((c) => c.charCodeAt(0));

/** Whether the line's bytes contain `"tokens"` (checked before decoding). */
function hasTokens(bytes) {
  outer: for (let i = 0; i + NEEDLE.length <= bytes.length; i++) {
    for (let k = 0; k < NEEDLE.length; k++) {
      if (bytes[i + k] !== NEEDLE[k]) continue outer;
    }
    return true;
  }
  return false;
}

/** Sums `tokens` rows of echo-cli JSONL transcripts, per (session, day, model). */
class Tally {
  constructor(parser) {
    this.parser = parser;
    this.cells = new Map();
    this.rejected = 0;
    this.sawUsage = false;
    this.partial = [];
    this.partialBytes = 0;
    this.skipping = false;
    this.fileSession = "";
  }

  beginFile(name) {
    this.endFile();
    const base = name.split("/").pop();
    this.fileSession = base.endsWith(".jsonl") ? base.slice(0, -".jsonl".length) : base;
  }

  feed(chunk) {
    if (this.parser !== PARSER) {
      throw unsupported(`unknown usage parser '${this.parser}' (this adapter reads '${PARSER}')`);
    }
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] !== 10) {
        continue;
      }
      const piece = chunk.subarray(start, i);
      start = i + 1;
      if (this.skipping) {
        this.skipping = false;
        this.partial = [];
        this.partialBytes = 0;
        continue;
      }
      this.row(this.take(piece));
    }
    if (this.skipping) {
      return;
    }
    const rest = chunk.subarray(start);
    if (this.partialBytes + rest.length > MAX_LINE_BYTES) {
      this.partial = [];
      this.partialBytes = 0;
      this.skipping = true;
      this.rejected += 1;
      return;
    }
    this.partial.push(rest.slice());
    this.partialBytes += rest.length;
  }

  /** The buffered start of a line followed by `piece`. */
  take(piece) {
    if (this.partialBytes === 0) {
      this.partial = [];
      return piece;
    }
    const line = new Uint8Array(this.partialBytes + piece.length);
    let at = 0;
    for (const part of [...this.partial, piece]) {
      line.set(part, at);
      at += part.length;
    }
    this.partial = [];
    this.partialBytes = 0;
    return line;
  }

  finish() {
    this.endFile();
    if (!this.sawUsage) {
      return null;
    }
    const entries = [...this.cells.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, [input, output, requests]]) => {
        const [session, day, model] = JSON.parse(key);
        const usage = { input, output, cacheRead: 0, cacheWrite: 0, reasoning: 0, requests };
        return { session, day, model, usage };
      })
      .filter((e) => e.usage.input || e.usage.output || e.usage.requests);
    return { entries, rejectedRows: this.rejected };
  }

  endFile() {
    if (this.partialBytes > 0 && !this.skipping) {
      this.row(this.take(new Uint8Array(0)));
    }
    this.partial = [];
    this.partialBytes = 0;
    this.skipping = false;
  }

  row(bytes) {
    if (!hasTokens(bytes)) {
      return;
    }
    const line = decodeUtf8(bytes);
    if (line === null) {
      this.rejected += 1;
      return;
    }
    let row;
    try {
      row = parseJson(line);
    } catch {
      this.rejected += 1;
      return;
    }
    if (!isObject(row) || !isObject(row.tokens)) {
      this.rejected += 1;
      return;
    }
    this.sawUsage = true;
    const key = JSON.stringify([text(row.session) ?? this.fileSession, dayOf(row.ts), typeof row.model === "string" ? row.model : ""]);
    const [input, output, requests] = this.cells.get(key) ?? [0, 0, 0];
    this.cells.set(key, [input + count(row.tokens.in), output + count(row.tokens.out), requests + 1]);
  }
}

// --- faults -------------------------------------------------------------------

const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

// Anchored at the start so prose that quotes a sentence does not match.
const FAULT_RULES = [
  ["echo/auth", "auth", /^echo-cli: error: (?:not logged in|invalid api key)/],
  ["echo/rate-limit", "rate-limit", /^echo-cli: error: rate limited\b/],
  ["echo/quota", "quota", /^echo-cli: error: quota exceeded\b/],
  ["echo/overload", "overload", /^echo-cli: error: server overloaded\b/],
  ["echo/server-error", "server-error", /^echo-cli: error: server error \d{3}\b/],
  ["echo/network", "network", /^echo-cli: error: (?:cannot connect|connection reset|timed out)\b/],
];

/** The kind a profile pattern's line indicates (kit: faults::infer_kind). */
function inferKind(line) {
  const lower = line.toLowerCase();
  const has = (...needles) => needles.some((n) => lower.includes(n));
  if (has("trust this folder", "trust the files", "do you trust")) return "trust-dialog";
  if (has("401", "unauthorized", "api key", "authentication", "unauthenticated", "log in", "login")) return "auth";
  if (has("quota", "resource has been exhausted", "billing", "credit balance")) return "quota";
  if (has("429", "rate limit", "rate-limit", "too many requests")) return "rate-limit";
  if (has("529", "overloaded", "503", "unavailable", "high demand")) return "overload";
  if (has("econnrefused", "econnreset", "etimedout", "enotfound", "eai_again", "connection", "connect", "network", "fetch failed", "socket", "dns")) return "network";
  if (has("500", "502", "504", "internal server error", "server error", "internal error")) return "server-error";
  return "unknown";
}

const RETRY =
  /(?:retry(?:ing)?|try again)\s+in\s+(\d+)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b|retry-after:\s*(\d+)/i;

function retryAfter(line) {
  const m = RETRY.exec(line);
  if (!m) return null;
  const amount = Number(m[1] ?? m[3]);
  const unit = (m[2] ?? "").toLowerCase();
  const secs = unit.startsWith("ms") || unit.startsWith("milli") ? Math.ceil(amount / 1000)
    : unit.startsWith("m") ? amount * 60
    : unit.startsWith("h") ? amount * 3600
    : amount;
  return secs < 2 ** 32 ? secs : null;
}

function classifyFault(profile, lines) {
  const rules = [...FAULT_RULES];
  profile.envFaultPatterns.forEach((pattern, n) => {
    try {
      rules.push([`profile:${n}`, null, new RegExp(pattern)]);
    } catch {
      // the engine validates profile patterns (Rust regex syntax) at load
    }
  });
  for (const raw of [...lines].reverse()) {
    const line = raw.replace(ANSI, "").trim();
    if (!line) continue;
    for (const [rule, kind, regex] of rules) {
      if (regex.test(line)) {
        return {
          kind: kind ?? inferKind(line),
          evidence: [...line].slice(0, EVIDENCE_MAX_CHARS).join(""),
          retryAfterSecs: retryAfter(line),
          rule,
        };
      }
    }
  }
  return null;
}

// --- screens --------------------------------------------------------------------

// [rule id, rows to look at from the bottom (0 = all), pattern, state, prompt kind]
const SCREEN_RULES = [
  ["echo/v1/thinking", 6, /\besc to cancel\b/i, "working", null],
  ["echo/v1/permission", 6, /^\s*Allow \S.*\? \[y\/n\]\s*$/, "blocked", "permission"],
  ["echo/v1/prompt", 3, /^echo>\s*$/, "idle", null],
];

function readScreen(_profile, screen) {
  const rows = screen.rows.map((r) => r.trimEnd());
  const nonBlank = rows.filter((r) => r.trim());
  for (const [rule, bottom, pattern, state, promptKind] of SCREEN_RULES) {
    const candidates = bottom ? nonBlank.slice(-bottom) : rows;
    const hit = candidates.find((row) => pattern.test(row));
    if (hit !== undefined) {
      return { state, promptKind, rule, evidence: hit.trim(), dialog: null };
    }
  }
  return { state: "unknown", promptKind: null, rule: "none", evidence: "", dialog: null };
}

// --- the exported interface -------------------------------------------------------

const spec = {
  name: "js-example",
  version: "0.1.0",
  capabilities: ["prompt", "commands", "headless", "hook-payloads", "transcripts", "usage", "faults", "screen"],
  usageParsers: [[PARSER, ['"tokens"']]],
  locationEnv: [HOME_ENV],
  limitations: [
    "echo-cli has no hook config file: drover cannot install hooks for it",
    "an interactive pane cannot tell done from idle",
  ],

  renderPrompt: (profile, prompt) => render(profile.promptTemplate, prompt),

  interactiveCommand(profile, request) {
    const argv = [profile.binary || "echo-cli", ...profile.launchArgs, ...conversationArgs(request.conversation)];
    if (request.prompt) {
      argv.push(render(profile.promptTemplate, request.prompt));
    }
    return { argv: [...argv, ...launchTail(profile, request)], env: [], stdin: null };
  },

  headlessCommand(profile, request) {
    if (!request.prompt) {
      throw invalid("a headless turn needs a prompt");
    }
    const argv = [
      profile.binary || "echo-cli",
      "--headless",
      ...conversationArgs(request.conversation),
      ...profile.turnArgs,
      ...launchTail(profile, request),
    ];
    // The prompt goes on stdin, so it never shows up in `ps`.
    return { argv, env: [["NO_COLOR", "1"]], stdin: render(profile.promptTemplate, request.prompt) };
  },

  parseTurn,

  installHooks() {
    throw unsupported("echo-cli has no hook config file; pass `--on-event CMD` in launch_args instead");
  },
  removeHooks() {
    throw unsupported("echo-cli has no hook config file; nothing to remove");
  },
  detectHooks() {
    throw unsupported("echo-cli has no hook config file; nothing to detect");
  },

  parseHook,

  transcriptLocations(_profile, context) {
    const home = context.env.find(([k, v]) => k === HOME_ENV && v);
    if (home) {
      return [{ base: "absolute", pattern: `${home[1].replace(/\/+$/, "")}/sessions/*.jsonl`, format: "jsonl", parser: PARSER }];
    }
    return [{ base: "home", pattern: ".echo-cli/sessions/*.jsonl", format: "jsonl", parser: PARSER }];
  },

  classifyFault,
  readScreen,
  Tally,
};

const base = adapter(spec);

export const cli = {
  ...base,
  describe() {
    log("debug", "js-example 0.1.0: describe (componentize-qjs guest)");
    return base.describe();
  },
};
