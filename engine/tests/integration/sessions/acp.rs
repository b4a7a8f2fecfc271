//! The acp workspace against `scripted-cli --acp`, an ACP agent that
//! writes the same transcripts and obeys the same prompt directives.

use serde_json::Value;

use super::status;
use crate::support::Project;

/// `drover` for an acp session of the scripted CLI.
fn acp_args<'a>(extra: &[&'a str], prompt: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--json",
        "--cli",
        "scripted",
        "--workspace",
        "acp",
        "--teardown-grace",
        "2s",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    args
}

fn acp_run(p: &Project, extra: &[&str], prompt: &str) -> (Value, i32) {
    let out = p
        .drover()
        .args(acp_args(extra, prompt))
        .output()
        .expect("drover runs");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON document ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code().unwrap_or(-1))
}

fn traffic(p: &Project, doc: &Value) -> String {
    std::fs::read_to_string(
        p.run_dir(doc["run_id"].as_str().unwrap_or_default())
            .join("logs")
            .join("scripted.acp"),
    )
    .unwrap_or_default()
}

#[test]
fn acp_completes_with_reply_and_transcript_usage_and_resumes_with_session_load() {
    let p = Project::new();
    // The relay tells drover where the transcript is.
    p.install_hooks("scripted");
    let (doc, code) = acp_run(&p, &[], "Reply with exactly: ACP ONE");
    assert_eq!((status(&doc), code), ("completed", 0), "{doc:#}");
    assert_eq!(doc["workspace"], "acp");
    assert_eq!(doc["reply"], "ACP ONE");
    assert_eq!(
        doc["usage"],
        serde_json::json!({"input": 1201, "output": 57, "cache_read": 1403, "cache_write": 1302, "cache_write_1h": 0, "reasoning": 0, "requests": 1}),
        "{doc:#}"
    );
    let conversation = doc["session_id"].as_str().expect("session id").to_string();
    let run_id = doc["run_id"].as_str().unwrap_or_default();
    assert_eq!(
        p.states(run_id),
        ["unknown", "idle", "working", "done"],
        "{doc:#}"
    );
    // drover offers the agent no file system and no terminal.
    let sent = traffic(&p, &doc);
    let init: Value = sent
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("-> "))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no initialize sent: {sent}"));
    let caps = &init["params"]["clientCapabilities"];
    assert_eq!(
        (
            &caps["fs"]["readTextFile"],
            &caps["fs"]["writeTextFile"],
            &caps["terminal"]
        ),
        (
            &Value::Bool(false),
            &Value::Bool(false),
            &Value::Bool(false)
        ),
        "{init:#}"
    );

    let (again, code) = acp_run(
        &p,
        &["--resume", &conversation],
        "Reply with exactly: ACP TWO",
    );
    assert_eq!((status(&again), code), ("completed", 0), "{again:#}");
    assert_eq!(again["session_id"], conversation.as_str());
    assert_eq!(
        again["reply"], "ACP TWO",
        "the replayed history is not this turn's reply"
    );
    // The transcript now holds both turns; this one spent one turn's worth.
    assert_eq!(again["usage"]["input"], 1201, "{again:#}");
    assert!(
        p.journal(again["run_id"].as_str().unwrap_or_default())
            .iter()
            .any(|l| l["source"] == "acp:session/load"),
        "{again:#}"
    );
    // --continue finds the same conversation; a conversation the agent does
    // not know fails the handshake.
    let (cont, _) = acp_run(&p, &["--continue"], "Reply with exactly: ACP THREE");
    assert_eq!(cont["session_id"], conversation.as_str(), "{cont:#}");
    let (unknown, code) = acp_run(&p, &["--resume", "no-such-session"], "hello");
    assert_eq!((status(&unknown), code), ("crashed", 1), "{unknown:#}");
    assert!(
        unknown["reason"]
            .as_str()
            .is_some_and(|r| r.contains("session/load")),
        "{unknown:#}"
    );
}

#[test]
fn acp_turn_endings_map_to_verdicts() {
    let p = Project::new();
    let (doc, code) = acp_run(&p, &[], "work @crash");
    assert_eq!((status(&doc), code), ("crashed", 1), "{doc:#}");
    assert_eq!(doc["exit_code"], 3, "{doc:#}");
    assert_eq!(doc["fault"]["kind"], "network", "{doc:#}");
    let (doc, _) = acp_run(&p, &[], "work @fault=529");
    assert_eq!(status(&doc), "stalled", "{doc:#}");
    assert_eq!(doc["fault"]["kind"], "overload", "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("API Error: 529 Overloaded.")),
        "{doc:#}"
    );
    let (doc, _) = acp_run(&p, &[], "Reply with exactly: LONG @stop=max_tokens");
    assert_eq!(status(&doc), "stalled", "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("max_tokens")),
        "{doc:#}"
    );
    // An agent asking for a file read is refused, and carries on.
    let (doc, _) = acp_run(&p, &[], "Reply with exactly: NO FS @ask-fs");
    assert_eq!(
        (status(&doc), doc["reply"].as_str()),
        ("completed", Some("NO FS")),
        "{doc:#}"
    );
    // The deadline cancels the prompt; the agent answers `cancelled`.
    let (doc, code) = acp_run(&p, &["--timeout", "2s"], "work @hang");
    assert_eq!((status(&doc), code), ("timeout", 1), "{doc:#}");
    let sent = traffic(&p, &doc);
    assert!(sent.contains(r#""method":"session/cancel""#), "{sent}");
    assert!(sent.contains(r#""stopReason":"cancelled""#), "{sent}");
}

/// Waits for `run`'s journal to show the task blocked on a question.
fn wait_question(p: &Project, child: &mut std::process::Child) -> (String, Value) {
    let until = std::time::Instant::now() + crate::support::HANG;
    loop {
        assert!(
            child.try_wait().ok().flatten().is_none(),
            "drover ended before the seat blocked"
        );
        let runs = p.path().join(".drover").join("runs");
        for entry in std::fs::read_dir(&runs).into_iter().flatten().flatten() {
            let run_id = entry.file_name().to_string_lossy().into_owned();
            if let Some(line) = p
                .journal(&run_id)
                .into_iter()
                .find(|l| l["state"] == "blocked" && l["detail"]["question"].is_object())
            {
                return (run_id, line);
            }
        }
        assert!(std::time::Instant::now() < until, "the seat never blocked");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn acp_permission_question_is_data_answered_by_a_person_or_the_policy() {
    let p = Project::new();
    let mut child = p
        .drover()
        .args(acp_args(&[], "Reply with exactly: TOOL DONE @blocked"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("drover runs");
    let (run_id, blocked) = wait_question(&p, &mut child);
    assert_eq!(blocked["prompt_kind"], "permission");
    let question = &blocked["detail"]["question"];
    assert_eq!(question["tool"], "bash", "{blocked:#}");
    assert_eq!(question["kind"], "execute");
    assert_eq!(question["input"], "echo hi > hi.txt");
    assert_eq!(
        question["options"],
        serde_json::json!([
            {"id": "once", "label": "Allow once", "kind": "allow_once"},
            {"id": "always", "label": "Always allow", "kind": "allow_always"},
            {"id": "reject", "label": "Reject", "kind": "reject_once"}
        ])
    );
    // A wrong option is refused and names the choices.
    let wrong = p.output(&["answer", "--run", &run_id, "scripted", "maybe"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("once = Allow once"));
    let answered = p.output(&[
        "answer",
        "--run",
        &run_id,
        "scripted",
        "Allow once",
        "--json",
    ]);
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    let answered: Value = serde_json::from_slice(&answered.stdout).expect("answer JSON");
    assert_eq!(answered["delivered"], true, "{answered:#}");
    let out = child.wait_with_output().expect("drover finishes");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("run JSON");
    assert_eq!(
        (status(&doc), doc["reply"].as_str()),
        ("completed", Some("TOOL DONE")),
        "{doc:#}"
    );
    assert!(
        p.path().join("hi.txt").exists(),
        "the allowed tool did not run"
    );
    let journal = p.journal(&run_id);
    let answer = journal
        .iter()
        .find(|l| l["kind"] == "answer")
        .expect("answer journaled");
    assert_eq!(
        (answer["state"].as_str(), answer["source"].as_str()),
        (Some("once"), Some("person"))
    );
    assert!(journal.iter().any(|l| l["kind"] == "event"
        && l["state"] == "tool_call_update"
        && l["detail"]["status"] == "completed"));
    // Answering again: nothing is pending.
    let again = p.output(&["answer", "--run", &run_id, "scripted", "once"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("not waiting on a question"));

    // The policy rejects without anyone.
    std::fs::create_dir_all(p.path().join(".drover")).expect("mkdir");
    std::fs::write(
        p.path().join(".drover").join("config.toml"),
        "[[policy.rule]]\ninput = \"*hi2.txt\"\ndecision = \"reject\"\n\n[[policy.rule]]\nkind = \"execute\"\ninput = \"echo hi > hi3.txt\"\ndecision = \"allow\"\n",
    )
    .expect("policy");
    let (doc, _) = acp_run(&p, &[], "Reply with exactly: NOPE @blocked @write=hi2.txt");
    assert!(
        !p.path().join("hi2.txt").exists(),
        "the policy's rejection was ignored"
    );
    let journal = p.journal(doc["run_id"].as_str().unwrap_or_default());
    let answer = journal
        .iter()
        .find(|l| l["kind"] == "answer")
        .expect("policy answer journaled");
    assert_eq!(answer["state"], "reject", "{answer:#}");
    assert!(
        answer["source"].as_str().is_some_and(
            |s| s.starts_with("policy:") && s.ends_with("config.toml:1: policy.rule.0")
        ),
        "{answer:#}"
    );
    assert_eq!(answer["detail"]["answered"]["rule"]["input"], "*hi2.txt");
    // An allow rule from the checkout counts once the user trusts it.
    let show = p.output(&["trust", "--show"]);
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("[[policy.rule]]") && shown.contains("hi3.txt"),
        "{shown}"
    );
    assert!(p.output(&["trust"]).status.success());
    let (doc, _) = acp_run(&p, &[], "Reply with exactly: YES @blocked @write=hi3.txt");
    assert_eq!(status(&doc), "completed", "{doc:#}");
    assert!(
        p.path().join("hi3.txt").exists(),
        "the policy's allow was ignored"
    );

    // A broken policy stops drover before it starts anything.
    std::fs::write(
        p.path().join(".drover").join("config.toml"),
        "[[policy.rule]]\nkind = \"shell\"\ndecision = \"allow\"\n",
    )
    .expect("policy");
    let out = p
        .drover()
        .args(acp_args(&[], "hello"))
        .output()
        .expect("drover");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("config.toml:2: policy.rule.0.kind") && stderr.contains("'shell'"),
        "{stderr}"
    );
}
