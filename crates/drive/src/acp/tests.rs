use super::exchange::question_of;
use super::*;
use drover_run::question::ChoiceKind;

#[test]
fn the_last_prompts_stop_reason_is_read_back_from_the_traffic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("t.acp");
    std::fs::write(
        &log,
        "-> {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{}}\n\
         <- {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}\n\
         -> {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session/prompt\",\"params\":{}}\n\
         <- {\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}\n",
    )
    .expect("write");
    assert_eq!(last_stop_reason(&log), None);
    drover_state::append_line(
        &log,
        "<- {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"stopReason\":\"max_tokens\"}}",
    )
    .expect("append");
    assert_eq!(last_stop_reason(&log).as_deref(), Some("max_tokens"));
}

#[test]
fn a_permission_request_reads_as_a_question() {
    // Shapes sent by gemini 0.61.0, qwen 0.24.4 and opencode 1.18.33.
    let known = HashMap::from([("call_1".to_string(), "bash".to_string())]);
    let gemini = json!({"sessionId": "s", "options": [
        {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
        {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
        {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}],
        "toolCall": {"toolCallId": "run_shell_command__1", "status": "pending", "title": "echo hi > hi.txt",
            "content": [], "locations": [], "kind": "execute"}});
    let q = question_of(&gemini, &known);
    assert_eq!(
        (q.tool.as_str(), q.kind.as_str(), q.input.as_str()),
        ("", "execute", "echo hi > hi.txt")
    );
    assert_eq!(q.options.len(), 3);
    assert_eq!(q.options[1].kind, ChoiceKind::AllowOnce);
    let opencode = json!({"sessionId": "s", "toolCall": {"toolCallId": "call_1", "title": "echo hi > hi.txt",
        "kind": "execute", "status": "pending", "locations": [], "rawInput": {"command": "echo hi > hi.txt"}},
        "options": [{"optionId": "once", "kind": "allow_once", "name": "Allow once"},
            {"optionId": "reject", "kind": "reject_once", "name": "Reject"},
            {"optionId": "odd", "kind": "maybe", "name": "Odd"}]});
    let q = question_of(&opencode, &known);
    assert_eq!(
        (q.tool.as_str(), q.input.as_str()),
        ("bash", "echo hi > hi.txt")
    );
    assert_eq!(
        q.options.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["once", "reject"]
    );
    let read = json!({"toolCall": {"toolCallId": "x", "name": "read_file", "kind": "read",
        "title": "Read\u{1b}[31m file", "locations": [{"path": "/w/src/main.rs"}]}, "options": []});
    let q = question_of(&read, &known);
    assert_eq!(
        (
            q.tool.as_str(),
            q.kind.as_str(),
            q.title.as_str(),
            q.input.as_str()
        ),
        ("read_file", "read", "Read[31m file", "/w/src/main.rs")
    );
}
