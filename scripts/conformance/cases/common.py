"""Helpers shared by the case lists."""
from harness import Case

RETRY_FAST = {"retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 10}}


def call(name, args, id=None):
    """One scripted tool call item."""
    item = {"type": "tool_call", "name": name, "arguments": args}
    if id:
        item["id"] = id
    return item


def tool_turns(*calls, final="done"):
    """A turn calling these tools (one batch), then a final text reply."""
    return [{"content": list(calls)}, final]


def tool_case(id, calls, files=None, tools=None, compare=("exit", "stdout", "requests", "sessions", "files"),
              argv_extra=(), **kw):
    """The mock model calls `calls` in one turn, pi runs them, then the model says "done".
    What is compared: the tool results as sent back to the model (requests), the session, the
    working directory afterwards."""
    argv = ["-p", "go"] + (["--tools", tools] if tools else []) + list(argv_extra)
    if not isinstance(calls, (list, tuple)):
        calls = [calls]
    return Case(id, argv=argv, turns=tool_turns(*calls), files=files, compare=compare, **kw)


def lines(n, fmt="Line {}"):
    return "\n".join(fmt.format(i + 1) for i in range(n))
