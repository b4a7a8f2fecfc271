//! The checks of each capability. Each check runs its inputs through the
//! component (and, where a built-in of the same family exists, through that
//! built-in under the same profile) and folds the answers into one finding.

use super::corpus;
use super::{Answer, Finding, Outcome, Reference, Subject, Tally};
use crate::sandbox::{Adapter, Limits, SandboxError};
use drover_types::wit;

use wit::Capability;

mod faults;
mod hooks;
mod launch;
mod screen;
mod usage;

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
        Answer::Ok(value) => drover_types::text::truncate_chars(&format!("{:?}", view(value)), 160),
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
) -> Option<(Outcome, String)> {
    let climbs = glob.pattern.split('/').any(|part| part == "..");
    let absolute = glob.pattern.starts_with('/');
    if glob.pattern.is_empty() || glob.pattern.len() > 4096 || !clean(&glob.pattern) {
        return Some((
            Outcome::BrokeBound,
            format!(
                "unusable pattern {:?}",
                drover_types::text::truncate_chars(&glob.pattern, 80)
            ),
        ));
    }
    if climbs || absolute != (glob.base == wit::GlobBase::Absolute) {
        return Some((
            Outcome::BrokeBound,
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
            Outcome::Disagreed,
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
) -> Result<Option<wit::UsageReport>, (Outcome, String)> {
    let broke = |e: SandboxError| (Outcome::BrokeBound, e.to_string());
    let mut tally = adapter.tally(parser, limits).map_err(broke)?;
    for (name, bytes) in files {
        tally.begin_file(name).map_err(broke)?;
        for chunk in bytes.chunks(64 << 10) {
            if let Err(e) = tally.feed(chunk).map_err(broke)? {
                return Err((Outcome::Declined, format!("{e:?}")));
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
mod tests;
