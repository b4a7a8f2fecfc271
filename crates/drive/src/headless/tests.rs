//! The headless driver against a component double: a real process runs
//! (`/bin/sh`), and the double stands where the sandboxed adapter would,
//! recording what the driver asked it.

use std::sync::{Arc, Mutex};

use super::*;
use crate::Conversation;
use crate::component::{Answer, Component};
use crate::conversations::{self, Entry};
use crate::records::{ProcessRecord, Record};
use drover_gate::Cleared;
use drover_profile::{Profile, ProfileSource};
use drover_run::RunDir;
use drover_sandbox::SandboxError;
use drover_types::{Tokens, Verdict};

/// Answers a headless turn with `/bin/sh -c 'printf done'`, reads every
/// turn as `outcome` (with stdout as the reply), and keeps the outputs it
/// was handed.
#[derive(Clone)]
struct Double {
    outcome: wit::TurnResult,
    outputs: Arc<Mutex<Vec<wit::TurnOutput>>>,
}

impl Double {
    fn reading(outcome: wit::TurnOutcome) -> Double {
        Double {
            outcome: wit::TurnResult {
                outcome,
                reply: None,
                conversation_id: Some("c1".to_string()),
                error: None,
                usage: None,
                prompt_kind: None,
            },
            outputs: Arc::default(),
        }
    }

    fn outputs(&self) -> Vec<wit::TurnOutput> {
        self.outputs.lock().map(|o| o.clone()).unwrap_or_default()
    }
}

fn unused<T>() -> Result<T, SandboxError> {
    Err(SandboxError::Engine("not asked in these tests".to_string()))
}

impl Component for Double {
    fn describe(&self) -> Result<wit::Description, SandboxError> {
        unused()
    }
    fn render_prompt(&self, _: &wit::Profile, prompt: &str) -> Answer<String> {
        Ok(Ok(prompt.to_string()))
    }
    fn interactive_command(
        &self,
        _: &wit::Profile,
        _: &wit::LaunchRequest,
    ) -> Answer<wit::Command> {
        unused()
    }
    fn headless_command(&self, _: &wit::Profile, _: &wit::LaunchRequest) -> Answer<wit::Command> {
        Ok(Ok(wit::Command {
            argv: vec![
                "/bin/sh".to_string(),
                "-c".to_string(),
                "printf done".to_string(),
            ],
            env: Vec::new(),
            stdin: None,
        }))
    }
    fn acp_command(&self, _: &wit::Profile, _: &wit::LaunchRequest) -> Answer<wit::Command> {
        unused()
    }
    fn parse_turn(&self, _: &wit::Profile, output: &wit::TurnOutput) -> Answer<wit::TurnResult> {
        if let Ok(mut outputs) = self.outputs.lock() {
            outputs.push(output.clone());
        }
        Ok(Ok(wit::TurnResult {
            reply: Some(output.stdout.clone()),
            ..self.outcome.clone()
        }))
    }
    fn parse_hook(&self, _: &wit::Profile, _: &str, _: &[u8]) -> Answer<wit::HookEvent> {
        unused()
    }
    fn transcript_locations(
        &self,
        _: &wit::Profile,
        _: &wit::LocationContext,
    ) -> Result<Vec<wit::TranscriptGlob>, SandboxError> {
        Ok(Vec::new())
    }
    fn classify_fault(
        &self,
        _: &wit::Profile,
        _: &[String],
    ) -> Result<Option<wit::Fault>, SandboxError> {
        Ok(None)
    }
    fn read_screen(
        &self,
        _: &wit::Profile,
        _: &wit::Screen,
    ) -> Result<wit::ScreenReading, SandboxError> {
        unused()
    }
    fn tally_files(&self, _: &str, _: &[Cleared<std::path::PathBuf>]) -> Option<wit::UsageReport> {
        None
    }
    fn twin(&self) -> Box<dyn Component> {
        Box::new(self.clone())
    }
}

fn profile() -> Profile {
    let text = "name = \"double\"\nbinary = \"/bin/sh\"\nusage_parser = \"none\"\n[hooks]\ndialect = \"none\"\n";
    Profile::parse(text, &ProfileSource::Builtin("double.toml")).expect("profile")
}

fn context(project: &std::path::Path, double: &Double) -> Context {
    let run = RunDir::create(project, "r1").expect("run");
    Context::with_component(
        project.to_path_buf(),
        run,
        profile(),
        Box::new(double.clone()),
    )
}

#[test]
fn a_turn_its_adapter_reads_as_a_success_completes_with_the_reply() {
    let project = tempfile::tempdir().expect("project");
    let double = Double::reading(wit::TurnOutcome::Success);
    let ctx = context(project.path(), &double);
    let spec = TurnSpec::new("t", "hello", project.path().to_path_buf());

    let result = run(&ctx, &spec);

    assert_eq!(result.status, Verdict::Completed, "{}", result.reason);
    assert_eq!(result.reason, "the turn finished");
    assert_eq!(result.reply.as_deref(), Some("done"));
    assert_eq!(result.session_id.as_deref(), Some("c1"));
    // The adapter read exactly this turn's output, from the task's log.
    assert_eq!(double.outputs().len(), 1);
    assert_eq!(double.outputs()[0].stdout, "done");
    assert_eq!(double.outputs()[0].exit_code, Some(0));
}

#[test]
fn a_turn_that_stopped_at_a_prompt_stalls_naming_it() {
    let project = tempfile::tempdir().expect("project");
    let mut double = Double::reading(wit::TurnOutcome::Blocked);
    double.outcome.prompt_kind = Some(wit::PromptKind::Permission);
    let ctx = context(project.path(), &double);
    let spec = TurnSpec::new("t", "hello", project.path().to_path_buf());

    let result = run(&ctx, &spec);

    assert_eq!(result.status, Verdict::Stalled);
    assert_eq!(result.blocked, Some(wit::PromptKind::Permission));
    assert_eq!(result.reason, "the turn stopped at a permission prompt");
}

#[test]
fn a_resumed_turn_hands_its_adapter_the_conversations_earlier_usage() {
    let project = tempfile::tempdir().expect("project");
    let earlier = Tokens {
        input: 1101,
        output: 67,
        cache_read: 1000,
        reasoning: 5,
        requests: 1,
        ..Tokens::default()
    };
    conversations::record(
        project.path(),
        &Entry {
            ts: 1,
            cli: "double".to_string(),
            conversation: "c1".to_string(),
            run: "r0".to_string(),
            task: "t".to_string(),
            usage: Some(earlier),
            cost_usd: None,
        },
    );
    let double = Double::reading(wit::TurnOutcome::Success);
    let ctx = context(project.path(), &double);
    let mut spec = TurnSpec::new("t", "again", project.path().to_path_buf());
    spec.conversation = Conversation::Resume("c1".to_string());

    let result = run(&ctx, &spec);

    assert_eq!(result.status, Verdict::Completed, "{}", result.reason);
    let outputs = double.outputs();
    assert_eq!(outputs[0].prior_usage, Some(earlier.to_wit()));
    // The process record names the conversation, for recovery.
    let record = ProcessRecord::read(&ctx.run, "t").expect("process record");
    assert_eq!(record.conversation.as_deref(), Some("c1"));
}
