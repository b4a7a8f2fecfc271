//! Token and dollar budgets: a warning, or the session ended.

use super::{HEADLESS, HERDR, TMUX, project, run, status};

fn budget_warns_or_ends_the_session(ws: &str) {
    let p = project(ws);
    // The budget is sampled from the transcript, whose path the hooks give
    // (SessionStart), on either workspace.
    if ws == HEADLESS {
        p.install_hooks("scripted");
    }
    // 1201 + 57 + 1302 + round(1403 * 0.1) = 2700 weighted tokens.
    let budget = ["--budget", "100", "--heartbeat", "300ms"];
    let mut warn = budget.to_vec();
    warn.extend(["--budget-mode", "warn"]);
    let (doc, _) = run(
        &p,
        ws,
        &warn,
        "Reply with exactly: W @usage-first @sleep=1500",
    );
    assert_eq!(status(&doc), "completed", "{doc:#}");
    let mut enforce = budget.to_vec();
    enforce.extend(["--budget-mode", "enforce", "--budget-grace", "0s"]);
    // The turn is never released: only the budget can end it.
    let (doc, code) = run(
        &p,
        ws,
        &enforce,
        "Reply with exactly: E @usage-first @hold=never-released",
    );
    assert_eq!((status(&doc), code), ("over_budget", 1), "{doc:#}");
    assert_eq!(doc["budget_weighted"], 2700);
}
both!(budget, budget_warns_or_ends_the_session);

/// One scripted request (1201 in, 57 out, 1403 cache read, 1302 cache
/// write) at the prices the test's pricing.json gives its model (Claude
/// Opus 5.5's in LiteLLM 1.110.2): $0.0127346.
const ONE_REQUEST_USD: f64 = 1201.0 * 4e-6 + 57.0 * 2e-5 + 1403.0 * 2e-7 + 1302.0 * 5e-6;

fn dollar_budget_ends_the_session(ws: &str) {
    let p = project(ws);
    if ws == HEADLESS {
        p.install_hooks("scripted");
    }
    // The user's file pins the scripted model's prices, so the figures
    // below do not move with the embedded table.
    let config = p.home.join(".config/drover");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(
        config.join("pricing.json"),
        r#"{"claude-opus-5-5": {"input_cost_per_token": 4e-6, "output_cost_per_token": 2e-5,
            "cache_read_input_token_cost": 2e-7, "cache_creation_input_token_cost": 5e-6}}"#,
    )
    .expect("pricing.json");
    let (doc, code) = run(
        &p,
        ws,
        &["--budget-usd", "1", "--budget-mode", "enforce"],
        "Reply with exactly: FINE",
    );
    assert_eq!((status(&doc), code), ("completed", 0), "{doc:#}");
    let cost = doc["cost_usd"].as_f64().expect("priced");
    assert!((cost - ONE_REQUEST_USD).abs() < 1e-9, "{cost}");
    let (doc, code) = run(
        &p,
        ws,
        &[
            "--budget-usd",
            "0.01",
            "--budget-mode",
            "enforce",
            "--budget-grace",
            "0s",
            "--heartbeat",
            "300ms",
        ],
        "Reply with exactly: E @usage-first @hold=never-released",
    );
    assert_eq!((status(&doc), code), ("over_budget", 1), "{doc:#}");
}
both!(dollar_budget, dollar_budget_ends_the_session);
