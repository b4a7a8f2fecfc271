//! Reading what a headless turn printed: its last line, its JSON lines, its
//! result object, and lines without terminal escape sequences.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The last non-blank line, trimmed.
pub fn last_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string)
}

/// The lines that are JSON objects, parsed, in order; other lines (banners,
/// warnings, broken JSON) are passed over.
pub fn json_lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .map(str::trim)
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
}

/// The result object `is_result` recognises: the whole of `stdout` when it
/// is one, else the last line that is one (stream output ends with it).
pub fn result_object<T: DeserializeOwned>(
    stdout: &str,
    is_result: impl Fn(&T) -> bool,
) -> Option<T> {
    if let Ok(whole) = serde_json::from_str::<T>(stdout.trim())
        && is_result(&whole)
    {
        return Some(whole);
    }
    stdout
        .lines()
        .rev()
        .filter(|l| l.trim_start().starts_with('{'))
        .filter_map(|l| serde_json::from_str::<T>(l).ok())
        .find(|r| is_result(r))
}

/// Removes CSI and OSC escape sequences (a CLI may color its stderr).
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_objects_are_found_where_a_cli_puts_them() {
        assert_eq!(last_line("a\n  b  \n\n"), Some("b".to_string()));
        assert_eq!(last_line(" \n"), None);
        let events: Vec<Value> = json_lines("banner\n{\"a\":1}\n{broken\n {\"b\":2}\n").collect();
        assert_eq!(
            events,
            [serde_json::json!({"a": 1}), serde_json::json!({"b": 2})]
        );
        let is_result = |v: &Value| v["type"] == "result";
        let stream =
            "{\"type\":\"result\",\"n\":1}\n{\"type\":\"result\",\"n\":2}\n{\"type\":\"other\"}\n";
        assert_eq!(
            result_object(stream, is_result).map(|v| v["n"].clone()),
            Some(2.into())
        );
        let pretty = "{\n  \"type\": \"result\",\n  \"n\": 3\n}\n";
        assert_eq!(
            result_object(pretty, is_result).map(|v| v["n"].clone()),
            Some(3.into())
        );
        assert_eq!(result_object("no json", is_result), None);
    }

    #[test]
    fn escape_sequences_go_and_text_stays() {
        assert_eq!(strip_ansi("\u{1b}[31mError:\u{1b}[0m boom"), "Error: boom");
        assert_eq!(strip_ansi("\u{1b}]0;title\u{7}after"), "after");
        assert_eq!(strip_ansi("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(strip_ansi("plain"), "plain");
    }
}
