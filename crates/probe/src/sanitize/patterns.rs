//! What leaks look like: the patterns for emails, credentials, home paths
//! and secrets, and the helpers that find and replace them.

use std::sync::LazyLock;

use regex::Regex;

// ----- shapes -------------------------------------------------------------

/// `^[A-Za-z0-9][A-Za-z0-9._-]*$`
pub fn is_identifier(s: &str) -> bool {
    drover_profile::known::is_identifier(s)
}

pub(super) static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
        .expect("static regex")
});
/// Any userinfo in a URL, with or without a password (collection).
pub(super) static URL_USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@<>]+@").expect("static regex")
});
/// A URL carrying a password (egress).
pub(super) static URL_CREDENTIALS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s@]*:[^/@\s]+@").expect("static regex")
});
/// Somebody's home directory other than the current user's (collection).
pub(super) static OTHER_HOME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/(?:home|Users)/[A-Za-z0-9._-]+").expect("static regex"));
/// The home-directory part at the start of a path (for [`Sanitizer::path`]).
pub(super) static OTHER_HOME_PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:/(?:home|Users)/[^/\\]+|/root|(?i:[a-z]:\\users\\[^\\]+))(?:$|[/\\])")
        .expect("static regex")
});
pub(super) static WINDOWS_HOME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b[a-z]:\\{1,2}users\\{1,2}[^\\\s]+").expect("static regex"));
/// Any home-directory path (egress); doubled backslashes cover JSON text.
pub(super) static HOME_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"/(?:home|Users)/[A-Za-z0-9._-]|/root/|(?i:\b[a-z]:\\{1,2}users\\{1,2})")
        .expect("static regex")
});
/// `password=…`, `api_key: …` (collection only: the value is redacted).
pub(super) static ASSIGNED_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?P<name>\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)["']?\s*[=:]\s*["']?)[^\s<"',;&]{6,}"#,
    )
    .expect("static regex")
});
pub(super) static PREFIXED_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:sk-ant-|sk-proj-|sk-|github_pat_|glpat-|gss_|",
        r"xox[baprs]-|xapp-|ya29\.|AGAPP|dop_v1_|shpat_|rk_live_|sk_live_)",
        r"[A-Za-z0-9_.-]{8,}",
        // These prefixes also start ordinary names (`npm_config_cache`), so
        // they count only with the token's real alphanumeric body.
        r"|(?:ghp_|gho_|ghu_|ghs_|ghr_|npm_|hf_)[A-Za-z0-9]{30,}",
        r"|(?:AKIA|ASIA)[A-Z0-9]{16}|AIza[0-9A-Za-z_-]{30,}",
        r"|eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]*)?",
        r"|-----BEGIN [A-Z ]*PRIVATE KEY-----",
    ))
    .expect("static regex")
});
pub(super) static LONG_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9]{32,}").expect("static regex"));

pub(super) fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'.' | b'-')
}

/// Byte ranges of secret-shaped tokens: a known key prefix at a word start,
/// a JWT, a private-key header, or a long high-entropy alphanumeric run
/// (widened to the token around it). UUIDs and hyphenated names break into
/// short runs and pass.
pub fn secret_spans(s: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = s.as_bytes();
    let mut spans = Vec::new();
    for m in PREFIXED_SECRET.find_iter(s) {
        let at_word_start = m.start() == 0 || !bytes[m.start() - 1].is_ascii_alphanumeric();
        if at_word_start {
            spans.push(m.range());
        }
    }
    for m in LONG_RUN.find_iter(s) {
        let run = m.as_str();
        let random =
            entropy(run) >= 3.5 && (run.len() >= 40 || run.bytes().any(|b| b.is_ascii_digit()));
        if random {
            let mut start = m.start();
            while start > 0 && token_char(bytes[start - 1]) {
                start -= 1;
            }
            let mut end = m.end();
            while end < bytes.len() && token_char(bytes[end]) {
                end += 1;
            }
            spans.push(start..end);
        }
    }
    spans.sort_by_key(|r| r.start);
    let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

pub fn looks_like_secret(s: &str) -> bool {
    !secret_spans(s).is_empty()
}

/// Shannon entropy in bits per character.
pub(super) fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

pub(super) fn replace_spans(s: &str, spans: &[std::ops::Range<usize>], with: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&s[at..span.start]);
        out.push_str(with);
        at = span.end;
    }
    out.push_str(&s[at..]);
    out
}

pub(super) fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Occurrences of `needle` whose neighbours are an edge or a non-word byte
/// (`proj` inside `project` is not one; `proj` in `-proj-` is).
pub(super) fn find_standalone(hay: &str, needle: &str, ignore_case: bool) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    let (h, n) = if ignore_case {
        (hay.to_ascii_lowercase(), needle.to_ascii_lowercase())
    } else {
        (hay.to_string(), needle.to_string())
    };
    let hb = h.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(rel) = h.get(from..).and_then(|tail| tail.find(&n)) {
        let start = from + rel;
        let end = start + n.len();
        let left_ok = start == 0 || !word_byte(hb[start - 1]) || !word_byte(n.as_bytes()[0]);
        let right_ok =
            end == hb.len() || !word_byte(hb[end]) || !word_byte(n.as_bytes()[n.len() - 1]);
        if left_ok && right_ok {
            found.push(start);
            from = end;
        } else {
            from = start + 1;
        }
        while from < h.len() && !h.is_char_boundary(from) {
            from += 1;
        }
    }
    found
}

pub(super) fn replace_standalone(
    hay: &str,
    needle: &str,
    with: &str,
    ignore_case: bool,
) -> (String, u64) {
    let hits = find_standalone(hay, needle, ignore_case);
    let spans: Vec<_> = hits.iter().map(|&s| s..s + needle.len()).collect();
    (replace_spans(hay, &spans, with), hits.len() as u64)
}

/// Occurrences of a path not followed by more of a name (`/home/al` must not
/// match inside `/home/alice`).
pub(super) fn find_bounded(hay: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    let hb = hay.as_bytes();
    hay.match_indices(needle)
        .map(|(at, _)| at)
        .filter(|&at| {
            let end = at + needle.len();
            end == hb.len()
                || !(hb[end].is_ascii_alphanumeric() || matches!(hb[end], b'.' | b'_' | b'-'))
        })
        .collect()
}

pub(super) fn replace_bounded(hay: &str, needle: &str, with: &str) -> String {
    let spans: Vec<_> = find_bounded(hay, needle)
        .into_iter()
        .map(|s| s..s + needle.len())
        .collect();
    replace_spans(hay, &spans, with)
}

/// 16 bytes from the OS: the standard library seeds every `RandomState`
/// from the system RNG, so hashing fresh ones yields unpredictable bytes
/// without another dependency.
pub(super) fn fresh_salt() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut salt = [0u8; 16];
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    for (i, chunk) in salt.chunks_mut(8).enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(i);
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        chunk.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    salt
}
