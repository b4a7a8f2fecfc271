//! `drover adapter new NAME`: a Rust adapter crate that compiles, with the
//! WIT this drover hosts and every export wired up.

use super::output::outln;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::Outcome;

const LIB: &str = include_str!("scaffold/lib.rs.txt");
const CARGO: &str = include_str!("scaffold/Cargo.toml.txt");
const README: &str = include_str!("scaffold/README.md.txt");

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The adapter's name (letters, digits, `-`, `_`).
    name: String,
    /// Where to create it (default: ./<name>-adapter).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let name = args.name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        || name.starts_with(['-', '_'])
    {
        bail!("adapter name '{name}' must be letters, digits, '-' or '_'");
    }
    let crate_name = format!("{}_adapter", name.replace('-', "_"));
    let dir = args
        .dir
        .unwrap_or_else(|| PathBuf::from(format!("{name}-adapter")));
    if dir.exists()
        && std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!("{} already exists and is not empty", dir.display());
    }
    let fill = |text: &str| {
        text.replace("__NAME__", name)
            .replace("__CRATE__", &crate_name)
            .replace("__WIT__", crate::sandbox::WIT_VERSION)
    };
    write(
        &dir,
        "Cargo.toml",
        &fill(CARGO).replace("name = \"__CRATE__\"", &format!("name = \"{crate_name}\"")),
    )?;
    write(&dir, "src/lib.rs", &fill(LIB))?;
    write(&dir, "wit/adapter.wit", super::adapter::WIT)?;
    write(&dir, "README.md", &fill(README))?;
    outln!("created {} ({crate_name}); build it with:", dir.display());
    outln!(
        "  cd {} && cargo build --release --target wasm32-wasip2",
        dir.display()
    );
    Ok(Outcome::Ok)
}

fn write(dir: &Path, file: &str, text: &str) -> anyhow::Result<()> {
    let path = dir.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}
