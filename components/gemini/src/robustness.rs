//! Hostile input never panics: pseudo-random bytes and truncations of every
//! fixture go through hook parsing, the tally, turn parsing and the screen
//! and fault readers.

use drover_kit::Adapter;
use drover_kit::testing::{Xorshift64Star, cuts};
use drover_kit::usage::ChunkedTally;
use drover_kit::{Screen, TurnOutput};

use crate::Gemini;
use crate::tests_support::profile;

const FIXTURES: &[&str] = &[
    include_str!("../fixtures/chat-session.jsonl"),
    include_str!("../fixtures/chat-legacy.json"),
    include_str!("../fixtures/chat-subagent.jsonl"),
    include_str!("../fixtures/turn-success-router.json"),
    include_str!("../fixtures/turn-500.stderr"),
    include_str!("../fixtures/turn-429.stderr"),
    include_str!("../fixtures/screen-permission.txt"),
    include_str!("../fixtures/screen-trust.txt"),
    include_str!("../fixtures/settings.user.json"),
];

/// Bytes biased towards JSON punctuation, UTF-8 lead bytes and the markers
/// the parsers look for.
fn hostile(rng: &mut Xorshift64Star) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b":",
        b",",
        b"\n",
        b"\"tokens\"",
        b"\"sessionId\"",
        b"\"id\"",
        b"\"$set\"",
        b"\"messages\"",
        b"-1",
        b"1e400",
        b"null",
        "●".as_bytes(),
        "⠙".as_bytes(),
        b"\xff",
        b"\xe2\x94",
    ];
    let len = (rng.next_u64() % 200) as usize;
    let mut out = Vec::with_capacity(len * 2);
    for _ in 0..len {
        let r = rng.next_u64();
        if r.is_multiple_of(3) {
            out.extend_from_slice(PIECES[(r >> 8) as usize % PIECES.len()]);
        } else {
            out.push((r >> 16) as u8);
        }
    }
    out
}

fn inputs() -> Vec<Vec<u8>> {
    let mut rng = Xorshift64Star(0x9e37_79b9_7f4a_7c15);
    let mut all: Vec<Vec<u8>> = (0..400).map(|_| hostile(&mut rng)).collect();
    for fixture in FIXTURES {
        let bytes = fixture.as_bytes();
        for cut in cuts(bytes.len(), 23) {
            all.push(bytes[..cut].to_vec());
        }
    }
    all
}

#[test]
fn arbitrary_bytes_never_panic() {
    for (n, input) in inputs().into_iter().enumerate() {
        let text = String::from_utf8_lossy(&input).into_owned();
        for native in ["AfterAgent", "Notification", "SessionStart", "Bogus"] {
            let _ = Gemini::parse_hook(&profile(), native, &input);
        }
        for name in [
            "/h/.gemini/tmp/p/chats/session-a.jsonl",
            "/h/.gemini/tmp/p/chats/session-a.json",
            "x/chats/p/s.jsonl",
        ] {
            let tally = ChunkedTally::of::<crate::Gemini>(crate::PARSER);
            tally.begin_file(name);
            for chunk in input.chunks(17) {
                tally.feed(chunk).expect("known parser");
            }
            let _ = tally.finish();
        }
        let screen = Screen {
            rows: text.lines().map(str::to_string).collect(),
            title: text.clone(),
        };
        let _ = Gemini::read_screen(&profile(), &screen);
        // The rest compile their rules per call: a quarter of the inputs
        // keeps the test quick in debug builds.
        if n % 4 != 0 {
            continue;
        }
        let output = TurnOutput {
            stdout: text.clone(),
            stderr: text.clone(),
            exit_code: Some(1),
            prior_usage: None,
        };
        let _ = Gemini::parse_turn(&profile(), &output);
        let _ = Gemini::classify_fault(
            &profile(),
            &text.lines().map(str::to_string).collect::<Vec<_>>(),
        );
        let _ = Gemini::install_hooks(&text, &hook_request());
    }
}

fn hook_request() -> drover_kit::HookInstall {
    drover_kit::HookInstall {
        dialect: "gemini-settings-json".to_string(),
        relay_command: "drover hook".to_string(),
        events: profile().hook_events,
        marker: "drover hook".to_string(),
    }
}

#[test]
fn the_generator_is_not_degenerate() {
    let all = inputs();
    assert!(all.len() > 400);
    let distinct: std::collections::HashSet<&Vec<u8>> = all.iter().collect();
    assert!(distinct.len() > 350, "{}", distinct.len());
}
