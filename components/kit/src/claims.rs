//! Whether `describe` tells the truth: each capability an [`Adapter`] lists
//! answers with something other than its default, and each capability it
//! does not list answers the default. Run by the test that
//! [`export!`](crate::export) adds to every adapter crate.

use crate::adapter::{Adapter, NO_SCREEN_RULE, not_implemented};
use crate::{
    AdapterError, Capability, Conversation, HookInstall, LaunchRequest, LocationContext, Profile,
    Screen, TurnOutput,
};

/// A profile line every fault classifier must report: the WIT says
/// `classify-fault` applies the profile's own patterns.
const PROBE_FAULT: &str = "drover claims probe: rate limit exceeded";

/// What is wrong with `A`'s description, one sentence per problem.
pub fn problems<A: Adapter>() -> Vec<String> {
    let meta = A::METADATA;
    let profile = probe_profile::<A>();
    let declined = |answer: Result<(), AdapterError>, export: &str| {
        answer.err() == Some(not_implemented(meta.name, export))
    };
    let launch = LaunchRequest {
        prompt: "/review src/main.rs".to_string(),
        model: String::new(),
        extra_args: None,
        conversation: Conversation::Fresh,
    };
    let output = TurnOutput {
        stdout: "{}".to_string(),
        stderr: String::new(),
        exit_code: Some(0),
        prior_usage: None,
    };
    let install = HookInstall {
        dialect: profile.dialect.clone(),
        relay_command: "drover hook --cli probe".to_string(),
        events: profile.hook_events.clone(),
        marker: "drover hook".to_string(),
    };
    let context = LocationContext {
        home: "/home/u".to_string(),
        cwd: "/w".to_string(),
        env: Vec::new(),
    };
    let screen = Screen {
        rows: vec!["> ".to_string()],
        title: String::new(),
    };

    // (capability, [(export, whether it answered the default)])
    let answers: Vec<(Capability, Vec<(&str, bool)>)> = vec![
        (
            Capability::Prompt,
            vec![(
                "render-prompt",
                declined(
                    A::render_prompt(&profile, &launch.prompt).map(drop),
                    "render-prompt",
                ),
            )],
        ),
        (
            Capability::Commands,
            vec![(
                "interactive-command",
                declined(
                    A::interactive_command(&profile, &launch).map(drop),
                    "interactive-command",
                ),
            )],
        ),
        (
            Capability::Headless,
            vec![
                (
                    "headless-command",
                    declined(
                        A::headless_command(&profile, &launch).map(drop),
                        "headless-command",
                    ),
                ),
                (
                    "parse-turn",
                    declined(A::parse_turn(&profile, &output).map(drop), "parse-turn"),
                ),
            ],
        ),
        (
            Capability::Acp,
            vec![(
                "acp-command",
                declined(A::acp_command(&profile, &launch).map(drop), "acp-command"),
            )],
        ),
        (
            Capability::HookConfig,
            vec![
                (
                    "install-hooks",
                    declined(A::install_hooks("", &install).map(drop), "install-hooks"),
                ),
                (
                    "remove-hooks",
                    declined(A::remove_hooks("", &install).map(drop), "remove-hooks"),
                ),
                (
                    "detect-hooks",
                    declined(A::detect_hooks("", &install).map(drop), "detect-hooks"),
                ),
            ],
        ),
        (
            Capability::HookPayloads,
            vec![(
                "parse-hook",
                declined(
                    A::parse_hook(&profile, "Stop", b"{}").map(drop),
                    "parse-hook",
                ),
            )],
        ),
        (
            Capability::Transcripts,
            vec![(
                "transcript-locations",
                A::transcript_locations(&profile, &context).is_empty(),
            )],
        ),
        (
            Capability::Usage,
            vec![(
                "tally",
                meta.usage_parsers.is_empty()
                    || meta
                        .usage_parsers
                        .iter()
                        .any(|p| A::usage_parser(p.name).is_none()),
            )],
        ),
        (
            Capability::Faults,
            vec![(
                "classify-fault",
                A::classify_fault(&profile, &[PROBE_FAULT.to_string()]).is_none(),
            )],
        ),
        (
            Capability::Screen,
            vec![(
                "read-screen",
                A::read_screen(&profile, &screen).rule == NO_SCREEN_RULE,
            )],
        ),
    ];

    let mut problems = Vec::new();
    for (capability, exports) in answers {
        let claimed = meta.capabilities.contains(&capability);
        let capability = wit_name(capability);
        for (export, default) in exports {
            if claimed && default {
                problems.push(format!(
                    "claims {capability} but {export} gives the default answer"
                ));
            }
            if !claimed && !default {
                problems.push(format!(
                    "{export} answers but {capability} is not in METADATA.capabilities"
                ));
            }
        }
    }
    let claims_hooks = meta.capabilities.contains(&Capability::HookConfig);
    if claims_hooks == meta.dialects.is_empty() {
        problems.push(format!(
            "hook-config is {}claimed but {} dialects are listed",
            if claims_hooks { "" } else { "not " },
            meta.dialects.len()
        ));
    }
    problems
}

/// The capability as the WIT spells it.
fn wit_name(capability: Capability) -> &'static str {
    match capability {
        Capability::Prompt => "prompt",
        Capability::Commands => "commands",
        Capability::Headless => "headless",
        Capability::HookConfig => "hook-config",
        Capability::HookPayloads => "hook-payloads",
        Capability::Transcripts => "transcripts",
        Capability::Usage => "usage",
        Capability::Faults => "faults",
        Capability::Screen => "screen",
        Capability::Acp => "acp",
    }
}

/// Panics with every problem [`problems`] finds.
pub fn assert_honest<A: Adapter>() {
    let problems = problems::<A>();
    assert!(
        problems.is_empty(),
        "adapter '{}': describe does not match what it implements:\n  {}",
        A::METADATA.name,
        problems.join("\n  ")
    );
}

/// A profile naming the adapter's first dialect and parser, mapping `Stop`,
/// with one fault pattern.
fn probe_profile<A: Adapter>() -> Profile {
    let meta = A::METADATA;
    Profile {
        hook_events: vec![("Stop".to_string(), "Stop".to_string())],
        env_fault_patterns: vec!["^drover claims probe".to_string()],
        ..Profile::new(
            meta.name,
            meta.name,
            meta.dialects.first().unwrap_or(&"none"),
            meta.usage_parsers.first().map_or("none", |p| p.name),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::{Metadata, ParserSpec};
    use crate::faults::FaultRule;
    use crate::usage::{Ledger, RowParser};
    use crate::{FaultKind, HookEvent};

    struct Bare;
    impl Adapter for Bare {
        const METADATA: Metadata = Metadata::new("bare", "1.0.0");
    }

    struct Claims;
    impl Adapter for Claims {
        const METADATA: Metadata = Metadata {
            capabilities: &[
                Capability::HookPayloads,
                Capability::Faults,
                Capability::Usage,
            ],
            usage_parsers: &[ParserSpec {
                name: "p",
                needles: &[],
            }],
            ..Metadata::new("claims", "1.0.0")
        };
        const FAULT_RULES: &'static [FaultRule] =
            &[FaultRule::new("x/v1", FaultKind::Auth, "^never$")];
    }

    struct Lies;
    impl Adapter for Lies {
        const METADATA: Metadata = Metadata {
            capabilities: &[Capability::Screen, Capability::HookConfig],
            ..Metadata::new("lies", "1.0.0")
        };
        fn parse_hook(_: &Profile, native: &str, _: &[u8]) -> Result<HookEvent, AdapterError> {
            Ok(HookEvent::new(crate::CanonicalEvent::Stop, native))
        }
        fn usage_parser(_: &str) -> Option<Box<dyn RowParser>> {
            Some(Box::new(Nothing))
        }
    }

    struct Nothing;
    impl RowParser for Nothing {
        fn row(&mut self, _: &[u8], _: &mut Ledger) {}
    }

    #[test]
    fn an_adapter_of_defaults_claims_nothing_and_passes() {
        assert_eq!(problems::<Bare>(), Vec::<String>::new());
        assert_eq!(Bare::describe().wit_version, crate::WIT_VERSION);
    }

    #[test]
    fn a_claim_without_code_and_code_without_a_claim_are_both_reported() {
        assert_eq!(
            problems::<Claims>(),
            [
                "claims hook-payloads but parse-hook gives the default answer",
                "claims usage but tally gives the default answer",
            ]
        );
        assert_eq!(
            problems::<Lies>(),
            [
                "claims hook-config but install-hooks gives the default answer",
                "claims hook-config but remove-hooks gives the default answer",
                "claims hook-config but detect-hooks gives the default answer",
                "parse-hook answers but hook-payloads is not in METADATA.capabilities",
                "claims screen but read-screen gives the default answer",
                "hook-config is claimed but 0 dialects are listed",
            ]
        );
    }
}
