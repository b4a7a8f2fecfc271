//! Hook configs (install, detect, remove round trips; malformed files) and
//! hook payloads, captured and hostile.

use super::{
    Answer, Ctx, Finding, Outcome, Tally, corpus, event_view, hostile_texts, same_answer, show_with,
};
use drover_types::wit;
use wit::Capability;

impl Ctx<'_> {
    pub(super) fn hook_request(&self) -> wit::HookInstall {
        let description = self.subject.description;
        let events = if self.profile.hook_events.is_empty() {
            vec![("Stop".to_string(), "Stop".to_string())]
        } else {
            self.profile.hook_events.clone()
        };
        wit::HookInstall {
            dialect: description
                .dialects
                .first()
                .cloned()
                .unwrap_or_else(|| self.profile.dialect.clone()),
            relay_command: "/usr/local/bin/drover hook --cli conformance".to_string(),
            events,
            marker: "drover hook".to_string(),
        }
    }

    pub(super) fn hook_round_trip(&self) -> Finding {
        let mut tally = Tally::new(Capability::HookConfig, "install-detect-remove");
        let request = self.hook_request();
        let adapter = self.subject.adapter;
        let installed = Answer::of(adapter.install_hooks("", &request));
        if !tally.answered("install into no file", &installed) {
            return tally.finish("");
        }
        let Answer::Ok(edit) = installed else {
            tally.fail(
                Outcome::Disagreed,
                "install into no file was refused".to_string(),
            );
            return tally.finish("");
        };
        if !edit.changed || edit.text.is_empty() {
            tally.fail(
                Outcome::Disagreed,
                "install into no file changed nothing".to_string(),
            );
        }
        match Answer::of(adapter.detect_hooks(&edit.text, &request)) {
            Answer::Ok(status) => {
                let natives: Vec<&String> = request.events.iter().map(|(n, _)| n).collect();
                if !status.missing.is_empty()
                    || natives.iter().any(|n| !status.registered.contains(n))
                {
                    tally.fail(
                        Outcome::Disagreed,
                        format!(
                            "after install, detect says registered {:?}, missing {:?}",
                            status.registered, status.missing
                        ),
                    );
                } else {
                    tally.pass();
                }
            }
            other => {
                tally.answered("detect after install", &other);
            }
        }
        match Answer::of(adapter.install_hooks(&edit.text, &request)) {
            Answer::Ok(again) if again.changed || again.text != edit.text => tally.fail(
                Outcome::Disagreed,
                "a second install changed the file again (install must be idempotent)".to_string(),
            ),
            other => {
                tally.answered("second install", &other);
            }
        }
        match Answer::of(adapter.remove_hooks(&edit.text, &request)) {
            Answer::Ok(removed) if !removed.text.is_empty() || !removed.changed => tally.fail(
                Outcome::Disagreed,
                format!(
                    "removing from a file drover created left {:?}",
                    drover_types::text::truncate_chars(&removed.text, 80)
                ),
            ),
            other => {
                tally.answered("remove", &other);
            }
        }
        if let Some((family, reference)) = self.reference_adapter()
            && let Answer::Ok(ours) = Answer::of(reference.install_hooks("", &request))
            && ours.text != edit.text
        {
            tally.fail(
                Outcome::Disagreed,
                format!("install into no file writes other text than {family} does"),
            );
        }
        tally.finish("steps hold: install, detect, install again, remove")
    }

    pub(super) fn malformed_config(&self) -> Finding {
        let mut tally = Tally::new(Capability::HookConfig, "malformed-config");
        let request = self.hook_request();
        for text in ["{\"hooks\": {", "\u{0}not a config at all", "[1, 2, 3]"] {
            let label = format!("{text:?}");
            match Answer::of(self.subject.adapter.install_hooks(text, &request)) {
                Answer::Ok(edit) if edit.changed => tally.fail(
                    Outcome::Disagreed,
                    format!(
                        "{label}: install rewrote a file it could not read (refuse it instead)"
                    ),
                ),
                other => {
                    tally.answered(&label, &other);
                }
            }
        }
        tally.finish("unreadable files are refused, never rewritten")
    }

    pub(super) fn payloads(&self) -> Finding {
        let mut tally = Tally::new(Capability::HookPayloads, "captured-payloads");
        let payloads: Vec<corpus::Payload> = match self.reference {
            Some(r) => corpus::payloads(r.family, &r.profile),
            None => crate::builtin::all()
                .iter()
                .flat_map(|b| corpus::payloads(b.name, self.profile))
                .collect(),
        };
        for payload in &payloads {
            let theirs = Answer::of(self.subject.adapter.parse_hook(
                self.profile,
                &payload.native,
                &payload.bytes,
            ));
            if !tally.answered(&payload.label, &theirs) {
                continue;
            }
            if let Answer::Ok(event) = &theirs
                && event.native != payload.native
            {
                tally.fail(
                    Outcome::Disagreed,
                    format!(
                        "{}: the event says native {:?}, it fired as {:?}",
                        payload.label, event.native, payload.native
                    ),
                );
                continue;
            }
            let Some((family, reference)) = self.reference_adapter() else {
                continue;
            };
            let ours =
                Answer::of(reference.parse_hook(self.profile, &payload.native, &payload.bytes));
            if !same_answer(&theirs, &ours, |a, b| event_view(a) == event_view(b)) {
                tally.fail(
                    Outcome::Disagreed,
                    format!(
                        "{}: {} vs {} ({family})",
                        payload.label,
                        show_with(&theirs, event_view),
                        show_with(&ours, event_view)
                    ),
                );
            }
        }
        tally.finish(&self.agree("captured payloads read", "as"))
    }

    pub(super) fn hostile_payloads(&self) -> Finding {
        let mut tally = Tally::new(Capability::HookPayloads, "hostile-payloads");
        let native = self
            .profile
            .hook_events
            .first()
            .map_or("Stop".to_string(), |(n, _)| n.clone());
        let mut inputs: Vec<(String, Vec<u8>)> = hostile_texts()
            .into_iter()
            .map(|(label, text)| (label, text.into_bytes()))
            .collect();
        inputs.push(("invalid UTF-8".to_string(), vec![b'{', 0xff, 0xfe, b'}']));
        if let Some(sample) =
            corpus::payloads(self.reference.map_or("claude", |r| r.family), self.profile).first()
        {
            for cut in (0..sample.bytes.len()).step_by(sample.bytes.len() / 24 + 1) {
                inputs.push((
                    format!("{} cut at byte {cut}", sample.label),
                    sample.bytes[..cut].to_vec(),
                ));
            }
        }
        for (label, bytes) in &inputs {
            let answer = Answer::of(
                self.subject
                    .adapter
                    .parse_hook(self.profile, &native, bytes),
            );
            tally.answered(label, &answer);
        }
        tally.finish("hostile payloads answered or refused within the limits")
    }
}
