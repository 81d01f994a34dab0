"""Drive `pi --mode rpc` with raw JSON lines and record everything it prints.

A script is a list of steps, run in order:
    {"send": {...}}            write one command (an object) as a JSON line
    {"send_raw": "text"}       write this text plus a newline as is (malformed input)
    {"wait": {"type": "response", "id": "x"}}
                               wait until a line printed since the latest send (and not
                               matched before) contains all these key/values (records
                               {"<timeout waiting for>": ...} after "timeout" s, default 10)
    {"wait_file": "x.pid"}     wait (up to 10 s) until this file exists in the working directory
    {"sleep": 0.2}             pause (seconds)
    {"close": true}            close stdin
    {"signal": "TERM"}         send a signal
The transcript is every stdout line (parsed JSON, or {"<text>": line}), then the exit code once
stdin is closed (or after the script, by closing it).
"""
import json
import os
import signal as _signal
import subprocess
import threading
import time


def _matches(obj, pattern):
    if not isinstance(obj, dict):
        return False
    for k, v in pattern.items():
        if isinstance(v, dict):
            if not _matches(obj.get(k), v):
                return False
        elif obj.get(k) != v:
            return False
    return True


def run(argv, env, cwd, script, expand, timeout):
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    lines = []
    err = []
    cond = threading.Condition()

    def read_out():
        for raw in p.stdout:
            text = raw.decode("utf-8", "replace").rstrip("\n")
            try:
                obj = json.loads(text)
            except ValueError:
                obj = {"<text>": text}
            with cond:
                lines.append(obj)
                cond.notify_all()

    def read_err():
        for raw in p.stderr:
            err.append(raw.decode("utf-8", "replace"))

    threads = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for t in threads:
        t.start()
    mark = 0  # waits look at lines printed since the latest send, each line matched once
    matched = set()
    deadline = time.time() + timeout
    try:
        for step in script:
            if "send" in step or "send_raw" in step:
                text = step["send_raw"] if "send_raw" in step else json.dumps(step["send"])
                with cond:
                    mark = len(lines)
                try:
                    p.stdin.write((expand(text) + "\n").encode())
                    p.stdin.flush()
                except (BrokenPipeError, OSError):
                    pass
            elif "wait" in step:
                pattern = json.loads(expand(json.dumps(step["wait"])))
                end = min(deadline, time.time() + step.get("timeout", 10))
                with cond:
                    while True:
                        hit = next((i for i in range(mark, len(lines))
                                    if i not in matched and _matches(lines[i], pattern)), None)
                        if hit is not None:
                            matched.add(hit)
                            break
                        left = end - time.time()
                        if left <= 0 or p.poll() is not None and not any(t.is_alive() for t in threads[:1]):
                            lines.append({"<timeout waiting for>": pattern})
                            break
                        cond.wait(min(left, 0.1))
            elif "wait_file" in step:
                path = os.path.join(cwd, step["wait_file"])
                end = time.time() + step.get("timeout", 10)
                while not os.path.exists(path) and time.time() < end:
                    time.sleep(0.05)
            elif "sleep" in step:
                time.sleep(step["sleep"])
            elif "close" in step:
                p.stdin.close()
            elif "signal" in step:
                p.send_signal(getattr(_signal, "SIG" + step["signal"]))
        try:
            if not p.stdin.closed:
                p.stdin.close()
        except OSError:
            pass
        try:
            code = p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            code = "did not exit 10 s after stdin closed"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    threads[0].join(2)
    threads[1].join(2)
    return lines, "".join(err), code
