//! Fault classification: the CLIs' sentences, prose that only talks about
//! errors, and the profile's own patterns.

use super::{Answer, Ctx, Finding, Outcome, PROSE, Tally, clean, corpus};
use drover_types::wit;
use wit::Capability;

impl Ctx<'_> {
    pub(super) fn sentences(&self) -> Finding {
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
                    Outcome::BrokeBound,
                    format!(
                        "{label}: evidence is not one clean line: {:?}",
                        drover_types::text::truncate_chars(&f.evidence, 80)
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
                    Outcome::Disagreed,
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

    pub(super) fn prose(&self) -> Finding {
        let mut tally = Tally::new(Capability::Faults, "prose");
        for line in PROSE {
            match self
                .subject
                .adapter
                .classify_fault(self.profile, &[line.to_string()])
            {
                Ok(None) => tally.pass(),
                Ok(Some(fault)) => tally.fail(
                    Outcome::Disagreed,
                    format!("{line:?} read as {} by rule {}", fault.kind, fault.rule),
                ),
                Err(e) => tally.fail(Outcome::BrokeBound, e.to_string()),
            }
        }
        tally.finish("lines that talk about errors are not faults")
    }

    pub(super) fn profile_patterns(&self) -> Finding {
        let mut tally = Tally::new(Capability::Faults, "profile-patterns");
        let profile = wit::Profile {
            env_fault_patterns: vec!["^drover conformance: ".to_string()],
            ..self.profile.clone()
        };
        let line = "drover conformance: quota exceeded for this month".to_string();
        match self.subject.adapter.classify_fault(&profile, &[line]) {
            Ok(Some(_)) => tally.pass(),
            Ok(None) => tally.fail(
                Outcome::Disagreed,
                "a line matching the profile's env_fault_patterns is not a fault".to_string(),
            ),
            Err(e) => tally.fail(Outcome::BrokeBound, e.to_string()),
        }
        tally.finish("the profile's patterns classify")
    }
}
