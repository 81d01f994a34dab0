"""Sessions: loading every shape any pi wrote, resuming, migrating, the context sent from a
session tree, compaction, and what is appended (pi-mono session-manager/*.test.ts, fixtures
large-session.jsonl and before-compaction.jsonl, compaction.test.ts, agent-session tests)."""
import json

from cases.common import call
from cases.sessiondata import (BASIC, SESSION_FILE, SESSION_PATH, assistant, tool_result, usage, user, v1, v2, v3)
from harness import Case, Fixture

S = "sessions."
FULL = ("exit", "stdout", "stderr", "requests", "sessions")


def fixture_here(name):
    """A pi-mono fixture session whose stored cwd is pointed at the scratch cwd."""
    return Fixture(name, lambda data, sb: data.replace(b'"cwd":"/Users/badlogic/workspaces/pi-mono"',
                                                       ('"cwd":"%s"' % sb.cwd).encode()))


def resume(id, content, prompt="continue", turns=("ok",), compare=FULL, model="mock/mock-model", **kw):
    return Case(id, argv=["--session", SESSION_PATH, "-p", prompt], files={SESSION_FILE: content, **kw.pop("files", {})},
                turns=list(turns), compare=compare, model=model, **kw)


def concurrent_summaries_in_order(obs, sb):
    """The history and turn-prefix summary requests of one compaction go out at the same time, so
    the mock records them in either order: list the leading summary requests history first."""
    import json
    reqs = obs.get("requests") or []
    n = 0
    while n < len(reqs) and "<conversation>" in json.dumps(reqs[n]):
        n += 1
    obs["requests"] = sorted(reqs[:n], key=lambda b: "## Original Request" in json.dumps(b)) + reqs[n:]
    return obs


def _raw_line(line):
    """A 1.x system message line holds each implementation's own prompt prose: it is compared
    parsed (normalised) under `sessions`, and marked here."""
    if '"role":"system"' in line:
        try:
            if json.loads(line).get("message", {}).get("role") == "system":
                return "<system message: compared under sessions>"
        except ValueError:
            pass
    return line


def raw_sessions(obs, sb):
    """Also compare the session files byte for byte (line by line), not just as parsed JSON."""
    import os
    base = os.path.join(sb.agent, "sessions")
    raw = {}
    for d, _, files in os.walk(base):
        for f in sorted(files):
            with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                raw[os.path.relpath(os.path.join(d, f), base)] = [_raw_line(x) for x in fh.read().split("\n")]
    obs["rawsessions"] = raw
    return obs


COMPACT_SETTINGS = {"compaction": {"enabled": True, "reserveTokens": 500, "keepRecentTokens": 200}}
SUMMARY_TURN = {"match_body": "<conversation>", "content": "## Goal\nKeep going.\n\n## Progress\nSome."}
BIG_USAGE = usage(total=3800, input=3700, output=100)

LABELLED_TREE = v3(
    user("root question", ts=1), assistant("root answer", ts=2),
    {"type": "message", "id": "b0000001", "parentId": "a0000002", "message": user("branch one", ts=3)},
    {"type": "message", "id": "b0000002", "parentId": "b0000001", "message": assistant("one answer", ts=4)},
    {"type": "message", "id": "c0000001", "parentId": "a0000002", "message": user("branch two", ts=5)},
    {"type": "message", "id": "c0000002", "parentId": "c0000001", "message": assistant("two answer", ts=6)},
    {"type": "label", "id": "d0000001", "parentId": "c0000002", "targetId": "b0000001", "label": "first branch"},
)

CASES = [
    # ---- pi-mono's own fixtures ------------------------------------------------------------
    Case(S + "large-session-resume", argv=["--session", "{root}/large.jsonl", "-p", "one more thing"],
         files={"root/large.jsonl": fixture_here("large-session.jsonl.gz")}, model="mock/mock-big",
         turns=["ok"], compare=FULL + ("rootfiles",),
         note="issue 19: pi-mono's large-session.jsonl (v1, usage without totalTokens) must keep all 914 messages"),
    Case(S + "large-session-compacts-first", argv=["--session", "{root}/large.jsonl", "-p", "one more thing"],
         files={"root/large.jsonl": fixture_here("large-session.jsonl.gz")},
         # the history and turn-prefix summaries are requested concurrently: each gets its reply by
         # what it asks, not by which arrives first
         turns=[{"match_body": "## Original Request", "content": "ok"}, dict(SUMMARY_TURN)],
         compare=FULL + ("rootfiles",), post=concurrent_summaries_in_order,
         note="issue 19: a resumed session already over the threshold is compacted before the prompt is sent"),
    Case(S + "large-session-stats", client={"args": ["--session", "{root}/large.jsonl"], "steps": [
        {"call": "getSessionStats"}, {"call": "getState"}, {"call": "getForkMessages"},
        {"call": "getLastAssistantText"}]},
         files={"root/large.jsonl": fixture_here("large-session.jsonl.gz")}, model="mock/mock-big",
         compare=("rpc", "requests")),
    Case(S + "large-session-messages", client={"args": ["--session", "{root}/large.jsonl"], "steps": [
        {"call": "getMessages"}]},
         files={"root/large.jsonl": fixture_here("large-session.jsonl.gz")}, model="mock/mock-big",
         compare=("rpc",)),
    Case(S + "before-compaction-resume", argv=["--session", "{root}/bc.jsonl", "-p", "next"],
         files={"root/bc.jsonl": fixture_here("before-compaction-trimmed.jsonl.gz")}, model="mock/mock-big",
         turns=["ok"], compare=FULL + ("rootfiles",)),
    Case(S + "before-compaction-stats", client={"args": ["--session", "{root}/bc.jsonl"], "steps": [
        {"call": "getSessionStats"}, {"call": "getMessages"}]},
         files={"root/bc.jsonl": fixture_here("before-compaction-trimmed.jsonl.gz")}, model="mock/mock-big",
         compare=("rpc",), follows="1.x",
         note="1.x counts the whole session (every branch) in get_session_stats; 0.73.1 the current branch"),
    # ---- versions and migration ------------------------------------------------------------
    resume(S + "v1-resume", v1(user("old question"), assistant("old answer"))),
    resume(S + "v1-compaction-index", v1(
        user("q1"), assistant("a1"), user("q2"), assistant("a2"),
        {"type": "compaction", "summary": "Earlier work summarised.", "firstKeptEntryIndex": 3, "tokensBefore": 1234},
        user("q3"), assistant("a3"))),
    resume(S + "v2-hook-message", v2(user("q"), {"role": "hookMessage", "customType": "note", "content": "hook text",
                                                 "display": True, "timestamp": 5}, assistant("a"))),
    resume(S + "v3-custom-message", v3(user("q"), assistant("a"),
                                       {"role": "custom", "customType": "note", "content": "custom text",
                                        "display": True, "timestamp": 5})),
    resume(S + "usage-without-totaltokens", v3(user("q"), assistant("a", u=usage(with_total=False)))),
    resume(S + "usage-without-cost", v3(user("q"), assistant("a", u=usage(with_cost=False)))),
    resume(S + "usage-missing", v3(user("q"), {"role": "assistant", "content": [{"type": "text", "text": "a"}],
                                               "api": "openai-completions", "provider": "mock", "model": "mock-model",
                                               "stopReason": "stop", "timestamp": 2})),
    resume(S + "float-roundtrip", v3(user("q"), assistant("a", u=dict(usage(), cost={
        "input": 0.010668750000000001, "output": 0.0016200000000000001, "cacheRead": 0.052915199999999996,
        "cacheWrite": 0.00075375, "total": 0.06542145000000001}))), compare=FULL + ("rawsessions",), post=raw_sessions,
        note="issue 19: stored numbers must survive a round trip byte for byte"),
    resume(S + "unknown-entry-type", v3(user("q"), assistant("a"),
                                        {"type": "future_entry", "payload": {"x": [1, 2.5, None]}})),
    resume(S + "unknown-fields", v3(dict(user("q"), futureField=True), assistant("a", extraMeta={"k": "v"}))),
    resume(S + "corrupt-middle-line", BASIC.replace('\n{"type":"message","id":"a0000002"',
                                                    '\n{this is not json\n{"type":"message","id":"a0000002"'),
           compare=FULL + ("rawsessions",), post=raw_sessions),
    resume(S + "truncated-last-line", BASIC + '{"type":"message","id":"a0000003","parentId":"a0000002","mess',
           compare=FULL + ("rawsessions",), post=raw_sessions),
    resume(S + "empty-file", ""),
    resume(S + "header-only", v3()),
    resume(S + "no-header", "\n".join(BASIC.split("\n")[1:]), follows="1.x",
           note="1.x refuses an invalid non-empty session file instead of rewriting it"),
    resume(S + "crlf-lines", BASIC.replace("\n", "\r\n")),
    resume(S + "bom", "\ufeff" + BASIC, follows="1.x",
           note="1.x refuses an invalid non-empty session file instead of rewriting it"),
    resume(S + "missing-cwd", v3(user("q"), assistant("a"), cwd="/nonexistent/stored/cwd"),
           note="issue 19: pi 0.73.1 stops with 'Stored session working directory does not exist'"),
    resume(S + "other-cwd", v3(user("q"), assistant("a"), cwd="{root}")),
    # ---- what the context holds -------------------------------------------------------------
    resume(S + "tool-history", v3(user("q"), assistant(None, calls=[("call_x", "read", {"path": "a.txt"})]),
                                  tool_result("call_x", "read", "file text"), assistant("done reading"))),
    resume(S + "tool-error-history", v3(user("q"), assistant(None, calls=[("call_x", "bash", {"command": "false"})]),
                                        tool_result("call_x", "bash", "Command exited with code 1", is_error=True),
                                        assistant("it failed"))),
    resume(S + "thinking-history", v3(user("q"), assistant("a", thinking=None) if False else
                                      {"role": "assistant", "content": [{"type": "thinking", "thinking": "hidden thoughts",
                                                                         "thinkingSignature": "sig"},
                                                                        {"type": "text", "text": "visible"}],
                                       "api": "openai-completions", "provider": "mock", "model": "mock-model",
                                       "usage": usage(), "stopReason": "stop", "timestamp": 2}),
           follows="1.x", note="issue 20: 1.x replays reasoning only under a Chat Completions reasoning field"),
    resume(S + "thinking-fixture", v3(user("q"),
                                      __import__("json").load(open(__import__("os").path.join(
                                          __import__("harness").FIXTURES, "assistant-message-with-thinking-code.json")))),
           follows="1.x", note="issue 31: 1.6.0 drops thinking from another model instead of replaying it as text"),
    resume(S + "bash-execution", v3(user("q"), assistant("a"),
                                    {"role": "bashExecution", "command": "ls", "output": "a.txt\n", "exitCode": 0,
                                     "cancelled": False, "truncated": False, "timestamp": 3})),
    resume(S + "bash-execution-excluded", v3(user("q"), assistant("a"),
                                             {"role": "bashExecution", "command": "secret", "output": "hidden\n",
                                              "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 3,
                                              "excludeFromContext": True})),
    resume(S + "custom-message-hidden", v3(user("q"), assistant("a"),
                                           {"role": "custom", "customType": "x", "content": [{"type": "text", "text": "not shown"}],
                                            "display": False, "timestamp": 4})),
    resume(S + "branch-summary", v3(user("q"), assistant("a"),
                                    {"type": "branch_summary", "fromId": "a0000001", "summary": "Tried another way."},
                                    user("after branch", ts=5), assistant("ok", ts=6))),
    resume(S + "compaction-v3", v3(user("q1"), assistant("a1"), user("q2"), assistant("a2"),
                                   {"type": "compaction", "summary": "Summary of q1.", "firstKeptEntryId": "a0000003",
                                    "tokensBefore": 500}, user("q3"), assistant("a3"))),
    resume(S + "two-compactions", v3(user("q1"), assistant("a1"),
                                     {"type": "compaction", "summary": "First.", "firstKeptEntryId": "a0000002", "tokensBefore": 10},
                                     user("q2"), assistant("a2"),
                                     {"type": "compaction", "summary": "Second.", "firstKeptEntryId": "a0000005", "tokensBefore": 20},
                                     user("q3"), assistant("a3"))),
    resume(S + "branched-tree-leaf", LABELLED_TREE),
    resume(S + "labels-and-session-info", v3(user("q"), assistant("a"),
                                             {"type": "label", "targetId": "a0000001", "label": "start"},
                                             {"type": "session_info", "name": "My session"})),
    resume(S + "custom-entry", v3(user("q"), assistant("a"), {"type": "custom", "customType": "state", "data": {"n": 1}})),
    resume(S + "model-restored", v3(user("q"), assistant("a", model="mock-two"),
                                    {"type": "model_change", "provider": "mock", "modelId": "mock-two"},
                                    {"type": "thinking_level_change", "thinkingLevel": "low"}), model=None),
    resume(S + "model-missing-from-registry", v3(user("q"), assistant("a"),
                                                 {"type": "model_change", "provider": "gone", "modelId": "vanished"}),
           model=None, follows="1.x", note="issue 31: 1.6.0 warns that the recorded model is gone and names the one used"),
    resume(S + "aborted-and-error-turns", v3(user("q1"), assistant("", stop="aborted", errorMessage="Request was aborted"),
                                             user("q2"), assistant("", stop="error", errorMessage="500 boom"),
                                             user("q3"), assistant("fine"))),
    resume(S + "image-in-user-message", v3({"role": "user", "content": [
        {"type": "text", "text": "look"}, {"type": "image", "mimeType": "image/png",
                                           "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAwMCAO+X2Z0AAAAASUVORK5CYII="}],
        "timestamp": 1}, assistant("a dot")), model="mock/mock-vision"),
    resume(S + "orphan-tool-result", v3(user("q"), tool_result("call_gone", "read", "orphan"), assistant("a"))),
    resume(S + "tool-call-without-result", v3(user("q"), assistant(None, calls=[("call_x", "read", {"path": "a"})]),
                                              user("interrupted?"), assistant("a"))),
    # ---- compaction --------------------------------------------------------------------------
    resume(S + "auto-compaction-before-prompt", v3(user("q1"), assistant("a1"), user("q2"), assistant("a2", u=BIG_USAGE)),
           turns=[dict(SUMMARY_TURN), "after compaction"], model="mock/mock-small", settings=COMPACT_SETTINGS),
    Case(S + "auto-compaction-after-reply", argv=["-p", "hi"], model="mock/mock-small", settings=COMPACT_SETTINGS,
         turns=[{"content": "big reply", "usage": {"input": 3700, "output": 100}}, dict(SUMMARY_TURN)], compare=FULL),
    Case(S + "compaction-disabled", argv=["-p", "hi"], model="mock/mock-small",
         settings={"compaction": {"enabled": False}},
         turns=[{"content": "big reply", "usage": {"input": 3900, "output": 100}}], compare=FULL),
    Case(S + "overflow-error-compacts", argv=["-p", "hi"], model="mock/mock-small", settings=COMPACT_SETTINGS,
         files={SESSION_FILE: v3(user("q1"), assistant("a1"), user("q2"), assistant("a2"))},
         runs=[{"argv": ["--session", SESSION_PATH, "-p", "hi"]}],
         turns=[{"http_status": 400, "error_message": "This model's maximum context length is 4000 tokens. However, your messages resulted in 5000 tokens."},
                dict(SUMMARY_TURN), "retried after compaction"], compare=FULL),
    # ---- new sessions and where they go ------------------------------------------------------
    Case(S + "new-session-file", argv=["-p", "hi"], turns=["ok"], compare=FULL),
    Case(S + "tool-turn-stored", argv=["-p", "go"], files={"cwd/a.txt": "A\n"},
         turns=[{"content": [call("read", {"path": "a.txt"}), call("bash", {"command": "echo b"})]}, "done"], compare=FULL),
    Case(S + "thinking-stored", argv=["-p", "go"],
         turns=[{"content": [{"type": "thinking", "text": "reasoning here"}, {"type": "text", "text": "answer"}]}], compare=FULL),
    Case(S + "settings-session-dir", argv=["-p", "hi"], turns=["ok"], settings={"sessionDir": "{root}/from-settings"},
         compare=FULL + ("rootfiles",)),
    Case(S + "continue-picks-latest", follows="1.x", note="1.x: -c picks the newest session by its header, not by mtime", argv=["-c", "-p", "which one"], turns=["ok"], compare=FULL,
         files={"agent/sessions/{slug}/2025-01-01T00-00-00-000Z_11111111-2222-4333-8444-555555555555.jsonl":
                v3(user("older session"), assistant("old")),
                "agent/sessions/{slug}/2025-02-01T00-00-00-000Z_22222222-2222-4333-8444-555555555555.jsonl":
                v3(user("newer session"), assistant("new")).replace("11111111-2222-4333-8444-555555555555",
                                                                    "22222222-2222-4333-8444-555555555555")
                .replace('"timestamp":"2025-01-01T', '"timestamp":"2025-02-01T')}),
    Case(S + "continue-other-cwd-ignored", argv=["-c", "-p", "hello"], turns=["ok"], compare=FULL,
         files={"agent/sessions/--somewhere-else--/2025-01-01T00-00-00-000Z_11111111-2222-4333-8444-555555555555.jsonl":
                v3(user("elsewhere"), assistant("x"), cwd="/somewhere/else")}),
    Case(S + "fork-v1-session", argv=["--fork", SESSION_PATH, "-p", "forked"], turns=["ok"], compare=FULL,
         files={SESSION_FILE: v1(user("old"), assistant("older"))}),
    Case(S + "resume-twice-appends", runs=[{"argv": ["--session", SESSION_PATH, "-p", "one"]},
                                           {"argv": ["--session", SESSION_PATH, "-p", "two"]}],
         files={SESSION_FILE: BASIC}, turns=["r1", "r2"], compare=FULL + ("rawsessions",), post=raw_sessions),
]
