//! `drover serve` in a real browser (chromium through chromedriver): the
//! page follows a seat from working to blocked without a reload, answers it
//! with a click, and shows the same usage figures as `drover usage`; and
//! the server refuses a request without its token, from a foreign page or
//! under a foreign host name.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::support::Project;
use crate::support::webdriver::{Browser, browser_required};

/// The scripted CLI keeps Claude-shaped transcripts under `~/.scripted-cli`:
/// pointing the Claude convention there lets `drover usage` (and the page)
/// read them.
fn with_transcripts(p: &Project, mut cmd: Command) -> Command {
    cmd.env("CLAUDE_CONFIG_DIR", p.home.join(".scripted-cli"));
    cmd
}

fn drover_json(p: &Project, args: &[&str]) -> Value {
    let out = with_transcripts(p, p.drover())
        .args(args)
        .output()
        .expect("drover");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// `drover serve` on a free loopback port, and the URL it printed.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(p: &Project) -> Server {
        let mut child = with_transcripts(p, p.drover())
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("drover serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the URL");
        let url = line.trim().to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
            "{url}"
        );
        Server { child, url }
    }

    fn origin(&self) -> String {
        self.url.split("/?").next().unwrap_or_default().to_string()
    }

    fn token(&self) -> String {
        self.url.rsplit('=').next().unwrap_or_default().to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Down<'a>(&'a Project);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = self.0.output(&["down", "--all"]);
    }
}

fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// Where the screenshot goes: the CI log folder when CI names one.
fn screenshot_dir() -> std::path::PathBuf {
    std::env::var_os("DROVER_CI_LOGS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")))
}

#[test]
fn the_page_follows_a_seat_into_a_question_and_answers_it_with_a_click() {
    browser_required();
    let p = Project::new();
    let _down = Down(&p);
    let config = p.home.join(".config/drover");
    std::fs::create_dir_all(&config).expect("config");
    // One turn ($0.0127) passes a one-cent seat budget: the next message
    // is held on a question.
    std::fs::write(
        config.join("config.toml"),
        "[budget]\nseat = { usd = 0.01 }\n",
    )
    .expect("config");
    drover_json(
        &p,
        &[
            "up",
            "cock",
            "--cli",
            "scripted",
            "--workspace",
            "headless",
            "--json",
        ],
    );
    let first = drover_json(&p, &["send", "--json", "cock", "Reply with exactly: ONE"]);
    assert_eq!(first["status"], "completed", "{first:#}");

    let server = Server::start(&p);
    let browser = Browser::start();
    browser.open(&server.url);
    browser.wait_for(
        "the live stream",
        "return document.querySelector('#live').dataset.live === 'live'",
    );
    browser.wait_for(
        "the seat done",
        "const c = document.querySelector('tr[data-seat=\"cock\"] td.state'); return c && c.dataset.state === 'done'",
    );
    // The token left the address bar for a cookie.
    let address = browser.eval("return location.href", &[]);
    assert!(
        !address.as_str().unwrap_or_default().contains("token"),
        "{address}"
    );
    // A mark that a reload would wipe.
    browser.eval("window.__stillHere = true; return true", &[]);

    // The chart's figures are `drover usage`'s.
    let usage = drover_json(&p, &["usage", "--json", "--by", "day"]);
    let day = &usage["groups"][0];
    let key = day["day"].as_str().expect("a day row");
    let shown = browser.wait_for(
        "the day's cost",
        &format!(
            "const c = document.querySelector('.chart[data-chart=\"day\"] tr[data-key=\"{key}\"] td.cost'); return c && c.dataset.usd"
        ),
    );
    let shown: f64 = shown
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("a number");
    assert!(
        (shown - day["cost_usd"].as_f64().expect("priced")).abs() < 1e-12,
        "{shown} vs {day:#}"
    );
    let by_model = drover_json(&p, &["usage", "--json", "--by", "model"]);
    let model = &by_model["groups"][0];
    let model_key = format!(
        "{} {}",
        model["cli"].as_str().unwrap_or_default(),
        model["model"].as_str().unwrap_or_default()
    );
    let shown = browser.wait_for(
        "the model's cost",
        &format!(
            "const c = [...document.querySelectorAll('.chart[data-chart=\"model\"] tr')].find(r => r.dataset.key === {}); return c && c.querySelector('td.cost').dataset.usd",
            json!(model_key)
        ),
    );
    assert_eq!(
        shown.as_str().and_then(|s| s.parse::<f64>().ok()),
        model["cost_usd"].as_f64(),
        "{model:#}"
    );

    // The held message: working is skipped, the seat blocks on its budget.
    let held = drover_json(
        &p,
        &[
            "send",
            "--no-wait",
            "--json",
            "cock",
            "Reply with exactly: TWO",
        ],
    );
    assert_eq!(held["started"]["state"], "blocked", "{held:#}");
    browser.wait_for(
        "the question",
        "return document.querySelector('.question[data-seat=\"cock\"] button[data-option=\"raise\"]') !== null",
    );
    assert_eq!(
        browser.eval("return window.__stillHere === true", &[]),
        json!(true),
        "the page reloaded"
    );
    let png = browser.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let dir = screenshot_dir();
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    let shot = dir.join("serve-blocked-seat.png");
    std::fs::write(&shot, &png).expect("screenshot");
    eprintln!("screenshot: {}", shot.display());

    browser.click(".question[data-seat=\"cock\"] button[data-option=\"raise\"]");
    // The journal records a person's answer, and the held message runs.
    crate::support::wait_for(crate::support::HANG, || {
        let out = p.output(&["events", "--json", "--seat", "cock"]);
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        lines
            .iter()
            .any(|l| l["kind"] == "answer" && l["state"] == "raise" && l["source"] == "person")
            .then_some(())
    })
    .expect("the answer in the journal");
    browser.wait_for(
        "the seat done again",
        "const c = document.querySelector('tr[data-seat=\"cock\"] td.state'); return c && c.dataset.state === 'done' && !document.querySelector('.question[data-seat=\"cock\"] button')",
    );
    assert_eq!(
        browser.eval("return window.__stillHere === true", &[]),
        json!(true)
    );
}

#[test]
fn the_server_wants_its_token_its_host_and_its_own_origin() {
    let p = Project::new();
    let server = Server::start(&p);
    let agent = http();
    let base = server.origin();
    let token = server.token();
    let status = |request: ureq::RequestBuilder<ureq::typestate::WithoutBody>| {
        request
            .call()
            .map(|r| r.status().as_u16())
            .expect("an answer")
    };
    assert_eq!(status(agent.get(format!("{base}/api/seats"))), 401);
    assert_eq!(status(agent.get(format!("{base}/"))), 401);
    let bearer = format!("Bearer {token}");
    assert_eq!(
        status(
            agent
                .get(format!("{base}/api/seats"))
                .header("authorization", &bearer)
        ),
        200
    );
    assert_eq!(
        status(
            agent
                .get(format!("{base}/api/seats"))
                .header("authorization", "Bearer 0000")
        ),
        401
    );
    // DNS rebinding: a foreign name for this address.
    let port = base.rsplit(':').next().unwrap_or_default();
    assert_eq!(
        status(
            agent
                .get(format!("{base}/api/seats"))
                .header("authorization", &bearer)
                .header("host", &format!("attacker.example:{port}"))
        ),
        403
    );
    // CSRF: another site's page posting an answer.
    let posted = agent
        .post(format!("{base}/api/seats/anyone/answer"))
        .header("authorization", &bearer)
        .header("origin", "http://attacker.example")
        .header("content-type", "application/json")
        .send(r#"{"option":"allow_once"}"#.as_bytes())
        .map(|r| r.status().as_u16())
        .expect("an answer");
    assert_eq!(posted, 403);
    // A beyond-loopback address needs the explicit flag.
    let out = p.output(&["serve", "--listen", "0.0.0.0:0"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--allow-remote"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_checkouts_markup_reaches_the_page_as_text() {
    browser_required();
    let p = Project::new();
    // A run a hostile checkout committed, whose journal line carries
    // markup that would run script if it were ever parsed as HTML.
    let run = p.path().join(".drover/runs/committed-1");
    for sub in ["events", "logs", "tasks"] {
        std::fs::create_dir_all(run.join(sub)).expect("run dirs");
    }
    std::fs::write(
        run.join("run.json"),
        json!({"run_id": "committed-1", "created_ns": 1, "cli": "scripted", "workspace": "headless",
               "project": p.path(), "tasks": ["t"], "driver_pid": 0, "driver_start": null})
        .to_string(),
    )
    .expect("run.json");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let markup = "<img src=x onerror=\"window.__pwned=1\">";
    std::fs::write(
        run.join("events.jsonl"),
        format!(
            "{}\n",
            json!({"ts": now, "task": "t", "kind": "state", "state": "blocked", "prompt_kind": "permission",
                   "source": "screen:x", "detail": {"evidence": markup}})
        ),
    )
    .expect("journal");
    let server = Server::start(&p);
    let browser = Browser::start();
    browser.open(&server.url);
    let shown = browser.wait_for(
        "the committed line",
        "const e = document.querySelector('#events'); return e && e.textContent.includes('onerror') && e.textContent",
    );
    assert!(
        shown.as_str().unwrap_or_default().contains(markup),
        "{shown}"
    );
    assert_eq!(
        browser.eval(
            "return [window.__pwned === undefined, document.querySelectorAll('#events img').length]",
            &[]
        ),
        json!([true, 0])
    );
}
