//! Compiled regexes, cached for the life of the instance.
//!
//! The engine keeps an adapter's store alive across calls, so rules compiled
//! once serve every later `read-screen` and `classify-fault` call. Patterns
//! are regex-lite syntax: small code (the components stay a few hundred KB)
//! and linear-time matching, which is all rules over a screen or a log tail
//! need. An invalid pattern is cached as `None`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use regex_lite::Regex;

/// Enough for every built-in rule plus a profile's own patterns; a guest fed
/// endless distinct patterns starts over rather than growing without bound.
const CAPACITY: usize = 512;

thread_local! {
    static CACHE: RefCell<HashMap<String, Option<Regex>>> = RefCell::new(HashMap::new());
}

/// The compiled form of `pattern`, or `None` when it does not compile.
pub fn compiled(pattern: &str) -> Option<Regex> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(hit) = cache.get(pattern) {
            return hit.clone();
        }
        if cache.len() >= CAPACITY {
            cache.clear();
        }
        let regex = Regex::new(pattern).ok();
        cache.insert(pattern.to_string(), regex.clone());
        regex
    })
}

/// `text` with every non-ASCII whitespace character (the no-break space
/// U+00A0 that Claude Code's TUI prints after `❯` and `⎿`, U+202F, U+3000, …)
/// turned into an ASCII space. regex-lite's `\s` is ASCII-only, so rules
/// written with `\s` would otherwise miss text captured from real panes.
pub fn ascii_spaces(text: &str) -> Cow<'_, str> {
    let odd = |c: char| !c.is_ascii() && c.is_whitespace();
    if !text.contains(odd) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(|c| if odd(c) { ' ' } else { c }).collect())
}

#[cfg(test)]
mod tests {
    use super::{ascii_spaces, compiled};
    use std::borrow::Cow;

    #[test]
    fn compiles_once_and_remembers_failures() {
        assert!(compiled(r"^a+$").is_some_and(|r| r.is_match("aaa")));
        assert!(compiled(r"^a+$").is_some());
        assert!(compiled("(unclosed").is_none());
        assert!(compiled("(unclosed").is_none());
    }

    #[test]
    fn unicode_spaces_become_ascii() {
        assert_eq!(ascii_spaces("❯\u{a0}Resend"), "❯ Resend");
        assert_eq!(ascii_spaces("a\u{202f}b\u{3000}c\td"), "a b c\td");
        assert!(matches!(ascii_spaces("plain ❯ text"), Cow::Borrowed(_)));
        let rule = compiled(r"^❯\s+Resend").expect("compiles");
        assert!(!rule.is_match("❯\u{a0}Resend"));
        assert!(rule.is_match(&ascii_spaces("❯\u{a0}Resend")));
    }
}
