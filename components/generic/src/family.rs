//! The built-in adapters whose logic the generic adapter reuses, chosen by a
//! profile's data: the hook dialect picks hook-config editing, payload
//! parsing and fault rules; the usage parser picks the tally; `[turn]
//! output` picks how a headless turn reads.

use drover_kit::usage::RowParser;
use drover_kit::{
    Adapter, AdapterError, Fault, HookEdit, HookEvent, HookInstall, HookStatus, Metadata, Profile,
    TurnOutput, TurnResult,
};

macro_rules! families {
    ($($family:ident => $adapter:path, $format:literal;)+) => {
        /// One built-in adapter, as a family of CLIs that share its formats.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Family {
            $($family,)+
        }

        impl Family {
            /// In precedence order: the first that knows a dialect or parser
            /// is its family (`claude-settings-json` is Claude's, though Qwen
            /// Code reads it too).
            pub const ALL: &[Family] = &[$(Family::$family,)+];

            pub fn metadata(self) -> Metadata {
                match self {
                    $(Family::$family => <$adapter as Adapter>::METADATA,)+
                }
            }

            /// The `[turn] output` name of this family's headless format.
            pub fn turn_format(self) -> &'static str {
                match self {
                    $(Family::$family => $format,)+
                }
            }

            pub fn install_hooks(self, existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
                match self {
                    $(Family::$family => <$adapter as Adapter>::install_hooks(existing, request),)+
                }
            }

            pub fn remove_hooks(self, existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
                match self {
                    $(Family::$family => <$adapter as Adapter>::remove_hooks(existing, request),)+
                }
            }

            pub fn detect_hooks(self, existing: &str, request: &HookInstall) -> Result<HookStatus, AdapterError> {
                match self {
                    $(Family::$family => <$adapter as Adapter>::detect_hooks(existing, request),)+
                }
            }

            pub fn parse_hook(self, profile: &Profile, native: &str, payload: &[u8]) -> Result<HookEvent, AdapterError> {
                match self {
                    $(Family::$family => <$adapter as Adapter>::parse_hook(profile, native, payload),)+
                }
            }

            pub fn parse_turn(self, profile: &Profile, output: &TurnOutput) -> Result<TurnResult, AdapterError> {
                match self {
                    $(Family::$family => <$adapter as Adapter>::parse_turn(profile, output),)+
                }
            }

            pub fn classify_fault(self, profile: &Profile, lines: &[String]) -> Option<Fault> {
                match self {
                    $(Family::$family => <$adapter as Adapter>::classify_fault(profile, lines),)+
                }
            }

            pub fn usage_parser(self, name: &str) -> Option<Box<dyn RowParser>> {
                match self {
                    $(Family::$family => <$adapter as Adapter>::usage_parser(name),)+
                }
            }
        }
    };
}

families! {
    Claude => drover_claude::Claude, "claude-json";
    Codex => drover_codex::Codex, "codex-jsonl";
    Gemini => drover_gemini::Gemini, "gemini-json";
    Copilot => drover_copilot::Copilot, "copilot-jsonl";
    Antigravity => drover_antigravity::Antigravity, "antigravity-stream-json";
    Cursor => drover_cursor::Cursor, "cursor-json";
    Opencode => drover_opencode::Opencode, "opencode-jsonl";
    Qwen => drover_qwen::Qwen, "qwen-json";
    Grok => drover_grok::Grok, "grok-json";
}

impl Family {
    /// The family whose hook dialect this is.
    pub fn of_dialect(dialect: &str) -> Option<Family> {
        Family::ALL
            .iter()
            .copied()
            .find(|f| f.metadata().dialects.contains(&dialect))
    }

    /// The family whose usage parser this is.
    pub fn of_parser(parser: &str) -> Option<Family> {
        Family::ALL
            .iter()
            .copied()
            .find(|f| f.metadata().usage_parsers.iter().any(|p| p.name == parser))
    }

    /// The family whose headless format a `[turn] output` names.
    pub fn of_turn_format(format: &str) -> Option<Family> {
        Family::ALL
            .iter()
            .copied()
            .find(|f| f.turn_format() == format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_dialect_and_parser_has_one_family() {
        assert_eq!(
            Family::of_dialect("claude-settings-json"),
            Some(Family::Claude)
        );
        assert_eq!(
            Family::of_dialect("opencode-plugin"),
            Some(Family::Opencode)
        );
        assert_eq!(Family::of_dialect("vim-json"), None);
        assert_eq!(Family::of_parser("qwen-usage-record"), Some(Family::Qwen));
        assert_eq!(Family::of_parser("codex-rollout"), Some(Family::Codex));
        assert_eq!(Family::of_turn_format("gemini-json"), Some(Family::Gemini));
        for family in Family::ALL {
            for parser in family.metadata().usage_parsers {
                assert!(
                    family.usage_parser(parser.name).is_some(),
                    "{family:?} {}",
                    parser.name
                );
            }
        }
    }
}
