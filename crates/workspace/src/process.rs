//! Process identity and teardown on Linux, via `/proc`.
//!
//! A pid alone is not an identity: after a process dies its pid can be
//! reused. Teardown therefore records (pid, start time) for a process tree
//! before striking, and only ever signals a pid whose start time still
//! matches. pid 0 and negative pids are refused (process-group signals).

use std::collections::{BTreeMap, VecDeque};

use drover_gate::{Cleared, Effect, Provenance, Refused, Sourced};

/// A process and its start time (clock ticks since boot, field 22 of
/// `/proc/<pid>/stat`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Identity {
    pub pid: u32,
    pub start: u64,
}

/// (ppid, start time) from `/proc/<pid>/stat`, parsed after the last `)`
/// because the command name may contain spaces and parentheses.
fn stat(pid: u32) -> Option<(u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // after ')': state(0) ppid(1) … starttime is field 22 overall = index 19 here.
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start))
}

/// Makes `command` a background process of drover's own: a process group
/// of its own, and no descriptor inherited past stdio. A descriptor its
/// caller left open (a CI wrapper's `flock`) would otherwise stay held for
/// as long as the seat lives.
pub fn detached(command: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    // SAFETY: close_range(2) is async-signal-safe and touches only this
    // child's descriptor table, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            if libc::close_range(
                3,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC as libc::c_int,
            ) != 0
            {
                // Older kernels: mark them one by one.
                for fd in 3..1024 {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            Ok(())
        })
    }
}

pub fn identity(pid: u32) -> Option<Identity> {
    if pid == 0 {
        return None;
    }
    stat(pid).map(|(_, start)| Identity { pid, start })
}

/// Whether the process with this identity is still the one running.
pub fn alive(id: Identity) -> bool {
    identity(id.pid).is_some_and(|now| now.start == id.start) && !is_zombie(id.pid)
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| {
            t.rfind(')')
                .map(|i| t[i + 1..].trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// `root` and all its descendants, captured in one pass over `/proc`.
pub fn tree(root: u32) -> Vec<Identity> {
    let Some(root_id) = identity(root) else {
        return Vec::new();
    };
    let mut children: BTreeMap<u32, Vec<Identity>> = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.filter_map(Result::ok) {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some((ppid, start)) = stat(pid) {
                children
                    .entry(ppid)
                    .or_default()
                    .push(Identity { pid, start });
            }
        }
    }
    let mut out = vec![root_id];
    let mut queue = VecDeque::from([root]);
    while let Some(pid) = queue.pop_front() {
        for child in children.get(&pid).into_iter().flatten() {
            if !out.iter().any(|known| known.pid == child.pid) {
                out.push(*child);
                queue.push_back(child.pid);
            }
        }
    }
    out
}

/// Sends `signal` to the process if it is still the one identified. The
/// identity must have been cleared for [`Effect::Signal`]: only a process
/// this drover started, or a sealed record of one, is ever signalled.
pub fn signal(id: &Cleared<Identity>, signal: i32) -> bool {
    if id.effect() != Effect::Signal {
        return false;
    }
    signal_checked(**id, signal)
}

fn signal_checked(id: Identity, signal: i32) -> bool {
    if id.pid == 0 || i32::try_from(id.pid).is_err() || !alive(id) {
        return false;
    }
    // SAFETY: kill(2) with a positive pid we just confirmed by start time.
    unsafe { libc::kill(id.pid as i32, signal) == 0 }
}

pub fn terminate(id: &Cleared<Identity>) -> bool {
    signal(id, libc::SIGTERM)
}

pub fn force_kill(id: &Cleared<Identity>) -> bool {
    signal(id, libc::SIGKILL)
}

/// `root` cleared for signalling, when its provenance allows it.
pub fn clear_signal(
    what: &str,
    root: Identity,
    from: Provenance,
) -> Result<Cleared<Identity>, Refused> {
    drover_gate::clear(Effect::Signal, what, Sourced::new(root, from))
}

/// The tree under a cleared process (itself first), each member cleared
/// as its root was: they are that process's children.
pub fn cleared_tree(root: &Cleared<Identity>) -> Vec<Cleared<Identity>> {
    if root.effect() != Effect::Signal {
        return Vec::new();
    }
    tree(root.pid)
        .into_iter()
        .filter_map(|member| clear_signal("a process under it", member, root.from()).ok())
        .collect()
}

/// The tree under a pane's process (`pid`, as its multiplexer reports it),
/// cleared with the pane's provenance; empty when the pane has no live
/// process or the gate refuses it.
pub fn pane_tree(pid: Option<u32>, from: Provenance) -> Vec<Cleared<Identity>> {
    pid.and_then(identity)
        .and_then(|id| clear_signal("the pane's process", id, from).ok())
        .map(|root| cleared_tree(&root))
        .unwrap_or_default()
}

/// Stops a child that leads its own process group: SIGTERM to the group,
/// then, after `grace` (at most 5 s), SIGKILL to the tree recorded before
/// the first signal — only to processes that are still the ones started.
pub fn stop_group(
    child: &mut std::process::Child,
    identity: Option<Identity>,
    grace: std::time::Duration,
) {
    // The child was started by this drover.
    let tree = identity
        .and_then(|id| clear_signal("the child", id, Provenance::Created).ok())
        .map(|id| cleared_tree(&id))
        .unwrap_or_default();
    let pgid = child.id() as i32;
    if pgid > 0 && identity.is_some_and(alive) {
        // SAFETY: signalling our own child's process group (pgid = its pid).
        unsafe {
            libc::killpg(pgid, libc::SIGTERM);
        }
    }
    let until = std::time::Instant::now() + grace.min(std::time::Duration::from_secs(5));
    while std::time::Instant::now() < until {
        if matches!(child.try_wait(), Ok(Some(_))) && tree.iter().all(|p| !alive(**p)) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for member in &tree {
        force_kill(member);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// After a pane was closed: waits up to `grace` for `gone()` and for every
/// process of `tree` to exit (asking politely once the pane is gone), then
/// force-kills the survivors whose identity still matches. Returns their pids.
pub fn reap_tree(
    tree: &[Cleared<Identity>],
    grace: std::time::Duration,
    gone: impl Fn() -> bool,
) -> Vec<u32> {
    let until = std::time::Instant::now() + grace;
    loop {
        let pane_gone = gone();
        let survivors: Vec<&Cleared<Identity>> = tree.iter().filter(|p| alive(***p)).collect();
        if pane_gone && survivors.is_empty() {
            return Vec::new();
        }
        if std::time::Instant::now() >= until {
            for p in &survivors {
                force_kill(p);
            }
            return survivors.iter().map(|p| p.pid).collect();
        }
        if pane_gone {
            for p in &survivors {
                terminate(p);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_detached_process_inherits_no_descriptor_past_stdio() {
        let file = tempfile::tempfile().expect("file");
        // SAFETY: a copy (F_DUPFD) of a descriptor this test owns; it has no
        // close-on-exec flag, as a caller's `flock` descriptor has none. A
        // high number: the low ones are what `ls` opens for itself.
        let inherited =
            unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&file), libc::F_DUPFD, 200) };
        assert!(inherited >= 200, "{inherited}");
        let listed = |detach: bool| {
            let mut command = std::process::Command::new("/bin/sh");
            command.args(["-c", "ls /proc/self/fd"]);
            if detach {
                detached(&mut command);
            }
            let out = command.output().expect("sh");
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|fd| fd == inherited.to_string())
        };
        // Without it the descriptor is there: the check can fail.
        assert!(listed(false));
        assert!(!listed(true));
        // SAFETY: closes the copy made above.
        unsafe { libc::close(inherited) };
    }

    #[test]
    fn our_own_identity_is_stable_and_the_tree_contains_children() {
        let me = identity(std::process::id()).expect("self");
        assert_eq!(identity(std::process::id()), Some(me));
        assert!(alive(me));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep");
        let tree = tree(std::process::id());
        assert!(tree.iter().any(|i| i.pid == child.id()), "{tree:?}");
        let child_id = identity(child.id()).expect("child identity");
        let cleared = clear_signal("the child", child_id, Provenance::Created).expect("created");
        assert!(terminate(&cleared));
        let _ = child.wait();
        assert!(!alive(child_id));
        // A stale identity (wrong start time) is never signalled.
        let stale = Identity {
            pid: std::process::id(),
            start: me.start + 1,
        };
        let stale = clear_signal("stale", stale, Provenance::Created).expect("created");
        assert!(!force_kill(&stale));
        let zero = clear_signal("zero", Identity { pid: 0, start: 0 }, Provenance::Created)
            .expect("created");
        assert!(!signal(&zero, libc::SIGKILL));
        // A record drover did not seal is never cleared for a signal.
        assert!(clear_signal("a committed host", me, Provenance::ForeignRecord).is_err());
    }
}
