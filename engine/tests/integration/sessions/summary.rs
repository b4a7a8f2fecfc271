//! `drover run`'s text summary: what the turn cost, or which model has no
//! price and how to give it one.

use super::{HEADLESS, project};

/// README command 1: the scripted CLI reports a real Claude model, so the
/// demo shows a cost.
#[test]
fn the_scripted_demo_shows_a_cost() {
    let p = project(HEADLESS);
    let out = p.output(&[
        "run",
        "--cli",
        "scripted",
        "Reply with exactly: hello from drover",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("reply: hello from drover"), "{text}");
    // One request of claude-opus-5-5 (LiteLLM 1.110.2): 1201 in at $4/M,
    // 57 out at $20/M, 1403 cache read at $0.2/M, 1302 cache write at $5/M.
    assert!(text.contains("  cost: $0.0127\n"), "{text}");
}

/// A model no price table knows is named, with where to add its price.
#[test]
fn an_unpriced_model_is_named_with_how_to_price_it() {
    let p = project(HEADLESS);
    // Hooks name the transcript, where the summary finds the model's name.
    p.install_hooks("scripted");
    let out = p.output(&[
        "run",
        "--cli",
        "scripted",
        "--model",
        "claude-made-up-9",
        "Reply with exactly: hi",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let pricing_file = p.home.join(".config/drover/pricing.json");
    let expected = format!(
        "  cost: unpriced: no price for claude-made-up-9; add its prices to {}, in LiteLLM's format",
        pricing_file.display()
    );
    assert!(text.contains(&expected), "{expected:?} not in:\n{text}");
}
