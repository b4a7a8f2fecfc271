//! Every version of `drover:adapter` this engine hosts, side by side
//! (Zed-style): one `bindgen!` module per version, the latest one's types as
//! the engine's own ([`latest`]), and [`Bindings`], which calls whichever
//! version a component was built against and converts its arguments and
//! answers.
//!
//! A component's version is read from the name of the `cli` interface it
//! exports (`drover:adapter/cli@0.1.0`) before it is instantiated, so an
//! unknown version is refused without running any of its code.
//!
//! Adding a function to the latest WIT: add its call to [`Bindings`] with an
//! arm per version, where older versions answer what an adapter that does
//! not implement it would (`unsupported`, or the empty answer). Freezing a
//! new version: docs/wit.md.

pub mod v0_1;
pub mod v0_2;

pub use v0_2 as latest;

use wasmtime::component::{Component, InstancePre, ResourceAny};
use wasmtime::{Engine, Store};

use super::host::HostState;
use latest::drover::adapter::types as wit;
use latest::exports::drover::adapter::requests;
use v0_1::{Downgrade, Upgrade};

/// The newest WIT package version this engine hosts (what `drover adapter
/// wit` prints and new components should target).
pub const WIT_VERSION: &str = env!("DROVER_WIT_VERSION");

/// The interface whose name carries a component's version.
const CLI_INTERFACE: &str = "drover:adapter/cli";

/// A version family of `drover:adapter` this engine hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WitVersion {
    V0_1,
    V0_2,
}

impl WitVersion {
    pub const LATEST: WitVersion = WitVersion::V0_2;
    /// Oldest first.
    pub const HOSTED: [WitVersion; 2] = [WitVersion::V0_1, WitVersion::V0_2];

    /// The family of a semver version (`0.1.x`, `0.2.x`), if hosted.
    pub fn of(version: &str) -> Option<WitVersion> {
        let mut parts = version.trim().split('.');
        let major: u64 = parts.next()?.parse().ok()?;
        let minor: u64 = parts.next()?.parse().ok()?;
        let patch_ok = parts.next().is_none_or(|patch| {
            patch
                .split(['-', '+'])
                .next()
                .is_some_and(|p| p.parse::<u64>().is_ok())
        });
        if !patch_ok || parts.next().is_some() {
            return None;
        }
        match (major, minor) {
            (0, 1) => Some(WitVersion::V0_1),
            (0, 2) => Some(WitVersion::V0_2),
            _ => None,
        }
    }

    pub fn family(self) -> &'static str {
        match self {
            WitVersion::V0_1 => "0.1.x",
            WitVersion::V0_2 => "0.2.x",
        }
    }

    /// "0.1.x and 0.2.x", for errors.
    pub fn hosted_list() -> String {
        let families: Vec<&str> = WitVersion::HOSTED.iter().map(|v| v.family()).collect();
        match families.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

/// What the exports of a component say about its version.
#[derive(Debug, PartialEq, Eq)]
pub enum Exported {
    Hosted(WitVersion),
    /// It exports `cli` at a version this engine does not host.
    Unhosted(String),
    /// It exports no `drover:adapter/cli` at all; the exports it has.
    NoCli(Vec<String>),
}

/// Reads the version from the exported `cli` interface's name.
pub fn exported_version(engine: &Engine, component: &Component) -> Exported {
    let ty = component.component_type();
    let names: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    let Some(cli) = names
        .iter()
        .find(|name| name.split('@').next() == Some(CLI_INTERFACE))
    else {
        return Exported::NoCli(names);
    };
    let version = cli.split_once('@').map_or("", |(_, v)| v);
    match WitVersion::of(version) {
        Some(family) => Exported::Hosted(family),
        None if version.is_empty() => Exported::Unhosted("(no version)".to_string()),
        None => Exported::Unhosted(version.to_string()),
    }
}

/// A component linked against its version's bindings, ready to instantiate.
#[derive(Clone)]
pub enum Pre {
    V0_1(v0_1::AdapterPre<HostState>),
    V0_2(v0_2::AdapterPre<HostState>),
}

impl Pre {
    pub fn new(version: WitVersion, instance_pre: InstancePre<HostState>) -> wasmtime::Result<Pre> {
        Ok(match version {
            WitVersion::V0_1 => Pre::V0_1(v0_1::AdapterPre::new(instance_pre)?),
            WitVersion::V0_2 => Pre::V0_2(v0_2::AdapterPre::new(instance_pre)?),
        })
    }

    pub fn version(&self) -> WitVersion {
        match self {
            Pre::V0_1(_) => WitVersion::V0_1,
            Pre::V0_2(_) => WitVersion::V0_2,
        }
    }

    pub fn instantiate(&self, store: &mut Store<HostState>) -> wasmtime::Result<Bindings> {
        Ok(match self {
            Pre::V0_1(pre) => Bindings::V0_1(pre.instantiate(store)?),
            Pre::V0_2(pre) => Bindings::V0_2(pre.instantiate(store)?),
        })
    }
}

/// An instance of either version. Each method takes the latest types and
/// answers in them.
pub enum Bindings {
    V0_1(v0_1::Adapter),
    V0_2(v0_2::Adapter),
}

/// Calls `cli.$call` on whichever version: the latest directly, 0.1 with
/// each argument downgraded and the answer upgraded.
macro_rules! both {
    ($self:ident, $store:ident, $call:ident($($arg:expr),*)) => {
        match $self {
            Bindings::V0_2(b) => b.drover_adapter_cli().$call($store $(, $arg)*),
            Bindings::V0_1(b) => b
                .drover_adapter_cli()
                .$call($store $(, &$arg.downgrade())*)
                .map(Upgrade::upgrade),
        }
    };
}

type Answer<T> = wasmtime::Result<Result<T, wit::AdapterError>>;

impl Bindings {
    pub fn describe(&self, s: &mut Store<HostState>) -> wasmtime::Result<wit::Description> {
        both!(self, s, call_describe())
    }

    pub fn render_prompt(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        prompt: &str,
    ) -> Answer<String> {
        both!(self, s, call_render_prompt(profile, prompt))
    }

    pub fn interactive_command(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command> {
        both!(self, s, call_interactive_command(profile, request))
    }

    pub fn headless_command(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command> {
        both!(self, s, call_headless_command(profile, request))
    }

    pub fn acp_command(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command> {
        match self {
            Bindings::V0_2(b) => b.drover_adapter_cli().call_acp_command(s, profile, request),
            Bindings::V0_1(_) => Ok(Err(wit::AdapterError::Unsupported(
                "drover:adapter 0.1 has no acp-command".to_string(),
            ))),
        }
    }

    pub fn parse_turn(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        output: &wit::TurnOutput,
    ) -> Answer<wit::TurnResult> {
        both!(self, s, call_parse_turn(profile, output))
    }

    pub fn install_hooks(
        &self,
        s: &mut Store<HostState>,
        existing: &str,
        request: &wit::HookInstall,
    ) -> Answer<wit::HookEdit> {
        both!(self, s, call_install_hooks(existing, request))
    }

    pub fn remove_hooks(
        &self,
        s: &mut Store<HostState>,
        existing: &str,
        request: &wit::HookInstall,
    ) -> Answer<wit::HookEdit> {
        both!(self, s, call_remove_hooks(existing, request))
    }

    pub fn detect_hooks(
        &self,
        s: &mut Store<HostState>,
        existing: &str,
        request: &wit::HookInstall,
    ) -> Answer<wit::HookStatus> {
        both!(self, s, call_detect_hooks(existing, request))
    }

    pub fn parse_hook(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        native_event: &str,
        payload: &[u8],
    ) -> Answer<wit::HookEvent> {
        both!(self, s, call_parse_hook(profile, native_event, payload))
    }

    pub fn transcript_locations(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        context: &wit::LocationContext,
    ) -> wasmtime::Result<Vec<wit::TranscriptGlob>> {
        both!(self, s, call_transcript_locations(profile, context))
    }

    pub fn classify_fault(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        lines: &[String],
    ) -> wasmtime::Result<Option<wit::Fault>> {
        both!(self, s, call_classify_fault(profile, lines))
    }

    pub fn read_screen(
        &self,
        s: &mut Store<HostState>,
        profile: &wit::Profile,
        screen: &wit::Screen,
    ) -> wasmtime::Result<wit::ScreenReading> {
        both!(self, s, call_read_screen(profile, screen))
    }

    pub fn tally_new(
        &self,
        s: &mut Store<HostState>,
        parser: &str,
    ) -> wasmtime::Result<ResourceAny> {
        match self {
            Bindings::V0_2(b) => b.drover_adapter_cli().tally().call_constructor(s, parser),
            Bindings::V0_1(b) => b.drover_adapter_cli().tally().call_constructor(s, parser),
        }
    }

    pub fn tally_begin_file(
        &self,
        s: &mut Store<HostState>,
        tally: ResourceAny,
        name: &str,
    ) -> wasmtime::Result<()> {
        match self {
            Bindings::V0_2(b) => b
                .drover_adapter_cli()
                .tally()
                .call_begin_file(s, tally, name),
            Bindings::V0_1(b) => b
                .drover_adapter_cli()
                .tally()
                .call_begin_file(s, tally, name),
        }
    }

    pub fn tally_feed(
        &self,
        s: &mut Store<HostState>,
        tally: ResourceAny,
        chunk: &[u8],
    ) -> Answer<()> {
        match self {
            Bindings::V0_2(b) => b.drover_adapter_cli().tally().call_feed(s, tally, chunk),
            Bindings::V0_1(b) => b
                .drover_adapter_cli()
                .tally()
                .call_feed(s, tally, chunk)
                .map(|fed| fed.map_err(Upgrade::upgrade)),
        }
    }

    pub fn tally_finish(
        &self,
        s: &mut Store<HostState>,
        tally: ResourceAny,
    ) -> wasmtime::Result<Option<wit::UsageReport>> {
        match self {
            Bindings::V0_2(b) => b.drover_adapter_cli().tally().call_finish(s, tally),
            Bindings::V0_1(b) => b
                .drover_adapter_cli()
                .tally()
                .call_finish(s, tally)
                .map(Upgrade::upgrade),
        }
    }

    /// A `request-tally`; `None` for a 0.1 component, which has none (its
    /// usage comes from `tally`).
    pub fn request_tally_new(
        &self,
        s: &mut Store<HostState>,
        parser: &str,
    ) -> wasmtime::Result<Option<ResourceAny>> {
        match self {
            Bindings::V0_2(b) => b
                .drover_adapter_requests()
                .request_tally()
                .call_constructor(s, parser)
                .map(Some),
            Bindings::V0_1(_) => Ok(None),
        }
    }

    pub fn request_tally_begin_file(
        &self,
        s: &mut Store<HostState>,
        tally: ResourceAny,
        name: &str,
    ) -> wasmtime::Result<()> {
        match self {
            Bindings::V0_2(b) => b
                .drover_adapter_requests()
                .request_tally()
                .call_begin_file(s, tally, name),
            Bindings::V0_1(_) => Ok(()),
        }
    }

    pub fn request_tally_feed(
        &self,
        s: &mut Store<HostState>,
        tally: ResourceAny,
        chunk: &[u8],
    ) -> Answer<Vec<requests::Request>> {
        match self {
            Bindings::V0_2(b) => b
                .drover_adapter_requests()
                .request_tally()
                .call_feed(s, tally, chunk),
            Bindings::V0_1(_) => Ok(Err(no_requests())),
        }
    }

    pub fn request_tally_finish(
        &self,
        s: &mut Store<HostState>,
        tally: ResourceAny,
    ) -> Answer<requests::RequestTail> {
        match self {
            Bindings::V0_2(b) => b
                .drover_adapter_requests()
                .request_tally()
                .call_finish(s, tally),
            Bindings::V0_1(_) => Ok(Err(no_requests())),
        }
    }
}

fn no_requests() -> wit::AdapterError {
    wit::AdapterError::Unsupported("a drover:adapter@0.1 component reports no requests".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_fall_into_hosted_families() {
        assert_eq!(WitVersion::of("0.1.0"), Some(WitVersion::V0_1));
        assert_eq!(WitVersion::of("0.1.7"), Some(WitVersion::V0_1));
        assert_eq!(WitVersion::of("0.2.0"), Some(WitVersion::V0_2));
        assert_eq!(WitVersion::of("0.2.3-rc1"), Some(WitVersion::V0_2));
        assert_eq!(WitVersion::of("0.3.0"), None);
        assert_eq!(WitVersion::of("1.1.0"), None);
        assert_eq!(WitVersion::of("0.2.x"), None);
        assert_eq!(WitVersion::of("garbage"), None);
        assert_eq!(WitVersion::of(WIT_VERSION), Some(WitVersion::LATEST));
        assert_eq!(WitVersion::hosted_list(), "0.1.x and 0.2.x");
    }
}
