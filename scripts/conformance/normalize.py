"""Normalisation: the only things made equal between the two sides.

Exactly these, nothing else:
  * ids: session ids (UUIDs) and entry ids (8 hex digits) become <id1>, <id2>, ... in order of
    first appearance, so parent chains are still compared;
  * timestamps: ISO strings, file-name timestamps, epoch numbers under a "timestamp" key, and
    today's date;
  * temp paths and ports: the mock server's port, bash's random full-output file name
    (pi-bash-<16 random characters>.log), the scratch root of the side becomes <ROOT> (also inside session folder
    names), the TypeScript package folder <PKG>;
  * durations: values under "durationMs" / "duration_ms" (in raw session lines too); a codemode script's `Wall time N
    seconds` line and `"wall_time_seconds": N`; codemode's random output file names
    (pi-codemode-<16 random characters>.<ext>);
  * the wording of prompts each implementation wrote itself: the default system prompt's prose
    (everything before the project context / skills / date lines that pi appends) and the
    instruction text of summarisation requests (see prompts.py);
  * `additionalProperties: false` in the built-in edit tool's schema, which 1.x dropped and
    we follow (listed in docs/compat.md; see prompts.py);
  * `responseId` and `usage` of an assistant `message_start` event: pi 1.x prints the message
    snapshot after its provider may or may not have read the first chunk (which carries the id
    and, from Anthropic, the input usage), so they come and go from run to run on its side; we
    always send what the first chunk said;
  * 1.x's `constrainedSampling` on the built-in tools' and `codemode`'s declarations and its `docs` prompt
    section (pointers into its bundled docs), neither of which we have (listed in
    docs/compat.md; see prompts.py); likewise the rest of the `codemode` description's `models`
    line, which points 1.x's model at its bundled docs/codemode.md and ours at the calls
    themselves (we ship no docs folder).
"""
import datetime
import re

import prompts

UUID_RE = re.compile(r"(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f])")
HEX8_RE = re.compile(r"^[0-9a-f]{8}$")
ISO_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
BASH_LOG_RE = re.compile(r"pi-bash-[0-9A-Za-z]{16}\.log")
CODEMODE_FILE_RE = re.compile(r"pi-codemode-[0-9A-Za-z]{16}\.")
WALL_TIME_RE = re.compile(r"Wall time \d+\.\d seconds")
WALL_SECONDS_RE = re.compile(r'("wall_time_seconds":)\s*\d+(?:\.\d+)?')
# The `models` line of the codemode description after its first sentence, up to the end of the
# line (a newline, or `\n` inside a raw session line).
MODELS_POINTER_RE = re.compile(r"(`models`: classifiers and image generation\.) .*?(?=\n|\\n|$)")
FILE_TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")
ID_KEYS = {"id", "parentId", "entryId", "firstKeptEntryId", "targetId", "fromId", "sessionId",
           "leafId", "parentSession", "fromHook"}
DURATION_KEYS = {"durationMs", "duration_ms", "wall_time_seconds"}
# ids and epoch timestamps inside raw JSON text (a session file compared line by line)
RAW_ID_RE = re.compile(r'"(id|parentId|targetId|firstKeptEntryId|fromId|entryId)":"([0-9a-f]{8})"')
RAW_EPOCH_RE = re.compile(r'"timestamp":\d{12,14}')
RAW_DURATION_RE = re.compile(r'"durationMs":\d+')


def _dates():
    now = datetime.datetime.now()
    utc = datetime.datetime.now(datetime.timezone.utc)
    out = set()
    for d in (now, utc, now - datetime.timedelta(days=1)):
        out.add(d.strftime("%Y-%m-%d"))
        out.add(d.strftime("%-m/%-d/%Y"))
    return sorted(out, key=len, reverse=True)


class Normalizer:
    def __init__(self, roots, pkg_dir=None, port=None):
        self.replacements = []
        if port:
            self.replacements.append(("127.0.0.1:%d" % port, "127.0.0.1:<PORT>"))
        for r in roots:
            self.replacements.append((r, "<ROOT>"))
            self.replacements.append((r.lstrip("/").replace("/", "-"), "<ROOT>"))
        if pkg_dir:
            self.replacements.append((pkg_dir, "<PKG>"))
        self.ids = {}
        self.dates = _dates()

    def _id(self, s):
        if s not in self.ids:
            self.ids[s] = "<id%d>" % (len(self.ids) + 1)
        return self.ids[s]

    def string(self, s):
        for a, b in self.replacements:
            if a in s:
                s = s.replace(a, b)
        s = ISO_RE.sub("<TS>", s)
        s = FILE_TS_RE.sub("<TS>", s)
        s = BASH_LOG_RE.sub("pi-bash-<random>.log", s)
        s = CODEMODE_FILE_RE.sub("pi-codemode-<random>.", s)
        s = WALL_TIME_RE.sub("Wall time <N> seconds", s)
        s = WALL_SECONDS_RE.sub(r"\1<N>", s)
        s = MODELS_POINTER_RE.sub(r"\1 <docs pointer>", s)
        for d in self.dates:
            if d in s:
                s = s.replace(d, "<DATE>")
        s = UUID_RE.sub(lambda m: self._id(m.group(0)), s)
        if '":"' in s:
            s = RAW_ID_RE.sub(lambda m: '"%s":"%s"' % (m.group(1), self._id(m.group(2))), s)
            s = RAW_EPOCH_RE.sub('"timestamp":"<TS>"', s)
            s = RAW_DURATION_RE.sub('"durationMs":"<DUR>"', s)
        if s in self.ids:
            s = self.ids[s]
        return s

    def value(self, v, key=None):
        if key == "requests" and isinstance(v, list):
            v = [prompts.normalize_request(b) for b in v]
        return self._walk(v, None)

    def _walk(self, v, key):
        if isinstance(v, dict):
            msg = v.get("message")
            if v.get("type") == "message_start" and isinstance(msg, dict) and msg.get("role") == "assistant":
                v = dict(v, message={k: x for k, x in msg.items() if k not in ("responseId", "usage")})
            if v.get("role") == "system" and "sections" in v:
                v = prompts.system_message(v)
            return {self.string(k): self._walk(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [self._walk(x, key) for x in v]
        if key == "timestamp" and isinstance(v, (int, float, str)) and not isinstance(v, bool):
            return "<TS>"
        if key in DURATION_KEYS and isinstance(v, (int, float)):
            return "<DUR>"
        if isinstance(v, str):
            if key in ID_KEYS or (key and key.endswith("Id") and key != "toolCallId"):
                if HEX8_RE.match(v) or UUID_RE.fullmatch(v):
                    return self._id(v)
            return self.string(v)
        return v
