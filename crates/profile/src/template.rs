//! Load-time check of templates: `prompt_template` may use only `{prompt}`,
//! `{skill}` and `{args}`, `[turn]` argv templates only their own
//! placeholder; braces are doubled for literals. (bmad-loop only finds a bad
//! placeholder when it renders; rendering itself is the component's job.)

const PROMPT_PLACEHOLDERS: &[&str] = &["prompt", "skill", "args"];

pub fn validate(template: &str) -> Result<(), String> {
    placeholders(template, PROMPT_PLACEHOLDERS).map(|_| ())
}

/// The placeholders `template` uses, each one of `known`.
pub fn placeholders<'t>(template: &'t str, known: &[&str]) -> Result<Vec<&'t str>, String> {
    let mut found = Vec::new();
    let mut chars = template.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|(_, c)| *c) == Some('{') => {
                chars.next();
            }
            '}' if chars.peek().map(|(_, c)| *c) == Some('}') => {
                chars.next();
            }
            '{' => {
                let rest = &template[at + 1..];
                let Some(close) = rest.find('}') else {
                    return Err(format!("unclosed '{{' at byte {at}"));
                };
                let name = &rest[..close];
                if !known.contains(&name) {
                    let known: Vec<String> = known.iter().map(|k| format!("{{{k}}}")).collect();
                    return Err(format!(
                        "unknown placeholder {{{name}}} (known: {})",
                        known.join(", ")
                    ));
                }
                found.push(name);
                for _ in 0..=close {
                    chars.next();
                }
            }
            '}' => {
                return Err(format!(
                    "single '}}' at byte {at} (write '}}}}' for a literal brace)"
                ));
            }
            _ => {}
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn placeholders() {
        assert_eq!(validate("Use the ${skill} skill now: {args}"), Ok(()));
        assert_eq!(validate("{{x}} {prompt}"), Ok(()));
        assert_eq!(
            validate("{promt}"),
            Err("unknown placeholder {promt} (known: {prompt}, {skill}, {args})".to_string())
        );
        assert_eq!(
            validate("a {prompt"),
            Err("unclosed '{' at byte 2".to_string())
        );
        assert_eq!(
            validate("a } b"),
            Err("single '}' at byte 2 (write '}}' for a literal brace)".to_string())
        );
    }
}
