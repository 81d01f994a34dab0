"""The JSON/RPC event and response shapes today's pi (1.x) changed on purpose since 0.73.1.

We write today's shapes (docs/compat.md, "Today's pi event shapes" and "Today's pi commands and
responses"), so almost every JSON or RPC case differs from 0.73.1 in them. Against 0.73.1 only,
run.py compares both observations once more with exactly these changes taken out of both sides:
if that makes them equal, the case is scored "follows-1.x" (never "agree"), and any other
difference still fails. The changes, and nothing else:

  * `message_update`: 1.x drops the cumulative `message` and `assistantMessageEvent.partial` and
    adds a top-level `usage`; `toolcall_start` gained `id` and `toolName`;
  * an assistant `message_start` says `stopReason: "pending"` (0.73.1: its first partial's);
  * `agent_end.willRetry`, `tool_execution_end.durationMs`, the `agent_settled` event and RPC
    `bash`'s `bash_execution_update` events;
  * `prompt` / `steer` / `follow_up` responses carry `data.disposition`;
  * `compact` results and `compaction_end.result` carry `estimatedTokensAfter` and `usage`, and
    a `compaction` entry its `usage` (in a raw session line the exact text `,"usage":{…}`);
  * assistant messages carry `rawStopReason` (v0.83.0) and their `usage` a `reasoning` count
    (v0.80.3) and, for Anthropic, a `cacheWrite1h` count, wherever a message appears: events,
    RPC answers, session entries and the raw session lines (there as the exact text
    `,"rawStopReason":"…"`, `"reasoning":N,` and `,"cacheWrite1h":N`);
  * OpenAI-compatible tool definitions no longer send `"strict": false` (1.x sends `strict` only
    where it asks for constrained sampling; 0.87.1 sends none to our mock);
  * the edit tool's result `details` carry a unified `patch` beside `diff` (v0.75.5);
  * the RpcClient driver's event count of `promptAndWait` / `collectEvents`, which counts the
    `agent_settled` events among others (the events themselves are compared one by one).
"""

import re

DISPOSITION_COMMANDS = {"prompt", "steer", "follow_up"}
NEW_EVENTS = {"agent_settled", "bash_execution_update"}
RAW_STOP_REASON = re.compile(r',"rawStopReason":"(?:[^"\\]|\\.)*"')
RAW_USAGE_REASONING = re.compile(r'("cacheWrite":[0-9.eE+-]+),"reasoning":[0-9.eE+-]+')
RAW_CACHE_WRITE_1H = re.compile(r',"cacheWrite1h":[0-9.eE+-]+')
RAW_COMPACTION_USAGE = re.compile(r',"usage":\{[^{}]*"cost":\{[^{}]*\}[^{}]*\}')


def project_line(s):
    """A raw session line with an assistant message's 1.x-only fields cut out of the text."""
    if s.startswith('{"type":"compaction"'):
        return RAW_COMPACTION_USAGE.sub("", s)
    if '"role":"assistant"' not in s:
        return s
    return RAW_CACHE_WRITE_1H.sub("", RAW_USAGE_REASONING.sub(r"\1", RAW_STOP_REASON.sub("", s)))


def project(v):
    """A copy of an observation with the 1.x-only shapes above removed."""
    if isinstance(v, list):
        return [project(x) for x in v if not (isinstance(x, dict) and x.get("type") in NEW_EVENTS)]
    if isinstance(v, str):
        return project_line(v)
    if not isinstance(v, dict):
        return v
    t = v.get("type")
    out = {k: project(x) for k, x in v.items()}
    if v.get("role") == "assistant":
        out.pop("rawStopReason", None)
        if isinstance(out.get("usage"), dict):
            usage = dict(out["usage"])
            usage.pop("reasoning", None)
            usage.pop("cacheWrite1h", None)
            out["usage"] = usage
    if isinstance(out.get("details"), dict) and "diff" in out["details"] and "patch" in out["details"]:
        details = dict(out["details"])
        details.pop("patch")
        out["details"] = details
    if t == "function" and isinstance(out.get("function"), dict) and out["function"].get("strict") is False:
        fn = dict(out["function"])
        fn.pop("strict")
        out["function"] = fn
    if t == "message_update":
        out.pop("message", None)
        out.pop("usage", None)
        ev = out.get("assistantMessageEvent")
        if isinstance(ev, dict):
            ev = dict(ev)
            ev.pop("partial", None)
            if ev.get("type") == "toolcall_start":
                ev.pop("id", None)
                ev.pop("toolName", None)
            out["assistantMessageEvent"] = ev
    elif t == "message_start":
        msg = out.get("message")
        if isinstance(msg, dict) and msg.get("role") == "assistant":
            msg = dict(msg)
            msg.pop("stopReason", None)
            out["message"] = msg
    elif t == "agent_end":
        out.pop("willRetry", None)
    elif t == "tool_execution_end":
        out.pop("durationMs", None)
    elif t == "response" and isinstance(out.get("data"), dict):
        data = dict(out["data"])
        if out.get("command") in DISPOSITION_COMMANDS:
            data.pop("disposition", None)
        if out.get("command") == "compact":
            data.pop("estimatedTokensAfter", None)
            data.pop("usage", None)
        if data:
            out["data"] = data
        else:
            out.pop("data")
    elif t == "compaction_end" and isinstance(out.get("result"), dict):
        res = dict(out["result"])
        res.pop("estimatedTokensAfter", None)
        res.pop("usage", None)
        out["result"] = res
    elif t == "compaction" and "summary" in out:
        out.pop("usage", None)
    if v.get("call") in ("promptAndWait", "collectEvents", "compact") and isinstance(out.get("result"), dict):
        res = dict(out["result"])
        res.pop("eventCount", None)
        res.pop("estimatedTokensAfter", None)
        res.pop("usage", None)
        out["result"] = res
    return out


# Against 0.87.1: the fields 1.5.2 added after 0.87.1 that we write (docs/compat.md marks them
# "adopted (1.5.2; 0.87.1 lacks it)"). A case equal to 0.87.1 once exactly these are taken out
# of both sides is scored "follows 1.5.2":
#   * `agent_settled.aborted`;
#   * `data.disposition` of `prompt` / `steer` / `follow_up` responses;
#   * `tool_execution_end.durationMs`.


def project_152(v):
    """A copy of an observation with the 1.5.2-only fields above removed."""
    if isinstance(v, list):
        return [project_152(x) for x in v]
    if not isinstance(v, dict):
        return v
    t = v.get("type")
    out = {k: project_152(x) for k, x in v.items()}
    if t == "agent_settled":
        out.pop("aborted", None)
    elif t == "tool_execution_end":
        out.pop("durationMs", None)
    elif t == "response" and out.get("command") in DISPOSITION_COMMANDS and isinstance(out.get("data"), dict):
        data = dict(out["data"])
        data.pop("disposition", None)
        if data:
            out["data"] = data
        else:
            out.pop("data")
    return out
