//! Bounded reads of files drover does not control: anything in a checkout
//! (`.drover/` included) and every path a component names.
//!
//! Such a file may be a FIFO (a read would block forever), a device such as
//! `/dev/zero` (a read would never end), or a link out of where it claims to
//! be. So: the last component is opened without following links and
//! without blocking, only a regular file is read, and never more than a cap.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The cap for a settings file (a profile, `config.toml`, a record).
pub const SETTINGS_MAX: u64 = 4 << 20;
/// The cap for a component (`.wasm`).
pub const COMPONENT_MAX: u64 = 64 << 20;

/// Reads `path` if it is a regular file of at most `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let refuse = |why: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{}: {why}", path.display()),
        )
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                refuse("is a symbolic link; drover does not follow links here".to_string())
            } else {
                e
            }
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refuse(format!(
            "is not a regular file (a {}); drover reads only regular files here",
            kind(&meta.file_type())
        )));
    }
    if meta.len() > max {
        return Err(refuse(format!(
            "is {} bytes, over drover's limit of {max} for this file",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(refuse(format!(
            "grew past drover's limit of {max} bytes while being read"
        )));
    }
    Ok(bytes)
}

/// [`read_bounded`], as UTF-8 text.
pub fn read_text_bounded(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_bounded(path, max)?).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{}: not UTF-8 text (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn kind(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "directory"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "device"
    } else if file_type.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a.toml");
        std::fs::write(&file, "name = 'x'\n").expect("write");
        assert_eq!(read_bounded(&file, 100).expect("read"), b"name = 'x'\n");
        let big = read_bounded(&file, 4).expect_err("over the cap");
        assert!(
            big.to_string().contains("over drover's limit of 4"),
            "{big}"
        );

        let link = dir.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        let linked = read_bounded(&link, 100).expect_err("a link");
        assert!(linked.to_string().contains("symbolic link"), "{linked}");

        let device = read_bounded(Path::new("/dev/zero"), 100).expect_err("a device");
        assert!(device.to_string().contains("device"), "{device}");

        let fifo = dir.path().join("config.toml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let fifo_err = read_bounded(&fifo, 100).expect_err("a FIFO");
        assert!(fifo_err.to_string().contains("FIFO"), "{fifo_err}");
    }
}
