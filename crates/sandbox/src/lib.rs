//! The sandboxed component host.
//!
//! One [`Sandbox`] holds the wasmtime engine (component model, epoch
//! interruption driven by a background ticker, no async concurrency), a
//! linker that offers only an empty WASI and `host-log`, and the compile
//! cache. [`Sandbox::load`] turns component bytes into an [`Adapter`]: a
//! pre-instantiated component whose calls each run under a deadline and a
//! memory cap. A call that traps or hits a limit returns a typed error and
//! drops its store; the next call gets a fresh one. Components built against
//! any hosted version of the WIT load side by side (`versions`); the API
//! here speaks the latest types.

mod adapter;
pub mod bounds;
mod cache;
mod error;
mod host;
mod limits;
pub mod location;
mod plain;
mod versions;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceAny};
use wasmtime::{Config, Engine, Store};

use bounds::Bounded;
use drover_types::{requests, wit};
use plain::Cross;

pub use cache::{CacheOutcome, CompileCache};
pub use error::{Limit, SandboxError};
pub use host::STDERR_CAPACITY;
pub use limits::Limits;
pub use versions::{WIT_VERSION, WitVersion};

use host::HostState;

/// A component embedded in the program that hosts the sandbox (drover's
/// built-in adapters, compiled from `components/` by its build script).
pub struct Builtin {
    pub name: &'static str,
    pub bytes: &'static [u8],
    /// SHA-256 of `bytes`, computed at build time (the compile-cache key).
    pub sha256: &'static str,
}
use versions::{Bindings, Exported, Pre};

/// How often the ticker advances the epoch; deadlines are multiples of it.
const TICK: Duration = Duration::from_millis(10);
/// Bytes of guest stderr attached to an error.
const STDERR_IN_ERRORS: usize = 4096;

pub struct Sandbox {
    engine: Engine,
    linker: Arc<Linker<HostState>>,
    cache: CompileCache,
}

impl Sandbox {
    pub fn new(cache: CompileCache) -> Result<Sandbox, SandboxError> {
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .concurrency_support(false)
            .parallel_compilation(true);
        let engine = Engine::new(&config).map_err(|e| SandboxError::Engine(format!("{e:?}")))?;
        let mut linker = Linker::<HostState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| SandboxError::Engine(format!("{e:?}")))?;
        versions::v0_2::drover::adapter::host_log::add_to_linker::<
            HostState,
            wasmtime::component::HasSelf<HostState>,
        >(&mut linker, |state| state)
        .map_err(|e| SandboxError::Engine(format!("{e:?}")))?;
        versions::v0_1::drover::adapter::host_log::add_to_linker::<
            HostState,
            wasmtime::component::HasSelf<HostState>,
        >(&mut linker, |state| state)
        .map_err(|e| SandboxError::Engine(format!("{e:?}")))?;
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("drover-epoch".to_string())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(TICK);
                }
            })
            .map_err(|e| SandboxError::Engine(format!("cannot start the epoch ticker: {e}")))?;
        Ok(Sandbox {
            engine,
            linker: Arc::new(linker),
            cache,
        })
    }

    /// The sandbox every command uses: its compile cache in the user's
    /// cache directory (`CompileCache::default_location`).
    pub fn with_default_cache() -> Result<Sandbox, SandboxError> {
        Sandbox::new(CompileCache::default_location())
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn cache(&self) -> &CompileCache {
        &self.cache
    }

    /// Compiles (or loads from the cache) a component, reads the WIT
    /// version from its exports (refusing one this engine does not host
    /// before running any of its code), pre-instantiates it against that
    /// version's bindings, and checks that `describe` reports the same
    /// version family.
    pub fn load(
        &self,
        name: &str,
        wasm: &[u8],
        sha256: &str,
        limits: Limits,
    ) -> Result<(Adapter, CacheOutcome), SandboxError> {
        let (component, outcome) = self
            .cache
            .load_or_compile(&self.engine, sha256, wasm)
            .map_err(|e| SandboxError::Compile {
                component: name.to_string(),
                reason: root_cause(&e),
            })?;
        let version = match versions::exported_version(&self.engine, &component) {
            Exported::Hosted(version) => version,
            Exported::Unhosted(found) => {
                return Err(SandboxError::Incompatible {
                    component: name.to_string(),
                    found,
                    supported: WitVersion::hosted_list(),
                });
            }
            Exported::NoCli(exports) => {
                return Err(SandboxError::Link {
                    component: name.to_string(),
                    reason: format!(
                        "it exports no drover:adapter/cli interface (its exports: {})",
                        if exports.is_empty() {
                            "none".to_string()
                        } else {
                            exports.join(", ")
                        }
                    ),
                });
            }
        };
        let adapter = self.prepare(name, &component, version, limits)?;
        let description = adapter.describe()?;
        match WitVersion::of(&description.wit_version) {
            Some(claimed) if claimed == version => Ok((adapter, outcome)),
            Some(_) => Err(SandboxError::VersionMismatch {
                component: name.to_string(),
                claimed: description.wit_version,
                exported: version.family().to_string(),
            }),
            None => Err(SandboxError::Incompatible {
                component: name.to_string(),
                found: description.wit_version,
                supported: WitVersion::hosted_list(),
            }),
        }
    }

    /// Loads a component built into this binary. It was compiled against
    /// this engine's latest WIT, so the version checks (reading its exports,
    /// one instantiation and a `describe` call, which the hook relay cannot
    /// spare) are skipped.
    pub fn load_builtin(
        &self,
        builtin: &Builtin,
        limits: Limits,
    ) -> Result<(Adapter, CacheOutcome), SandboxError> {
        let (component, outcome) = self
            .cache
            .load_or_compile(&self.engine, builtin.sha256, builtin.bytes)
            .map_err(|e| SandboxError::Compile {
                component: builtin.name.to_string(),
                reason: root_cause(&e),
            })?;
        let mut adapter = self.prepare(builtin.name, &component, WitVersion::LATEST, limits)?;
        adapter.builtin = true;
        Ok((adapter, outcome))
    }

    fn prepare(
        &self,
        name: &str,
        component: &Component,
        version: WitVersion,
        limits: Limits,
    ) -> Result<Adapter, SandboxError> {
        let link_error = |e: wasmtime::Error| SandboxError::Link {
            component: name.to_string(),
            reason: root_cause(&e),
        };
        let instance_pre = self.linker.instantiate_pre(component).map_err(link_error)?;
        let pre = Pre::new(version, instance_pre).map_err(link_error)?;
        Ok(Adapter {
            name: name.to_string(),
            engine: self.engine.clone(),
            pre,
            limits,
            live: Mutex::new(None),
            builtin: false,
        })
    }
}

fn root_cause(error: &wasmtime::Error) -> String {
    error.root_cause().to_string()
}

struct Live {
    store: Store<HostState>,
    bindings: Bindings,
}

/// A loaded adapter component. Calls are serialized per adapter; create
/// tallies for parallel work (each has its own store).
pub struct Adapter {
    name: String,
    engine: Engine,
    pre: Pre,
    limits: Limits,
    live: Mutex<Option<Live>>,
    builtin: bool,
}

/// A resource in a dedicated store. After a trap it is dead: every later
/// call fails with the original error's kind.
struct Resident {
    component: String,
    limits: Limits,
    live: Option<Live>,
    resource: ResourceAny,
}

impl Resident {
    fn call<R>(
        &mut self,
        export: &str,
        f: impl FnOnce(&Bindings, &mut Store<HostState>, ResourceAny) -> wasmtime::Result<R>,
    ) -> Result<R, SandboxError> {
        let Some(live) = self.live.as_mut() else {
            return Err(SandboxError::Trap {
                component: self.component.clone(),
                export: export.to_string(),
                reason: "this tally trapped earlier and was discarded".to_string(),
                stderr: String::new(),
            });
        };
        live.store
            .set_epoch_deadline(deadline_ticks(self.limits.call_timeout));
        match f(&live.bindings, &mut live.store, self.resource) {
            Ok(value) => Ok(value),
            Err(error) => {
                let classified = classify(
                    &self.component,
                    export,
                    self.limits,
                    &error,
                    live.store.data(),
                );
                self.live = None;
                Err(classified)
            }
        }
    }
}

/// A `tally` resource (sums per session, day and model).
pub struct Tally(Resident);

impl Tally {
    pub fn begin_file(&mut self, name: &str) -> Result<(), SandboxError> {
        self.0
            .call("tally.begin-file", |b, s, r| b.tally_begin_file(s, r, name))
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Result<Result<(), wit::AdapterError>, SandboxError> {
        let mut answer = self
            .0
            .call("tally.feed", |b, s, r| b.tally_feed(s, r, chunk))?;
        if let Err(e) = &mut answer {
            e.bound();
        }
        Ok(answer.map_err(Cross::cross))
    }

    pub fn finish(&mut self) -> Result<Option<wit::UsageReport>, SandboxError> {
        let mut report = self
            .0
            .call("tally.finish", |b, s, r| b.tally_finish(s, r))?;
        report.bound();
        Ok(report.cross())
    }
}

/// A `request-tally` resource (one row per model call, with its key).
pub struct RequestTally(Resident);

impl RequestTally {
    pub fn begin_file(&mut self, name: &str) -> Result<(), SandboxError> {
        self.0.call("request-tally.begin-file", |b, s, r| {
            b.request_tally_begin_file(s, r, name)
        })
    }

    pub fn feed(
        &mut self,
        chunk: &[u8],
    ) -> Result<Result<Vec<requests::Request>, wit::AdapterError>, SandboxError> {
        let mut rows = self.0.call("request-tally.feed", |b, s, r| {
            b.request_tally_feed(s, r, chunk)
        })?;
        rows.bound();
        Ok(rows.cross())
    }

    pub fn finish(
        &mut self,
    ) -> Result<Result<requests::RequestTail, wit::AdapterError>, SandboxError> {
        let mut tail = self.0.call("request-tally.finish", |b, s, r| {
            b.request_tally_finish(s, r)
        })?;
        tail.bound();
        Ok(tail.cross())
    }
}

fn deadline_ticks(timeout: Duration) -> u64 {
    let ticks = timeout.as_nanos().div_ceil(TICK.as_nanos());
    u64::try_from(ticks)
        .unwrap_or(u64::MAX / 2)
        .saturating_add(1)
}

fn classify(
    component: &str,
    export: &str,
    limits: Limits,
    error: &wasmtime::Error,
    state: &HostState,
) -> SandboxError {
    let stderr = state.stderr_tail(STDERR_IN_ERRORS);
    if state.limiter.refused_memory.is_some() {
        return SandboxError::Limit {
            component: component.to_string(),
            export: export.to_string(),
            limit: Limit::Memory(limits.memory_bytes),
            stderr,
        };
    }
    if matches!(
        error.downcast_ref::<wasmtime::Trap>(),
        Some(wasmtime::Trap::Interrupt)
    ) {
        return SandboxError::Limit {
            component: component.to_string(),
            export: export.to_string(),
            limit: Limit::Time(limits.call_timeout),
            stderr,
        };
    }
    SandboxError::Trap {
        component: component.to_string(),
        export: export.to_string(),
        reason: root_cause(error),
        stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_round_up_to_ticks() {
        assert_eq!(deadline_ticks(Duration::from_millis(2000)), 201);
        assert_eq!(deadline_ticks(Duration::from_millis(1)), 2);
    }
}
