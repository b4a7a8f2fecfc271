//! agy hook payloads → canonical events.
//!
//! agy fires `Stop` only (no SessionStart/SessionEnd). Payloads are protojson
//! camelCase: `conversationId`, `transcriptPath`, `workspacePaths` (the first
//! entry is the working directory; there is no `cwd`), per bmad-loop. A
//! third-party reading of agy 1.5.14's bundled hooks.md adds
//! `terminationReason` (`NO_TOOL_CALL` when the agent ended its turn itself);
//! it is reported as the reason when present.

use drover_kit::payload;
use drover_kit::{AdapterError, CanonicalEvent, HookEvent, Profile};

fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "Stop" => CanonicalEvent::Stop,
        _ => CanonicalEvent::Other,
    }
}

pub fn parse(profile: &Profile, native: &str, bytes: &[u8]) -> Result<HookEvent, AdapterError> {
    let (mut payload, mut event) = payload::begin_event(profile, native, bytes, native_kind)?;
    let kind = event.kind;
    if kind == CanonicalEvent::Stop {
        event.reason = payload.string(&["terminationReason", "termination_reason"]);
    }
    event.fields_found = payload.fields_found();
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{StopCarries, assert_stop_carries};

    // bmad-loop §1.2/§3: protojson camelCase, workspacePaths[0] as cwd.
    const STOP: &str = include_str!("../fixtures/hook-stop.json");

    #[test]
    fn stop_reads_the_protojson_fields() {
        let e = parse(&profile(), "Stop", STOP.as_bytes()).expect("parses");
        assert_stop_carries(
            &e,
            StopCarries {
                session: "7c1e0d2a-3b4f-4a5e-8f60-71829a3b4c5d",
                transcript: "/home/u/.gemini/antigravity-cli/brain/7c1e0d2a-3b4f-4a5e-8f60-71829a3b4c5d/.system_generated/logs/transcript_full.jsonl",
                cwd: "/home/project",
                reply: None,
                reason: Some("NO_TOOL_CALL"),
                fields: &[
                    "conversationId",
                    "transcriptPath",
                    "workspacePaths",
                    "terminationReason",
                ],
            },
        );
    }

    #[test]
    fn an_empty_workspace_list_gives_no_cwd() {
        // bmad-loop pins `workspacePaths: []` → null, never an index error.
        let e = parse(
            &profile(),
            "Stop",
            br#"{"conversationId":"c","workspacePaths":[]}"#,
        )
        .expect("parses");
        assert_eq!((e.session_id.as_deref(), e.cwd), (Some("c"), None));
    }

    #[test]
    fn profile_mapping_wins_and_garbage_is_an_error() {
        let mut p = profile();
        p.hook_events
            .push(("PreInvocation".to_string(), "UserPromptSubmit".to_string()));
        assert_eq!(
            parse(&p, "PreInvocation", b"{}").expect("parses").kind,
            CanonicalEvent::PromptSubmit
        );
        assert_eq!(
            parse(&profile(), "Unheard", b"{}").expect("parses").kind,
            CanonicalEvent::Other
        );
        assert!(matches!(
            parse(&profile(), "Stop", b"{\"a\""),
            Err(AdapterError::InvalidInput(_))
        ));
        assert_eq!(
            parse(&profile(), "Stop", b"").expect("empty ok").session_id,
            None
        );
    }
}
