use super::*;

fn messages(v: Value) -> Vec<AgentMessage> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| AgentMessage::from_value(m.clone()))
        .collect()
}

fn assistant(content: Value) -> Value {
    json!({"role": "assistant", "content": content, "api": "x", "provider": "p", "model": "m",
        "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "toolUse", "timestamp": 1})
}

#[test]
fn replay_translates_a_whole_conversation_in_order() {
    let convo = messages(json!([
        {"role": "user", "content": "fix it", "timestamp": 1},
        assistant(json!([
            {"type": "thinking", "thinking": "look first"},
            {"type": "text", "text": "Reading."},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}},
            {"type": "toolCall", "id": "c2", "name": "edit",
                "arguments": {"path": "a.txt", "edits": [{"oldText": "x", "newText": "y"}]}},
            {"type": "toolCall", "id": "c3", "name": "bash", "arguments": {"command": "ls -l\nmore"}}
        ])),
        {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": "x"}], "isError": false, "timestamp": 2},
        {"role": "toolResult", "toolCallId": "c2", "toolName": "edit",
            "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 2},
        {"role": "toolResult", "toolCallId": "c3", "toolName": "bash",
            "content": [{"type": "text", "text": "no such"}], "isError": true, "timestamp": 2},
    ]));
    let u = replay(&convo, Path::new("/p"));
    let kinds: Vec<&str> = u
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call",
            "tool_call",
            "tool_call_update",
            "tool_call_update",
            "tool_call_update"
        ]
    );
    assert_eq!(u[0]["content"], json!({"type": "text", "text": "fix it"}));
    assert_eq!(u[1]["content"]["text"], "look first");
    assert_eq!(u[3]["kind"], "read");
    assert_eq!(u[3]["title"], "read a.txt");
    assert_eq!(u[3]["locations"], json!([{"path": "/p/a.txt"}]));
    assert_eq!(u[5]["kind"], "execute");
    assert_eq!(u[5]["title"], "bash ls -l");
    assert_eq!(u[6]["status"], "completed");
    assert_eq!(u[6]["content"][0]["content"]["text"], "x");
    assert_eq!(
        u[7]["content"],
        json!([{"type": "diff", "path": "/p/a.txt", "oldText": "x", "newText": "y"}])
    );
    assert_eq!(u[8]["status"], "failed");
    assert_eq!(u[8]["content"][0]["content"]["text"], "no such");
}

#[test]
fn live_edit_shows_the_whole_file_before_and_after_as_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    std::fs::write(&file, "one\ntwo\n").unwrap();
    let mut t = LiveTranslator::new(dir.path().to_path_buf(), 1000);
    let args = json!({"path": "f.txt", "edits": [{"oldText": "two", "newText": "2"}]});
    let start = t.translate(&AgentEvent::ToolExecutionStart {
        id: "e".into(),
        name: "edit".into(),
        args: args.clone(),
        parent_id: None,
    });
    assert_eq!(start[0]["status"], "in_progress");
    assert_eq!(start[0]["kind"], "edit");
    std::fs::write(&file, "one\n2\n").unwrap();
    let end = t.translate(&AgentEvent::ToolExecutionEnd {
        id: "e".into(),
        name: "edit".into(),
        result: json!({"content": [{"type": "text", "text": "Edited"}],
            "details": {"firstChangedLine": 2}}),
        is_error: false,
        duration_ms: None,
        parent_id: None,
    });
    assert_eq!(end[0]["status"], "completed");
    assert_eq!(
        end[0]["content"][0],
        json!({"type": "diff", "path": file.to_string_lossy(), "oldText": "one\ntwo\n",
            "newText": "one\n2\n"})
    );
    // The editor can jump to the first changed line.
    assert_eq!(
        end[0]["locations"],
        json!([{"path": file.to_string_lossy(), "line": 2}])
    );
    // A call that names no file has no `locations` at all.
    let bash = t.translate(&AgentEvent::ToolExecutionStart {
        id: "b".into(),
        name: "bash".into(),
        args: json!({"command": "ls"}),
        parent_id: None,
    });
    assert!(bash[0].get("locations").is_none(), "{}", bash[0]);
}

#[test]
fn stop_reasons_follow_how_the_answer_ended() {
    let msg = |reason: &str, error: Option<&str>| {
        let mut v = assistant(json!([]));
        v["stopReason"] = json!(reason);
        if let Some(e) = error {
            v["errorMessage"] = json!(e);
        }
        serde_json::from_value::<Message>(v).unwrap()
    };
    assert_eq!(stop_reason(Some(&msg("stop", None)), false), Ok("end_turn"));
    assert_eq!(
        stop_reason(Some(&msg("length", None)), false),
        Ok("max_tokens")
    );
    assert_eq!(
        stop_reason(Some(&msg("aborted", None)), false),
        Ok("cancelled")
    );
    assert_eq!(stop_reason(Some(&msg("stop", None)), true), Ok("cancelled"));
    assert_eq!(
        stop_reason(Some(&msg("error", Some("boom"))), false),
        Err("boom".to_string())
    );
    assert_eq!(stop_reason(None, false), Ok("end_turn"));
}

#[test]
fn a_loaded_session_replays_messages_a_compaction_left_out_of_the_context() {
    let mut s = crate::session::SessionWriter::in_memory("/p");
    let user =
        |t: &str| AgentMessage::from_value(json!({"role": "user", "content": t, "timestamp": 1}));
    s.append_message(user("first")).unwrap();
    let kept = s.append_message(user("second")).unwrap();
    s.append_compaction("summary", &kept, 10, None, None, None)
        .unwrap();
    s.append_message(user("third")).unwrap();
    let texts: Vec<Value> = replay(&branch_messages(&s), Path::new("/p"))
        .into_iter()
        .map(|u| u["content"]["text"].clone())
        .collect();
    assert_eq!(texts, [json!("first"), json!("second"), json!("third")]);
    assert!(
        s.build_context().messages.len() < 4,
        "the model's context starts at the compaction"
    );
}
