#!/usr/bin/env python3
"""make conformance: run the same cases through the TypeScript pi and ours, compare, score.

    python3 scripts/conformance/run.py [--ref 0.73.1,1.6.0] [--filter 'rpc.*'] [--jobs N]
                                       [--ours target/release/pi] [--keep] [--list]

Installs each reference once into the cache folder (see install.py), runs every case on both
sides in parallel, prints a scoreboard by area per reference, writes target/conformance/report.md
(every disagreement with its diff) and target/conformance/<ref>/<case>.json (both observations),
and exits 1 if any disagreement is not listed in docs/compat.md with `(conformance: <id>)`.
"""
import argparse
import concurrent.futures as cf
import difflib
import fnmatch
import importlib
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep the source tree clean

import harness  # noqa: E402
import install  # noqa: E402
import shapes1x  # noqa: E402

AREAS = ["sessions", "rpc", "json", "print", "cli", "tools", "extensions", "codemode"]
CASE_MODULES = ["sessions", "rpc", "rpc_client", "json_events", "print_mode", "cli", "tools", "extensions",
                "codemode"]
# `(conformance: id …)` lists a case against every reference, `(conformance 0.87.1: id …)`
# against that one only.
MARKER_RE = re.compile(r"\(conformance(?:\s+(\d+\.\d+\.\d+))?:\s*([^)]*)\)")


def load_cases():
    cases = []
    for name in CASE_MODULES:
        mod = importlib.import_module("cases." + name)
        cases.extend(mod.CASES)
    seen = set()
    for c in cases:
        if c.id in seen:
            raise SystemExit("duplicate case id: %s" % c.id)
        if c.area not in AREAS:
            raise SystemExit("case %s: unknown area %s" % (c.id, c.area))
        seen.add(c.id)
    return cases


def listed_deviations(ref_name):
    """The case ids docs/compat.md lists as deliberate differences from `ref_name`."""
    path = os.path.join(ROOT, "docs", "compat.md")
    ids = set()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"`[^`\n]*`", "", f.read())  # an example in code is not a listing
            for m in MARKER_RE.finditer(text):
                if m.group(1) in (None, ref_name):
                    ids.update(x for x in re.split(r"[,\s]+", m.group(2)) if x)
    return ids


def pretty(v, indent=""):
    """Lines for a diff: JSON, except that strings with line breaks are shown one line per line,
    so a difference inside a long tool output shows as a few lines."""
    if isinstance(v, str):
        if "\n" in v and len(v) > 60:
            return [indent + '"""'] + [indent + "  " + line for line in v.split("\n")] + [indent + '"""']
        return [indent + json.dumps(v, ensure_ascii=False)]
    if isinstance(v, dict):
        if not v:
            return [indent + "{}"]
        out = [indent + "{"]
        for k in sorted(v):
            sub = pretty(v[k], indent + " ")
            out.append(indent + " " + json.dumps(k, ensure_ascii=False) + ": " + sub[0].lstrip())
            out.extend(sub[1:])
        return out + [indent + "}"]
    if isinstance(v, list):
        if not v:
            return [indent + "[]"]
        out = [indent + "["]
        for x in v:
            out.extend(pretty(x, indent + " "))
        return out + [indent + "]"]
    return [indent + json.dumps(v)]


def diff(ref_obs, ours_obs, ref_name, max_lines=120):
    out = []
    for key in sorted(set(ref_obs) | set(ours_obs)):
        a, b = ref_obs.get(key, "<absent>"), ours_obs.get(key, "<absent>")
        if a == b:
            continue
        lines = list(difflib.unified_diff(pretty(a), pretty(b), "pi " + ref_name, "ours", n=2, lineterm=""))
        lines = [line if len(line) <= 400 else line[:400] + "... (%d more chars)" % (len(line) - 400) for line in lines]
        if len(lines) > max_lines:
            lines = lines[:max_lines] + ["... (%d more diff lines)" % (len(lines) - max_lines)]
        out.append("### %s\n```diff\n%s\n```" % (key, "\n".join(lines)))
    return "\n".join(out)


def run_case(case, ref, ours, base):
    root = os.path.join(base, ref.name, case.id)
    with cf.ThreadPoolExecutor(2) as pool:
        fa = pool.submit(harness.observe, case, ref, os.path.join(root, "ref"))
        fb = pool.submit(harness.observe, case, ours, os.path.join(root, "ours"))
        (a, ta), (b, tb) = fa.result(), fb.result()
    return a, b, ta, tb


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", default="0.73.1,1.6.0", help="comma/space separated reference versions")
    ap.add_argument("--filter", default="*", help="glob(s) on case ids, comma separated")
    ap.add_argument("--jobs", type=int, default=max(2, (os.cpu_count() or 2)))
    ap.add_argument("--ours", default=os.path.join(ROOT, "target", "release", "pi"))
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "conformance"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch roots (printed)")
    ap.add_argument("--list", action="store_true", help="list the case ids and exit")
    args = ap.parse_args()

    cases = load_cases()
    globs = [g for g in args.filter.split(",") if g]
    cases = [c for c in cases if any(fnmatch.fnmatch(c.id, g) for g in globs)]
    if args.list:
        for c in cases:
            print(c.id)
        print("%d cases" % len(cases), file=sys.stderr)
        return 0
    if not os.access(args.ours, os.X_OK):
        raise SystemExit("error: %s is not an executable (run cargo build --release)" % args.ours)
    ours_bin = os.path.abspath(args.ours)
    refs = [install.reference(v) for v in re.split(r"[,\s]+", args.ref.strip()) if v]
    os.makedirs(args.out, exist_ok=True)
    base = tempfile.mkdtemp(prefix="pi-conf-")
    report = ["# Conformance report", ""]
    failed = False
    summary = {}
    t_all = time.time()
    for ref in refs:
        ours = harness.Side("ours", [ours_bin], node=ref.node, rpc_client=ref.rpc_client,
                            path_prefix=ref.path_prefix, env=ref.env)
        listed = listed_deviations(ref.name)
        fd = install.have_fd(ref.path_prefix[0])
        ref_cases = [c for c in cases if ref.name not in c.skip_refs and not (c.needs_fd and not fd)]
        if not fd:
            print("note: no fd >= 8.7 could be installed: the cases that need it are skipped", file=sys.stderr)
        results = {}
        t0 = time.time()
        with cf.ThreadPoolExecutor(max(1, args.jobs // 2)) as pool:
            futs = {pool.submit(run_case, c, ref, ours, base): c for c in ref_cases}
            done = 0
            for f in cf.as_completed(futs):
                c = futs[f]
                results[c.id] = f.result()
                done += 1
                if sys.stderr.isatty():
                    print("\r[%s] %d/%d " % (ref.name, done, len(ref_cases)), end="", file=sys.stderr)
        if sys.stderr.isatty():
            print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
        elapsed = time.time() - t0
        ref_dir = os.path.join(args.out, ref.name)
        shutil.rmtree(ref_dir, ignore_errors=True)
        os.makedirs(ref_dir)
        board = {a: [0, 0, 0, 0, 0] for a in AREAS}  # cases, agree, listed, follows-1.x, disagree
        details = []
        stale = []
        for c in ref_cases:
            a, b, ta, tb = results[c.id]
            with open(os.path.join(ref_dir, c.id + ".json"), "w") as f:
                json.dump({"id": c.id, "note": c.note, "ref": a, "ours": b,
                           "seconds": {"ref": round(ta, 2), "ours": round(tb, 2)}}, f, indent=1, ensure_ascii=False)
            row = board[c.area]
            row[0] += 1
            if a == b:
                row[1] += 1
                if c.id in listed:
                    stale.append(c.id)
                continue
            if c.id in listed:
                row[2] += 1
                status = "listed deviation"
            elif c.follows and ref.name == "0.73.1":
                row[3] += 1
                status = "follows %s" % c.follows
            elif ref.name == "0.73.1" and shapes1x.project(a) == shapes1x.project(b):
                row[3] += 1
                status = "follows 1.x (event and response shapes only, see shapes1x.py)"
            elif ref.name != "0.73.1" and shapes1x.project_152(a) == shapes1x.project_152(b):
                row[3] += 1
                status = "follows 1.5.2 (fields 0.87.1 lacks, see shapes1x.py)"
            else:
                row[4] += 1
                status = "DISAGREE"
                failed = True
                if ref.name == "0.73.1":
                    # show what remains once the 1.x shapes we follow are taken out
                    a, b = shapes1x.project(a), shapes1x.project(b)
                    status += " (diff without the 1.x event shapes, see shapes1x.py)"
                else:
                    a, b = shapes1x.project_152(a), shapes1x.project_152(b)
                    status += " (diff without the 1.5.2 fields, see shapes1x.py)"
            details.append((c, status, diff(a, b, ref.name)))
        lines = ["reference %s (%d cases, %.0f s)" % (ref.name, len(ref_cases), elapsed),
                 "%-12s %6s %6s %7s %12s %9s" % ("area", "cases", "agree", "listed", "follows-1.x", "disagree")]
        tot = [0] * 5
        for area in AREAS:
            r = board[area]
            if r[0]:
                lines.append("%-12s %6d %6d %7d %12d %9d" % (area, *r))
            tot = [x + y for x, y in zip(tot, r)]
        lines.append("%-12s %6d %6d %7d %12d %9d" % ("total", *tot))
        print("\n".join(lines))
        bad = [c.id for c, s, _ in details if s == "DISAGREE"]
        if bad:
            print("disagreements: " + " ".join(bad))
        if stale:
            print("listed in docs/compat.md but now agreeing: " + " ".join(stale))
        print()
        summary[ref.name] = tot
        report += ["## Reference %s" % ref.name, "", "```", *lines, "```", ""]
        if stale:
            report += ["Listed in docs/compat.md but agreeing now: " + ", ".join(stale), ""]
        for c, status, d in details:
            report += ["### `%s` — %s" % (c.id, status)]
            if c.note:
                report += ["", c.note]
            report += ["", "Observations: `target/conformance/%s/%s.json`" % (ref.name, c.id), "", d, ""]
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write("\n".join(report) + "\n")
    print("report: %s (%.0f s in all)" % (os.path.relpath(os.path.join(args.out, "report.md")), time.time() - t_all))
    if args.keep:
        print("scratch roots kept in " + base)
    else:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
