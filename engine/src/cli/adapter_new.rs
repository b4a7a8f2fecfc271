//! `drover adapter new NAME [--lang rust|python|js]`: an adapter that
//! builds and passes `drover adapter check` as generated, written against
//! drover's guest SDK in that language (copied in: it is not published) and
//! the WIT this drover hosts, with a README that says how to build it.
//! Python and JavaScript get the same build script as their examples.

use super::output::outln;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::Outcome;

include!(concat!(env!("OUT_DIR"), "/kit_files.rs"));

/// (path in the new adapter, text) pairs.
type Files = &'static [(&'static str, &'static str)];
/// Files copied as they are, under their path in the new adapter.
type Copied = Vec<(String, &'static str)>;

/// Templates: `__NAME__`, `__CRATE__`, `__TYPE__`, `__DIR__` and `__WIT__`
/// are filled in.
const RUST: Files = &[
    ("Cargo.toml", include_str!("scaffold/rust/Cargo.toml.txt")),
    ("src/lib.rs", include_str!("scaffold/rust/lib.rs.txt")),
    ("README.md", include_str!("scaffold/rust/README.md.txt")),
];
const PYTHON: Files = &[
    ("app.py", include_str!("scaffold/python/app.py.txt")),
    ("README.md", include_str!("scaffold/python/README.md.txt")),
];
const JS: Files = &[
    ("adapter.js", include_str!("scaffold/js/adapter.js.txt")),
    ("README.md", include_str!("scaffold/js/README.md.txt")),
];

/// Files copied as they are.
const PYTHON_FILES: Files = &[
    (
        "drover_kit.py",
        include_str!("../../../components/kit/python/drover_kit.py"),
    ),
    (
        "build.sh",
        include_str!("../../../examples/python-adapter/build.sh"),
    ),
];
const JS_FILES: Files = &[
    (
        "drover-kit.js",
        include_str!("../../../components/kit/js/drover-kit.js"),
    ),
    (
        "build.sh",
        include_str!("../../../examples/js-adapter/build.sh"),
    ),
];

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    Js,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The adapter's name (letters, digits, `-`, `_`).
    name: String,
    /// The language to write it in.
    #[arg(long, value_enum, default_value = "rust")]
    lang: Lang,
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
    let dir_name = dir
        .canonicalize()
        .unwrap_or_else(|_| dir.clone())
        .file_name()
        .map_or_else(
            || format!("{name}-adapter"),
            |n| n.to_string_lossy().into_owned(),
        );
    let fill = |text: &str| {
        text.replace("__NAME__", name)
            .replace("__CRATE__", &crate_name)
            .replace("__TYPE__", &type_name)
            .replace("__DIR__", &dir_name)
            .replace("__WIT__", crate::sandbox::WIT_VERSION)
    };
    let (templates, copied, build): (Files, Copied, &str) = match args.lang {
        Lang::Rust => (
            RUST,
            KIT_FILES
                .iter()
                .map(|(file, text)| (format!("vendor/drover-kit/{file}"), *text))
                .collect(),
            "cargo build --release --target wasm32-wasip2",
        ),
        Lang::Python => (PYTHON, as_owned(PYTHON_FILES), "./build.sh"),
        Lang::Js => (JS, as_owned(JS_FILES), "./build.sh"),
    };
    for (file, template) in templates {
        write(&dir, file, &fill(template))?;
    }
    for (file, text) in &copied {
        write(&dir, file, text)?;
    }
    write(&dir, "wit/adapter.wit", super::adapter::WIT)?;
    if args.lang != Lang::Rust {
        make_executable(&dir.join("build.sh"))?;
    }
    outln!("created {}; build it with:", dir.display());
    outln!("  cd {} && {build}", dir.display());
    Ok(Outcome::Ok)
}

fn as_owned(files: Files) -> Copied {
    files.iter().map(|(f, t)| (f.to_string(), *t)).collect()
}

fn make_executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("making {} executable", path.display()))
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
        // The generated bindings come with the kit, and it reads the WIT's
        // version at the new crate's root.
        assert!(lib.contains(r#"include!("bindings.rs");"#));
        let bindings = file("src/bindings.rs").expect("the bindings");
        assert!(bindings.contains("pub mod drover"), "generated bindings");
        assert!(lib.contains(r#"include_str!("../../../wit/adapter.wit")"#));
        // Its tests are not vendored, so neither is what they need.
        assert!(!manifest.contains("dev-dependencies"), "{manifest}");
    }

    #[test]
    fn every_wit_version_is_the_wit_files_package_version() {
        let version = crate::sandbox::WIT_VERSION;
        let package = super::super::adapter::WIT
            .lines()
            .find(|l| l.starts_with("package "));
        let expected = format!("package drover:adapter@{version};");
        assert_eq!(package, Some(expected.as_str()));
        // The Python and JavaScript kits spell it out; they must follow.
        for (file, text) in PYTHON_FILES.iter().chain(JS_FILES) {
            if file.contains("kit") {
                assert!(
                    text.contains(&format!("WIT_VERSION = \"{version}\"")),
                    "{file}"
                );
            }
        }
    }
}
