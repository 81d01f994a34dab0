"""Normalise the prompts each implementation words itself, and nothing around them.

* The default system prompt: its prose (opening, tool one-liners, guidelines, pi's docs pointers)
  becomes `<default system prompt; tools: a, b>`; what follows it and what pi appends (appended
  text, project context files, skills, date, cwd) stays as sent. A custom `--system-prompt`
  is not touched.
* The built-in tools' descriptions (the tool's and its parameters' `description` texts) become
  `<description>`; names, types, required lists and everything else in the schema stay.
  Descriptions of extension tools are the extension's words and stay as sent.
* The project context block's one-line introduction becomes `<context preamble>`.
* The skills block's opening sentences (before `<available_skills>`) become `<skills preamble>`.
* Summarisation requests (compaction, branch summary, turn prefix): the fixed system prompt
  becomes `<summarization system prompt>`, the instruction text after the serialised
  `<conversation>` / `<previous-summary>` blocks becomes `<summary instructions>`; the
  conversation, the previous summary and any "Additional focus:" text stay as sent.
"""
import copy
import re

DEFAULT_OPENINGS = (
    "You are an expert coding assistant operating inside pi",  # the TypeScript pi
    "You are an expert coding assistant working inside pi",  # ours
    "You are a coding assistant running inside pi",  # pi 1.6.0
)
DEFAULT_ENDINGS = (
    "following related cross-references.\n</docs>",  # pi 1.6.0
    "follow links to related docs (e.g., tui.md for TUI API details)\n</docs>",  # pi 1.x
    "Show file paths clearly when working with files\n</rules>",  # ours, sectioned (no docs)
    "follow links to related docs (e.g., tui.md for TUI API details)",  # pi's last line
    "Show file paths clearly when working with files\n",  # ours (guidelines end the prose)
    "Show file paths clearly when working with files",
)
SUMMARIZATION_OPENINGS = (
    "You are a context summarization assistant",  # pi
    "You write context checkpoints",  # ours
)


def _tool_names(prose):
    m = re.search(r"(?:Available tools:|<tools>)\n(.*?)\n\n", prose, re.S)
    if not m:
        return "?"
    names = [line[2:].split(":", 1)[0] for line in m.group(1).split("\n") if line.startswith("- ")]
    return ", ".join(names) if names else "(none)"


SKILLS_PREAMBLES = (
    "The following skills provide specialized instructions",  # pi
    "Skills give you specialized instructions",  # ours
)


def _skills_preamble(text):
    i = text.find("<available_skills>")
    if i < 0:
        return text
    for opening in SKILLS_PREAMBLES:
        j = text.rfind(opening, 0, i)
        if j >= 0:
            return text[:j] + "<skills preamble>\n\n" + text[i:]
    return text


CONTEXT_PREAMBLES = (
    "Project-specific instructions and guidelines:",  # pi
    "Instructions and conventions provided for this project:",  # ours
)


def system_prompt(text):
    if not isinstance(text, str):
        return text
    text = _skills_preamble(text)
    for p in CONTEXT_PREAMBLES:
        text = text.replace("# Project Context\n\n" + p + "\n", "# Project Context\n\n<context preamble>\n")
        text = text.replace("<project_context>\n" + p + "\n", "<project_context>\n<context preamble>\n")
    if text.startswith(SUMMARIZATION_OPENINGS):
        return "<summarization system prompt>"
    if not text.startswith(DEFAULT_OPENINGS):
        return text
    for ending in DEFAULT_ENDINGS:
        i = text.find(ending)
        if i >= 0:
            end = i + len(ending)
            return "<default system prompt; tools: %s>%s" % (_tool_names(text[:end]), text[end:])
    return text


PROSE_SECTIONS = {"preamble", "tools", "rules", "docs"}


def system_message(msg):
    """A 1.x session's `role: "system"` message: its prose sections and built-in tool texts.
    The `docs` section (pointers into the TypeScript package's bundled documentation, which our
    single binary does not ship) is pi's own prose and is dropped, as the request prompt's
    prose normalisation absorbs it there."""
    msg = copy.deepcopy(msg)
    sections = msg.get("sections")
    if isinstance(sections, dict):
        sections.pop("docs", None)
        for k, v in list(sections.items()):
            if k in PROSE_SECTIONS and isinstance(v, str):
                sections[k] = "<prose; tools: %s>" % _tool_names(v + "\n\n") if k == "tools" else "<prose>"
            elif k in ("project_context", "skills") and isinstance(v, str):
                sections[k] = system_prompt(v)
    if isinstance(msg.get("toolsAdded"), list):
        msg["toolsAdded"] = [_tool(t) for t in msg["toolsAdded"]]
    return msg


def summary_request_text(text):
    if not text.startswith("<conversation>\n"):
        return text
    keep = []
    rest = text
    for tag in ("conversation", "previous-summary"):
        m = re.match(r"<%s>\n.*?\n</%s>\n\n" % (tag, tag), rest, re.S)
        if m:
            keep.append(m.group(0))
            rest = rest[m.end():]
    focus = ""
    if "\n\nAdditional focus: " in rest:
        rest, focus = rest.split("\n\nAdditional focus: ", 1)
        focus = "\n\nAdditional focus: " + focus
    return "".join(keep) + "<summary instructions>" + focus


BUILTIN_TOOLS = {"read", "bash", "edit", "write", "grep", "find", "ls"}


def _blank_descriptions(schema):
    if isinstance(schema, dict):
        return {k: ("<description>" if k == "description" and isinstance(v, str) else _blank_descriptions(v))
                for k, v in schema.items()}
    if isinstance(schema, list):
        return [_blank_descriptions(x) for x in schema]
    return schema


def _drop_closed_objects(schema):
    """0.73.1 closed the edit tool's argument objects (`additionalProperties: false`); 1.x
    dropped that to accept the extra fields models invent, and so do we (docs/compat.md,
    Tools). Made equal here so the change is not reported in every case that lists edit."""
    if isinstance(schema, dict):
        return {k: _drop_closed_objects(v) for k, v in schema.items()
                if not (k == "additionalProperties" and v is False)}
    if isinstance(schema, list):
        return [_drop_closed_objects(x) for x in schema]
    return schema


def _tool(t):
    if not isinstance(t, dict):
        return t
    fn = t.get("function") if isinstance(t.get("function"), dict) else t
    if fn.get("name") == "codemode":
        # Its description is compared as sent; 1.x's raw-source grammar is sampling we do not do.
        fn = {k: v for k, v in fn.items() if k != "constrainedSampling"}
        return dict(t, function=fn) if "function" in t else fn
    if fn.get("name") not in BUILTIN_TOOLS:
        return t
    # 1.x's built-in declarations ask providers that can for schema-constrained arguments;
    # we do no constrained sampling and say so (docs/compat.md, Sessions).
    fn = {k: v for k, v in _blank_descriptions(fn).items() if k != "constrainedSampling"}
    if fn.get("name") == "edit":
        for key in ("parameters", "input_schema"):
            if key in fn:
                fn = dict(fn, **{key: _drop_closed_objects(fn[key])})
    return dict(t, function=fn) if "function" in t else fn


def _map_system(content, fn):
    if isinstance(content, str):
        return fn(content)
    if isinstance(content, list):
        return [dict(p, text=fn(p["text"])) if isinstance(p, dict) and isinstance(p.get("text"), str) else p
                for p in content]
    return content


def normalize_request(body):
    if not isinstance(body, dict):
        return body
    body = copy.deepcopy(body)
    summarizing = False
    if isinstance(body.get("tools"), list):
        body["tools"] = [_tool(t) for t in body["tools"]]
    msgs = body.get("messages")
    if isinstance(body.get("system"), (str, list)):  # anthropic
        body["system"] = _map_system(body["system"], system_prompt)
        summarizing = "<summarization system prompt>" in str(body["system"])
    if isinstance(msgs, list) and msgs and isinstance(msgs[0], dict) and msgs[0].get("role") in ("system", "developer"):
        msgs[0]["content"] = _map_system(msgs[0].get("content"), system_prompt)
        summarizing = summarizing or msgs[0]["content"] == "<summarization system prompt>"
    if summarizing and isinstance(msgs, list):
        for m in msgs:
            if isinstance(m, dict) and m.get("role") == "user":
                m["content"] = _map_system(m.get("content"), summary_request_text)
    return body
