//! The channel between a driving drover and a long-lived Ray worker job: a
//! directory in the project's drover state that both sides see (the nodes
//! have the project at `[ray] project`, on a shared filesystem), one per
//! worker, `<project>/.drover/ray/workers/<worker id>/`:
//!
//! ```text
//! worker.json       the driver's sealed record of the worker (its job, placement)
//! claim             created exclusively by the driver that gives the next turn;
//!                   the worker removes it when the turn is done (it creates it
//!                   itself, holding "gone", to retire)
//! gone              the worker retired: no turn is taken any more
//! <turn>.turn       the turn document (TurnRequest JSON), written atomically
//! <turn>.lease      a counter the driver rewrites while it waits; removed to stop
//! <turn>.out        the turn's wire lines (events, result), appended by the worker
//! ```
//!
//! Everything the worker writes here is as untrusted as the node's log: the
//! driver parses `.out` with the same wire rules and bounds.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The workers' directory below a project.
pub fn workers_dir(project: &Path) -> PathBuf {
    project.join(".drover").join("ray").join("workers")
}

pub const RECORD: &str = "worker.json";
const CLAIM: &str = "claim";
const GONE: &str = "gone";
/// What a retiring worker writes into its own claim.
const RETIRED: &str = "gone";
/// Bytes of a turn document or a lease (the document's own cap applies).
const SMALL_MAX: u64 = 256 << 10;

/// One worker's mailbox, at its path on this machine.
#[derive(Debug, Clone)]
pub struct Mailbox {
    pub dir: PathBuf,
}

impl Mailbox {
    pub fn new(dir: PathBuf) -> Mailbox {
        Mailbox { dir }
    }

    /// Creates a new, empty mailbox (refused if the directory exists, so
    /// no file a checkout committed can be in it), confined to the project.
    pub fn create(dir: PathBuf) -> std::io::Result<Mailbox> {
        if let Some(parent) = dir.parent() {
            drover_state::create_dir_all(parent)?;
        }
        std::fs::create_dir(&dir)?;
        Ok(Mailbox { dir })
    }

    pub fn id(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn turn_file(&self, turn: &str) -> PathBuf {
        self.file(&format!("{turn}.turn"))
    }

    pub fn lease_file(&self, turn: &str) -> PathBuf {
        self.file(&format!("{turn}.lease"))
    }

    pub fn out_file(&self, turn: &str) -> PathBuf {
        self.file(&format!("{turn}.out"))
    }

    /// Takes the worker for one turn; false when another driver has it or
    /// it retired.
    pub fn claim(&self, turn: &str) -> std::io::Result<bool> {
        if self.file(GONE).exists() {
            return Ok(false);
        }
        // Exclusive and confined: the workers' directory is inside the
        // project, where a checkout or the driven CLI could plant a link.
        match drover_state::create_new(&self.file(CLAIM))? {
            Some(mut file) => {
                file.write_all(turn.as_bytes())?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The worker is free for the next turn.
    pub fn release(&self) -> std::io::Result<()> {
        drover_state::remove_file(&self.file(CLAIM))
    }

    /// Whether a driver holds the worker.
    pub fn claimed(&self) -> bool {
        self.file(CLAIM).exists()
    }

    /// The worker retires: it claims itself so no driver can, and marks the
    /// mailbox gone. False when a driver claimed it first (a turn is coming).
    pub fn retire(&self) -> std::io::Result<bool> {
        if !self.claim(RETIRED)? {
            return Ok(self.file(GONE).exists());
        }
        self.mark_gone()?;
        Ok(true)
    }

    /// No turn is taken any more (a worker leaving with a claim held, or a
    /// driver that found its job ended).
    pub fn mark_gone(&self) -> std::io::Result<()> {
        drover_state::write_atomic(&self.file(GONE), b"")
    }

    pub fn is_gone(&self) -> bool {
        self.file(GONE).exists()
    }

    /// Gives the worker a turn (the driver holds the claim).
    pub fn post(&self, turn: &str, document: &str) -> std::io::Result<()> {
        self.renew(turn, 0)?;
        drover_state::write_atomic(&self.turn_file(turn), document.as_bytes())
    }

    /// Takes back a turn no worker took yet.
    pub fn withdraw(&self, turn: &str) -> std::io::Result<()> {
        drover_state::remove_file(&self.turn_file(turn))
    }

    /// Rewrites the turn's lease: the worker sees it change.
    pub fn renew(&self, turn: &str, count: u64) -> std::io::Result<()> {
        drover_state::write_atomic(&self.lease_file(turn), count.to_string().as_bytes())
    }

    /// Ends the lease at once: the worker stops the turn.
    pub fn revoke(&self, turn: &str) -> std::io::Result<()> {
        drover_state::remove_file(&self.lease_file(turn))
    }

    /// The lease's current text; `None` once revoked.
    pub fn lease(&self, turn: &str) -> Option<String> {
        drover_gate::read::read_text_bounded(&self.lease_file(turn), SMALL_MAX).ok()
    }

    /// The ids of turns posted here, oldest name first.
    pub fn posted(&self) -> Vec<String> {
        let mut turns: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let turn = name.strip_suffix(".turn")?.to_string();
                (drover_run::safe_segment(&turn) == turn).then_some(turn)
            })
            .collect();
        turns.sort();
        turns
    }

    /// A posted turn's document: a regular file, bounded.
    pub fn read_turn(&self, turn: &str) -> std::io::Result<String> {
        drover_gate::read::read_text_bounded(&self.turn_file(turn), SMALL_MAX)
    }

    /// Opens the turn's output for appending (the worker's side).
    pub fn open_out(&self, turn: &str) -> std::io::Result<std::fs::File> {
        drover_state::open_append(&self.out_file(turn))
    }
}

/// Reads a turn's `.out` as it grows (the driver's side): the bytes after
/// `offset`, at most `limit` at once.
pub fn read_from(path: &Path, offset: u64, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is not a regular file", path.display()),
        ));
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_driver_claims_a_worker_until_it_is_released() {
        let project = tempfile::tempdir().expect("tempdir");
        let dir = workers_dir(project.path()).join("w1");
        let mailbox = Mailbox::create(dir.clone()).expect("created");
        assert!(
            Mailbox::create(dir).is_err(),
            "an existing mailbox is never reused"
        );
        assert!(mailbox.claim("t1").expect("claim"));
        assert!(!mailbox.claim("t2").expect("claim"), "already claimed");
        assert!(!mailbox.retire().expect("retire"), "a driver holds it");
        mailbox.release().expect("release");
        assert!(mailbox.retire().expect("retire"));
        assert!(!mailbox.claim("t3").expect("claim"), "gone");
    }

    #[test]
    fn a_posted_turn_is_listed_with_its_lease() {
        let project = tempfile::tempdir().expect("tempdir");
        let mailbox = Mailbox::create(workers_dir(project.path()).join("w1")).expect("created");
        mailbox.post("t1", "{}").expect("post");
        std::fs::write(mailbox.dir.join("../x.turn"), "{}").expect("outside");
        std::fs::write(mailbox.dir.join(".hidden.turn"), "{}").expect("hidden");
        assert_eq!(mailbox.posted(), ["t1"]);
        assert_eq!(mailbox.lease("t1").as_deref(), Some("0"));
        mailbox.renew("t1", 3).expect("renew");
        assert_eq!(mailbox.lease("t1").as_deref(), Some("3"));
        mailbox.revoke("t1").expect("revoke");
        assert_eq!(mailbox.lease("t1"), None);
        let mut out = mailbox.open_out("t1").expect("out");
        out.write_all(b"one\ntwo\n").expect("write");
        assert_eq!(
            read_from(&mailbox.out_file("t1"), 4, 100).expect("read"),
            b"two\n"
        );
    }
}
