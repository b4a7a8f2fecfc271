//! agy has no usage parser, deliberately and permanently (bmad-loop): its
//! transcript `transcript_full.jsonl` carries only `step_index`, `source`,
//! `type`, `status`, `created_at`, `content` and `thinking`; token counts live
//! only in an undocumented SQLite/protobuf store. The tally accepts the
//! profile's `none` and reports no usage, so a caller that tallies anyway
//! learns "untracked" rather than getting an error.

use drover_kit::usage::{Ledger, RowParser};

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    (name == crate::PARSER).then(|| Box::new(Untracked) as Box<dyn RowParser>)
}

/// Reads nothing: the data has no usage, which is `none`, not zero.
struct Untracked;

impl RowParser for Untracked {
    fn row(&mut self, _line: &[u8], _ledger: &mut Ledger) {}
}

#[cfg(test)]
mod tests {
    use drover_kit::usage::ChunkedTally;

    #[test]
    fn the_transcript_has_no_usage_and_other_parsers_are_unknown() {
        let tally = ChunkedTally::of::<crate::Antigravity>("none");
        tally.begin_file(
            "/h/.gemini/antigravity-cli/brain/c/.system_generated/logs/transcript_full.jsonl",
        );
        tally
            .feed(include_bytes!("../fixtures/transcript_full.jsonl").as_ref())
            .expect("feeds");
        assert_eq!(tally.finish(), None);
        let other = ChunkedTally::of::<crate::Antigravity>("gemini-chat");
        assert!(other.feed(b"{}\n").is_err());
    }
}
