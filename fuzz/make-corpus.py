#!/usr/bin/env python3
"""make-corpus.py - writes the fuzz targets' seed corpora from testdata/.

    fuzz/make-corpus.py            rewrite fuzz/corpus/<target>/seed-*
    fuzz/make-corpus.py --check    exit 1 when the seeds are out of date

Only files named seed-* are written or removed; the inputs kept beside
them are left alone: regress-* (inputs that found a bug) and fuzz-* (a
minimized set of what fuzzing runs reached, libFuzzer -merge=1).  The choice of
cases is deterministic: the same testdata gives the same seeds.  Seeds
are small (cases up to MAX_BYTES) so that the corpus stays modest.

Seed layouts follow the targets' input formats (see fuzz/fuzz_options.h,
fuzz/fuzz_emit.c, fuzz/fuzz_detect.c and fuzz/fuzz_grammar.c).
"""
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "..", "testdata")
CORPUS = os.path.join(HERE, "corpus")
MAX_BYTES = 3000
PER_FILE = 60  # cases taken from each golden file and target

# option byte 0
KEEP_THINKING, NO_BOS, STRICT, GUARD, SEGMENTS = 1, 2, 4, 8, 16
VARIANT = 32
FAIL_ONE, FAIL_FROM = 64, 128
# option byte 1 (the profile: bit 1 here, and bit 0 of byte 3)
THINKING, PROFILE_LOW = 1, 2
PROFILES = {"v41": 0, "prerelease": 1, "v4": 2, "v32": 3}
EFFORT_NAME, EFFORT_LEVEL = 4, 8
CONTEXT = 64
EFFORT_NAMES = ["low", "high", "max", "xhigh"]


def dumps(v):
    return json.dumps(v, ensure_ascii=False).encode("utf-8")


def load(name):
    with open(os.path.join(TESTDATA, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def pick(rows, key):
    """Every n-th row whose `key` text is small, up to PER_FILE of them."""
    small = [r for r in rows if len(r[key].encode("utf-8")) <= MAX_BYTES]
    step = max(1, len(small) // PER_FILE)
    return small[::step][:PER_FILE]


def option_bytes(case, profile, n):
    """The four option bytes that render `case` as the golden runner does,
    varied by the seed number n (guard, segments, injected failures)."""
    b0 = b1 = b2 = 0
    if case.get("drop_thinking") is False:
        b0 |= KEEP_THINKING
    if case.get("add_default_bos_token") is False:
        b0 |= NO_BOS
    if n % 3 == 0:
        b0 |= GUARD
    if n % 4 == 1:
        b0 |= SEGMENTS
    if n % 5 == 2:
        b0 |= FAIL_ONE
    elif n % 5 == 4:
        b0 |= FAIL_FROM
    if case.get("thinking_mode") == "thinking":
        b1 |= THINKING
    if PROFILES[profile] & 1:
        b1 |= PROFILE_LOW
    effort = case.get("reasoning_effort")
    if isinstance(effort, str) and effort in EFFORT_NAMES:
        b1 |= EFFORT_NAME
        b2 = EFFORT_NAMES.index(effort)
    elif isinstance(effort, int) and not isinstance(effort, bool) and 0 <= effort + 20 < 256:
        b1 |= EFFORT_LEVEL
        b2 = effort + 20
    b3 = ((n * 37) % 256 & 0xFE) | PROFILES[profile] >> 1
    return bytearray([b0, b1, b2, b3])


RENDER_FILES = (("render.jsonl", "v41"), ("developer-render.jsonl", "v41"),
                ("prerelease-render.jsonl", "prerelease"), ("v4-render.jsonl", "v4"),
                ("v32-render.jsonl", "v32"))


def render_seeds():
    out = []
    for name, profile in RENDER_FILES:
        for n, row in enumerate(pick(load(name), "case")):
            case = json.loads(row["case"])
            head = option_bytes(case, profile, n)
            messages = list(case["messages"])
            if case.get("tools") and messages:
                messages[0] = dict(messages[0], tools=case["tools"])
            if n % 2 == 0:
                # the whole case file through dsml_render_case
                head[0] |= VARIANT
                out.append(bytes(head) + row["case"].encode("utf-8"))
            else:
                body = dumps(messages)
                if case.get("context"):
                    head[1] |= CONTEXT
                    body += b"\xff" + dumps(case["context"])
                out.append(bytes(head) + body)
    return out


def request_seeds():
    out = []
    switches = [
        lambda on: {"thinking_mode": "thinking" if on else "chat"},
        lambda on: {"chat_template_kwargs": {"thinking": on}},
        lambda on: {"chat_template_kwargs": {"thinking": {"enabled": on}}},
        lambda on: {"thinking": {"type": "enabled" if on else "disabled"}},
    ]
    for name, profile in RENDER_FILES:
        for n, row in enumerate(pick(load(name), "case")):
            case = json.loads(row["case"])
            head = option_bytes(case, profile, n)
            head[1] &= ~(THINKING | EFFORT_NAME | EFFORT_LEVEL) & 0xFF
            body = {"model": "deepseek-v4.1", "messages": case["messages"]}
            if case.get("tools"):
                body["tools"] = case["tools"]
            if "reasoning_effort" in case:
                body["reasoning_effort"] = case["reasoning_effort"]
            body.update(switches[n % 4](case.get("thinking_mode") == "thinking"))
            if n % 7 == 3:
                body["stream"] = True
                body["temperature"] = 0.6
            data = bytes(head) + dumps(body)
            if case.get("context"):
                head[1] |= CONTEXT
                data = bytes(head) + dumps(body) + b"\xff" + dumps(case["context"])
            out.append(data)
    return out


# The thinking switches and fields clients send beside the reference's:
# enable_thinking, a boolean thinking, reasoning_effort "none" and the
# platform's effort names, vLLM's `reasoning`, a prefix that is no bool,
# tools in the leading system message, and fields that disagree.
CLIENT_FIELDS = [
    {"chat_template_kwargs": {"enable_thinking": True}},
    {"chat_template_kwargs": {"enable_thinking": False, "thinking": False}},
    {"chat_template_kwargs": {"enable_thinking": True, "thinking": False}},
    {"thinking": True},
    {"thinking": False, "reasoning_effort": "none"},
    {"thinking": {"type": "enabled"}, "reasoning_effort": "none"},
    {"reasoning_effort": "none"},
    {"reasoning_effort": "medium"},
    {"reasoning_effort": "minimal", "thinking_mode": "thinking"},
    {"reasoning_effort": "xhigh", "thinking": {"type": "enabled", "budget_tokens": 8}},
    {"reasoning_effort": "ultra"},
]
CLIENT_MESSAGES = [
    [{"role": "user", "content": "Weather?"},
     {"role": "assistant", "content": "Sure.", "reasoning": "Plan.",
      "tool_calls": [{"id": "call_1", "type": "function",
                      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
     {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
    [{"role": "user", "content": "Weather?"},
     {"role": "assistant", "content": "Sure.", "reasoning": "Plan.", "reasoning_content": "Other.",
      "tool_calls": [{"id": "call_1", "type": "function",
                      "function": {"name": "get_weather", "arguments": "{}"}}]},
     {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
    [{"role": "user", "content": "Weather?"},
     {"role": "assistant", "content": "Sure.",
      "tool_calls": [{"id": "call_1", "type": "function",
                      "function": {"name": "get_weather", "arguments": "{}"}}]},
     {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
    [{"role": "system", "content": "S", "tools": [
        {"type": "function", "namespace": "a", "function": {"name": "f"}},
        {"type": "function", "namespace": "b", "function": {"name": "f"}}]},
     {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "a", "prefix": "no"}],
]


def client_bodies():
    for n, fields in enumerate(CLIENT_FIELDS):
        body = {"model": "deepseek-v4.1", "messages": CLIENT_MESSAGES[n % len(CLIENT_MESSAGES)],
                "tools": [{"type": "function", "function": {"name": "get_weather"}}]}
        if n % 3 == 2:
            del body["tools"]
        if n % 4 == 3:
            body["tool_choice"] = {"type": "function", "function": {"name": "f"}}
        body.update(fields)
        yield n, body


def request_client_seeds():
    return [bytes([n % 5 * 8, n % 2 * 2, n % 4, 0]) + dumps(body) for n, body in client_bodies()]


def chat_messages(case):
    """The case's messages with its tools on the first, as a chat body has them."""
    messages = list(case["messages"]) if isinstance(case.get("messages"), list) else []
    if case.get("tools") and messages and isinstance(messages[0], dict):
        messages[0] = dict(messages[0], tools=case["tools"])
    return messages


def as_parts(content, text_type, image):
    if not isinstance(content, list):
        return content
    return [{"type": text_type, "text": p.get("text")} if isinstance(p, dict)
            and p.get("type") == "text" else image(p) if isinstance(p, dict)
            and p.get("type") == "image_url" else p for p in content]


def anthropic_image(p):
    u = p.get("image_url")
    u = u.get("url") if isinstance(u, dict) else u
    if isinstance(u, str) and u.startswith("data:") and ";base64," in u:
        media, data = u[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": u}}


def responses_image(p):
    u = p.get("image_url")
    return {"type": "input_image", "image_url": u.get("url") if isinstance(u, dict) else u}


def arguments(call):
    fn = call.get("function") if isinstance(call, dict) else None
    args = fn.get("arguments") if isinstance(fn, dict) else None
    try:
        return fn, json.loads(args) if isinstance(args, str) else args
    except ValueError:
        return fn, args


def anthropic_body(case, n):
    """An Anthropic Messages body saying what the case says, as far as it can
    (best effort: the seeds need not render)."""
    body = {"model": "m", "max_tokens": 4096, "messages": []}
    messages = chat_messages(case)
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
        first = messages.pop(0)
        body["system"] = as_parts(first.get("content"), "text", anthropic_image)
        if first.get("tools"):
            body["tools"] = [dict((("input_schema" if k == "parameters" else k), v)
                                  for k, v in (t.get("function") or {}).items())
                             if isinstance(t, dict) else t for t in first["tools"]]
    for m in messages:
        if not isinstance(m, dict):
            body["messages"].append(m)
            continue
        role = m.get("role")
        if role == "assistant":
            blocks = []
            if m.get("reasoning_content"):
                blocks.append({"type": "thinking", "thinking": m["reasoning_content"],
                               "signature": "s"})
            if m.get("content"):
                blocks.append({"type": "text", "text": m["content"]})
            for c in m.get("tool_calls") or []:
                fn, args = arguments(c)
                blocks.append({"type": "tool_use", "id": c.get("id") if isinstance(c, dict)
                               else None, "name": fn.get("name") if isinstance(fn, dict)
                               else None, "input": args})
            body["messages"].append({"role": "assistant", "content": blocks})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.get("tool_call_id"),
                     "content": as_parts(m.get("content"), "text", anthropic_image)}
            if n % 5 == 1:
                block["is_error"] = True
            last = body["messages"][-1] if body["messages"] else None
            if (isinstance(last, dict) and last.get("role") == "user"
                    and isinstance(last.get("content"), list)
                    and last["content"] and last["content"][-1].get("type") == "tool_result"):
                last["content"].append(block)
            else:
                body["messages"].append({"role": "user", "content": [block]})
        else:
            body["messages"].append({"role": role, "content": as_parts(
                m.get("content"), "text", anthropic_image)})
    if case.get("thinking_mode") in ("chat", "thinking"):
        body["thinking"] = {"type": "enabled" if case["thinking_mode"] == "thinking"
                            else "disabled", "budget_tokens": 2048}
    if "reasoning_effort" in case:
        body["output_config"] = {"effort": case["reasoning_effort"]}
    if n % 4 == 1 and body.get("tools"):
        body["tool_choice"] = {"type": ["auto", "any", "none", "tool"][n % 3],
                               "disable_parallel_tool_use": n % 2 == 0}
    if n % 7 == 3:
        body["stop_sequences"] = ["END"]
        body["temperature"] = 0.6
    return body


def responses_body(case, n):
    """An OpenAI Responses body saying what the case says, as far as it can."""
    body = {"model": "m", "store": False, "input": []}
    for m in chat_messages(case):
        if not isinstance(m, dict):
            body["input"].append(m)
            continue
        role = m.get("role")
        if m.get("tools") and "tools" not in body:
            body["tools"] = [dict(type="function", **(t.get("function") or {}))
                             if isinstance(t, dict) else t for t in m["tools"]]
        if role == "assistant":
            if m.get("reasoning_content"):
                key = "content" if n % 2 else "summary"
                body["input"].append({"type": "reasoning", key: [
                    {"type": "reasoning_text" if n % 2 else "summary_text",
                     "text": m["reasoning_content"]}]})
            if m.get("content") or not m.get("tool_calls"):
                body["input"].append({"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": m.get("content")}]})
            for c in m.get("tool_calls") or []:
                fn, _ = arguments(c)
                fn = fn if isinstance(fn, dict) else {}
                body["input"].append({"type": "function_call", "call_id": c.get("id")
                                      if isinstance(c, dict) else None,
                                      "name": fn.get("name"), "arguments": fn.get("arguments")})
        elif role == "tool":
            body["input"].append({"type": "function_call_output", "call_id": m.get("tool_call_id"),
                                  "output": as_parts(m.get("content"), "input_text",
                                                     responses_image)})
        else:
            body["input"].append({"role": role, "content": as_parts(
                m.get("content"), "input_text", responses_image)})
    if "reasoning_effort" in case:
        body["reasoning"] = {"effort": case["reasoning_effort"], "summary": "auto"}
    if n % 4 == 1 and body.get("tools"):
        body["tool_choice"] = ["auto", "required", "none"][n % 3]
        body["parallel_tool_calls"] = n % 2 == 0
    if n % 6 == 5:
        body["text"] = {"format": {"type": "json_schema", "name": "r",
                                   "schema": {"type": "object"}, "strict": True}}
    if n % 7 == 3:
        body["max_output_tokens"] = 100
        body["instructions"] = "Be brief."
    return body


def api_seeds(make):
    out = []
    for name, profile in RENDER_FILES:
        for n, row in enumerate(pick(load(name), "case")):
            case = json.loads(row["case"])
            if not isinstance(case, dict):
                continue
            head = option_bytes(case, profile, n)
            head[1] &= ~(EFFORT_NAME | EFFORT_LEVEL) & 0xFF
            data = bytes(head) + dumps(make(case, n))
            if case.get("context"):
                head[1] |= CONTEXT
                data = bytes(head) + dumps(make(case, n)) + b"\xff" + dumps(case["context"])
            out.append(data)
    return out


EMIT_EXTRA = [
    b'1e400', b'-1e400', b'[1e400, -1e-400, 0.0, -0.0, -0]', b'5e-324',
    b'1.7976931348623157e308', b'123456789012345678901234567890',
    b'[1.0, 1e16, 1E+2, 0.1, 100.0, 1e-5, 0.0001, 12345678.9]',
    b'{"a": 1, "b": 2, "a": 3}', b'{"a": {"x": 1}, "a": [], "a": {"y": 2}}',
    b'"\\u0001\\u001f\\u007f\\u2028\\ud83d\\ude00 \\/ \\" \\\\"',
    '"<｜DSML｜ invoke name=\\"x\\"> é 世界 😀"'.encode("utf-8"),
    b'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
    b'{"": "", "\\u00e9": null, "e\\u0301": true, "\\u00e9": false}',
    b' \t\n\r{ "k" : [ true , false , null ] } \n',
]


def emit_seeds():
    out = []
    for i, extra in enumerate(EMIT_EXTRA):
        out.append(bytes([(i * 17) % 256 & 0xF3]) + extra)
    n = 0
    for name in ("render.jsonl", "prerelease-render.jsonl"):
        for row in pick(load(name), "case"):
            case = json.loads(row["case"])
            b0 = (n % 3) << 2 | (n * 5 % 16) << 4  # failures, k
            out.append(bytes([b0 & 0xFC]) + row["case"].encode("utf-8"))
            for m in case["messages"]:
                for tc in m.get("tool_calls") or []:
                    args = (tc.get("function") or {}).get("arguments")
                    if isinstance(args, str) and len(args) < MAX_BYTES:
                        out.append(b"\x00" + args.encode("utf-8"))
            n += 1
    return out


def detect_seeds():
    out = []
    for name, profile in (("parse.jsonl", "v41"), ("prerelease-parse.jsonl", "prerelease"),
                          ("v4-parse.jsonl", "v4"), ("v32-parse.jsonl", "v32")):
        for n, row in enumerate(pick(load(name), "text")):
            text = row["text"].encode("utf-8")
            b0 = (1 if row.get("thinking_mode") == "thinking" else 0)
            b0 |= (2 if PROFILES[profile] & 1 else 0)
            b0 |= (4 if n % 2 else 0)          # strict / lenient
            b1 = (1 << (n % 9)) & 0xFF          # one policy, or none
            b2 = (n % 3) | ((n % 8) << 2)      # failures, largest chunk
            b2 |= (PROFILES[profile] >> 1) << 5
            tail = b""
            names = re.findall(r'invoke name="([^"]*)"', row["text"])
            if n % 3 == 1 and names:
                b0 |= 8                         # declared tools
                tools = [{"type": "function", "function": {"name": x}}
                         for x in sorted(set(names))[: max(1, len(set(names)) - n % 2)]]
                tail = b"\xff" + dumps(tools)
            head = bytes([b0, b1, b2, (n * 29) % 256, (n * 71) % 256])
            out.append(head + text + tail)
    return out


def recover_seeds():
    """What models write (real outputs, peers' cases, prose that quotes
    DSML) for the detector's recoveries: the completion, 0xFE and the
    recoveries byte (recover mode, or one recovery in lenient mode), the
    declared tools after 0xFF."""
    out = []
    rows = load("real-outputs.jsonl") + load("prose-dsml.jsonl") + pick(load("peer-cases.jsonl"), "text")
    for n, row in enumerate(rows):
        if len(row["text"].encode("utf-8")) > MAX_BYTES:
            continue
        b0 = 1 if row.get("thinking_mode") == "thinking" else 0
        b2 = (n % 3) | ((n % 8) << 2)           # failures, largest chunk
        cfg = 1 if n % 4 == 0 else 2 << (n % 6)  # recover mode, or one recovery
        tail = b""
        if row.get("declared_tools"):
            b0 |= 8
            tools = [{"type": "function", "function": {"name": x}} for x in row["declared_tools"]]
            tail = b"\xff" + dumps(tools)
        head = bytes([b0, 0, b2, (n * 29) % 256, (n * 71) % 256])
        out.append(head + row["text"].encode("utf-8") + bytes([0xFE, cfg]) + tail)
    return out


def serve_seeds():
    """A request body of the completion's thinking mode (its invoke names as
    tools, a tool_choice, parallel calls on or off), 0xFF, the completion."""
    out = []
    choices = [None, "auto", "none", "required", "named"]
    for n, row in enumerate(pick(load("parse.jsonl"), "text")):
        body = {"model": "deepseek-v4.1", "thinking_mode": row.get("thinking_mode") or "chat",
                "messages": [{"role": "user", "content": "Hi"}]}
        names = sorted(set(re.findall(r'invoke name="([^"]*)"', row["text"])))
        names = [x for x in names if "::" not in x]
        if names:
            body["tools"] = [{"type": "function", "function": {"name": x}} for x in names]
            choice = choices[n % len(choices)]
            if choice == "named":
                body["tool_choice"] = {"type": "function", "function": {"name": names[-1]}}
            elif choice is not None:
                body["tool_choice"] = choice
            if n % 4 == 1:
                body["parallel_tool_calls"] = False
        b0 = (n % 8) | ((n % 4) << 3) | ((n * 3 % 8) << 5)
        out.append(bytes([b0, (n * 53) % 256]) + dumps(body) + b"\xff" + row["text"].encode("utf-8"))
    completion = "Plan.</think>Sure.<｜end▁of▁sentence｜>".encode("utf-8")
    for n, body in client_bodies():
        out.append(bytes([n % 8, n * 53 % 256]) + dumps(body) + b"\xff" + completion)
    # the other APIs (byte 1 / 3 % 3: 1 Anthropic Messages, 2 Responses)
    call = ("Look.</think>Checking.\n\n<｜DSML｜calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
            "<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n"
            "</｜DSML｜invoke>\n</｜DSML｜calls><｜end▁of▁sentence｜>").encode("utf-8")
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    anthropic = {"model": "m", "max_tokens": 64, "thinking": {"type": "enabled", "budget_tokens": 32},
                 "messages": [{"role": "user", "content": "Weather?"}],
                 "tools": [{"name": "get_weather", "input_schema": schema}]}
    responses = {"model": "m", "input": "Weather?", "reasoning": {"effort": "high"},
                 "tools": [{"type": "function", "name": "get_weather", "parameters": schema}]}
    for n, b0 in enumerate([0, 4, 5, 4 | (2 << 3) | (1 << 5)]):
        for k, body in ((3, anthropic), (6, responses)):
            out.append(bytes([b0, k + 9 * n]) + dumps(body) + b"\xff" + call)
            out.append(bytes([b0, k + 9 * n]) + dumps(body) + b"\xff" + completion)
    return out


# Schemas of every keyword the grammar supports, and some it refuses.
GRAMMAR_SCHEMAS = [
    {"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "number"},
                                      "i": {"type": ["integer", "null"]}, "b": {"type": "boolean"}},
     "required": ["s"]},
    {"properties": {"e": {"enum": ["a", 1, None, [1.0]]}, "k": {"const": {"x": "y"}},
                    "u": {"anyOf": [{"type": "string", "enum": ["x"]},
                                    {"type": "array", "items": {"type": "integer"}}]}}},
    {"type": "object", "properties": {"o": {"type": "object", "properties": {
        "p": {"type": "string"}, "q": {"type": "object", "properties": {"r": {}},
                                       "required": ["r"]}}, "required": ["q"]},
        "free": {"type": "object"}, "arr": {"type": "array"}, "no": False},
     "required": ["o", "z"]},
    {"properties": {"n": {"type": "integer", "minimum": 0}}},
    {"properties": {"x": {"oneOf": [{}]}, "y": {"$ref": "#/a"}}},
]


def grammar_seeds():
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "grammar"))
    import grammarlib
    out = []
    n = 0
    for name, pre, b1 in (("parse.jsonl", False, 0), ("prerelease-parse.jsonl", True, 0),
                          ("v4-parse.jsonl", False, 4), ("v32-parse.jsonl", False, 8)):
        rows = [r for r in load(name) if r["expect"].get("message", {}).get("tool_calls")]
        for row in rows[:: max(1, len(rows) // 12)][:12]:
            tools = grammarlib.tools_for(row["expect"]["message"]["tool_calls"])
            if tools is None:
                continue
            body = dumps(tools)
            if len(body) > MAX_BYTES:
                continue
            b0 = (n % 4) | (4 if row.get("thinking_mode") == "thinking" else 0)
            b0 |= (8 if pre else 0) | ((n % 4) << 4) | (64 if n % 5 == 1 else 0)
            b0 |= 128 if n % 7 == 3 else 0
            tail = b""
            if (n % 4) == 3:
                tail = b"\xff" + tools[0]["function"]["name"].encode("utf-8")
            out.append(bytes([b0, n % 3 | b1, (n * 13) % 256, n % 256]) + body + tail)
            n += 1
    for k, schema in enumerate(GRAMMAR_SCHEMAS):
        tools = [{"type": "function", "function": {"name": "f", "parameters": schema}},
                 {"type": "function", "namespace": "ns", "function": {"name": "g"}}]
        out.append(bytes([k % 4 | 0x20, k % 3, 7 * k, k]) + dumps(tools))
    return out


TARGETS = {
    "render": render_seeds,
    "request": lambda: request_seeds() + request_client_seeds(),
    "anthropic": lambda: api_seeds(anthropic_body),
    "responses": lambda: api_seeds(responses_body),
    "emit": emit_seeds,
    "detect": lambda: detect_seeds() + recover_seeds(),
    "serve": serve_seeds,
    "grammar": grammar_seeds,
}


def main():
    check = "--check" in sys.argv[1:]
    stale = False
    for target, make in TARGETS.items():
        d = os.path.join(CORPUS, target)
        os.makedirs(d, exist_ok=True)
        want = {}
        for data in make():
            want["seed-" + hashlib.sha1(data).hexdigest()[:16]] = data
        have = {f for f in os.listdir(d) if f.startswith("seed-")}
        if check:
            if have != set(want):
                print(f"{d}: seeds out of date", file=sys.stderr)
                stale = True
            continue
        for f in have - set(want):
            os.remove(os.path.join(d, f))
        for f, data in want.items():
            with open(os.path.join(d, f), "wb") as fh:
                fh.write(data)
        size = sum(len(v) for v in want.values())
        print(f"{target}: {len(want)} seeds, {size} bytes")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
