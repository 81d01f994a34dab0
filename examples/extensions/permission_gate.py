#!/usr/bin/env python3
"""A pi extension that guards `bash`: a command containing `rm -rf` is blocked when nobody can
be asked (print and JSON modes), and needs a `confirm` from the user when there is a UI (the
TUI, or the RPC client answering `extension_ui_request`)."""
import json
import re
import sys

DANGEROUS = re.compile(r"\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r", re.I)
has_ui = False
pending = {}  # our call id -> the tool_call event id waiting for the answer
next_call = 1


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        has_ui = msg.get("hasUI", False)
        send({"type": "register", "protocol": 1, "name": "permission-gate",
              "events": ["tool_call"]})
    elif kind == "event" and msg["event"] == "tool_call":
        data = msg["data"]
        command = data["input"].get("command", "") if data["toolName"] == "bash" else ""
        if not DANGEROUS.search(command):
            send({"type": "reply", "id": msg["id"], "result": None})
        elif not has_ui:
            send({"type": "reply", "id": msg["id"], "result": {
                "block": True, "reason": "Dangerous command blocked (no UI for confirmation)"}})
        else:
            call_id = f"confirm-{next_call}"
            next_call += 1
            pending[call_id] = msg["id"]
            send({"type": "call", "id": call_id, "method": "ui.confirm",
                  "params": {"title": "Dangerous command", "message": f"Allow `{command}`?"}})
    elif kind == "reply" and msg.get("id") in pending:
        event_id = pending.pop(msg["id"])
        if msg.get("result") is True:
            send({"type": "reply", "id": event_id, "result": None})
        else:
            send({"type": "reply", "id": event_id,
                  "result": {"block": True, "reason": "Blocked by user"}})
