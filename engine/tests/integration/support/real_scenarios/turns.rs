//! A turn that completes: headless (then resumed), and in a tmux pane
//! whose screens `drover explain` reads.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Case, context, timed};
use crate::support::real::{Real, expected_usage, wait_for};

/// `drover run` completes with the reply, the conversation id and the
/// usage the server sent; a second run resumes the same conversation.
pub fn headless(case: &Case) {
    let started = Instant::now();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    let before = real.server.last_seq();
    let first = real.run(case.timeout(), case.args, "Reply with exactly: FIRST");
    assert_eq!(
        (first.status(), first.code),
        ("completed", 0),
        "{}",
        context(&real, &first)
    );
    assert_eq!(first.doc["reply"], "FIRST", "{}", context(&real, &first));
    let conversation = first.doc["session_id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| panic!("no conversation id: {}", context(&real, &first)))
        .to_string();
    let served = case.accounted_since(&real, before);
    assert!(
        served.iter().all(|r| r["protocol"] == case.protocol),
        "{served:?}"
    );
    assert_eq!(
        first.doc["usage"],
        expected_usage(&served),
        "usage of the first run vs the {} requests the server answered: {served:#?}\n{}",
        served.len(),
        context(&real, &first)
    );
    assert_eq!(
        real.states(first.run_id()).last().map(String::as_str),
        Some("done@exit"),
        "{}",
        context(&real, &first)
    );

    let mid = real.server.last_seq();
    let mut args: Vec<&str> = case.args.to_vec();
    args.extend(["--resume", conversation.as_str()]);
    let second = real.run(case.timeout(), &args, "Reply with exactly: SECOND");
    assert_eq!(
        (second.status(), second.code),
        ("completed", 0),
        "{}",
        context(&real, &second)
    );
    assert_eq!(second.doc["reply"], "SECOND", "{}", context(&real, &second));
    assert_eq!(
        second.doc["session_id"],
        conversation.as_str(),
        "the resumed run answered in another conversation: {}",
        context(&real, &second)
    );
    let served = case.accounted_since(&real, mid);
    assert_eq!(
        second.doc["usage"],
        expected_usage(&served),
        "usage of the resumed run vs the {} requests the server answered: {served:#?}\n{}",
        served.len(),
        context(&real, &second)
    );
    timed(case.cli, "headless", started);
}

/// drover installs the hooks, launches the CLI in a pane, types the prompt
/// and completes on the real Stop-equivalent hook; `drover explain` reads
/// the pane as idle before the turn and working during it.
pub fn tmux(case: &Case) {
    let started = Instant::now();
    crate::support::tmux_required();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    let installed = real.hooks("install");
    assert_eq!(installed["missing"], json!([]), "{installed:#}");
    // A slow answer keeps the turn on screen long enough to read it.
    real.server
        .control("mode", &json!({"mode": "delay", "delay_ms": 3000}));
    let args = case.args_with(&["--workspace", "tmux"]);
    let spawned = Instant::now();
    let mut child = real.spawn_run(case.timeout(), &args, "Reply with exactly: TMUXOK");
    let mut captures: Vec<String> = Vec::new();
    let limit = case.timeout() + Duration::from_secs(60);
    loop {
        if child.try_wait().expect("wait for drover").is_some() {
            break;
        }
        assert!(
            spawned.elapsed() < limit,
            "drover ignored its own --timeout"
        );
        if let Some(screen) = real
            .seat_pane(case.cli)
            .and_then(|pane| real.capture(&pane))
            && captures.last() != Some(&screen)
            && !screen.trim().is_empty()
        {
            captures.push(screen);
        }
        std::thread::sleep(Duration::from_millis(40));
    }
    let out = Real::finish_run(child, spawned);
    assert_eq!(
        (out.status(), out.code),
        ("completed", 0),
        "{}",
        context(&real, &out)
    );
    let conversation = out.doc["session_id"].as_str().unwrap_or_default();
    assert!(!conversation.is_empty(), "{}", context(&real, &out));
    if case.stop_carries_reply {
        assert_eq!(out.doc["reply"], "TMUXOK", "{}", context(&real, &out));
    }
    let relayed = real.relayed(out.run_id());
    assert!(
        relayed.iter().any(|r| r["native"] == case.stop_event),
        "no {} hook was relayed: {}",
        case.stop_event,
        context(&real, &out)
    );
    let states = real.states(out.run_id());
    assert!(
        states.iter().any(|s| s == "done@hook:Stop"),
        "{states:?}\n{}",
        context(&real, &out)
    );

    eprintln!(
        "[real {}] tmux usage {} (server answered {})",
        case.cli,
        out.doc["usage"],
        expected_usage(&real.server.answered_since(0))
    );
    // What `drover explain` says about the screens the pane showed.
    let mut readings = Vec::new();
    let mut idle_at = None;
    let mut working_at = None;
    for (i, screen) in captures.iter().enumerate() {
        let typed = screen.contains("TMUXOK");
        if idle_at.is_some() && working_at.is_some() {
            break;
        }
        if idle_at.is_none() && typed {
            // Past the pre-turn screens without an idle reading.
            break;
        }
        let reading = real.explain(&format!("capture-{i:03}"), screen);
        let state = reading["state"].as_str().unwrap_or_default().to_string();
        if state == "idle" && !typed && idle_at.is_none() {
            idle_at = Some(i);
        }
        if state == "working" && idle_at.is_some() && working_at.is_none() {
            working_at = Some(i);
        }
        readings.push(format!("#{i} {state} ({})", reading["rule"]));
    }
    let dump = || {
        captures
            .iter()
            .enumerate()
            .map(|(i, c)| format!("--- capture #{i}:\n{c}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // The poll (every 40 ms, plus a tmux fork) can miss the ready screen
    // entirely when drover reads it and types within one of its ticks; only
    // then does what drover itself read from that screen (the journal's
    // screen-rule idle, by the same component rules `drover explain`
    // applies) stand in for a capture. A pre-turn capture that does not
    // read idle still fails.
    let missed_every_pre_turn_screen = captures.first().is_some_and(|c| c.contains("TMUXOK"));
    let idle_read_by_drover = states.iter().any(|s| s.starts_with("idle@screen:"));
    assert!(
        idle_at.is_some() || (missed_every_pre_turn_screen && idle_read_by_drover),
        "no capture before the prompt was typed explains as idle: {readings:?}\n{states:?}\n{}",
        dump()
    );
    assert!(
        working_at.is_some(),
        "no capture during the turn explains as working: {readings:?}\n{}",
        dump()
    );
    // drover's teardown leaves no CLI (or daemon of it) behind.
    let left = wait_for(crate::support::HANG, || {
        let left = real.cli_leftovers();
        left.is_empty().then_some(())
    });
    assert!(
        left.is_some(),
        "processes survived the session: {:?}",
        real.cli_leftovers()
    );
    timed(case.cli, "tmux", started);
}
