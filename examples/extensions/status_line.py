#!/usr/bin/env python3
"""A pi extension that keeps a status-line entry current: `Ready` at session start, then
`Turn N...` / `Turn N complete` as the agent works (ui.setStatus)."""
import json
import sys

turns = 0


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def status(text):
    send({"type": "call", "method": "ui.setStatus", "params": {"key": "turns", "text": text}})


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "register", "protocol": 1, "name": "status-line",
              "events": ["session_start", "turn_start", "turn_end"]})
    elif kind == "event":
        event = msg["event"]
        if event == "session_start":
            status("Ready")
        elif event == "turn_start":
            turns += 1
            status(f"Turn {turns}...")
        elif event == "turn_end":
            status(f"Turn {turns} complete")
