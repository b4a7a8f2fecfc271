//! `drover probe-adapter` end to end: the real binary, a planted identity
//! (HOME, USER), a fake CLI whose version and help carry secrets, fixture
//! transcripts from components/*/fixtures, and the hostile guest as a
//! third-party project component. The one promise checked everywhere: no
//! planted value ever reaches stdout or an `--out` file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// A Claude transcript with planted values in values, keys and the file
/// and directory names.
fn plant_claude_transcript(world: &World) -> PathBuf {
    let munged = world.project.display().to_string().replace('/', "-");
    let path = world
        .home
        .join(".claude/projects")
        .join(munged)
        .join(format!("{USER}-0f8e2a9c-5b7d-4e1f-9a3c-2d6b8e0f1a47.jsonl"));
    let lines = [
        format!(
            r#"{{"type":"user","cwd":"{}","message":{{"role":"user","content":"my key is {ANT_KEY}, mail {EMAIL}"}}}}"#,
            world.project.display()
        ),
        r#"{"type":"assistant","message":{"id":"msg_01","role":"assistant","usage":{"input_tokens":100,"output_tokens":50}}}"#.to_string(),
        format!(
            r#"{{"type":"assistant","message":{{"id":"msg_02","usage":{{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":2000,"cache_creation_input_tokens":300}}}},"{GH_TOKEN}":"{JWT}"}}"#
        ),
        format!(r#"{{"type":"log","{}":"{}/x","{EMAIL}":1}}"#, world.home.display(), world.home.display()),
        "not json at all".to_string(),
    ];
    world.write(&path, &(lines.join("\n") + "\n"));
    path
}

#[test]
fn claude_scan_reports_shape_and_leaks_nothing() {
    let world = World::new();
    plant_claude_transcript(&world);
    let output = world.run(&["claude", "--binary", "fakecli"]);
    let report = ok(&world, &output);
    let mut at = 0;
    for heading in [
        "## Summary",
        "## CLI flags",
        "## Hook payload shape",
        "## Adapter self-check",
        "## Transcript",
        "## Token usage schema",
        "## Warnings / next steps",
    ] {
        let found = report[at..]
            .find(heading)
            .unwrap_or_else(|| panic!("{heading} missing or out of order:\n{report}"));
        at += found + heading.len();
    }
    for expected in [
        "fakecli 1.2.3",
        "--model <MODEL>",
        "~/.fakecli/config.json",
        "<redacted:email>",
        "<redacted:secret>",
        "<redacted:user>",
        "message.usage.input_tokens : int",
        "message.usage.cache_read_input_tokens",
        "`Stop` → `Stop` (no)",
        "hooks registered: no",
        "drover hooks install --cli claude",
        "~/.claude/projects/*/*.jsonl",
        // claude-jsonl sums every usage block: 110 in, 55 out.
        "input 110, output 55, cache read 2000, cache write 300",
    ] {
        assert!(report.contains(expected), "{expected:?} missing:\n{report}");
    }
    assert!(
        !report.contains("my key is"),
        "values never appear:\n{report}"
    );
}

#[test]
fn json_document_is_sorted_versioned_and_clean() {
    let world = World::new();
    plant_claude_transcript(&world);
    let output = world.run(&["claude", "--binary", "fakecli", "--json"]);
    let stdout = ok(&world, &output);
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(value["schema_version"], 1);
    assert_eq!(value["mode"], "scan");
    assert_eq!(value["cli"], "claude");
    assert_eq!(value["tokens"]["parsed_usage"]["input"], 110);
    assert_eq!(value["transcript"]["file"]["line_count"], 5);
    assert_keys_sorted(&stdout);
    assert!(
        !text(&output.stderr).is_empty(),
        "the trailer goes to stderr, never into the document"
    );
}

#[test]
fn out_file_gets_the_report_and_stdout_stays_empty() {
    let world = World::new();
    plant_claude_transcript(&world);
    let out = world.root.join("report.md");
    let output = world.run(&[
        "claude",
        "--binary",
        "fakecli",
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
    let written = std::fs::read_to_string(&out).expect("report written");
    assert!(written.contains("## Summary"));
    assert_no_leak(&world, &written);
}

#[test]
fn fixture_transcripts_of_other_clis_are_found_by_convention() {
    let cases = [
        (
            "codex",
            ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-a.jsonl",
            "components/codex/fixtures/rollout-resumed.jsonl",
            "payload.info.total_token_usage.input_tokens",
        ),
        (
            "gemini",
            ".gemini/tmp/5b0d7f1c/chats/session-2026-11-30T10-00-a.jsonl",
            "components/gemini/fixtures/chat-session.jsonl",
            "tokens.input",
        ),
        (
            "copilot",
            ".copilot/session-state/s1/events.jsonl",
            "components/copilot/fixtures/events.jsonl",
            "data.modelMetrics.gpt-5-mini.usage.inputTokens",
        ),
    ];
    for (cli, place, source, candidate) in cases {
        let world = World::new();
        let mut body = fixture(source);
        body.push_str(&format!("{{\"note\":\"{EMAIL} {GH_TOKEN}\"}}\n"));
        world.write(&world.home.join(place), &body);
        let output = world.run(&[cli, "--binary", "fakecli", "--json"]);
        let stdout = ok(&world, &output);
        let value: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        let file = &value["transcript"]["file"];
        assert_eq!(file["format"], "jsonl", "{cli}: {stdout}");
        let candidates = value["tokens"]["token_field_candidates"].to_string();
        assert!(candidates.contains(candidate), "{cli}: {candidates}");
        let parsed = &value["tokens"]["parsed_usage"];
        assert_eq!(parsed["found"], true, "{cli}: {stdout}");
        assert!(
            parsed["input"].as_u64().is_some_and(|n| n > 0),
            "{cli}: {parsed}"
        );
    }
}

#[test]
fn overrides_pick_the_transcript() {
    let world = World::new();
    let dir = world.root.join("sessions");
    world.write(
        &dir.join("a/b.jsonl"),
        &fixture("components/qwen/fixtures/chat.jsonl"),
    );
    let output = world.run(&[
        "qwen",
        "--binary",
        "fakecli",
        "--session-dir",
        dir.to_str().expect("utf8"),
        "--json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&ok(&world, &output)).expect("json");
    assert_eq!(value["transcript"]["source"], "--session-dir");
    assert_eq!(value["transcript"]["file"]["line_count"], 5);

    let pinned = plant_claude_transcript(&world);
    let output = world.run(&[
        "claude",
        "--binary",
        "fakecli",
        "--transcript",
        pinned.to_str().expect("utf8"),
        "--json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&ok(&world, &output)).expect("json");
    assert_eq!(value["transcript"]["source"], "--transcript");
    let location = value["transcript"]["file"]["location"]
        .as_str()
        .expect("location");
    assert!(location.starts_with("~/.claude/projects/"), "{location}");
    assert!(
        location.ends_with("<redacted:user>"),
        "the file name carries the username: {location}"
    );

    let output = world.run(&[
        "claude",
        "--binary",
        "fakecli",
        "--transcript",
        "/nonexistent/x.jsonl",
    ]);
    let report = ok(&world, &output);
    assert!(
        report.contains("is not a readable regular file"),
        "{report}"
    );
}

#[test]
fn unknown_cli_with_binary_gives_a_reduced_report() {
    let world = World::new();
    let output = world.run(&["--binary", "fakecli"]);
    let report = ok(&world, &output);
    assert!(report.contains("no profile: reduced report"), "{report}");
    assert!(report.contains("fakecli 1.2.3"), "{report}");
    let output = world.run(&["mystery-cli", "--binary", "fakecli", "--json"]);
    let value: serde_json::Value = serde_json::from_str(&ok(&world, &output)).expect("json");
    assert_eq!(value["known_profile"], false);
    assert_eq!(value["cli"], "mystery-cli");
}

#[test]
fn failures_and_usage_errors_have_their_exit_codes() {
    let world = World::new();
    let output = world.run(&["mystery-cli"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(text(&output.stderr).contains("unknown CLI profile 'mystery-cli'"));
    for args in [
        &[][..],
        &["claude", "--transcript", "a", "--session-dir", "b"][..],
        &["claude", "--payload", "no-equals-sign"][..],
    ] {
        let output = world.run(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&output.stderr)
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn a_missing_or_hanging_binary_is_a_finding() {
    let world = World::new();
    let output = world.run(&["claude", "--binary", "no-such-cli-here"]);
    let report = ok(&world, &output);
    assert!(report.contains("NOT found"), "{report}");
    world.fake_cli("slowcli", "[ \"$1\" = \"--help\" ] && exec sleep 30");
    let started = std::time::Instant::now();
    let output = world.run(&["claude", "--binary", "slowcli", "--command-timeout", "1"]);
    let report = ok(&world, &output);
    assert!(report.contains("did not finish within 1 s"), "{report}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

/// The hostile guest as a project-local component, misbehaving as told.
fn hostile_project(world: &World, settings: &str, parser: &str) {
    let wasm = PathBuf::from(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    let adapters = world.project.join(".drover/adapters");
    std::fs::create_dir_all(&adapters).expect("mkdir");
    std::fs::copy(&wasm, adapters.join("hostile.wasm")).expect("copy the hostile guest");
    world.write(
        &world.project.join(".drover/profiles/hostile.toml"),
        &format!(
            "name = \"hostile\"\nbinary = \"fakecli\"\ncomponent = \"../adapters/hostile.wasm\"\n\
             usage_parser = \"{parser}\"\n\
             [hooks]\ndialect = \"hostile-panic\"\nconfig_path = \".hostile/hooks.json\"\n\
             [hooks.events]\nStop = \"Stop\"\n\
             [sandbox]\ncall_timeout_ms = 300\nmemory_mib = 32\n\
             [component_settings]\n{settings}\n"
        ),
    );
    // Private bytes the guest is fed (and echoes in its panics).
    world.write(
        &world.project.join(".hostile/hooks.json"),
        &format!("{{\"owner\":\"{EMAIL}\",\"token\":\"{GH_TOKEN}\",\"note\":\"PRIVATECONFIG\"}}"),
    );
    world.write(
        &world.project.join("transcripts/t.jsonl"),
        &format!("{{\"usage\":{{\"input_tokens\":1}},\"text\":\"PRIVATETRANSCRIPT {ANT_KEY}\"}}\n"),
    );
    world.trust();
}

#[test]
fn a_hostile_third_party_component_yields_findings_not_crashes() {
    let cases = [
        (
            "locations = \"panic\"",
            "none",
            "the adapter's transcript-locations trapped",
            "trapped",
        ),
        (
            "locations = \"loop\"",
            "none",
            "time limit of 300 ms",
            "time-limit",
        ),
        (
            "locations = \"alloc\"",
            "none",
            "memory limit of 32 MiB",
            "memory-limit",
        ),
        (
            "locations = \"garbage\"",
            "none",
            "answered garbage",
            "garbage",
        ),
        (
            "locations = \"cwd\"",
            "echo-panic",
            "the adapter's tally.feed trapped",
            "trapped",
        ),
        (
            "locations = \"cwd\"",
            "loop",
            "the adapter's tally.feed hit a limit",
            "time-limit",
        ),
    ];
    for (settings, parser, finding, outcome) in cases {
        let world = World::new();
        hostile_project(&world, settings, parser);
        let output = world.run(&[
            "hostile",
            "--payload",
            &format!(
                "Stop={}",
                world.project.join(".hostile/hooks.json").display()
            ),
        ]);
        let report = ok(&world, &output);
        assert!(
            report.contains(finding),
            "{settings}/{parser}: {finding:?} missing:\n{report}"
        );
        assert!(
            report.contains(&format!("| {outcome} |")),
            "{settings}/{parser}: {outcome}:\n{report}"
        );
        // detect-hooks panics with the config text, parse-hook with the event.
        assert!(
            report.contains("the adapter's detect-hooks trapped"),
            "{report}"
        );
        assert!(
            report.contains("the adapter's parse-hook trapped"),
            "{report}"
        );
        for fed in [
            "PRIVATECONFIG",
            "PRIVATETRANSCRIPT",
            "hostile transcript-locations saw",
            "hostile tally was fed",
            "hostile detect-hooks saw",
            "hostile parse-hook refused",
        ] {
            assert!(
                !report.contains(fed),
                "{settings}: what the guest was fed leaked ({fed}):\n{report}"
            );
        }
        assert!(report.contains("message withheld"), "{report}");
        assert!(
            report.contains("panicked at hostile/src/lib.rs:"),
            "the panic's location stays readable:\n{report}"
        );
        let json = world.run(&["hostile", "--json"]);
        let doc = ok(&world, &json);
        assert_keys_sorted(&doc);
    }
}

#[test]
fn payload_shapes_come_from_the_adapter_and_hold_no_values() {
    let world = World::new();
    let payload = world.root.join("stop.json");
    let mut value: serde_json::Value =
        serde_json::from_str(&fixture("components/codex/fixtures/hook-stop.json")).expect("json");
    value["last_assistant_message"] = format!("done, mail {EMAIL}").into();
    value["transcript_path"] = format!("{}/.codex/sessions/x.jsonl", world.home.display()).into();
    std::fs::write(&payload, value.to_string()).expect("write");
    let output = world.run(&[
        "codex",
        "--binary",
        "fakecli",
        "--payload",
        &format!("Stop={}", payload.display()),
    ]);
    let report = ok(&world, &output);
    assert!(
        report.contains("### `Stop` → `Stop` (adapter: `stop`)"),
        "{report}"
    );
    assert!(report.contains("`last_assistant_message`"), "{report}");
    assert!(report.contains("transcript_path : str"), "{report}");
    assert!(!report.contains("done, mail"), "{report}");
}

#[test]
fn a_leak_the_sanitizer_cannot_route_refuses_to_emit() {
    // A username that is also a word of the report's own text cannot be
    // redacted from it: the guard must refuse rather than print.
    let world = World::named(PROJECT, "Transcript");
    let out = world.root.join("refused.md");
    let output = world.run(&[
        "claude",
        "--binary",
        "fakecli",
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
    assert!(!out.exists(), "no --out file on refusal");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("refusing to emit") && stderr.contains("username"),
        "{stderr}"
    );
    let output = world.run(&["claude", "--binary", "fakecli", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
}

#[test]
fn a_stray_project_name_is_repaired_and_disclosed() {
    // The project shares its name with a heading: the heading is drover's
    // own text, so only the egress guard can catch it.
    let world = World::named("Transcript", USER);
    let output = world.run(&["claude", "--binary", "fakecli"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(stdout.contains("### Backstop repairs"), "{stdout}");
    assert!(!stdout.contains("## Transcript"), "{stdout}");
    assert!(
        text(&output.stderr).contains("replaced"),
        "{}",
        text(&output.stderr)
    );
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
