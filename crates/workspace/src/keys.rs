//! Keys a dialog answer presses in a pane. The adapter names them (its
//! reading of the dialog says which keys choose which option), so they are
//! untrusted: only this vocabulary parses, and nothing else reaches a pane
//! as keys. Text a CLI gets as a message goes through `type_text` instead.

use std::time::{Duration, Instant};

/// Keys one answer may press: a dialog is a handful of arrows and Enter.
pub const KEYS_MAX: usize = 32;
/// How long a pressed key may take to show on the screen before the next
/// one is pressed anyway.
const KEY_SHOWN: Duration = Duration::from_millis(500);
/// How often the screen is read while waiting for a key to show.
const KEY_POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Up,
    Down,
    Left,
    Right,
    Enter,
    Escape,
    Tab,
    Space,
    /// One ASCII letter or digit (`y`, `2`).
    Char(char),
}

impl Key {
    /// A key by its WIT name (`up`, `enter`, `escape`, …) or one ASCII
    /// letter or digit.
    pub fn parse(name: &str) -> Option<Key> {
        let key = match name {
            "up" => Key::Up,
            "down" => Key::Down,
            "left" => Key::Left,
            "right" => Key::Right,
            "enter" => Key::Enter,
            "escape" => Key::Escape,
            "tab" => Key::Tab,
            "space" => Key::Space,
            _ => {
                let mut chars = name.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if c.is_ascii_alphanumeric() => Key::Char(c),
                    _ => return None,
                }
            }
        };
        Some(key)
    }

    /// The key as the adapter names it.
    pub fn name(self) -> String {
        match self {
            Key::Up => "up".into(),
            Key::Down => "down".into(),
            Key::Left => "left".into(),
            Key::Right => "right".into(),
            Key::Enter => "enter".into(),
            Key::Escape => "escape".into(),
            Key::Tab => "tab".into(),
            Key::Space => "space".into(),
            Key::Char(c) => c.to_string(),
        }
    }

    /// tmux's `send-keys` name.
    pub fn tmux(self) -> String {
        match self {
            Key::Up => "Up".into(),
            Key::Down => "Down".into(),
            Key::Left => "Left".into(),
            Key::Right => "Right".into(),
            Key::Enter => "Enter".into(),
            Key::Escape => "Escape".into(),
            Key::Tab => "Tab".into(),
            Key::Space => "Space".into(),
            Key::Char(c) => c.to_string(),
        }
    }
}

/// Presses `keys` one at a time, each once the screen (`read`) shows the
/// one before: a TUI that gets `Down` and `Enter` in one read may take the
/// pair for one unknown key (Ink does, under load), so an answer meant
/// for the second option would pick the first.
pub fn press_one_at_a_time<E>(
    keys: &[Key],
    mut press: impl FnMut(Key) -> Result<(), E>,
    mut read: impl FnMut() -> Option<String>,
) -> Result<(), E> {
    for (at, key) in keys.iter().enumerate() {
        let before = read();
        press(*key)?;
        if at + 1 == keys.len() {
            break;
        }
        let shown_by = Instant::now() + KEY_SHOWN;
        while Instant::now() < shown_by && read() == before {
            std::thread::sleep(KEY_POLL);
        }
    }
    Ok(())
}

/// Every key of `names`, or why they are not an answer: an unknown key
/// (named), none at all, or more than [`KEYS_MAX`].
pub fn parse_keys(names: &[String]) -> Result<Vec<Key>, String> {
    if names.is_empty() {
        return Err("the adapter names no keys for it".to_string());
    }
    if names.len() > KEYS_MAX {
        return Err(format!(
            "the adapter names {} keys for it (at most {KEYS_MAX})",
            names.len()
        ));
    }
    names
        .iter()
        .map(|name| {
            Key::parse(name).ok_or_else(|| {
                format!(
                    "the adapter names the key {:?}, which is not one drover presses (up, down, left, right, enter, escape, tab, space, a letter or a digit)",
                    name.chars().take(40).collect::<String>()
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn only_the_vocabulary_parses() {
        assert_eq!(
            parse_keys(&names(&["down", "down", "enter"])),
            Ok(vec![Key::Down, Key::Down, Key::Enter])
        );
        assert_eq!(parse_keys(&names(&["2"])), Ok(vec![Key::Char('2')]));
        for bad in ["rm -rf /", "C-c", "Enter", "\x1b", "é", "yy", ""] {
            let err = parse_keys(&names(&[bad])).expect_err(bad);
            assert!(err.contains("not one drover presses"), "{bad}: {err}");
        }
        assert!(parse_keys(&[]).is_err());
        assert!(parse_keys(&names(&["down"; KEYS_MAX + 1])).is_err());
    }

    #[test]
    fn names_round_trip() {
        for name in [
            "up", "down", "left", "right", "enter", "escape", "tab", "space", "y", "7",
        ] {
            assert_eq!(Key::parse(name).map(Key::name).as_deref(), Some(name));
        }
    }
}
