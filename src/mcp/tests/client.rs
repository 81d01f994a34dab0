use super::*;
use crate::mcp::rpc::Incoming;

/// A server played by a function: every message the client sends goes to `respond`, whose
/// answers are delivered from another thread, as a real transport would.
struct Scripted {
    sink: Sink,
    respond: Box<Respond>,
    sent: Arc<Mutex<Vec<Value>>>,
}

impl Transport for Scripted {
    fn send(&self, message: Value) -> Result<(), McpError> {
        self.sent.lock().unwrap().push(message.clone());
        let answers = (self.respond)(&message);
        let sink = Arc::clone(&self.sink);
        std::thread::spawn(move || {
            for a in answers {
                sink(Incoming::Message(a));
            }
        });
        Ok(())
    }
    fn close(&self) {}
}

fn init_result(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {"tools": {}},
           "serverInfo": {"name": "s", "version": "1"}, "instructions": "  Use me.  "})
}

type Respond = dyn Fn(&Value) -> Vec<Value> + Send + Sync;

fn connect_with(
    respond: impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static,
    notes: Arc<Mutex<Vec<String>>>,
) -> (Result<Client, McpError>, Arc<Mutex<Vec<Value>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let for_transport = Arc::clone(&sent);
    let respond: Arc<Respond> = Arc::new(move |m: &Value| {
        if m["method"] == "initialize" {
            return vec![
                json!({"jsonrpc": "2.0", "id": m["id"], "result": init_result("2025-06-18")}),
            ];
        }
        respond(m)
    });
    let options = ClientOptions {
        timeout: Duration::from_secs(5),
        roots: vec![json!({"uri": "file:///w", "name": "w"})],
        on_notification: Arc::new(move |method, _| notes.lock().unwrap().push(method.to_string())),
        on_close: Arc::new(|_| {}),
    };
    let client = Client::connect(options, None, move |sink| {
        let r = Arc::clone(&respond);
        Ok(Arc::new(Scripted {
            sink,
            respond: Box::new(move |m| r(m)),
            sent: for_transport,
        }) as Arc<dyn Transport>)
    });
    (client, sent)
}

fn reply(m: &Value, result: Value) -> Vec<Value> {
    vec![json!({"jsonrpc": "2.0", "id": m["id"], "result": result})]
}

#[test]
fn initialize_negotiates_and_announces_itself() {
    let (client, sent) = connect_with(|_| vec![], Default::default());
    let client = client.unwrap();
    assert_eq!(client.info.protocol_version, "2025-06-18");
    assert_eq!(client.info.instructions.as_deref(), Some("  Use me.  "));
    assert!(client.has_capability("tools"));
    let sent = sent.lock().unwrap();
    assert_eq!(sent[0]["method"], "initialize");
    assert_eq!(
        sent[0]["params"]["protocolVersion"],
        LATEST_PROTOCOL_VERSION
    );
    assert_eq!(sent[0]["params"]["capabilities"], json!({"roots": {}}));
    assert_eq!(
        sent[0]["params"]["clientInfo"],
        json!({"name": "pi", "version": crate::VERSION})
    );
    assert_eq!(
        sent[1],
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
}

fn connect_raw(init: Value) -> Result<Client, McpError> {
    let options = ClientOptions {
        timeout: Duration::from_secs(5),
        roots: vec![],
        on_notification: Arc::new(|_, _| {}),
        on_close: Arc::new(|_| {}),
    };
    Client::connect(options, None, move |sink| {
        Ok(Arc::new(Scripted {
            sink,
            respond: Box::new(move |m| reply(m, init.clone())),
            sent: Default::default(),
        }) as Arc<dyn Transport>)
    })
}

#[test]
fn bad_handshakes_are_refused() {
    let e = connect_raw(init_result("1999-01-01")).err().unwrap();
    assert_eq!(
        e.to_string(),
        "MCP server selected unsupported protocol version 1999-01-01"
    );
    let e = connect_raw(json!({"protocolVersion": "2025-11-25"}))
        .err()
        .unwrap();
    assert_eq!(e.to_string(), "Invalid MCP initialize result");
}

#[test]
fn listings_follow_pages_and_refuse_loops_and_bad_entries() {
    let (client, _) = connect_with(
        |m| {
            let cursor = m["params"]["cursor"].as_str().unwrap_or("");
            match (m["method"].as_str().unwrap_or(""), cursor) {
                ("tools/list", "") => reply(
                    m,
                    json!({"tools": [{"name": "a", "inputSchema": {}}], "nextCursor": "p2"}),
                ),
                ("tools/list", "p2") => reply(
                    m,
                    json!({"tools": [{"name": "b", "inputSchema": {}}], "nextCursor": null}),
                ),
                ("resources/list", _) => reply(
                    m,
                    json!({"resources": [{"uri": "u"}], "nextCursor": "same"}),
                ),
                ("resources/templates/list", _) => {
                    reply(m, json!({"resourceTemplates": [{"name": 3}]}))
                }
                _ => vec![],
            }
        },
        Default::default(),
    );
    let client = client.unwrap();
    let names: Vec<_> = client
        .list_tools(None)
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("a"), json!("b")]);
    let o = RequestOptions::new(Duration::from_secs(5), None);
    let (page, next) = client
        .list_page("resources/list", "resources", None, o)
        .unwrap();
    assert_eq!(
        page,
        [json!({"uri": "u", "name": "u"})],
        "unnamed resources are named by URI"
    );
    assert_eq!(next.as_deref(), Some("same"));
    assert_eq!(
        client
            .list_all("resources/list", "resources", o)
            .unwrap_err()
            .to_string(),
        "MCP resources/list returned duplicate cursor: same"
    );
    assert_eq!(
        client
            .list_all("resources/templates/list", "resourceTemplates", o)
            .unwrap_err()
            .to_string(),
        "Invalid entry in MCP resources/templates/list result"
    );
}

#[test]
fn calls_errors_timeouts_progress_and_abort() {
    let (client, sent) = connect_with(
        |m| match m["params"]["name"].as_str().unwrap_or("") {
            "bare" => reply(m, json!({})),
            "rpc-error" => vec![
                json!({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32602, "message": "Unknown tool: x"}}),
            ],
            "slow" => {
                let token = m["params"]["_meta"]["progressToken"].clone();
                let id = m["id"].clone();
                let mut out: Vec<Value> = (1..=6)
                    .map(|i| json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": i}}))
                    .collect();
                out.push(json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}));
                // Delivered slowly: progress keeps the request alive past its timeout.
                let sink_delay: Vec<Value> = out;
                std::thread::sleep(Duration::from_millis(0));
                sink_delay
            }
            _ => vec![],
        },
        Default::default(),
    );
    let client = client.unwrap();
    let o = RequestOptions::new(Duration::from_secs(5), None);
    assert_eq!(
        client.call_tool("bare", json!({}), o).unwrap(),
        json!({"content": []})
    );
    assert_eq!(
        client
            .call_tool("rpc-error", json!({}), o)
            .unwrap_err()
            .to_string(),
        "Unknown tool: x"
    );

    let seen = Mutex::new(Vec::new());
    let on_progress = |p: &Value| seen.lock().unwrap().push(p["progress"].clone());
    let with_progress = RequestOptions {
        on_progress: Some(&on_progress),
        ..o
    };
    client.call_tool("slow", json!({}), with_progress).unwrap();
    assert_eq!(seen.lock().unwrap().len(), 6);

    let short = RequestOptions::new(Duration::from_millis(120), None);
    let e = client.call_tool("hang", json!({}), short).unwrap_err();
    assert_eq!(e.to_string(), "MCP request timed out after 120ms");
    let cancelled = sent.lock().unwrap().last().cloned().unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["reason"], "Request timed out");

    let abort = Abort::new();
    let flag = abort.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(60));
        flag.abort();
    });
    let started = Instant::now();
    let e = client
        .call_tool(
            "hang",
            json!({}),
            RequestOptions::new(Duration::from_secs(30), Some(&abort)),
        )
        .unwrap_err();
    assert_eq!(e, McpError::Aborted);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        sent.lock().unwrap().last().unwrap()["params"]["reason"],
        "Aborted"
    );
}

#[test]
fn server_requests_are_answered_and_notifications_passed_on() {
    let notes: Arc<Mutex<Vec<String>>> = Default::default();
    let (client, sent) = connect_with(
        |m| {
            if m["method"] == "tools/call" {
                vec![
                    json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"}),
                    json!({"jsonrpc": "2.0", "id": 9, "method": "roots/list"}),
                    json!({"jsonrpc": "2.0", "id": 10, "method": "sampling/createMessage"}),
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x"}}),
                    json!({"garbage": true}),
                    json!({"jsonrpc": "2.0", "id": m["id"], "result": {"content": []}}),
                ]
            } else {
                vec![]
            }
        },
        Arc::clone(&notes),
    );
    let client = client.unwrap();
    client
        .call_tool(
            "t",
            json!({}),
            RequestOptions::new(Duration::from_secs(5), None),
        )
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while sent
        .lock()
        .unwrap()
        .iter()
        .filter(|m| m.get("id").is_some() && m.get("method").is_none())
        .count()
        < 3
    {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = sent.lock().unwrap();
    let answers: Vec<&Value> = sent.iter().filter(|m| m.get("method").is_none()).collect();
    assert_eq!(
        *answers[0],
        json!({"jsonrpc": "2.0", "id": "p1", "result": {}})
    );
    assert_eq!(
        *answers[1],
        json!({"jsonrpc": "2.0", "id": 9, "result": {"roots": [{"uri": "file:///w", "name": "w"}]}})
    );
    assert_eq!(answers[2]["error"]["code"], -32601);
    assert_eq!(
        answers[2]["error"]["message"],
        "Method not found: sampling/createMessage"
    );
    assert_eq!(*notes.lock().unwrap(), ["notifications/message"]);
}

#[test]
fn a_closed_connection_fails_what_waits() {
    let (client, _) = connect_with(|_| vec![], Default::default());
    let client = Arc::new(client.unwrap());
    let c = Arc::clone(&client);
    let waiter = std::thread::spawn(move || {
        c.call_tool(
            "hang",
            json!({}),
            RequestOptions::new(Duration::from_secs(30), None),
        )
    });
    std::thread::sleep(Duration::from_millis(50));
    client
        .shared
        .handle(Incoming::Closed(Some("exit status 1".into())));
    let e = waiter.join().unwrap().unwrap_err();
    assert_eq!(e.to_string(), "MCP connection closed: exit status 1");
    assert!(client.is_closed());
    assert_eq!(client.ping(None).unwrap_err(), McpError::Closed(None));
}
