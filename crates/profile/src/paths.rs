//! Lexical guards for project-relative paths in profiles (`hooks.config_path`,
//! `skill_tree`, `seed_files`): never the tree root, never absolute (POSIX or
//! Windows, including drive-relative `C:foo`), never a `..` segment.

pub fn check_relative(path: &str) -> Result<(), String> {
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err("must not be empty".to_string());
    }
    if trimmed.starts_with('/') || trimmed.starts_with('\\') {
        return Err(format!(
            "'{path}' is absolute; give a path relative to the project"
        ));
    }
    let bytes = trimmed.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(format!(
            "'{path}' is a Windows drive path; give a path relative to the project"
        ));
    }
    let segments: Vec<&str> = trimmed
        .split(['/', '\\'])
        .filter(|s| !s.is_empty())
        .collect();
    if segments.contains(&"..") {
        return Err(format!("'{path}' climbs out of the project with '..'"));
    }
    if segments.iter().all(|s| s.trim().chars().all(|c| c == '.')) {
        return Err(format!("'{path}' names the project root itself"));
    }
    if segments
        .iter()
        .any(|s| !s.is_empty() && s.trim().chars().all(|c| c == '.') && s.trim().len() > 1)
    {
        return Err(format!("'{path}' has a segment made only of dots"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_relative_paths() {
        for ok in [
            ".claude/settings.json",
            "a/b",
            "./x/y.json",
            ".agents/hooks.json",
        ] {
            assert_eq!(check_relative(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn rejects_each_escape() {
        let cases = [
            ("", "must not be empty"),
            (".", "names the project root"),
            ("./", "names the project root"),
            (".\\", "names the project root"),
            ("/etc/x", "is absolute"),
            ("\\\\server\\share", "is absolute"),
            ("C:foo", "Windows drive"),
            ("c:\\x", "Windows drive"),
            ("a/../../b", "climbs out"),
            ("a\\..\\b", "climbs out"),
            ("a/.../b", "only of dots"),
        ];
        for (path, expected) in cases {
            match check_relative(path) {
                Err(message) => assert!(message.contains(expected), "{path}: {message}"),
                Ok(()) => panic!("{path} accepted"),
            }
        }
    }
}
