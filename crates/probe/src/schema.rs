//! Token-usage schema inference: the shape of a transcript, never its
//! values. Each JSON entry is walked into dotted key paths (`message.usage.
//! input_tokens`, list items as `[]`) with the set of leaf types seen there.
//! Keys go through the sanitizer; values are only classified.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

use serde::Serialize;

use super::sanitize::{Clean, Sanitizer, clean};

/// Entries (JSON lines, or items of a top-level array) walked at most.
pub const MAX_ENTRIES: u64 = 20_000;
/// Distinct key paths kept; later ones are counted, not listed.
pub const MAX_PATHS: usize = 400;
/// Nesting walked before a subtree is summarized as `<deep>`.
const MAX_DEPTH: usize = 24;
/// Lines longer than this are skipped (counted as unreadable).
const MAX_LINE: usize = 8 << 20;
/// A whole-file JSON document is parsed only up to this size.
const MAX_DOCUMENT: u64 = 64 << 20;

/// What a leaf held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Leaf {
    Null,
    Bool,
    Int,
    Float,
    Str,
    /// An empty list or object.
    Empty,
}

impl Leaf {
    pub fn name(self) -> &'static str {
        match self {
            Leaf::Null => "null",
            Leaf::Bool => "bool",
            Leaf::Int => "int",
            Leaf::Float => "float",
            Leaf::Str => "str",
            Leaf::Empty => "empty",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct KeyPath {
    pub path: Clean,
    pub types: Vec<Leaf>,
}

/// The inferred schema of one transcript.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub entries_scanned: u64,
    pub unreadable_entries: u64,
    pub key_paths: Vec<KeyPath>,
    /// Paths beyond [`MAX_PATHS`].
    pub paths_omitted: u64,
    /// Integer leaves whose key names a token count.
    pub token_candidates: Vec<Clean>,
    /// Sum of every non-negative integer leaf: no honest usage total can
    /// exceed it, which bounds what an adapter's tally may claim.
    pub int_sum: u128,
    /// Entries whose integers were summed (`int_sum` covers only these).
    pub complete: bool,
}

#[derive(Default)]
struct Walker {
    paths: BTreeMap<Clean, BTreeSet<Leaf>>,
    omitted: BTreeSet<Clean>,
    int_sum: u128,
}

impl Walker {
    fn record(&mut self, path: Clean, leaf: Leaf) {
        if self.paths.len() >= MAX_PATHS && !self.paths.contains_key(&path) {
            self.omitted.insert(path);
            return;
        }
        self.paths.entry(path).or_default().insert(leaf);
    }

    fn walk(&mut self, s: &Sanitizer, value: &serde_json::Value, path: &Clean, depth: usize) {
        use serde_json::Value;
        if depth > MAX_DEPTH {
            self.record(clean!("{}.<deep>", path), Leaf::Empty);
            return;
        }
        match value {
            Value::Null => self.record(path.clone(), Leaf::Null),
            Value::Bool(_) => self.record(path.clone(), Leaf::Bool),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    self.int_sum = self.int_sum.saturating_add(u128::from(u));
                    self.record(path.clone(), Leaf::Int);
                } else if n.is_i64() {
                    self.record(path.clone(), Leaf::Int);
                } else {
                    self.record(path.clone(), Leaf::Float);
                }
            }
            Value::String(_) => self.record(path.clone(), Leaf::Str),
            Value::Array(items) if items.is_empty() => self.record(path.clone(), Leaf::Empty),
            Value::Array(items) => {
                let child = clean!("{}[]", path);
                for item in items {
                    self.walk(s, item, &child, depth + 1);
                }
            }
            Value::Object(map) if map.is_empty() => self.record(path.clone(), Leaf::Empty),
            Value::Object(map) => {
                for (key, item) in map {
                    let key = s.key(key);
                    let child = if path.as_str().is_empty() {
                        key
                    } else {
                        clean!("{}.{}", path, key)
                    };
                    self.walk(s, item, &child, depth + 1);
                }
            }
        }
    }
}

/// Whether the last key of a path names a token count.
fn token_like(path: &str) -> bool {
    let last = path
        .rsplit(['.', '['])
        .next()
        .unwrap_or(path)
        .to_ascii_lowercase();
    [
        "token",
        "cached",
        "input",
        "output",
        "prompt",
        "completion",
        "thought",
        "reasoning",
        "cache",
    ]
    .iter()
    .any(|word| last.contains(word))
}

/// Infers the schema of a JSONL stream (one JSON value per line) or, when
/// `whole_document`, of one JSON document (a top-level array counts each
/// item as an entry).
pub fn infer(
    s: &Sanitizer,
    reader: impl BufRead,
    whole_document: bool,
    size: u64,
) -> std::io::Result<Schema> {
    let mut walker = Walker::default();
    let mut schema = Schema {
        complete: true,
        ..Schema::default()
    };
    let root = Clean::default();
    if whole_document {
        if size > MAX_DOCUMENT {
            schema.complete = false;
            schema.unreadable_entries = 1;
        } else {
            match serde_json::from_reader::<_, serde_json::Value>(reader) {
                Ok(serde_json::Value::Array(items)) => {
                    for item in items.iter().take(MAX_ENTRIES as usize) {
                        schema.entries_scanned += 1;
                        walker.walk(s, item, &root, 0);
                    }
                    schema.complete = (items.len() as u64) <= MAX_ENTRIES;
                }
                Ok(value) => {
                    schema.entries_scanned = 1;
                    walker.walk(s, &value, &root, 0);
                }
                Err(_) => schema.unreadable_entries = 1,
            }
        }
    } else {
        let mut reader = reader;
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = read_line_bounded(&mut reader, &mut line)?;
            if n == 0 {
                break;
            }
            if schema.entries_scanned >= MAX_ENTRIES {
                schema.complete = false;
                break;
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            if line.len() > MAX_LINE {
                schema.unreadable_entries += 1;
                continue;
            }
            match serde_json::from_slice::<serde_json::Value>(text) {
                Ok(value) => {
                    schema.entries_scanned += 1;
                    walker.walk(s, &value, &root, 0);
                }
                Err(_) => schema.unreadable_entries += 1,
            }
        }
    }
    schema.token_candidates = walker
        .paths
        .iter()
        .filter(|(path, types)| types.contains(&Leaf::Int) && token_like(path.as_str()))
        .map(|(path, _)| path.clone())
        .collect();
    schema.paths_omitted = walker.omitted.len() as u64;
    schema.int_sum = walker.int_sum;
    schema.key_paths = walker
        .paths
        .into_iter()
        .map(|(path, types)| KeyPath {
            path,
            types: types.into_iter().collect(),
        })
        .collect();
    Ok(schema)
}

/// Reads one line, keeping at most [`MAX_LINE`] + 1 bytes of it (the rest
/// is consumed and dropped, so a giant line cannot exhaust memory).
fn read_line_bounded(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(total);
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..=at], true),
            None => (buf, false),
        };
        let len = chunk.len();
        let room = (MAX_LINE + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..len.min(room)]);
        reader.consume(len);
        total += len;
        if done {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sanitize::Identity;

    fn sanitizer() -> Sanitizer {
        Sanitizer::with_salt(
            &Identity {
                home: Some("/home/zqxuser".into()),
                usernames: vec!["zqxuser".into()],
            },
            [7; 16],
        )
    }

    #[test]
    fn paths_and_types_never_values() {
        let s = sanitizer();
        let text = concat!(
            r#"{"type":"assistant","message":{"content":"secret words here","usage":{"input_tokens":10,"output_tokens":5}}}"#,
            "\n",
            r#"{"type":"user","message":{"content":[{"text":"hi"}]},"cost":1.5,"x":null}"#,
            "\nnot json\n",
            r#"{"zqxuser@example.com":1,"sk-ant-api03-abcdefghijklmnop":2}"#,
            "\n"
        );
        let schema = infer(&s, text.as_bytes(), false, text.len() as u64).expect("reads");
        assert_eq!(schema.entries_scanned, 3);
        assert_eq!(schema.unreadable_entries, 1);
        let paths: Vec<String> = schema
            .key_paths
            .iter()
            .map(|k| {
                let types: Vec<&str> = k.types.iter().map(|t| t.name()).collect();
                format!("{}:{}", k.path, types.join("|"))
            })
            .collect();
        assert!(
            paths.contains(&"message.usage.input_tokens:int".to_string()),
            "{paths:?}"
        );
        assert!(
            paths.contains(&"message.content:str".to_string()),
            "{paths:?}"
        );
        assert!(
            paths.contains(&"message.content[].text:str".to_string()),
            "{paths:?}"
        );
        assert!(paths.contains(&"cost:float".to_string()));
        assert!(paths.contains(&"<key>:int".to_string()), "{paths:?}");
        let all = paths.join(" ");
        assert!(
            !all.contains("secret words") && !all.contains("zqxuser") && !all.contains("sk-ant")
        );
        let candidates: Vec<&str> = schema.token_candidates.iter().map(Clean::as_str).collect();
        assert_eq!(
            candidates,
            ["message.usage.input_tokens", "message.usage.output_tokens"]
        );
        assert_eq!(schema.int_sum, 18);
    }

    #[test]
    fn whole_documents_count_array_items() {
        let s = sanitizer();
        let text = r#"[{"tokens":{"input":3}},{"tokens":{"input":4}}]"#;
        let schema = infer(&s, text.as_bytes(), true, text.len() as u64).expect("reads");
        assert_eq!(schema.entries_scanned, 2);
        assert_eq!(schema.token_candidates[0].as_str(), "tokens.input");
    }

    #[test]
    fn giant_lines_are_skipped_not_buffered() {
        let s = sanitizer();
        let mut text = vec![b'{'; MAX_LINE + 10];
        text.extend_from_slice(b"\n{\"a\":1}\n");
        let schema = infer(&s, &text[..], false, text.len() as u64).expect("reads");
        assert_eq!(schema.unreadable_entries, 1);
        assert_eq!(schema.entries_scanned, 1);
    }
}
