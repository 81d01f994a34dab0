use std::time::{Duration, Instant};

use super::*;
use crate::ai::providers::scripted::{push_reply, Block, Reply};
use crate::ai::ModelCost;

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
        context_window: 1000,
        max_tokens: 100,
        thinking_level_map: None,
        headers: None,
        compat: None,
    }
}

fn run_to_end(agent: Agent, prompt: &str, abort: Abort) -> (Agent, Vec<AgentEvent>) {
    let run = agent.prompt(vec![Message::user_text(prompt)], abort);
    let events: Vec<AgentEvent> = run.events.iter().collect();
    (run.finish(), events)
}

fn kinds(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| e.to_json()["type"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn text_reply_emits_pi_event_order() {
    push_reply("order", Reply::text("hello world"));
    let (agent, events) = run_to_end(
        Agent::new(model("order"), String::new(), Default::default()),
        "hi",
        Abort::new(),
    );
    let k = kinds(&events);
    assert_eq!(
        &k[..6],
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_update"
        ]
    );
    assert_eq!(&k[k.len() - 3..], ["message_end", "turn_end", "agent_end"]);
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageUpdate {
                event: AssistantEvent::TextDelta { delta, .. },
                ..
            } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "hello world");
    assert_eq!(agent.messages.len(), 2);
    match &agent.messages[1] {
        Message::Assistant(a) => assert_eq!(a.text(), "hello world"),
        m => panic!("unexpected {m:?}"),
    }
}

#[test]
fn provider_error_ends_the_run_with_an_error_message() {
    push_reply("err", Reply::error("503 service unavailable"));
    let (agent, events) = run_to_end(
        Agent::new(model("err"), String::new(), Default::default()),
        "hi",
        Abort::new(),
    );
    assert_eq!(kinds(&events).last().unwrap(), "agent_end");
    match agent.messages.last().unwrap() {
        Message::Assistant(a) => {
            assert_eq!(a.stop_reason, StopReason::Error);
            assert_eq!(a.error_message.as_deref(), Some("503 service unavailable"));
        }
        m => panic!("unexpected {m:?}"),
    }
}

#[test]
fn abort_stops_a_stalled_stream_within_100ms() {
    push_reply(
        "slow",
        Reply {
            blocks: vec![Block::Text("a".repeat(400))],
            delay: Duration::from_millis(200),
            ..Default::default()
        },
    );
    let abort = Abort::new();
    let run = Agent::new(model("slow"), String::new(), Default::default())
        .prompt(vec![Message::user_text("hi")], abort.clone());
    std::thread::sleep(Duration::from_millis(250));
    let t = Instant::now();
    abort.abort();
    let events: Vec<AgentEvent> = run.events.iter().collect();
    assert!(
        t.elapsed() < Duration::from_millis(100),
        "took {:?}",
        t.elapsed()
    );
    let agent = run.finish();
    assert_eq!(kinds(&events).last().unwrap(), "agent_end");
    match agent.messages.last().unwrap() {
        Message::Assistant(a) => assert_eq!(a.stop_reason, StopReason::Aborted),
        m => panic!("unexpected {m:?}"),
    }
}

#[test]
fn unknown_tool_call_gets_an_error_result_and_the_loop_continues() {
    push_reply(
        "tools",
        Reply {
            blocks: vec![Block::ToolCall {
                id: "c1".into(),
                name: "nope".into(),
                arguments: json!({"a": 1}),
            }],
            ..Default::default()
        },
    );
    push_reply("tools", Reply::text("done"));
    let (agent, events) = run_to_end(
        Agent::new(model("tools"), String::new(), Default::default()),
        "hi",
        Abort::new(),
    );
    let k = kinds(&events);
    assert!(k.contains(&"tool_execution_start".to_string()));
    assert_eq!(k.iter().filter(|s| *s == "turn_start").count(), 2);
    match &agent.messages[2] {
        Message::ToolResult(r) => {
            assert!(r.is_error);
            assert_eq!(r.content, vec![Content::text("Tool nope not found")]);
        }
        m => panic!("unexpected {m:?}"),
    }
    assert_eq!(agent.messages.len(), 4);
}
