"""JSON mode (`--mode json`): the event stream a consumer reads, one JSON object per line
(docs/json.md of the 0.73.1 package, agent-session tests)."""
from cases.common import RETRY_FAST, call
from harness import Case

J = "json."
CMP = ("exit", "stdout", "requests", "sessions")


def per_tool_call(obs):
    """The stdout events with every tool_execution_* event moved, in its order, into a list per
    tool call (`tool events of <id>`): concurrent calls interleave as the scheduler runs them."""
    events = obs.get("stdout")
    if not isinstance(events, list):
        return obs
    rest, calls = [], {}
    for e in events:
        if isinstance(e, dict) and str(e.get("type", "")).startswith("tool_execution_"):
            calls.setdefault(e.get("toolCallId"), []).append(e)
        else:
            rest.append(e)
    obs["stdout"] = rest + [{"tool events of %s" % k: v} for k, v in sorted(calls.items(), key=lambda kv: str(kv[0]))]
    return obs


def jcase(id, turns, prompt="hi", extra=(), **kw):
    return Case(id, argv=["--mode", "json"] + list(extra) + [prompt], turns=turns, compare=kw.pop("compare", CMP),
                stdout_json=True, **kw)


CASES = [
    jcase(J + "text", ["hello there"]),
    jcase(J + "text-chunked", [{"content": "a longer reply that arrives in several pieces", "chunk_chars": 5}]),
    jcase(J + "thinking", [{"content": [{"type": "thinking", "text": "let me think"}, {"type": "text", "text": "answer"}]}]),
    jcase(J + "tool-read", [{"content": [call("read", {"path": "a.txt"})]}, "done"], files={"cwd/a.txt": "A\n"}),
    jcase(J + "tool-error", [{"content": [call("read", {"path": "missing.txt"})]}, "done"]),
    jcase(J + "tool-bash-updates", [{"content": [call("bash", {"command": "echo one; sleep 0.3; echo two"})]}, "done"]),
    jcase(J + "tool-edit", [{"content": [call("edit", {"path": "a.txt", "edits": [{"oldText": "A", "newText": "B"}]})]}, "done"],
          files={"cwd/a.txt": "A\n"}, compare=CMP + ("files",)),
    jcase(J + "tools-parallel", [{"content": [call("read", {"path": "a.txt"}, id="call_1"),
                                              call("bash", {"command": "echo x"}, id="call_2")]}, "done"],
          files={"cwd/a.txt": "A\n"}, post=lambda obs, sb: per_tool_call(obs),
          note="tools run concurrently: each call's own events are compared in order, not how the "
               "two calls' events interleave (scheduling)"),
    jcase(J + "text-and-tool", [{"content": [{"type": "text", "text": "Reading."}, call("read", {"path": "a.txt"})]}, "done"],
          files={"cwd/a.txt": "A\n"}),
    jcase(J + "unknown-tool", [{"content": [call("nope", {})]}, "done"]),
    jcase(J + "http-400", [{"http_status": 400, "error_message": "bad"}], compare=CMP + ("stderr",)),
    jcase(J + "retry-events", [{"http_status": 500}, "recovered"], settings=RETRY_FAST),
    jcase(J + "finish-length", [{"content": "cut", "finish": "length"}]),
    jcase(J + "empty-reply", [{"content": []}]),
    jcase(J + "anthropic", [{"content": [{"type": "thinking", "text": "hm"}, {"type": "text", "text": "claude says"}]}],
          model="anth/claude-mock"),
    jcase(J + "no-session", ["ok"], extra=["--no-session"]),
    jcase(J + "two-messages", ["one", "two"], extra=["first"], prompt="second"),
    jcase(J + "usage", [{"content": "u", "usage": {"input": 500, "output": 50, "cached": 100}}]),
    jcase(J + "invalid-tool-args", [{"content": [call("read", '{"path": 5}')]}, "done"]),
    jcase(J + "auto-compaction", [{"content": "big", "usage": {"input": 3700, "output": 100}},
                                  {"match_body": "<conversation>", "content": "## Goal\nsummary"}],
          model="mock/mock-small", settings={"compaction": {"enabled": True, "reserveTokens": 500, "keepRecentTokens": 200}}),
    jcase(J + "prompt-template", ["ok"], prompt="/greet world", files={"agent/prompts/greet.md": "Say hello to $1.\n"}),
    jcase(J + "continue", ["second reply"], extra=["-c"], prompt="again",
          files={"agent/sessions/{slug}/2025-01-01T00-00-00-000Z_11111111-2222-4333-8444-555555555555.jsonl":
                 __import__("cases.sessiondata", fromlist=["BASIC"]).BASIC}),
]
