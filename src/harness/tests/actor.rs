//! The session actor: ops reach the session in order, a run's events reach the listener,
//! peeks and aborts are answered during a run, other ops wait for it.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Receiver;

use super::*;
use crate::agent::Agent;
use crate::ai::providers::scripted::{push_reply, Reply};
use crate::ai::{Model, ModelCost, StopReason, ThinkingLevel};
use crate::harness::extensions::{InputSource, UserInput};
use crate::resources::settings::RetrySettings;

fn session(id: &str) -> AgentSession {
    let model = Model {
        id: id.into(),
        name: id.into(),
        api: "scripted".into(),
        provider: "test".into(),
        base_url: String::new(),
        reasoning: true,
        input: vec!["text".into()],
        cost: ModelCost::default(),
        context_window: 1000,
        max_tokens: 100,
        thinking_level_map: None,
        headers: None,
        compat: None,
    };
    let mut agent = Agent::new(model, String::new(), Default::default());
    agent.options.api_key = "key".into();
    AgentSession::new(agent, RetrySettings::default(), Abort::new())
}

/// The event types the listener heard (`idle` for [`SessionEvent::Idle`]), as they come.
fn start(id: &str, options: ActorOptions) -> (SessionHandle, SessionActor, Receiver<String>) {
    let (tx, rx) = crossbeam_channel::unbounded();
    let listener: Listener = Box::new(move |ev| {
        let name = match ev {
            SessionEvent::Agent(ev) => ev.to_json()["type"].as_str().unwrap_or("").to_string(),
            SessionEvent::Idle => "idle".to_string(),
        };
        let _ = tx.send(name);
    });
    let (handle, actor) = spawn(
        session(id),
        ActorEnv::fixed(std::env::temp_dir()),
        options,
        listener,
    )
    .unwrap();
    (handle, actor, rx)
}

fn input(text: &str) -> UserInput {
    UserInput {
        text: text.into(),
        images: Vec::new(),
        source: InputSource::Rpc,
    }
}

fn expand() -> Expand {
    Arc::new(|t: &str| t.to_string())
}

/// A reply slow enough to act during it (aborts cut it short).
fn slow(text: &str) -> Reply {
    Reply {
        delay: Duration::from_millis(30),
        ..Reply::text(text)
    }
}

fn wait_for(events: &Receiver<String>, kind: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for ev in events.iter() {
        let done = ev == kind;
        seen.push(ev);
        if done {
            return seen;
        }
    }
    panic!("no {kind} in {seen:?}");
}

#[test]
fn a_prompt_streams_its_events_then_the_actor_is_idle() {
    push_reply("actor-basic", Reply::text("hello"));
    let (handle, actor, events) = start("actor-basic", ActorOptions::default());
    let (ack_tx, ack_rx) = crossbeam_channel::unbounded();
    handle.prompt(
        input("hi"),
        expand(),
        WhenBusy::Wait,
        Some(Box::new(move |d| {
            let _ = ack_tx.send(d);
        })),
    );
    let seen = wait_for(&events, "idle");
    assert_eq!(seen.first().map(String::as_str), Some("agent_start"));
    assert!(seen.contains(&"agent_end".to_string()), "{seen:?}");
    assert_eq!(ack_rx.recv().unwrap(), Ok(Disposition::Started));
    handle.shutdown();
    let session = actor.join().unwrap();
    assert_eq!(session.messages().len(), 2);
}

#[test]
fn during_a_run_a_peek_sees_the_run_and_other_ops_wait_for_its_end() {
    push_reply("actor-mid", slow("a reply that takes a while to stream"));
    let (handle, actor, events) = start("actor-mid", ActorOptions::default());
    handle.prompt(input("hi"), expand(), WhenBusy::Wait, None);
    wait_for(&events, "message_update");
    let peeked = handle
        .peek(|p| match p {
            Peek::Running(_, conversation) => {
                let mut roles = Vec::new();
                conversation.for_each(&mut |m| roles.push(m.role().to_string()));
                Some((conversation.len(), roles))
            }
            Peek::Idle(_) => None,
        })
        .recv()
        .unwrap();
    // The prompt is in the conversation; the reply is still streaming.
    assert_eq!(peeked, Some((1, vec!["user".to_string()])));
    // Refused at once: nothing waits yet.
    let (prompt_ack, refused) = crossbeam_channel::unbounded();
    handle.prompt(
        input("too soon"),
        expand(),
        WhenBusy::Refuse,
        Some(Box::new(move |d| {
            let _ = prompt_ack.send(d);
        })),
    );
    assert_eq!(refused.recv().unwrap(), Err(Busy));
    // Waits for the run's end.
    let level = {
        let (tx, rx) = reply();
        handle.send(Op::SetThinkingLevel {
            level: ThinkingLevel::High,
            reply: Some(tx),
        });
        rx
    };
    let seen = wait_for(&events, "idle");
    assert!(seen.contains(&"agent_end".to_string()), "{seen:?}");
    assert_eq!(level.recv().unwrap(), Some(ThinkingLevel::High));
    let after = handle
        .peek(|p| match p {
            Peek::Idle(idle) => Some(idle.session.agent().thinking),
            Peek::Running(..) => None,
        })
        .recv()
        .unwrap();
    assert_eq!(after, Some(ThinkingLevel::High));
    drop(handle);
    let session = actor.join().unwrap();
    assert_eq!(session.messages().len(), 2, "the refused prompt never ran");
}

#[test]
fn an_abort_stops_the_run_and_is_answered_once_it_is_over() {
    push_reply(
        "actor-abort",
        slow("a reply that would take far too long to stream"),
    );
    push_reply("actor-abort", Reply::text("next"));
    let (handle, actor, events) = start("actor-abort", ActorOptions::default());
    handle.prompt(input("hi"), expand(), WhenBusy::Wait, None);
    wait_for(&events, "message_update");
    handle.abort_and_wait().recv().unwrap();
    wait_for(&events, "idle");
    assert!(!handle.is_aborted(), "the next run does not start aborted");
    let last = handle.query(|idle| match idle.session.messages().last() {
        Some(Message::Assistant(a)) => Some(a.stop_reason),
        _ => None,
    });
    assert_eq!(last.recv().unwrap(), Some(StopReason::Aborted));
    handle.prompt(input("again"), expand(), WhenBusy::Wait, None);
    handle.barrier();
    handle.shutdown();
    let session = actor.join().unwrap();
    match session.messages().last() {
        Some(Message::Assistant(a)) => assert_eq!(a.text(), "next"),
        m => panic!("{m:?}"),
    }
}

#[test]
fn after_an_abort_a_peek_sees_the_session_the_run_left_behind() {
    push_reply(
        "actor-abort-peek",
        slow("a reply that would take far too long to stream"),
    );
    let (handle, actor, events) = start("actor-abort-peek", ActorOptions::default());
    handle.prompt(input("hi"), expand(), WhenBusy::Wait, None);
    wait_for(&events, "message_update");
    handle.abort();
    handle.send(Op::Abort { done: None });
    let running = handle.peek(|p| matches!(p, Peek::Running(..)));
    assert!(!running.recv().unwrap(), "answered once the run was over");
    handle.shutdown();
    actor.join().unwrap();
}

#[test]
fn a_halt_drops_what_waits_and_runs_only_the_last_words() {
    push_reply(
        "actor-halt",
        slow("a reply that would take far too long to stream"),
    );
    let (handle, actor, events) = start("actor-halt", ActorOptions::default());
    handle.prompt(input("hi"), expand(), WhenBusy::Wait, None);
    wait_for(&events, "message_update");
    // Waits for the run's end, then is dropped by the halt.
    let dropped = handle.query(|_| ());
    let (last_tx, last) = crossbeam_channel::unbounded();
    handle.halt_then(move |idle| {
        let _ = last_tx.send(idle.session.messages().len());
    });
    let session = actor.join().unwrap();
    assert!(dropped.recv().is_err(), "the query never ran");
    assert_eq!(
        last.recv().unwrap(),
        2,
        "the last words saw the aborted run's end"
    );
    match session.messages().last() {
        Some(Message::Assistant(a)) => assert_eq!(a.stop_reason, StopReason::Aborted),
        m => panic!("{m:?}"),
    }
}

#[test]
fn a_channel_listener_hears_the_events_in_order() {
    push_reply("actor-channel", Reply::text("hello"));
    let (listener, events) = crate::harness::op::channel_listener();
    let (handle, actor) = spawn(
        session("actor-channel"),
        ActorEnv::fixed(std::env::temp_dir()),
        ActorOptions::default(),
        listener,
    )
    .unwrap();
    handle.prompt(input("hi"), expand(), WhenBusy::Wait, None);
    let mut kinds = Vec::new();
    for ev in events.iter() {
        match ev {
            crate::harness::op::OwnedEvent::Agent(ev) => {
                kinds.push(ev.to_json()["type"].as_str().unwrap_or("").to_string())
            }
            crate::harness::op::OwnedEvent::Idle => break,
        }
    }
    assert_eq!(kinds.first().map(String::as_str), Some("agent_start"));
    assert_eq!(kinds.last().map(String::as_str), Some("agent_settled"));
    handle.shutdown();
    actor.join().unwrap();
}

#[test]
fn a_model_switch_reaches_the_run_in_progress_and_applies_at_once_when_idle() {
    use crate::harness::switch_queue::Switch;
    use crate::session::entry::Entry;
    push_reply("actor-switch", slow("a reply that takes a while to stream"));
    let (handle, actor, events) = start("actor-switch", ActorOptions::default());
    handle.prompt(input("hi"), expand(), WhenBusy::Wait, None);
    wait_for(&events, "message_update");
    // Mid-run: the run records it before its reply, as pi does; it does not wait for the end.
    handle.send(Op::ModelSwitch(Switch::Thinking(ThinkingLevel::High)));
    wait_for(&events, "idle");
    let kinds = handle
        .query(|idle| {
            let kinds: Vec<&'static str> = idle
                .session
                .session
                .entries()
                .iter()
                .map(|e| match e {
                    Entry::Message(_) => "message",
                    Entry::ThinkingLevelChange(_) => "thinking",
                    _ => "other",
                })
                .collect();
            (kinds, idle.session.agent().thinking)
        })
        .recv()
        .unwrap();
    assert_eq!(kinds.0, ["message", "thinking", "message"]);
    assert_eq!(kinds.1, ThinkingLevel::High);
    // Idle: applied at once, before anything sent after it.
    handle.send(Op::ModelSwitch(Switch::Thinking(ThinkingLevel::Low)));
    let now = handle
        .query(|idle| idle.session.agent().thinking)
        .recv()
        .unwrap();
    assert_eq!(now, ThinkingLevel::Low);
    handle.shutdown();
    actor.join().unwrap();
}
