//! Test support for the adapter crates (feature `testing`).
//!
//! Adapters enable the feature from `[dev-dependencies]` only, so nothing
//! here reaches a component build. What lives here is the same for every
//! CLI: pseudo-random input, the layout of the real captures under
//! `tests/fixtures/real/<cli>/`, the recorder's hook log, tally feeding.
//! What a CLI is expected to print or count stays in its crate.

use std::iter::StepBy;
use std::ops::Range;

use serde_json::Value;

pub mod golden;

use crate::faults::FaultRule;
use crate::screen::{ScreenRule, rows_of};
use crate::usage::ChunkedTally;
use crate::{
    Adapter, CanonicalEvent, Conversation, Fault, FaultKind, HookEvent, HookInstall, HookStatus,
    LaunchRequest, LocationContext, Profile, PromptKind, Screen, ScreenReading, SeatState,
    TurnOutcome, TurnOutput, TurnResult, Usage, UsageEntry, UsageReport,
};

/// xorshift64 (Marsaglia's 13/7/17 triple): deterministic and free of
/// dependencies, so a failing input reproduces.
pub struct Xorshift64(u64);

impl Xorshift64 {
    /// A zero state would stay zero, so zero seeds as one.
    pub fn new(seed: u64) -> Xorshift64 {
        Xorshift64(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// xorshift64*: like [`Xorshift64`], with a multiplied output. The state is
/// the seed as given and must not be zero.
pub struct Xorshift64Star(pub u64);

impl Xorshift64Star {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// `len` pseudo-random bytes: the low byte of each [`Xorshift64`] step.
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = Xorshift64::new(seed);
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// Where to cut a `len`-byte fixture to get about `count` truncations: every
/// `len / count + 1` bytes, starting at 0.
pub fn cuts(len: usize, count: usize) -> StepBy<Range<usize>> {
    (0..len).step_by(len / count + 1)
}

/// 300 [`noise`] inputs of up to 700 bytes (seeds `i * 7919 + salt`), then
/// each fixture cut short at 24 places.
pub fn noise_and_prefixes(salt: u64, fixtures: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut inputs: Vec<Vec<u8>> = (0..300u64)
        .map(|i| noise(i * 7919 + salt, (i as usize * 13) % 700))
        .collect();
    for f in fixtures {
        for cut in cuts(f.len(), 24) {
            inputs.push(f[..cut].to_vec());
        }
    }
    inputs
}

/// Up to 300 bytes: one time in three random bytes, otherwise a splice of
/// `tokens` (what the parsers look for, and what breaks them).
pub fn token_splice(rng: &mut Xorshift64Star, tokens: &[&str]) -> Vec<u8> {
    let len = rng.below(300);
    let mut out = Vec::with_capacity(len);
    if rng.below(3) == 0 {
        for _ in 0..len {
            out.push(rng.next_u64() as u8);
        }
    } else {
        while out.len() < len {
            out.extend_from_slice(tokens[rng.below(tokens.len())].as_bytes());
        }
    }
    out
}

/// Tokens that break any JSON reader: punctuation, null, a negative, an
/// overflowing float and an overflowing integer.
const JSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\n",
    "null",
    "-1",
    "1e999",
    "18446744073709551616",
];

/// Tokens that break any text reader: an escape sequence, NUL, a
/// two-byte character.
const TEXT_TOKENS: &[&str] = &["\u{1b}[31m", "\u{0}", "é"];

/// Feeds `exercise` 300 [`token_splice`] inputs from `seed`, spliced from
/// JSON's tokens, the CLI's `tokens` (what its parsers look for) and a few
/// that break text; then each of `fixtures` cut short at about 40 places.
/// The test passes if nothing panicked.
pub fn survive_hostile_input(
    seed: u64,
    tokens: &[&str],
    fixtures: &[&[u8]],
    exercise: impl Fn(&[u8]),
) {
    let tokens = [JSON_TOKENS, tokens, TEXT_TOKENS].concat();
    let mut rng = Xorshift64Star(seed);
    for _ in 0..300 {
        exercise(&token_splice(&mut rng, &tokens));
    }
    for fixture in fixtures {
        for cut in cuts(fixture.len(), 40) {
            exercise(&fixture[..cut]);
        }
    }
}

/// Runs `bytes` through what `A` reads from outside: parse-hook under each
/// of `natives`, each usage parser of `parsers` over a file named `file`
/// (fed in 7-byte chunks), read-screen (the text also as the title),
/// parse-turn (the text as stdout and stderr, exit code `exit`) and
/// classify-fault. Results are dropped: only a panic fails.
pub fn exercise_reads<A: Adapter>(
    profile: &Profile,
    natives: &[&str],
    parsers: &[&str],
    file: &str,
    exit: i32,
    bytes: &[u8],
) {
    for native in natives {
        let _ = A::parse_hook(profile, native, bytes);
    }
    for parser in parsers {
        let tally = ChunkedTally::of::<A>(parser);
        tally.begin_file(file);
        for chunk in bytes.chunks(7) {
            let _ = tally.feed(chunk);
        }
        let _ = tally.finish();
    }
    let text = String::from_utf8_lossy(bytes);
    let screen = Screen {
        rows: rows_of(&text),
        title: text.to_string(),
    };
    let _ = A::read_screen(profile, &screen);
    let _ = A::parse_turn(profile, &turn_output(&text, &text, Some(exit)));
    let _ = A::classify_fault(profile, &rows_of(&text));
}

/// A fixture of `tests/fixtures/real/<cli>/`, embedded at compile time.
#[doc(hidden)]
#[macro_export]
macro_rules! __real_fixture {
    ($cli:literal, $file:expr) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real/",
            $cli,
            "/",
            $file
        ))
    };
}
pub use __real_fixture as real_fixture;

/// The captured headless run `<case>` of `tests/fixtures/real/<cli>/` as a
/// [`Run`]: `<case>.stdout.<ext>`, `.stderr.txt`, `.exit`, `.hooks.jsonl`.
#[doc(hidden)]
#[macro_export]
macro_rules! __captured_run {
    ($cli:literal, $case:literal, $ext:literal) => {
        $crate::testing::Run {
            stdout: $crate::testing::real_fixture!($cli, concat!($case, ".stdout.", $ext)),
            stderr: $crate::testing::real_fixture!($cli, concat!($case, ".stderr.txt")),
            exit: $crate::testing::real_fixture!($cli, concat!($case, ".exit")),
            hooks: $crate::testing::real_fixture!($cli, concat!($case, ".hooks.jsonl")),
        }
    };
}
pub use __captured_run as captured_run;

/// Declares `real!(file)` ([`real_fixture!`]) and `run!(case, ext)`
/// ([`captured_run!`]) over the captures of `<cli>`, for the module that
/// invokes it and the code below the invocation.
#[doc(hidden)]
#[macro_export]
macro_rules! __real_captures {
    ($cli:literal) => {
        macro_rules! real {
            ($file:expr) => {
                $crate::testing::real_fixture!($cli, $file)
            };
        }
        macro_rules! run {
            ($case:literal, $ext:literal) => {
                $crate::testing::captured_run!($cli, $case, $ext)
            };
        }
    };
}
pub use __real_captures as real_captures;

/// Every hook log captured for `cli` (its `tests/fixtures/real/<cli>/`
/// files named `*.hooks.jsonl`), in file-name order: read from the tree,
/// so a capture added later is checked without being listed.
pub fn captured_hook_logs(cli: &str) -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/real")
        .join(cli);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".hooks.jsonl"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

/// Declares the screen fixtures of a crate's tests: a `const NAME: &str`
/// for each `NAME = "file"`, the text of the crate's
/// `fixtures/screen-<file>.txt`. Given `rules;` first, it also declares
/// `fn state(text)`: [`state`] over those rules.
#[doc(hidden)]
#[macro_export]
macro_rules! __screen_fixtures {
    ($rules:expr; $($name:ident = $file:literal),* $(,)?) => {
        fn state(text: &str) -> ($crate::SeatState, Option<$crate::PromptKind>, String) {
            $crate::testing::state($rules, text)
        }
        $crate::testing::screen_fixtures!($($name = $file),*);
    };
    ($($name:ident = $file:literal),* $(,)?) => {
        $(
            const $name: &str = include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/fixtures/screen-",
                $file,
                ".txt"
            ));
        )*
    };
}
pub use __screen_fixtures as screen_fixtures;

/// One captured headless run: its stdout, stderr, exit code and hook log.
pub struct Run {
    pub stdout: &'static str,
    pub stderr: &'static str,
    pub exit: &'static str,
    pub hooks: &'static str,
}

impl Run {
    /// The exit code as drover sees it: `timeout` exits 124 where drover's
    /// own deadline kills the process, which drover reports as no code.
    pub fn exit_code(&self) -> Option<i32> {
        match self.exit.trim().parse().ok() {
            Some(124) => None,
            code => code,
        }
    }

    /// What parse-turn gets for this run.
    pub fn output(&self, prior_usage: Option<Usage>) -> TurnOutput {
        TurnOutput {
            stdout: self.stdout.to_string(),
            stderr: self.stderr.to_string(),
            exit_code: self.exit_code(),
            prior_usage,
        }
    }

    /// `A`'s parse-turn over this run; it must parse.
    pub fn parse_with<A: Adapter>(&self, profile: &Profile, prior: Option<Usage>) -> TurnResult {
        A::parse_turn(profile, &self.output(prior)).expect("parses")
    }

    /// stdout's lines, then stderr's.
    pub fn lines(&self) -> Vec<String> {
        self.stdout
            .lines()
            .chain(self.stderr.lines())
            .map(str::to_string)
            .collect()
    }
}

/// Setters for the parts of a test profile that differ per CLI, chained on
/// [`Profile::new`] (what a built-in profile leaves unsaid). The argument
/// lists are written as one string of whitespace-separated words.
pub trait ProfileParts {
    fn template(self, template: &str) -> Self;
    fn launch(self, args: &str) -> Self;
    fn bypass(self, args: &str) -> Self;
    fn turn(self, args: &str) -> Self;
    /// `[hooks.events]` as words `native=Canonical`; a word without `=`
    /// maps a native event to the canonical one of the same name.
    fn hooks(self, map: &str) -> Self;
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

impl ProfileParts for Profile {
    fn template(mut self, template: &str) -> Self {
        self.prompt_template = template.to_string();
        self
    }

    fn launch(mut self, args: &str) -> Self {
        self.launch_args = words(args);
        self
    }

    fn bypass(mut self, args: &str) -> Self {
        self.bypass_args = words(args);
        self
    }

    fn turn(mut self, args: &str) -> Self {
        self.turn_args = words(args);
        self
    }

    fn hooks(mut self, map: &str) -> Self {
        self.hook_events = map
            .split_whitespace()
            .map(|word| {
                let (native, canonical) = word.split_once('=').unwrap_or((word, word));
                (native.to_string(), canonical.to_string())
            })
            .collect();
        self
    }
}

/// The (kind, rule id) `rules` classify one line as, without profile
/// patterns.
pub fn fault_of(rules: &[FaultRule], line: &str) -> Option<(FaultKind, String)> {
    crate::faults::classify(rules, &[], &[line.to_string()]).map(|f| (f.kind, f.rule))
}

/// Asserts that `rules` classify each line as the kind beside it. A
/// failure names the line and is reported at the caller's line.
#[track_caller]
pub fn assert_fault_kinds(rules: &[FaultRule], cases: &[(&str, FaultKind)]) {
    for (line, kind) in cases {
        assert_eq!(fault_of(rules, line).map(|(k, _)| k), Some(*kind), "{line}");
    }
}

/// Asserts that `rules` classify none of `lines` (prose that only quotes
/// an error). A failure names the line.
#[track_caller]
pub fn assert_no_faults(rules: &[FaultRule], lines: &[&str]) {
    for line in lines {
        assert_eq!(fault_of(rules, line), None, "{line}");
    }
}

/// Asserts that every one of `rules` has a sample among `samples` (a
/// line, the rule id it must classify by) and that `rule_of` (the crate's
/// classifier, as the id of the rule that fired) classifies each sample by
/// its rule: a rule whose regex fails to compile is skipped silently.
#[track_caller]
pub fn assert_every_fault_rule_fires(
    rules: &[FaultRule],
    samples: &[(impl AsRef<str>, &str)],
    rule_of: impl Fn(&str) -> Option<String>,
) {
    for rule in rules {
        let sampled = samples.iter().any(|(_, id)| *id == rule.id);
        assert!(sampled, "no sample for {}", rule.id);
    }
    for (line, id) in samples {
        let line = line.as_ref();
        assert_eq!(rule_of(line).as_deref(), Some(*id), "{line}");
    }
}

/// The output of a headless turn with no usage from before it.
pub fn turn_output(stdout: &str, stderr: &str, exit_code: Option<i32>) -> TurnOutput {
    TurnOutput {
        stdout: stdout.to_string(),
        stderr: stderr.to_string(),
        exit_code,
        prior_usage: None,
    }
}

/// A `transcript-locations` context with home `/home/u`, working directory
/// `cwd` and the environment `env`.
pub fn location_context(cwd: &str, env: &[(&str, &str)]) -> LocationContext {
    LocationContext {
        home: "/home/u".to_string(),
        cwd: cwd.to_string(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// Asserts that `build` refuses to launch prompt `hi` in each of
/// `conversations` (ids the CLI would misread or refuse). A failure names
/// the conversation and is reported at the caller's line.
#[track_caller]
pub fn assert_refused(
    build: crate::CommandBuilder,
    profile: &Profile,
    conversations: &[Conversation],
) {
    for conversation in conversations {
        let result = build(profile, &request("hi", conversation.clone()));
        assert!(result.is_err(), "{conversation:?}: {result:?}");
    }
}

/// A launch request for `prompt` in `conversation`, without model or extra args.
pub fn request(prompt: &str, conversation: Conversation) -> LaunchRequest {
    LaunchRequest {
        prompt: prompt.to_string(),
        model: String::new(),
        extra_args: None,
        conversation,
    }
}

/// A pane capture as a [`Screen`] without a title.
pub fn screen(text: &str) -> Screen {
    Screen {
        rows: rows_of(text),
        title: String::new(),
    }
}

/// What `rules` read on a pane capture: (state, prompt kind, rule id).
pub fn state(rules: &[ScreenRule], text: &str) -> (SeatState, Option<PromptKind>, String) {
    let r = crate::screen::read(rules, &screen(text));
    (r.state, r.prompt_kind, r.rule)
}

/// A component's capture `fixtures/first-run/<name>.txt` (a real CLI's
/// screen on a fresh config home); `manifest_dir` is the component's
/// `CARGO_MANIFEST_DIR`.
pub fn first_run_fixture(manifest_dir: &str, name: &str) -> String {
    let path = format!("{manifest_dir}/fixtures/first-run/{name}.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One dialog a pane capture must read as: the rule, the prompt kind, how
/// the question begins, and each option's label, kind and keys (joined
/// with spaces), in order.
pub struct DialogCase<'a> {
    pub fixture: &'a str,
    pub rule: &'a str,
    pub kind: PromptKind,
    pub text: &'a str,
    pub choices: &'a [(&'a str, crate::ChoiceKind, &'a str)],
}

/// Asserts that `rules` read each capture as blocked on its dialog, with
/// the question text and options given. A failure names the fixture.
#[track_caller]
pub fn assert_dialogs(
    rules: &[ScreenRule],
    cases: &[DialogCase<'_>],
    text_of: impl Fn(&str) -> String,
) {
    for case in cases {
        let r = crate::screen::read(rules, &screen(&text_of(case.fixture)));
        assert_eq!(
            (r.state, r.prompt_kind, r.rule.as_str()),
            (SeatState::Blocked, Some(case.kind), case.rule),
            "{}: {r:?}",
            case.fixture
        );
        let dialog = r
            .dialog
            .unwrap_or_else(|| panic!("{}: blocked without a dialog", case.fixture));
        // A question wraps at narrow widths: its first words decide.
        assert!(
            dialog.text.starts_with(case.text),
            "{}: the question reads {:?}",
            case.fixture,
            dialog.text
        );
        let got: Vec<(String, crate::ChoiceKind, String)> = dialog
            .choices
            .iter()
            .map(|c| (c.label.clone(), c.kind, c.keys.join(" ")))
            .collect();
        let want: Vec<(String, crate::ChoiceKind, String)> = case
            .choices
            .iter()
            .map(|(l, k, keys)| (l.to_string(), *k, keys.to_string()))
            .collect();
        assert_eq!(got, want, "{}", case.fixture);
    }
}

/// Asserts that every one of `rules` has a sample among `samples` (pane
/// text, the rule id it must read by) and that each sample reads by its
/// rule: a rule whose regex fails to compile is skipped silently when
/// screens are read, so only this notices it.
#[track_caller]
pub fn assert_every_rule_fires(rules: &[ScreenRule], samples: &[(&str, &str)]) {
    for rule in rules {
        let sampled = samples.iter().any(|(_, id)| *id == rule.id);
        assert!(sampled, "no sample for {}", rule.id);
    }
    for (text, id) in samples {
        assert_eq!(state(rules, text).2, *id, "{text:?}");
    }
}

/// Asserts that `state` (a crate's [`state`] over its rules) reads each
/// pane as (state, prompt kind, rule id). A failure is reported at the
/// caller's line.
#[track_caller]
pub fn assert_rule_states(
    state: impl Fn(&str) -> (SeatState, Option<PromptKind>, String),
    cases: &[(&str, SeatState, Option<PromptKind>, &str)],
) {
    for (n, (pane, seat, kind, rule)) in cases.iter().enumerate() {
        assert_eq!(state(pane), (*seat, *kind, rule.to_string()), "case {n}");
    }
}

/// Asserts that `read` reads each (pane, state, prompt kind) case as given.
/// A failure is reported at the caller's line.
#[track_caller]
pub fn assert_readings(
    read: impl Fn(Screen) -> ScreenReading,
    cases: &[(&str, SeatState, Option<PromptKind>)],
) {
    for (n, (pane, state, kind)) in cases.iter().enumerate() {
        let reading = read(screen(pane));
        assert_eq!(
            (reading.state, reading.prompt_kind),
            (*state, *kind),
            "case {n}: {reading:?}"
        );
    }
}

/// How a fault's evidence line is compared with the expected sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Character for character.
    Exact,
    /// Word for word: for TUIs that pad or wrap the line they draw.
    IgnoringSpacing,
}

/// Asserts that `classify` finds in each pane capture the fault given (its
/// kind and evidence line), or none. A failure is reported at the caller's
/// line.
#[track_caller]
pub fn assert_pane_faults(
    classify: impl Fn(Vec<String>) -> Option<Fault>,
    cases: &[(&str, Option<(FaultKind, &str)>)],
    evidence: Evidence,
) {
    let shown = |text: &str| match evidence {
        Evidence::Exact => text.to_string(),
        Evidence::IgnoringSpacing => text.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    for (n, (pane, expected)) in cases.iter().enumerate() {
        let fault = classify(rows_of(pane));
        assert_eq!(
            fault.as_ref().map(|f| (f.kind, shown(&f.evidence))),
            expected.map(|(kind, text)| (kind, shown(text))),
            "case {n}"
        );
    }
}

/// Every line of a hook recorder log: (event, payload).
pub fn hook_lines(log: &str) -> Vec<(String, Value)> {
    log.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("recorder line");
            (
                v["event"].as_str().expect("event").to_string(),
                v["payload"].clone(),
            )
        })
        .collect()
}

/// Asserts that a turn failed with the CLI's `sentence` as its error, no
/// reply, and `conversation` as its conversation id. A failure is reported
/// at the caller's line.
#[track_caller]
pub fn assert_failed(r: &TurnResult, conversation: Option<&str>, sentence: &str) {
    assert_eq!(r.outcome, TurnOutcome::Failed, "{sentence}");
    assert_eq!(r.reply, None, "{sentence}");
    assert_eq!(r.conversation_id.as_deref(), conversation, "{sentence}");
    assert_eq!(r.error.as_deref(), Some(sentence));
}

/// Asserts that a turn succeeded with `reply` in `conversation`. A failure
/// is reported at the caller's line.
#[track_caller]
pub fn assert_replied(r: &TurnResult, reply: &str, conversation: &str) {
    assert_eq!(r.outcome, TurnOutcome::Success, "{reply}");
    assert_eq!(r.reply.as_deref(), Some(reply));
    assert_eq!(r.conversation_id.as_deref(), Some(conversation), "{reply}");
}

/// `A`'s parse-hook over a payload as the recorder logged it; it must parse.
pub fn parse_payload<A: Adapter>(profile: &Profile, native: &str, payload: &Value) -> HookEvent {
    let bytes = serde_json::to_vec(payload).expect("serializes");
    A::parse_hook(profile, native, &bytes).expect("parses")
}

/// Every hook of a recorder log named `native`, parsed by `A`.
pub fn parsed_hooks<A: Adapter>(profile: &Profile, log: &str, native: &str) -> Vec<HookEvent> {
    hook_lines(log)
        .into_iter()
        .filter(|(event, _)| event == native)
        .map(|(event, payload)| parse_payload::<A>(profile, &event, &payload))
        .collect()
}

/// The native event names of a recorder log, in order.
pub fn hook_names(log: &str) -> Vec<String> {
    hook_lines(log)
        .into_iter()
        .map(|(event, _)| event)
        .collect()
}

/// Parses every payload of `logs` with `A` and asserts what each must
/// carry: the kind `kind` expects for its native name, the payload's own
/// `session_id` (there must be one) and `transcript_path`, the working
/// directory `cwd`, and no subagent flag. `each` then checks what is
/// particular to the event; it gets the native name, the event and a
/// lookup of the payload's string fields. Returns how many payloads there
/// were, for the test to compare with the count it expects.
#[track_caller]
pub fn assert_captured_hooks<A: Adapter>(
    profile: &Profile,
    logs: &[impl AsRef<str>],
    cwd: &str,
    kind: impl Fn(&str) -> CanonicalEvent,
    each: impl Fn(&str, &HookEvent, &dyn Fn(&str) -> Option<String>),
) -> usize {
    let mut seen = 0;
    for log in logs {
        for (native, payload) in hook_lines(log.as_ref()) {
            let e = parse_payload::<A>(profile, &native, &payload);
            let field = |k: &str| payload[k].as_str().map(str::to_string);
            assert_eq!(e.kind, kind(&native), "{native}");
            assert_eq!(e.session_id, field("session_id"), "{native}");
            assert!(e.session_id.is_some(), "{native}");
            assert_eq!(e.transcript_path, field("transcript_path"), "{native}");
            assert_eq!(e.cwd.as_deref(), Some(cwd), "{native}");
            assert!(!e.subagent, "{native}");
            each(&native, &e, &field);
            seen += 1;
        }
    }
    seen
}

/// What a parsed Stop of the main agent must carry: its conversation,
/// transcript and working directory, the reply and the reason where the
/// CLI gives them, and the payload keys it was read from, in order.
pub struct StopCarries<'a> {
    pub session: &'a str,
    pub transcript: &'a str,
    pub cwd: &'a str,
    pub reply: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub fields: &'a [&'a str],
}

/// Asserts that `e` is a Stop of the main agent carrying `expected`. A
/// failure is reported at the caller's line.
#[track_caller]
pub fn assert_stop_carries(e: &HookEvent, expected: StopCarries) {
    assert_eq!(e.kind, CanonicalEvent::Stop);
    assert!(!e.subagent);
    assert_eq!(e.session_id.as_deref(), Some(expected.session));
    assert_eq!(e.transcript_path.as_deref(), Some(expected.transcript));
    assert_eq!(e.cwd.as_deref(), Some(expected.cwd));
    assert_eq!(e.last_message.as_deref(), expected.reply);
    assert_eq!(e.reason.as_deref(), expected.reason);
    assert_eq!(e.fields_found, expected.fields);
}

/// The hook-install request the engine sends: drover's relay for `cli`,
/// its marker, and `events` each under its own name.
pub fn hook_request(dialect: &str, cli: &str, events: &[&str]) -> HookInstall {
    let events = events
        .iter()
        .map(|e| (e.to_string(), e.to_string()))
        .collect();
    hook_request_for(dialect, cli, events)
}

/// [`hook_request`] for (canonical, native) event pairs, such as a
/// profile's `hook_events`.
pub fn hook_request_for(dialect: &str, cli: &str, events: Vec<(String, String)>) -> HookInstall {
    HookInstall {
        dialect: dialect.to_string(),
        relay_command: format!("/usr/local/bin/drover hook --cli {cli}"),
        events,
        marker: "drover hook --cli".to_string(),
    }
}

/// What installing hooks into a real JSON config gave.
pub struct HooksRoundTrip {
    /// detect-hooks on the config as it was.
    pub before: HookStatus,
    /// The config with drover's hooks in, as written and as JSON.
    pub text: String,
    pub installed: Value,
    /// detect-hooks on that.
    pub after: HookStatus,
}

/// Installs `request` into the JSON config `text` with `A`, and asserts
/// that the install changed it and that removing the hooks again gives
/// back the same JSON. The test checks what the install wrote.
#[track_caller]
pub fn assert_hooks_round_trip<A: Adapter>(text: &str, request: &HookInstall) -> HooksRoundTrip {
    let before = A::detect_hooks(text, request).expect("detects");
    let installed = A::install_hooks(text, request).expect("installs");
    assert!(installed.changed);
    let after = A::detect_hooks(&installed.text, request).expect("detects");
    let removed = A::remove_hooks(&installed.text, request).expect("removes");
    let original: Value = serde_json::from_str(text).expect("JSON");
    let restored: Value = serde_json::from_str(&removed.text).expect("JSON");
    assert_eq!(restored, original);
    HooksRoundTrip {
        before,
        installed: serde_json::from_str(&installed.text).expect("JSON"),
        text: installed.text,
        after,
    }
}

/// `n` calls that each carried `input` uncached input tokens, `cache_read`
/// cached ones, `output` output tokens and `reasoning` of those reasoning.
pub fn calls(input: u64, cache_read: u64, output: u64, reasoning: u64, n: u64) -> Usage {
    Usage {
        input: input * n,
        output: output * n,
        cache_read: cache_read * n,
        cache_write: 0,
        reasoning: reasoning * n,
        requests: n,
    }
}

/// The one entry of a report with no rejected rows: (session, day, model,
/// usage).
#[track_caller]
pub fn only_entry(report: &UsageReport) -> (&str, &str, &str, Usage) {
    assert_eq!(report.rejected_rows, 0);
    assert_eq!(report.entries.len(), 1);
    let UsageEntry {
        session,
        day,
        model,
        usage,
    } = &report.entries[0];
    (session, day, model, *usage)
}

/// Tallies `files` (name, text) with `A`'s `parser`, fed in `chunk`-byte
/// pieces so rows straddle chunk boundaries.
pub fn tally<A: Adapter>(
    parser: &str,
    files: &[(&str, &str)],
    chunk: usize,
) -> Option<UsageReport> {
    let t = ChunkedTally::of::<A>(parser);
    for (name, text) in files {
        t.begin_file(name);
        for piece in text.as_bytes().chunks(chunk) {
            t.feed(piece).expect("feeds");
        }
    }
    t.finish()
}

/// The report's sum; the report must be there.
pub fn total(report: Option<UsageReport>) -> Usage {
    report.expect("usage reported").total()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The adapters' robustness inputs hang on these streams; a change here
    /// would quietly swap every input they were written and passed with.
    #[test]
    fn the_generators_stay_the_ones_the_tests_were_written_with() {
        assert_eq!(noise(1, 6), [65, 65, 41, 37, 101, 1]);
        assert_eq!(noise(0, 6), noise(1, 6));
        let mut rng = Xorshift64Star(0x9e37_79b9_7f4a_7c15);
        assert_eq!(
            [rng.next_u64(), rng.next_u64()],
            [0x0d83_b3e2_9a21_487a, 0x54c4_4c79_f1fe_9d67]
        );
        assert_eq!(cuts(10, 4).collect::<Vec<_>>(), [0, 3, 6, 9]);
        assert_eq!(cuts(3, 24).collect::<Vec<_>>(), [0, 1, 2]);
    }
}
