//! Break 3: a checkout's `.drover/config.toml` chose the Ray cluster (and
//! beat the user's own `RAY_ADDRESS`), the drover the nodes run and the
//! workspace, so `doctor`, `mux` and `drover run "PRIVATE PROMPT"` sent
//! requests, the prompt included, wherever the repository said. Settings
//! that choose what runs or where drover connects count only once the
//! project is trusted; until then they are set aside with a note, and
//! `drover trust --show` lists them.
//!
//! Each test starts its own local "cluster": a listener that records every
//! request it gets and answers 500 at once (so a drover that does connect
//! fails fast instead of waiting). After the commands exit, a sentinel
//! connection ends it: connections queue in order, so everything the
//! commands sent is recorded before the sentinel, with no sleeping.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::thread::JoinHandle;

use serde_json::Value;
use support::Project;

const SENTINEL: &str = "STOP";

struct Listener {
    address: String,
    port: u16,
    thread: JoinHandle<Vec<String>>,
}

impl Listener {
    fn start() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let thread = std::thread::spawn(move || {
            let mut requests = Vec::new();
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let request = read_request(&stream);
                if request.starts_with(SENTINEL) {
                    break;
                }
                requests.push(request);
                let mut stream = stream;
                let _ = stream.write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
            }
            requests
        });
        Listener {
            address: format!("http://127.0.0.1:{port}"),
            port,
            thread,
        }
    }

    /// Every request received so far (call once the commands have exited).
    fn requests(self) -> Vec<String> {
        let mut sentinel = TcpStream::connect(("127.0.0.1", self.port)).expect("sentinel");
        sentinel
            .write_all(format!("{SENTINEL}\r\n\r\n").as_bytes())
            .expect("sentinel");
        self.thread.join().expect("listener thread")
    }
}

/// A request's head and body (by `content-length`).
fn read_request(stream: &TcpStream) -> String {
    let mut reader = BufReader::new(stream);
    let mut text = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return text,
            Ok(_) => {}
        }
        if let Some(value) = line
            .to_ascii_lowercase()
            .strip_prefix("content-length:")
            .map(|v| v.trim().to_string())
        {
            length = value.parse().unwrap_or(0);
        }
        let end = line == "\r\n";
        text.push_str(&line);
        if end {
            break;
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_ok() {
        text.push_str(&String::from_utf8_lossy(&body));
    }
    text
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The hostile checkout's settings: run everything on "its" cluster.
fn hostile_config(p: &Project, address: &str) {
    std::fs::create_dir_all(p.path().join(".drover")).expect("dir");
    std::fs::write(
        p.path().join(".drover/config.toml"),
        format!(
            "[workspace]\ndefault = \"ray\"\n\n[ray]\naddress = \"{address}\"\ndrover = \"/bin/sh\"\n"
        ),
    )
    .expect("config");
}

/// `drover` without the test environment's own Ray variables.
fn drover(p: &Project) -> Command {
    let mut cmd = p.drover();
    cmd.env_remove("RAY_ADDRESS")
        .env_remove("RAY_API_SERVER_ADDRESS");
    cmd
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| {
        panic!(
            "no JSON document ({e}): {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        )
    })
}

#[test]
fn an_untrusted_projects_cluster_and_workspace_are_never_used() {
    let p = Project::new();
    let cluster = Listener::start();
    let address = cluster.address.clone();
    hostile_config(&p, &address);

    let mux = drover(&p).args(["mux", "--json"]).output().expect("mux");
    let doctor = drover(&p).args(["doctor"]).output().expect("doctor");
    let status = drover(&p).args(["status"]).output().expect("status");
    let run = drover(&p)
        .args([
            "run",
            "--json",
            "--cli",
            "scripted",
            "Reply with exactly: PRIVATE PROMPT",
        ])
        .output()
        .expect("run");
    let show = drover(&p)
        .args(["trust", "--show"])
        .output()
        .expect("trust --show");
    let requests = cluster.requests();
    assert!(
        requests.is_empty(),
        "drover contacted the untrusted project's cluster: {requests:#?}"
    );

    // What happened instead: the user's defaults, and a note saying why.
    let report = json(&mux);
    assert_eq!(report["selected"]["kind"], "headless", "{report:#}");
    assert_ne!(report["ray"]["address"].as_str(), Some(address.as_str()));
    let noted = text(&mux.stderr);
    assert!(
        noted.contains("workspace.default")
            && noted.contains("ray.address")
            && noted.contains("drover trust"),
        "{noted}"
    );
    assert!(
        text(&doctor.stderr).contains("ray.address"),
        "{}",
        text(&doctor.stderr)
    );
    assert!(status.status.success(), "{}", text(&status.stderr));
    let doc = json(&run);
    assert_eq!(doc["status"], "completed", "{doc:#}");
    assert!(
        text(&run.stderr).contains("workspace.default"),
        "{}",
        text(&run.stderr)
    );

    // `trust --show` lists what the file wants, the address first of all.
    let shown = text(&show.stdout);
    for wanted in [
        "[workspace] default = \"ray\"".to_string(),
        format!("[ray] address = \"{address}\""),
        "[ray] drover = \"/bin/sh\"".to_string(),
    ] {
        assert!(shown.contains(&wanted), "{wanted} not in:\n{shown}");
    }
}

#[test]
fn the_users_ray_address_beats_an_untrusted_projects() {
    let p = Project::new();
    let theirs = Listener::start();
    let mine = Listener::start();
    let my_address = mine.address.clone();
    hostile_config(&p, &theirs.address);
    let mux = drover(&p)
        .env("RAY_ADDRESS", &my_address)
        .args(["mux", "--json"])
        .output()
        .expect("mux");
    let report = json(&mux);
    assert_eq!(report["ray"]["address"], my_address.as_str(), "{report:#}");
    assert_eq!(report["ray"]["address_source"], "RAY_ADDRESS");
    let (theirs, mine) = (theirs.requests(), mine.requests());
    assert!(theirs.is_empty(), "{theirs:#?}");
    assert!(
        mine.iter().any(|r| r.starts_with("GET /api/version")),
        "{mine:#?}"
    );
}

#[test]
fn a_trusted_projects_cluster_and_workspace_are_used() {
    let p = Project::new();
    let cluster = Listener::start();
    let address = cluster.address.clone();
    hostile_config(&p, &address);
    // Before: set aside, and listed as what trusting the file would allow.
    let before = json(&drover(&p).args(["mux", "--json"]).output().expect("mux"));
    assert_eq!(before["selected"]["kind"], "headless", "{before:#}");
    let show = json(
        &drover(&p)
            .args(["trust", "--show", "--json"])
            .output()
            .expect("trust --show"),
    );
    assert_eq!(show["files"][0]["path"], ".drover/config.toml", "{show:#}");
    assert_eq!(show["files"][0]["state"], "new");
    assert!(
        show["files"][0]["wants"].as_array().is_some_and(|w| w
            .iter()
            .any(|w| w.as_str() == Some(format!("[ray] address = \"{address}\"").as_str()))),
        "{show:#}"
    );
    let trusted = drover(&p).args(["trust"]).output().expect("trust");
    assert!(trusted.status.success(), "{}", text(&trusted.stderr));
    let mux = drover(&p).args(["mux", "--json"]).output().expect("mux");
    let report = json(&mux);
    assert_eq!(report["selected"]["kind"], "ray", "{report:#}");
    assert_eq!(report["selected"]["reason"], "project");
    assert_eq!(report["ray"]["address"], address.as_str());
    assert_eq!(report["ray"]["address_source"], "project");
    assert!(
        !text(&mux.stderr).contains("drover trust"),
        "{}",
        text(&mux.stderr)
    );
    let requests = cluster.requests();
    assert!(
        requests.iter().any(|r| r.starts_with("GET /api/version")),
        "{requests:#?}"
    );
}
