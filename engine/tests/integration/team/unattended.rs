//! Unattended nights: a seat past its budget pauses and asks, a seat whose
//! rate limit ends a turn waits for the reset and sends again.

use std::time::Duration;

use serde_json::Value;

use super::{command_lines, json, ok, user_config, wait_for};
use crate::support::Project;

/// At these prices one scripted request (1201 in, 57 out, 1403 cache
/// reads, 1302 cache writes) costs $0.32133.
const PRICES: &str = r#"{"claude-opus-5-5": {"input_cost_per_token": 1e-4, "output_cost_per_token": 1e-3,
    "cache_read_input_token_cost": 1e-5, "cache_creation_input_token_cost": 1e-4}}"#;
const ONE_TURN_USD: f64 = 1201.0 * 1e-4 + 57.0 * 1e-3 + 1403.0 * 1e-5 + 1302.0 * 1e-4;

fn seat<'a>(all: &'a Value, nick: &str) -> &'a Value {
    all["seats"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["nick"] == nick))
        .unwrap_or_else(|| panic!("no seat {nick} in {all:#}"))
}

/// `drover send --json`'s report, whatever its exit status.
fn failed_send(p: &Project, nick: &str, prompt: &str) -> Value {
    let out = p.output(&["send", "--json", nick, prompt]);
    assert!(!out.status.success(), "{nick}: the message failed");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("send {nick}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// The journal lines of a seat, oldest first.
fn events(p: &Project, nick: &str) -> Vec<Value> {
    ok(p, &["events", "--json", "--seat", nick])
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn a_seat_past_its_daily_budget_pauses_asks_and_goes_on_when_raised() {
    let p = Project::new();
    let notified = p.path().join("notified.jsonl");
    user_config(
        &p,
        &format!(
            "[budget]\nday = {{ usd = 1.0 }}\n\n[[notify]]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"cat >> {}; echo >> {}\"]\non = [\"blocked\"]\n",
            notified.display(),
            notified.display()
        ),
    );
    std::fs::write(p.home.join(".config/drover/pricing.json"), PRICES).expect("pricing.json");
    ok(
        &p,
        &["up", "loop", "--cli", "scripted", "--workspace", "headless"],
    );
    // A script sending in a loop: four messages fit under $1 (the fourth
    // crosses it), the fifth is held.
    for n in 1..=4 {
        let sent = json(
            &p,
            &[
                "send",
                "--json",
                "loop",
                &format!("Reply with exactly: T{n}"),
            ],
        );
        assert_eq!(sent["status"], "completed", "{sent:#}");
    }
    let held = json(
        &p,
        &[
            "send",
            "--no-wait",
            "--json",
            "loop",
            "Reply with exactly: T5",
        ],
    );
    assert_eq!(held["started"]["state"], "blocked", "{held:#}");
    let listed = json(&p, &["seats", "--json"]);
    let paused = seat(&listed, "loop");
    assert_eq!(
        (paused["state"].as_str(), paused["prompt_kind"].as_str()),
        (Some("blocked"), Some("budget")),
        "{paused:#}"
    );
    assert_eq!(paused["question"]["kind"], "budget");
    assert_eq!(
        paused["question"]["title"],
        "budget day reached: raise it, or stop?"
    );
    let day = &paused["budgets"][0];
    assert_eq!(day["level"], "day");
    let spent = day["spent_usd"].as_f64().expect("spent");
    assert!(
        (4.0 * ONE_TURN_USD - spent).abs() < 1e-9,
        "four turns were spent: {spent}"
    );
    assert!(
        (1.0..1.0 + ONE_TURN_USD).contains(&spent),
        "paused within one turn's cost of the limit: {spent}"
    );
    // A second message to the paused seat waits on the same question.
    let again = json(
        &p,
        &[
            "send",
            "--no-wait",
            "--json",
            "loop",
            "Reply with exactly: T6",
        ],
    );
    assert_eq!(again["started"]["state"], "blocked", "{again:#}");
    wait_for("the notification", Duration::from_secs(30), || {
        (!command_lines(&notified).is_empty()).then_some(())
    });
    let answered = json(&p, &["answer", "--json", "loop", "raise"]);
    assert_eq!(answered["option"]["id"], "raise", "{answered:#}");
    // Both held messages go once the day's limit is $2.
    wait_for("both held messages", Duration::from_secs(120), || {
        let completed = events(&p, "loop")
            .iter()
            .filter(|e| e["kind"] == "verdict" && e["state"] == "completed")
            .count();
        (completed == 6).then_some(())
    });
    let listed = json(&p, &["seats", "--json"]);
    assert_eq!(
        seat(&listed, "loop")["budgets"][0]["limit_usd"].as_f64(),
        Some(2.0)
    );
    let blocked: Vec<Value> = command_lines(&notified);
    assert_eq!(blocked.len(), 1, "one notification: {blocked:#?}");
    ok(&p, &["down", "--all"]);
}

#[test]
fn a_rate_limited_seat_waits_for_the_reset_and_sends_the_prompt_again() {
    let p = Project::new();
    ok(
        &p,
        &[
            "up",
            "night",
            "--cli",
            "scripted",
            "--workspace",
            "headless",
        ],
    );
    // Claude's usage-limit sentence, resetting 3 s from now.
    let sent = json(
        &p,
        &[
            "send",
            "--json",
            "night",
            "Reply with exactly: BACK @limit-once=3",
        ],
    );
    assert_eq!(sent["status"], "completed", "{sent:#}");
    assert_eq!(
        sent["reply"], "BACK",
        "the interrupted prompt was sent again"
    );
    let lines = events(&p, "night");
    let waiting = lines
        .iter()
        .find(|e| e["prompt_kind"] == "waiting")
        .unwrap_or_else(|| panic!("no waiting line: {lines:#?}"));
    assert_eq!(waiting["state"], "blocked");
    let evidence = waiting["detail"]["evidence"].as_str().unwrap_or_default();
    assert!(
        evidence.contains("waiting until")
            && evidence.contains("the CLI's reset time")
            && evidence.contains("attempt 1 of 3"),
        "{evidence}"
    );
    assert!(
        lines.iter().any(|e| e["source"] == "resume"),
        "the resumption is journaled: {lines:#?}"
    );
    ok(&p, &["down", "--all"]);
}

#[test]
fn resuming_stops_at_the_profiles_cap_and_never_happens_with_no_resume() {
    let p = Project::new();
    let builtin = include_str!("../../../../profiles/scripted.toml");
    let dir = p.home.join(".config/drover/profiles");
    std::fs::create_dir_all(&dir).expect("profiles");
    std::fs::write(
        dir.join("scripted.toml"),
        format!("{builtin}\n[resume]\nattempts = 1\n"),
    )
    .expect("profile");
    ok(
        &p,
        &[
            "up",
            "capped",
            "--cli",
            "scripted",
            "--workspace",
            "headless",
        ],
    );
    // Every turn hits the limit: one resumption, then the seat gives up.
    let sent = failed_send(&p, "capped", "Reply with exactly: X @limit=1");
    assert_ne!(sent["status"], "completed", "{sent:#}");
    let waits = events(&p, "capped")
        .iter()
        .filter(|e| e["prompt_kind"] == "waiting")
        .count();
    assert_eq!(waits, 1);
    ok(
        &p,
        &[
            "up",
            "off",
            "--cli",
            "scripted",
            "--workspace",
            "headless",
            "--no-resume",
        ],
    );
    let sent = failed_send(&p, "off", "Reply with exactly: X @limit-once=1");
    assert_ne!(sent["status"], "completed", "{sent:#}");
    assert!(
        ["rate-limit", "quota"].contains(&sent["fault"]["kind"].as_str().unwrap_or_default()),
        "{sent:#}"
    );
    assert!(
        !events(&p, "off")
            .iter()
            .any(|e| e["prompt_kind"] == "waiting"),
        "--no-resume never waits"
    );
    ok(&p, &["down", "--all"]);
}

#[test]
fn a_headless_run_resumes_after_its_limit_resets() {
    let p = Project::new();
    let (doc, code) = p.run(&[
        "--cli",
        "scripted",
        "Reply with exactly: RUNBACK @limit-once=2",
    ]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    assert_eq!(doc["reply"], "RUNBACK");
    let run = doc["run_id"].as_str().expect("run id");
    assert!(
        p.states(run).iter().any(|s| s == "blocked:waiting"),
        "{:?}",
        p.states(run)
    );
}

#[test]
fn a_run_past_the_projects_budget_waits_and_a_stop_ends_it_over_budget() {
    let p = Project::new();
    user_config(&p, "[budget]\nproject = { usd = 0.01 }\n");
    // The scripted model's prices make one turn $0.0127: past $0.01.
    let (first, _) = p.run(&["--cli", "scripted", "Reply with exactly: ONE"]);
    assert_eq!(first["status"], "completed", "{first:#}");
    let held = p
        .drover()
        .args([
            "run",
            "--json",
            "--task",
            "two",
            "--cli",
            "scripted",
            "Reply with exactly: TWO",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("drover run");
    let run = wait_for("the held run's question", Duration::from_secs(60), || {
        let runs = std::fs::read_dir(p.path().join(".drover/runs")).ok()?;
        runs.filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|id| p.states(id).iter().any(|s| s == "blocked:budget"))
    });
    let status = json(&p, &["status", "--json"]);
    let project = &status["budgets"][0];
    assert_eq!(project["level"], "project", "{status:#}");
    assert!(
        project["spent_usd"].as_f64().is_some_and(|s| s > 0.01),
        "{project:#}"
    );
    let answered = json(&p, &["answer", "--json", "--run", &run, "two", "stop"]);
    assert_eq!(answered["option"]["id"], "stop");
    let out = held.wait_with_output().expect("the held run ends");
    assert!(!out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["status"], "over_budget", "{doc:#}");
    let journal = p.journal(&run);
    assert!(
        journal
            .iter()
            .any(|l| l["kind"] == "verdict" && l["state"] == "over_budget"),
        "{journal:#?}"
    );
}

/// Brings every seat down when the test ends, passed or not.
struct Down<'a>(&'a Project);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = self.0.output(&["down", "--all"]);
    }
}

#[test]
fn a_tmux_seat_waits_out_its_limit_and_types_the_prompt_again() {
    crate::support::tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    let _down = Down(&p);
    ok(
        &p,
        &["up", "pane", "--cli", "scripted", "--workspace", "tmux"],
    );
    let sent = json(
        &p,
        &[
            "send",
            "--json",
            "pane",
            "Reply with exactly: AGAIN @limit-once=2",
        ],
    );
    assert_eq!(
        (sent["status"].as_str(), sent["reply"].as_str()),
        (Some("completed"), Some("AGAIN")),
        "{sent:#}"
    );
    let lines = events(&p, "pane");
    assert!(
        lines.iter().any(|e| e["prompt_kind"] == "waiting"),
        "{lines:#?}"
    );
}
