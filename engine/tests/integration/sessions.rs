//! Every verdict path through `drover run`, on every workspace, with the
//! scripted CLI (Claude Code's formats, driven by the real claude component),
//! real tmux, and a fake herdr server (tests/fake-herdr) speaking herdr's
//! socket API over real pseudo-terminals.

use crate::support;

use serde_json::Value;
use support::{Project, tmux_required};

const HEADLESS: &str = "headless";
const TMUX: &str = "tmux";
const HERDR: &str = "herdr";

fn project(workspace: &str) -> Project {
    let p = match workspace {
        HERDR => Project::with_fake_herdr(&[]),
        _ => Project::new(),
    };
    if workspace == TMUX {
        tmux_required();
    }
    if workspace != HEADLESS {
        p.install_hooks("scripted");
    }
    p
}

fn run(p: &Project, workspace: &str, extra: &[&str], prompt: &str) -> (Value, i32) {
    let mut args = vec![
        "--cli",
        "scripted",
        "--workspace",
        workspace,
        "--teardown-grace",
        "2s",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    p.run(&args)
}

fn status(doc: &Value) -> &str {
    doc["status"].as_str().unwrap_or_default()
}

macro_rules! both {
    ($name:ident, $scenario:ident) => {
        mod $name {
            #[test]
            fn headless() {
                super::$scenario(super::HEADLESS);
            }
            #[test]
            fn tmux() {
                super::$scenario(super::TMUX);
            }
            #[test]
            fn herdr() {
                super::$scenario(super::HERDR);
            }
        }
    };
}

// Declared after `both!`, which verdicts, budgets and interrupt use.
mod acp;
mod budgets;
mod delivery;
mod interrupt;
mod summary;
mod verdicts;
