//! Captured hook payloads (`--payload`): their shapes and what the adapter
//! parses from them.

use std::io::Read;

use super::{Fed, Loaded, Scan};
use crate::report::{CallOutcome, Capture};
use crate::sanitize::clean;
use crate::schema;
use drover_profile::Profile;

/// Largest `--payload` file read.
const MAX_PAYLOAD: u64 = 4 << 20;

impl Scan<'_> {
    /// `--payload NATIVE=FILE`: each captured payload reduced to its shape,
    /// plus what the adapter's `parse-hook` made of it.
    pub(super) fn captures(
        &mut self,
        profile: Option<&Profile>,
        loaded: Option<&Loaded>,
    ) -> Vec<Capture> {
        let opts = self.opts;
        let mut captures = Vec::new();
        for (native, path) in &opts.payloads {
            let bytes = match std::fs::File::open(path).and_then(|f| {
                let mut bytes = Vec::new();
                f.take(MAX_PAYLOAD).read_to_end(&mut bytes).map(|_| bytes)
            }) {
                Ok(bytes) => bytes,
                Err(_) => {
                    self.warn(
                        "hooks.payload",
                        clean!(
                            "--payload {} could not be read",
                            self.s.path(&path.to_string_lossy(), false)
                        ),
                    );
                    continue;
                }
            };
            let shape = schema::infer(&self.s, &bytes[..], true, bytes.len() as u64).ok();
            let payload_keys = match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(serde_json::Value::Object(map)) => map.keys().map(|k| self.s.key(k)).collect(),
                _ => {
                    self.warn(
                        "hooks.payload",
                        clean!(
                            "the {} payload is not a JSON object",
                            self.s.identifier(native)
                        ),
                    );
                    Vec::new()
                }
            };
            let mut capture = Capture {
                native: self.s.identifier(native),
                canonical: profile.and_then(|p| {
                    p.hooks
                        .events
                        .iter()
                        .find(|(n, _)| n == native)
                        .map(|(_, c)| self.s.identifier(c))
                }),
                adapter_kind: None,
                subagent: None,
                fields_found: Vec::new(),
                payload_keys,
                payload_schema: shape.map(|s| s.key_paths).unwrap_or_default(),
            };
            if let (Some(p), Some(l)) = (profile, loaded) {
                match l.adapter.parse_hook(&p.to_wit(), native, &bytes) {
                    Ok(Ok(event)) => {
                        capture.adapter_kind = Some(self.s.identifier(event.kind.as_str()));
                        capture.subagent = Some(event.subagent);
                        capture.fields_found =
                            event.fields_found.iter().map(|f| self.s.key(f)).collect();
                        self.record(
                            "parse-hook",
                            CallOutcome::Ok,
                            clean!("{} read", capture.native),
                        );
                    }
                    Ok(Err(error)) => {
                        let (outcome, detail) =
                            self.adapter_error(&error, l.trusted, Fed::HookPayload);
                        self.warn(
                            "adapter.call",
                            clean!(
                                "the adapter's parse-hook refused the {} payload: {}",
                                capture.native,
                                detail
                            ),
                        );
                        self.record("parse-hook", outcome, detail);
                    }
                    Err(e) => self.call_failed("parse-hook", &e, Fed::HookPayload),
                }
            }
            captures.push(capture);
        }
        captures
    }
}
