//! Seals on the records drover writes.
//!
//! A repository can commit anything under `.drover/`, including run
//! directories whose records name a Ray address, a pane, a process or a log
//! path. Before drover acts on such a record it checks the record's seal: an
//! HMAC-SHA256 over its bytes with a key only this user has (32 random bytes,
//! created 0600 in the user's state directory on first use). A record
//! without a valid seal is shown, never acted on.

use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

use hmac::{Hmac, Mac};
use sha2::Sha256;

const KEY_LEN: usize = 32;

/// The user's state directory for drover: `$XDG_STATE_HOME/drover`, else
/// `~/.local/state/drover`.
pub fn state_dir() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_STATE_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".local/state"))
        })
        .map(|d| d.join("drover"))
}

fn key_path() -> std::io::Result<PathBuf> {
    state_dir().map(|d| d.join("seal.key")).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no state directory for drover's record key (set HOME or XDG_STATE_HOME)",
        )
    })
}

fn read_key(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    // A regular file, not through a link, opened without blocking.
    let (mut file, len) = crate::read::open_regular(path, u64::MAX)?;
    let mode = file.metadata()?.permissions().mode();
    if mode & 0o077 != 0 || len != KEY_LEN as u64 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} is not drover's record key (a {KEY_LEN}-byte regular file only you can read); remove it and drover makes a new one (records sealed with it become foreign)",
                path.display()
            ),
        ));
    }
    let mut key = Vec::with_capacity(KEY_LEN);
    file.read_to_end(&mut key)?;
    Ok(key)
}

/// The user's key, created on first use.
fn key() -> std::io::Result<Vec<u8>> {
    let path = key_path()?;
    match read_key(&path) {
        Ok(key) => return Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let mut key = [0u8; KEY_LEN];
    getrandom::fill(&mut key).map_err(|e| {
        std::io::Error::other(format!("no random bytes for drover's record key: {e}"))
    })?;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
    {
        Ok(mut file) => {
            file.write_all(&key)?;
            file.sync_all()?;
            Ok(key.to_vec())
        }
        // Another drover made it first: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_key(&path),
        Err(e) => Err(e),
    }
}

fn mac(key: &[u8], bytes: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(b"drover record seal v1\0");
    mac.update(bytes);
    mac
}

/// The seal of `bytes`: lowercase hex of the HMAC.
pub fn seal(bytes: &[u8]) -> std::io::Result<String> {
    let tag = mac(&key()?, bytes).finalize().into_bytes();
    Ok(tag.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `tag` is this user's seal of `bytes`. No key, a malformed tag or
/// a wrong one all answer false.
pub fn verify(bytes: &[u8], tag: &str) -> bool {
    let Ok(key) = key_path().and_then(|p| read_key(&p)) else {
        return false;
    };
    let Some(tag) = unhex(tag) else {
        return false;
    };
    mac(&key, bytes).verify_slice(&tag).is_ok()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: it sets XDG_STATE_HOME for the process.
    #[test]
    fn a_seal_verifies_only_its_own_bytes_and_only_with_this_users_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        // SAFETY: no other test in this crate reads the environment.
        unsafe { std::env::set_var("XDG_STATE_HOME", dir.path()) };
        let tag = seal(b"{\"pid\":1}").expect("seal");
        assert_eq!(tag.len(), 64);
        assert!(verify(b"{\"pid\":1}", &tag));
        assert!(!verify(b"{\"pid\":2}", &tag));
        assert!(!verify(b"{\"pid\":1}", "00"));
        assert!(!verify(b"{\"pid\":1}", &"0".repeat(64)));
        let key = dir.path().join("drover/seal.key");
        let mode = std::fs::metadata(&key).expect("key").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Another user's key (a new one) does not verify this user's seals.
        std::fs::remove_file(&key).expect("rm key");
        let other = seal(b"x").expect("new key");
        assert!(!verify(b"{\"pid\":1}", &tag));
        assert!(verify(b"x", &other));
    }
}
