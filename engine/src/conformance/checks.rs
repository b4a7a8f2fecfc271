//! The checks of each capability. Each check runs its inputs through the
//! component (and, where a built-in of the same family exists, through that
//! built-in under the same profile) and folds the answers into one finding.

use super::corpus;
use super::{Answer, Finding, Reference, Subject, Tally, Verdict};
use crate::sandbox::{Adapter, Limits, SandboxError, wit};

use wit::Capability;

/// The checks of one capability.
pub(super) fn of(
    capability: Capability,
    subject: &Subject,
    reference: Option<&Reference>,
) -> Vec<Finding> {
    let profile = reference.map_or(&subject.profile, |r| &r.profile);
    let ctx = Ctx {
        subject,
        reference,
        profile,
    };
    match capability {
        Capability::Prompt => vec![ctx.templates()],
        Capability::Commands => vec![
            ctx.command(Capability::Commands, "interactive-command", false),
            ctx.hostile_ids(Capability::Commands, false),
        ],
        Capability::Headless => vec![
            ctx.command(Capability::Headless, "headless-command", true),
            ctx.hostile_ids(Capability::Headless, true),
            ctx.turns(),
            ctx.hostile_turns(),
        ],
        Capability::HookConfig => vec![ctx.hook_round_trip(), ctx.malformed_config()],
        Capability::HookPayloads => vec![ctx.payloads(), ctx.hostile_payloads()],
        Capability::Transcripts => vec![ctx.globs()],
        Capability::Usage => ctx.usage(),
        Capability::Faults => vec![ctx.sentences(), ctx.prose(), ctx.profile_patterns()],
        Capability::Screen => vec![ctx.panes(), ctx.blank_screen()],
        Capability::Acp => vec![ctx.acp_launch()],
    }
}

struct Ctx<'a> {
    subject: &'a Subject<'a>,
    reference: Option<&'a Reference<'a>>,
    /// The family's profile when there is a family, else the subject's.
    profile: &'a wit::Profile,
}

/// Lines that talk about errors without being one: no classifier may
/// report a fault for them.
const PROSE: &[&str] = &[
    "I fixed the rate limit handling in the retry loop.",
    "The tests now cover a 429 Too Many Requests response from the mock server.",
    "Next: handle `quota exceeded` errors and network timeouts gracefully.",
    "- Added a section on authentication failures (401) to the README",
    "We should retry on 500 Internal Server Error and 503 Service Unavailable.",
    "Overloaded servers return 529; the client backs off.",
    "The docs say the first run asks whether you trust the files in this folder.",
];

/// Every kind of space as an ASCII space (panes carry no-break spaces that
/// readers normalize).
fn spaced(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect()
}

fn clean(text: &str) -> bool {
    !text.chars().any(char::is_control)
}

/// A conversation id no command line may carry as its own word.
const HOSTILE_IDS: &[&str] = &["--help", "-x", "a b", "id\nrm -rf /", ""];

impl Ctx<'_> {
    /// "…, as claude does" with a family; "…, within the limits" without.
    fn agree(&self, what: &str, word: &str) -> String {
        match self.reference {
            Some(r) => format!("{what} {word} {} does", r.family),
            None => format!("{what} within the limits (no family to compare with)"),
        }
    }

    fn reference_adapter(&self) -> Option<(&str, &Adapter)> {
        self.reference.map(|r| (r.family, r.adapter))
    }

    fn templates(&self) -> Finding {
        let mut tally = Tally::new(Capability::Prompt, "templates");
        let cases = [
            ("{prompt}", "/review src/main.rs"),
            ("Use the {skill} skill now: {args}", "/bmad-dev-story 1-2"),
            ("Use the {skill} skill now: {args}", "plain words, no skill"),
            ("{{literal}} {prompt}", "x"),
            ("{prompt}", "ünïcødé ✓ and \"quotes\""),
            ("{unclosed", "/review"),
        ];
        for (template, prompt) in cases {
            let profile = wit::Profile {
                prompt_template: template.to_string(),
                ..self.profile.clone()
            };
            let label = format!("{template:?} with {prompt:?}");
            let theirs = Answer::of(self.subject.adapter.render_prompt(&profile, prompt));
            if !tally.answered(&label, &theirs) {
                continue;
            }
            let Some((family, reference)) = self.reference_adapter() else {
                continue;
            };
            let ours = Answer::of(reference.render_prompt(&profile, prompt));
            if !same_answer(&theirs, &ours, |a, b| a == b) {
                tally.fail(
                    Verdict::Disagreed,
                    format!("{label}: {} vs {} ({family})", show(&theirs), show(&ours)),
                );
            }
        }
        tally.finish(&self.agree("templates render", "as"))
    }

    fn launch(&self, headless: bool, prompt: &str, conversation: wit::Conversation) -> Launch {
        let request = wit::LaunchRequest {
            prompt: prompt.to_string(),
            model: "model-x".to_string(),
            extra_args: None,
            conversation,
        };
        let call = |adapter: &Adapter| {
            Answer::of(if headless {
                adapter.headless_command(self.profile, &request)
            } else {
                adapter.interactive_command(self.profile, &request)
            })
        };
        Launch {
            theirs: call(self.subject.adapter),
            ours: self
                .reference_adapter()
                .map(|(f, a)| (f.to_string(), call(a))),
        }
    }

    /// `acp-command` for a fresh conversation: a non-empty argv without NUL
    /// bytes, the same as the family's where there is one.
    fn acp_launch(&self) -> Finding {
        let mut tally = Tally::new(Capability::Acp, "acp-command");
        let request = wit::LaunchRequest {
            prompt: String::new(),
            model: String::new(),
            extra_args: None,
            conversation: wit::Conversation::Fresh,
        };
        let theirs = Answer::of(self.subject.adapter.acp_command(self.profile, &request));
        if tally.answered("fresh", &theirs) {
            if let Answer::Ok(command) = &theirs {
                if command.argv.first().is_none_or(|a| a.is_empty()) {
                    tally.fail(Verdict::Disagreed, "fresh: an empty argv".to_string());
                } else if command.argv.iter().any(|a| a.contains('\0')) {
                    tally.fail(Verdict::BrokeBound, "fresh: a NUL byte in argv".to_string());
                }
            }
            if let Some((family, reference)) = self.reference_adapter() {
                let ours = Answer::of(reference.acp_command(self.profile, &request));
                if !same_answer(&theirs, &ours, |a, b| a == b) {
                    tally.fail(
                        Verdict::Disagreed,
                        format!(
                            "fresh: {} vs {} ({family})",
                            show_command(&theirs),
                            show_command(&ours)
                        ),
                    );
                }
            }
        }
        tally.finish("the ACP launch command")
    }

    fn command(&self, capability: Capability, check: &'static str, headless: bool) -> Finding {
        let mut tally = Tally::new(capability, check);
        let cases = [
            ("fresh", "/review src/main.rs", wit::Conversation::Fresh),
            (
                "resume",
                "continue",
                wit::Conversation::Resume("abc123".into()),
            ),
            ("no prompt", "", wit::Conversation::Fresh),
        ];
        for (label, prompt, conversation) in cases {
            // A headless turn without a prompt may be refused; nothing else.
            let Launch { theirs, ours } = self.launch(headless, prompt, conversation);
            if !tally.answered(label, &theirs) {
                continue;
            }
            if let Answer::Ok(command) = &theirs {
                if command.argv.first() != Some(&self.profile.binary) {
                    tally.fail(
                        Verdict::Disagreed,
                        format!(
                            "{label}: argv does not start with the profile's binary: {:?}",
                            command.argv
                        ),
                    );
                    continue;
                }
                if command.argv.iter().any(|a| a.contains('\0')) {
                    tally.fail(Verdict::BrokeBound, format!("{label}: a NUL byte in argv"));
                    continue;
                }
            }
            if let Some((family, ours)) = ours
                && !same_answer(&theirs, &ours, |a, b| a == b)
            {
                tally.fail(
                    Verdict::Disagreed,
                    format!(
                        "{label}: {} vs {} ({family})",
                        show_command(&theirs),
                        show_command(&ours)
                    ),
                );
            }
        }
        tally.finish(&self.agree("launches build their command", "as"))
    }

    fn hostile_ids(&self, capability: Capability, headless: bool) -> Finding {
        let mut tally = Tally::new(
            capability,
            if headless {
                "hostile-ids-headless"
            } else {
                "hostile-ids"
            },
        );
        for id in HOSTILE_IDS {
            for conversation in [
                wit::Conversation::Resume(id.to_string()),
                wit::Conversation::Preset(id.to_string()),
            ] {
                let label = format!("{conversation:?}");
                match self.launch(headless, "hi", conversation).theirs {
                    Answer::Ok(command) if command.argv.iter().any(|a| a == id) => tally.fail(
                        Verdict::Disagreed,
                        format!(
                            "{label}: the id reached argv as its own word: {:?}",
                            command.argv
                        ),
                    ),
                    Answer::Broke(e) => tally.fail(Verdict::BrokeBound, format!("{label}: {e}")),
                    _ => tally.pass(),
                }
            }
        }
        tally.finish("ids that are not one safe word are refused")
    }

    fn turns(&self) -> Finding {
        let mut tally = Tally::new(Capability::Headless, "captured-turns");
        let runs: Vec<(String, wit::TurnOutput)> = match self.reference {
            Some(r) => corpus::turns(r.family),
            None => crate::builtin::all()
                .iter()
                .flat_map(|b| corpus::turns(b.name))
                .collect(),
        };
        for (label, output) in &runs {
            let theirs = Answer::of(self.subject.adapter.parse_turn(self.profile, output));
            if !tally.answered(label, &theirs) {
                continue;
            }
            let Some((family, reference)) = self.reference_adapter() else {
                continue;
            };
            let ours = Answer::of(reference.parse_turn(self.profile, output));
            if !same_answer(&theirs, &ours, |a, b| turn_view(a) == turn_view(b)) {
                tally.fail(
                    Verdict::Disagreed,
                    format!(
                        "{label}: {} vs {} ({family})",
                        show_with(&theirs, turn_view),
                        show_with(&ours, turn_view)
                    ),
                );
            }
        }
        tally.finish(&self.agree("captured headless runs read", "as"))
    }

    fn hostile_turns(&self) -> Finding {
        let mut tally = Tally::new(Capability::Headless, "hostile-turns");
        for (label, text) in hostile_texts() {
            for output in [
                wit::TurnOutput {
                    stdout: text.clone(),
                    stderr: String::new(),
                    exit_code: Some(0),
                    prior_usage: None,
                },
                wit::TurnOutput {
                    stdout: String::new(),
                    stderr: text.clone(),
                    exit_code: None,
                    prior_usage: None,
                },
            ] {
                let answer = Answer::of(self.subject.adapter.parse_turn(self.profile, &output));
                tally.answered(&label, &answer);
            }
        }
        tally.finish("hostile outputs answered within the limits")
    }

    fn hook_request(&self) -> wit::HookInstall {
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

    fn hook_round_trip(&self) -> Finding {
        let mut tally = Tally::new(Capability::HookConfig, "install-detect-remove");
        let request = self.hook_request();
        let adapter = self.subject.adapter;
        let installed = Answer::of(adapter.install_hooks("", &request));
        if !tally.answered("install into no file", &installed) {
            return tally.finish("");
        }
        let Answer::Ok(edit) = installed else {
            tally.fail(
                Verdict::Disagreed,
                "install into no file was refused".to_string(),
            );
            return tally.finish("");
        };
        if !edit.changed || edit.text.is_empty() {
            tally.fail(
                Verdict::Disagreed,
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
                        Verdict::Disagreed,
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
                Verdict::Disagreed,
                "a second install changed the file again (install must be idempotent)".to_string(),
            ),
            other => {
                tally.answered("second install", &other);
            }
        }
        match Answer::of(adapter.remove_hooks(&edit.text, &request)) {
            Answer::Ok(removed) if !removed.text.is_empty() || !removed.changed => tally.fail(
                Verdict::Disagreed,
                format!(
                    "removing from a file drover created left {:?}",
                    crate::run::truncate_chars(&removed.text, 80)
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
                Verdict::Disagreed,
                format!("install into no file writes other text than {family} does"),
            );
        }
        tally.finish("steps hold: install, detect, install again, remove")
    }

    fn malformed_config(&self) -> Finding {
        let mut tally = Tally::new(Capability::HookConfig, "malformed-config");
        let request = self.hook_request();
        for text in ["{\"hooks\": {", "\u{0}not a config at all", "[1, 2, 3]"] {
            let label = format!("{text:?}");
            match Answer::of(self.subject.adapter.install_hooks(text, &request)) {
                Answer::Ok(edit) if edit.changed => tally.fail(
                    Verdict::Disagreed,
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

    fn payloads(&self) -> Finding {
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
                    Verdict::Disagreed,
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
                    Verdict::Disagreed,
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

    fn hostile_payloads(&self) -> Finding {
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

    fn globs(&self) -> Finding {
        let mut tally = Tally::new(Capability::Transcripts, "globs");
        let description = self.subject.description;
        let mut contexts = vec![("default".to_string(), Vec::new())];
        for var in &description.location_env {
            contexts.push((
                format!("{var}=/x/state"),
                vec![(var.clone(), "/x/state".to_string())],
            ));
        }
        for (label, env) in contexts {
            let context = wit::LocationContext {
                home: "/home/u".to_string(),
                cwd: "/work/p".to_string(),
                env,
            };
            let theirs = Answer::total(
                self.subject
                    .adapter
                    .transcript_locations(self.profile, &context),
            );
            let globs = match &theirs {
                Answer::Ok(globs) => globs,
                Answer::Broke(e) => {
                    tally.fail(Verdict::BrokeBound, format!("{label}: {e}"));
                    continue;
                }
                Answer::Declined(_) | Answer::Refused(_) => continue,
            };
            if globs.is_empty() {
                tally.fail(Verdict::Declined, format!("{label}: no globs"));
                continue;
            }
            if let Some(problem) = globs.iter().find_map(|g| glob_problem(g, description)) {
                tally.fail(problem.0, format!("{label}: {}", problem.1));
                continue;
            }
            tally.pass();
            if let Some((family, reference)) = self.reference_adapter()
                && let Ok(ours) = reference.transcript_locations(self.profile, &context)
                && glob_view(&ours) != glob_view(globs)
            {
                tally.fail(
                    Verdict::Disagreed,
                    format!(
                        "{label}: {:?} vs {:?} ({family})",
                        glob_view(globs),
                        glob_view(&ours)
                    ),
                );
            }
        }
        tally.finish(&self.agree("contexts give safe globs", "like"))
    }

    fn usage(&self) -> Vec<Finding> {
        let mut findings = Vec::new();
        for parser in &self.subject.description.usage_parsers {
            let family = self.reference.filter(|r| {
                corpus::transcripts(r.family).count() > 0
                    && r.adapter
                        .describe()
                        .is_ok_and(|d| d.usage_parsers.iter().any(|p| p.name == parser.name))
            });
            if let Some(reference) = family {
                findings.push(self.family_transcripts(&parser.name, reference));
            }
            findings.push(self.byte_splits(parser, family.map(|r| r.family)));
            findings.push(self.no_usage(&parser.name));
        }
        findings.push(self.unknown_parser());
        findings
    }

    fn family_transcripts(&self, parser: &str, reference: &Reference) -> Finding {
        let mut tally = Tally::new(Capability::Usage, "family-transcripts");
        for (label, text) in corpus::transcripts(reference.family) {
            let name = label.rsplit('/').next().unwrap_or(&label);
            let theirs = tally_of(
                self.subject.adapter,
                parser,
                self.subject.limits,
                &[(name, text.as_bytes())],
            );
            let theirs = match theirs {
                Ok(report) => report,
                Err(verdict_and_text) => {
                    tally.fail(
                        verdict_and_text.0,
                        format!("{label}: {}", verdict_and_text.1),
                    );
                    continue;
                }
            };
            let ours = tally_of(
                reference.adapter,
                parser,
                self.subject.limits,
                &[(name, text.as_bytes())],
            );
            match ours {
                Ok(ours) if usage_view(&ours) != usage_view(&theirs) => tally.fail(
                    Verdict::Disagreed,
                    format!(
                        "{label}: {:?} vs {:?} ({})",
                        usage_view(&theirs),
                        usage_view(&ours),
                        reference.family
                    ),
                ),
                _ => tally.pass(),
            }
        }
        tally.finish(&format!(
            "transcripts count as {} counts them",
            reference.family
        ))
    }

    fn byte_splits(&self, parser: &wit::UsageParser, family: Option<&str>) -> Finding {
        let mut tally = Tally::new(Capability::Usage, "byte-splits");
        let Some((label, sample)) = split_sample(parser, family) else {
            tally.pass();
            return tally.finish(&format!(
                "{}: no transcript line in the corpus carries its needles; nothing to split",
                parser.name
            ));
        };
        let name = label.rsplit('/').next().unwrap_or(&label).to_string();
        let whole = match tally_of(
            self.subject.adapter,
            &parser.name,
            self.subject.limits,
            &[(&name, &sample)],
        ) {
            Ok(report) => report,
            Err((verdict, text)) => {
                tally.fail(verdict, format!("{label}: {text}"));
                return tally.finish("");
            }
        };
        for cut in split_points(sample.len()) {
            let split = self.split_tally(&parser.name, &name, &sample, cut);
            match split {
                Ok(report) if usage_view(&report) == usage_view(&whole) => tally.pass(),
                Ok(report) => tally.fail(
                    Verdict::Disagreed,
                    format!(
                        "{label}: split at byte {cut} gives {:?}, fed whole {:?}",
                        usage_view(&report),
                        usage_view(&whole)
                    ),
                ),
                Err((verdict, text)) => {
                    tally.fail(verdict, format!("{label}: split at byte {cut}: {text}"))
                }
            }
        }
        tally.finish(&format!(
            "splits of {} bytes of {label} count as the whole ({})",
            sample.len(),
            parser.name
        ))
    }

    fn split_tally(
        &self,
        parser: &str,
        name: &str,
        sample: &[u8],
        cut: usize,
    ) -> Result<Option<wit::UsageReport>, (Verdict, String)> {
        let broke = |e: SandboxError| (Verdict::BrokeBound, e.to_string());
        let mut tally = self
            .subject
            .adapter
            .tally(parser, self.subject.limits)
            .map_err(broke)?;
        tally.begin_file(name).map_err(broke)?;
        for chunk in [&sample[..cut], &sample[cut..]] {
            if let Err(e) = tally.feed(chunk).map_err(broke)? {
                return Err((Verdict::Declined, format!("{e:?}")));
            }
        }
        tally.finish().map_err(broke)
    }

    fn no_usage(&self, parser: &str) -> Finding {
        let mut tally = Tally::new(Capability::Usage, "no-usage-is-none");
        let text = b"no token counts here\n{\"type\": \"message\", \"text\": \"hello\"}\n";
        match tally_of(
            self.subject.adapter,
            parser,
            self.subject.limits,
            &[("plain.jsonl", text)],
        ) {
            Ok(None) => tally.pass(),
            Ok(Some(report)) if report.entries.iter().all(|e| usage_is_zero(&e.usage)) => tally
                .fail(
                    Verdict::Disagreed,
                    format!("{parser}: data without usage reported zero usage; report none"),
                ),
            Ok(Some(_)) => tally.fail(
                Verdict::Disagreed,
                format!("{parser}: counted usage in data that has none"),
            ),
            Err((verdict, text)) => tally.fail(verdict, format!("{parser}: {text}")),
        }
        tally.finish("data without usage reports none, not zero")
    }

    fn unknown_parser(&self) -> Finding {
        let mut tally = Tally::new(Capability::Usage, "unknown-parser");
        let outcome = self
            .subject
            .adapter
            .tally("drover-conformance-no-such-parser", self.subject.limits)
            .and_then(|mut t| t.feed(b"{}\n"));
        match outcome {
            Ok(Err(_)) => tally.pass(),
            Ok(Ok(())) => tally.fail(
                Verdict::Disagreed,
                "a tally of a parser describe does not list accepted input (answer unsupported)"
                    .to_string(),
            ),
            Err(e) => tally.fail(Verdict::BrokeBound, e.to_string()),
        }
        tally.finish("an unknown parser is refused")
    }

    fn sentences(&self) -> Finding {
        let mut tally = Tally::new(Capability::Faults, "captured-sentences");
        let texts: Vec<(String, &str)> = match self.reference {
            Some(r) => corpus::fault_texts(r.family).collect(),
            None => crate::builtin::all()
                .iter()
                .flat_map(|b| corpus::fault_texts(b.name))
                .collect(),
        };
        for (label, text) in texts {
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            let theirs = Answer::total(self.subject.adapter.classify_fault(self.profile, &lines));
            let fault = match &theirs {
                Answer::Ok(fault) => fault,
                _ => {
                    tally.answered(&label, &theirs);
                    continue;
                }
            };
            if let Some(f) = fault
                && (!clean(&f.evidence) || f.evidence.chars().count() > 1000)
            {
                tally.fail(
                    Verdict::BrokeBound,
                    format!(
                        "{label}: evidence is not one clean line: {:?}",
                        crate::run::truncate_chars(&f.evidence, 80)
                    ),
                );
                continue;
            }
            tally.pass();
            if let Some((family, reference)) = self.reference_adapter()
                && let Ok(ours) = reference.classify_fault(self.profile, &lines)
                && fault.as_ref().map(|f| f.kind) != ours.as_ref().map(|f| f.kind)
            {
                tally.fail(
                    Verdict::Disagreed,
                    format!(
                        "{label}: {:?} vs {:?} ({family})",
                        fault.as_ref().map(|f| f.kind.as_str()),
                        ours.as_ref().map(|f| f.kind.as_str())
                    ),
                );
            }
        }
        tally.finish(&self.agree("captured logs classify", "as"))
    }

    fn prose(&self) -> Finding {
        let mut tally = Tally::new(Capability::Faults, "prose");
        for line in PROSE {
            match self
                .subject
                .adapter
                .classify_fault(self.profile, &[line.to_string()])
            {
                Ok(None) => tally.pass(),
                Ok(Some(fault)) => tally.fail(
                    Verdict::Disagreed,
                    format!("{line:?} read as {} by rule {}", fault.kind, fault.rule),
                ),
                Err(e) => tally.fail(Verdict::BrokeBound, e.to_string()),
            }
        }
        tally.finish("lines that talk about errors are not faults")
    }

    fn profile_patterns(&self) -> Finding {
        let mut tally = Tally::new(Capability::Faults, "profile-patterns");
        let profile = wit::Profile {
            env_fault_patterns: vec!["^drover conformance: ".to_string()],
            ..self.profile.clone()
        };
        let line = "drover conformance: quota exceeded for this month".to_string();
        match self.subject.adapter.classify_fault(&profile, &[line]) {
            Ok(Some(_)) => tally.pass(),
            Ok(None) => tally.fail(
                Verdict::Disagreed,
                "a line matching the profile's env_fault_patterns is not a fault".to_string(),
            ),
            Err(e) => tally.fail(Verdict::BrokeBound, e.to_string()),
        }
        tally.finish("the profile's patterns classify")
    }

    fn panes(&self) -> Finding {
        let mut tally = Tally::new(Capability::Screen, "captured-panes");
        let screens: Vec<(String, wit::Screen)> = match self.reference {
            Some(r) => corpus::screens(r.family).collect(),
            None => crate::builtin::all()
                .iter()
                .flat_map(|b| corpus::screens(b.name).collect::<Vec<_>>())
                .collect(),
        };
        for (label, screen) in &screens {
            let reading = match self.subject.adapter.read_screen(self.profile, screen) {
                Ok(reading) => reading,
                Err(e) => {
                    tally.fail(Verdict::BrokeBound, format!("{label}: {e}"));
                    continue;
                }
            };
            if reading.rule.is_empty() || !clean(&reading.evidence) {
                tally.fail(
                    Verdict::BrokeBound,
                    format!("{label}: no rule, or control characters in the evidence"),
                );
                continue;
            }
            let evidence = spaced(reading.evidence.trim());
            if !evidence.is_empty()
                && !spaced(&screen.title).contains(&evidence)
                && !screen.rows.iter().any(|r| spaced(r).contains(&evidence))
            {
                tally.fail(
                    Verdict::Disagreed,
                    format!("{label}: the evidence {evidence:?} is not on the screen"),
                );
                continue;
            }
            tally.pass();
            if let Some((family, reference)) = self.reference_adapter()
                && let Ok(ours) = reference.read_screen(self.profile, screen)
                && (ours.state, ours.prompt_kind) != (reading.state, reading.prompt_kind)
            {
                tally.fail(
                    Verdict::Disagreed,
                    format!(
                        "{label}: {} by {} vs {} by {} ({family})",
                        reading.state, reading.rule, ours.state, ours.rule
                    ),
                );
            }
        }
        tally.finish(&self.agree("captured panes read", "as"))
    }

    fn blank_screen(&self) -> Finding {
        let mut tally = Tally::new(Capability::Screen, "blank-screen");
        let blank = wit::Screen {
            rows: vec![String::new(); 24],
            title: String::new(),
        };
        match self.subject.adapter.read_screen(self.profile, &blank) {
            Ok(r) if matches!(r.state, wit::SeatState::Blocked | wit::SeatState::Working) => tally
                .fail(
                    Verdict::Disagreed,
                    format!("a blank pane reads as {} by {}", r.state, r.rule),
                ),
            Ok(_) => tally.pass(),
            Err(e) => tally.fail(Verdict::BrokeBound, e.to_string()),
        }
        tally.finish("a blank pane is neither busy nor blocked")
    }
}

/// Two launch answers: the component's and the family's.
struct Launch {
    theirs: Answer<wit::Command>,
    ours: Option<(String, Answer<wit::Command>)>,
}

/// Texts no parser should trip over.
fn hostile_texts() -> Vec<(String, String)> {
    let mut noise = String::new();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..4096 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        noise.push(char::from_u32(u32::try_from(state % 0x800).unwrap_or(63)).unwrap_or('?'));
    }
    vec![
        ("empty".to_string(), String::new()),
        ("not JSON".to_string(), "this is not json\n".to_string()),
        ("a JSON array".to_string(), "[1, 2, 3]".to_string()),
        (
            "wrong types".to_string(),
            r#"{"session_id": 5, "type": [], "usage": "many"}"#.to_string(),
        ),
        ("deep nesting".to_string(), "[".repeat(100_000)),
        (
            "a 2 MB line".to_string(),
            format!("{{\"x\": \"{}\"}}", "a".repeat(2 << 20)),
        ),
        ("noise".to_string(), noise),
    ]
}

fn same_answer<T>(theirs: &Answer<T>, ours: &Answer<T>, same: impl Fn(&T, &T) -> bool) -> bool {
    match (theirs, ours) {
        (Answer::Ok(a), Answer::Ok(b)) => same(a, b),
        (Answer::Refused(_), Answer::Refused(_)) | (Answer::Declined(_), Answer::Declined(_)) => {
            true
        }
        _ => false,
    }
}

fn show<T: std::fmt::Debug>(answer: &Answer<T>) -> String {
    show_with(answer, |v| format!("{v:?}"))
}

fn show_with<T, V: std::fmt::Debug>(answer: &Answer<T>, view: impl Fn(&T) -> V) -> String {
    match answer {
        Answer::Ok(value) => crate::run::truncate_chars(&format!("{:?}", view(value)), 160),
        Answer::Declined(m) => format!("unsupported ({m})"),
        Answer::Refused(m) => format!("invalid-input ({m})"),
        Answer::Broke(e) => format!("failed ({e})"),
    }
}

fn show_command(answer: &Answer<wit::Command>) -> String {
    show_with(answer, |c| (c.argv.clone(), c.env.clone(), c.stdin.clone()))
}

type TurnView = (
    wit::TurnOutcome,
    Option<String>,
    Option<String>,
    Option<wit::PromptKind>,
    Option<[u64; 6]>,
);

fn turn_view(turn: &wit::TurnResult) -> TurnView {
    (
        turn.outcome,
        turn.reply.clone(),
        turn.conversation_id.clone(),
        turn.prompt_kind,
        turn.usage.as_ref().map(usage_total),
    )
}

type EventView = (
    wit::CanonicalEvent,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
    Option<wit::PromptKind>,
    Option<String>,
);

fn event_view(event: &wit::HookEvent) -> EventView {
    (
        event.kind,
        event.session_id.clone(),
        event.transcript_path.clone(),
        event.cwd.clone(),
        event.subagent,
        event.prompt_kind,
        event.last_message.clone(),
    )
}

fn glob_view(globs: &[wit::TranscriptGlob]) -> Vec<(wit::GlobBase, String, String, String)> {
    globs
        .iter()
        .map(|g| {
            (
                g.base,
                g.pattern.clone(),
                g.format.clone(),
                g.parser.clone(),
            )
        })
        .collect()
}

/// Why a glob is unusable, if it is.
fn glob_problem(
    glob: &wit::TranscriptGlob,
    description: &wit::Description,
) -> Option<(Verdict, String)> {
    let climbs = glob.pattern.split('/').any(|part| part == "..");
    let absolute = glob.pattern.starts_with('/');
    if glob.pattern.is_empty() || glob.pattern.len() > 4096 || !clean(&glob.pattern) {
        return Some((
            Verdict::BrokeBound,
            format!(
                "unusable pattern {:?}",
                crate::run::truncate_chars(&glob.pattern, 80)
            ),
        ));
    }
    if climbs || absolute != (glob.base == wit::GlobBase::Absolute) {
        return Some((
            Verdict::BrokeBound,
            format!(
                "{:?} with base {:?} climbs out of or ignores its base",
                glob.pattern, glob.base
            ),
        ));
    }
    let declared = glob.parser == "none"
        || description
            .usage_parsers
            .iter()
            .any(|p| p.name == glob.parser);
    (!declared).then(|| {
        (
            Verdict::Disagreed,
            format!(
                "{:?} names parser {:?}, which describe does not list",
                glob.pattern, glob.parser
            ),
        )
    })
}

/// Feeds `files` to a fresh tally of `parser` in 64 KiB chunks.
fn tally_of(
    adapter: &Adapter,
    parser: &str,
    limits: Limits,
    files: &[(&str, &[u8])],
) -> Result<Option<wit::UsageReport>, (Verdict, String)> {
    let broke = |e: SandboxError| (Verdict::BrokeBound, e.to_string());
    let mut tally = adapter.tally(parser, limits).map_err(broke)?;
    for (name, bytes) in files {
        tally.begin_file(name).map_err(broke)?;
        for chunk in bytes.chunks(64 << 10) {
            if let Err(e) = tally.feed(chunk).map_err(broke)? {
                return Err((Verdict::Declined, format!("{e:?}")));
            }
        }
    }
    tally.finish().map_err(broke)
}

fn usage_total(report: &wit::UsageReport) -> [u64; 6] {
    report.entries.iter().fold([0; 6], |mut sum, e| {
        let u = &e.usage;
        for (slot, value) in sum.iter_mut().zip([
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.reasoning,
            u.requests,
        ]) {
            *slot = slot.saturating_add(value);
        }
        sum
    })
}

fn usage_view(report: &Option<wit::UsageReport>) -> Option<([u64; 6], usize)> {
    report.as_ref().map(|r| (usage_total(r), r.entries.len()))
}

fn usage_is_zero(usage: &wit::Usage) -> bool {
    [
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
        usage.reasoning,
        usage.requests,
    ]
    .iter()
    .all(|v| *v == 0)
}

/// The most bytes a byte-split sample holds: every split point is a fresh
/// tally, so this bounds the check's time.
const SPLIT_SAMPLE_MAX: usize = 4096;

/// Up to two of the shortest corpus lines that carry the parser's needles
/// (from the family's transcripts when it has a family), as one file.
fn split_sample(parser: &wit::UsageParser, family: Option<&str>) -> Option<(String, Vec<u8>)> {
    let transcripts: Vec<(String, &str)> = match family {
        Some(family) => corpus::transcripts(family).collect(),
        None => corpus::all_transcripts().collect(),
    };
    let carries = |line: &str| {
        !line.trim().is_empty()
            && (parser.needles.is_empty()
                || parser.needles.iter().any(|n| line.contains(n.as_str())))
    };
    let (label, text) = transcripts
        .into_iter()
        .filter(|(_, text)| text.lines().any(carries))
        .min_by_key(|(_, text)| {
            text.lines()
                .filter(|l| carries(l))
                .map(str::len)
                .min()
                .unwrap_or(usize::MAX)
        })?;
    let mut lines: Vec<&str> = text.lines().filter(|l| carries(l)).collect();
    lines.sort_by_key(|l| l.len());
    let mut sample = Vec::new();
    for line in lines.into_iter().take(2) {
        if !sample.is_empty() && sample.len() + line.len() + 1 > SPLIT_SAMPLE_MAX {
            break;
        }
        sample.extend_from_slice(line.as_bytes());
        sample.push(b'\n');
    }
    Some((label, sample))
}

/// Every byte boundary of a sample of `len` bytes, thinned evenly to at most
/// `SPLIT_SAMPLE_MAX` points when the single line is longer than that.
fn split_points(len: usize) -> impl Iterator<Item = usize> {
    let step = len / SPLIT_SAMPLE_MAX + 1;
    (0..=len).step_by(step)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(base: wit::GlobBase, pattern: &str, parser: &str) -> wit::TranscriptGlob {
        wit::TranscriptGlob {
            base,
            pattern: pattern.into(),
            format: "jsonl".into(),
            parser: parser.into(),
        }
    }

    #[test]
    fn globs_that_climb_or_name_unknown_parsers_are_caught() {
        let description = wit::Description {
            name: "x".into(),
            adapter_version: "1".into(),
            wit_version: "0.2.0".into(),
            capabilities: vec![],
            dialects: vec![],
            usage_parsers: vec![wit::UsageParser {
                name: "p".into(),
                needles: vec![],
            }],
            location_env: vec![],
            limitations: vec![],
        };
        let problem = |g: wit::TranscriptGlob| glob_problem(&g, &description).map(|(v, _)| v);
        assert_eq!(problem(glob(wit::GlobBase::Home, ".x/*.jsonl", "p")), None);
        assert_eq!(
            problem(glob(wit::GlobBase::Absolute, "/x/*.jsonl", "none")),
            None
        );
        assert_eq!(
            problem(glob(wit::GlobBase::Home, "../../etc/*", "p")),
            Some(Verdict::BrokeBound)
        );
        assert_eq!(
            problem(glob(wit::GlobBase::Cwd, "/etc/*", "p")),
            Some(Verdict::BrokeBound)
        );
        assert_eq!(
            problem(glob(wit::GlobBase::Home, "x\u{1b}[2J", "p")),
            Some(Verdict::BrokeBound)
        );
        assert_eq!(
            problem(glob(wit::GlobBase::Home, ".x/*", "q")),
            Some(Verdict::Disagreed)
        );
    }

    #[test]
    fn split_points_cover_every_byte_of_a_small_sample() {
        assert_eq!(split_points(3).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert!(split_points(10_000).count() <= SPLIT_SAMPLE_MAX + 1);
    }
}
