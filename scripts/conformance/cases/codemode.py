"""Codemode (pi 1.x `codemode` tool, docs/codemode.md): the mock model sends scripts, pi runs
them in QuickJS, and only their output goes back to the model. What is compared: the request
bodies (the codemode description and every script result), the session (the result's `details`
and `nestedCalls`, `codemode-store` entries), the printed text, and for RPC the event stream.
Ours runs with no Node anywhere on PATH (`no_node_for_ours`)."""
from cases.common import call
from harness import Case, Fixture

C = "codemode."
CMP = ("exit", "stdout", "requests", "sessions")
MCP = {"agent/mcp.json": {"mcpServers": {"dev": {"command": "python3", "args": ["{root}/mcp-server.py"]}}},
       "root/mcp-server.py": Fixture("mcp/server.py")}
# The same server with its tools declared to the model (`direct`), which `only` mode lists instead.
MCP_DIRECT = {"agent/mcp.json": {"mcpServers": {"dev": {"command": "python3", "args": ["{root}/mcp-server.py"],
                                                        "exposure": "direct", "description": "Project glossary"}}},
              "root/mcp-server.py": Fixture("mcp/server.py")}
NO_BUILTINS = "+codemode,-read,-bash,-edit,-write"


def script(code, id):
    return call("codemode", {"code": code}, id=id)


# pi 0.73.1 has no codemode tool: these cases compare against 1.x only.
NO_CODEMODE_REFS = ("0.73.1",)


def ccase(id, codes, files=None, argv_extra=(), tools="+codemode", **kw):
    """The model sends each script in `codes` in its own turn, then says done."""
    if isinstance(codes, str):
        codes = [codes]
    turns = [{"content": [script(c, "call_cm%d" % (i + 1))]} for i, c in enumerate(codes)] + ["done"]
    argv = ["--tools", tools] + list(argv_extra) + ["-p", "go"]
    return Case(id, argv=argv, turns=turns, files=files, compare=kw.pop("compare", CMP),
                no_node_for_ours=True, skip_refs=NO_CODEMODE_REFS, **kw)


def rpc_abort_case(id, code, **kw):
    """Over RPC: the prompt's script starts, then the client aborts it."""
    turns = [{"content": [script(code, "call_cm1")]}, "after abort"]
    steps = [{"send": {"id": "p", "type": "prompt", "message": "go"}},
             {"wait": {"type": "response", "id": "p"}},
             {"wait": {"type": "tool_execution_start", "toolName": "codemode"}},
             {"sleep": 0.5},
             {"send": {"id": "a", "type": "abort"}},
             {"wait": {"type": "response", "id": "a"}},
             {"wait": {"type": "agent_end"}, "timeout": 20}]
    return Case(id, rpc={"argv": ["--tools", "+codemode"], "script": steps}, turns=turns,
                compare=("exit", "rpc", "requests", "sessions"), no_node_for_ours=True,
                skip_refs=NO_CODEMODE_REFS, **kw)


BRANCHED = (
    '{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"{cwd}"}\n'
    '{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"first"}],"timestamp":1735689601000}}\n'
    '{"type":"custom","customType":"codemode-store","data":{"set":{"shared":"root","gone":1},"delete":[]},"id":"a0000002","parentId":"a0000001","timestamp":"2025-01-01T00:00:02.000Z"}\n'
    '{"type":"custom","customType":"codemode-store","data":{"set":{"only_a":"A"},"delete":["gone"]},"id":"a0000003","parentId":"a0000002","timestamp":"2025-01-01T00:00:03.000Z"}\n'
    '{"type":"message","id":"a0000004","parentId":"a0000003","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"branch a"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1735689604000}}\n'
    '{"type":"custom","customType":"codemode-store","data":{"set":{"only_b":"B","shared":"b"},"delete":[]},"id":"a0000005","parentId":"a0000002","timestamp":"2025-01-01T00:00:05.000Z"}\n'
    '{"type":"message","id":"a0000006","parentId":"a0000005","timestamp":"2025-01-01T00:00:06.000Z","message":{"role":"assistant","content":[{"type":"text","text":"branch b"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1735689606000}}\n'
)
SESSION_FILE = "agent/sessions/{slug}/2025-01-01T00-00-00-000Z_11111111-2222-4333-8444-555555555555.jsonl"
# Written by pi 1.6.0 against the mock (two scripts: nested bash/read calls, `store()` writes and a
# delete), its working directory replaced by {cwd}.
SESSION_160 = Fixture("codemode-session-1.6.0.jsonl", lambda data, sb: data.replace(b"{cwd}", sb.cwd.encode()))
SESSION_160_FILE = "agent/sessions/{slug}/2026-11-29T04-22-02-997Z_01a22589-e1f4-7119-869b-dd2231c4f806.jsonl"

CASES = [
    ccase(C + "bash-and-read",
          "const r = await tools.bash({ command: 'echo hi; echo err >&2; exit 3' });\n"
          "const t = await tools.read({ path: 'a.txt' });\n"
          "text(r.output); text(String(r.exit_code)); text(typeof r.wall_time_seconds + ' ' + r.truncated);\n"
          "return t;",
          files={"cwd/a.txt": "alpha\nbeta\n"}),
    ccase(C + "bash-large-output",
          "const r = await tools.bash({ command: 'seq 1 250000' });\n"
          "return { length: r.output.length, truncated: r.truncated, path: r.full_output_path,\n"
          "  head: r.output.slice(0, 12), tail: r.output.slice(-20), lines: r.output.split('\\n').length };"),
    ccase(C + "read-missing-rejects",
          "try { await tools.read({ path: 'nope.txt' }); } catch (e) { return e.name + ': ' + e.message; }"),
    ccase(C + "promise-all",
          "const words = ['one', 'two', 'three'];\n"
          "const outs = await Promise.all(words.map((w) => tools.bash({ command: 'echo ' + w })));\n"
          "const files = await Promise.allSettled([tools.read({ path: 'a.txt' }), tools.read({ path: 'b.txt' })]);\n"
          "console.log(outs.map((o) => o.output.trim()).join(','));\n"
          "return files.map((f) => f.status);",
          files={"cwd/a.txt": "A\n"}),
    ccase(C + "output-layout",
          "text('first'); text({ a: 1 }); console.log('log', 1, { b: 2 }); console.error('err');\n"
          "return [1, 2];"),
    ccase(C + "store-load-turns",
          ["store('cursor', { page: 2, ids: [1, 2] }); store('tmp', 1); store('tmp', undefined); return load('cursor');",
           "return [load('cursor'), load('tmp'), load('never')];",
           "store('lost', 1); throw new Error('no write');",
           "return load('lost') === undefined;"]),
    ccase(C + "store-branches", "return [load('shared'), load('only_a'), load('only_b'), load('gone')];",
          argv_extra=["-c"], files={SESSION_FILE: BRANCHED}),
    ccase(C + "resume-1.6.0-session",
          "const r = await tools.bash({ command: 'echo again' });\nstore('count', 1);\n"
          "return [load('cursor'), load('seen'), r.output.trim()];",
          argv_extra=["-c"], files={SESSION_160_FILE: SESSION_160, "cwd/a.txt": "alpha\n"}),
    ccase(C + "store-limit",
          "try { store('big', 'x'.repeat(300000)); } catch (e) { text(e.name + ': ' + e.message); }\n"
          "try { store(1, 2); } catch (e) { text(e.name + ': ' + e.message); }"),
    ccase(C + "search-describe",
          "const found = await searchTools('write file contents', { limit: 3 });\n"
          "text(found.map((t) => t.name).join(','));\n"
          "text(ALL_TOOLS.map((t) => t.name).join(','));\n"
          "text(String(await describeTool('nope')));\n"
          "text(String(await describeNamespace('nope')));\n"
          "try { await searchTools('x', { limit: 0 }); } catch (e) { text(e.message); }\n"
          "try { tools.raed; } catch (e) { text(e.message); }"),
    ccase(C + "mcp-tools",
          "const hit = await tools.mcp__dev__lookup({ word: 'pi' });\n"
          "const miss = await tools.mcp__dev__lookup({ word: 'missing' });\n"
          "const stats = await tools.mcp__dev__stats({ word: 'abcd' });\n"
          "text(hit); text(miss); text(stats);\n"
          "text(await describeNamespace('dev'));\n"
          "text((await searchTools('glossary word', { namespace: 'dev' })).map((t) => t.name).join(','));\n"
          "text((await searchTools('glossary', { namespace: 'other' })).length);\n"
          "return await describeTool('mcp__dev__stats');",
          files=MCP),
    ccase(C + "mode-only", "return ALL_TOOLS.map((t) => t.name);", tools=NO_BUILTINS,
          settings={"codemode": {"mode": "only"}}, files=MCP_DIRECT),
    ccase(C + "inline-budget-small", "return 1;", tools=NO_BUILTINS,
          settings={"codemode": {"mode": "only", "inlineBudget": 120}}, files=MCP_DIRECT),
    ccase(C + "inline-budget-zero", "return 1;", tools=NO_BUILTINS,
          settings={"codemode": {"mode": "only", "inlineBudget": 0}}, files=MCP_DIRECT),
    ccase(C + "exception",
          "function inner(n) {\n  if (n > 1) throw new TypeError('bad ' + n);\n  return inner(n + 1);\n}\n"
          "text('before');\nawait tools.bash({ command: 'echo ran' });\ninner(0);"),
    ccase(C + "syntax-error", "const x = ;\nreturn x;"),
    ccase(C + "options-errors",
          ["return 1;\n// @options: {\"timeout_ms\": 5}", "// @options: {\"nope\": 1}\nreturn 1;",
           "// @options: {\"max_output_tokens\": 10}\nreturn 'y'.repeat(100);"]),
    ccase(C + "timeout",
          "// @options: {\"timeout_ms\": 2500}\ntext('started');\nawait tools.bash({ command: 'sleep 5; echo late' });\nreturn 'never';"),
    ccase(C + "runaway-loop",
          "// @options: {\"timeout_ms\": 2500}\nlet n = 0;\nwhile (true) { n++; }"),
    ccase(C + "allocation-bomb",
          "const hold = [];\nwhile (true) { hold.push(new Array(100000).fill(hold.length)); }"),
    ccase(C + "stalled-promise", "await new Promise(() => {});"),
    ccase(C + "exit-early", "text('kept'); exit(); text('never');"),
    rpc_abort_case(C + "abort-loop", "let n = 0;\nwhile (true) { n++; }"),
    rpc_abort_case(C + "abort-tool", "await tools.bash({ command: 'sleep 10' });\nreturn 'never';"),
]
