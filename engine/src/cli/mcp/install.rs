//! `drover mcp install|remove --cli NAME`: drover in a CLI's MCP config.
//!
//! The guarantees are `drover hooks install/remove`'s (crates/hooks):
//! - **Checked edit.** The edited file is parsed again and compared with
//!   the original as documents: it must be the original plus drover's one
//!   entry, and nothing else, or nothing is written.
//! - **Original kept.** Before the first write, the file's bytes (or the
//!   fact that there was none) are kept under drover's state directory.
//! - **Byte-exact removal.** When the file is still the original plus
//!   drover's entry, `remove` puts the original bytes back (or deletes the
//!   file drover created). When the user (or the CLI: Claude Code rewrites
//!   `~/.claude.json` as it runs) changed it since, only drover's entry is
//!   taken out, checked the same way.
//! - The file keeps its mode and owner; a read-only file or a symbolic link
//!   is refused, not replaced.
//!
//! Where each CLI reads MCP servers (docs/mcp.md, "Install"):
//! - claude: `~/.claude.json`, `projects.<project>.mcpServers` — Claude
//!   Code's "local" scope, which `claude -p` loads without asking (a
//!   project's `.mcp.json` needs an approval first, which a
//!   non-interactive run cannot give).
//! - codex: `$CODEX_HOME/config.toml` (`~/.codex`), `[mcp_servers.drover]`.
//! - gemini, qwen: `~/.gemini/settings.json`, `~/.qwen/settings.json`,
//!   `mcpServers`.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Serialize;
use serde_json::{Value, json};

use crate::gate::{Effect, Provenance, Sourced};
use crate::state::Keep;

/// What each CLI may take for a tool call before it gives up on it: a
/// `send` that waits may run a turn this long (tools.rs, `MAX_WAIT`).
const TOOL_TIMEOUT_S: u64 = 3 * 60 * 60;

/// The CLIs `--cli` takes.
pub const CLIS: &[&str] = &["claude", "codex", "gemini", "qwen"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Toml,
}

/// One CLI's MCP config file and where drover's entry goes in it.
struct Target {
    cli: &'static str,
    path: PathBuf,
    format: Format,
    /// The keys down to drover's entry (its last key is the server's name).
    key: Vec<String>,
}

/// What an install or remove did.
#[derive(Debug, Serialize)]
pub struct Done {
    pub cli: String,
    pub path: PathBuf,
    /// `installed`, `unchanged`, `restored` (the original bytes are back),
    /// `deleted` (drover had created the file), or `removed` (drover's
    /// entry was taken out of a file changed since).
    pub change: &'static str,
    /// The MCP server entry drover wrote (install).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<Value>,
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .context("HOME is not set (an absolute path): drover cannot find the CLI's config")
}

fn target(cli: &str, project: &Path) -> anyhow::Result<Target> {
    let home = home()?;
    let env_dir = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let server = "drover".to_string();
    Ok(match cli {
        "claude" => Target {
            cli: "claude",
            // Claude Code keeps its config in $CLAUDE_CONFIG_DIR when set.
            path: env_dir("CLAUDE_CONFIG_DIR")
                .unwrap_or(home)
                .join(".claude.json"),
            format: Format::Json,
            key: vec![
                "projects".into(),
                project.display().to_string(),
                "mcpServers".into(),
                server,
            ],
        },
        "codex" => Target {
            cli: "codex",
            path: env_dir("CODEX_HOME")
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml"),
            format: Format::Toml,
            key: vec!["mcp_servers".into(), server],
        },
        "gemini" | "qwen" => Target {
            cli: if cli == "gemini" { "gemini" } else { "qwen" },
            path: home.join(format!(".{cli}")).join("settings.json"),
            format: Format::Json,
            key: vec!["mcpServers".into(), server],
        },
        other => bail!(
            "drover does not know where {other} keeps its MCP servers (--cli takes {})",
            CLIS.join(", ")
        ),
    })
}

/// The server entry for `target`: this drover, on this project.
fn entry(target: &Target, project: &Path) -> anyhow::Result<Value> {
    let exe = std::env::current_exe().context("locating the drover binary")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let command = exe
        .to_str()
        .context("the drover binary's path is not UTF-8")?
        .to_string();
    let project = project
        .to_str()
        .context("the project's path is not UTF-8")?
        .to_string();
    let args = json!(["--project", project, "mcp"]);
    Ok(match target.cli {
        "claude" => json!({"type": "stdio", "command": command, "args": args, "env": {}}),
        "codex" => json!({"command": command, "args": args, "tool_timeout_sec": TOOL_TIMEOUT_S}),
        // Gemini CLI and Qwen Code count the timeout in milliseconds.
        _ => json!({"command": command, "args": args, "timeout": TOOL_TIMEOUT_S * 1000}),
    })
}

pub fn install(project: &Path, cli: &str) -> anyhow::Result<Done> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    let target = target(cli, &project)?;
    let ours = entry(&target, &project)?;
    let done = |change, entry| Done {
        cli: target.cli.to_string(),
        path: target.path.clone(),
        change,
        entry,
    };
    let before = read(&target.path)?;
    let text = before.as_deref().unwrap_or("");
    let doc = parse(&target, text)?;
    match lookup(&doc, &target.key) {
        Some(existing) if *existing == ours => return Ok(done("unchanged", Some(ours))),
        Some(existing) => bail!(
            "{} already has an MCP server named drover ({existing}); `drover mcp remove --cli {}` first (or edit it by hand)",
            target.path.display(),
            target.cli
        ),
        None => {}
    }
    let edited = match target.format {
        Format::Json => {
            let mut new = doc.clone();
            insert(&mut new, &target.key, ours.clone()).with_context(|| {
                format!(
                    "{}: drover's entry has no place in it",
                    target.path.display()
                )
            })?;
            let mut out = serde_json::to_string_pretty(&new)?;
            if before.is_none() || text.ends_with('\n') {
                out.push('\n');
            }
            out
        }
        Format::Toml => append_toml(text, &target.key, &ours)?,
    };
    verify_added(&target, &doc, &edited, &ours)?;
    let keep = keep(&target.path)?;
    save_original(&target, before.as_deref(), keep)?;
    write(&target.path, edited, keep)?;
    Ok(done("installed", Some(ours)))
}

pub fn remove(project: &Path, cli: &str) -> anyhow::Result<Done> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    let target = target(cli, &project)?;
    let done = |change| Done {
        cli: target.cli.to_string(),
        path: target.path.clone(),
        change,
        entry: None,
    };
    let backup = backup_path(&target)?;
    let Some(current) = read(&target.path)? else {
        return Ok(done("unchanged"));
    };
    let doc = parse(&target, &current)?;
    if lookup(&doc, &target.key).is_none() {
        return Ok(done("unchanged"));
    }
    let keep = keep(&target.path)?;
    // The original, when the file is still it plus drover's entry.
    if let Some(original) = read_original(&backup)? {
        let same = match &original {
            None => without(&doc, &target.key) == Value::Object(serde_json::Map::new()),
            Some(text) => parse(&target, text)
                .is_ok_and(|o| without(&o, &target.key) == without(&doc, &target.key)),
        };
        if same {
            let change = match original {
                None => {
                    drover_state::remove_file(&target.path)
                        .with_context(|| format!("deleting {}", target.path.display()))?;
                    "deleted"
                }
                Some(text) => {
                    write(&target.path, text, keep)?;
                    "restored"
                }
            };
            forget_original(&backup);
            return Ok(done(change));
        }
    }
    let edited = match target.format {
        Format::Json => {
            let mut new = doc.clone();
            take(&mut new, &target.key);
            let mut out = serde_json::to_string_pretty(&new)?;
            if current.ends_with('\n') {
                out.push('\n');
            }
            out
        }
        Format::Toml => cut_toml(&current, &target)?,
    };
    let after = parse(&target, &edited)?;
    if lookup(&after, &target.key).is_some()
        || without(&after, &target.key) != without(&doc, &target.key)
    {
        bail!(
            "{}: taking drover's entry out would change more than that entry; remove `{}` by hand",
            target.path.display(),
            target.key.join(".")
        );
    }
    write(&target.path, edited, keep)?;
    forget_original(&backup);
    Ok(done("removed"))
}

/// The file's text; `None` when it does not exist. A symbolic link is
/// refused: replacing the file would replace the link.
fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        Ok(meta) if meta.file_type().is_symlink() => bail!(
            "{} is a symbolic link: drover does not replace it; add drover to the file it points to by hand (docs/mcp.md)",
            path.display()
        ),
        Ok(meta) if !meta.is_file() => bail!("{} is not a regular file", path.display()),
        Ok(_) => {}
    }
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))
}

fn parse(target: &Target, text: &str) -> anyhow::Result<Value> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    let parsed = match target.format {
        Format::Json => serde_json::from_str(text).map_err(|e| e.to_string()),
        Format::Toml => text
            .parse::<toml::Table>()
            .map_err(|e| e.message().to_string())
            .and_then(|t| serde_json::to_value(t).map_err(|e| e.to_string())),
    };
    parsed.map_err(|e| {
        anyhow::anyhow!(
            "{} does not parse ({e}); drover leaves it alone",
            target.path.display()
        )
    })
}

fn lookup<'a>(doc: &'a Value, key: &[String]) -> Option<&'a Value> {
    key.iter().try_fold(doc, |value, k| value.get(k))
}

/// Puts `value` at `key`, making the objects on the way; fails where one
/// on the way is not an object.
fn insert(doc: &mut Value, key: &[String], value: Value) -> anyhow::Result<()> {
    let Some((last, path)) = key.split_last() else {
        bail!("an empty key");
    };
    let mut here = doc;
    for k in path {
        let Value::Object(map) = here else {
            bail!("`{k}`'s parent is not an object");
        };
        here = map
            .entry(k.clone())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    let Value::Object(map) = here else {
        bail!("`{}` is not an object", path.join("."));
    };
    map.insert(last.clone(), value);
    Ok(())
}

/// Takes the value at `key` out, and then the objects on the way that it
/// leaves empty.
fn take(doc: &mut Value, key: &[String]) {
    let Some((first, rest)) = key.split_first() else {
        return;
    };
    let Value::Object(map) = doc else { return };
    if rest.is_empty() {
        map.shift_remove(first);
        return;
    }
    if let Some(child) = map.get_mut(first) {
        take(child, rest);
        if child.as_object().is_some_and(serde_json::Map::is_empty) {
            map.shift_remove(first);
        }
    }
}

/// `doc` without drover's entry (nor the empty objects it sat in): what
/// must be the same before and after an edit.
fn without(doc: &Value, key: &[String]) -> Value {
    let mut copy = doc.clone();
    take(&mut copy, key);
    copy
}

/// The edit adds drover's entry and nothing else.
fn verify_added(target: &Target, before: &Value, edited: &str, ours: &Value) -> anyhow::Result<()> {
    let after = parse(target, edited)?;
    if lookup(&after, &target.key) != Some(ours)
        || without(&after, &target.key) != without(before, &target.key)
    {
        bail!(
            "{}: adding drover's entry would change more than `{}`; add it by hand (docs/mcp.md)",
            target.path.display(),
            target.key.join(".")
        );
    }
    Ok(())
}

/// The TOML table drover appends (the user's text is left as it is).
fn toml_table(key: &[String], entry: &Value) -> anyhow::Result<String> {
    let table: toml::Table = serde_json::from_value(entry.clone())?;
    // The keys are drover's own bare names (`mcp_servers.drover`).
    Ok(format!("[{}]\n{}", key.join("."), toml::to_string(&table)?))
}

fn append_toml(text: &str, key: &[String], entry: &Value) -> anyhow::Result<String> {
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&toml_table(key, entry)?);
    Ok(out)
}

/// The TOML file without the table drover appended; refused when that
/// table is no longer there as drover wrote it.
fn cut_toml(text: &str, target: &Target) -> anyhow::Result<String> {
    let Some(entry) = lookup(&parse(target, text)?, &target.key).cloned() else {
        return Ok(text.to_string());
    };
    let table = toml_table(&target.key, &entry)?;
    let Some(at) = text.find(&table) else {
        bail!(
            "{}: `[{}]` is not as drover wrote it; remove it by hand",
            target.path.display(),
            target.key.join(".")
        );
    };
    let mut start = at;
    // The blank line drover put before it goes too.
    if text[..start].ends_with("\n\n") {
        start -= 1;
    }
    Ok(format!("{}{}", &text[..start], &text[at + table.len()..]))
}

/// The file's mode and owner, kept when drover rewrites it; a file its
/// owner may not write is refused.
fn keep(path: &Path) -> anyhow::Result<Option<Keep>> {
    use std::os::unix::fs::MetadataExt;
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mode = meta.mode() & 0o777;
    if mode & 0o200 == 0 {
        bail!(
            "{} is read-only (mode {mode:04o}): drover does not replace a file its owner cannot write",
            path.display()
        );
    }
    Ok(Some(Keep {
        mode,
        owner: Some((meta.uid(), meta.gid())),
    }))
}

/// Writes the checked edit (or the original back) atomically, keeping
/// `keep`'s mode and owner; a new file is private to the user (it names
/// a program the CLI will run).
fn write(path: &Path, text: String, keep: Option<Keep>) -> anyhow::Result<()> {
    let cleared = crate::gate::clear(
        Effect::Write,
        "the checked MCP config edit",
        Sourced::new(text, Provenance::Created),
    )?;
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        bail!("{} has no parent directory", path.display());
    };
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let dir = cap_std::fs::Dir::open_ambient_dir(parent, cap_std::ambient_authority())
        .with_context(|| format!("opening {}", parent.display()))?;
    crate::state::write_atomic_in_as(
        &dir,
        Path::new(name),
        cleared.as_bytes(),
        Some(keep.unwrap_or(Keep::PRIVATE)),
    )
    .with_context(|| format!("writing {}", path.display()))
}

/// Where the original of `target`'s file is kept, under drover's state
/// directory (the files are the user's, not a project's): one per file
/// and entry, so two projects' entries in `~/.claude.json` each keep the
/// file as it was before theirs, and removing them in reverse order gives
/// back each earlier file byte for byte.
fn backup_path(target: &Target) -> anyhow::Result<PathBuf> {
    use sha2::Digest as _;
    let dir = crate::gate::seal::state_dir()
        .context("no state directory to keep the original in (set HOME or XDG_STATE_HOME)")?;
    let flat = target.path.display().to_string().replace(['/', '\\'], "_");
    let key = sha2::Sha256::digest(target.key.join("\0").as_bytes());
    let key: String = key.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Ok(dir
        .join("mcp")
        .join(format!("{}--{flat}--{key}", target.cli)))
}

/// `backup` with `.suffix` added (not replacing the file's own extension).
fn suffixed(backup: &Path, suffix: &str) -> PathBuf {
    let mut name = backup.as_os_str().to_os_string();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// Keeps the file's original before the first edit: its bytes in
/// `….orig`, or an empty `….absent` when there was no file. An original
/// already kept (an earlier install never removed) stays.
fn save_original(
    target: &Target,
    original: Option<&str>,
    keep: Option<Keep>,
) -> anyhow::Result<()> {
    let backup = backup_path(target)?;
    if read_original(&backup)?.is_some() {
        return Ok(());
    }
    let (suffix, bytes) = match original {
        Some(text) => ("orig", text),
        None => ("absent", ""),
    };
    let path = suffixed(&backup, suffix);
    // Only its owner may read it, as narrow as the original at most.
    let mode = keep.map_or(0o600, |k| k.mode & 0o600);
    write(
        &path,
        bytes.to_string(),
        Some(Keep {
            mode: mode | 0o200,
            owner: None,
        }),
    )
}

/// The kept original: `Some(Some(text))`, `Some(None)` when the file did
/// not exist, `None` when nothing is kept.
fn read_original(backup: &Path) -> anyhow::Result<Option<Option<String>>> {
    if suffixed(backup, "absent").is_file() {
        return Ok(Some(None));
    }
    let path = suffixed(backup, "orig");
    match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(|t| Some(Some(t)))
            .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn forget_original(backup: &Path) {
    for suffix in ["orig", "absent"] {
        let _ = drover_state::remove_file(&suffixed(backup, suffix));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml_target() -> Target {
        Target {
            cli: "codex",
            path: PathBuf::from("/nowhere/config.toml"),
            format: Format::Toml,
            key: vec!["mcp_servers".into(), "drover".into()],
        }
    }

    #[test]
    fn a_toml_table_is_appended_and_cut_back_out() {
        let target = toml_target();
        let entry = json!({"command": "/bin/drover", "args": ["--project", "/p", "mcp"], "tool_timeout_sec": 10800});
        let user = "model = \"x\" # mine\n\n[mcp_servers.other]\ncommand = \"o\"\n";
        let edited = append_toml(user, &target.key, &entry).expect("append");
        let before = parse(&target, user).expect("parse");
        verify_added(&target, &before, &edited, &entry).expect("only drover's entry added");
        assert!(edited.starts_with(user), "{edited}");
        assert_eq!(cut_toml(&edited, &target).expect("cut"), user);
    }

    #[test]
    fn an_edit_that_changes_more_is_refused() {
        let target = Target {
            cli: "gemini",
            path: PathBuf::from("/nowhere/settings.json"),
            format: Format::Json,
            key: vec!["mcpServers".into(), "drover".into()],
        };
        let entry = json!({"command": "/bin/drover"});
        let before = json!({"theme": "dark"});
        let sneaky =
            json!({"theme": "light", "mcpServers": {"drover": {"command": "/bin/drover"}}});
        assert!(verify_added(&target, &before, &sneaky.to_string(), &entry).is_err());
        let fair = json!({"theme": "dark", "mcpServers": {"drover": {"command": "/bin/drover"}}});
        assert!(verify_added(&target, &before, &fair.to_string(), &entry).is_ok());
    }
}
