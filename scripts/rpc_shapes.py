"""Drive a pi binary over RPC with a fixed command script and print a summary of what came
back: per command its success flag, error text and the *shape* of its data, plus the event
types seen. Run it against the TypeScript pi and this one with the same mock server and diff
the outputs to check RPC compatibility:

    python3 scripts/rpc_shapes.py "<pi binary>" <agent dir with models.json for mock/mock-model> <cwd>

The agent dir's models.json must define provider "mock" with models "mock-model" (reasoning)
and "mock-two", pointing at a mock LLM server (any OpenAI-compatible echo server).
"""
import json, subprocess, sys, os, time, threading

def shape(v, depth=0):
    if isinstance(v, dict):
        if depth > 2: return "{…}"
        return {k: shape(x, depth + 1) for k, x in sorted(v.items())}
    if isinstance(v, list):
        return [shape(v[0], depth + 1)] if v else []
    return type(v).__name__

binary, agent_dir, cwd = sys.argv[1], sys.argv[2], sys.argv[3]
env = dict(os.environ, PI_CODING_AGENT_DIR=agent_dir, HOME=os.path.dirname(agent_dir))
p = subprocess.Popen(binary.split() + ["--mode", "rpc", "--model", "mock/mock-model"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, text=True)
lines = []
def reader():
    for l in p.stdout:
        lines.append(l)
threading.Thread(target=reader, daemon=True).start()
def send(o):
    p.stdin.write((json.dumps(o) if not isinstance(o, str) else o) + "\n"); p.stdin.flush()
def wait_for(pred, t=20):
    end = time.time() + t
    while time.time() < end:
        for l in list(lines):
            try: o = json.loads(l)
            except Exception: continue
            if pred(o): return o
        time.sleep(0.02)
    return None
script = [
    {"id": "state", "type": "get_state"},
    {"id": "models", "type": "get_available_models"},
    {"id": "prompt", "type": "prompt", "message": "hello there"},
]
for c in script: send(c)
wait_for(lambda o: o.get("type") == "agent_end")
for c in [
    {"id": "msgs", "type": "get_messages"},
    {"id": "last", "type": "get_last_assistant_text"},
    {"id": "stats", "type": "get_session_stats"},
    {"id": "name", "type": "set_session_name", "name": "cmp"},
    {"id": "bash", "type": "bash", "command": "echo hi"},
    {"id": "think", "type": "set_thinking_level", "level": "high"},
    {"id": "cthink", "type": "cycle_thinking_level"},
    {"id": "fork", "type": "get_fork_messages"},
    {"id": "cmds", "type": "get_commands"},
    {"id": "cycle", "type": "cycle_model"},
    {"id": "steer", "type": "set_steering_mode", "mode": "all"},
    {"id": "retry", "type": "set_auto_retry", "enabled": False},
    {"id": "comp", "type": "set_auto_compaction", "enabled": False},
    {"id": "unk", "type": "no_such_command"},
    "this is not json",
    {"id": "state2", "type": "get_state"},
]:
    send(c)
    time.sleep(0.3)
time.sleep(1)
p.stdin.close()
p.wait(timeout=20)
events, responses = [], {}
for l in lines:
    try: o = json.loads(l)
    except Exception: print("NONJSON", l[:80]); continue
    if o.get("type") == "response":
        key = o.get("id") or o.get("command")
        responses[key] = {"success": o.get("success"), "command": o.get("command"),
                          "data": shape(o.get("data")), "error": (o.get("error") or "")[:70]}
    else:
        events.append(o["type"])
print(json.dumps({"responses": responses}, indent=1, sort_keys=True))
print("EVENTS", sorted(set(events)))
