//! Finding the provisioned CLIs (and drover-model-server) for a tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::bin_dir;

/// Where a provisioned CLI lives.
#[derive(Debug, Clone)]
pub struct Bins {
    pub cli: PathBuf,
    /// node 22's bin dir (the node-based CLIs need it first in PATH).
    pub node_dir: Option<PathBuf>,
    /// opencode's plugin dependency, installed once by provision-clis.sh.
    pub opencode_plugin: Option<PathBuf>,
}

fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// `$DROVER_CLI_CACHE`, else `$HOME/.cache/drover-clis`.
pub fn cli_cache() -> PathBuf {
    match std::env::var_os("DROVER_CLI_CACHE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache")
            .join("drover-clis"),
    }
}

/// The `export NAME='value'` lines of the cache's env.sh.
fn env_file(cache: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(cache.join("env.sh")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('\'')
                .and_then(|v| v.strip_suffix('\''))
                .or_else(|| v.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
                .unwrap_or(v);
            (k.trim().to_string(), v.to_string())
        })
        .collect()
}

/// The CLI's binary and node 22, from the environment or env.sh.
pub fn locate(cli: &str) -> (Option<Bins>, String) {
    let cache = cli_cache();
    let file = env_file(&cache);
    let var = format!("DROVER_{}_BIN", cli.to_uppercase());
    let lookup = |key: &str| {
        std::env::var(key)
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| file.get(key).cloned())
    };
    let Some(bin) = lookup(&var) else {
        return (
            None,
            format!(
                "neither ${var} nor {} names it",
                cache.join("env.sh").display()
            ),
        );
    };
    let bin = PathBuf::from(bin);
    if !bin.is_file() {
        return (None, format!("{} does not exist", bin.display()));
    }
    let node_dir = lookup("DROVER_NODE22_BIN_DIR").map(PathBuf::from);
    let opencode_plugin = lookup("DROVER_OPENCODE_PLUGIN_DIR")
        .map(PathBuf::from)
        .filter(|d| d.join("package-lock.json").is_file());
    (
        Some(Bins {
            cli: bin,
            node_dir,
            opencode_plugin,
        }),
        String::new(),
    )
}

/// The CLI, or `None` after saying on stderr why the test is skipped.
/// Under `CI` a missing CLI is a failure, not a skip.
pub fn require(cli: &str) -> Option<Bins> {
    let (bins, why) = locate(cli);
    if bins.is_some() {
        return bins;
    }
    let message = format!(
        "the real {cli} CLI is not provisioned ({why}); run scripts/provision-clis.sh (or set DROVER_CLI_CACHE)"
    );
    assert!(!is_ci(), "CI is set, so this test must run: {message}");
    eprintln!("SKIPPED: {message}");
    None
}

pub fn model_server_exe() -> PathBuf {
    let path = bin_dir().join("drover-model-server");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace` before the tests",
        path.display()
    );
    path
}
