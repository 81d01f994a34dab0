"""The JSON/RPC event and response shapes today's pi (1.x) changed on purpose since 0.73.1.

We write today's shapes (docs/compat.md, "Today's pi event shapes" and "Today's pi commands and
responses"), so almost every JSON or RPC case differs from 0.73.1 in them. Against 0.73.1 only,
run.py compares both observations once more with exactly these changes taken out of both sides:
if that makes them equal, the case is scored "follows-1.x" (never "agree"), and any other
difference still fails. The changes, and nothing else:

  * `message_update`: 1.x drops the cumulative `message` and `assistantMessageEvent.partial` and
    adds a top-level `usage`; `toolcall_start` gained `id` and `toolName`;
  * an assistant `message_start` says `stopReason: "pending"` (0.73.1: its first partial's);
  * `agent_end.willRetry`, `tool_execution_end.durationMs` (and a tool-result message's
    `durationMs`, 1.6.0), `read` and `bash` results' `structuredContent` (1.6.0), an error result's empty
    `details` (1.6.0 writes none for a failed `bash` command), the `agent_settled` event and RPC
    `bash`'s `bash_execution_update` events;
  * `prompt` / `steer` / `follow_up` responses carry `data.disposition`;
  * `compact` results and `compaction_end.result` carry `estimatedTokensAfter` and `usage`, and
    a `compaction` entry its `usage` (in a raw session line the exact text `,"usage":{…}`);
  * assistant messages carry `rawStopReason` (v0.83.0) and their `usage` a `reasoning` count
    (v0.80.3) and, for Anthropic, a `cacheWrite1h` count, wherever a message appears: events,
    RPC answers, session entries and the raw session lines (there as the exact text
    `,"rawStopReason":"…"`, `"reasoning":N,` and `,"cacheWrite1h":N`); likewise 1.6.0's
    `durationMs` and `thinkingLevel` on an assistant message and `cost.totalFromProvider`
    in its usage;
  * OpenAI-compatible tool definitions no longer send `"strict": false` (1.x sends `strict` only
    where it asks for constrained sampling; 0.87.1 sends none to our mock);
  * a Chat Completions request's system prompt goes out with role `system` where 0.73.1 sent
    `developer` to a reasoning model on a host it did not know (1.6.0; docs/compat.md,
    "OpenAI-compatible hosts get the `system` role");
  * the edit tool's result `details` carry a unified `patch` beside `diff` (v0.75.5);
  * the RpcClient driver's event count of `promptAndWait` / `collectEvents`, which counts the
    `agent_settled` events among others (the events themselves are compared one by one);
  * persisted system messages (v0.86.0): `role: "system"` messages go, wherever they appear
    (session entries, raw session lines, `message_start`/`message_end`, `agent_end` and
    `get_messages` lists, a compaction's `systemMessage`); an entry whose parent was one points
    at that one's parent, and the `<idN>` names are given again in order;
  * the sectioned system prompt (v0.86.0): the date line is gone and the appended text,
    context files, skills and working directory sit in `<name>` tags; both sides' prompts are
    compared with those tags, the old headings and the date and directory labels taken out,
    and whitespace runs made one space.
"""

import re

DISPOSITION_COMMANDS = {"prompt", "steer", "follow_up"}
NEW_EVENTS = {"agent_settled", "bash_execution_update"}
RAW_STOP_REASON = re.compile(r',"rawStopReason":"(?:[^"\\]|\\.)*"')
RAW_USAGE_REASONING = re.compile(r'("cacheWrite":[0-9.eE+-]+),"reasoning":[0-9.eE+-]+')
RAW_CACHE_WRITE_1H = re.compile(r',"cacheWrite1h":[0-9.eE+-]+')
RAW_REPLY_FIELDS = re.compile(r',"(?:durationMs":(?:"<DUR>"|[0-9.eE+-]+)|thinkingLevel":"[a-z]*")')
RAW_TOTAL_FROM_PROVIDER = re.compile(r',"totalFromProvider":(?:true|false)')
RAW_COMPACTION_USAGE = re.compile(r',"usage":\{[^{}]*"cost":\{[^{}]*\}[^{}]*\}')


def project_line(s):
    """A raw session line with an assistant message's 1.x-only fields cut out of the text."""
    if s.startswith('{"type":"compaction"'):
        return RAW_COMPACTION_USAGE.sub("", s)
    if '"role":"toolResult"' in s:
        return RAW_REPLY_FIELDS.sub("", s)
    if '"role":"assistant"' not in s:
        return s
    s = RAW_REPLY_FIELDS.sub("", RAW_TOTAL_FROM_PROVIDER.sub("", s))
    return RAW_CACHE_WRITE_1H.sub("", RAW_USAGE_REASONING.sub(r"\1", RAW_STOP_REASON.sub("", s)))


ID_TOKEN = re.compile(r"<id(\d+)>")
RAW_SYSTEM_LINE = "<system message: compared under sessions>"
PROMPT_MARKERS = re.compile(
    r"</?(?:addendum|project_context|skills|cwd)>|</project_instructions>|# Project Context"
    r"|Current date: <DATE>|Current working directory:|(?m:^## )")
INSTRUCTIONS_TAG = re.compile(r'<project_instructions path="([^"]*)">')


def _system_message(m):
    """A persisted system message (a request's own `system` role message has no timestamp)."""
    return isinstance(m, dict) and m.get("role") == "system" and "timestamp" in m


def _is_system(x):
    return isinstance(x, dict) and (_system_message(x)
                                    or (x.get("type") in ("message_start", "message_end", "message")
                                        and _system_message(x.get("message"))))


def _prompt(s):
    """A system prompt with the 1.x section tags and the 0.73.1 headings taken out."""
    if "<cwd>" not in s and "Current working directory:" not in s:
        return s
    s = INSTRUCTIONS_TAG.sub(r"\1", s)
    return " ".join(PROMPT_MARKERS.sub(" ", s).split())


def _aliases(v, out):
    """Dropped system entries' ids, each to its parent's."""
    if isinstance(v, list):
        for x in v:
            _aliases(x, out)
    elif isinstance(v, dict):
        if v.get("type") == "message" and _is_system(v) and isinstance(v.get("id"), str):
            out[v["id"]] = v.get("parentId")
        for x in v.values():
            _aliases(x, out)
    elif isinstance(v, str) and v.startswith("{") and '"role":"system"' in v:
        m = re.search(r'"id":"(<id\d+>)","parentId":(?:"(<id\d+>)"|null)', v)
        if m:
            out[m.group(1)] = m.group(2)


def _without_system(v, aliases):
    if isinstance(v, list):
        return [_without_system(x, aliases) for x in v if not _is_system(x) and x != RAW_SYSTEM_LINE]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "systemMessage":
                continue
            if k == "parentId" and x in aliases:
                while x in aliases:
                    x = aliases[x]
            out[k] = _without_system(x, aliases)
        return out
    if isinstance(v, str):
        for a, parent in aliases.items():
            if a in v:
                while parent in aliases:
                    parent = aliases[parent]
                v = v.replace('"parentId":"%s"' % a, '"parentId":%s' % ('"%s"' % parent if parent else "null"))
        return _prompt(v)
    return v


def _renumber(v, names):
    if isinstance(v, list):
        return [_renumber(x, names) for x in v]
    if isinstance(v, dict):
        return {k: _renumber(v[k], names) for k in sorted(v)}
    if isinstance(v, str):
        return ID_TOKEN.sub(lambda m: names.setdefault(m.group(0), "<id%d>" % (len(names) + 1)), v)
    return v


def project(v):
    """A copy of an observation with the 1.x-only shapes above removed."""
    aliases = {}
    _aliases(v, aliases)
    return _renumber(_shapes(_without_system(v, aliases)), {})


def _shapes(v):
    if isinstance(v, list):
        return [_shapes(x) for x in v if not (isinstance(x, dict) and x.get("type") in NEW_EVENTS)]
    if isinstance(v, str):
        return project_line(v)
    if not isinstance(v, dict):
        return v
    t = v.get("type")
    out = {k: _shapes(x) for k, x in v.items()}
    if v.get("role") == "toolResult":
        out.pop("durationMs", None)
        if out.get("isError") is True and out.get("details") == {}:
            out.pop("details")
    if "structuredContent" in out and isinstance(out.get("content"), list):
        out.pop("structuredContent")
    if v.get("role") == "developer" and "content" in v:
        out["role"] = "system"
    if v.get("role") == "assistant":
        out.pop("rawStopReason", None)
        out.pop("durationMs", None)
        out.pop("thinkingLevel", None)
        if isinstance(out.get("usage"), dict):
            usage = dict(out["usage"])
            usage.pop("reasoning", None)
            usage.pop("cacheWrite1h", None)
            if isinstance(usage.get("cost"), dict):
                usage["cost"] = {k: x for k, x in usage["cost"].items() if k != "totalFromProvider"}
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
