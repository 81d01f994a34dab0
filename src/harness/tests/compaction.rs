//! AgentSession compaction end to end with the scripted provider: the threshold trigger, the
//! overflow compact-and-retry, the one-attempt guard, manual compaction and branch summaries.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::compaction::*;
use super::*;
use crate::ai::providers::scripted::{push_reply, Reply};
use crate::ai::{Context, Model, ModelCost, Usage};
use crate::session::compaction::SUMMARIZATION_SYSTEM_PROMPT;
use crate::session::tree::COMPACTION_SUMMARY_PREFIX;
use crate::session::Entry;
use crate::util::sort;

type Seen = Arc<Mutex<Vec<(Context, Option<u64>)>>>;

fn model(id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: "scripted".into(),
        provider: "test".into(),
        base_url: String::new(),
        reasoning: false,
        input: vec!["text".into()],
        cost: ModelCost::default(),
        context_window: 2000,
        max_tokens: 100,
        thinking_level_map: None,
        headers: None,
        compat: None,
    }
}

/// A session on a 2000-token model (reserve 500, keep 300) that records every request.
fn session(id: &str) -> (AgentSession, Seen) {
    let seen: Seen = Arc::default();
    let mut agent = Agent::new(model(id), "SYS".into(), Default::default());
    let log = seen.clone();
    agent.stream_fn = Arc::new(move |m, c, o, a| {
        log.lock().unwrap().push((c.clone(), o.max_tokens));
        // Requests start in a later millisecond than whatever was written before them, so
        // "older than the latest compaction" is decided as in real use.
        std::thread::sleep(Duration::from_millis(3));
        crate::ai::providers::stream(m, c, o, a)
    });
    let retry = RetrySettings {
        base_delay_ms: 1,
        ..Default::default()
    };
    let mut s = AgentSession::new(agent, retry, Abort::new());
    s.compaction = CompactionSettings {
        enabled: true,
        reserve_tokens: 500,
        keep_recent_tokens: 300,
    };
    (s, seen)
}

fn reply(text: &str, input: u64) -> Reply {
    Reply {
        usage: Usage {
            input,
            ..Default::default()
        },
        ..Reply::text(text)
    }
}

/// The events of one prompt, up to (not including) the `agent_settled` that must end them.
fn prompt(s: &mut AgentSession, text: &str) -> Vec<Value> {
    let mut events = Vec::new();
    s.prompt(vec![Message::user_text(text)], &mut |e| {
        events.push(e.to_json())
    });
    let settled = events.pop().expect("events");
    assert_eq!(settled["type"], "agent_settled", "{events:?}");
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "agent_settled")
            .count(),
        0,
        "agent_settled comes once, last"
    );
    events
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn compactions(s: &AgentSession) -> Vec<&crate::session::entry::CompactionEntry> {
    s.session
        .entries()
        .iter()
        .filter_map(|e| match e {
            Entry::Compaction(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn user_text(m: &Message) -> String {
    match m {
        Message::User(u) => match &u.content {
            crate::ai::UserContent::Text(t) => t.clone(),
            crate::ai::UserContent::Blocks(b) => b
                .iter()
                .filter_map(|c| match c {
                    crate::ai::Content::Text(t) => Some(t.text.clone()),
                    _ => None,
                })
                .collect(),
        },
        m => panic!("not a user message: {m:?}"),
    }
}

#[test]
fn threshold_compacts_and_next_request_starts_with_the_summary() {
    let id = "cmp-threshold";
    push_reply(id, reply("a1", 100));
    push_reply(id, reply("a2", 1800));
    push_reply(id, Reply::text("SUMMARY-1"));
    push_reply(id, reply("a3", 200));
    let (mut s, seen) = session(id);

    let e1 = prompt(&mut s, &"x".repeat(2000));
    assert!(!types(&e1).contains(&"compaction_start"));

    let e2 = prompt(&mut s, &"y".repeat(1600));
    let t = types(&e2);
    let start = t.iter().position(|x| *x == "compaction_start").unwrap();
    assert_eq!(t[start - 1], "agent_end");
    assert_eq!(t[start + 1], "compaction_end");
    assert_eq!(t.len(), start + 2, "no retry after a threshold compaction");
    assert_eq!(e2[start]["reason"], "threshold");
    let end = &e2[start + 1];
    assert_eq!(end["reason"], "threshold");
    assert_eq!(end["aborted"], false);
    assert_eq!(end["willRetry"], false);
    assert!(end.get("errorMessage").is_none());
    assert_eq!(end["result"]["summary"], "SUMMARY-1");
    assert_eq!(end["result"]["tokensBefore"], 1800);
    assert_eq!(
        end["result"]["details"],
        serde_json::json!({"readFiles": [], "modifiedFiles": []})
    );

    // The entry: summary of u1/a1, keeping from u2.
    let c = compactions(&s);
    assert_eq!(c.len(), 1);
    let u2_id = s.session.entries()[2].id().to_string();
    assert_eq!(c[0].first_kept_entry_id.as_deref(), Some(u2_id.as_str()));
    assert_eq!(c[0].summary, "SUMMARY-1");
    assert_eq!(c[0].from_hook, Some(false));
    assert_eq!(end["result"]["firstKeptEntryId"], u2_id);

    // The summarization request.
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 3);
        let (ctx, max_tokens) = &seen[2];
        assert_eq!(
            ctx.system_prompt.as_deref(),
            Some(SUMMARIZATION_SYSTEM_PROMPT)
        );
        assert_eq!(*max_tokens, Some(400), "floor(0.8 × 500)");
        assert!(ctx.tools.is_empty());
        let req = user_text(&ctx.messages[0]);
        assert!(req.starts_with("<conversation>\n[User]: xxxx"));
        assert!(req.contains("\n\n[Assistant]: a1\n</conversation>"));
        assert!(!req.contains("yyyy"), "kept messages are not summarized");
    }
    // Live context: summary, u2, a2.
    assert_eq!(s.messages().len(), 3);

    let e3 = prompt(&mut s, "next");
    assert!(!types(&e3).contains(&"compaction_start"));
    let seen = seen.lock().unwrap();
    let (ctx, _) = &seen[3];
    let first = user_text(&ctx.messages[0]);
    assert!(first.starts_with(COMPACTION_SUMMARY_PREFIX));
    assert!(first.contains("SUMMARY-1"));
    assert_eq!(ctx.messages.len(), 4);
    assert_eq!(ctx.system_prompt.as_deref(), Some("SYS"));
}

#[test]
fn overflow_compacts_then_retries() {
    let id = "cmp-overflow";
    push_reply(id, reply("a1", 100));
    push_reply(
        id,
        Reply::error("prompt is too long: 250000 tokens > 200000 maximum"),
    );
    push_reply(id, Reply::text("SUMMARY-O"));
    push_reply(id, reply("recovered", 300));
    let (mut s, seen) = session(id);
    prompt(&mut s, &"x".repeat(2000));
    let events = prompt(&mut s, &"y".repeat(1600));
    let t = types(&events);
    let start = t.iter().position(|x| *x == "compaction_start").unwrap();
    assert_eq!(events[start]["reason"], "overflow");
    let end = &events[start + 1];
    assert_eq!(end["type"], "compaction_end");
    assert_eq!(end["willRetry"], true);
    assert_eq!(end["result"]["summary"], "SUMMARY-O");
    assert_eq!(t[start + 2], "agent_start", "the run continues");
    assert!(!t.contains(&"auto_retry_start"));
    assert_eq!(t.iter().filter(|x| **x == "compaction_start").count(), 1);
    match s.messages().last().unwrap() {
        Message::Assistant(a) => assert_eq!(a.text(), "recovered"),
        m => panic!("{m:?}"),
    }
    // The retry's request: summary, u2 — the failed reply is gone.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4);
    let (ctx, _) = &seen[3];
    assert_eq!(ctx.messages.len(), 2);
    assert!(user_text(&ctx.messages[0]).contains("SUMMARY-O"));
    assert!(user_text(&ctx.messages[1]).starts_with("yyyy"));
    // The failed reply stays in the file, before the compaction.
    let kinds: Vec<&str> = s.session.entries().iter().map(Entry::kind).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "message",
            "message",
            "compaction",
            "message"
        ]
    );
}

#[test]
fn second_overflow_reports_failure_without_looping() {
    let id = "cmp-overflow-twice";
    push_reply(id, reply("a1", 100));
    push_reply(id, Reply::error("prompt is too long"));
    push_reply(id, Reply::text("SUMMARY"));
    push_reply(id, Reply::error("prompt is too long"));
    push_reply(id, Reply::text("never requested"));
    let (mut s, seen) = session(id);
    prompt(&mut s, &"x".repeat(2000));
    let events = prompt(&mut s, &"y".repeat(1600));
    let t = types(&events);
    assert_eq!(t.iter().filter(|x| **x == "compaction_start").count(), 1);
    assert_eq!(t.iter().filter(|x| **x == "agent_start").count(), 2);
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "compaction_end")
        .collect();
    assert_eq!(ends.len(), 2);
    assert_eq!(ends[0]["willRetry"], true);
    let last = ends[1];
    assert_eq!(*t.last().unwrap(), "compaction_end");
    assert_eq!(last["reason"], "overflow");
    assert!(last.get("result").is_none());
    assert_eq!(last["aborted"], false);
    assert_eq!(last["willRetry"], false);
    assert_eq!(last["errorMessage"], OVERFLOW_RECOVERY_FAILED);
    assert!(OVERFLOW_RECOVERY_FAILED
        .starts_with("Context overflow recovery failed after one compact-and-retry attempt."));
    assert_eq!(seen.lock().unwrap().len(), 4);
}

#[test]
fn disabled_compaction_never_triggers() {
    let id = "cmp-disabled";
    push_reply(id, reply("a1", 1900));
    let (mut s, seen) = session(id);
    s.compaction.enabled = false;
    let events = prompt(&mut s, "hi");
    assert!(!types(&events).contains(&"compaction_start"));
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn a_threshold_with_nothing_to_summarize_starts_no_compaction() {
    // Over the threshold, but the kept tail holds the whole (short) conversation: pi 1.x
    // reports no compaction at all, and sends no summary request.
    let id = "cmp-nothing";
    push_reply(id, reply("a1", 1900));
    let (mut s, seen) = session(id);
    let events = prompt(&mut s, "hi");
    let kinds = types(&events);
    assert!(!kinds.contains(&"compaction_start"), "{kinds:?}");
    assert!(!kinds.contains(&"compaction_end"), "{kinds:?}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(compactions(&s).is_empty());
}

#[test]
fn manual_compaction_and_its_errors() {
    let id = "cmp-manual";
    let (mut s, _) = session(id);
    let mut events = Vec::new();
    let err = s
        .compact_with_events(None, &mut |e| events.push(e.to_json()))
        .unwrap_err();
    assert_eq!(err, "Nothing to compact (session too small)");
    assert_eq!(events[0]["type"], "compaction_start");
    assert_eq!(events[0]["reason"], "manual");
    assert_eq!(
        events[1]["errorMessage"],
        "Compaction failed: Nothing to compact (session too small)"
    );

    push_reply(id, reply("a1", 10));
    push_reply(id, reply("a2", 10));
    push_reply(id, reply("MANUAL", 77));
    prompt(&mut s, &"x".repeat(2000));
    prompt(&mut s, &"y".repeat(1600));
    let r = s.compact(Some("focus")).unwrap();
    assert!(r.summary.starts_with("MANUAL"));
    assert_eq!(compactions(&s).len(), 1);
    // pi 1.x: the summary request's usage in the result and the entry.
    assert_eq!(r.usage.input, 77);
    assert_eq!(r.to_json()["usage"]["input"], 77);
    assert_eq!(compactions(&s)[0].usage.as_ref().unwrap()["input"], 77);
    assert_eq!(s.compact(None).unwrap_err(), "Already compacted");
}

#[test]
fn summarization_failure_is_reported() {
    let id = "cmp-sum-fail";
    push_reply(id, reply("a1", 100));
    push_reply(id, reply("a2", 1800));
    push_reply(id, Reply::error("400 bad request"));
    let (mut s, _) = session(id);
    prompt(&mut s, &"x".repeat(2000));
    let events = prompt(&mut s, &"y".repeat(1600));
    let end = events.last().unwrap();
    assert_eq!(end["type"], "compaction_end");
    assert_eq!(
        end["errorMessage"],
        "Auto-compaction failed: Summarization failed: 400 bad request"
    );
    assert!(compactions(&s).is_empty());
}

#[test]
fn a_summary_that_calls_a_tool_is_refused() {
    let id = "cmp-sum-tool";
    push_reply(id, reply("a1", 100));
    push_reply(id, reply("a2", 1800));
    push_reply(
        id,
        Reply {
            blocks: vec![crate::ai::providers::scripted::Block::ToolCall {
                id: "c1".into(),
                name: "read".into(),
                arguments: serde_json::json!({"path": "x"}),
            }],
            ..Default::default()
        },
    );
    let (mut s, _) = session(id);
    prompt(&mut s, &"x".repeat(2000));
    let events = prompt(&mut s, &"y".repeat(1600));
    let end = events.last().unwrap();
    assert_eq!(
        end["errorMessage"],
        "Auto-compaction failed: Summarization attempted to call a tool"
    );
    assert!(compactions(&s).is_empty());
}

#[test]
fn branch_summary_is_written_at_the_target() {
    let id = "cmp-branch";
    push_reply(id, reply("a1", 10));
    push_reply(id, reply("a2", 10));
    push_reply(id, Reply::text("BRANCH"));
    let (mut s, seen) = session(id);
    prompt(&mut s, "first");
    prompt(&mut s, "second");
    let a1 = s.session.entries()[1].id().to_string();
    let agent = s.agent.take().unwrap();
    let abort = Abort::new();
    let summarizer = Summarizer::for_agent(&agent, &abort);
    let new_id = summarize_branch(
        &mut s.session,
        &a1,
        Some(&a1),
        &summarizer,
        &BranchSummaryOptions::default(),
    )
    .unwrap()
    .unwrap();
    let Some(Entry::BranchSummary(b)) = s.session.entries().last() else {
        panic!()
    };
    assert_eq!(b.id, new_id);
    assert_eq!(b.parent_id.as_deref(), Some(a1.as_str()));
    assert_eq!(b.from_id, a1);
    assert!(b.summary.ends_with("BRANCH"));
    assert!(b
        .summary
        .starts_with(crate::session::compaction::BRANCH_SUMMARY_PREAMBLE));
    assert_eq!(s.session.leaf_id(), Some(new_id.as_str()));
    let seen = seen.lock().unwrap();
    let (ctx, max_tokens) = seen.last().unwrap();
    assert_eq!(*max_tokens, Some(2048));
    let req = user_text(&ctx.messages[0]);
    assert!(req.contains("[User]: second\n\n[Assistant]: a2"));
    assert!(!req.contains("first"));
}

#[test]
fn split_turn_makes_two_summaries_and_joins_them() {
    use crate::ai::providers::scripted::Block;
    let id = "cmp-split";
    // One long turn: a tool call, its result, then a large reply.
    push_reply(id, reply("a1", 10));
    push_reply(
        id,
        Reply {
            blocks: vec![Block::ToolCall {
                id: "c1".into(),
                name: "nope".into(),
                arguments: serde_json::json!({"path": "src/lib.rs"}),
            }],
            ..Default::default()
        },
    );
    push_reply(id, reply(&"z".repeat(1600), 1800));
    // Both summaries are requested at once, so either may get either reply.
    push_reply(id, Reply::text("S"));
    push_reply(id, Reply::text("S"));
    let (mut s, seen) = session(id);
    prompt(&mut s, "first");
    let events = prompt(&mut s, "do the thing");
    let end = events.last().unwrap();
    assert_eq!(end["type"], "compaction_end", "{events:?}");
    assert_eq!(
        end["result"]["summary"],
        "S\n\n---\n\n**Turn Context (split turn):**\n\nS"
    );
    let seen = seen.lock().unwrap();
    let mut budgets: Vec<Option<u64>> = seen[seen.len() - 2..].iter().map(|(_, m)| *m).collect();
    sort::sort(&mut budgets);
    assert_eq!(budgets, [Some(250), Some(400)]);
}

/// pi checks the threshold before sending a prompt too: a session that is already over it
/// (resumed that way, or compaction was off when it grew) is compacted first, and the prompt
/// goes out with the summary, not the whole history.
#[test]
fn a_session_already_over_the_threshold_is_compacted_before_the_prompt_is_sent() {
    let id = "cmp-before-prompt";
    push_reply(id, reply("a1", 100));
    push_reply(id, reply("a2", 1800));
    push_reply(id, Reply::text("SUMMARY-FIRST"));
    push_reply(id, reply("a3", 200));
    let (mut s, seen) = session(id);
    s.compaction.enabled = false;
    prompt(&mut s, &"x".repeat(2000));
    prompt(&mut s, &"y".repeat(1600));
    assert!(compactions(&s).is_empty());
    s.compaction.enabled = true;

    let e = prompt(&mut s, "next");
    let t = types(&e);
    assert_eq!(
        &t[..3],
        ["compaction_start", "compaction_end", "agent_start"]
    );
    assert_eq!(e[0]["reason"], "threshold");
    assert_eq!(e[1]["willRetry"], false);
    assert_eq!(e[1]["result"]["summary"], "SUMMARY-FIRST");
    assert_eq!(compactions(&s).len(), 1);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4, "two answers, the summary, then the prompt");
    assert_eq!(
        seen[2].0.system_prompt.as_deref(),
        Some(SUMMARIZATION_SYSTEM_PROMPT)
    );
    let sent = &seen[3].0.messages;
    assert!(user_text(&sent[0]).starts_with(COMPACTION_SUMMARY_PREFIX));
    assert!(!sent
        .iter()
        .any(|m| matches!(m, Message::User(_)) && user_text(m).contains("xxxx")));
    assert_eq!(user_text(sent.last().unwrap()), "next");
}
