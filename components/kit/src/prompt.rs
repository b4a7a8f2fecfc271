//! Prompt templates: `{prompt}`, `{skill}` and `{args}`, as bmad-loop defines
//! them, with `{{` and `}}` for literal braces.
//!
//! A canonical prompt that starts with `/` is a skill invocation: the text up
//! to the first space (without the slash) is the skill, the rest (trimmed) is
//! the args. Any other prompt has an empty skill and args equal to the prompt.

use crate::{AdapterError, Profile, invalid};

/// Renders `template` for `prompt`.
pub fn render(template: &str, prompt: &str) -> Result<String, AdapterError> {
    let (skill, args) = split_skill(prompt);
    let mut out = String::with_capacity(template.len() + prompt.len());
    for piece in parse(template)? {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Prompt => out.push_str(prompt),
            Piece::Skill => out.push_str(skill),
            Piece::Args => out.push_str(args),
        }
    }
    Ok(out)
}

/// [`render`] with the profile's `prompt_template`: the usual
/// `render-prompt`.
pub fn render_profile(profile: &Profile, prompt: &str) -> Result<String, AdapterError> {
    render(&profile.prompt_template, prompt)
}

/// Splits a canonical prompt into `(skill, args)`.
pub fn split_skill(prompt: &str) -> (&str, &str) {
    match prompt.strip_prefix('/') {
        Some(rest) => match rest.split_once(' ') {
            Some((skill, args)) => (skill, args.trim()),
            None => (rest, ""),
        },
        None => ("", prompt),
    }
}

enum Piece<'a> {
    Text(&'a str),
    Prompt,
    Skill,
    Args,
}

fn parse(template: &str) -> Result<Vec<Piece<'_>>, AdapterError> {
    let mut pieces = Vec::new();
    let bytes = template.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' if bytes.get(i + 1) == Some(&b'{') => {
                pieces.push(Piece::Text(&template[start..=i]));
                i += 2;
                start = i;
            }
            b'}' if bytes.get(i + 1) == Some(&b'}') => {
                pieces.push(Piece::Text(&template[start..=i]));
                i += 2;
                start = i;
            }
            b'{' => {
                pieces.push(Piece::Text(&template[start..i]));
                let close = template[i..].find('}').ok_or_else(|| {
                    invalid(format!("prompt_template: unclosed '{{' at byte {i}"))
                })?;
                let name = &template[i + 1..i + close];
                pieces.push(match name {
                    "prompt" => Piece::Prompt,
                    "skill" => Piece::Skill,
                    "args" => Piece::Args,
                    other => {
                        return Err(invalid(format!(
                            "prompt_template: unknown placeholder {{{other}}} (known: {{prompt}}, {{skill}}, {{args}})"
                        )));
                    }
                });
                i += close + 1;
                start = i;
            }
            b'}' => {
                return Err(invalid(format!(
                    "prompt_template: single '}}' at byte {i} (write '}}}}' for a literal brace)"
                )));
            }
            _ => i += 1,
        }
    }
    pieces.push(Piece::Text(&template[start..]));
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_skill_invocations_and_plain_prompts() {
        let codex = "Use the ${skill} skill now, and use subagents as needed: {args}";
        assert_eq!(
            render(codex, "/bmad-dev-auto 1-1-a").expect("renders"),
            "Use the $bmad-dev-auto skill now, and use subagents as needed: 1-1-a"
        );
        assert_eq!(
            render("Use the {skill} skill now: {args}", "/bmad-dev-auto 1-1-a").expect("renders"),
            "Use the bmad-dev-auto skill now: 1-1-a"
        );
        assert_eq!(
            render("{prompt}", "fix the bug").expect("renders"),
            "fix the bug"
        );
        assert_eq!(
            render("[{skill}|{args}]", "hello there").expect("renders"),
            "[|hello there]"
        );
        assert_eq!(
            render("{{literal}} {prompt}", "x").expect("renders"),
            "{literal} x"
        );
    }

    #[test]
    fn skill_without_args() {
        assert_eq!(split_skill("/review"), ("review", ""));
        assert_eq!(split_skill("/review   a b  "), ("review", "a b"));
    }

    #[test]
    fn bad_templates_say_what_is_wrong() {
        let unknown = render("{promt}", "x").expect_err("refused");
        assert_eq!(
            unknown,
            invalid(
                "prompt_template: unknown placeholder {promt} (known: {prompt}, {skill}, {args})"
            )
        );
        assert!(
            matches!(render("oops {prompt", "x"), Err(AdapterError::InvalidInput(m)) if m.contains("unclosed"))
        );
        assert!(
            matches!(render("a } b", "x"), Err(AdapterError::InvalidInput(m)) if m.contains("single '}'"))
        );
    }
}
