// drover's guest SDK for JavaScript adapters (componentize-qjs).
//
// `adapter(spec)` returns the object to export as `cli`: every function of
// the WIT interface `cli` has a default here (`unsupported`, or the empty
// answer where the function has no error), so `spec` holds the metadata that
// makes up `describe` and only the functions your CLI needs. A `Tally` class
// in `spec` is the `tally` resource; without one every parser is declined.
//
// This file is the JavaScript twin of the Rust kit (`drover_kit`, the crate
// in components/kit): the same defaults, the same template rules.
//
// WIT values in JavaScript (componentize-qjs): records are objects with
// camelCase keys, enums are their case names ("hook-config"), `option` is
// the value or null, `list<u8>` is a Uint8Array, and a function returning
// `result<T, adapter-error>` returns T or throws `unsupported(..)` /
// `invalid(..)`.

/** The `drover:adapter` version this file was written for. */
export const WIT_VERSION = "0.2.0";

/** The rule of the default `read-screen` answer: the adapter reads no screens. */
export const NO_SCREEN_RULE = "unsupported/no-screen-reading";

/** An `unsupported` error to throw. */
export const unsupported = (message) => ({ tag: "unsupported", val: message });

/** An `invalid-input` error to throw. */
export const invalid = (message) => ({ tag: "invalid-input", val: message });

class DeclinedTally {
  constructor(parser) {
    this.parser = parser;
  }
  beginFile(_name) {}
  feed(_chunk) {
    throw unsupported(`unknown usage parser '${this.parser}'`);
  }
  finish() {
    return null;
  }
}

class DeclinedRequestTally {
  constructor(parser) {
    this.parser = parser;
  }
  beginFile(_name) {}
  feed(_chunk) {
    throw unsupported(`usage parser '${this.parser}' reports sums, not requests`);
  }
  finish() {
    throw unsupported(`usage parser '${this.parser}' reports sums, not requests`);
  }
}

/**
 * The default `requests` export (re-export it: `export { requests } from
 * "./drover-kit.js"`): its `request-tally` answers `unsupported`, so the
 * engine reads the adapter's usage through `tally`.
 */
export const requests = { RequestTally: DeclinedRequestTally };

/**
 * The `cli` export: `spec` gives `name`, `version`, `capabilities`,
 * `dialects`, `usageParsers` ([name, needles] pairs), `locationEnv`,
 * `limitations`, any of the interface's functions, and `Tally`.
 */
export function adapter(spec) {
  const name = spec.name ?? "unnamed";
  const declined = (exported) => () => {
    throw unsupported(`adapter '${name}' does not implement ${exported}`);
  };
  const defaults = {
    renderPrompt: declined("render-prompt"),
    interactiveCommand: declined("interactive-command"),
    headlessCommand: declined("headless-command"),
    acpCommand: declined("acp-command"),
    parseTurn: declined("parse-turn"),
    installHooks: declined("install-hooks"),
    removeHooks: declined("remove-hooks"),
    detectHooks: declined("detect-hooks"),
    parseHook: declined("parse-hook"),
    transcriptLocations: () => [],
    classifyFault: () => null,
    readScreen: () => ({ state: "unknown", promptKind: null, rule: NO_SCREEN_RULE, evidence: "", dialog: null }),
    Tally: DeclinedTally,
  };
  const cli = {
    describe: () => ({
      name,
      adapterVersion: spec.version ?? "0.1.0",
      witVersion: WIT_VERSION,
      capabilities: spec.capabilities ?? [],
      dialects: spec.dialects ?? [],
      usageParsers: (spec.usageParsers ?? []).map(([parser, needles]) => ({ name: parser, needles })),
      locationEnv: spec.locationEnv ?? [],
      limitations: spec.limitations ?? [],
    }),
  };
  for (const [key, fallback] of Object.entries(defaults)) {
    cli[key] = spec[key] ?? fallback;
  }
  return cli;
}

/** UTF-8 bytes as a string; null when they are not valid UTF-8. */
export function decodeUtf8(bytes) {
  // Runs of ASCII become strings a block at a time, other characters one
  // at a time: per-character appends are slow in QuickJS.
  const parts = [];
  let i = 0;
  while (i < bytes.length) {
    let end = i;
    while (end < bytes.length && end - i < 8192 && bytes[end] < 0x80) {
      end++;
    }
    if (end > i) {
      parts.push(String.fromCharCode.apply(null, bytes.subarray(i, end)));
      i = end;
      continue;
    }
    const b = bytes[i];
    const extra = b >= 0xc2 && b < 0xe0 ? 1 : b >= 0xe0 && b < 0xf0 ? 2 : b >= 0xf0 && b < 0xf5 ? 3 : -1;
    if (extra < 0) {
      return null;
    }
    let code = b & (0x3f >> extra);
    for (let k = 1; k <= extra; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) {
        return null;
      }
      code = (code << 6) | (c & 0x3f);
    }
    const tooSmall = [0, 0x80, 0x800, 0x10000][extra];
    if (code < tooSmall || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      return null;
    }
    parts.push(String.fromCodePoint(code));
    i += extra + 1;
  }
  return parts.join("");
}

/** The UTF-8 length of a string, for byte offsets the Rust kit reports. */
function utf8Length(text) {
  let n = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0);
    n += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return n;
}

// Rust's `str::trim` strips exactly the Unicode White_Space characters.
const RUST_WHITESPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

/** A prompt starting with `/` is `/skill args`; anything else is all args. */
export function splitSkill(prompt) {
  if (!prompt.startsWith("/")) {
    return ["", prompt];
  }
  const rest = prompt.slice(1);
  const space = rest.indexOf(" ");
  if (space < 0) {
    return [rest, ""];
  }
  return [rest.slice(0, space), rest.slice(space + 1).replace(RUST_WHITESPACE, "")];
}

/** Renders `{prompt}`, `{skill}`, `{args}`; `{{` and `}}` are literal braces. */
export function render(template, prompt) {
  const [skill, args] = splitSkill(prompt);
  const values = { prompt, skill, args };
  let out = "";
  let i = 0;
  while (i < template.length) {
    const c = template[i];
    const next = template[i + 1];
    if ((c === "{" && next === "{") || (c === "}" && next === "}")) {
      out += c;
      i += 2;
    } else if (c === "{") {
      const close = template.indexOf("}", i);
      if (close < 0) {
        throw invalid(`prompt_template: unclosed '{' at byte ${utf8Length(template.slice(0, i))}`);
      }
      const placeholder = template.slice(i + 1, close);
      if (!Object.hasOwn(values, placeholder)) {
        throw invalid(`prompt_template: unknown placeholder {${placeholder}} (known: {prompt}, {skill}, {args})`);
      }
      out += values[placeholder];
      i = close + 1;
    } else if (c === "}") {
      throw invalid(
        `prompt_template: single '}' at byte ${utf8Length(template.slice(0, i))} (write '}}' for a literal brace)`,
      );
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

/** Nesting deeper than this is refused before parsing: deep recursion in the
 * guest would exhaust its stack. */
export const MAX_NESTING = 64;

/** `JSON.parse`, throwing a SyntaxError for nesting deeper than MAX_NESTING. */
export function parseJson(text) {
  // Strings go first (a regex runs in native code), then only brackets are
  // visited.
  const structure = text.replace(/"[^"\\]*(?:\\[\s\S][^"\\]*)*"/g, '""');
  const brackets = /[[\]{}]/g;
  let depth = 0;
  for (let m = brackets.exec(structure); m !== null; m = brackets.exec(structure)) {
    depth += m[0] === "[" || m[0] === "{" ? 1 : -1;
    if (depth > MAX_NESTING) {
      throw new SyntaxError("JSON nested too deeply");
    }
  }
  return JSON.parse(text);
}
