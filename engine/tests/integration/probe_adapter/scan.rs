//! Scan mode: a Claude transcript with planted values, other CLIs'
//! fixture transcripts, overrides that pick the transcript, and hook
//! payloads reduced to their shape.

use std::path::PathBuf;

use super::{
    ANT_KEY, EMAIL, GH_TOKEN, JWT, USER, World, assert_keys_sorted, assert_no_leak, fixture, ok,
    text,
};

/// A Claude transcript with planted values in values, keys and the file
/// and directory names.
fn plant_claude_transcript(world: &World) -> PathBuf {
    let munged = world.project.display().to_string().replace('/', "-");
    let path = world
        .home
        .join(".claude/projects")
        .join(munged)
        .join(format!("{USER}-0f8e2a9c-5b7d-4e1f-9a3c-2d6b8e0f1a47.jsonl"));
    let lines = [
        format!(
            r#"{{"type":"user","cwd":"{}","message":{{"role":"user","content":"my key is {ANT_KEY}, mail {EMAIL}"}}}}"#,
            world.project.display()
        ),
        r#"{"type":"assistant","message":{"id":"msg_01","role":"assistant","usage":{"input_tokens":100,"output_tokens":50}}}"#.to_string(),
        format!(
            r#"{{"type":"assistant","message":{{"id":"msg_02","usage":{{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":2000,"cache_creation_input_tokens":300}}}},"{GH_TOKEN}":"{JWT}"}}"#
        ),
        format!(r#"{{"type":"log","{}":"{}/x","{EMAIL}":1}}"#, world.home.display(), world.home.display()),
        "not json at all".to_string(),
    ];
    world.write(&path, &(lines.join("\n") + "\n"));
    path
}

#[test]
fn claude_scan_reports_shape_and_leaks_nothing() {
    let world = World::new();
    plant_claude_transcript(&world);
    let output = world.run(&["claude", "--binary", "fakecli"]);
    let report = ok(&world, &output);
    let mut at = 0;
    for heading in [
        "## Summary",
        "## CLI flags",
        "## Hook payload shape",
        "## Adapter self-check",
        "## Transcript",
        "## Token usage schema",
        "## Warnings / next steps",
    ] {
        let found = report[at..]
            .find(heading)
            .unwrap_or_else(|| panic!("{heading} missing or out of order:\n{report}"));
        at += found + heading.len();
    }
    for expected in [
        "fakecli 1.2.3",
        "--model <MODEL>",
        "~/.fakecli/config.json",
        "<redacted:email>",
        "<redacted:secret>",
        "<redacted:user>",
        "message.usage.input_tokens : int",
        "message.usage.cache_read_input_tokens",
        "`Stop` → `Stop` (no)",
        "hooks registered: no",
        "drover hooks install --cli claude",
        "~/.claude/projects/*/*.jsonl",
        // claude-jsonl sums every usage block: 110 in, 55 out.
        "input 110, output 55, cache read 2000, cache write 300",
    ] {
        assert!(report.contains(expected), "{expected:?} missing:\n{report}");
    }
    assert!(
        !report.contains("my key is"),
        "values never appear:\n{report}"
    );
}

#[test]
fn json_document_is_sorted_versioned_and_clean() {
    let world = World::new();
    plant_claude_transcript(&world);
    let output = world.run(&["claude", "--binary", "fakecli", "--json"]);
    let stdout = ok(&world, &output);
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(value["schema_version"], 1);
    assert_eq!(value["mode"], "scan");
    assert_eq!(value["cli"], "claude");
    assert_eq!(value["tokens"]["parsed_usage"]["input"], 110);
    assert_eq!(value["transcript"]["file"]["line_count"], 5);
    assert_keys_sorted(&stdout);
    assert!(
        !text(&output.stderr).is_empty(),
        "the trailer goes to stderr, never into the document"
    );
}

#[test]
fn out_file_gets_the_report_and_stdout_stays_empty() {
    let world = World::new();
    plant_claude_transcript(&world);
    let out = world.root.join("report.md");
    let output = world.run(&[
        "claude",
        "--binary",
        "fakecli",
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
    let written = std::fs::read_to_string(&out).expect("report written");
    assert!(written.contains("## Summary"));
    assert_no_leak(&world, &written);
}

#[test]
fn fixture_transcripts_of_other_clis_are_found_by_convention() {
    let cases = [
        (
            "codex",
            ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-a.jsonl",
            "components/codex/fixtures/rollout-resumed.jsonl",
            "payload.info.total_token_usage.input_tokens",
        ),
        (
            "gemini",
            ".gemini/tmp/5b0d7f1c/chats/session-2026-11-30T10-00-a.jsonl",
            "components/gemini/fixtures/chat-session.jsonl",
            "tokens.input",
        ),
        (
            "copilot",
            ".copilot/session-state/s1/events.jsonl",
            "components/copilot/fixtures/events.jsonl",
            "data.modelMetrics.gpt-5-mini.usage.inputTokens",
        ),
    ];
    for (cli, place, source, candidate) in cases {
        let world = World::new();
        let mut body = fixture(source);
        body.push_str(&format!("{{\"note\":\"{EMAIL} {GH_TOKEN}\"}}\n"));
        world.write(&world.home.join(place), &body);
        let output = world.run(&[cli, "--binary", "fakecli", "--json"]);
        let stdout = ok(&world, &output);
        let value: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        let file = &value["transcript"]["file"];
        assert_eq!(file["format"], "jsonl", "{cli}: {stdout}");
        let candidates = value["tokens"]["token_field_candidates"].to_string();
        assert!(candidates.contains(candidate), "{cli}: {candidates}");
        let parsed = &value["tokens"]["parsed_usage"];
        assert_eq!(parsed["found"], true, "{cli}: {stdout}");
        assert!(
            parsed["input"].as_u64().is_some_and(|n| n > 0),
            "{cli}: {parsed}"
        );
    }
}

#[test]
fn overrides_pick_the_transcript() {
    let world = World::new();
    let dir = world.root.join("sessions");
    world.write(
        &dir.join("a/b.jsonl"),
        &fixture("components/qwen/fixtures/chat.jsonl"),
    );
    let output = world.run(&[
        "qwen",
        "--binary",
        "fakecli",
        "--session-dir",
        dir.to_str().expect("utf8"),
        "--json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&ok(&world, &output)).expect("json");
    assert_eq!(value["transcript"]["source"], "--session-dir");
    assert_eq!(value["transcript"]["file"]["line_count"], 5);

    let pinned = plant_claude_transcript(&world);
    let output = world.run(&[
        "claude",
        "--binary",
        "fakecli",
        "--transcript",
        pinned.to_str().expect("utf8"),
        "--json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&ok(&world, &output)).expect("json");
    assert_eq!(value["transcript"]["source"], "--transcript");
    let location = value["transcript"]["file"]["location"]
        .as_str()
        .expect("location");
    assert!(location.starts_with("~/.claude/projects/"), "{location}");
    assert!(
        location.ends_with("<redacted:user>"),
        "the file name carries the username: {location}"
    );

    let output = world.run(&[
        "claude",
        "--binary",
        "fakecli",
        "--transcript",
        "/nonexistent/x.jsonl",
    ]);
    let report = ok(&world, &output);
    assert!(
        report.contains("is not a readable regular file"),
        "{report}"
    );
}

#[test]
fn payload_shapes_come_from_the_adapter_and_hold_no_values() {
    let world = World::new();
    let payload = world.root.join("stop.json");
    let mut value: serde_json::Value =
        serde_json::from_str(&fixture("components/codex/fixtures/hook-stop.json")).expect("json");
    value["last_assistant_message"] = format!("done, mail {EMAIL}").into();
    value["transcript_path"] = format!("{}/.codex/sessions/x.jsonl", world.home.display()).into();
    std::fs::write(&payload, value.to_string()).expect("write");
    let output = world.run(&[
        "codex",
        "--binary",
        "fakecli",
        "--payload",
        &format!("Stop={}", payload.display()),
    ]);
    let report = ok(&world, &output);
    assert!(
        report.contains("### `Stop` → `Stop` (adapter: `stop`)"),
        "{report}"
    );
    assert!(report.contains("`last_assistant_message`"), "{report}");
    assert!(report.contains("transcript_path : str"), "{report}");
    assert!(!report.contains("done, mail"), "{report}");
}
