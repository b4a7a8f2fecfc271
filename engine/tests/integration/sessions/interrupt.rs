//! Ctrl-C on `drover run`: the verdict is still printed and the seat is
//! torn down.

use serde_json::Value;

use super::{HEADLESS, HERDR, TMUX, project, status};

fn interrupt_tears_the_seat_down(ws: &str) {
    use std::process::Stdio;
    let p = project(ws);
    let child = p
        .drover()
        .args([
            "run",
            "--json",
            "--cli",
            "scripted",
            "--workspace",
            ws,
            "--teardown-grace",
            "2s",
            "work @hang",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover run");
    p.first_run_working();
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().expect("exit");
    assert_eq!(out.status.code(), Some(130));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("the verdict is still printed");
    assert_eq!(status(&doc), "crashed", "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("interrupted")),
        "{doc:#}"
    );
    let process: Value = serde_json::from_str(
        &std::fs::read_to_string(
            p.run_dir(doc["run_id"].as_str().unwrap_or_default())
                .join("tasks/scripted/process.json"),
        )
        .unwrap_or_default(),
    )
    .unwrap_or_default();
    if ws == HEADLESS {
        let pid = process["pid"].as_u64().expect("pid") as u32;
        let start = process["identity"]["start"].as_u64().expect("start");
        assert!(
            !drover::workspace::process::alive(drover::workspace::process::Identity { pid, start }),
            "the turn outlived the interrupt"
        );
    } else if ws == HERDR {
        let herdr = p.herdr.as_ref().expect("fake herdr");
        let panes = herdr.call("pane.list", serde_json::json!({}));
        assert_eq!(
            panes["result"]["panes"].as_array().map(Vec::len),
            Some(0),
            "the seat's pane (or its workspace) survived the interrupt: {panes:#}"
        );
    } else {
        // Not the window, not the session's idle shell, not the server.
        let socket = drover::workspace::tmux::socket_for(p.path());
        let sessions = std::process::Command::new("tmux")
            .args(["-L", &socket, "list-sessions"])
            .output()
            .expect("tmux");
        assert!(
            !sessions.status.success(),
            "tmux sessions survived the interrupt: {}",
            String::from_utf8_lossy(&sessions.stdout)
        );
    }
}
both!(interrupt, interrupt_tears_the_seat_down);
