//! POSIX shell quoting for the words drover appends to a relay command.

/// `word` as one shell word: unchanged when it is plainly safe, otherwise in
/// single quotes (with `'` written as `'\''`).
pub fn word(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(word("session.idle"), "session.idle");
        assert_eq!(word("a b"), "'a b'");
        assert_eq!(word("it's"), "'it'\\''s'");
        assert_eq!(word(""), "''");
        assert_eq!(word("$(rm -rf /)"), "'$(rm -rf /)'");
    }
}
