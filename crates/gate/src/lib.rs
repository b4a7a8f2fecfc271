//! drover-gate: the one gate between drover's inputs and its effects outside
//! the sandbox.
//!
//! Every input that can drive an effect — start a process, connect
//! somewhere, write or delete a file outside `.drover/`, read a file for a
//! component, signal a process, close a pane, print to a terminal — is a
//! [`Sourced`] value that says where it came from ([`Provenance`]). The only
//! way to get the [`Cleared`] value an effect function takes is [`clear`],
//! which looks the pair (effect, provenance) up in one table ([`allows`]) and
//! refuses the rest with a [`Refused`] error naming the input and its source.
//! docs/security.md mirrors that table row for row.
//!
//! Below the table, two tools the effects need to prove provenance: [`seal`]
//! (a per-user HMAC over the records drover writes, so a record committed to a
//! checkout is told apart from one this user's drover wrote) and [`read`]
//! (bounded reads of files from a checkout or named by a component).

pub mod read;
pub mod seal;

use std::fmt;

/// Where an input came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provenance {
    /// Compiled into drover (built-in profiles and components).
    Builtin,
    /// The user's own settings (`~/.config/drover/…`) and environment.
    User,
    /// This command's own arguments: the person at the keyboard chose them.
    Operator,
    /// A project file (`.drover/…`) whose bytes the user trusted.
    TrustedProject,
    /// A project file the user has not trusted (or changed since).
    UntrustedProject,
    /// Made by this drover process (a process it started, a pane it opened).
    Created,
    /// A run-directory record sealed by this user's drover ([`seal`]).
    SealedRecord,
    /// A run-directory record without a valid seal: a checkout may have
    /// committed it.
    ForeignRecord,
    /// Anything a program wrote: a CLI's output and transcripts, a
    /// component's parse answers, a cluster's logs, a hook payload.
    Output,
}

impl Provenance {
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Builtin => "built-in",
            Provenance::User => "user settings",
            Provenance::Operator => "the command line",
            Provenance::TrustedProject => "trusted project settings",
            Provenance::UntrustedProject => "untrusted project settings",
            Provenance::Created => "this drover",
            Provenance::SealedRecord => "a record this drover sealed",
            Provenance::ForeignRecord => {
                "a record drover did not seal (a checkout may have committed it)"
            }
            Provenance::Output => "program output",
        }
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An effect drover has outside its sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Start a process: its binary, argv, environment and cwd.
    Spawn,
    /// Open a connection (Ray, herdr, a webhook).
    Connect,
    /// Write or create a file outside `.drover/`.
    Write,
    /// Delete a file.
    Delete,
    /// Read a file and hand its bytes to a component.
    ReadForComponent,
    /// Send a signal to a process.
    Signal,
    /// Close a tmux window or herdr pane.
    ClosePane,
}

impl Effect {
    pub const ALL: [Effect; 7] = [
        Effect::Spawn,
        Effect::Connect,
        Effect::Write,
        Effect::Delete,
        Effect::ReadForComponent,
        Effect::Signal,
        Effect::ClosePane,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Spawn => "start a process",
            Effect::Connect => "connect",
            Effect::Write => "write a file",
            Effect::Delete => "delete a file",
            Effect::ReadForComponent => "read a file for a component",
            Effect::Signal => "signal a process",
            Effect::ClosePane => "close a pane",
        }
    }
}

/// The table: which sources may drive which effect. Printing is not here:
/// every source may be printed, and everything printed goes through the
/// terminal sanitizer instead (docs/security.md).
pub fn allows(effect: Effect, from: Provenance) -> bool {
    use Provenance::*;
    match effect {
        // What runs, and where it connects, is chosen by the user, drover, or
        // project settings the user reviewed; never by a record or output.
        Effect::Spawn => matches!(from, Builtin | User | Operator | TrustedProject),
        Effect::Connect => matches!(
            from,
            Builtin | User | Operator | TrustedProject | SealedRecord
        ),
        // Paths outside `.drover/` come from the user or reviewed settings,
        // or a sealed record naming a file drover itself chose.
        Effect::Write | Effect::Delete => {
            matches!(
                from,
                Builtin | User | Operator | TrustedProject | Created | SealedRecord
            )
        }
        // A component's own choice of file is confined by `read::Roots`
        // first; what reaches this table is the root itself.
        Effect::ReadForComponent => !matches!(from, UntrustedProject | ForeignRecord),
        // Only what this drover made, or a sealed record of it, is signalled
        // or closed: never a pid or pane id some file merely names.
        Effect::Signal | Effect::ClosePane => matches!(from, Created | SealedRecord),
    }
}

/// A value with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub from: Provenance,
}

impl<T> Sourced<T> {
    pub fn new(value: T, from: Provenance) -> Sourced<T> {
        Sourced { value, from }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Sourced<U> {
        Sourced {
            value: f(self.value),
            from: self.from,
        }
    }
}

/// A value the gate let through for one effect. Only [`clear`] makes one,
/// so a function that takes a `Cleared<T>` cannot be reached around the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleared<T> {
    value: T,
    effect: Effect,
    from: Provenance,
}

impl<T> Cleared<T> {
    pub fn get(&self) -> &T {
        &self.value
    }

    pub fn into_inner(self) -> T {
        self.value
    }

    pub fn effect(&self) -> Effect {
        self.effect
    }

    pub fn from(&self) -> Provenance {
        self.from
    }
}

impl<T> std::ops::Deref for Cleared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// The gate's refusal: which effect, which input, from where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("drover will not {} with {input} from {from}{}", effect.as_str(), reason_suffix(.reason))]
pub struct Refused {
    pub effect: Effect,
    /// What the input is, e.g. "the Ray address" or "the pane to close".
    pub input: String,
    pub from: Provenance,
    /// Why, when the table alone does not say it.
    pub reason: Option<String>,
}

fn reason_suffix(reason: &Option<String>) -> String {
    reason
        .as_ref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default()
}

impl Refused {
    pub fn new(
        effect: Effect,
        input: impl Into<String>,
        from: Provenance,
        reason: impl Into<String>,
    ) -> Refused {
        Refused {
            effect,
            input: input.into(),
            from,
            reason: Some(reason.into()),
        }
    }
}

/// Lets `input` drive `effect` if its provenance allows it.
pub fn clear<T>(effect: Effect, what: &str, input: Sourced<T>) -> Result<Cleared<T>, Refused> {
    if allows(effect, input.from) {
        Ok(Cleared {
            value: input.value,
            effect,
            from: input.from,
        })
    } else {
        Err(Refused {
            effect,
            input: what.to_string(),
            from: input.from,
            reason: None,
        })
    }
}

/// The first of `candidates`, in precedence order, that may drive `effect`,
/// and the refusals of those set aside before it: a setting several sources
/// can give (a flag, the environment, project and user settings) takes the
/// most preferred one the table allows, and the caller can say what it
/// skipped.
pub fn clear_first<T>(
    effect: Effect,
    candidates: impl IntoIterator<Item = (String, Sourced<T>)>,
) -> (Option<Cleared<T>>, Vec<Refused>) {
    let mut refused = Vec::new();
    for (what, input) in candidates {
        match clear(effect, &what, input) {
            Ok(cleared) => return (Some(cleared), refused),
            Err(r) => refused.push(r),
        }
    }
    (None, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY_SOURCE: [Provenance; 9] = [
        Provenance::Builtin,
        Provenance::User,
        Provenance::Operator,
        Provenance::TrustedProject,
        Provenance::UntrustedProject,
        Provenance::Created,
        Provenance::SealedRecord,
        Provenance::ForeignRecord,
        Provenance::Output,
    ];

    #[test]
    fn nothing_a_checkout_or_a_program_chose_drives_an_effect_unreviewed() {
        for effect in Effect::ALL {
            for from in [Provenance::UntrustedProject, Provenance::ForeignRecord] {
                assert!(!allows(effect, from), "{effect:?} from {from:?}");
            }
        }
        for effect in [
            Effect::Spawn,
            Effect::Connect,
            Effect::Write,
            Effect::Delete,
            Effect::Signal,
            Effect::ClosePane,
        ] {
            assert!(
                !allows(effect, Provenance::Output),
                "{effect:?} from output"
            );
        }
    }

    #[test]
    fn only_what_drover_made_is_signalled_or_closed() {
        for effect in [Effect::Signal, Effect::ClosePane] {
            let allowed: Vec<Provenance> = EVERY_SOURCE
                .into_iter()
                .filter(|f| allows(effect, *f))
                .collect();
            assert_eq!(
                allowed,
                [Provenance::Created, Provenance::SealedRecord],
                "{effect:?}"
            );
        }
    }

    #[test]
    fn a_refusal_names_the_effect_the_input_and_its_source() {
        let refused = clear(
            Effect::Connect,
            "the Ray address",
            Sourced::new("http://x", Provenance::UntrustedProject),
        )
        .expect_err("refused");
        assert_eq!(
            refused.to_string(),
            "drover will not connect with the Ray address from untrusted project settings"
        );
        let cleared = clear(
            Effect::Connect,
            "the Ray address",
            Sourced::new("http://x", Provenance::User),
        )
        .expect("user");
        assert_eq!(*cleared.get(), "http://x");
        assert_eq!(cleared.from(), Provenance::User);
    }

    #[test]
    fn the_first_allowed_candidate_wins_and_the_skipped_are_named() {
        let (cleared, refused) = clear_first(
            Effect::Connect,
            [
                (
                    "the project's address".to_string(),
                    Sourced::new("evil", Provenance::UntrustedProject),
                ),
                (
                    "RAY_ADDRESS".to_string(),
                    Sourced::new("mine", Provenance::User),
                ),
                (
                    "the default".to_string(),
                    Sourced::new("default", Provenance::Builtin),
                ),
            ],
        );
        assert_eq!(cleared.map(Cleared::into_inner), Some("mine"));
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].input, "the project's address");
        let (none, refused) = clear_first(
            Effect::Spawn,
            [("x".to_string(), Sourced::new(1, Provenance::Output))],
        );
        assert!(none.is_none());
        assert_eq!(refused.len(), 1);
    }
}
