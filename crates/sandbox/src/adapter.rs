//! The calls into a loaded adapter: each in its (fresh after a trap) store,
//! under the adapter's deadline and memory cap, its answer bounded.

use std::sync::{Mutex, MutexGuard};

use wasmtime::Store;

use super::bounds::Bounded;
use super::host::HostState;
use super::plain::{Cross, arg};
use super::versions::Bindings;
use super::versions::latest::drover::adapter::types as bind;
use super::{
    Adapter, Limits, Live, RequestTally, Resident, STDERR_CAPACITY, STDERR_IN_ERRORS, SandboxError,
    Tally, WitVersion, classify, deadline_ticks, root_cause,
};
use drover_types::wit;

impl Adapter {
    /// Whether this is a component compiled into drover (trusted to write
    /// hook configs as it likes; others' edits are checked).
    pub fn is_builtin(&self) -> bool {
        self.builtin
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Another handle on the same compiled component with a store of its
    /// own, for a second caller (the event reader beside a session driver).
    pub fn twin(&self) -> Adapter {
        Adapter {
            name: self.name.clone(),
            engine: self.engine.clone(),
            pre: self.pre.clone(),
            limits: self.limits,
            live: Mutex::new(None),
            builtin: self.builtin,
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The version of `drover:adapter` the component was built against.
    pub fn wit_version(&self) -> WitVersion {
        self.pre.version()
    }

    fn instantiate(&self, limits: Limits) -> Result<Live, SandboxError> {
        let mut store = Store::new(&self.engine, HostState::new(limits));
        store.limiter(|state| &mut state.limiter);
        store.set_epoch_deadline(deadline_ticks(limits.call_timeout));
        match self.pre.instantiate(&mut store) {
            Ok(bindings) => Ok(Live { store, bindings }),
            Err(e) => Err(SandboxError::Instantiate {
                component: self.name.clone(),
                reason: root_cause(&e),
                stderr: store.data().stderr_tail(STDERR_IN_ERRORS),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Live>> {
        // A poisoned lock only means another thread panicked mid-call; the
        // store is replaced below when in doubt, so carry on.
        self.live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A call whose answer is bounded before anyone sees it.
    fn bounded<R: Bounded>(
        &self,
        export: &str,
        f: impl FnOnce(&Bindings, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, SandboxError> {
        let mut answer = self.call(export, f)?;
        answer.bound();
        Ok(answer)
    }

    fn call<R>(
        &self,
        export: &str,
        f: impl FnOnce(&Bindings, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, SandboxError> {
        let mut guard = self.lock();
        let stale = guard
            .as_ref()
            .is_some_and(|live| live.store.data().stderr_len() > STDERR_CAPACITY / 2);
        if guard.is_none() || stale {
            *guard = Some(self.instantiate(self.limits)?);
        }
        let Some(live) = guard.as_mut() else {
            return Err(SandboxError::Engine("store vanished".to_string()));
        };
        live.store
            .set_epoch_deadline(deadline_ticks(self.limits.call_timeout));
        match f(&live.bindings, &mut live.store) {
            Ok(value) => Ok(value),
            Err(error) => {
                let classified =
                    classify(&self.name, export, self.limits, &error, live.store.data());
                // A store is unusable after a trap: drop it.
                *guard = None;
                Err(classified)
            }
        }
    }

    pub fn describe(&self) -> Result<wit::Description, SandboxError> {
        self.bounded("describe", |b, s| b.describe(s))
            .map(Cross::cross)
    }

    pub fn render_prompt(
        &self,
        profile: &wit::Profile,
        prompt: &str,
    ) -> Result<Result<String, wit::AdapterError>, SandboxError> {
        let profile: bind::Profile = arg(profile);
        let mut answer = self.call("render-prompt", |b, s| b.render_prompt(s, &profile, prompt))?;
        match &mut answer {
            Ok(text) => {
                super::bounds::check_act(&self.name, "render-prompt", "a prompt", [text.len()], 1)?
            }
            Err(e) => e.bound(),
        }
        Ok(answer.cross())
    }

    pub fn interactive_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Result<Result<wit::Command, wit::AdapterError>, SandboxError> {
        let (profile, request): (bind::Profile, bind::LaunchRequest) = (arg(profile), arg(request));
        let mut answer = self.call("interactive-command", |b, s| {
            b.interactive_command(s, &profile, &request)
        })?;
        match &mut answer {
            Ok(command) => {
                super::bounds::check_command(&self.name, "interactive-command", command)?
            }
            Err(e) => e.bound(),
        }
        Ok(answer.cross())
    }

    pub fn headless_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Result<Result<wit::Command, wit::AdapterError>, SandboxError> {
        let (profile, request): (bind::Profile, bind::LaunchRequest) = (arg(profile), arg(request));
        let mut answer = self.call("headless-command", |b, s| {
            b.headless_command(s, &profile, &request)
        })?;
        match &mut answer {
            Ok(command) => super::bounds::check_command(&self.name, "headless-command", command)?,
            Err(e) => e.bound(),
        }
        Ok(answer.cross())
    }

    pub fn acp_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Result<Result<wit::Command, wit::AdapterError>, SandboxError> {
        let (profile, request): (bind::Profile, bind::LaunchRequest) = (arg(profile), arg(request));
        self.call("acp-command", |b, s| b.acp_command(s, &profile, &request))
            .map(Cross::cross)
    }

    pub fn parse_turn(
        &self,
        profile: &wit::Profile,
        output: &wit::TurnOutput,
    ) -> Result<Result<wit::TurnResult, wit::AdapterError>, SandboxError> {
        let (profile, output): (bind::Profile, bind::TurnOutput) = (arg(profile), arg(output));
        self.bounded("parse-turn", |b, s| b.parse_turn(s, &profile, &output))
            .map(Cross::cross)
    }

    pub fn install_hooks(
        &self,
        existing: &str,
        request: &wit::HookInstall,
    ) -> Result<Result<wit::HookEdit, wit::AdapterError>, SandboxError> {
        let request: bind::HookInstall = arg(request);
        let answer = self.call("install-hooks", |b, s| {
            b.install_hooks(s, existing, &request)
        })?;
        self.bounded_edit("install-hooks", answer)
    }

    pub fn remove_hooks(
        &self,
        existing: &str,
        request: &wit::HookInstall,
    ) -> Result<Result<wit::HookEdit, wit::AdapterError>, SandboxError> {
        let request: bind::HookInstall = arg(request);
        let answer = self.call("remove-hooks", |b, s| b.remove_hooks(s, existing, &request))?;
        self.bounded_edit("remove-hooks", answer)
    }

    pub fn detect_hooks(
        &self,
        existing: &str,
        request: &wit::HookInstall,
    ) -> Result<Result<wit::HookStatus, wit::AdapterError>, SandboxError> {
        let request: bind::HookInstall = arg(request);
        self.bounded("detect-hooks", |b, s| b.detect_hooks(s, existing, &request))
            .map(Cross::cross)
    }

    pub fn parse_hook(
        &self,
        profile: &wit::Profile,
        native_event: &str,
        payload: &[u8],
    ) -> Result<Result<wit::HookEvent, wit::AdapterError>, SandboxError> {
        let profile: bind::Profile = arg(profile);
        self.bounded("parse-hook", |b, s| {
            b.parse_hook(s, &profile, native_event, payload)
        })
        .map(Cross::cross)
    }

    pub fn transcript_locations(
        &self,
        profile: &wit::Profile,
        context: &wit::LocationContext,
    ) -> Result<Vec<wit::TranscriptGlob>, SandboxError> {
        let (profile, context): (bind::Profile, bind::LocationContext) =
            (arg(profile), arg(context));
        self.bounded("transcript-locations", |b, s| {
            b.transcript_locations(s, &profile, &context)
        })
        .map(Cross::cross)
    }

    pub fn classify_fault(
        &self,
        profile: &wit::Profile,
        lines: &[String],
    ) -> Result<Option<wit::Fault>, SandboxError> {
        let profile: bind::Profile = arg(profile);
        self.bounded("classify-fault", |b, s| {
            b.classify_fault(s, &profile, lines)
        })
        .map(Cross::cross)
    }

    pub fn read_screen(
        &self,
        profile: &wit::Profile,
        screen: &wit::Screen,
    ) -> Result<wit::ScreenReading, SandboxError> {
        let (profile, screen): (bind::Profile, bind::Screen) = (arg(profile), arg(screen));
        self.bounded("read-screen", |b, s| b.read_screen(s, &profile, &screen))
            .map(Cross::cross)
    }

    /// A hook-config edit is written to the user's file: refused, never
    /// cut, past the bound.
    fn bounded_edit(
        &self,
        export: &str,
        mut answer: Result<bind::HookEdit, bind::AdapterError>,
    ) -> Result<Result<wit::HookEdit, wit::AdapterError>, SandboxError> {
        match &mut answer {
            Ok(edit) => {
                super::bounds::check_act(&self.name, export, "a hook config", [edit.text.len()], 1)?
            }
            Err(e) => e.bound(),
        }
        Ok(answer.cross())
    }

    /// A usage tally in its own store, with its own limits (usage dedupe
    /// sets can need more memory than the defaults).
    pub fn tally(&self, parser: &str, limits: Limits) -> Result<Tally, SandboxError> {
        let (live, resource) =
            self.resident(limits, "tally.constructor", |b, s| b.tally_new(s, parser))?;
        Ok(Tally(Resident {
            component: self.name.clone(),
            limits,
            live: Some(live),
            resource,
        }))
    }

    /// A `request-tally` in its own store; `None` when the component's WIT
    /// version has none (0.1).
    pub fn request_tally(
        &self,
        parser: &str,
        limits: Limits,
    ) -> Result<Option<RequestTally>, SandboxError> {
        let (live, resource) = self.resident(limits, "request-tally.constructor", |b, s| {
            b.request_tally_new(s, parser)
        })?;
        Ok(resource.map(|resource| {
            RequestTally(Resident {
                component: self.name.clone(),
                limits,
                live: Some(live),
                resource,
            })
        }))
    }

    /// A fresh store with a resource made in it by `make`.
    fn resident<R>(
        &self,
        limits: Limits,
        export: &str,
        make: impl FnOnce(&Bindings, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<(Live, R), SandboxError> {
        let mut live = self.instantiate(limits)?;
        live.store
            .set_epoch_deadline(deadline_ticks(limits.call_timeout));
        let resource = make(&live.bindings, &mut live.store)
            .map_err(|e| classify(&self.name, export, limits, &e, live.store.data()))?;
        Ok((live, resource))
    }
}
