//! Sealed records: the run-directory and seat files that can drive an effect
//! (a Ray address and log path, a pane to close, a process to signal, a
//! seat's nickname) carry a `seal` field, drover-gate's per-user HMAC over
//! the rest of the record, bound to where the record lives and to this
//! machine. A repository can commit any of these files; without this user's
//! key it cannot seal one, so a record read back without a valid seal is
//! [`Provenance::ForeignRecord`]: shown, never acted on. Records written
//! before seals existed read as foreign too.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use drover_gate::{Provenance, Sourced};

/// The field holding a record's seal.
const SEAL: &str = "seal";

/// Writes `value` (a JSON object) to `path` atomically and confined, sealed.
/// When no seal can be made (no state directory for the key) the record is
/// still written, unsealed: drover reads it back as foreign and never acts
/// on it, which is safe, and the warning says why.
pub fn write_sealed<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let (mut fields, tag) = unsealed(path, value)?;
    match tag {
        Ok(tag) => {
            fields.insert(SEAL.to_string(), Value::String(tag));
        }
        Err(e) => tracing::warn!(
            "cannot seal {} ({e}); drover will treat it as foreign and not act on it",
            path.display()
        ),
    }
    crate::write_json_atomic(path, &Value::Object(fields))
}

/// `value` as a record's fields (a JSON object, any `seal` field dropped),
/// and the seal of those fields at `path`.
fn unsealed<T: Serialize>(
    path: &Path,
    value: &T,
) -> std::io::Result<(Map<String, Value>, std::io::Result<String>)> {
    let Value::Object(mut fields) = serde_json::to_value(value).map_err(std::io::Error::other)?
    else {
        return Err(std::io::Error::other(format!(
            "{}: a sealed record must be a JSON object",
            path.display()
        )));
    };
    fields.remove(SEAL);
    let tag = drover_gate::seal::seal(&sealed_bytes(path, &Value::Object(fields.clone())));
    Ok((fields, tag))
}

/// Takes `record`'s seal out and says whether it is this user's seal of the
/// rest at `path`.
fn take_seal(path: &Path, record: &mut Value) -> Provenance {
    let tag = match record {
        Value::Object(fields) => fields.remove(SEAL),
        _ => None,
    };
    match tag {
        Some(Value::String(tag))
            if drover_gate::seal::verify(&sealed_bytes(path, record), &tag) =>
        {
            Provenance::SealedRecord
        }
        _ => Provenance::ForeignRecord,
    }
}

/// Reads the record at `path` (a regular file, bounded, links not followed)
/// with its provenance: [`Provenance::SealedRecord`] when this user's drover
/// sealed exactly these bytes at exactly this place on this machine, else
/// [`Provenance::ForeignRecord`].
pub fn read_sealed<T: DeserializeOwned>(path: &Path) -> std::io::Result<Sourced<T>> {
    let text = drover_gate::read::read_text_bounded(path, drover_gate::read::SETTINGS_MAX)?;
    let invalid = |e: serde_json::Error| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    };
    let mut record: Value = serde_json::from_str(&text).map_err(invalid)?;
    let from = take_seal(path, &mut record);
    let value = serde_json::from_value(record).map_err(invalid)?;
    Ok(Sourced::new(value, from))
}

/// One line of an append-only record file (a JSON object, no newline),
/// sealed like a record file and bound to the file it is appended to.
pub fn seal_line<T: Serialize>(path: &Path, value: &T) -> std::io::Result<String> {
    let (mut fields, tag) = unsealed(path, value)?;
    fields.insert(SEAL.to_string(), Value::String(tag?));
    serde_json::to_string(&Value::Object(fields)).map_err(std::io::Error::other)
}

/// A line [`seal_line`] wrote to `path`, with its provenance; `None` for a
/// line that is not a record of this shape.
pub fn read_sealed_line<T: DeserializeOwned>(path: &Path, line: &[u8]) -> Option<Sourced<T>> {
    let mut record: Value = serde_json::from_slice(line).ok()?;
    let from = take_seal(path, &mut record);
    let value = serde_json::from_value(record).ok()?;
    Some(Sourced::new(value, from))
}

/// What a seal covers: the record's place (its directory, resolved, and its
/// file name, so a sealed record copied elsewhere or renamed is foreign),
/// this machine, and the record's fields in a canonical order.
fn sealed_bytes(path: &Path, record: &Value) -> Vec<u8> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir: PathBuf = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let name = path.file_name().unwrap_or_default();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"drover record v1\0");
    bytes.extend_from_slice(dir.as_os_str().as_encoded_bytes());
    bytes.push(0);
    bytes.extend_from_slice(name.as_encoded_bytes());
    bytes.push(0);
    bytes.extend_from_slice(machine_id().as_bytes());
    bytes.push(0);
    // serde_json cannot fail to write a Value to a Vec.
    bytes.extend_from_slice(
        serde_json::to_string(&canonical(record))
            .unwrap_or_default()
            .as_bytes(),
    );
    bytes
}

/// This machine's id (systemd's `/etc/machine-id`), so a record sealed on
/// one machine (a home directory shared between machines) does not name a
/// process or pane on another. Empty where there is none.
fn machine_id() -> String {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| drover_gate::read::read_text_bounded(Path::new(p), 4096).ok())
        .map(|t| t.trim().to_string())
        .unwrap_or_default()
}

/// `value` with every object's keys sorted, whatever map order serde_json
/// was built with.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&fields[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Pid {
        pid: u32,
        start: u64,
    }

    // One test: it sets XDG_STATE_HOME for the process.
    #[test]
    fn only_a_record_this_user_sealed_here_reads_as_sealed() {
        let state = tempfile::tempdir().expect("state");
        // SAFETY: no other test in this crate reads XDG_STATE_HOME.
        unsafe { std::env::set_var("XDG_STATE_HOME", state.path()) };
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("host.json");
        write_sealed(&path, &Pid { pid: 7, start: 9 }).expect("write");
        let read: Sourced<Pid> = read_sealed(&path).expect("read");
        assert_eq!(read.value, Pid { pid: 7, start: 9 });
        assert_eq!(read.from, Provenance::SealedRecord);

        // One field changed: foreign.
        let text = std::fs::read_to_string(&path).expect("text");
        std::fs::write(&path, text.replace("\"pid\": 7", "\"pid\": 1")).expect("edit");
        let edited: Sourced<Pid> = read_sealed(&path).expect("read");
        assert_eq!(edited.value.pid, 1);
        assert_eq!(edited.from, Provenance::ForeignRecord);

        // Unsealed (a record from before seals, or committed): foreign.
        std::fs::write(&path, r#"{"pid": 7, "start": 9}"#).expect("unsealed");
        let bare: Sourced<Pid> = read_sealed(&path).expect("read");
        assert_eq!(bare.from, Provenance::ForeignRecord);

        // A sealed record moved to another name: foreign.
        write_sealed(&path, &Pid { pid: 7, start: 9 }).expect("write");
        let moved = dir.path().join("process.json");
        std::fs::rename(&path, &moved).expect("rename");
        let renamed: Sourced<Pid> = read_sealed(&moved).expect("read");
        assert_eq!(renamed.from, Provenance::ForeignRecord);

        // Dollars as drover sums them read back as written: a float whose
        // text parses to a neighbour would turn the record foreign (a
        // seat's cost made `drover down` leave its agent running).
        let costs = dir.path().join("costs.json");
        let mut cost = 0.0_f64;
        for turn in 1..2000_u32 {
            cost += f64::from(turn) * 3.0e-6 + f64::from(turn % 7) * 1.5e-5 + 3.75e-7;
            write_sealed(&costs, &serde_json::json!({"cost_usd": cost})).expect("write");
            let read: Sourced<serde_json::Value> = read_sealed(&costs).expect("read");
            assert_eq!(read.from, Provenance::SealedRecord, "{cost:e}");
            assert_eq!(read.value["cost_usd"].as_f64(), Some(cost));
        }
    }
}
