//! Transcripts kept in SQLite (format `sqlite`): opencode's
//! `opencode.db`. The `message` table (`id`, `session_id`, `data` JSON text)
//! is turned into the line format the `opencode-db` parser reads, one row
//! per line: `{"id":…,"session_id":…,"data":{…}}`.
//!
//! The database is opened read-only (opencode may be running and writing
//! it; a busy database is waited on briefly). SQLite comes from rusqlite's
//! `bundled` build: a fresh machine has no libsqlite3 to link against.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

/// Reads every row of `message` and passes the lines to `emit` in batches
/// of about `batch` bytes. `E` is the sink's error; a database problem is
/// returned as `Err(Err(text))`, a sink error as `Err(Ok(e))`.
pub fn message_rows<E>(
    path: &Path,
    batch: usize,
    emit: &mut dyn FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), Result<E, String>> {
    let db = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Err(format!("cannot open the database: {e}")))?;
    db.busy_timeout(Duration::from_secs(2))
        .map_err(|e| Err(e.to_string()))?;
    let mut statement = db
        .prepare("SELECT id, session_id, data FROM message")
        .map_err(|e| Err(format!("no readable message table: {e}")))?;
    let mut rows = statement
        .query([])
        .map_err(|e| Err(format!("cannot query the message table: {e}")))?;
    let mut buf: Vec<u8> = Vec::with_capacity(batch + 4096);
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => break,
            Err(e) => return Err(Err(format!("reading the message table: {e}"))),
        };
        let text = |i: usize| -> String {
            match row.get_ref(i) {
                Ok(ValueRef::Text(b)) | Ok(ValueRef::Blob(b)) => {
                    String::from_utf8_lossy(b).into_owned()
                }
                Ok(ValueRef::Integer(n)) => n.to_string(),
                _ => String::new(),
            }
        };
        let (id, session) = (text(0), text(1));
        buf.extend_from_slice(b"{\"id\":");
        push_json_string(&mut buf, &id);
        buf.extend_from_slice(b",\"session_id\":");
        push_json_string(&mut buf, &session);
        buf.extend_from_slice(b",\"data\":");
        match row.get_ref(2) {
            Ok(ValueRef::Text(b)) | Ok(ValueRef::Blob(b)) if !b.is_empty() => {
                // The column is JSON text, embedded as is. A raw newline in
                // valid JSON can only be whitespace, so a space keeps the
                // meaning and the one-row-per-line framing.
                buf.extend(
                    b.iter()
                        .map(|&c| if c == b'\n' || c == b'\r' { b' ' } else { c }),
                );
            }
            _ => buf.extend_from_slice(b"null"),
        }
        buf.extend_from_slice(b"}\n");
        if buf.len() >= batch {
            emit(&buf).map_err(Ok)?;
            buf.clear();
        }
    }
    if !buf.is_empty() {
        emit(&buf).map_err(Ok)?;
    }
    Ok(())
}

fn push_json_string(buf: &mut Vec<u8>, text: &str) {
    // Serializing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *buf, text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_one_json_line_each() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("opencode.db");
        let db = Connection::open(&path).expect("create");
        db.execute_batch(
            "CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, \
             time_created integer, time_updated integer, data text NOT NULL);
             INSERT INTO message VALUES ('m1', 's\"1', 0, 0, '{\"role\":\n\"assistant\"}');
             INSERT INTO message VALUES ('m2', 's2', 0, 0, '');",
        )
        .expect("schema");
        drop(db);
        let mut out = Vec::new();
        message_rows::<()>(&path, 1, &mut |b| {
            out.extend_from_slice(b);
            Ok(())
        })
        .expect("reads");
        let text = String::from_utf8(out).expect("utf8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let first: serde_json::Value = serde_json::from_str(lines[0]).expect("json");
        assert_eq!(first["session_id"], "s\"1");
        assert_eq!(first["data"]["role"], "assistant");
        let second: serde_json::Value = serde_json::from_str(lines[1]).expect("json");
        assert_eq!(second["data"], serde_json::Value::Null);
    }

    #[test]
    fn a_file_that_is_not_an_opencode_database_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("opencode.db");
        std::fs::write(&path, "not sqlite at all, just text").expect("write");
        let got = message_rows::<()>(&path, 1024, &mut |_| Ok(()));
        assert!(matches!(got, Err(Err(_))), "{got:?}");
    }
}
