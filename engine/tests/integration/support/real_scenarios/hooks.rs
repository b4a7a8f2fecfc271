//! drover's relay merged into the user's own hook config, and removed
//! again byte for byte.

use std::time::Instant;

use serde_json::json;

use super::{Case, context, timed};
use crate::support::real::{Real, wait_for};

/// `drover hooks install` merges drover's relay into the user's own hook
/// config; the real CLI accepts the result (drover's relay and the user's
/// hook both fire); `drover hooks remove` restores the user's bytes.
pub fn hooks(case: &Case) {
    let started = Instant::now();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    let record = real.root.path().join("user-hook.log");
    let files = (case.user_hooks)(&record);
    for (rel, text) in &files {
        let path = real.work.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write the user's config");
    }
    let installed = real.hooks("install");
    assert_eq!(installed["missing"], json!([]), "{installed:#}");
    assert_eq!(installed["change"], "written", "{installed:#}");
    let config = real
        .work
        .join(installed["config_path"].as_str().unwrap_or_default());

    let out = real.run(case.timeout(), case.args, "Reply with exactly: HOOKED");
    assert_eq!(
        (out.status(), out.code),
        ("completed", 0),
        "{}",
        context(&real, &out)
    );
    let relayed = real.relayed(out.run_id());
    assert!(
        relayed
            .iter()
            .any(|r| r["native"] == case.stop_event && r["task"] == case.cli),
        "the CLI did not run drover's {} hook: {}",
        case.stop_event,
        context(&real, &out)
    );
    let fired = wait_for(crate::support::HANG, || {
        std::fs::read_to_string(&record)
            .ok()
            .filter(|t| t.contains("user-stop"))
    });
    assert!(
        fired.is_some(),
        "the user's own hook did not fire next to drover's: {}",
        context(&real, &out)
    );

    let removed = real.hooks("remove");
    assert_eq!(removed["registered"], json!([]), "{removed:#}");
    for (rel, text) in &files {
        let now = std::fs::read_to_string(real.work.join(rel)).unwrap_or_default();
        assert_eq!(
            &now, text,
            "drover hooks remove did not restore {rel} byte for byte"
        );
    }
    if !files.iter().any(|(rel, _)| real.work.join(rel) == config) {
        assert!(
            !config.exists(),
            "{} was drover's own file and should be gone",
            config.display()
        );
    }
    timed(case.cli, "hooks", started);
}
