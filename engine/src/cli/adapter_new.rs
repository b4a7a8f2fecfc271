//! `drover adapter new NAME`: a Rust adapter crate that compiles, written
//! against the guest SDK (vendored: the kit is not published) and the WIT
//! this drover hosts.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::Outcome;

const LIB: &str = include_str!("scaffold/lib.rs.txt");
const CARGO: &str = include_str!("scaffold/Cargo.toml.txt");
const README: &str = include_str!("scaffold/README.md.txt");

include!(concat!(env!("OUT_DIR"), "/kit_files.rs"));

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
    let type_name = type_name(name);
    let fill = |text: &str| {
        text.replace("__NAME__", name)
            .replace("__CRATE__", &crate_name)
            .replace("__TYPE__", &type_name)
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
    for (file, text) in KIT_FILES {
        write(&dir, &format!("vendor/drover-kit/{file}"), text)?;
    }
    println!("created {} ({crate_name}); build it with:", dir.display());
    println!(
        "  cd {} && cargo build --release --target wasm32-wasip2",
        dir.display()
    );
    Ok(Outcome::Ok)
}

/// `my-cli` -> `MyCli`; a name that starts with a digit gets a `Cli` prefix.
fn type_name(name: &str) -> String {
    let camel: String = name
        .split(['-', '_'])
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect();
    if camel.starts_with(|c: char| c.is_ascii_digit()) {
        format!("Cli{camel}")
    } else {
        camel
    }
}

fn write(dir: &Path, file: &str, text: &str) -> anyhow::Result<()> {
    let path = dir.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_rust_identifiers() {
        assert_eq!(type_name("mycli"), "Mycli");
        assert_eq!(type_name("my-cli_two"), "MyCliTwo");
        assert_eq!(type_name("9x"), "Cli9x");
    }

    #[test]
    fn the_vendored_kit_is_whole_and_stands_alone() {
        let file = |name: &str| KIT_FILES.iter().find(|(f, _)| *f == name).map(|(_, t)| *t);
        let manifest = file("Cargo.toml").expect("a manifest");
        assert!(!manifest.contains("workspace"), "{manifest}");
        assert!(manifest.contains("wit-bindgen"), "{manifest}");
        let lib = file("src/lib.rs").expect("lib.rs");
        // Every module lib.rs declares is vendored with it.
        for line in lib.lines() {
            let declared = line
                .trim_start_matches("pub ")
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(';'));
            if let Some(module) = declared {
                assert!(file(&format!("src/{module}.rs")).is_some(), "{module}");
            }
        }
        // The kit finds the WIT at the new crate's root.
        assert!(lib.contains(r#"path: "../../wit""#));
    }
}
