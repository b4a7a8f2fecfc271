//! agy has no usage parser, deliberately and permanently (bmad-loop): its
//! transcript `transcript_full.jsonl` carries only `step_index`, `source`,
//! `type`, `status`, `created_at`, `content` and `thinking`; token counts live
//! only in an undocumented SQLite/protobuf store. The tally accepts the
//! profile's `none` and reports no usage, so a caller that tallies anyway
//! learns "untracked" rather than getting an error.

use drover_kit::usage::{Ledger, ParserSet, RowParser};

pub struct Parsers;

impl ParserSet for Parsers {
    fn make(name: &str) -> Option<Box<dyn RowParser>> {
        (name == crate::PARSER).then(|| Box::new(Untracked) as Box<dyn RowParser>)
    }
}

/// Reads nothing: the data has no usage, which is `none`, not zero.
struct Untracked;

impl RowParser for Untracked {
    fn row(&mut self, _line: &[u8], _ledger: &mut Ledger) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::GuestTally;
    use drover_kit::usage::ChunkedTally;

    #[test]
    fn the_transcript_has_no_usage_and_other_parsers_are_unknown() {
        let tally = ChunkedTally::<Parsers>::new("none".to_string());
        tally.begin_file(
            "/h/.gemini/antigravity-cli/brain/c/.system_generated/logs/transcript_full.jsonl"
                .to_string(),
        );
        tally
            .feed(include_bytes!("../fixtures/transcript_full.jsonl").to_vec())
            .expect("feeds");
        assert_eq!(tally.finish(), None);
        let other = ChunkedTally::<Parsers>::new("gemini-chat".to_string());
        assert!(other.feed(b"{}\n".to_vec()).is_err());
    }
}
