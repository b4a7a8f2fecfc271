//! Reading fields out of hook payloads that CLIs spell differently.
//!
//! Claude and Codex use snake_case, Copilot camelCase, Antigravity protojson
//! camelCase (`conversationId`, `workspacePaths`). A [`Payload`] looks a field
//! up under every spelling, treats an empty string as absent, and remembers
//! which keys it used so `probe-adapter` can show what an adapter read.

use serde_json::{Map, Value};

use crate::{AdapterError, CanonicalEvent, HookEvent, Profile, invalid, mapped_kind};

pub struct Payload {
    object: Map<String, Value>,
    found: Vec<String>,
}

impl Payload {
    /// Parses a payload. Empty input is an empty object (some CLIs send no
    /// payload for some events); anything that is not a JSON object is an
    /// error naming what it was.
    pub fn parse(bytes: &[u8]) -> Result<Payload, AdapterError> {
        let trimmed = bytes.trim_ascii();
        if trimmed.is_empty() {
            return Ok(Payload {
                object: Map::new(),
                found: Vec::new(),
            });
        }
        let value: Value = serde_json::from_slice(trimmed).map_err(|e| {
            invalid(format!(
                "hook payload is not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ))
        })?;
        match value {
            Value::Object(object) => Ok(Payload {
                object,
                found: Vec::new(),
            }),
            other => Err(invalid(format!(
                "hook payload is a JSON {}, expected an object",
                kind_name(&other)
            ))),
        }
    }

    /// The first non-empty string among `keys`.
    pub fn string(&mut self, keys: &[&str]) -> Option<String> {
        for key in keys {
            if let Some(Value::String(s)) = self.object.get(*key)
                && !s.is_empty()
            {
                self.found.push((*key).to_string());
                return Some(s.clone());
            }
        }
        None
    }

    /// The first string element of the first array among `keys`.
    pub fn first_of_list(&mut self, keys: &[&str]) -> Option<String> {
        for key in keys {
            if let Some(Value::Array(items)) = self.object.get(*key)
                && let Some(Value::String(s)) = items.first()
                && !s.is_empty()
            {
                self.found.push((*key).to_string());
                return Some(s.clone());
            }
        }
        None
    }

    /// A boolean field; strings `"true"`/`"false"` are accepted because some
    /// CLIs serialize flags as text.
    pub fn flag(&mut self, keys: &[&str]) -> Option<bool> {
        for key in keys {
            let parsed = match self.object.get(*key) {
                Some(Value::Bool(b)) => Some(*b),
                Some(Value::String(s)) if s == "true" => Some(true),
                Some(Value::String(s)) if s == "false" => Some(false),
                _ => None,
            };
            if parsed.is_some() {
                self.found.push((*key).to_string());
                return parsed;
            }
        }
        None
    }

    /// Whether any of `keys` is present (with any value).
    pub fn has(&self, keys: &[&str]) -> bool {
        keys.iter().any(|k| self.object.contains_key(*k))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.object.get(key)
    }

    /// The keys read so far, in the order they were read.
    pub fn fields_found(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for key in &self.found {
            if !out.contains(key) {
                out.push(key.clone());
            }
        }
        out
    }

    /// The session id under the spellings every known CLI uses.
    pub fn session_id(&mut self) -> Option<String> {
        self.string(&[
            "session_id",
            "sessionId",
            "conversation_id",
            "conversationId",
        ])
    }

    pub fn transcript_path(&mut self) -> Option<String> {
        self.string(&["transcript_path", "transcriptPath"])
    }

    pub fn cwd(&mut self) -> Option<String> {
        self.string(&["cwd"])
            .or_else(|| self.first_of_list(&["workspacePaths", "workspace_paths"]))
    }
}

/// The start every hook parser shares: the payload, and an event of the
/// kind the profile maps `native` to (else `native_kind`'s guess) carrying
/// the session id, transcript path and working directory.
pub fn begin_event(
    profile: &Profile,
    native: &str,
    bytes: &[u8],
    native_kind: fn(&str) -> CanonicalEvent,
) -> Result<(Payload, HookEvent), AdapterError> {
    let mut payload = Payload::parse(bytes)?;
    let kind = mapped_kind(profile, native).unwrap_or_else(|| native_kind(native));
    let mut event = HookEvent::new(kind, native);
    event.session_id = payload.session_id();
    event.transcript_path = payload.transcript_path();
    event.cwd = payload.cwd();
    Ok((payload, event))
}

fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_spelling_of_the_session_fields() {
        let mut snake = Payload::parse(br#"{"session_id":"a","transcript_path":"/t","cwd":"/w"}"#)
            .expect("object");
        assert_eq!(snake.session_id().as_deref(), Some("a"));
        assert_eq!(snake.transcript_path().as_deref(), Some("/t"));
        assert_eq!(snake.cwd().as_deref(), Some("/w"));
        assert_eq!(
            snake.fields_found(),
            ["session_id", "transcript_path", "cwd"]
        );

        let mut proto = Payload::parse(
            br#"{"conversationId":"c","transcriptPath":"/p","workspacePaths":["/ws","/b"]}"#,
        )
        .expect("object");
        assert_eq!(proto.session_id().as_deref(), Some("c"));
        assert_eq!(proto.transcript_path().as_deref(), Some("/p"));
        assert_eq!(proto.cwd().as_deref(), Some("/ws"));
    }

    #[test]
    fn empty_strings_and_empty_lists_fall_through() {
        let mut p = Payload::parse(br#"{"session_id":"","sessionId":"b","workspacePaths":[]}"#)
            .expect("object");
        assert_eq!(p.session_id().as_deref(), Some("b"));
        assert_eq!(p.cwd(), None);
    }

    #[test]
    fn rejects_non_objects_with_a_reason() {
        let Err(err) = Payload::parse(b"[1,2]") else {
            panic!("array accepted")
        };
        assert_eq!(
            err,
            invalid("hook payload is a JSON array, expected an object")
        );
        let Err(err) = Payload::parse(b"{\"a\":") else {
            panic!("truncated accepted")
        };
        match err {
            AdapterError::InvalidInput(m) => assert!(m.contains("line 1"), "{m}"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(Payload::parse(b"  ").is_ok());
    }
}
