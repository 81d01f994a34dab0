"""RPC through the TypeScript pi's own RpcClient class (dist/modes/rpc/rpc-client.js of the
reference), calling every public method, against both binaries. The driver records each
call's result or error and every event; start and stop are steps too."""
from cases.common import call
from cases.sessiondata import BASIC, SESSION_FILE, SESSION_PATH
from harness import Case

R = "rpc.client-"
CMP = ("rpc", "requests", "sessions")
SLOW = {"content": "a slow streamed reply " * 6, "delay_ms": 60, "chunk_chars": 4}


def c(name, *args, **kw):
    return dict({"call": name, "args": list(args)}, **kw)


def ccase(name, steps, turns=(), args=(), **kw):
    return Case(R + name, client={"steps": steps, "args": list(args)}, turns=list(turns),
                compare=kw.pop("compare", CMP), **kw)


CASES = [
    ccase("basics", [c("getState"), c("getAvailableModels"), c("getCommands"), c("getLastAssistantText"),
                     c("getSessionStats"), c("getMessages"), c("getForkMessages"), c("getStderr")]),
    ccase("prompt", [c("promptAndWait", "hello"), c("getMessages"), c("getLastAssistantText"), c("getSessionStats"),
                     c("setSessionName", "my-test-session"), c("getState"), c("getForkMessages")],
          turns=["hi back"], follows="1.x", note="1.x: totalMessages counts the prompt checkpoint entry"),
    ccase("models", [c("setModel", "mock", "mock-two"), c("getState"), c("cycleModel"), c("getState"),
                     c("setModel", "mock", "mock-model"), c("setThinkingLevel", "high"), c("getState"),
                     c("cycleThinkingLevel"), c("cycleThinkingLevel"), c("getState"), c("setModel", "mock", "nope")],
          follows="1.x"),
    ccase("models-scoped", [c("cycleModel"), c("cycleModel"), c("getState")], args=["--models", "mock-model,mock-two"],
          follows="1.x"),
    ccase("queue", [c("setSteeringMode", "all"), c("setFollowUpMode", "all"), c("getState"), c("prompt", "slow one"),
                    {"waitEvent": "message_update"}, c("steer", "steer message"), c("followUp", "follow message"), c("waitForIdle", 20000),
                    {"sleep": 800}, c("getMessages"), c("setSteeringMode", "one-at-a-time"),
                    c("setFollowUpMode", "one-at-a-time")],
          turns=[SLOW, "after steering", "after follow-up"]),
    ccase("abort", [c("prompt", "slow one"), {"waitEvent": "message_update"}, {"sleep": 200}, c("abort"), c("waitForIdle", 20000), c("getMessages"),
                    c("getLastAssistantText")], turns=[SLOW]),
    ccase("bash", [c("bash", "echo hello"), c("bash", "echo out; echo err >&2; exit 3"),
                   c("bash", "sleep 5; echo never", **{"async": "slow"}), {"sleep": 400}, c("abortBash"),
                   {"await": "slow"}, c("getMessages")]),
    ccase("compact", [c("promptAndWait", "hello"), c("compact", "focus on tests"), c("getMessages"),
                      c("getSessionStats"), c("setAutoCompaction", False), c("setAutoRetry", False), c("abortRetry"),
                      c("getState")],
          turns=["hi", {"match_body": "<conversation>", "content": "## Goal\nsummary text"}]),
    ccase("sessions", [c("promptAndWait", "hello"), c("newSession"), c("getState"), c("switchSession", SESSION_PATH),
                       c("getMessages"), c("getForkMessages", save="forks"), c("fork", "$forks.0.entryId"),
                       c("getMessages"), c("clone"), c("getState"), c("exportHtml", "{root}/export.html")],
          turns=["hi"], files={SESSION_FILE: BASIC}),
    ccase("new-session-parent", [c("promptAndWait", "hello"), c("getState", save="st"),
                                 c("newSession", "$st.sessionFile"), c("getState")], turns=["hi"]),
    ccase("events", [c("prompt", "read it"), c("collectEvents", 20000), c("promptAndWait", "again"), c("getMessages")],
          turns=[{"content": [call("read", {"path": "a.txt"})]}, "read done", "again done"],
          files={"cwd/a.txt": "A\n"}),
    ccase("errors", [c("switchSession", "{root}/missing.jsonl"), c("fork", "zzzzzzzz"), c("setThinkingLevel", "ultra"),
                     c("getState"), c("compact")]),
    ccase("1x-methods", [c("getAvailableThinkingLevels"), c("clearQueue"), c("getEntries"), c("getTree")],
          note="methods the 1.x RpcClient added; the 0.73.1 client has none of them"),
]
