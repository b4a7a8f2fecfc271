//! The bounds every guest runs under: a per-call deadline and a per-store
//! memory cap. A limit that trips is recorded here so the error can say which
//! one it was, rather than guessing from the trap.

use std::time::Duration;

/// Sandbox limits for one component. Profiles and flags override the defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Wall-clock budget for one call into the guest.
    pub call_timeout: Duration,
    /// Total linear memory a store may hold, across all its memories.
    pub memory_bytes: usize,
    /// Core instances per store; componentize-py guests need dozens.
    pub instances: usize,
    /// Table elements per table.
    pub table_elements: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            call_timeout: Duration::from_secs(2),
            memory_bytes: 64 << 20,
            instances: 256,
            table_elements: 1 << 20,
        }
    }
}

/// Enforces [`Limits`] for one store and remembers why it refused.
pub(crate) struct Limiter {
    limits: Limits,
    in_use: usize,
    pub(crate) refused_memory: Option<usize>,
}

impl Limiter {
    pub(crate) fn new(limits: Limits) -> Limiter {
        Limiter {
            limits,
            in_use: 0,
            refused_memory: None,
        }
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let growth = desired.saturating_sub(current);
        let wanted = self.in_use.saturating_add(growth);
        if wanted > self.limits.memory_bytes {
            self.refused_memory = Some(wanted);
            // An error (rather than `Ok(false)`) traps at the grow site, so
            // the failure is ours to name instead of a guest abort.
            return Err(wasmtime::Error::msg(format!(
                "memory limit of {} bytes reached (the guest asked for {wanted})",
                self.limits.memory_bytes
            )));
        }
        self.in_use = wanted;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= self.limits.table_elements)
    }

    fn instances(&self) -> usize {
        self.limits.instances
    }

    fn tables(&self) -> usize {
        self.limits.instances
    }

    fn memories(&self) -> usize {
        self.limits.instances
    }
}
