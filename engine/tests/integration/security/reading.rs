//! Reading is bounded: a file from a checkout or named by a component is
//! read only if it is a regular file within a cap, and a component's
//! transcript locations reach only its CLI's own directories, within
//! bounded patterns and walks (breaks 5, 11 and 14).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::Project;

/// The bound on one command: far above what it needs, so expiry means it
/// hung (the test fails and the process is killed), not that it was slow.
const HUNG: Duration = crate::support::HANG;

/// Runs `command` to its end, or fails the test if it is still running
/// after [`HUNG`]; stdout and stderr together.
fn finishes(mut command: Command, what: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("out"))
        .stderr(std::fs::File::create(&err).expect("err"))
        .spawn()
        .expect("drover starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > HUNG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{what}` was still running after {HUNG:?}: it hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    (status.code(), format!("{}{}", text(&out), text(&err)))
}

fn drover(p: &Project, args: &[&str]) -> (Option<i32>, String) {
    let mut command = p.drover();
    command.args(args);
    finishes(command, &format!("drover {}", args.join(" ")))
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn profiles_dir(p: &Project) -> PathBuf {
    let dir = p.path().join(".drover/profiles");
    std::fs::create_dir_all(&dir).expect("profiles");
    dir
}

/// `trust --show`, `profiles` and `run` each end, naming `file` and why.
fn every_reader_refuses(p: &Project, file: &str, why: &str) {
    for args in [
        &["trust", "--show"][..],
        &["profiles"][..],
        &["run", "--cli", "scripted", "hello"][..],
    ] {
        let (_, output) = drover(p, args);
        assert!(
            output.contains(file) && output.contains(why),
            "`drover {}` did not name {file} ({why}):\n{output}",
            args.join(" ")
        );
    }
}

#[test]
fn a_profile_linked_to_dev_zero_is_refused_not_read() {
    let p = Project::new();
    std::os::unix::fs::symlink("/dev/zero", profiles_dir(&p).join("x.toml")).expect("link");
    every_reader_refuses(&p, "x.toml", "symbolic link");
}

#[test]
fn a_profile_that_is_a_fifo_is_refused_not_waited_on() {
    let p = Project::new();
    mkfifo(&profiles_dir(&p).join("x.toml"));
    every_reader_refuses(&p, "x.toml", "FIFO");
}

#[test]
fn a_config_that_is_a_fifo_is_refused_not_waited_on() {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".drover")).expect("mkdir");
    mkfifo(&p.path().join(".drover/config.toml"));
    for args in [
        &["trust", "--show"][..],
        &["run", "--cli", "scripted", "hello"][..],
    ] {
        let (_, output) = drover(&p, args);
        assert!(
            output.contains("config.toml") && output.contains("FIFO"),
            "`drover {}` did not name the FIFO:\n{output}",
            args.join(" ")
        );
    }
}

/// A project profile backed by the hostile test guest, whose
/// `transcript-locations` answer is chosen by `locations`.
fn hostile_locations(p: &Project, locations: &str) {
    let wasm = Path::new(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    std::fs::write(
        profiles_dir(p).join("hostile.toml"),
        format!(
            "name = \"hostile\"\nbinary = \"hostile-cli\"\ncomponent = \"{}\"\nusage_parser = \"hostile-lines\"\n[hooks]\ndialect = \"none\"\n[component_settings]\nlocations = \"{locations}\"\n",
            wasm.display()
        ),
    )
    .expect("profile");
}

/// `drover usage --json --cli hostile`'s document (exit 1 when it read no
/// file and warned, which is what a refusal of every pattern is).
fn usage(p: &Project) -> Value {
    let (_, output) = drover(p, &["usage", "--json", "--cli", "hostile"]);
    let start = output.find('{').expect("a JSON document");
    serde_json::Deserializer::from_str(&output[start..])
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("no JSON document in:\n{output}"))
}

fn input_tokens(report: &Value) -> u64 {
    report["totals"]["input"].as_u64().unwrap_or(0)
}

fn warnings(report: &Value) -> String {
    report["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn a_component_cannot_have_drover_read_the_users_ssh_key() {
    let p = Project::new();
    // The hostile parser counts `count <n>` lines: a key that "counts"
    // shows whether drover fed it to the component.
    std::fs::create_dir_all(p.home.join(".ssh")).expect("mkdir");
    std::fs::write(
        p.home.join(".ssh/id_rsa"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\ncount 4242\n",
    )
    .expect("key");
    hostile_locations(&p, "secrets");
    let report = usage(&p);
    assert_eq!(input_tokens(&report), 0, "the key was read: {report:#}");
    let warned = warnings(&report);
    for refused in [".ssh", "/etc/host*", "hostile-logs/../home/.ssh/*"] {
        assert!(
            warned.contains(refused),
            "no refusal of {refused}: {warned}"
        );
    }
}

#[test]
fn a_pattern_of_two_dozen_double_stars_is_refused_by_name() {
    let p = Project::new();
    let deep = p.path().join("hostile-logs/a/b/c/d/e/f");
    std::fs::create_dir_all(&deep).expect("mkdir");
    std::fs::write(deep.join("x.log"), "count 7\n").expect("log");
    hostile_locations(&p, "stars");
    let report = usage(&p);
    let pattern = format!("hostile-logs/{}*.log", "**/".repeat(24));
    let warned = warnings(&report);
    assert!(
        warned.contains(&pattern) && warned.contains("24 `**`"),
        "the pattern is not named: {warned}"
    );
    assert_eq!(input_tokens(&report), 0, "{report:#}");
}

/// A profile's `[usage]` table names where its CLI logs; a table that names
/// the user's keys gets nothing read from them (a secret store is never a
/// CLI's directory), and `drover usage` says so.
#[test]
fn a_usage_table_cannot_have_drover_read_the_users_ssh_key() {
    let p = Project::new();
    std::fs::create_dir_all(p.home.join(".ssh")).expect("mkdir");
    // A key that "counts" if fed: a JSON line with the table's field.
    std::fs::write(p.home.join(".ssh/id_ed25519"), "{\"n\":4242}\n").expect("key");
    let dir = p.home.join(".config/drover/profiles");
    std::fs::create_dir_all(&dir).expect("profiles dir");
    std::fs::write(
        dir.join("hostile.toml"),
        "name = \"hostile\"\nbinary = \"true\"\n[hooks]\ndialect = \"none\"\n[turn]\nargv = [\"{prompt}\"]\n[usage]\nfiles = \"~/.ssh/*\"\ninput = \"n\"\n",
    )
    .expect("profile");
    let report = usage(&p);
    assert_eq!(input_tokens(&report), 0, "the key was read: {report:#}");
    let warned = warnings(&report);
    assert!(warned.contains(".ssh"), "no refusal of .ssh: {warned}");
}
