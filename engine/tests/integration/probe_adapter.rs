//! `drover probe-adapter` end to end: the real binary, a planted identity
//! (HOME, USER), a fake CLI whose version and help carry secrets, fixture
//! transcripts from components/*/fixtures, and the hostile guest as a
//! third-party project component. The one promise checked everywhere: no
//! planted value ever reaches stdout or an `--out` file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod egress_guard;
mod failures;
mod hostile;
mod scan;

const USER: &str = "zqxplanted";
const PROJECT: &str = "acmeclientproj";
const EMAIL: &str = "carol.planted@example.com";
const GH_TOKEN: &str = "ghp_Zx9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8";
const ANT_KEY: &str = "sk-ant-api03-Pl4nt3dK3yV4lu3Xq9Zr7Yt5Uw3Vs1Ab";
const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJl";
const URL_PASSWORD: &str = "hunter2planted";
const HIGH_ENTROPY: &str = "Qm8xT3pLa9Wv2Rt7Yu4Io1Pa6Sd5Fg3Hj0Kl8Zx2Cv";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("engine/ has a parent")
        .to_path_buf()
}

fn fixture(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A sandboxed world: home, project, PATH with a fake CLI, compile cache.
struct World {
    _root: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    bin: PathBuf,
    user: String,
}

impl World {
    fn new() -> World {
        World::named(PROJECT, USER)
    }

    fn named(project: &str, user: &str) -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical tempdir");
        let home = root.join("home").join(user);
        let project = root.join("work").join(project);
        let bin = root.join("bin");
        for d in [&home, &project, &bin] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let world = World {
            _root: dir,
            root,
            home,
            project,
            bin,
            user: user.to_string(),
        };
        world.fake_cli("fakecli", "");
        world
    }

    /// A CLI that prints planted secrets in its version and help; `extra`
    /// is shell run first (e.g. to hang).
    fn fake_cli(&self, name: &str, extra: &str) {
        let home = self.home.display();
        let project = self.project.display();
        let script = format!(
            "#!/bin/sh\n{extra}\n\
             if [ \"$1\" = \"--version\" ]; then\n\
               echo \"fakecli 1.2.3 (built by {USER} at {home}/src/{PROJECT})\"\n\
               echo \"licensed to {EMAIL}\"\n\
               exit 0\n\
             fi\n\
             cat <<'HELP'\n\
             Usage: fakecli [OPTIONS] [PROMPT]\n\
             \n\
             Options:\n\
               --model <MODEL>      e.g. fake-model-2\n\
               --config <PATH>      default: {home}/.fakecli/config.json\n\
               --project <DIR>      e.g. {project}\n\
               --token <TOKEN>      example: {GH_TOKEN}\n\
               --api-key <KEY>      example: {ANT_KEY}\n\
               --jwt <JWT>          example: {JWT}\n\
             Report bugs to {EMAIL} or https://{USER}:{URL_PASSWORD}@git.example.org/fake\n\
             Signed: {HIGH_ENTROPY}\n\
             Maintainer: {USER} of {PROJECT}\n\
             HELP\n"
        );
        let path = self.bin.join(name);
        std::fs::write(&path, script).expect("write fake cli");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }

    fn write(&self, path: &Path, text: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    /// Everything a report must never contain, for this world.
    fn planted(&self) -> Vec<String> {
        vec![
            self.user.clone(),
            PROJECT.to_string(),
            EMAIL.to_string(),
            GH_TOKEN.to_string(),
            ANT_KEY.to_string(),
            JWT.to_string(),
            URL_PASSWORD.to_string(),
            HIGH_ENTROPY.to_string(),
            self.home.display().to_string(),
        ]
    }

    fn run(&self, args: &[&str]) -> Output {
        self.drover("probe-adapter", args)
    }

    /// `drover trust`: the user's consent to the project's own profiles,
    /// whose binaries probe-adapter runs.
    fn trust(&self) {
        let out = self.drover("trust", &[]);
        assert!(out.status.success(), "drover trust: {}", text(&out.stderr));
    }

    fn drover(&self, command: &str, args: &[&str]) -> Output {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new(env!("CARGO_BIN_EXE_drover"))
            .arg("--project")
            .arg(&self.project)
            .arg(command)
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("USER", &self.user)
            .env("LOGNAME", &self.user)
            .env("DROVER_CACHE_DIR", self.root.join("cache"))
            .current_dir(&self.project)
            .output()
            .expect("drover runs")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The promise: no planted value, in any case, anywhere in `out`.
fn assert_no_leak(world: &World, out: &str) {
    let lower = out.to_lowercase();
    for planted in world.planted() {
        assert!(
            !lower.contains(&planted.to_lowercase()),
            "planted {planted:?} leaked:\n{out}"
        );
    }
    assert!(!out.contains("/home/"), "a home path leaked:\n{out}");
}

fn ok(world: &World, output: &Output) -> String {
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}\nstdout: {stdout}",
        text(&output.stderr)
    );
    assert_no_leak(world, &stdout);
    stdout
}

/// Walks JSON text and checks every object's keys are in sorted order, in
/// the bytes as emitted (not after a parser re-sorts them).
fn assert_keys_sorted(json: &str) {
    fn skip_ws(b: &[u8], i: &mut usize) {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    }
    fn string(b: &[u8], i: &mut usize) -> String {
        let start = *i;
        *i += 1;
        while b[*i] != b'"' {
            if b[*i] == b'\\' {
                *i += 1;
            }
            *i += 1;
        }
        *i += 1;
        serde_json::from_slice(&b[start..*i]).expect("a JSON string")
    }
    fn value(b: &[u8], i: &mut usize) {
        skip_ws(b, i);
        match b[*i] {
            b'{' => {
                *i += 1;
                let mut keys = Vec::new();
                loop {
                    skip_ws(b, i);
                    if b[*i] == b'}' {
                        *i += 1;
                        break;
                    }
                    if b[*i] == b',' {
                        *i += 1;
                        continue;
                    }
                    keys.push(string(b, i));
                    skip_ws(b, i);
                    *i += 1; // ':'
                    value(b, i);
                }
                let mut sorted = keys.clone();
                sorted.sort();
                assert_eq!(keys, sorted, "object keys out of order");
            }
            b'[' => {
                *i += 1;
                loop {
                    skip_ws(b, i);
                    if b[*i] == b']' {
                        *i += 1;
                        break;
                    }
                    if b[*i] == b',' {
                        *i += 1;
                        continue;
                    }
                    value(b, i);
                }
            }
            b'"' => {
                string(b, i);
            }
            _ => {
                while *i < b.len()
                    && !matches!(b[*i], b',' | b'}' | b']')
                    && !b[*i].is_ascii_whitespace()
                {
                    *i += 1;
                }
            }
        }
    }
    let bytes = json.as_bytes();
    let mut i = 0;
    value(bytes, &mut i);
    skip_ws(bytes, &mut i);
    assert_eq!(i, bytes.len(), "exactly one document");
}
