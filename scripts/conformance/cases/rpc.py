"""RPC mode with raw JSON lines: the framing and the edges a typed client never sends
(docs/rpc.md of the 0.73.1 package, rpc.test.ts, rpc-jsonl.test.ts)."""
from cases.common import call
from cases.sessiondata import BASIC, SESSION_FILE, SESSION_PATH
from harness import Case

R = "rpc."
CMP = ("rpc", "exit", "requests", "sessions")


def send(cmd):
    return {"send": cmd}


def resp(id):
    return {"wait": {"type": "response", "id": id}}


def idle():
    return {"wait": {"type": "agent_end"}}


def script(*steps):
    out = []
    for s in steps:
        out.extend(s if isinstance(s, list) else [s])
    return out


def ask(id, cmd):
    return [send(dict(cmd, id=id)), resp(id)]


def rcase(id, steps, turns=(), compare=CMP, argv=(), **kw):
    return Case(id, rpc={"script": script(*steps), "argv": list(argv)}, turns=list(turns), compare=compare, **kw)


CASES = [
    rcase(R + "unknown-command-id", [send({"id": "u1", "type": "no_such_command"}),
                                     {"wait": {"type": "response", "id": "u1"}, "timeout": 3}], follows="1.x",
          note="issue 19: answer an unknown command with its id (pi 0.73.1 drops it; 1.x fixed it)"),
    rcase(R + "invalid-json", [{"send_raw": "{not json"}, {"sleep": 0.5}, ask("s", {"type": "get_state"})]),
    rcase(R + "missing-type", [send({"id": "m1"}), {"sleep": 0.5}, ask("s", {"type": "get_state"})]),
    rcase(R + "no-id", [send({"type": "get_state"}), {"wait": {"type": "response", "command": "get_state"}}]),
    rcase(R + "empty-line", [{"send_raw": ""}, ask("s", {"type": "get_state"})]),
    rcase(R + "get-state-fresh", [ask("s", {"type": "get_state"})]),
    rcase(R + "get-available-models", [ask("m", {"type": "get_available_models"})]),
    rcase(R + "prompt-and-events", [ask("p", {"type": "prompt", "message": "hello"}), idle()], turns=["hi there"]),
    rcase(R + "prompt-tool-events", [ask("p", {"type": "prompt", "message": "read"}), idle()],
          turns=[{"content": [call("read", {"path": "a.txt"})]}, "done"], files={"cwd/a.txt": "A\n"},
          note="issue 19: toolcall_end.toolCall has type toolCall; turn_end.toolResults[] have role toolResult"),
    rcase(R + "prompt-edit-start-before-change", [ask("p", {"type": "prompt", "message": "edit"}), idle()],
          turns=[{"content": [call("edit", {"path": "a.txt", "edits": [{"oldText": "A", "newText": "B"}]})]}, "done"],
          files={"cwd/a.txt": "A\n"}, compare=CMP + ("files",)),
    # The four cases below answer a command between two deltas: 250 ms apart, so the answer
    # comes before the next delta on both sides however loaded the machine is.
    rcase(R + "prompt-while-streaming", [send({"id": "p1", "type": "prompt", "message": "slow"}), resp("p1"),
                                         {"wait": {"type": "message_update", "assistantMessageEvent": {"type": "text_delta"}}},
                                         ask("p2", {"type": "prompt", "message": "second"}), idle()],
          turns=[{"content": "slow reply " * 5, "delay_ms": 250, "chunk_chars": 4}, "two"]),
    rcase(R + "prompt-streaming-behavior-steer", [send({"id": "p1", "type": "prompt", "message": "slow"}), resp("p1"),
                                                  {"wait": {"type": "message_update", "assistantMessageEvent": {"type": "text_delta"}}},
                                                  ask("p2", {"type": "prompt", "message": "steered", "streamingBehavior": "steer"}),
                                                  idle(), {"sleep": 1.0}],
          turns=[{"content": "slow reply " * 5, "delay_ms": 250, "chunk_chars": 4}, "after steer"]),
    rcase(R + "steer-and-queue-update", [send({"id": "p1", "type": "prompt", "message": "slow"}), resp("p1"),
                                         {"wait": {"type": "message_update", "assistantMessageEvent": {"type": "text_delta"}}}, ask("st", {"type": "steer", "message": "change course"}),
                                         idle(), {"sleep": 1.0}],
          turns=[{"content": "slow reply " * 5, "delay_ms": 250, "chunk_chars": 4}, "steered"],
          note="issue 19: queue_update is sent when the queue empties"),
    rcase(R + "follow-up", [send({"id": "p1", "type": "prompt", "message": "slow"}), resp("p1"), {"wait": {"type": "message_update", "assistantMessageEvent": {"type": "text_delta"}}},
                            ask("f", {"type": "follow_up", "message": "and then"}), idle(), {"sleep": 1.0}],
          turns=[{"content": "slow reply " * 5, "delay_ms": 250, "chunk_chars": 4}, "followed"]),
    rcase(R + "abort-mid-stream", [send({"id": "p1", "type": "prompt", "message": "slow"}), resp("p1"),
                                   # The fourth delta, then at once the abort: the fifth is 100 ms away,
                                   # so both sides abort at the same point whatever the machine's load.
                                   *[{"wait": {"type": "message_update",
                                               "assistantMessageEvent": {"type": "text_delta"}}}] * 4,
                                   ask("a", {"type": "abort"}), idle()],
          turns=[{"content": "a long slow reply " * 10, "delay_ms": 100, "chunk_chars": 4}],
          note="issue 19: an abort emits text_end before the aborted message_end"),
    rcase(R + "bash", [ask("b", {"type": "bash", "command": "echo hello"}), ask("m", {"type": "get_messages"})]),
    rcase(R + "bash-exit-code", [ask("b", {"type": "bash", "command": "echo out; echo err >&2; exit 2"})],
          note="1.x streams bash_execution_update events before the response (shapes1x.py)"),
    rcase(R + "bash-order", [ask("b", {"type": "bash", "command": "echo 1; echo 2 >&2; echo 3; echo 4 >&2; echo 5"})],
          note="issue 19: output keeps the order the command wrote it"),
    rcase(R + "bash-ansi-stripped", [ask("b", {"type": "bash", "command": "printf '\\033[31mred\\033[0m\\n'"})],
          note="1.x streams bash_execution_update events before the response (shapes1x.py)"),
    rcase(R + "bash-then-prompt-context", [ask("b", {"type": "bash", "command": "echo unique-value"}),
                                           ask("p", {"type": "prompt", "message": "what was it"}), idle()],
          turns=["unique-value"]),
    # The abort goes out once the command runs: sent sooner, 0.87.1 can take it before its bash
    # has started (while the user_bash hook is awaited) and lose it.
    rcase(R + "abort-bash", [send({"id": "b", "type": "bash", "command": "touch started; sleep 5; echo never"}),
                             {"wait_file": "started"}, {"sleep": 0.1},
                             ask("ab", {"type": "abort_bash"}), resp("b")]),
    rcase(R + "set-model", [ask("m", {"type": "set_model", "provider": "mock", "modelId": "mock-two"}),
                            ask("s", {"type": "get_state"})]),
    rcase(R + "set-model-unknown", [ask("m", {"type": "set_model", "provider": "mock", "modelId": "nope"})]),
    rcase(R + "cycle-model-no-scope", [ask("c", {"type": "cycle_model"}), ask("s", {"type": "get_state"})]),
    rcase(R + "cycle-model-scoped", [ask("c", {"type": "cycle_model"}), ask("c2", {"type": "cycle_model"})],
          argv=["--models", "mock-model,mock-two"], follows="1.x"),
    rcase(R + "thinking-levels", [ask("t", {"type": "set_thinking_level", "level": "high"}),
                                  ask("c", {"type": "cycle_thinking_level"}), ask("s", {"type": "get_state"})]),
    rcase(R + "thinking-level-invalid", [ask("t", {"type": "set_thinking_level", "level": "ultra"}),
                                         ask("s", {"type": "get_state"})],
          note="issue 19: pi accepts an invalid thinking level and saves it"),
    rcase(R + "thinking-non-reasoning", [ask("t", {"type": "set_thinking_level", "level": "high"}),
                                         ask("c", {"type": "cycle_thinking_level"})], model="mock/mock-two"),
    rcase(R + "queue-modes", [ask("a", {"type": "set_steering_mode", "mode": "all"}),
                              ask("b", {"type": "set_follow_up_mode", "mode": "all"}),
                              ask("c", {"type": "set_steering_mode", "mode": "bogus"}), ask("s", {"type": "get_state"})]),
    rcase(R + "auto-toggles", [ask("a", {"type": "set_auto_compaction", "enabled": False}),
                               ask("b", {"type": "set_auto_retry", "enabled": False}),
                               ask("c", {"type": "abort_retry"}), ask("s", {"type": "get_state"})],
          compare=CMP + ("agentfiles",)),
    rcase(R + "compact-empty", [ask("c", {"type": "compact"})], follows="1.x",
          note="issue 20: 1.x refuses to summarize nothing ('Nothing to compact (session too small)')"),
    rcase(R + "compact-after-prompt", [ask("p", {"type": "prompt", "message": "hello"}), idle(),
                                       ask("c", {"type": "compact", "customInstructions": "focus on tests"}),
                                       ask("m", {"type": "get_messages"})],
          turns=["hi", {"match_body": "<conversation>", "content": "## Goal\nsummary text"}],
          follows="1.x", note="1.x: the prompt checkpoint before the first message is context, so the kept part "
          "starts after it; issue 20: the kept tail holds the whole exchange, so 1.x has nothing to summarize"),
    rcase(R + "session-stats", [ask("p", {"type": "prompt", "message": "hello"}), idle(),
                                ask("s", {"type": "get_session_stats"})], turns=["hi"],
          follows="1.x", note="1.x: totalMessages counts the prompt checkpoint entry"),
    rcase(R + "new-session", [ask("p", {"type": "prompt", "message": "hello"}), idle(),
                              ask("n", {"type": "new_session"}), ask("s", {"type": "get_state"})], turns=["hi"]),
    rcase(R + "switch-session", [ask("w", {"type": "switch_session", "sessionPath": SESSION_PATH}),
                                 ask("m", {"type": "get_messages"}), ask("s", {"type": "get_state"})],
          files={SESSION_FILE: BASIC}),
    rcase(R + "switch-session-missing", [ask("w", {"type": "switch_session", "sessionPath": "{root}/missing.jsonl"}),
                                         ask("s", {"type": "get_state"})]),
    rcase(R + "fork-messages-and-fork", [ask("w", {"type": "switch_session", "sessionPath": SESSION_PATH}),
                                         ask("f", {"type": "get_fork_messages"}),
                                         ask("k", {"type": "fork", "entryId": "a0000001"}),
                                         ask("m", {"type": "get_messages"})], files={SESSION_FILE: BASIC}),
    rcase(R + "fork-unknown-entry", [ask("k", {"type": "fork", "entryId": "zzzzzzzz"})]),
    rcase(R + "clone", [ask("w", {"type": "switch_session", "sessionPath": SESSION_PATH}), ask("c", {"type": "clone"}),
                        ask("s", {"type": "get_state"})], files={SESSION_FILE: BASIC}),
    rcase(R + "last-assistant-text", [ask("l0", {"type": "get_last_assistant_text"}),
                                      ask("p", {"type": "prompt", "message": "hello"}), idle(),
                                      ask("l1", {"type": "get_last_assistant_text"})], turns=["the last words"]),
    rcase(R + "session-name", [ask("p", {"type": "prompt", "message": "hello"}), idle(),
                               ask("n", {"type": "set_session_name", "name": "my-test-session"}),
                               ask("s", {"type": "get_state"})], turns=["hi"],
          note="issue 19: session_info_changed.name carries the name"),
    rcase(R + "session-name-empty", [ask("n", {"type": "set_session_name", "name": "  "})]),
    rcase(R + "export-html", [ask("p", {"type": "prompt", "message": "hello"}), idle(),
                              ask("e", {"type": "export_html", "outputPath": "{root}/export.html"})], turns=["hi"]),
    rcase(R + "get-commands", [ask("c", {"type": "get_commands"})],
          files={"agent/prompts/review.md": "---\ndescription: Review code\n---\nReview $1\n",
                 "agent/skills/valid-skill/SKILL.md": "---\nname: valid-skill\ndescription: A valid skill.\n---\nBody\n"}),
    rcase(R + "get-messages-loaded-agent-messages", [ask("w", {"type": "switch_session", "sessionPath": SESSION_PATH}),
                                                     ask("m", {"type": "get_messages"})],
          files={SESSION_FILE: __import__("cases.sessiondata", fromlist=["v3"]).v3(
              {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1},
              {"role": "bashExecution", "command": "ls", "output": "x\n", "exitCode": 0, "cancelled": False,
               "truncated": False, "timestamp": 2},
              {"type": "compaction", "summary": "sum", "firstKeptEntryId": "a0000002", "tokensBefore": 9},
              {"role": "custom", "customType": "n", "content": "c", "display": True, "timestamp": 3})},
          note="issue 19: get_messages returns AgentMessages (bashExecution, compactionSummary, custom)"),
    Case(R + "model-nonexistent-exits", rpc={"script": [ask("s", {"type": "get_state"})]}, model="mock/nonexistent",
         compare=("rpc", "exit", "stderr"),
         note="issue 19: --mode rpc --model nonexistent exits 1 with the error"),
    rcase(R + "sigterm-bash-child", [send({"id": "b", "type": "bash", "command": "sleep 30 & echo $! > child.tmp; mv child.tmp child.pid; wait"}),
                                     {"wait_file": "child.pid"}, {"sleep": 0.2}, {"signal": "TERM"}, {"sleep": 0.5}],
          compare=("rpc", "exit", "childalive"), post=None,
          note="issue 19: SIGTERM while bash runs kills the whole tree and exits 143"),
    rcase(R + "stdin-eof-exits", [{"close": True}], compare=("rpc", "exit")),
    rcase(R + "extension-ui-cancel-unknown", [send({"type": "extension_ui_response", "id": "nope", "cancelled": True}),
                                              {"sleep": 0.3}, ask("s", {"type": "get_state"})]),
]


def _child_alive(obs, sb):
    import os
    path = os.path.join(sb.cwd, "child.pid")
    try:
        pid = int(open(path).read().strip())
    except (OSError, ValueError):
        obs["childalive"] = "no pid file"
        return obs
    import time

    def alive():
        # a killed child that init has not reaped yet is a zombie: dead, not alive
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False

    # a signal takes a moment to land on a loaded machine: give it up to 2 s
    end = time.time() + 2
    while alive() and time.time() < end:
        time.sleep(0.05)
    obs["childalive"] = alive()
    if obs["childalive"]:
        os.kill(pid, 9)
    return obs


for _c in CASES:
    if _c.id == R + "sigterm-bash-child":
        _c.post = _child_alive
