#!/usr/bin/env python3
"""Drives `pi acp` through a whole session with the official Python ACP SDK
(`agent-client-protocol`), as an editor would (issue 32). Usage: acp_client.py SPEC.json, where
the spec names pi's program, args, cwd and environment, and the client's MCP server. Exits 0
when every step saw what it should; prints the step that failed otherwise."""

import asyncio
import json
import sys

import acp
from acp.schema import EnvVariable, McpServerStdio

spec = json.load(open(sys.argv[1]))


class Editor:
    def __init__(self):
        self.updates = []
        self.first_chunk = asyncio.Event()

    async def request_permission(self, session_id, tool_call, options, **kw):
        return acp.RequestPermissionResponse(outcome={"outcome": "cancelled"})

    async def session_update(self, session_id, update, **kw):
        self.updates.append(update)
        if update.session_update == "agent_message_chunk":
            self.first_chunk.set()

    async def write_text_file(self, **kw):
        raise RuntimeError("not offered")

    async def read_text_file(self, **kw):
        raise RuntimeError("not offered")

    def on_connect(self, conn):
        pass


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)


def kinds(updates):
    return [u.session_update for u in updates]


async def spawn(editor):
    return acp.spawn_agent_process(
        editor, spec["program"], *spec["args"], env=spec["env"], cwd=spec["cwd"]
    )


async def first_process():
    editor = Editor()
    async with await spawn(editor) as (conn, _proc):
        init = await conn.initialize(protocol_version=1)
        check(init.protocol_version == 1, "initialize answers protocol version 1")
        check(init.agent_capabilities.load_session, "initialize offers session/load")
        server = McpServerStdio(
            name=spec["mcp"]["name"],
            command=spec["mcp"]["command"],
            args=spec["mcp"]["args"],
            env=[EnvVariable(name="FAKE", value="1")],
        )
        new = await conn.new_session(cwd=spec["cwd"], mcp_servers=[server])
        sid = new.session_id
        check(new.modes.current_mode_id in ("off", "read-only", "workspace-write"), "modes")

        r = await conn.prompt(session_id=sid, prompt=[acp.text_block("change beta")])
        check(r.stop_reason == "end_turn", f"the edit prompt ends its turn: {r.stop_reason}")
        calls = [u for u in editor.updates if u.session_update == "tool_call"]
        check(calls and calls[0].kind == "edit", f"a tool call of kind edit: {kinds(editor.updates)}")
        diffs = [
            c
            for u in editor.updates
            if u.session_update == "tool_call_update"
            for c in (u.content or [])
            if c.type == "diff"
        ]
        check(diffs and diffs[0].old_text == "alpha\nbeta\n" and diffs[0].new_text == "alpha\ngamma\n",
              f"the edit shown as a diff: {diffs}")
        commands = [u for u in editor.updates if u.session_update == "available_commands_update"]
        names = [c.name for c in commands[-1].available_commands] if commands else []
        check("hello" in names, f"the prompt template is a slash command: {names}")

        editor.first_chunk.clear()
        running = asyncio.create_task(conn.prompt(session_id=sid, prompt=[acp.text_block("talk")]))
        await asyncio.wait_for(editor.first_chunk.wait(), 20)
        await conn.cancel(session_id=sid)
        r = await asyncio.wait_for(running, 20)
        check(r.stop_reason == "cancelled", f"cancel answers cancelled: {r.stop_reason}")

        r = await conn.prompt(session_id=sid, prompt=[acp.text_block("again")])
        check(r.stop_reason == "end_turn", "a prompt after cancel runs")

        await conn.set_session_mode(session_id=sid, mode_id="read-only")
        await conn.set_config_option(config_id="thought_level", session_id=sid, value="off")
        opts = await conn.set_config_option(config_id="model", session_id=sid, value="mock/mock-model")
        check(opts.config_options[0].current_value == "mock/mock-model", "the model option")

        r = await conn.prompt(session_id=sid, prompt=[acp.text_block("/hello world")])
        check(r.stop_reason == "end_turn", "the slash command runs")
        return sid


async def second_process(sid):
    editor = Editor()
    async with await spawn(editor) as (conn, _proc):
        await conn.initialize(protocol_version=1)
        listed = await conn.list_sessions(cwd=spec["cwd"])
        check(any(s.session_id == sid for s in listed.sessions), "session/list has the session")
        await conn.load_session(cwd=spec["cwd"], session_id=sid, mcp_servers=[])
        ks = kinds(editor.updates)
        check(ks.count("user_message_chunk") == 4, f"the whole conversation is replayed: {ks}")
        check("tool_call" in ks and "tool_call_update" in ks, f"tool calls are replayed: {ks}")


async def main():
    sid = await first_process()
    await second_process(sid)
    print("ok", flush=True)


asyncio.run(main())
