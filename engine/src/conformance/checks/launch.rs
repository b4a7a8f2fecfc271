//! Prompts, launch commands and headless turns: the component's answers
//! beside the family's, and hostile ids and output it must survive.

use super::{
    Answer, Ctx, Finding, HOSTILE_IDS, Launch, Outcome, Tally, corpus, hostile_texts, same_answer,
    show, show_command, show_with, turn_view,
};
use crate::sandbox::Adapter;
use drover_types::wit;
use wit::Capability;

impl Ctx<'_> {
    pub(super) fn templates(&self) -> Finding {
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
                    Outcome::Disagreed,
                    format!("{label}: {} vs {} ({family})", show(&theirs), show(&ours)),
                );
            }
        }
        tally.finish(&self.agree("templates render", "as"))
    }

    pub(super) fn launch(
        &self,
        headless: bool,
        prompt: &str,
        conversation: wit::Conversation,
    ) -> Launch {
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
    pub(super) fn acp_launch(&self) -> Finding {
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
                    tally.fail(Outcome::Disagreed, "fresh: an empty argv".to_string());
                } else if command.argv.iter().any(|a| a.contains('\0')) {
                    tally.fail(Outcome::BrokeBound, "fresh: a NUL byte in argv".to_string());
                }
            }
            if let Some((family, reference)) = self.reference_adapter() {
                let ours = Answer::of(reference.acp_command(self.profile, &request));
                if !same_answer(&theirs, &ours, |a, b| a == b) {
                    tally.fail(
                        Outcome::Disagreed,
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

    pub(super) fn command(
        &self,
        capability: Capability,
        check: &'static str,
        headless: bool,
    ) -> Finding {
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
                        Outcome::Disagreed,
                        format!(
                            "{label}: argv does not start with the profile's binary: {:?}",
                            command.argv
                        ),
                    );
                    continue;
                }
                if command.argv.iter().any(|a| a.contains('\0')) {
                    tally.fail(Outcome::BrokeBound, format!("{label}: a NUL byte in argv"));
                    continue;
                }
            }
            if let Some((family, ours)) = ours
                && !same_answer(&theirs, &ours, |a, b| a == b)
            {
                tally.fail(
                    Outcome::Disagreed,
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

    pub(super) fn hostile_ids(&self, capability: Capability, headless: bool) -> Finding {
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
                        Outcome::Disagreed,
                        format!(
                            "{label}: the id reached argv as its own word: {:?}",
                            command.argv
                        ),
                    ),
                    Answer::Broke(e) => tally.fail(Outcome::BrokeBound, format!("{label}: {e}")),
                    _ => tally.pass(),
                }
            }
        }
        tally.finish("ids that are not one safe word are refused")
    }

    pub(super) fn turns(&self) -> Finding {
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
                    Outcome::Disagreed,
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

    pub(super) fn hostile_turns(&self) -> Finding {
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
}
