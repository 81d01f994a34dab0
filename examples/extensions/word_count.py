#!/usr/bin/env python3
"""A pi extension in Python: registers a `word_count` tool that counts the words of a text
(streaming one progress update), speaking pi's extension protocol v1 (docs/extensions.md)."""
import json
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        send({
            "type": "register",
            "protocol": 1,
            "name": "word-count",
            "tools": [{
                "name": "word_count",
                "label": "Word count",
                "description": "Count the words in a text.",
                "promptSnippet": "Count the words in a text",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "The text"}},
                    "required": ["text"],
                },
            }],
        })
    elif kind == "tool" and msg["tool"] == "word_count":
        words = len(msg["params"]["text"].split())
        send({"type": "tool_update", "id": msg["id"],
              "content": [{"type": "text", "text": "counting..."}]})
        send({"type": "reply", "id": msg["id"], "result": {
            "content": [{"type": "text", "text": f"{words} words"}],
            "details": {"words": words},
        }})
