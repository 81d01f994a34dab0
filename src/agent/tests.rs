use std::time::{Duration, Instant};

use super::*;
use crate::ai::providers::scripted::{push_reply, Block, Reply};
use crate::ai::Content;
use crate::ai::ModelCost;
use serde_json::{json, Value};

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
    let mut run = agent.prompt(vec![Message::user_text(prompt)], abort);
    let events: Vec<AgentEvent> = run.events().collect();
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
fn final_replies_carry_their_duration_then_the_requested_thinking_level() {
    push_reply("stamped", Reply::text("hi"));
    let mut agent = Agent::new(model("stamped"), String::new(), Default::default());
    agent.thinking = ThinkingLevel::High;
    let (agent, events) = run_to_end(agent, "hi", Abort::new());
    let Message::Assistant(reply) = &agent.messages[1] else {
        panic!("no reply");
    };
    assert!(reply.extra["durationMs"].is_u64(), "{:?}", reply.extra);
    assert_eq!(reply.extra["thinkingLevel"], "high");
    let keys: Vec<&str> = reply.extra.keys().map(String::as_str).collect();
    let at = |k| keys.iter().position(|x| *x == k).unwrap();
    assert!(at("durationMs") + 1 == at("thinkingLevel"), "{keys:?}");
    // Only the final message carries them, as 1.6.0 stamps the stream's result.
    let start = events.iter().find_map(|e| match e {
        AgentEvent::MessageStart {
            message: Message::Assistant(a),
        } => Some(a),
        _ => None,
    });
    assert!(!start.unwrap().extra.contains_key("durationMs"));

    push_reply("stamped-off", Reply::error("503 service unavailable"));
    let (agent, _) = run_to_end(
        Agent::new(model("stamped-off"), String::new(), Default::default()),
        "hi",
        Abort::new(),
    );
    let Message::Assistant(failed) = agent.messages.last().unwrap() else {
        panic!("no reply");
    };
    assert_eq!(failed.extra["thinkingLevel"], "off");
    assert!(failed.extra.contains_key("durationMs"));
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
    let mut run = Agent::new(model("slow"), String::new(), Default::default())
        .prompt(vec![Message::user_text("hi")], abort.clone());
    std::thread::sleep(Duration::from_millis(250));
    let t = Instant::now();
    abort.abort();
    let events: Vec<AgentEvent> = run.events().collect();
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

/// A test tool: sleeps `ms` milliseconds, then echoes `text`; panics if asked to.
struct Echo {
    mode: ExecutionMode,
}

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echo text back"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}, "ms": {"type": "number"}, "stop": {"type": "boolean"}}, "required": ["text"]})
    }
    fn prompt_snippet(&self) -> &str {
        "echo text"
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    fn execute(&self, _id: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, String> {
        let ms = args["ms"].as_f64().unwrap_or(0.0) as u64;
        (ctx.on_update)(ToolOutput::text("working"));
        std::thread::sleep(Duration::from_millis(ms));
        let text = args["text"].as_str().unwrap_or_default();
        if text == "panic" {
            panic!("tool blew up");
        }
        if text == "fail" {
            return Err("it failed".into());
        }
        let mut out = ToolOutput::text(text);
        out.terminate = args["stop"].as_bool().unwrap_or(false);
        Ok(out)
    }
}

fn call(id: &str, args: Value) -> Block {
    Block::ToolCall {
        id: id.into(),
        name: "echo".into(),
        arguments: args,
    }
}

fn tool_agent(id: &str, mode: ExecutionMode) -> Agent {
    let mut a = Agent::new(model(id), String::new(), Default::default());
    a.tools.push(Arc::new(Echo { mode }));
    a
}

fn results(agent: &Agent) -> Vec<(String, String, bool)> {
    agent
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((
                r.tool_call_id.clone(),
                execute::content_text(&r.content),
                r.is_error,
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn parallel_calls_end_in_completion_order_and_results_keep_source_order() {
    push_reply(
        "par",
        Reply {
            blocks: vec![
                call("slow", json!({"text": "a", "ms": 150})),
                call("fast", json!({"text": "b", "ms": "1"})),
            ],
            ..Default::default()
        },
    );
    push_reply("par", Reply::text("done"));
    let (agent, events) = run_to_end(
        tool_agent("par", ExecutionMode::Parallel),
        "go",
        Abort::new(),
    );
    let ends: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ends, ["fast", "slow"]);
    assert_eq!(
        results(&agent),
        [
            ("slow".into(), "a".into(), false),
            ("fast".into(), "b".into(), false)
        ]
    );
    assert!(kinds(&events).contains(&"tool_execution_update".to_string()));
}

#[test]
fn sequential_mode_runs_in_order() {
    push_reply(
        "seq",
        Reply {
            blocks: vec![
                call("one", json!({"text": "a", "ms": 100})),
                call("two", json!({"text": "b"})),
            ],
            ..Default::default()
        },
    );
    push_reply("seq", Reply::text("done"));
    let (_, events) = run_to_end(
        tool_agent("seq", ExecutionMode::Sequential),
        "go",
        Abort::new(),
    );
    let ends: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ends, ["one", "two"]);
}

#[test]
fn invalid_arguments_failures_and_panics_become_error_results() {
    push_reply(
        "bad",
        Reply {
            blocks: vec![
                call("missing", json!({"ms": 1})),
                call("fails", json!({"text": "fail"})),
                call("panics", json!({"text": "panic"})),
            ],
            ..Default::default()
        },
    );
    push_reply("bad", Reply::text("recovered"));
    let (agent, _) = run_to_end(
        tool_agent("bad", ExecutionMode::Parallel),
        "go",
        Abort::new(),
    );
    let r = results(&agent);
    assert!(
        r[0].1
            .starts_with("Validation failed for tool \"echo\":\n  - text: missing"),
        "{}",
        r[0].1
    );
    assert_eq!((r[1].1.as_str(), r[1].2), ("it failed", true));
    assert_eq!(
        (r[2].1.as_str(), r[2].2),
        (
            "Tool echo failed unexpectedly (internal error: tool blew up)",
            true
        )
    );
    match agent.messages.last().unwrap() {
        Message::Assistant(a) => assert_eq!(a.text(), "recovered"),
        m => panic!("{m:?}"),
    }
}

#[test]
fn before_hook_blocks_and_terminate_stops_the_loop() {
    push_reply(
        "hook",
        Reply {
            blocks: vec![call("c1", json!({"text": "x"}))],
            ..Default::default()
        },
    );
    push_reply(
        "hook",
        Reply {
            blocks: vec![call("c2", json!({"text": "y", "stop": true}))],
            ..Default::default()
        },
    );
    let mut agent = tool_agent("hook", ExecutionMode::Parallel);
    agent.before_tool_call = Some(Arc::new(|c: &crate::ai::ToolCall, _: &mut Value| {
        (c.id == "c1").then(String::new)
    }));
    let (agent, _) = run_to_end(agent, "go", Abort::new());
    let r = results(&agent);
    assert_eq!(
        r[0],
        ("c1".into(), "Tool execution was blocked".into(), true)
    );
    assert_eq!(r[1], ("c2".into(), "y".into(), false));
    // Terminated after the second batch: no third LLM call was made.
    assert!(matches!(
        agent.messages.last().unwrap(),
        Message::ToolResult(_)
    ));
}

#[test]
fn steering_arrives_after_the_tool_batch_and_follow_up_when_idle() {
    push_reply(
        "steer",
        Reply {
            blocks: vec![call("c1", json!({"text": "x", "ms": 100}))],
            ..Default::default()
        },
    );
    push_reply("steer", Reply::text("saw steering"));
    push_reply("steer", Reply::text("saw follow-up"));
    let agent = tool_agent("steer", ExecutionMode::Parallel);
    let steering = agent.steering.clone();
    let follow_up = agent.follow_up.clone();
    let mut run = agent.prompt(vec![Message::user_text("go")], Abort::new());
    for ev in run.events() {
        // Queue while the tool runs, as a user typing during the turn would.
        if matches!(ev, AgentEvent::ToolExecutionStart { .. }) {
            steering.push(Message::user_text("steer now"));
            follow_up.push(Message::user_text("later"));
        }
    }
    let agent = run.finish();
    let roles: Vec<&str> = agent
        .messages
        .iter()
        .map(|m| match m {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
        })
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
}

#[test]
fn abort_during_tools_ends_with_an_aborted_reply() {
    push_reply(
        "abort-tools",
        Reply {
            blocks: vec![call("c1", json!({"text": "x", "ms": 200}))],
            ..Default::default()
        },
    );
    let abort = Abort::new();
    let mut run = tool_agent("abort-tools", ExecutionMode::Parallel)
        .prompt(vec![Message::user_text("go")], abort.clone());
    std::thread::sleep(Duration::from_millis(50));
    abort.abort();
    let _: Vec<AgentEvent> = run.events().collect();
    let agent = run.finish();
    match agent.messages.last().unwrap() {
        Message::Assistant(a) => assert_eq!(a.stop_reason, StopReason::Aborted),
        m => panic!("{m:?}"),
    }
}

#[test]
fn continue_needs_a_transcript_that_does_not_end_in_a_reply() {
    let agent = Agent::new(model("cont"), String::new(), Default::default());
    let (agent, err) = *agent.continue_run(Abort::new()).err().unwrap();
    assert_eq!(err, "Cannot continue: no messages in context");
    push_reply("cont", Reply::text("one"));
    let (agent, _) = run_to_end(agent, "hi", Abort::new());
    let (agent, err) = *agent.continue_run(Abort::new()).err().unwrap();
    assert_eq!(err, "Cannot continue from message role: assistant");
    agent.follow_up.push(Message::user_text("more"));
    push_reply("cont", Reply::text("two"));
    let mut run = agent.continue_run(Abort::new()).ok().unwrap();
    let _: Vec<AgentEvent> = run.events().collect();
    assert_eq!(run.finish().messages.len(), 4);
}

/// A tool that never returns on its own, as one blocked in `open(2)` on a FIFO would.
struct Stuck {
    mode: ExecutionMode,
}

impl Tool for Stuck {
    fn name(&self) -> &str {
        "stuck"
    }
    fn description(&self) -> &str {
        "Never returns"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn prompt_snippet(&self) -> &str {
        "never returns"
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    fn execute(&self, _id: &str, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, String> {
        // Ignores the abort flag on purpose, like a thread stuck in the kernel.
        let (_keep, never) = crossbeam_channel::bounded::<()>(0);
        let _ = never.recv();
        unreachable!()
    }
}

#[test]
fn abort_never_waits_for_a_tool_stuck_in_the_kernel() {
    for (id, mode) in [
        ("stuck-par", ExecutionMode::Parallel),
        ("stuck-seq", ExecutionMode::Sequential),
    ] {
        push_reply(
            id,
            Reply {
                blocks: vec![
                    call("fine", json!({"text": "quick"})),
                    Block::ToolCall {
                        id: "blocked".into(),
                        name: "stuck".into(),
                        arguments: json!({}),
                    },
                    call("after", json!({"text": "later"})),
                ],
                ..Default::default()
            },
        );
        let mut agent = tool_agent(id, mode);
        agent.tools.push(Arc::new(Stuck { mode }));
        let abort = Abort::new();
        let mut run = agent.prompt(vec![Message::user_text("go")], abort.clone());
        let mut events = Vec::new();
        for ev in run.events() {
            if matches!(&ev, AgentEvent::ToolExecutionStart { id, .. } if id == "blocked") {
                abort.abort();
            }
            events.push(ev);
        }
        let agent = run.finish();
        assert_eq!(kinds(&events).last().unwrap(), "agent_end", "{id}");
        let r = results(&agent);
        let blocked = r.iter().find(|(c, _, _)| c == "blocked").unwrap();
        assert_eq!(
            (blocked.1.as_str(), blocked.2),
            (execute::ABORTED, true),
            "{id}"
        );
        // pi 1.6.0 (#9986): a call of the batch that never started gets its result too.
        let after = r.iter().find(|(c, _, _)| c == "after").unwrap();
        assert_eq!(
            (after.1.as_str(), after.2),
            (execute::ABORTED, true),
            "{id}"
        );
        let ends = events
            .iter()
            .filter(|e| matches!(e, AgentEvent::ToolExecutionEnd { .. }))
            .count();
        assert_eq!(ends, r.len(), "{id}: one end per result");
        match agent.messages.last().unwrap() {
            Message::Assistant(a) => assert_eq!(a.stop_reason, StopReason::Aborted),
            m => panic!("{m:?}"),
        }
    }
}

/// A listener that is still handling `tool_execution_start` holds the tool back: the tool
/// runs only once the listener asks for the next event.
#[test]
fn a_tool_runs_only_after_its_start_event_was_handled() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static RAN: AtomicBool = AtomicBool::new(false);
    struct Flag;
    impl Tool for Flag {
        fn name(&self) -> &str {
            "flag"
        }
        fn description(&self) -> &str {
            "Sets a flag"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object", "properties": {}})
        }
        fn prompt_snippet(&self) -> &str {
            "sets a flag"
        }
        fn execute(&self, _: &str, _: Value, _: &ToolContext) -> Result<ToolOutput, String> {
            RAN.store(true, Ordering::SeqCst);
            Ok(ToolOutput::text("set"))
        }
    }
    push_reply(
        "ack",
        Reply {
            blocks: vec![Block::ToolCall {
                id: "f".into(),
                name: "flag".into(),
                arguments: json!({}),
            }],
            ..Default::default()
        },
    );
    push_reply("ack", Reply::text("done"));
    let mut agent = Agent::new(model("ack"), String::new(), Default::default());
    agent.tools.push(Arc::new(Flag));
    let mut run = agent.prompt(vec![Message::user_text("go")], Abort::new());
    while let Some(ev) = run.next_event() {
        if matches!(ev, AgentEvent::ToolExecutionStart { .. }) {
            // Give a tool that did not wait every chance to run first.
            std::thread::sleep(Duration::from_millis(100));
            assert!(
                !RAN.load(Ordering::SeqCst),
                "the tool ran before its start was handled"
            );
        }
    }
    run.finish();
    assert!(RAN.load(Ordering::SeqCst));
}

/// pi's providers end the blocks a cut stream left open: `text_end` comes before the aborted
/// `message_end`, with the text that arrived.
#[test]
fn an_abort_mid_text_ends_the_text_block_before_the_message() {
    push_reply(
        "abort-text",
        Reply {
            blocks: vec![Block::Text("a".repeat(400))],
            delay: Duration::from_millis(20),
            ..Default::default()
        },
    );
    let abort = Abort::new();
    let mut run = Agent::new(model("abort-text"), String::new(), Default::default())
        .prompt(vec![Message::user_text("hi")], abort.clone());
    let mut events = Vec::new();
    let mut deltas = 0;
    for ev in run.events() {
        if matches!(
            ev,
            AgentEvent::MessageUpdate {
                event: AssistantEvent::TextDelta { .. },
                ..
            }
        ) {
            deltas += 1;
            if deltas == 3 {
                abort.abort();
            }
        }
        events.push(ev);
    }
    run.finish();
    let end = events
        .iter()
        .position(|e| {
            matches!(
                e,
                AgentEvent::MessageEnd {
                    message: Message::Assistant(_)
                }
            )
        })
        .unwrap();
    let AgentEvent::MessageEnd {
        message: Message::Assistant(a),
    } = &events[end]
    else {
        unreachable!()
    };
    assert_eq!(a.stop_reason, StopReason::Aborted);
    match &events[end - 1] {
        AgentEvent::MessageUpdate {
            event: AssistantEvent::TextEnd { index: 0, content },
            ..
        } => assert_eq!(*content, a.text()),
        other => panic!("expected text_end before message_end, got {other:?}"),
    }
    assert!(a.text().len() >= 12, "{}", a.text());
}
