//! The native needle prefilter never drops a line a parser counts: every
//! built-in parser's fixtures, fed through the sandboxed tally raw and
//! filtered (in odd chunk sizes, so lines straddle chunks), give the same
//! entries. Claude rows are also rewritten with other spacings around
//! `"usage"` — the spelling ccusage's `"usage":{` prefilter misses.

use std::path::Path;

use drover::sandbox::{CompileCache, Limits, Sandbox};
use drover::types::wit;
use drover::usage::prefilter::{LineStream, Prefilter};

fn read(path: &str) -> Vec<u8> {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

struct Case {
    component: &'static str,
    parser: &'static str,
    /// (file name given to begin-file, bytes)
    files: Vec<(String, Vec<u8>)>,
    /// Whether the files hold usage the parser reads.
    counts: bool,
}

fn tally(
    sandbox: &Sandbox,
    case: &Case,
    chunk: usize,
    filter: Option<&Prefilter>,
) -> Option<wit::UsageReport> {
    let builtin = drover::builtin::find(case.component).expect("built in");
    let (adapter, _) = sandbox
        .load(
            builtin.name,
            builtin.bytes,
            builtin.sha256,
            Limits::default(),
        )
        .expect("loads");
    let mut t = adapter
        .tally(case.parser, Limits::default())
        .expect("tally");
    for (name, bytes) in &case.files {
        t.begin_file(name).expect("begin");
        let mut feed = |b: &[u8]| t.feed(b).expect("no trap").expect("accepted");
        match filter {
            None => bytes.chunks(chunk).for_each(&mut feed),
            Some(filter) => {
                let mut lines = LineStream::new(filter, 1 << 20);
                let mut out = Vec::new();
                for piece in bytes.chunks(chunk) {
                    lines
                        .push::<()>(piece, &mut out, &mut |o| {
                            feed(o);
                            o.clear();
                            Ok(())
                        })
                        .expect("pushes");
                }
                lines.finish(&mut out);
                if !out.is_empty() {
                    feed(&out);
                }
            }
        }
    }
    t.finish().expect("no trap")
}

fn needles(sandbox: &Sandbox, component: &str, parser: &str) -> Vec<String> {
    let builtin = drover::builtin::find(component).expect("built in");
    let (adapter, _) = sandbox
        .load(
            builtin.name,
            builtin.bytes,
            builtin.sha256,
            Limits::default(),
        )
        .expect("loads");
    adapter
        .describe()
        .expect("describes")
        .usage_parsers
        .into_iter()
        .find(|p| p.name == parser)
        .unwrap_or_else(|| panic!("{component} has no parser {parser}"))
        .needles
}

fn files(paths: &[&str]) -> Vec<(String, Vec<u8>)> {
    paths
        .iter()
        .map(|p| {
            (
                format!("/h/x/{}", p.rsplit('/').next().unwrap_or(p)),
                read(p),
            )
        })
        .collect()
}

/// Rewrites every `"usage":{` in `text` with `with`.
fn respace(text: &[u8], with: &str) -> Vec<u8> {
    String::from_utf8_lossy(text)
        .replace("\"usage\":{", with)
        .replace("\"usage\": {", with)
        .into_bytes()
}

fn claude_files(with: Option<&str>) -> Vec<(String, Vec<u8>)> {
    files(&[
        "tests/fixtures/usage/claude-11111111-aaaa-4aaa-8aaa-000000000001.jsonl",
        "tests/fixtures/usage/claude-22222222-bbbb-4bbb-8bbb-000000000002.jsonl",
    ])
    .into_iter()
    .map(|(n, b)| (n, with.map_or_else(|| b.clone(), |w| respace(&b, w))))
    .collect()
}

#[test]
fn filtered_and_raw_feeds_count_the_same() {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("usage-compile-cache");
    let sandbox = Sandbox::new(CompileCache::at(cache)).expect("engine");
    let mut cases = vec![
        Case {
            component: "claude",
            parser: "claude-jsonl",
            files: claude_files(None),
            counts: true,
        },
        Case {
            component: "codex",
            parser: "codex-rollout",
            files: files(&[
                "../components/codex/fixtures/rollout-resumed.jsonl",
                "../components/codex/fixtures/rollout-records-only.jsonl",
                "../components/codex/fixtures/rollout-upgraded.jsonl",
            ]),
            counts: true,
        },
        Case {
            component: "gemini",
            parser: "gemini-chat",
            files: files(&[
                "../components/gemini/fixtures/chat-session.jsonl",
                "../components/gemini/fixtures/chat-subagent.jsonl",
                "../components/gemini/fixtures/chat-legacy.json",
            ]),
            counts: true,
        },
        Case {
            component: "qwen",
            parser: "qwen-chat",
            files: files(&["../components/qwen/fixtures/chat.jsonl"]),
            counts: true,
        },
        Case {
            component: "copilot",
            parser: "copilot-events",
            files: files(&[
                "../components/copilot/fixtures/events.jsonl",
                "../components/copilot/fixtures/events-cumulative.jsonl",
                "../components/copilot/fixtures/events-lifecycles.jsonl",
            ]),
            counts: true,
        },
        Case {
            component: "opencode",
            parser: "opencode-db",
            files: files(&["../components/opencode/fixtures/db-messages.jsonl"]),
            counts: true,
        },
        Case {
            component: "opencode",
            parser: "opencode-json",
            files: files(&["../components/opencode/fixtures/run-success.jsonl"]),
            counts: true,
        },
        Case {
            component: "cursor",
            parser: "cursor-json",
            files: files(&["../components/cursor/fixtures/results.jsonl"]),
            counts: true,
        },
    ];
    // Every spacing JSON allows around the key and its colon. A key spelled
    // with an escape (`"\u0075sage"`) is not the needle, and the Claude
    // parser itself reads only rows that contain the needle, so filtering
    // cannot lose it either; it is here to pin that.
    for with in [
        "\"usage\": {",
        "\"usage\" : {",
        "\"usage\"\t:\t{",
        "\"usage\":   {",
        "\"\\u0075sage\":{",
    ] {
        cases.push(Case {
            component: "claude",
            parser: "claude-jsonl",
            files: claude_files(Some(with)),
            counts: !with.contains('\\'),
        });
    }
    for case in &cases {
        let filter = Prefilter::new(&needles(&sandbox, case.component, case.parser));
        for chunk in [1 << 20, 7, 64] {
            let raw = tally(&sandbox, case, chunk, None);
            let filtered = tally(&sandbox, case, chunk, Some(&filter));
            let name = format!("{} {:?} chunk {chunk}", case.parser, case.files[0].0);
            match (&raw, &filtered) {
                (Some(raw), Some(filtered)) => {
                    assert_eq!(raw.entries, filtered.entries, "{name}");
                    // Garbage lines without a needle never reach the parser
                    // when filtered, so they cannot be counted as rejected.
                    assert!(filtered.rejected_rows <= raw.rejected_rows, "{name}");
                    assert!(
                        !case.counts
                            || raw
                                .entries
                                .iter()
                                .any(|e| e.usage.input + e.usage.output + e.usage.cache_read > 0),
                        "{name}: the case must count something"
                    );
                }
                (None, None) => assert!(!case.counts, "{name}: no usage"),
                _ => panic!("{name}: raw {raw:?} vs filtered {filtered:?}"),
            }
        }
    }
    // The spaced Claude variants count what the compact file counts.
    let compact = tally(&sandbox, &cases[0], 1 << 20, None).expect("usage");
    for case in cases.iter().skip(8).take(4) {
        let spaced = tally(&sandbox, case, 1 << 20, None).expect("usage");
        assert_eq!(spaced.entries, compact.entries);
    }
}
