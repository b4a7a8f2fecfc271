//! The report's Markdown rendering: a summary, then one section per part
//! of the model, every value in a code span or fence.

use super::{Report, Severity};
use crate::sanitize::Clean;
use crate::schema::KeyPath;

/// A fence longer than any backtick run inside `body`.
fn fenced(out: &mut String, body: &str) {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    out.push_str(&fence);
    out.push_str("text\n");
    out.push_str(body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
}

fn yes_no(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

fn code(c: &Clean) -> String {
    format!("`{}`", c.as_str().replace('`', "'"))
}

pub fn markdown(r: &Report) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "# drover probe-adapter report — {} ({})\n\n",
        code(&r.cli),
        r.mode.name()
    ));

    o.push_str("## Summary\n\n");
    match &r.profile_source {
        Some(source) => o.push_str(&format!("- CLI: {} (profile: {})\n", code(&r.cli), source)),
        None => o.push_str(&format!(
            "- CLI: {} (no profile: reduced report)\n",
            code(&r.cli)
        )),
    }
    o.push_str(&format!(
        "- Binary: {} {}\n",
        code(&r.binary.name),
        if r.binary.found { "found" } else { "NOT found" }
    ));
    if let Some(a) = &r.adapter {
        o.push_str(&format!(
            "- Adapter: {} {} ({}, drover:adapter@{})\n",
            code(&a.name),
            a.version,
            a.origin,
            a.wit_version
        ));
    }
    if let Some(h) = &r.hooks {
        if h.hookless {
            o.push_str("- Hook dialect: none (hookless)\n");
        } else {
            o.push_str(&format!(
                "- Hook dialect: {}; hooks registered: {}\n",
                code(&h.dialect),
                yes_no(h.registered)
            ));
        }
    }
    if let Some(p) = &r.usage_parser {
        o.push_str(&format!("- Usage parser: {}\n", code(p)));
    }
    match &r.transcript.file {
        Some(f) => o.push_str(&format!(
            "- Transcript: found ({}, {} lines)\n",
            f.format, f.line_count
        )),
        None => o.push_str("- Transcript: none found\n"),
    }
    o.push_str(&format!("- Warnings: {}\n\n", r.warnings()));

    o.push_str("## CLI flags\n\n");
    match &r.binary.version {
        Some(v) => {
            o.push_str("`--version`:\n\n");
            fenced(&mut o, v.as_str());
        }
        None => o.push_str("`--version`: not available\n"),
    }
    match &r.binary.help {
        Some(h) => {
            o.push_str("\n<details><summary><code>--help</code> (scrubbed)</summary>\n\n");
            fenced(&mut o, h.as_str());
            o.push_str("\n</details>\n\n");
        }
        None => o.push_str("\n`--help`: not available\n\n"),
    }

    o.push_str("## Hook payload shape\n\n");
    match &r.hooks {
        None => o.push_str("No profile: no hook dialect is declared.\n\n"),
        Some(h) if h.hookless => o.push_str(
            "The profile is hookless (dialect `none`): turn ends come from the process exit.\n\n",
        ),
        Some(h) => {
            if let Some(path) = &h.config_path {
                o.push_str(&format!("Hook config: {}\n\n", code(path)));
            }
            o.push_str("Declared events (native → canonical, relay registered):\n\n");
            for e in &h.events {
                o.push_str(&format!(
                    "- {} → {} ({})\n",
                    code(&e.native),
                    code(&e.canonical),
                    yes_no(e.registered)
                ));
            }
            o.push('\n');
            for c in &h.captured {
                o.push_str(&format!(
                    "### {} → {} (adapter: {})\n\n",
                    code(&c.native),
                    c.canonical.as_ref().map_or("`?`".to_string(), code),
                    c.adapter_kind.as_ref().map_or("`?`".to_string(), code)
                ));
                let keys: Vec<String> = c.payload_keys.iter().map(code).collect();
                o.push_str(&format!("- payload keys: {}\n", keys.join(", ")));
                let read: Vec<String> = c.fields_found.iter().map(code).collect();
                o.push_str(&format!("- read by the adapter: {}\n", read.join(", ")));
                if let Some(sub) = c.subagent {
                    o.push_str(&format!("- subagent: {}\n", yes_no(Some(sub))));
                }
                o.push('\n');
                let schema: Vec<String> = c.payload_schema.iter().map(key_path_line).collect();
                fenced(&mut o, &schema.join("\n"));
                o.push('\n');
            }
        }
    }

    o.push_str("## Adapter self-check\n\n");
    match &r.adapter {
        None => o.push_str("No adapter component was loaded.\n\n"),
        Some(a) => {
            o.push_str(&format!(
                "Component {} ({}); capabilities: {}\n\n",
                code(&a.component),
                a.origin,
                join_code(&a.capabilities)
            ));
            if !a.limitations.is_empty() {
                o.push_str("Limitations the adapter states:\n\n");
                for l in &a.limitations {
                    o.push_str(&format!("- {}\n", code(l)));
                }
                o.push('\n');
            }
            o.push_str("| call | outcome | detail |\n| --- | --- | --- |\n");
            for c in &a.calls {
                o.push_str(&format!(
                    "| {} | {} | {} |\n",
                    code(&c.export),
                    c.outcome.name(),
                    code(&c.detail).replace('|', "\\|")
                ));
            }
            o.push('\n');
        }
    }

    o.push_str("## Transcript\n\n");
    if !r.transcript.conventions.is_empty() {
        o.push_str(&format!(
            "Adapter conventions: {}\n\n",
            join_code(&r.transcript.conventions)
        ));
    }
    match &r.transcript.file {
        None => o.push_str(&format!(
            "No transcript found (searched: {}).\n\n",
            r.transcript.source
        )),
        Some(f) => {
            o.push_str(&format!("- source: {}\n", r.transcript.source));
            o.push_str(&format!("- location: {}\n", code(&f.location)));
            if let Some(g) = &f.glob {
                o.push_str(&format!("- matched by: {}\n", code(g)));
            }
            o.push_str(&format!("- format: {}\n", code(&f.format)));
            o.push_str(&format!(
                "- size: {} bytes, {} lines\n",
                f.size_bytes, f.line_count
            ));
            o.push_str(&format!("- modified: {} (UTC)\n", f.modified_date));
            o.push_str(&format!("- files matched: {}\n\n", f.matches));
        }
    }

    o.push_str("## Token usage schema\n\n");
    match &r.tokens {
        None => o.push_str("No transcript was read.\n\n"),
        Some(t) => {
            o.push_str(&format!(
                "- entries scanned: {} ({} unreadable)\n",
                t.entries_scanned, t.unreadable_entries
            ));
            o.push_str(&format!(
                "- token-field candidates: {}\n",
                if t.token_field_candidates.is_empty() {
                    "none".to_string()
                } else {
                    join_code(&t.token_field_candidates)
                }
            ));
            match &t.parsed_usage {
                Some(p) if p.found => o.push_str(&format!(
                    "- parsed by the adapter ({}): input {}, output {}, cache read {}, cache write {}, reasoning {}, requests {} ({} entries, {} rejected rows)\n",
                    code(&p.parser), p.input, p.output, p.cache_read, p.cache_write, p.reasoning, p.requests, p.entries, p.rejected_rows
                )),
                Some(p) => o.push_str(&format!(
                    "- parsed by the adapter ({}): no usage in this file\n",
                    code(&p.parser)
                )),
                None => o.push_str("- parsed by the adapter: not available\n"),
            }
            o.push_str("\n<details><summary>All key paths (types only)</summary>\n\n");
            let mut lines: Vec<String> = t.key_paths.iter().map(key_path_line).collect();
            if t.paths_omitted > 0 {
                lines.push(format!("… {} more paths not listed", t.paths_omitted));
            }
            fenced(&mut o, &lines.join("\n"));
            o.push_str("\n</details>\n\n");
        }
    }

    o.push_str("## Warnings / next steps\n\n");
    if r.findings.is_empty() && r.next_steps.is_empty() {
        o.push_str("None.\n");
    }
    for f in &r.findings {
        let mark = match f.severity {
            Severity::Warning => "⚠️",
            Severity::Info => "ℹ️",
        };
        o.push_str(&format!(
            "- {mark} {} ({})\n",
            inline(f.message.as_str()),
            code(&f.id)
        ));
    }
    for step in &r.next_steps {
        o.push_str(&format!("- → {}\n", inline(step.as_str())));
    }
    o
}

/// Prose with code spans: markers such as `<redacted:str>` outside a span
/// would read as HTML tags and vanish, so `<`, `>` and `&` are escaped
/// there (inside spans they are literal already).
fn inline(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                part.to_string()
            } else {
                part.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

fn key_path_line(k: &KeyPath) -> String {
    let types: Vec<&str> = k.types.iter().map(|t| t.name()).collect();
    format!("{} : {}", k.path, types.join(" | "))
}

fn join_code(items: &[Clean]) -> String {
    items.iter().map(code).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_escapes_markers_outside_code_spans() {
        assert_eq!(
            inline("glob <redacted> in `a <b>` & more"),
            "glob &lt;redacted&gt; in `a <b>` &amp; more"
        );
    }

    #[test]
    fn fences_outgrow_the_body() {
        let mut out = String::new();
        fenced(&mut out, "a ```` b");
        assert!(out.starts_with("`````text\n"), "{out}");
    }
}
