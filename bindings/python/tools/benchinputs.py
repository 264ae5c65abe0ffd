"""Synthetic inputs for bench.py, deterministic for a seed: long agent
sessions (messages with tool calls and results, or text-heavy ones) and an
agent completion cut into tokens as a detokenizer hands them out.  They
have the shapes of dsml-bench's own (bench/bench_inputs.c).
"""

import json
import random

# Words of mixed scripts: ASCII, accents, CJK, emoji, quotes, newlines and
# pieces of markers that do not complete.
WORDS = ["alpha", "report", "forecast", "東京", "résumé", "👍🏽", "delta",
         "summary", "<b>", "north", '"q"', "\n", "city", "서울", "a < b",
         "price", "｜", "step", "\t", "order", "<｜x"]

# Prose as a model writes it (the token stream).
PROSE = ["the", "model", "checks", "whether", "value", "function", "returns",
         "result", "because", "we", "need", "to", "compute", "first,", "then",
         "answer", "is", "a", "list", "of", "items.", "Let", "me", "look",
         "at", "file", "again:", "it", "calls", "parse()", "with", "x = 1;",
         "(a, b)", "and", "so", "on.", "\n", "\n\n", "東京", "résumé", "👍",
         "if", "error", "path", "tests", "pass", "a < b", "for"]

TOOL_NAMES = ["search", "open_file", "run_tests", "edit_file", "list_dir",
              "fetch_page", "shell", "ask_user"]


class _Text:
    """Pieces of a pool of words at random offsets: fast to cut."""

    def __init__(self, seed, words=WORDS, spaced=True):
        rnd = random.Random(seed)
        parts, n = [], 0
        while n < 1 << 20:
            w = rnd.choice(words)
            if spaced or not w.startswith("\n"):
                w += " "
            parts.append(w)
            n += len(w)
        self.pool = "".join(parts)
        self.rnd = rnd
        # characters per byte of JSON text, so that n counts bytes
        self.scale = len(self.pool) / len(json.dumps(self.pool, ensure_ascii=False).encode())

    def __call__(self, n):
        """About n bytes of JSON string text."""
        n = max(1, int(n * self.scale))
        start = self.rnd.randrange(0, len(self.pool) - n) if n < len(self.pool) else 0
        out = self.pool[start:start + n]
        while len(out) < n:
            out += self.pool[:n - len(out)]
        return out


def _tools(text):
    return [{"type": "function", "function": {
        "name": name, "description": text(160),
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "where"},
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1},
            "ratio": {"type": "number"}}, "required": ["path"]}}}
        for name in TOOL_NAMES]


def session(turns, text_scale=1, seed=1234):
    """An agent session: the messages (tools on the system message, as the
    reference takes them) for encode_messages(messages, "thinking").

    Each turn: a user message; an assistant step (reasoning, content, two
    tool calls with JSON-text arguments) and the two results; a second step
    with one call and its result; the answer.  Every text is text_scale
    times its base length: at 1, about 6 KB of JSON a turn (200 turns are
    about 1.2 MB); at 8 (text-heavy), about 42 KB.
    """
    base = _Text(seed)

    def text(n):
        return base(n * text_scale)
    messages = [{"role": "system", "content": base(2000), "tools": _tools(base)}]
    call = 0
    for _ in range(turns):
        messages.append({"role": "user", "content": text(300)})
        for step in (0, 1):
            calls = []
            for k in range(2 if step == 0 else 1):
                args = {"path": "src/" + text(30), "query": text(120),
                        "limit": (call + k) % 50 + 1, "ratio": 0.25}
                calls.append({"id": "call_%d" % (call + k), "type": "function",
                              "function": {"name": TOOL_NAMES[(call + k) % 8],
                                           "arguments": json.dumps(args, ensure_ascii=False)}})
            messages.append({"role": "assistant",
                             "reasoning_content": text(600 if step == 0 else 300),
                             "content": text(120), "tool_calls": calls})
            for _ in calls:
                messages.append({"role": "tool", "tool_call_id": "call_%d" % call,
                                 "content": text(800)})
                call += 1
        messages.append({"role": "assistant", "reasoning_content": text(300),
                         "content": text(500)})
    messages.append({"role": "user", "content": text(300)})
    return messages


DSML = "｜DSML｜"
EOS = "<｜end▁of▁sentence｜>"
SPECIAL_TOKENS = (EOS, "<｜begin▁of▁sentence｜>", "</think>", "<think>")


def agent_completion(units, seed=99):
    """A thinking-mode completion in prose: reasoning (1200 characters a
    unit), </think>, content (300), a calls block with one invoke a unit,
    EOS."""
    text = _Text(seed, PROSE)
    parts = [text(1200 * units), "</think>", text(300 * units),
             "\n\n<%s calls>\n" % DSML]
    for i in range(units):
        parts.append('<%s invoke name="%s">\n<%s parameter name="query" string="true">'
                     % (DSML, TOOL_NAMES[i % 8], DSML))
        parts.append(text(300).replace("<", "≤"))
        parts.append('</%s parameter>\n<%s parameter name="options" string="false">'
                     '{"limit": %d, "exact": true, "ratio": 0.5, "tags": ["a", "b"]}'
                     '</%s parameter>\n</%s invoke>\n' % (DSML, DSML, i % 50 + 1, DSML, DSML))
    parts.append("</%s calls>%s" % (DSML, EOS))
    return "".join(parts)


def tokenize(text, max_bytes=4):
    """Tokens as a detokenizer hands them out: each special token whole,
    other text in pieces of at most max_bytes UTF-8 bytes that end between
    characters (a '<' starts a new piece)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        for sp in SPECIAL_TOKENS:
            if text.startswith(sp, i):
                out.append(sp)
                i += len(sp)
                break
        else:
            j, size = i, 0
            while j < n:
                c = len(text[j].encode("utf-8"))
                if j > i and (size + c > max_bytes or text[j] == "<"):
                    break
                size += c
                j += 1
                if size >= max_bytes:
                    break
            out.append(text[i:j])
            i = j
    return out


def token_stream(tokens_wanted):
    """About tokens_wanted tokens of agent_completion."""
    per_unit = len(tokenize(agent_completion(8))) / 8.0
    return tokenize(agent_completion(max(1, round(tokens_wanted / per_unit))))
