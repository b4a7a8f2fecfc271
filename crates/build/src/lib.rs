//! drover-build: what the build scripts of `drover-profile` (the adapter
//! components it embeds), `drover-guest-builds` (the test guests),
//! `drover-hooks` (the relay binary it embeds) and `drover` (the kit and the
//! conformance corpus) share. A build script reports errors by printing one
//! line and exiting, so every helper here ends the build on failure.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a build script talks to cargo on stdout and stderr; nothing here reaches a user's terminal"
)]

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, exit};

/// The guests' target.
pub const TARGET: &str = "wasm32-wasip2";

/// Ends the build with `message`.
pub fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    exit(1);
}

/// An environment variable cargo sets for build scripts.
pub fn cargo_env(name: &str) -> String {
    env::var(name).unwrap_or_else(|_| fail(&format!("{name} unset")))
}

/// The repository root (the parent of the workspace members' directories).
pub fn repo_root() -> PathBuf {
    let manifest_dir = PathBuf::from(cargo_env("CARGO_MANIFEST_DIR"));
    manifest_dir
        .ancestors()
        .find(|dir| dir.join("components").join("Cargo.toml").is_file())
        .unwrap_or_else(|| fail("no components/ above the crate being built"))
        .to_path_buf()
}

/// The guests' cargo target dir, `<target>/wasm`: shared by every profile
/// and by the build scripts that build guests, so debug and release host
/// builds reuse the guest artifacts (OUT_DIR is
/// `<target>/<profile>/build/<pkg>/out`).
pub fn wasm_target_dir() -> PathBuf {
    nested_target_dir("wasm")
}

/// `<target>/<name>`: a cargo target dir for a nested build, beside the
/// outer build's profiles (a nested cargo cannot share the outer build's
/// own directory, which the outer cargo holds locked while it runs).
pub fn nested_target_dir(name: &str) -> PathBuf {
    let out_dir = PathBuf::from(cargo_env("OUT_DIR"));
    out_dir.ancestors().nth(4).unwrap_or(&out_dir).join(name)
}

/// Where `cargo build --release --target wasm32-wasip2` leaves its artifacts.
pub fn release_dir(target_dir: &Path) -> PathBuf {
    target_dir.join(TARGET).join("release")
}

pub fn check_target_installed() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_else(|| fail(&format!("cannot run `{rustc} --print sysroot`")));
    if !sysroot.join("lib").join("rustlib").join(TARGET).exists() {
        fail("the wasm32-wasip2 target is not installed; run `rustup target add wasm32-wasip2`");
    }
}

fn read_manifest(path: &Path) -> toml::Table {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|e| fail(&format!("reading {}: {e}", path.display())));
    text.parse()
        .unwrap_or_else(|e| fail(&format!("parsing {}: {e}", path.display())))
}

/// A guest workspace's members, as written in its `[workspace] members`.
pub fn members(workspace: &Path) -> Vec<String> {
    let manifest = workspace.join("Cargo.toml");
    read_manifest(&manifest)
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .unwrap_or_else(|| {
            fail(&format!(
                "{} has no [workspace] members",
                manifest.display()
            ))
        })
        .iter()
        .filter_map(|m| m.as_str())
        .map(str::to_string)
        .collect()
}

/// A component the components workspace builds.
pub struct Component {
    /// The built-in's name: its member's top directory (`claude` for
    /// `claude/component`).
    pub name: String,
    /// The file cargo writes it to, in [`release_dir`].
    pub wasm: String,
}

/// The components of the components workspace, sorted by name: its members
/// that build a `cdylib` (the others are the kit and the adapters'
/// libraries).
pub fn components(workspace: &Path) -> Vec<Component> {
    let mut found: Vec<Component> = members(workspace)
        .into_iter()
        .filter_map(|member| {
            let manifest = read_manifest(&workspace.join(&member).join("Cargo.toml"));
            let lib = manifest.get("lib");
            let cdylib = lib
                .and_then(|l| l.get("crate-type"))
                .and_then(|t| t.as_array())
                .is_some_and(|types| types.iter().any(|t| t.as_str() == Some("cdylib")));
            if !cdylib {
                return None;
            }
            let lib_name = lib
                .and_then(|l| l.get("name"))
                .or_else(|| manifest.get("package").and_then(|p| p.get("name")))
                .and_then(|n| n.as_str())
                .unwrap_or_else(|| fail(&format!("{member}/Cargo.toml has no package name")))
                .replace('-', "_");
            let name = member.split('/').next().unwrap_or(&member).to_string();
            Some(Component {
                name,
                wasm: format!("{lib_name}.wasm"),
            })
        })
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Reruns the build script when a guest workspace's manifests or any of
/// its members' sources change.
pub fn watch(workspace: &Path) {
    for file in ["Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", workspace.join(file).display());
    }
    for member in members(workspace) {
        let dir = workspace.join(member);
        println!(
            "cargo:rerun-if-changed={}",
            dir.join("Cargo.toml").display()
        );
        println!("cargo:rerun-if-changed={}", dir.join("src").display());
    }
}

/// The files in `dir` ending in `.extension`, sorted by name, as (name,
/// path); reruns the build script when the directory changes.
pub fn files_to_embed(dir: &Path, extension: &str) -> Vec<(String, PathBuf)> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<(String, PathBuf)> = fs::read_dir(dir)
        .unwrap_or_else(|e| fail(&format!("reading {}: {e}", dir.display())))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == extension))
        .map(|path| {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_else(|| fail(&format!("{}: the name is not UTF-8", path.display())))
                .to_string();
            (name, path)
        })
        .collect();
    files.sort();
    files
}

/// `cargo build --release --target <target> --target-dir <target_dir>`
/// from a build script, without the flags meant for the outer build (its
/// rustflags, target, target dir, clippy's wrapper). Cargo's jobserver is
/// inherited, so the nested build shares the outer build's job slots.
pub fn nested_cargo(target: &str, target_dir: &Path) -> Command {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--release", "--target", target, "--target-dir"])
        .arg(target_dir);
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        command.env_remove(var);
    }
    command
}

/// `cargo build --release --target wasm32-wasip2` of a guest workspace.
pub fn build_workspace(workspace: &Path, target_dir: &Path, packages: &[&str]) {
    let mut command = nested_cargo(TARGET, target_dir);
    command
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .args(packages);
    // wasm SIMD (wasmtime enables it by default) lets memchr, which the
    // usage tallies use to split lines and find needles, scan 16 bytes at a
    // time instead of 4: about 10% of `drover usage`'s CPU.
    command.env(
        "CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS",
        "-C target-feature=+simd128",
    );
    let status = command.status().unwrap_or_else(|e| {
        fail(&format!(
            "cannot run cargo for {}: {e}",
            workspace.display()
        ))
    });
    if !status.success() {
        fail(&format!(
            "building the crates in {} for {TARGET} failed (see above)",
            workspace.display()
        ));
    }
}

/// Copies `from` to `to` unless `to` already holds the same bytes (an
/// unchanged copy keeps its time, so nothing that embeds it rebuilds).
pub fn copy_if_changed(from: &Path, to: &Path) -> Vec<u8> {
    let bytes =
        fs::read(from).unwrap_or_else(|e| fail(&format!("reading {}: {e}", from.display())));
    if fs::read(to).ok().as_deref() != Some(&bytes[..]) {
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir)
                .unwrap_or_else(|e| fail(&format!("creating {}: {e}", dir.display())));
        }
        fs::write(to, &bytes).unwrap_or_else(|e| fail(&format!("writing {}: {e}", to.display())));
    }
    bytes
}

pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
