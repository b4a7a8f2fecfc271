//! Screen reading: recorded panes and a blank screen.

use super::{Ctx, Finding, Outcome, Tally, clean, corpus, spaced};
use drover_types::wit;
use wit::Capability;

impl Ctx<'_> {
    pub(super) fn panes(&self) -> Finding {
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
                    tally.fail(Outcome::BrokeBound, format!("{label}: {e}"));
                    continue;
                }
            };
            if reading.rule.is_empty() || !clean(&reading.evidence) {
                tally.fail(
                    Outcome::BrokeBound,
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
                    Outcome::Disagreed,
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
                    Outcome::Disagreed,
                    format!(
                        "{label}: {} by {} vs {} by {} ({family})",
                        reading.state, reading.rule, ours.state, ours.rule
                    ),
                );
            }
        }
        tally.finish(&self.agree("captured panes read", "as"))
    }

    pub(super) fn blank_screen(&self) -> Finding {
        let mut tally = Tally::new(Capability::Screen, "blank-screen");
        let blank = wit::Screen {
            rows: vec![String::new(); 24],
            title: String::new(),
        };
        match self.subject.adapter.read_screen(self.profile, &blank) {
            Ok(r) if matches!(r.state, wit::SeatState::Blocked | wit::SeatState::Working) => tally
                .fail(
                    Outcome::Disagreed,
                    format!("a blank pane reads as {} by {}", r.state, r.rule),
                ),
            Ok(_) => tally.pass(),
            Err(e) => tally.fail(Outcome::BrokeBound, e.to_string()),
        }
        tally.finish("a blank pane is neither busy nor blocked")
    }
}
