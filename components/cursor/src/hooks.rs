//! Cursor hook payloads → canonical events.
//!
//! Every payload carries `conversation_id`, `generation_id`,
//! `hook_event_name`, `workspace_roots` and optionally `model`,
//! `cursor_version`, `user_email`, `transcript_path`. `stop` adds `status`
//! (`completed` | `aborted` | `error`) and `loop_count`;
//! `afterAgentResponse` carries the reply as `text`.
//!
//! One native event reports both a finished and a failed turn: a `stop`
//! mapped to Stop whose `status` is `error` is reported as StopFailure.

use drover_kit::payload;
use drover_kit::{AdapterError, CanonicalEvent, HookEvent, Profile};

fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "stop" => CanonicalEvent::Stop,
        "subagentStop" => CanonicalEvent::SubagentStop,
        "sessionStart" => CanonicalEvent::SessionStart,
        "sessionEnd" => CanonicalEvent::SessionEnd,
        "preCompact" => CanonicalEvent::PreCompact,
        "beforeSubmitPrompt" => CanonicalEvent::PromptSubmit,
        "preToolUse" | "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" => {
            CanonicalEvent::ToolStart
        }
        "postToolUse"
        | "postToolUseFailure"
        | "afterShellExecution"
        | "afterMCPExecution"
        | "afterFileEdit" => CanonicalEvent::ToolEnd,
        _ => CanonicalEvent::Other,
    }
}

pub fn parse(profile: &Profile, native: &str, bytes: &[u8]) -> Result<HookEvent, AdapterError> {
    let (mut payload, mut event) = payload::begin_event(profile, native, bytes, native_kind)?;
    let mut kind = event.kind;
    if event.cwd.is_none() {
        event.cwd = payload.first_of_list(&["workspace_roots", "workspaceRoots"]);
    }
    event.subagent = matches!(native, "subagentStop" | "subagentStart");
    match kind {
        CanonicalEvent::Stop => {
            event.reason = payload.string(&["status"]);
            if event.reason.as_deref() == Some("error") {
                kind = CanonicalEvent::StopFailure;
            }
        }
        CanonicalEvent::StopFailure | CanonicalEvent::SessionEnd => {
            event.reason = payload.string(&["status", "reason"]);
        }
        CanonicalEvent::SessionStart => {
            event.reason = payload.string(&["source"]);
        }
        CanonicalEvent::SubagentStop => {
            event.reason = payload.string(&["status"]);
        }
        CanonicalEvent::ToolStart | CanonicalEvent::ToolEnd => {
            event.reason = payload.string(&["tool_name", "command"]);
        }
        _ => {}
    }
    if native == "afterAgentResponse" {
        event.last_message = payload.string(&["text"]);
    }
    event.kind = kind;
    event.fields_found = payload.fields_found();
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{StopCarries, assert_stop_carries};

    // Shape from published stop payloads (fixtures/README.md).
    const STOP: &str = include_str!("../fixtures/hook-stop.json");

    #[test]
    fn stop_reads_conversation_transcript_and_workspace() {
        let e = parse(&profile(), "stop", STOP.as_bytes()).expect("parses");
        assert_stop_carries(
            &e,
            StopCarries {
                session: "cdefee2d-2727-4b73-bf77-d9d830f31d2a",
                transcript: "/home/u/.cursor/projects/home-project/agent-transcripts/cdefee2d-2727-4b73-bf77-d9d830f31d2a.jsonl",
                cwd: "/home/project",
                reply: None,
                reason: Some("completed"),
                fields: &[
                    "conversation_id",
                    "transcript_path",
                    "workspace_roots",
                    "status",
                ],
            },
        );
    }

    #[test]
    fn an_errored_stop_is_a_failure_and_an_aborted_one_is_not() {
        let errored = STOP.replace("\"completed\"", "\"error\"");
        let e = parse(&profile(), "stop", errored.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::StopFailure, Some("error"))
        );
        let aborted = STOP.replace("\"completed\"", "\"aborted\"");
        assert_eq!(
            parse(&profile(), "stop", aborted.as_bytes())
                .expect("parses")
                .kind,
            CanonicalEvent::Stop
        );
    }

    #[test]
    fn subagents_replies_and_tools() {
        let e = parse(
            &profile(),
            "subagentStop",
            br#"{"conversation_id":"c","status":"completed"}"#,
        )
        .expect("parses");
        assert_eq!((e.kind, e.subagent), (CanonicalEvent::SubagentStop, true));
        let reply = parse(
            &profile(),
            "afterAgentResponse",
            br#"{"conversation_id":"c","text":"All tests pass."}"#,
        )
        .expect("parses");
        assert_eq!(
            (reply.kind, reply.last_message.as_deref()),
            (CanonicalEvent::Other, Some("All tests pass."))
        );
        let shell = parse(
            &profile(),
            "beforeShellExecution",
            br#"{"conversation_id":"c","command":"npm install","cwd":"/w"}"#,
        )
        .expect("parses");
        assert_eq!(
            (shell.kind, shell.reason.as_deref(), shell.cwd.as_deref()),
            (CanonicalEvent::ToolStart, Some("npm install"), Some("/w"))
        );
    }

    #[test]
    fn profile_mapping_wins_and_garbage_is_an_error() {
        let mut p = profile();
        p.hook_events
            .push(("afterAgentResponse".to_string(), "Stop".to_string()));
        assert_eq!(
            parse(&p, "afterAgentResponse", b"{}").expect("parses").kind,
            CanonicalEvent::Stop
        );
        assert!(matches!(
            parse(&profile(), "stop", b"nope"),
            Err(AdapterError::InvalidInput(_))
        ));
        assert_eq!(
            parse(&profile(), "stop", b"").expect("empty ok").session_id,
            None
        );
    }
}
