//! Model-name normalisation: the names a transcript's model id is looked up
//! under, most specific first. Only rewrites that keep the model's identity
//! are made (no fuzzy or substring matching: a near miss would price one
//! model at another's rates).

/// The lookup names for `model`, in order, without repeats:
/// 1. the id as written (`claude-sonnet-4-5-20250929`, `openai/gpt-5.5`);
/// 2. lower-cased;
/// 3. without a trailing date (`-20250929`, `@20250929`, `-2025-09-29`),
///    which providers use for pinned snapshots of the same model;
/// 4. without a `provider/` prefix (`anthropic/claude-…`, opencode's
///    `providerID/modelID`, OpenRouter paths), keeping the last segment;
/// 5. with dots in the version turned to dashes (`claude-sonnet-4.5` →
///    `claude-sonnet-4-5`, as Copilot writes Claude ids);
///
/// each later step applied on top of the earlier ones.
pub fn candidates(model: &str) -> Vec<String> {
    let trimmed = model.trim();
    let lower = trimmed.to_ascii_lowercase();
    let undated = strip_date(&lower).to_string();
    let bare = undated.rsplit('/').next().unwrap_or(&undated).to_string();
    let dashed = bare.replace('.', "-");
    let mut out: Vec<String> = Vec::new();
    for name in [trimmed.to_string(), lower, undated, bare, dashed] {
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// `name` without a trailing `-YYYYMMDD`, `@YYYYMMDD` or `-YYYY-MM-DD`.
fn strip_date(name: &str) -> &str {
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if name.len() > 9 {
        let (head, tail) = name.split_at(name.len() - 9);
        if (tail.starts_with('-') || tail.starts_with('@')) && digits(&tail[1..]) {
            return head;
        }
    }
    if name.len() > 11 {
        let (head, tail) = name.split_at(name.len() - 11);
        let b = tail.as_bytes();
        if b[0] == b'-'
            && b[5] == b'-'
            && b[8] == b'-'
            && digits(&tail[1..5])
            && digits(&tail[6..8])
            && digits(&tail[9..])
        {
            return head;
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(model: &str) -> Vec<String> {
        candidates(model)
    }

    #[test]
    fn dated_prefixed_and_dotted_ids_reduce_to_the_table_name() {
        assert_eq!(
            names("claude-sonnet-4-5-20250929"),
            ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"]
        );
        assert_eq!(
            names("anthropic/claude-opus-5-5"),
            ["anthropic/claude-opus-5-5", "claude-opus-5-5"]
        );
        assert_eq!(
            names("vertex_ai/claude-haiku-4-5@20251001"),
            [
                "vertex_ai/claude-haiku-4-5@20251001",
                "vertex_ai/claude-haiku-4-5",
                "claude-haiku-4-5"
            ]
        );
        assert_eq!(
            names("Claude-Sonnet-4.5"),
            [
                "Claude-Sonnet-4.5",
                "claude-sonnet-4.5",
                "claude-sonnet-4-5"
            ]
        );
        assert_eq!(names("gpt-5.5-2026-03-05")[1], "gpt-5.5");
        assert_eq!(names("gpt-5.5"), ["gpt-5.5", "gpt-5-5"]);
    }

    #[test]
    fn version_numbers_are_not_dates() {
        assert_eq!(names("claude-sonnet-5-1"), ["claude-sonnet-5-1"]);
        assert_eq!(names("qwen3-235b"), ["qwen3-235b"]);
        assert!(names("").is_empty());
    }
}
