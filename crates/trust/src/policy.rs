//! The project's policy for blocked seats: ordered rules in
//! `.drover/config.toml` that answer a [`Question`] without a person.
//!
//! ```toml
//! [policy]
//! default = "ask"            # what no rule decides: ask (the default), allow or reject
//!
//! [[policy.rule]]
//! input = "*rm -rf*"         # glob over the input summary (command, path, URL)
//! decision = "reject"
//!
//! [[policy.rule]]
//! kind = ["read", "search"]  # the ACP tool kind(s)
//! decision = "allow"
//!
//! [[policy.rule]]
//! kind = "execute"
//! input = "cargo test*"
//! decision = "allow"
//! ```
//!
//! The first rule whose every given field matches decides. A rule matches on
//! `tool` (a glob over the tool's name, any case), `kind` (one or a list)
//! and `input` (a glob where `*` matches anything, spaces and slashes
//! included). Decisions: `allow` picks the "allow once" option, `allow-always`
//! the "allow always" one, `reject` a reject option, `ask` leaves the
//! question to a person. An `allow` rule never matches an input that chains
//! shell commands (`;`, `&`, `|`, backquote, `$(`, `>`, `<`, newline) unless
//! its own pattern contains that character, so `cargo test*` does not allow
//! `cargo test; curl … | sh`.
//!
//! Only the project's file is read: the policy is part of the project and
//! reviewed with it. The policy never answers on a human seat.

use std::path::Path;

use regex::Regex;
use serde_json::{Value, json};

use drover_config::{ConfigError, ConfigFile, Scope};
use drover_gate::{Effect, Sourced};
use drover_run::question::{ChoiceKind, Question};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Ask,
    Allow,
    AllowAlways,
    Reject,
}

impl Decision {
    fn allows(self) -> bool {
        matches!(self, Decision::Allow | Decision::AllowAlways)
    }

    fn parse(text: &str) -> Option<Decision> {
        match text {
            "ask" => Some(Decision::Ask),
            "allow" => Some(Decision::Allow),
            "allow-always" => Some(Decision::AllowAlways),
            "reject" => Some(Decision::Reject),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Ask => "ask",
            Decision::Allow => "allow",
            Decision::AllowAlways => "allow-always",
            Decision::Reject => "reject",
        }
    }

    /// The option kinds that carry out this decision, best first.
    fn kinds(self) -> &'static [ChoiceKind] {
        match self {
            Decision::Ask => &[],
            Decision::Allow => &[ChoiceKind::AllowOnce],
            Decision::AllowAlways => &[ChoiceKind::AllowAlways],
            Decision::Reject => &[ChoiceKind::RejectOnce, ChoiceKind::RejectAlways],
        }
    }
}

#[derive(Debug, Clone)]
struct Glob {
    text: String,
    regex: Regex,
}

impl Glob {
    fn new(text: &str, case_insensitive: bool) -> Result<Glob, regex::Error> {
        let mut pattern = String::from(if case_insensitive { "(?is)^" } else { "(?s)^" });
        for c in text.chars() {
            match c {
                '*' => pattern.push_str(".*"),
                '?' => pattern.push('.'),
                c => pattern.push_str(&regex::escape(&c.to_string())),
            }
        }
        pattern.push('$');
        Ok(Glob {
            text: text.to_string(),
            regex: Regex::new(&pattern)?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Rule {
    /// `path:line` of the rule, for the journal and error messages.
    pub at: String,
    pub index: usize,
    tool: Option<Glob>,
    kinds: Vec<String>,
    input: Option<Glob>,
    pub decision: Decision,
}

/// Characters that chain or redirect shell commands.
const SHELL_CHAINING: &[&str] = &[";", "&", "|", "`", "$(", ">", "<", "\n"];

impl Rule {
    fn matches(&self, q: &Question) -> bool {
        // Raising a budget is spending money: only a rule that names the
        // kind decides it, never a catch-all.
        if q.kind == BUDGET && !self.kinds.iter().any(|k| k == BUDGET) {
            return false;
        }
        if let Some(tool) = &self.tool
            && !tool.regex.is_match(&q.tool)
        {
            return false;
        }
        if !self.kinds.is_empty() && !self.kinds.contains(&q.kind) {
            return false;
        }
        if let Some(input) = &self.input {
            if !input.regex.is_match(&q.input) {
                return false;
            }
            if matches!(self.decision, Decision::Allow | Decision::AllowAlways)
                && SHELL_CHAINING
                    .iter()
                    .any(|op| q.input.contains(op) && !input.text.contains(op))
            {
                return false;
            }
        }
        true
    }

    /// How the journal names the rule.
    pub fn describe(&self) -> Value {
        json!({
            "at": self.at,
            "index": self.index,
            "tool": self.tool.as_ref().map(|g| g.text.clone()),
            "kind": self.kinds,
            "input": self.input.as_ref().map(|g| g.text.clone()),
            "decision": self.decision.as_str(),
        })
    }
}

#[derive(Debug, Clone)]
pub struct Policy {
    rules: Vec<Rule>,
    default: Decision,
    /// Where `default` was set, when it was.
    default_at: Option<String>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            rules: Vec::new(),
            default: Decision::Ask,
            default_at: None,
        }
    }
}

/// What the policy decided for a question.
#[derive(Debug, Clone, PartialEq)]
pub struct Ruling {
    pub option: String,
    pub decision: Decision,
    /// The rule (or the default) that decided, as journaled.
    pub rule: Value,
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
}

impl Policy {
    /// The project's policy; no `[policy]` table means "ask".
    ///
    /// The project's file comes with the checkout, so its `allow` decisions
    /// (rules, or an `allow` default) count only once the user trusts the
    /// project (`drover trust`); until then they are set aside and those
    /// questions go to a person. Its `reject` and `ask` decisions always
    /// apply: they can only make a run more careful.
    pub fn load(project: &Path) -> Result<Policy, PolicyError> {
        let trust = crate::Trust::load(project).ok();
        Policy::load_trusting(project, |file, sha256| {
            trust
                .as_ref()
                .is_some_and(|t| t.trusts_digest(file, sha256))
        })
    }

    /// [`Policy::load`] with the trust check given: `trusts(path, sha256)`
    /// is asked about the digest of the bytes this load parsed, and the file
    /// is read exactly once, so the bytes that decide are the bytes checked.
    pub fn load_trusting(
        project: &Path,
        trusts: impl FnOnce(&Path, &str) -> bool,
    ) -> Result<Policy, PolicyError> {
        let path = drover_config::project_path(project);
        let Some(file) = ConfigFile::read(&path, Scope::Project, trusts)? else {
            return Ok(Policy::default());
        };
        Policy::from_project_file(&file)
    }

    /// The policy of settings files the command already loaded (only the
    /// project's file counts).
    pub fn from_config(config: &drover_config::Config) -> Result<Policy, PolicyError> {
        match &config.project {
            Some(file) => Policy::from_project_file(file),
            None => Ok(Policy::default()),
        }
    }

    /// The policy of a project file already loaded: its allow decisions
    /// count only if the file's provenance lets them.
    pub fn from_project_file(file: &ConfigFile) -> Result<Policy, PolicyError> {
        let policy = Policy::from_file(file)?;
        if !policy.allows_anything() {
            return Ok(policy);
        }
        // An allow answers a tool's permission question: it lets the CLI
        // act (start processes, write) as if a person agreed.
        match drover_gate::clear(
            Effect::Spawn,
            &format!("{}: [policy] allow decisions", file.path.display()),
            Sourced::new((), file.provenance()),
        ) {
            Ok(_) => Ok(policy),
            Err(refused) => {
                tracing::warn!("{}", drover_config::set_aside(&refused));
                Ok(policy.without_allows())
            }
        }
    }

    /// The policy with its allow decisions turned into "ask a person".
    fn without_allows(mut self) -> Policy {
        self.rules.retain(|r| !r.decision.allows());
        if self.default.allows() {
            self.default = Decision::Ask;
        }
        self
    }

    fn allows_anything(&self) -> bool {
        self.default.allows() || self.rules.iter().any(|r| r.decision.allows())
    }

    pub fn from_file(file: &ConfigFile) -> Result<Policy, PolicyError> {
        let mut policy = Policy::default();
        let Some(table) = file.get(&["policy"]) else {
            return Ok(policy);
        };
        let invalid = |keys: &[&str], message: String| PolicyError::Invalid {
            at: file.locate(keys),
            message,
        };
        let Some(table) = table.as_table() else {
            return Err(invalid(
                &["policy"],
                "must be a table ([policy])".to_string(),
            ));
        };
        for key in table.keys() {
            if key != "default" && key != "rule" {
                return Err(invalid(
                    &["policy", key],
                    "unknown key (known: default, rule)".to_string(),
                ));
            }
        }
        if let Some(value) = table.get("default") {
            policy.default = value
                .as_str()
                .and_then(Decision::parse)
                .filter(|d| *d != Decision::AllowAlways)
                .ok_or_else(|| {
                    invalid(
                        &["policy", "default"],
                        format!("{value} is not a default decision (ask, allow, reject)"),
                    )
                })?;
            policy.default_at = Some(file.locate(&["policy", "default"]));
        }
        let rules = match table.get("rule") {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => items.clone(),
            Some(_) => {
                return Err(invalid(
                    &["policy", "rule"],
                    "must be an array of tables ([[policy.rule]])".to_string(),
                ));
            }
        };
        for (index, item) in rules.iter().enumerate() {
            let n = index.to_string();
            let locate = |field: &str| {
                if field.is_empty() {
                    file.locate(&["policy", "rule", &n])
                } else {
                    file.locate(&["policy", "rule", &n, field])
                }
            };
            let bad = |field: &'static str, message: String| PolicyError::Invalid {
                at: locate(field),
                message,
            };
            let Some(rule) = item.as_table() else {
                return Err(bad("", "a rule must be a table".to_string()));
            };
            for key in rule.keys() {
                if !["tool", "kind", "input", "decision"].contains(&key.as_str()) {
                    return Err(PolicyError::Invalid {
                        at: locate(key),
                        message: "unknown key (known: tool, kind, input, decision)".to_string(),
                    });
                }
            }
            let text = |field: &'static str| -> Result<Option<String>, PolicyError> {
                match rule.get(field) {
                    None => Ok(None),
                    Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                    Some(other) => Err(bad(field, format!("must be a string, not {other}"))),
                }
            };
            let glob = |field: &'static str, text: Option<String>, any_case: bool| {
                text.map(|t| Glob::new(&t, any_case))
                    .transpose()
                    .map_err(|e| bad(field, format!("is not a usable pattern: {e}")))
            };
            let tool = glob("tool", text("tool")?, true)?;
            let input = glob("input", text("input")?, false)?;
            let kinds = match rule.get("kind") {
                None => Vec::new(),
                Some(toml::Value::String(s)) => vec![s.clone()],
                Some(toml::Value::Array(items)) => items
                    .iter()
                    .map(|k| {
                        k.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| bad("kind", format!("{k} is not a string")))
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(bad(
                        "kind",
                        format!("must be a string or a list, not {other}"),
                    ));
                }
            };
            for kind in &kinds {
                if !KINDS.contains(&kind.as_str()) {
                    return Err(bad(
                        "kind",
                        format!("'{kind}' is not a tool kind ({})", KINDS.join(", ")),
                    ));
                }
            }
            let decision =
                text("decision")?.ok_or_else(|| bad("", "a rule needs a decision".to_string()))?;
            let decision = Decision::parse(&decision).ok_or_else(|| {
                bad(
                    "decision",
                    format!("'{decision}' is not a decision (allow, allow-always, reject, ask)"),
                )
            })?;
            if tool.is_none() && kinds.is_empty() && input.is_none() {
                return Err(bad(
                    "",
                    "a rule must match on at least one of tool, kind, input (use [policy] default for the rest)"
                        .to_string(),
                ));
            }
            policy.rules.push(Rule {
                at: locate(""),
                index,
                tool,
                kinds,
                input,
                decision,
            });
        }
        Ok(policy)
    }

    /// The option the policy picks for `question`, or `None` to ask a
    /// person. A rule whose decision the question offers no option for
    /// (an `allow` where only "allow always" is offered) asks.
    pub fn decide(&self, question: &Question) -> Option<Ruling> {
        let (decision, rule) = match self.rules.iter().find(|r| r.matches(question)) {
            Some(rule) => (rule.decision, rule.describe()),
            None if question.kind == BUDGET => return None,
            None => (
                self.default,
                json!({"at": self.default_at.clone().unwrap_or_else(|| "default".to_string()), "decision": self.default.as_str()}),
            ),
        };
        let option = decision.kinds().iter().find_map(|kind| {
            question
                .options
                .iter()
                .find(|c| c.kind == *kind)
                .map(|c| c.id.clone())
        })?;
        Some(Ruling {
            option,
            decision,
            rule,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.default == Decision::Ask
    }
}

/// The kinds a rule may name: ACP's tool kinds, and the prompt kinds a
/// pane's dialog shows (`permission`, `trust-dialog`, …).
pub const KINDS: &[&str] = &[
    "permission",
    "trust-dialog",
    "hooks-review",
    "model-nudge",
    "resume-choice",
    "question",
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
    BUDGET,
];

/// The kind of drover's own question when a budget is reached.
const BUDGET: &str = "budget";

#[cfg(test)]
mod tests;
