//! Model and thinking-level changes last for the session; only the selectors' Ctrl+S writes
//! the start-up defaults to settings.json (pi 1.x).

use serde_json::Value;

use super::*;
use crate::ai::ThinkingLevel;

fn saved_settings(h: &Harness) -> Value {
    let file = h.dir.path().join("agent").join("settings.json");
    match std::fs::read_to_string(file) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => Value::Null,
    }
}

/// A persisted session on a model that can think, beside a second model.
fn thinking_harness() -> Harness {
    harness_setup("sel-a", &["sel-b"], true, &mut |_, s, _| {
        s.agent_mut().model.reasoning = true;
    })
}

#[test]
fn cycling_and_choosing_models_changes_only_the_session() {
    let mut h = thinking_harness();
    h.type_bytes("\x1b[Z");
    h.wait_text("Thinking level: minimal");
    h.type_bytes("/thinking high\r");
    h.wait_text("Thinking level: high");
    assert_eq!(h.with(|s| s.agent().thinking), ThinkingLevel::High);
    h.type_bytes("\x10");
    h.wait_text("Switched to sel-b");
    h.type_bytes("/model\r");
    h.wait_text("to set as default");
    h.type_bytes("sel-a\r");
    h.wait_text("Model: sel-a");
    assert_eq!(h.with(|s| s.agent().model.id.clone()), "sel-a");
    let saved = saved_settings(&h);
    for key in ["defaultModel", "defaultProvider", "defaultThinkingLevel"] {
        assert!(saved.get(key).is_none(), "{key} saved: {saved}");
    }
}

#[test]
fn ctrl_s_in_the_model_selector_saves_the_default_model() {
    let mut h = thinking_harness();
    h.type_bytes("/model\r");
    h.wait_text("Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel");
    h.type_bytes("sel-b");
    h.type_bytes("\x13");
    h.wait_text("Default model: test/sel-b");
    assert_eq!(h.with(|s| s.agent().model.id.clone()), "sel-b");
    let saved = saved_settings(&h);
    assert_eq!(saved["defaultProvider"], "test");
    assert_eq!(saved["defaultModel"], "sel-b");
    // The selector marks the saved default from now on.
    h.type_bytes("/model\r");
    h.wait_text("✓ sel-b");
    h.wait_text("[test] · default");
}

#[test]
fn ctrl_s_in_the_thinking_selector_saves_the_default_level() {
    let mut h = thinking_harness();
    h.type_bytes("/thinking\r");
    h.wait_text("Thinking Level");
    h.wait_text("Moderate reasoning (~8k tokens) · default");
    h.type_bytes("high");
    h.type_bytes("\x13");
    h.wait_text("Default thinking level: high");
    assert_eq!(h.with(|s| s.agent().thinking), ThinkingLevel::High);
    assert_eq!(saved_settings(&h)["defaultThinkingLevel"], "high");
    h.type_bytes("/thinking extreme\r");
    h.wait_text("Unknown thinking level \"extreme\". Available levels: off, minimal, low,");
}
