"""Writes a v3 session file with N messages (alternating user / assistant Markdown) for the
interactive and resume benchmarks:  python3 scripts/gen_session.py <out.jsonl> <cwd> <N>"""
import json, sys

out, cwd, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
reply = ("Here is **the plan**:\n\n1. Read `src/main.rs`\n2. Change the loop\n\n"
         "```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\nDone — see the diff above.")
def ts(i):
    return f"2025-01-01T00:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
with open(out, "w") as f:
    f.write(json.dumps({"type": "session", "version": 3, "id": "0f0e0d0c-0000-4000-8000-00000000b001",
                        "timestamp": ts(0), "cwd": cwd}, separators=(",", ":")) + "\n")
    parent = None
    for i in range(n):
        eid = f"{i + 1:08x}"
        if i % 2 == 0:
            msg = {"role": "user", "content": f"Question {i}: please change function number {i}.",
                   "timestamp": 1735689600000 + i}
        else:
            msg = {"role": "assistant", "content": [{"type": "text", "text": reply}],
                   "api": "openai-completions", "provider": "mock", "model": "mock-model",
                   "usage": {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
                             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                   "stopReason": "stop", "timestamp": 1735689600000 + i}
        f.write(json.dumps({"type": "message", "id": eid, "parentId": parent, "timestamp": ts(i),
                            "message": msg}, separators=(",", ":")) + "\n")
        parent = eid
