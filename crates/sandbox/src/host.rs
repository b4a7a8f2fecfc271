//! Host side of the `adapter` world: the per-store state (an empty WASI
//! context, the limiter, a bounded stderr pipe) and the `host-log` import of
//! every hosted version (the bindings are in `versions/`).

use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::limits::{Limiter, Limits};
use super::versions::{v0_1, v0_2};

/// Bytes of guest stderr kept per store. A store whose pipe is half full is
/// replaced between calls, so a chatty guest never hits the cap mid-call
/// unless one call alone writes this much.
pub const STDERR_CAPACITY: usize = 256 << 10;

/// Log lines kept from `host-log`.
const LOG_KEEP: usize = 64;
const LOG_LINE_MAX: usize = 1024;

pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: Limiter,
    pub(crate) stderr: MemoryOutputPipe,
    pub(crate) log: Vec<String>,
}

impl HostState {
    /// A state that gives the guest nothing: no preopens, no environment, no
    /// arguments, no network, stdin closed, stdout discarded.
    pub fn new(limits: Limits) -> HostState {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        let mut builder = wasmtime_wasi::WasiCtxBuilder::new();
        builder
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .allow_blocking_current_thread(true);
        HostState {
            wasi: builder.build(),
            table: ResourceTable::new(),
            limiter: Limiter::new(limits),
            stderr,
            log: Vec::new(),
        }
    }

    /// The last `max` bytes of the guest's stderr, as text.
    pub fn stderr_tail(&self, max: usize) -> String {
        let bytes = self.stderr.contents();
        let start = bytes.len().saturating_sub(max);
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }

    pub fn stderr_len(&self) -> usize {
        self.stderr.contents().len()
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl v0_2::drover::adapter::host_log::Host for HostState {
    fn log(&mut self, level: v0_2::drover::adapter::host_log::Level, message: String) {
        let mut line = message;
        if line.len() > LOG_LINE_MAX {
            let mut cut = LOG_LINE_MAX;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        tracing::debug!(target: "drover::guest", ?level, "{line}");
        if self.log.len() == LOG_KEEP {
            self.log.remove(0);
        }
        self.log.push(line);
    }
}

impl v0_1::drover::adapter::host_log::Host for HostState {
    fn log(&mut self, level: v0_1::drover::adapter::host_log::Level, message: String) {
        use v0_1::drover::adapter::host_log::Level as Old;
        use v0_2::drover::adapter::host_log::{Host, Level};
        let level = match level {
            Old::Debug => Level::Debug,
            Old::Info => Level::Info,
            Old::Warn => Level::Warn,
        };
        Host::log(self, level, message);
    }
}
