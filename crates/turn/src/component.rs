//! What a driver asks a seat's adapter component, as a trait: the sandboxed
//! component ([`drover_sandbox::Adapter`]) answers in production, and a
//! double answers in the drivers' own tests, so a driver can be tested
//! without building the binary or a component for each case.

use std::io::Read;
use std::path::PathBuf;

use drover_gate::Cleared;
use drover_gate::read::{TRANSCRIPT_MAX, open_for_component};
use drover_sandbox::{Adapter, Limits, SandboxError};
use drover_types::wit;

/// A call's answer: the component's own error, or the sandbox's (a trap, a
/// limit, a broken bound).
pub type Answer<T> = Result<Result<T, wit::AdapterError>, SandboxError>;

/// The adapter functions a driver calls (docs/wit.md says what each means).
pub trait Component: Send + Sync {
    fn describe(&self) -> Result<wit::Description, SandboxError>;
    fn render_prompt(&self, profile: &wit::Profile, prompt: &str) -> Answer<String>;
    fn interactive_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command>;
    fn headless_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command>;
    fn acp_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command>;
    fn parse_turn(
        &self,
        profile: &wit::Profile,
        output: &wit::TurnOutput,
    ) -> Answer<wit::TurnResult>;
    fn parse_hook(
        &self,
        profile: &wit::Profile,
        native_event: &str,
        payload: &[u8],
    ) -> Answer<wit::HookEvent>;
    fn transcript_locations(
        &self,
        profile: &wit::Profile,
        context: &wit::LocationContext,
    ) -> Result<Vec<wit::TranscriptGlob>, SandboxError>;
    fn classify_fault(
        &self,
        profile: &wit::Profile,
        lines: &[String],
    ) -> Result<Option<wit::Fault>, SandboxError>;
    fn read_screen(
        &self,
        profile: &wit::Profile,
        screen: &wit::Screen,
    ) -> Result<wit::ScreenReading, SandboxError>;
    /// The usage in a conversation's transcripts (one tally, so a call
    /// copied into two files counts once), tallied by the named parser;
    /// `None` when there is none or one cannot be read (logged).
    fn tally_files(
        &self,
        parser: &str,
        transcripts: &[Cleared<PathBuf>],
    ) -> Option<wit::UsageReport>;
    /// Another handle on the same component for a second caller (the event
    /// reader beside a driver).
    fn twin(&self) -> Box<dyn Component>;
}

/// Bytes a tally is fed at a time.
const CHUNK: usize = 1 << 20;

impl Component for Adapter {
    fn describe(&self) -> Result<wit::Description, SandboxError> {
        Adapter::describe(self)
    }

    fn render_prompt(&self, profile: &wit::Profile, prompt: &str) -> Answer<String> {
        Adapter::render_prompt(self, profile, prompt)
    }

    fn interactive_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command> {
        Adapter::interactive_command(self, profile, request)
    }

    fn headless_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command> {
        Adapter::headless_command(self, profile, request)
    }

    fn acp_command(
        &self,
        profile: &wit::Profile,
        request: &wit::LaunchRequest,
    ) -> Answer<wit::Command> {
        Adapter::acp_command(self, profile, request)
    }

    fn parse_turn(
        &self,
        profile: &wit::Profile,
        output: &wit::TurnOutput,
    ) -> Answer<wit::TurnResult> {
        Adapter::parse_turn(self, profile, output)
    }

    fn parse_hook(
        &self,
        profile: &wit::Profile,
        native_event: &str,
        payload: &[u8],
    ) -> Answer<wit::HookEvent> {
        Adapter::parse_hook(self, profile, native_event, payload)
    }

    fn transcript_locations(
        &self,
        profile: &wit::Profile,
        context: &wit::LocationContext,
    ) -> Result<Vec<wit::TranscriptGlob>, SandboxError> {
        Adapter::transcript_locations(self, profile, context)
    }

    fn classify_fault(
        &self,
        profile: &wit::Profile,
        lines: &[String],
    ) -> Result<Option<wit::Fault>, SandboxError> {
        Adapter::classify_fault(self, profile, lines)
    }

    fn read_screen(
        &self,
        profile: &wit::Profile,
        screen: &wit::Screen,
    ) -> Result<wit::ScreenReading, SandboxError> {
        Adapter::read_screen(self, profile, screen)
    }

    fn tally_files(
        &self,
        parser: &str,
        transcripts: &[Cleared<PathBuf>],
    ) -> Option<wit::UsageReport> {
        let limits = Limits {
            memory_bytes: 256 << 20,
            ..self.limits()
        };
        let mut tally = self.tally(parser, limits).ok()?;
        let mut buf = vec![0u8; CHUNK];
        for transcript in transcripts {
            // Confined to the CLI's directories (`usage::confine`); a regular
            // file only (not a FIFO, a device or a link), and never past the cap.
            let mut file = match open_for_component(transcript, TRANSCRIPT_MAX) {
                Ok((file, _)) => file.take(TRANSCRIPT_MAX),
                Err(e) => {
                    tracing::warn!("transcript not read: {e}");
                    return None;
                }
            };
            tally.begin_file(&transcript.get().to_string_lossy()).ok()?;
            loop {
                let n = file.read(&mut buf).ok()?;
                if n == 0 {
                    break;
                }
                if let Err(e) = tally.feed(&buf[..n]) {
                    tracing::warn!(path = %transcript.get().display(), "usage tally failed: {e}");
                    return None;
                }
            }
        }
        tally.finish().ok().flatten()
    }

    fn twin(&self) -> Box<dyn Component> {
        Box::new(Adapter::twin(self))
    }
}
