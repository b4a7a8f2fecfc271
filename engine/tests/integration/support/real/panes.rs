//! The tree's tmux server: the pane a run's seat lives in and what it
//! shows.

use std::process::{Command, Stdio};

use serde_json::Value;

use super::Real;

impl Real {
    pub fn socket(&self) -> String {
        drover::workspace::tmux::socket_for(&self.work)
    }

    fn tmux(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(self.socket())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The id of the newest run in the project (run ids sort by time).
    pub fn newest_run(&self) -> Option<String> {
        let runs = self.work.join(".drover").join("runs");
        std::fs::read_dir(&runs)
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .max()
    }

    /// The pane a run's seat lives in: the newest run's
    /// `tasks/<task>/pane.json`, which drover writes once the pane exists.
    pub fn seat_pane(&self, task: &str) -> Option<String> {
        let text = std::fs::read_to_string(
            self.run_dir(&self.newest_run()?)
                .join("tasks")
                .join(task)
                .join("pane.json"),
        )
        .ok()?;
        let doc: Value = serde_json::from_str(&text).ok()?;
        doc["pane"]["pane"].as_str().map(str::to_string)
    }

    pub fn capture(&self, pane: &str) -> Option<String> {
        self.tmux(&["capture-pane", "-p", "-t", pane])
    }
}
