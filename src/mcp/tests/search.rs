use super::*;

fn cand(name: &str, description: &str, parameters: Value, ns: Option<(&str, &str)>) -> Candidate {
    Candidate {
        name: name.into(),
        description: description.into(),
        parameters,
        namespace: ns.map(|(n, d)| Namespace {
            name: n.into(),
            description: Some(d.into()),
            instructions: None,
        }),
    }
}

#[test]
fn tokens_split_identifiers_and_drop_noise() {
    assert_eq!(tokenize("readTextFile"), ["read", "text", "file"]);
    assert_eq!(
        tokenize("HTTPServer parseJSONBody"),
        ["http", "server", "parse", "json", "body"]
    );
    assert_eq!(
        tokenize("the issues of searches and boxes"),
        ["issue", "search", "box"]
    );
    assert_eq!(
        tokenize("mcp__dev-radius__get_me"),
        ["mcp", "dev", "radiu", "get", "me"]
    );
    assert_eq!(tokenize("class glass"), ["class", "glass"]);
}

fn tools() -> Vec<Candidate> {
    vec![
        cand(
            "mcp__fs__read_text_file",
            "Read the complete contents of a file as text.",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            Some(("mcp__fs", "Files")),
        ),
        cand(
            "mcp__fs__write_file",
            "Create a new file or overwrite an existing file.",
            json!({"type": "object", "properties": {"content": {"$ref": "#/$defs/c"}}, "$defs": {"c": {"description": "Text to write"}}}),
            Some(("mcp__fs", "Files")),
        ),
        cand(
            "mcp__gh__search_issues",
            "Search issues and pull requests.",
            json!({"type": "object"}),
            Some(("mcp__gh", "GitHub")),
        ),
        cand(
            "mcp__gh__app",
            "Open the GitHub app page.",
            json!({}),
            Some(("mcp__gh", "GitHub")),
        ),
    ]
}

#[test]
fn ranking_prefers_coverage_names_and_exact_names() {
    let t = tools();
    assert_eq!(rank("read text file", &t, 8)[0], "mcp__fs__read_text_file");
    assert_eq!(
        rank("search github issues", &t, 1),
        ["mcp__gh__search_issues"]
    );
    assert_eq!(
        rank("text to write", &t, 1),
        ["mcp__fs__write_file"],
        "schema text behind $ref counts"
    );
    assert_eq!(rank("app", &t, 8)[0], "mcp__gh__app");
    assert_eq!(
        rank("write_file", &t, 8)[0],
        "mcp__fs__write_file",
        "exact local name first"
    );
    assert!(rank("zebra", &t, 8).is_empty());
    assert!(rank("the", &t, 8).is_empty());
    assert_eq!(rank("file", &t, 1).len(), 1);
}

struct Host(std::sync::Mutex<Vec<String>>);

impl SearchHost for Host {
    fn candidates(&self, _abort: &Abort) -> Vec<Candidate> {
        tools()
    }
    fn load(&self, names: &[String]) {
        self.0.lock().unwrap().extend(names.iter().cloned());
    }
}

#[test]
fn the_tool_loads_matches_and_checks_its_arguments() {
    let host = Arc::new(Host(Default::default()));
    let tool = ToolSearch::new(host.clone());
    let ctx = ToolContext {
        cwd: std::path::PathBuf::from("/"),
        abort: Abort::new(),
        on_update: &|_| {},
        nested: None,
    };
    let out = tool
        .execute("c", json!({"query": "search issues", "limit": 1}), &ctx)
        .unwrap();
    assert_eq!(
        crate::mcp::content::text_of(&out.content),
        "Loaded 1 tool. They are available from your next call:\n- mcp__gh__search_issues: Search issues and pull requests."
    );
    assert_eq!(
        out.details,
        Some(json!({"loaded": ["mcp__gh__search_issues"]}))
    );
    assert_eq!(*host.0.lock().unwrap(), ["mcp__gh__search_issues"]);
    let none = tool.execute("c", json!({"query": "zebra"}), &ctx).unwrap();
    assert_eq!(
        crate::mcp::content::text_of(&none.content),
        "No matching tools found."
    );
    assert_eq!(
        tool.execute("c", json!({"query": " "}), &ctx).unwrap_err(),
        "query must not be empty"
    );
    assert_eq!(
        tool.execute("c", json!({"query": "x", "limit": 1.5}), &ctx)
            .unwrap_err(),
        "limit must be a positive integer"
    );
    assert_eq!(
        tool.execute("c", json!({"query": "x", "limit": 0}), &ctx)
            .unwrap_err(),
        "limit must be a positive integer"
    );
}
