//! Transcript locations and usage parsers: globs, the family's transcripts,
//! byte splits, files without usage and unknown parsers.

use super::{
    Answer, Ctx, Finding, Outcome, Reference, Tally, corpus, glob_problem, glob_view, split_points,
    split_sample, tally_of, usage_is_zero, usage_view,
};
use crate::sandbox::SandboxError;
use drover_types::wit;
use wit::Capability;

impl Ctx<'_> {
    pub(super) fn globs(&self) -> Finding {
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
                    tally.fail(Outcome::BrokeBound, format!("{label}: {e}"));
                    continue;
                }
                Answer::Declined(_) | Answer::Refused(_) => continue,
            };
            if globs.is_empty() {
                tally.fail(Outcome::Declined, format!("{label}: no globs"));
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
                    Outcome::Disagreed,
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

    pub(super) fn usage(&self) -> Vec<Finding> {
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

    pub(super) fn family_transcripts(&self, parser: &str, reference: &Reference) -> Finding {
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
                    Outcome::Disagreed,
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

    pub(super) fn byte_splits(&self, parser: &wit::UsageParser, family: Option<&str>) -> Finding {
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
                    Outcome::Disagreed,
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

    pub(super) fn split_tally(
        &self,
        parser: &str,
        name: &str,
        sample: &[u8],
        cut: usize,
    ) -> Result<Option<wit::UsageReport>, (Outcome, String)> {
        let broke = |e: SandboxError| (Outcome::BrokeBound, e.to_string());
        let mut tally = self
            .subject
            .adapter
            .tally(parser, self.subject.limits)
            .map_err(broke)?;
        tally.begin_file(name).map_err(broke)?;
        for chunk in [&sample[..cut], &sample[cut..]] {
            if let Err(e) = tally.feed(chunk).map_err(broke)? {
                return Err((Outcome::Declined, format!("{e:?}")));
            }
        }
        tally.finish().map_err(broke)
    }

    pub(super) fn no_usage(&self, parser: &str) -> Finding {
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
                    Outcome::Disagreed,
                    format!("{parser}: data without usage reported zero usage; report none"),
                ),
            Ok(Some(_)) => tally.fail(
                Outcome::Disagreed,
                format!("{parser}: counted usage in data that has none"),
            ),
            Err((verdict, text)) => tally.fail(verdict, format!("{parser}: {text}")),
        }
        tally.finish("data without usage reports none, not zero")
    }

    pub(super) fn unknown_parser(&self) -> Finding {
        let mut tally = Tally::new(Capability::Usage, "unknown-parser");
        let outcome = self
            .subject
            .adapter
            .tally("drover-conformance-no-such-parser", self.subject.limits)
            .and_then(|mut t| t.feed(b"{}\n"));
        match outcome {
            Ok(Err(_)) => tally.pass(),
            Ok(Ok(())) => tally.fail(
                Outcome::Disagreed,
                "a tally of a parser describe does not list accepted input (answer unsupported)"
                    .to_string(),
            ),
            Err(e) => tally.fail(Outcome::BrokeBound, e.to_string()),
        }
        tally.finish("an unknown parser is refused")
    }
}
