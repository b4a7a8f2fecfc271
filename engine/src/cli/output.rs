//! Printing results: human text, or exactly one JSON document.
//!
//! Much of what drover prints comes from places it does not control — a
//! component's answers, a CLI's output, a panic message — so every line for
//! people goes through [`terminal_text`]: escape, C0 and C1 control
//! characters are shown escaped (`\x1b`, `\u{9b}`) instead of reaching the
//! terminal, where they could clear it, retitle it or write the clipboard.
//! Use the `outln!`/`out!`/`errln!` macros, [`print_json`] and
//! [`stdout_json`]: this module is the only code in the workspace that may
//! reach stdout or stderr. The root `clippy.toml` forbids `println!` and
//! friends and `std::io::stdout`/`stderr` everywhere else, so no command can
//! print around the sanitizer.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "the one place that writes to the terminal, after sanitizing"
)]

use std::borrow::Cow;
use std::io::{IsTerminal, Write};

use serde::Serialize;

/// `--json` on a reporting command.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct Json {
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Set while `drover mcp` serves: stdout carries the protocol, so anything
/// a command would print there goes to stderr instead (the log), where it
/// cannot break a JSON-RPC message.
static STDOUT_RESERVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Where a command's stdout text goes: stdout, or stderr while the MCP
/// transport owns stdout.
fn command_stdout() -> Box<dyn Write> {
    if STDOUT_RESERVED.load(std::sync::atomic::Ordering::Relaxed) {
        Box::new(std::io::stderr().lock())
    } else {
        Box::new(std::io::stdout().lock())
    }
}

/// The MCP transport's output: stdout, handed over once. From then on every
/// other print meant for stdout goes to stderr, so the only bytes on
/// stdout are the protocol's (JSON-RPC messages serde wrote, which carry
/// no raw control characters: serde escapes them in strings).
pub fn protocol_stdout() -> tokio::io::Stdout {
    STDOUT_RESERVED.store(true, std::sync::atomic::Ordering::Relaxed);
    tokio::io::stdout()
}

/// Prints `value` as one pretty JSON document with a trailing newline.
pub fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = terminal_json(&serde_json::to_string_pretty(value)?);
    out.push('\n');
    write_all(&mut command_stdout(), &out);
    Ok(())
}

/// JSON text safe for a terminal: C1 controls (U+0080..U+009F, which some
/// terminals obey) and DEL are escaped, which is the same JSON; so is every
/// C0 control but newline and tab, which valid JSON never holds raw (serde
/// escapes them) but text claiming to be JSON might.
pub fn terminal_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Prints JSON text (a document, or lines of one) on stdout, through
/// [`terminal_json`].
pub fn stdout_json(text: &str) {
    write_all(&mut command_stdout(), &terminal_json(text));
}

/// Whether stderr is a terminal (a progress display is worth drawing).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

fn control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` with every control character but newline and tab escaped.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    escape(text, control)
}

/// `text` as one line: newline and tab escaped as well.
pub fn terminal_line(text: &str) -> Cow<'_, str> {
    escape(text, char::is_control)
}

fn escape(text: &str, needs: fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x80 => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

fn write_all(stream: &mut dyn Write, text: &str) {
    let written = stream
        .write_all(text.as_bytes())
        .and_then(|()| stream.flush());
    // Other write errors have nowhere better to go.
    if written.is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) {
        end_on_closed_output();
    }
}

/// `drover … | head`: the reader left, so the command stops as other tools
/// do, by SIGPIPE. Only here: the process keeps SIGPIPE ignored (Rust's
/// default), because a default SIGPIPE would also kill drover when a CLI
/// it started exits before reading its stdin — a seat host writing to an
/// agent that already died vanished without recording why.
fn end_on_closed_output() -> ! {
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition and raising it; the
    // process is meant to end here.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}

/// Prints human text on stdout, neutralised.
pub fn stdout_text(text: &str) {
    write_all(&mut command_stdout(), &terminal_text(text));
}

/// Prints human text on stderr, neutralised.
pub fn stderr_text(text: &str) {
    write_all(&mut std::io::stderr().lock(), &terminal_text(text));
}

/// `print!` for people: neutralised.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::stdout_text(&format!($($arg)*)) };
}

/// `println!` for people: neutralised.
macro_rules! outln {
    () => { $crate::cli::output::stdout_text("\n") };
    ($($arg:tt)*) => { $crate::cli::output::stdout_text(&format!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` for people: neutralised.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::cli::output::stderr_text(&format!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {errln, out, outln};

/// A stderr writer for the log subscriber: log lines can carry guest text.
pub struct CleanStderr;

impl Write for CleanStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(terminal_text(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Left-aligned columns sized to their widest cell; each cell is one line,
/// neutralised.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|c| terminal_line(c).into_owned()).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                let pad = widths[i] - cell.chars().count();
                out.push_str(cell);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.trim_end().to_string()
    };
    let mut out = line(header.to_vec());
    out.push('\n');
    for row in &rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_are_shown_not_obeyed() {
        let osc52 = "copy \u{1b}]52;c;ZXZpbA==\u{7}done";
        assert_eq!(terminal_text(osc52), "copy \\x1b]52;c;ZXZpbA==\\x07done");
        assert_eq!(
            terminal_text("\u{1b}[2J\u{1b}]0;pwned\u{7}"),
            "\\x1b[2J\\x1b]0;pwned\\x07"
        );
        assert_eq!(
            terminal_text("csi \u{9b}31m and \u{7f}"),
            "csi \\u{9b}31m and \\x7f"
        );
        assert_eq!(
            terminal_text("line one\n\tline two"),
            "line one\n\tline two"
        );
        assert_eq!(terminal_line("one\ntwo\r\tthree"), "one\\ntwo\\r\\tthree");
        assert!(matches!(terminal_text("plain ünïcode"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_its_escapes() {
        let value = serde_json::json!({"id": "a\u{1b}]52;c;eA==\u{7}\u{9b}2J\u{7f}", "n": [1, 2]});
        let pretty = serde_json::to_string_pretty(&value).expect("json");
        let safe = terminal_json(&pretty);
        assert!(!safe.chars().any(|c| c.is_control() && c != '\n'), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back, value);
        // Text that only claims to be JSON cannot smuggle a raw escape either.
        assert_eq!(terminal_json("x\u{1b}[2J\r"), "x\\u001b[2J\\u000d");
    }

    #[test]
    fn table_cells_stay_on_one_line() {
        let text = table(
            &["A", "B"],
            &[vec!["x\ny".to_string(), "\u{1b}[31mred".to_string()]],
        );
        assert_eq!(text, "A     B\nx\\ny  \\x1b[31mred\n");
    }
}
