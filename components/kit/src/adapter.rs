//! The SDK: an adapter is a type that implements [`Adapter`] and is exported
//! with [`export!`](crate::export).
//!
//! Every function of the `adapter` world has a default here, so an adapter
//! writes its [`Metadata`] and only the functions its CLI needs. A default
//! answers `unsupported` where the WIT function can return an error, and the
//! natural empty answer where it cannot: no transcript globs, no fault, an
//! `unknown` screen reading by the rule [`NO_SCREEN_RULE`]. An adapter
//! overrides a function by writing the method. Three tables configure the
//! defaults where the kit already has the logic: fault rules, screen rules
//! and a hook-config editor.
//!
//! [`Exports`] turns an `Adapter` into the generated `Guest` traits (one impl
//! per exported interface), which is what keeps interfaces added to the WIT
//! from touching adapters that do not care about them: the new functions get
//! a default on [`Adapter`] and a delegating impl on [`Exports`], and every
//! adapter builds unchanged (docs/wit.md says how, step by step).

use std::marker::PhantomData;

use crate::exports::drover::adapter::cli::{Guest, GuestTally};
use crate::exports::drover::adapter::requests::{self, GuestRequestTally};
use crate::faults::FaultRule;
use crate::screen::ScreenRule;
use crate::usage::{ChunkedTally, RowParser};
use crate::{
    AdapterError, Capability, Command, Description, Fault, HookEdit, HookEvent, HookInstall,
    HookStatus, LaunchRequest, LocationContext, Profile, Screen, ScreenReading, SeatState,
    TranscriptGlob, TurnOutput, TurnResult, UsageParser, UsageReport, WIT_VERSION,
};

/// What `describe` reports, as constants. The WIT version is the kit's.
#[derive(Clone, Copy, Debug)]
pub struct Metadata {
    /// Short adapter name, e.g. `claude`.
    pub name: &'static str,
    /// The adapter's own version: `env!("CARGO_PKG_VERSION")`.
    pub version: &'static str,
    /// The capabilities the adapter implements, no more and no fewer: the
    /// test [`export!`](crate::export) adds to the crate checks both ways.
    pub capabilities: &'static [Capability],
    /// Hook-config dialects `install-hooks` and friends accept.
    pub dialects: &'static [&'static str],
    /// Usage parsers [`Adapter::usage_parser`] knows, with their needles.
    pub usage_parsers: &'static [ParserSpec],
    /// Environment variables `transcript-locations` wants to see.
    pub location_env: &'static [&'static str],
    /// What the adapter cannot tell apart.
    pub limitations: &'static [&'static str],
}

impl Metadata {
    /// Metadata with nothing but a name and a version; fill in the rest with
    /// struct update syntax (`..Metadata::new("mycli", env!("CARGO_PKG_VERSION"))`).
    pub const fn new(name: &'static str, version: &'static str) -> Metadata {
        Metadata {
            name,
            version,
            capabilities: &[],
            dialects: &[],
            usage_parsers: &[],
            location_env: &[],
            limitations: &[],
        }
    }

    pub fn description(&self) -> Description {
        let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        Description {
            name: self.name.to_string(),
            adapter_version: self.version.to_string(),
            wit_version: WIT_VERSION.to_string(),
            capabilities: self.capabilities.to_vec(),
            dialects: strings(self.dialects),
            usage_parsers: self
                .usage_parsers
                .iter()
                .map(|p| UsageParser {
                    name: p.name.to_string(),
                    needles: strings(p.needles),
                })
                .collect(),
            location_env: strings(self.location_env),
            limitations: strings(self.limitations),
        }
    }
}

/// A usage parser's name and prefilter needles (see `usage-parser` in the WIT).
#[derive(Clone, Copy, Debug)]
pub struct ParserSpec {
    pub name: &'static str,
    pub needles: &'static [&'static str],
}

/// The three hook-config functions of one dialect family, for
/// [`Adapter::HOOK_EDITOR`]. [`crate::hookcfg::JSON`] edits the JSON
/// settings dialects; an adapter with its own format builds one from its
/// own functions.
#[derive(Clone, Copy)]
pub struct HookEditor {
    pub install: fn(&str, &HookInstall) -> Result<HookEdit, AdapterError>,
    pub remove: fn(&str, &HookInstall) -> Result<HookEdit, AdapterError>,
    pub detect: fn(&str, &HookInstall) -> Result<HookStatus, AdapterError>,
}

/// Builds the command line of one kind of launch.
pub type CommandBuilder = fn(&Profile, &LaunchRequest) -> Result<Command, AdapterError>;

/// The capabilities of every function of interface `cli` but
/// `acp-command`: what an adapter for a CLI without an ACP mode lists when
/// it implements the rest.
pub const CLI_CAPABILITIES: &[Capability] = &[
    Capability::Prompt,
    Capability::Commands,
    Capability::Headless,
    Capability::HookConfig,
    Capability::HookPayloads,
    Capability::Transcripts,
    Capability::Usage,
    Capability::Faults,
    Capability::Screen,
];

/// [`CLI_CAPABILITIES`] and `acp`: an adapter that implements every
/// function of `cli`.
pub const CLI_AND_ACP_CAPABILITIES: &[Capability] = &[
    Capability::Prompt,
    Capability::Commands,
    Capability::Headless,
    Capability::HookConfig,
    Capability::HookPayloads,
    Capability::Transcripts,
    Capability::Usage,
    Capability::Faults,
    Capability::Screen,
    Capability::Acp,
];

/// The rule id of the default `read-screen` answer: this adapter does not
/// read screens.
pub const NO_SCREEN_RULE: &str = "unsupported/no-screen-reading";

/// The error a default answers with: `adapter` does not implement `export`.
pub fn not_implemented(adapter: &str, export: &str) -> AdapterError {
    AdapterError::Unsupported(format!("adapter '{adapter}' does not implement {export}"))
}

/// One drover adapter. Implement [`Adapter::METADATA`] and the functions your
/// CLI needs; export with `drover_kit::export!(MyAdapter);`.
///
/// The functions are those of the WIT world, with borrowed arguments. They
/// take no `self`: an adapter keeps no state between calls (the engine
/// passes the profile every time), and the kit's usage tallies hold what a
/// tally needs.
pub trait Adapter: 'static {
    /// Name, version, capabilities, dialects, parsers, location variables
    /// and limitations.
    const METADATA: Metadata;

    /// Fault rules for the default [`Adapter::classify_fault`]. With none,
    /// no line is a fault, whatever the profile's patterns say.
    const FAULT_RULES: &'static [FaultRule] = &[];

    /// Screen rules for the default [`Adapter::read_screen`]. With none,
    /// every screen reads `unknown` by the rule [`NO_SCREEN_RULE`].
    const SCREEN_RULES: &'static [ScreenRule] = &[];

    /// The editor the default hook-config functions use; with none they
    /// answer `unsupported`.
    const HOOK_EDITOR: Option<HookEditor> = None;

    fn describe() -> Description {
        Self::METADATA.description()
    }

    fn render_prompt(_profile: &Profile, _prompt: &str) -> Result<String, AdapterError> {
        Err(not_implemented(Self::METADATA.name, "render-prompt"))
    }

    fn interactive_command(
        _profile: &Profile,
        _request: &LaunchRequest,
    ) -> Result<Command, AdapterError> {
        Err(not_implemented(Self::METADATA.name, "interactive-command"))
    }

    fn headless_command(
        _profile: &Profile,
        _request: &LaunchRequest,
    ) -> Result<Command, AdapterError> {
        Err(not_implemented(Self::METADATA.name, "headless-command"))
    }

    fn acp_command(_profile: &Profile, _request: &LaunchRequest) -> Result<Command, AdapterError> {
        Err(not_implemented(Self::METADATA.name, "acp-command"))
    }

    fn parse_turn(_profile: &Profile, _output: &TurnOutput) -> Result<TurnResult, AdapterError> {
        Err(not_implemented(Self::METADATA.name, "parse-turn"))
    }

    fn install_hooks(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
        match Self::HOOK_EDITOR {
            Some(editor) => (editor.install)(existing, request),
            None => Err(not_implemented(Self::METADATA.name, "install-hooks")),
        }
    }

    fn remove_hooks(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
        match Self::HOOK_EDITOR {
            Some(editor) => (editor.remove)(existing, request),
            None => Err(not_implemented(Self::METADATA.name, "remove-hooks")),
        }
    }

    fn detect_hooks(existing: &str, request: &HookInstall) -> Result<HookStatus, AdapterError> {
        match Self::HOOK_EDITOR {
            Some(editor) => (editor.detect)(existing, request),
            None => Err(not_implemented(Self::METADATA.name, "detect-hooks")),
        }
    }

    fn parse_hook(
        _profile: &Profile,
        _native_event: &str,
        _payload: &[u8],
    ) -> Result<HookEvent, AdapterError> {
        Err(not_implemented(Self::METADATA.name, "parse-hook"))
    }

    fn transcript_locations(_profile: &Profile, _context: &LocationContext) -> Vec<TranscriptGlob> {
        Vec::new()
    }

    fn classify_fault(profile: &Profile, lines: &[String]) -> Option<Fault> {
        if Self::FAULT_RULES.is_empty() {
            return None;
        }
        crate::faults::classify_at(
            Self::FAULT_RULES,
            &profile.env_fault_patterns,
            lines,
            &crate::resets::Clock::of(profile, None),
        )
    }

    fn read_screen(_profile: &Profile, screen: &Screen) -> ScreenReading {
        if Self::SCREEN_RULES.is_empty() {
            return ScreenReading {
                state: SeatState::Unknown,
                prompt_kind: None,
                rule: NO_SCREEN_RULE.to_string(),
                evidence: String::new(),
                dialog: None,
            };
        }
        crate::screen::read(Self::SCREEN_RULES, screen)
    }

    /// The row parser behind usage parser `name` (one of
    /// `METADATA.usage_parsers`), fresh for one tally. `None`: a tally of
    /// that parser answers `unsupported`.
    fn usage_parser(_name: &str) -> Option<Box<dyn RowParser>> {
        None
    }
}

/// The generated `Guest` traits, implemented for any [`Adapter`]. Only
/// [`export!`](crate::export) names this type.
#[doc(hidden)]
pub struct Exports<A>(PhantomData<A>);

impl<A: Adapter> Guest for Exports<A> {
    type Tally = Tally<A>;

    fn describe() -> Description {
        A::describe()
    }

    fn render_prompt(profile: Profile, prompt: String) -> Result<String, AdapterError> {
        A::render_prompt(&profile, &prompt)
    }

    fn interactive_command(
        profile: Profile,
        request: LaunchRequest,
    ) -> Result<Command, AdapterError> {
        A::interactive_command(&profile, &request)
    }

    fn headless_command(profile: Profile, request: LaunchRequest) -> Result<Command, AdapterError> {
        A::headless_command(&profile, &request)
    }

    fn acp_command(profile: Profile, request: LaunchRequest) -> Result<Command, AdapterError> {
        A::acp_command(&profile, &request)
    }

    fn parse_turn(profile: Profile, output: TurnOutput) -> Result<TurnResult, AdapterError> {
        A::parse_turn(&profile, &output)
    }

    fn install_hooks(existing: String, request: HookInstall) -> Result<HookEdit, AdapterError> {
        A::install_hooks(&existing, &request)
    }

    fn remove_hooks(existing: String, request: HookInstall) -> Result<HookEdit, AdapterError> {
        A::remove_hooks(&existing, &request)
    }

    fn detect_hooks(existing: String, request: HookInstall) -> Result<HookStatus, AdapterError> {
        A::detect_hooks(&existing, &request)
    }

    fn parse_hook(
        profile: Profile,
        native_event: String,
        payload: Vec<u8>,
    ) -> Result<HookEvent, AdapterError> {
        A::parse_hook(&profile, &native_event, &payload)
    }

    fn transcript_locations(profile: Profile, context: LocationContext) -> Vec<TranscriptGlob> {
        A::transcript_locations(&profile, &context)
    }

    fn classify_fault(profile: Profile, lines: Vec<String>) -> Option<Fault> {
        A::classify_fault(&profile, &lines)
    }

    fn read_screen(profile: Profile, screen: Screen) -> ScreenReading {
        A::read_screen(&profile, &screen)
    }
}

/// The `tally` resource of an [`Adapter`]: a [`ChunkedTally`] over the
/// adapter's parser of the name the engine asks for.
#[doc(hidden)]
pub struct Tally<A> {
    inner: ChunkedTally,
    adapter: PhantomData<fn() -> A>,
}

impl<A: Adapter> GuestTally for Tally<A> {
    fn new(parser: String) -> Self {
        Tally {
            inner: ChunkedTally::of::<A>(&parser),
            adapter: PhantomData,
        }
    }

    fn begin_file(&self, name: String) {
        self.inner.begin_file(&name);
    }

    fn feed(&self, chunk: Vec<u8>) -> Result<(), AdapterError> {
        self.inner.feed(&chunk)
    }

    fn finish(&self) -> Option<UsageReport> {
        self.inner.finish()
    }
}

impl<A: Adapter> requests::Guest for Exports<A> {
    type RequestTally = RequestTally<A>;
}

/// The `request-tally` resource of an [`Adapter`]: a [`ChunkedTally`] that
/// keeps the requests the parser reports. A parser that reports none
/// ([`RowParser::reports_requests`]) answers `unsupported`, and the engine
/// uses `tally` instead.
#[doc(hidden)]
pub struct RequestTally<A> {
    inner: ChunkedTally,
    adapter: PhantomData<fn() -> A>,
}

impl<A: Adapter> RequestTally<A> {
    fn supported(&self) -> Result<(), AdapterError> {
        if self.inner.reports_requests() {
            Ok(())
        } else {
            Err(crate::unsupported(format!(
                "{}: this usage parser reports sums, not requests",
                A::METADATA.name
            )))
        }
    }
}

impl<A: Adapter> GuestRequestTally for RequestTally<A> {
    fn new(parser: String) -> Self {
        RequestTally {
            inner: ChunkedTally::requesting(&parser, A::usage_parser(&parser)),
            adapter: PhantomData,
        }
    }

    fn begin_file(&self, name: String) {
        self.inner.begin_file(&name);
    }

    fn feed(&self, chunk: Vec<u8>) -> Result<Vec<crate::Request>, AdapterError> {
        self.supported()?;
        self.inner.feed(&chunk)?;
        Ok(self.inner.take_requests())
    }

    fn finish(&self) -> Result<crate::RequestTail, AdapterError> {
        self.supported()?;
        self.inner.finish();
        Ok(crate::RequestTail {
            requests: self.inner.take_requests(),
            rejected_rows: self.inner.rejected_rows(),
        })
    }
}

/// Exports an [`Adapter`] as the component's `adapter` world.
///
/// The wasm exports exist only when building for `wasm32`, so the same
/// crate also builds natively for unit tests and benchmarks. Under
/// `cargo test` the macro adds one test to the crate,
/// `describe_lists_exactly_what_the_adapter_implements`: every capability
/// in `METADATA.capabilities` must answer (not `unsupported`, not the empty
/// default) and every other capability must answer the default.
#[macro_export]
macro_rules! export {
    ($adapter:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type DroverKitExports = $crate::Exports<$adapter>;
    $crate::__export_world!(DroverKitExports with_types_in $crate);
        };

        #[cfg(test)]
        #[test]
        fn describe_lists_exactly_what_the_adapter_implements() {
            $crate::claims::assert_honest::<$adapter>();
        }
    };
}
