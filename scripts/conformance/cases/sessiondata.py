"""Hand-written session files in the shapes the pi versions wrote (v1 without ids, v2, v3)."""
import json

SID = "11111111-2222-4333-8444-555555555555"
SESSION_FILE = "agent/sessions/{slug}/2025-01-01T00-00-00-000Z_%s.jsonl" % SID
SESSION_PATH = "{agent}/sessions/{slug}/2025-01-01T00-00-00-000Z_%s.jsonl" % SID


def usage(total=15, with_total=True, with_cost=True, **kw):
    u = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0}
    u.update(kw)
    if with_total:
        u["totalTokens"] = total
    if with_cost:
        u["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return u


def user(text, ts=1735689601000):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(text=None, calls=(), ts=1735689602000, u=None, stop=None, model="mock-model", **extra):
    content = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for c in calls:
        content.append({"type": "toolCall", "id": c[0], "name": c[1], "arguments": c[2]})
    m = {"role": "assistant", "content": content, "api": "openai-completions", "provider": "mock", "model": model,
         "usage": u or usage(), "stopReason": stop or ("toolUse" if calls else "stop"), "timestamp": ts}
    m.update(extra)
    return m


def tool_result(call_id, name, text, is_error=False, ts=1735689603000):
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": is_error, "timestamp": ts}


def v3(*entries, cwd="{cwd}", header_extra=None):
    """entries: messages (dicts with role) or full entries (dicts with type). Ids a0000001...
    chained in order unless an entry gives its own id/parentId."""
    head = {"type": "session", "version": 3, "id": SID, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": cwd}
    head.update(header_extra or {})
    out = [json.dumps(head, separators=(",", ":"))]
    prev = None
    for i, e in enumerate(entries):
        if "role" in e:
            e = {"type": "message", "message": e}
        e = dict(e)
        eid = e.pop("id", "a%07d" % (i + 1))
        parent = e.pop("parentId", prev)
        full = {"type": e.pop("type"), "id": eid, "parentId": parent,
                "timestamp": "2025-01-01T00:00:%02d.000Z" % min(i + 1, 59)}
        full.update(e)
        out.append(json.dumps(full, separators=(",", ":"), ensure_ascii=False))
        prev = eid
    return "\n".join(out) + "\n"


def v1(*entries, cwd="{cwd}"):
    """The first format: no version, no ids; entries in file order."""
    head = {"type": "session", "id": SID, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": cwd,
            "provider": "mock", "modelId": "mock-model", "thinkingLevel": "off"}
    out = [json.dumps(head, separators=(",", ":"))]
    for i, e in enumerate(entries):
        if "role" in e:
            e = {"type": "message", "message": e}
        e = dict(e, timestamp="2025-01-01T00:00:%02d.000Z" % min(i + 1, 59))
        out.append(json.dumps(e, separators=(",", ":"), ensure_ascii=False))
    return "\n".join(out) + "\n"


def v2(*entries, cwd="{cwd}"):
    text = v3(*entries, cwd=cwd)
    return text.replace('"version":3', '"version":2', 1)


BASIC = v3(user("earlier question"), assistant("earlier answer"))
