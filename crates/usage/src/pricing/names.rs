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
/// 6. for a Bedrock id (`us.anthropic.claude-opus-4-1-20250805-v1:0`),
///    Anthropic's own id (`claude-opus-4-1-20250805`), dated and undated;
///
/// each later step applied on top of the earlier ones.
pub fn candidates(model: &str) -> Vec<String> {
    let trimmed = model.trim();
    let lower = trimmed.to_ascii_lowercase();
    let undated = strip_date(&lower).to_string();
    let bare = undated.rsplit('/').next().unwrap_or(&undated).to_string();
    let dashed = bare.replace('.', "-");
    let bedrock = from_bedrock(&lower).map(str::to_string);
    let bedrock_undated = bedrock.as_deref().map(|b| strip_date(b).to_string());
    let mut out: Vec<String> = Vec::new();
    let names = [trimmed.to_string(), lower, undated, bare, dashed];
    for name in names.into_iter().chain(bedrock).chain(bedrock_undated) {
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The canonical form of a name: every rewrite of [`candidates`] applied
/// (lower case, no Bedrock wrapping, no date, no provider prefix, dashes for
/// dots). Names that differ only in spelling share it; the table's alias
/// index (`Prices::find`) is keyed by it.
pub fn canonical(model: &str) -> String {
    let lower = model.trim().to_ascii_lowercase();
    let unwrapped = from_bedrock(&lower).unwrap_or(&lower);
    let undated = strip_date(unwrapped);
    let bare = undated.rsplit('/').next().unwrap_or(undated);
    strip_date(bare).replace('.', "-")
}

/// Anthropic's id inside a Bedrock model id: `anthropic.<id>-v<N>[:<M>]`,
/// optionally behind a region (`us.`, `eu.`, `global.`, …). `None` for
/// any other name.
fn from_bedrock(name: &str) -> Option<&str> {
    let at = name.find("anthropic.")?;
    let region = &name[..at];
    // Nothing, or one dotted region word: `us.`, `apac.`, `us-gov.`.
    let plain_region = region.is_empty()
        || (region.ends_with('.')
            && region[..region.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-'));
    if !plain_region {
        return None;
    }
    let id = &name[at + "anthropic.".len()..];
    let Some(v) = id.rfind("-v") else {
        return Some(id);
    };
    let version = &id[v + 2..];
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = match version.split_once(':') {
        Some((major, minor)) => numeric(major) && numeric(minor),
        None => numeric(version),
    };
    // Bedrock's revision follows a version or a date (`…-4-6-v1`,
    // `…-20250805-v1:0`); in `claude-v2:1` the `v2` is the model's own.
    let revision = well_formed && id[..v].ends_with(|c: char| c.is_ascii_digit());
    Some(if revision { &id[..v] } else { id })
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
    fn bedrock_ids_reduce_to_anthropics_id() {
        let all = names("us.anthropic.claude-opus-4-1-20250805-v1:0");
        assert_eq!(
            &all[all.len() - 2..],
            ["claude-opus-4-1-20250805", "claude-opus-4-1"]
        );
        assert!(
            names("anthropic.claude-sonnet-4-5-20250929-v1:0")
                .contains(&"claude-sonnet-4-5-20250929".to_string())
        );
        assert!(names("anthropic.claude-opus-4-7").contains(&"claude-opus-4-7".to_string()));
        // A provider whose name merely contains the word is not Bedrock.
        assert!(!names("myanthropic.claude-x-1-v1").contains(&"claude-x-1".to_string()));
        assert_eq!(canonical("anthropic.claude-v2:1"), "claude-v2:1");
    }

    #[test]
    fn spellings_of_one_model_share_a_canonical_name() {
        for spelling in [
            "claude-opus-4-1-20250805",
            "claude-opus-4-1",
            "Claude-Opus-4.1",
            "anthropic/claude-opus-4-1-20250805",
            "anthropic.claude-opus-4-1-20250805-v1:0",
            "us.anthropic.claude-opus-4-1-20250805-v1:0",
            "vertex_ai/claude-opus-4-1@20250805",
        ] {
            assert_eq!(canonical(spelling), "claude-opus-4-1", "{spelling}");
        }
        assert_eq!(canonical("xai/grok-4.5"), "grok-4-5");
        assert_ne!(canonical("claude-opus-4-5"), canonical("claude-opus-4-1"));
    }

    #[test]
    fn version_numbers_are_not_dates() {
        assert_eq!(names("claude-sonnet-5-1"), ["claude-sonnet-5-1"]);
        assert_eq!(names("qwen3-235b"), ["qwen3-235b"]);
        assert!(names("").is_empty());
    }
}
