//! The sanitizer: the only way bytes reach a `probe-adapter` report.
//!
//! Reports are written to be pasted into public issues, so the rule is
//! "reduce at collection, then check at egress":
//!
//! - Every string in a report is a [`Clean`], and a `Clean` can only be made
//!   here: from data through one of the [`Sanitizer`] methods, or from
//!   drover's own literal text ([`Clean::lit`], [`clean!`]).
//! - Collection keeps shapes, not values: identifier-shaped strings survive,
//!   everything else is reduced to a `<redacted:…>` marker; the home
//!   directory becomes `~`, the project directory `<project>`, location
//!   variables `$NAME`; the username, emails, URL credentials and
//!   secret-shaped tokens are redacted; the project directory's name is
//!   replaced by an alias salted per run (so two reports cannot be
//!   correlated and the alias cannot be reversed by guessing names).
//! - [`Sanitizer::guard`] re-scans the rendered bytes. A stray project name
//!   or anchored path is repaired and disclosed (a routing gap, not a leak);
//!   an email, secret, home path, URL credential or the username makes the
//!   command refuse to emit anything.
//!
//! What this does not promise is in docs/probe-adapter.md.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use sha2::{Digest, Sha256};

mod patterns;

use patterns::{
    ASSIGNED_SECRET, EMAIL, HOME_PATH, OTHER_HOME, OTHER_HOME_PREFIX, URL_CREDENTIALS,
    URL_USERINFO, WINDOWS_HOME, find_bounded, find_standalone, fresh_salt, replace_bounded,
    replace_spans, replace_standalone,
};
pub use patterns::{is_identifier, looks_like_secret, secret_spans};

/// Usernames shorter than this are not matched in free text: a two-letter
/// name would redact half of every help screen. Path components are still
/// checked for them exactly.
pub const MIN_USERNAME: usize = 4;
/// Last components of a home directory that are not a username.
const GENERIC_HOME_NAMES: [&str; 4] = ["home", "users", "user", "tmp"];
/// Project names shorter than this are aliased only where they form a whole
/// path component or identifier, never inside free text.
pub const MIN_ALIAS_IN_TEXT: usize = 4;
/// Longest identifier kept verbatim.
const MAX_IDENTIFIER: usize = 80;
/// Characters kept per line of free text.
const MAX_COLUMNS: usize = 240;
/// Path components shown before the rest is elided.
const MAX_COMPONENTS: usize = 24;

/// Text that went through the sanitizer, or is drover's own literal text.
/// The field is private: data cannot become a `Clean` any other way.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Clean(String);

impl Clean {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// drover's own words: a literal in the source, never data.
    pub fn lit(text: &'static str) -> Clean {
        Clean(text.to_string())
    }

    /// A number (counts, sizes): numbers carry no names.
    pub fn count(n: u64) -> Clean {
        Clean(n.to_string())
    }

    /// Only for [`clean!`], which accepts a literal format and `Clean`
    /// arguments.
    #[doc(hidden)]
    pub fn __composed(text: String) -> Clean {
        Clean(text)
    }
}

impl fmt::Display for Clean {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for Clean {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// `format!` for [`Clean`]: a literal format string and `Clean` arguments
/// only (positional `{}`; never capture a variable by name in the literal).
macro_rules! clean {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::sanitize::Clean::__composed(format!(
            $fmt $(, $crate::sanitize::Clean::as_str(&$arg))*
        ))
    };
}
pub(crate) use clean;

/// Who is running drover: what must never appear in a report.
#[derive(Clone, Debug, Default)]
pub struct Identity {
    pub home: Option<String>,
    pub usernames: Vec<String>,
}

impl Identity {
    /// `HOME` (or `USERPROFILE`), and `USER`, `LOGNAME`, `USERNAME` plus the
    /// home directory's last component unless it is a generic name.
    pub fn from_env() -> Identity {
        Identity::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Identity {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let home = var("HOME")
            .or_else(|| var("USERPROFILE"))
            .map(|h| h.trim_end_matches(['/', '\\']).to_string())
            .filter(|h| !h.is_empty());
        let mut usernames: Vec<String> = ["USER", "LOGNAME", "USERNAME"]
            .iter()
            .filter_map(|v| var(v))
            .collect();
        // A home named like its parent's convention (`/home`, `/Users`, a
        // scratch `…/home`) says nothing about the user, and taking it as a
        // username would flag drover's own `<home>` placeholder.
        if let Some(last) = home
            .as_deref()
            .and_then(|h| Path::new(h).file_name())
            .and_then(|n| n.to_str())
            .filter(|n| !GENERIC_HOME_NAMES.contains(&n.to_ascii_lowercase().as_str()))
        {
            usernames.push(last.to_string());
        }
        usernames.sort();
        usernames.dedup();
        Identity { home, usernames }
    }
}

/// A value replaced by a fixed placeholder wherever it shows up.
#[derive(Clone, Debug)]
struct Anchor {
    original: String,
    placeholder: String,
    /// The label a guard repair is disclosed under; `None` = a hard rule
    /// (the home directory) that refuses instead of repairing.
    label: Option<String>,
}

#[derive(Clone, Debug)]
struct Alias {
    original: String,
    alias: String,
}

/// Hard rules the egress guard refuses on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to emit: the leak check fired ({})", .rules.join(", "))]
pub struct Leak {
    pub rules: Vec<&'static str>,
}

/// What the guard repaired: label -> occurrences.
pub type Repairs = BTreeMap<String, u64>;

pub struct Sanitizer {
    /// Longest original first, so `/home/u/proj` wins over `/home/u`.
    anchors: Vec<Anchor>,
    /// Lowercased, at least [`MIN_USERNAME`] characters for text matching.
    usernames: Vec<String>,
    /// Every known username, any length, lowercased (path components).
    all_usernames: Vec<String>,
    aliases: Vec<Alias>,
    salt: [u8; 16],
}

impl Sanitizer {
    pub fn new(identity: &Identity) -> Sanitizer {
        Sanitizer::with_salt(identity, fresh_salt())
    }

    pub fn with_salt(identity: &Identity, salt: [u8; 16]) -> Sanitizer {
        let all_usernames: Vec<String> = identity
            .usernames
            .iter()
            .map(|u| u.trim().to_lowercase())
            .filter(|u| !u.is_empty())
            .collect();
        let mut sanitizer = Sanitizer {
            anchors: Vec::new(),
            usernames: all_usernames
                .iter()
                .filter(|u| u.chars().count() >= MIN_USERNAME)
                .cloned()
                .collect(),
            all_usernames,
            aliases: Vec::new(),
            salt,
        };
        if let Some(home) = identity.home.as_deref() {
            sanitizer.add_anchor_labelled(home, "~", None);
            // The same directory by its resolved name (a symlinked home).
            if let Ok(real) = std::fs::canonicalize(home)
                && let Some(real) = real.to_str()
            {
                sanitizer.add_anchor_labelled(real, "~", None);
            }
        }
        sanitizer
    }

    /// Registers the project directory: its path becomes `<project>` and its
    /// name a salted alias, unless the name is one of `keep` (the CLI or
    /// binary name, which the report must be able to say).
    pub fn add_project(&mut self, dir: &Path, keep: &[&str]) {
        for path in [Some(dir.to_path_buf()), std::fs::canonicalize(dir).ok()]
            .into_iter()
            .flatten()
        {
            if let Some(text) = path.to_str() {
                self.add_anchor_labelled(text, "<project>", Some("project-dir".to_string()));
            }
            if let Some(name) = path.file_name().and_then(|n| n.to_str())
                && !keep.contains(&name)
                && !self.aliases.iter().any(|a| a.original == name)
            {
                let alias = self.alias_for("project", name);
                self.aliases.push(Alias {
                    original: name.to_string(),
                    alias,
                });
            }
        }
    }

    /// A location variable handed to a component: its value becomes `$NAME`.
    pub fn add_variable(&mut self, name: &str, value: &str) {
        let value = value.trim_end_matches(['/', '\\']);
        if value.chars().count() >= 3 && is_identifier(name) {
            self.add_anchor_labelled(value, &format!("${name}"), Some(format!("env:{name}")));
        }
    }

    fn add_anchor_labelled(&mut self, original: &str, placeholder: &str, label: Option<String>) {
        let original = original.trim_end_matches(['/', '\\']);
        if original.is_empty() || self.anchors.iter().any(|a| a.original == original) {
            return;
        }
        self.anchors.push(Anchor {
            original: original.to_string(),
            placeholder: placeholder.to_string(),
            label,
        });
        self.anchors
            .sort_by_key(|a| std::cmp::Reverse(a.original.len()));
    }

    fn alias_for(&self, namespace: &str, original: &str) -> String {
        let mut hasher = Sha256::new();
        hasher.update(self.salt);
        hasher.update(namespace.as_bytes());
        hasher.update([0]);
        hasher.update(original.as_bytes());
        let digest = hasher.finalize();
        format!("{namespace}-{}", drover_types::text::hex(&digest[..6]))
    }

    /// The alias the project name got, for tests and the local legend.
    pub fn project_alias(&self) -> Option<&str> {
        self.aliases.first().map(|a| a.alias.as_str())
    }

    // ----- collection -------------------------------------------------

    /// A name that should be an identifier (event, dialect, parser, CLI
    /// name): kept when identifier-shaped and harmless, else a marker.
    pub fn identifier(&self, raw: &str) -> Clean {
        self.identifier_or(raw, "<redacted:str>")
    }

    /// A JSON key on a schema path: kept when identifier-shaped, else `<key>`.
    pub fn key(&self, raw: &str) -> Clean {
        self.identifier_or(raw, "<key>")
    }

    fn identifier_or(&self, raw: &str, marker: &'static str) -> Clean {
        if let Some(alias) = self.aliases.iter().find(|a| a.original == raw) {
            return Clean(alias.alias.clone());
        }
        if looks_like_secret(raw) {
            return Clean::lit("<redacted:secret>");
        }
        if !is_identifier(raw) || raw.chars().count() > MAX_IDENTIFIER {
            return Clean::lit(marker);
        }
        if self.embeds_username(raw) {
            return Clean::lit("<redacted:user>");
        }
        Clean(self.replace_aliases(raw))
    }

    /// A filesystem path (or a glob when `glob`): anchors become `~`,
    /// `<project>` or `$NAME`; each other component is kept only when it is
    /// name-shaped and carries no username or secret.
    pub fn path(&self, raw: &str, glob: bool) -> Clean {
        let raw = raw.trim();
        let mut out = String::new();
        let mut rest = raw;
        if let Some(anchor) = self.anchors.iter().find(|a| {
            raw == a.original
                || raw
                    .strip_prefix(a.original.as_str())
                    .is_some_and(|r| r.starts_with(['/', '\\']))
        }) {
            out.push_str(&anchor.placeholder);
            rest = &raw[anchor.original.len()..];
        } else if raw == "~" || raw.starts_with("~/") {
            out.push('~');
            rest = &raw[1..];
        } else if let Some(home) = OTHER_HOME_PREFIX.find(raw) {
            // Someone's home that is not `$HOME` (a tool installed by
            // another account, a `sudo` run): its owner is as personal.
            out.push_str("<home>");
            rest = &raw[home.end()..];
        }
        let absolute = out.is_empty() && rest.starts_with(['/', '\\']);
        let components: Vec<&str> = rest.split(['/', '\\']).filter(|c| !c.is_empty()).collect();
        for (i, component) in components.iter().take(MAX_COMPONENTS).enumerate() {
            if i > 0 || !out.is_empty() || absolute {
                out.push('/');
            }
            out.push_str(&self.component(component, glob));
        }
        if components.len() > MAX_COMPONENTS {
            out.push_str("/…");
        }
        if out.is_empty() && absolute {
            out.push('/');
        }
        Clean(out)
    }

    fn component(&self, c: &str, glob: bool) -> String {
        if c == "." || c == ".." {
            return c.to_string();
        }
        if let Some(alias) = self.aliases.iter().find(|a| a.original == c) {
            return alias.alias.clone();
        }
        if looks_like_secret(c) {
            return "<redacted:secret>".to_string();
        }
        let body = c.strip_prefix('.').unwrap_or(c);
        let shaped = !body.is_empty()
            && c.chars().count() <= MAX_IDENTIFIER
            && body.chars().all(|ch| {
                ch.is_ascii_alphanumeric()
                    || matches!(ch, '.' | '_' | '-')
                    || (glob && matches!(ch, '*' | '?'))
            });
        if !shaped {
            return "<redacted>".to_string();
        }
        // Long usernames are caught anywhere inside a component (`-home-
        // alice-proj`); short ones only as a whole word, or `al` would
        // redact every `local`.
        let lower = c.to_lowercase();
        let embeds = self.all_usernames.iter().any(|u| {
            if u.chars().count() >= MIN_USERNAME {
                lower.contains(u.as_str())
            } else {
                !find_standalone(&lower, u, true).is_empty()
            }
        });
        if embeds {
            return "<redacted:user>".to_string();
        }
        self.replace_aliases(c)
    }

    /// Free text (version and help output, log tails, messages): bounded to
    /// `max_lines` lines of [`MAX_COLUMNS`] characters, control characters
    /// and ANSI escapes removed, then every rule applied.
    pub fn text(&self, raw: &str, max_lines: usize) -> Clean {
        let stripped = strip_ansi_escapes::strip_str(raw);
        let all: Vec<&str> = stripped.lines().collect();
        let mut lines: Vec<String> = all
            .iter()
            .take(max_lines)
            .map(|line| {
                let mut printable: String = line
                    .chars()
                    .map(|c| if c == '\t' { ' ' } else { c })
                    .filter(|c| !c.is_control())
                    .collect();
                if printable.chars().count() > MAX_COLUMNS {
                    printable = printable.chars().take(MAX_COLUMNS).collect();
                    printable.push('…');
                }
                self.scrub_line(printable.trim_end())
            })
            .collect();
        if all.len() > max_lines {
            lines.push(format!(
                "… ({} more lines not shown)",
                all.len() - max_lines
            ));
        }
        Clean(lines.join("\n"))
    }

    fn scrub_line(&self, line: &str) -> String {
        let mut s = line.to_string();
        for anchor in &self.anchors {
            s = replace_bounded(&s, &anchor.original, &anchor.placeholder);
        }
        s = OTHER_HOME.replace_all(&s, "<home>").into_owned();
        s = WINDOWS_HOME.replace_all(&s, "<home>").into_owned();
        s = s.replace("/root/", "<home>/");
        s = URL_USERINFO
            .replace_all(&s, "$scheme<redacted>@")
            .into_owned();
        s = EMAIL.replace_all(&s, "<redacted:email>").into_owned();
        s = ASSIGNED_SECRET
            .replace_all(&s, "$name<redacted:secret>")
            .into_owned();
        s = replace_spans(&s, &secret_spans(&s), "<redacted:secret>");
        for user in &self.usernames {
            s = replace_standalone(&s, user, "<redacted:user>", true).0;
        }
        self.replace_aliases(&s)
    }

    fn replace_aliases(&self, s: &str) -> String {
        let mut out = s.to_string();
        for alias in &self.aliases {
            if alias.original.chars().count() >= MIN_ALIAS_IN_TEXT {
                out = replace_standalone(&out, &alias.original, &alias.alias, false).0;
            }
        }
        out
    }

    fn embeds_username(&self, s: &str) -> bool {
        let lower = s.to_lowercase();
        self.usernames.iter().any(|u| lower.contains(u.as_str()))
    }

    // ----- egress -----------------------------------------------------

    /// The hard rules that fire on `text`.
    pub fn hard_rules(&self, text: &str) -> Vec<&'static str> {
        let mut fired = Vec::new();
        if EMAIL.is_match(text) {
            fired.push("email");
        }
        if URL_CREDENTIALS.is_match(text) {
            fired.push("url-credentials");
        }
        let own_home = self
            .anchors
            .iter()
            .filter(|a| a.label.is_none())
            .any(|a| !find_bounded(text, &a.original).is_empty());
        if own_home || HOME_PATH.is_match(text) {
            fired.push("home-path");
        }
        if !secret_spans(text).is_empty() {
            fired.push("secret");
        }
        if self
            .usernames
            .iter()
            .any(|u| !find_standalone(text, u, true).is_empty())
        {
            fired.push("username");
        }
        fired
    }

    /// The egress guard over rendered bytes. Repairs stray project names and
    /// anchored paths (returning what it repaired, to be disclosed); refuses
    /// on any hard rule, and when repairs do not converge.
    pub fn guard(&self, rendered: String) -> Result<(String, Repairs), Leak> {
        let mut text = rendered;
        let mut repairs = Repairs::new();
        for _ in 0..3 {
            let fired = self.hard_rules(&text);
            if !fired.is_empty() {
                return Err(Leak { rules: fired });
            }
            let mut changed = false;
            for (needle, replacement, label) in self.soft_needles() {
                let (next, n) = replace_standalone(&text, &needle, &replacement, false);
                if n > 0 {
                    *repairs.entry(label).or_default() += n;
                    text = next;
                    changed = true;
                }
            }
            if !changed {
                return Ok((text, repairs));
            }
        }
        Err(Leak {
            rules: vec!["repairs-did-not-converge"],
        })
    }

    /// The guard without repairs: the text must already be clean.
    pub fn check(&self, text: &str) -> Result<(), Leak> {
        let mut fired = self.hard_rules(text);
        if self
            .soft_needles()
            .iter()
            .any(|(needle, _, _)| !find_standalone(text, needle, false).is_empty())
        {
            fired.push("stray-original");
        }
        if fired.is_empty() {
            Ok(())
        } else {
            Err(Leak { rules: fired })
        }
    }

    /// (needle, replacement, label), longest needle first; each original
    /// also in its JSON-escaped spelling.
    fn soft_needles(&self) -> Vec<(String, String, String)> {
        let mut needles = Vec::new();
        for anchor in &self.anchors {
            if let Some(label) = &anchor.label {
                needles.push((
                    anchor.original.clone(),
                    anchor.placeholder.clone(),
                    label.clone(),
                ));
            }
        }
        for alias in &self.aliases {
            if alias.original.chars().count() >= MIN_ALIAS_IN_TEXT {
                needles.push((
                    alias.original.clone(),
                    alias.alias.clone(),
                    format!("project:{}", alias.alias),
                ));
            }
        }
        let escaped: Vec<(String, String, String)> = needles
            .iter()
            .filter_map(|(n, r, l)| {
                let json = serde_json::to_string(n).ok()?;
                let inner = json.get(1..json.len().saturating_sub(1))?.to_string();
                (inner != *n).then(|| (inner, r.clone(), l.clone()))
            })
            .collect();
        needles.extend(escaped);
        needles.sort_by_key(|n| std::cmp::Reverse(n.0.len()));
        needles
    }
}

#[cfg(test)]
mod tests;
