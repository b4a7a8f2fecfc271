//! A program on a pseudo-terminal, and the screen it draws.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Lines of output kept for `recent` reads.
const RECENT_MAX: usize = 5000;

pub struct Terminal {
    master: Mutex<File>,
    child: Mutex<Option<Child>>,
    pid: u32,
    screen: Arc<Mutex<vt100::Parser<Title>>>,
    recent: Arc<Mutex<VecDeque<String>>>,
    revision: Arc<AtomicU64>,
    exited: Arc<AtomicBool>,
}

impl Terminal {
    pub fn spawn(
        argv: &[String],
        cwd: &str,
        env: &BTreeMap<String, String>,
        rows: u16,
        cols: u16,
    ) -> Result<Terminal, String> {
        let (program, args) = argv.split_first().ok_or("empty command")?;
        let (mut master_fd, mut slave_fd) = (0, 0);
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors into the ints we pass.
        let rc = unsafe {
            libc::openpty(
                &mut master_fd,
                &mut slave_fd,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        if rc != 0 {
            return Err(format!("openpty: {}", std::io::Error::last_os_error()));
        }
        // Neither end may leak into the next pane's program: a master held
        // open by another process would keep its terminal from hanging up.
        for fd in [master_fd, slave_fd] {
            // SAFETY: fcntl on descriptors openpty just returned.
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        // SAFETY: both descriptors were just opened and are owned here.
        let (master, slave) = unsafe {
            (
                OwnedFd::from_raw_fd(master_fd),
                OwnedFd::from_raw_fd(slave_fd),
            )
        };
        let stdio = |fd: &OwnedFd| fd.try_clone().map(Stdio::from).map_err(|e| e.to_string());
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(cwd)
            .envs(env)
            .env("TERM", "xterm-256color")
            .stdin(stdio(&slave)?)
            .stdout(stdio(&slave)?)
            .stderr(stdio(&slave)?);
        // SAFETY: only async-signal-safe calls between fork and exec: a new
        // session whose controlling terminal is the pty on stdin.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        drop(slave);
        let pid = child.id();
        let master = File::from(master);
        let mut reader = master.try_clone().map_err(|e| e.to_string())?;
        let screen = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            rows,
            cols,
            0,
            Title::default(),
        )));
        let recent = Arc::new(Mutex::new(VecDeque::new()));
        let revision = Arc::new(AtomicU64::new(1));
        let exited = Arc::new(AtomicBool::new(false));
        {
            let (screen, recent, revision, exited) = (
                Arc::clone(&screen),
                Arc::clone(&recent),
                Arc::clone(&revision),
                Arc::clone(&exited),
            );
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let mut partial = String::new();
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            screen
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .process(&buf[..n]);
                            partial.push_str(&String::from_utf8_lossy(&buf[..n]));
                            let mut lines = recent.lock().unwrap_or_else(|p| p.into_inner());
                            while let Some(end) = partial.find('\n') {
                                let line: String = partial[..end].to_string();
                                partial.drain(..=end);
                                lines.push_back(plain(&line));
                                if lines.len() > RECENT_MAX {
                                    lines.pop_front();
                                }
                            }
                            revision.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                // EOF or EIO: every holder of the terminal's other end is gone.
                exited.store(true, Ordering::Relaxed);
            });
        }
        Ok(Terminal {
            master: Mutex::new(master),
            child: Mutex::new(Some(child)),
            pid,
            screen,
            recent,
            revision,
            exited,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn exited(&self) -> bool {
        if self.exited.load(Ordering::Relaxed) {
            return true;
        }
        self.child
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .is_none_or(|c| matches!(c.try_wait(), Ok(Some(_))))
    }

    pub fn revision(&self) -> u64 {
        self.revision.load(Ordering::Relaxed)
    }

    pub fn write(&self, bytes: &[u8]) -> Result<(), String> {
        self.master
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .write_all(bytes)
            .map_err(|e| e.to_string())
    }

    pub fn bracketed_paste(&self) -> bool {
        self.screen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .screen()
            .bracketed_paste()
    }

    pub fn title(&self) -> String {
        self.screen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .callbacks()
            .0
            .clone()
    }

    /// The visible screen as text, and its revision.
    pub fn visible(&self) -> (String, u64) {
        let text = self
            .screen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .screen()
            .contents();
        (text, self.revision())
    }

    /// The last `lines` lines of output (control sequences removed).
    pub fn recent(&self, lines: usize) -> (String, u64) {
        let recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        let skip = recent.len().saturating_sub(lines);
        let text = recent
            .iter()
            .skip(skip)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        (text, self.revision())
    }
}

impl Drop for Terminal {
    /// Closing the terminal hangs up its session, as herdr's pane close
    /// does; the process is reaped on a thread.
    fn drop(&mut self) {
        // SAFETY: hangs up the pty's session by signalling the child's
        // process group (a session leader: its pgid is its pid).
        unsafe {
            libc::killpg(self.pid as libc::pid_t, libc::SIGHUP);
        }
        if let Some(mut child) = self.child.get_mut().ok().and_then(Option::take) {
            std::thread::spawn(move || child.wait());
        }
    }
}

/// The window title the program set (OSC 0/2).
#[derive(Default)]
pub struct Title(String);

impl vt100::Callbacks for Title {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0 = String::from_utf8_lossy(title).into_owned();
    }
}

/// A line of terminal output without control sequences or carriage returns.
fn plain(line: &str) -> String {
    let mut parser = vt100::Parser::new(1, 1000, 0);
    parser.process(line.replace('\r', "").as_bytes());
    parser.screen().contents().trim_end().to_string()
}
