"""Random conversations and completions for parity testing.

gen_case(rng) returns one JSON-compatible case:

    {"kind": "render", "messages": [...], "thinking_mode": ..., "context": ...,
     "drop_thinking": ..., "add_default_bos_token": ..., "reasoning_effort": ...}
    {"kind": "parse", "text": "...", "thinking_mode": ...}

The generator aims at every rule of the protocol (PROTOCOL.md sections 3 to
5): images (every block shape, nested in tool results, placeholders where
they are refused), tool-message merging and result sorting, drop-thinking,
effort names and levels (valid and not), tasks, latest_reminder,
mid-conversation system messages, response formats, context, tool
namespaces (string, object, function key, "ns::" prefix, conflicts),
argument decoding (objects, JSON text, double-encoded, non-objects, number
texts), wo_eos, unknown roles and wrong types; and completions built from
rendered assistant turns, then damaged (missing tags, EOS or </think>,
special tokens, duplicate parameters, trailing text, cuts, splices).

Run as a script to print N cases: gen.py [N] [SEED].
"""

import json
import random
import sys

BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"
THINK = "<think>"
THINK_END = "</think>"
DSML = "｜DSML｜"
IMAGE = "<｜deepseek_image｜>"
CALLS_OPEN = "\n\n<" + DSML + " calls>"

WORDS = ["alpha", "beta", "search", "report", "weather", "city", "total",
         "结果", "東京", "서울", "é", "ß", "🚀", "👍🏽", "\u200b", "\\", "\"",
         "'", "{", "}", "[", "]", ":", ",", "<", ">", "&", "%", "{x}", "$"]
ODD = ["\n", "\n\n", "\t", "\r", "\u0001", "\u001f", "\u007f", " ", "  ",
       "\u2028", "\ufeff", "\U0001f1ef\U0001f1f5"]
SPECIAL = [BOS, EOS, THINK, THINK_END, DSML, IMAGE, "<image>", "</image>",
           "<｜User｜>", "<｜Assistant｜>", "<｜System｜>", CALLS_OPEN,
           "<" + DSML + " invoke", "</" + DSML + " parameter>", "|DSML|",
           "<tool_result>"]
TASKS = ["action", "query", "authority", "domain", "title", "read_url"]
EFFORT_NAMES = ["low", "high", "max"]
NUMBERS = [0, 1, -1, 7, 100, 2 ** 53 + 1, 18446744073709551616, -2 ** 70,
           1.0, 0.5, -0.0, 1e-07, 1e16, 1e+21, 123.456, 3.14159, 1e300, 2.5e-5]


def text(rng, n=None, special=0.008):
    """A short string mixing words, odd characters and (rarely) tokens."""
    if n is None:
        n = rng.choice([0, 1, 1, 2, 3, 5, 8])
    parts = []
    for _ in range(n):
        r = rng.random()
        if r < special:
            parts.append(rng.choice(SPECIAL))
        elif r < 0.2:
            parts.append(rng.choice(ODD))
        else:
            parts.append(rng.choice(WORDS))
        if rng.random() < 0.5:
            parts.append(" ")
    return "".join(parts)


def ident(rng):
    base = rng.choice(["get", "search", "open", "run", "calc", "file",
                       "weather", "x", "f_1", "Tool", "ns-a", "名前"])
    if rng.random() < 0.5:
        base += "_" + rng.choice(["now", "all", "v2", "it"])
    return base


def json_value(rng, depth=0):
    r = rng.random()
    if depth > 2 or r < 0.3:
        return text(rng, rng.randint(0, 3))
    if r < 0.5:
        return rng.choice(NUMBERS)
    if r < 0.6:
        return rng.choice([True, False, None])
    if r < 0.8:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {ident(rng): json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


# ---------------------------------------------------------------------------
# Tools and calls
# ---------------------------------------------------------------------------

def qualified(rng, ns_rate=0.3):
    """A tool name with or without a namespace prefix (sometimes invalid)."""
    name = ident(rng)
    r = rng.random()
    if r < ns_rate:
        return ident(rng) + "::" + name
    if r < ns_rate + 0.004:
        return "a::b::" + name          # '::' inside the bare name
    if r < ns_rate + 0.008:
        return "::" + name              # empty namespace
    return name


def tool_schema(rng):
    function = {"name": qualified(rng)}
    if rng.random() < 0.8:
        function["description"] = text(rng)
    if rng.random() < 0.7:
        props = {ident(rng): {"type": rng.choice(["string", "integer", "number",
                                                   "object", "array", "boolean"]),
                               "description": text(rng, 2)}
                 for _ in range(rng.randint(0, 3))}
        function["parameters"] = {"type": "object", "properties": props,
                                  "required": list(props)[:1]}
    if rng.random() < 0.1:
        function["strict"] = rng.choice([True, False])
    if rng.random() < 0.1:
        function["default"] = rng.choice(NUMBERS)
    tool = {"type": "function", "function": function}
    r = rng.random()
    if r < 0.15:
        tool["namespace"] = ident(rng)
    elif r < 0.25:
        ns = {"name": ident(rng)}
        if rng.random() < 0.6:
            ns["description"] = text(rng, rng.randint(0, 3))
        tool["namespace"] = ns
    elif r < 0.3:
        function["namespace"] = ident(rng)
    elif r < 0.32:
        tool["namespace"] = None
    if rng.random() < 0.004:
        del tool["function"]["name"]
    if rng.random() < 0.002:
        del tool["function"]
    if rng.random() < 0.1 and "function" in tool and "name" in tool["function"]:
        # pull the keys around: the position of "name" and "description"
        items = list(tool["function"].items())
        rng.shuffle(items)
        tool["function"] = dict(items)
    return tool


def arguments(rng):
    args = {ident(rng): json_value(rng) for _ in range(rng.randint(0, 4))}
    r = rng.random()
    if r < 0.45:
        return args
    if r < 0.75:
        return json.dumps(args, ensure_ascii=rng.random() < 0.3)
    if r < 0.82:
        return json.dumps(json.dumps(args))          # double-encoded
    if r < 0.87:
        return json.dumps(json_value(rng))           # a non-object
    if r < 0.92:
        return text(rng)                             # not JSON at all
    if r < 0.95:
        return json.dumps(json.dumps(json.dumps(args)))  # triple-encoded
    return rng.choice([None, 5, [1, 2], "", "{}", "null"])


def tool_call(rng, idx):
    call = {"type": "function",
            "function": {"name": qualified(rng), "arguments": arguments(rng)}}
    r = rng.random()
    if r < 0.7:
        call["id"] = "call_%d" % rng.randint(0, 6)
    elif r < 0.8:
        call["function"]["id"] = "fn_%d" % rng.randint(0, 6)
    r = rng.random()
    name = call["function"]["name"]
    ns = name.partition("::")[0] if "::" in name and rng.random() < 0.9 else ident(rng)
    if r < 0.1:
        call["namespace"] = ns
    elif r < 0.15:
        call["function"]["namespace"] = ns
    if rng.random() < 0.003:
        del call["function"]["arguments"]
    return call


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------

def image_block(rng):
    r = rng.random()
    if r < 0.35:
        return {"type": "image_url", "image_url": {"url": "https://e/%d.png" % rng.randint(0, 9)}}
    if r < 0.5:
        return {"type": "image_url", "image_url": "data:image/png;base64,AAAA"}
    if r < 0.65:
        return {"type": "image", "source": {"type": "base64", "data": "QUJD"}}
    if r < 0.75:
        return {"type": "image", "url": "file:///tmp/x.jpg", "detail": "low"}
    if r < 0.82:
        return {"type": "image", "data": "QUJD"}
    if r < 0.97:
        return {"type": "image_url", "image_url": {"url": "a.png"}, "detail": "high"}
    if r < 0.98:
        return {"type": "image_url", "image_url": {"url": ""}}  # no source
    if r < 0.99:
        return {"type": "image"}                                # no source
    if r < 0.995:
        return {"type": "image_url", "image_url": None}
    return {"type": "image_url"}


def content_blocks(rng, nested_ok=True):
    blocks = []
    for _ in range(rng.randint(0, 4)):
        r = rng.random()
        if r < 0.5:
            block = {"type": "text", "text": text(rng)}
            if rng.random() < 0.005:
                block["text"] = "a" + IMAGE
            if rng.random() < 0.02:
                del block["text"]
            blocks.append(block)
        elif r < 0.8:
            blocks.append(image_block(rng))
        elif r < 0.85 and nested_ok:
            blocks.append({"type": "tool_result", "tool_use_id": "call_1",
                           "content": content_blocks(rng, False)})
        elif r < 0.9:
            blocks.append({"type": rng.choice(["audio", "file", "video"])})
        elif r < 0.905:
            blocks.append(text(rng, 1))        # not an object
        else:
            blocks.append({"type": "text", "text": text(rng), "cache": True})
    return blocks


def user_message(rng):
    msg = {"role": "user"}
    r = rng.random()
    if r < 0.65:
        msg["content"] = text(rng)
    elif r < 0.85:
        msg["content"] = content_blocks(rng)
    elif r < 0.9:
        msg["content_blocks"] = content_blocks(rng)
    elif r < 0.91:
        msg["content"] = None
    elif r < 0.915:
        msg["content"] = "see " + IMAGE
    # else: no content at all
    if rng.random() < 0.08:
        msg["task"] = rng.choice(TASKS + ["bogus"] if rng.random() < 0.1 else TASKS)
    if rng.random() < 0.03:
        msg["tools"] = [tool_schema(rng)]
    if rng.random() < 0.02:
        msg["name"] = ident(rng)
    return msg


def assistant_message(rng):
    msg = {"role": "assistant"}
    r = rng.random()
    if r < 0.8:
        msg["content"] = text(rng)
    elif r < 0.9:
        msg["content"] = None
    if rng.random() < 0.5:
        msg["reasoning_content"] = text(rng) if rng.random() < 0.995 else IMAGE
    elif rng.random() < 0.1:
        msg["reasoning_content"] = None
    if rng.random() < 0.4:
        n = rng.randint(0, 4)
        msg["tool_calls"] = [tool_call(rng, i) for i in range(n)]
    if rng.random() < 0.06:
        msg["wo_eos"] = rng.choice([True, False, 1, 0])
    if rng.random() < 0.04:
        msg["task"] = rng.choice(TASKS)
    if rng.random() < 0.02:
        msg["tools"] = [tool_schema(rng)]
    return msg


def tool_message(rng):
    msg = {"role": "tool"}
    r = rng.random()
    if r < 0.7:
        msg["content"] = text(rng)
    elif r < 0.85:
        msg["content"] = content_blocks(rng, False)
    elif r < 0.9:
        msg["content"] = None
    if rng.random() < 0.85:
        msg["tool_call_id"] = "call_%d" % rng.randint(0, 6) if rng.random() < 0.8 \
            else "fn_%d" % rng.randint(0, 6)
    return msg


def system_message(rng, first):
    msg = {"role": "system"}
    if rng.random() < 0.9:
        msg["content"] = text(rng)
    elif rng.random() < 0.5:
        msg["content"] = None
    if rng.random() < (0.5 if first else 0.15):
        msg["tools"] = [tool_schema(rng) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.15:
        msg["response_format"] = rng.choice([
            {"type": "json_object"},
            {"type": "json_schema", "json_schema": {"name": ident(rng),
                                                    "schema": json_value(rng)}},
            json_value(rng)])
    return msg


def other_message(rng):
    r = rng.random()
    if r < 0.75:
        msg = {"role": "latest_reminder"}
        if rng.random() < 0.9:
            msg["content"] = text(rng)
        return msg
    if r < 0.8:
        return {"role": "developer", "content": text(rng)}
    if r < 0.83:
        return {"content": text(rng)}                      # no role
    if r < 0.87:
        return {"role": rng.choice(["function", "ipython", "User", ""]),
                "content": text(rng)}
    if r < 0.93:
        return {"role": "direct_search_results", "content": text(rng)}
    return {"role": "latest_reminder", "content": None}


def conversation(rng, n, start=True):
    msgs = []
    for i in range(n):
        r = rng.random()
        if i == 0 and start and r < 0.4:
            msgs.append(system_message(rng, True))
        elif r < 0.35:
            msgs.append(user_message(rng))
        elif r < 0.65:
            msgs.append(assistant_message(rng))
        elif r < 0.82:
            # a run of tool results, often after an assistant with calls
            for _ in range(rng.randint(1, 3)):
                msgs.append(tool_message(rng))
        elif r < 0.9:
            msgs.append(system_message(rng, False))
        else:
            msgs.append(other_message(rng))
    return msgs


def weird_value(rng):
    return rng.choice([5, 1.5, True, [], {}, [1], {"a": 1}, "", None])


def gen_render(rng):
    n = rng.choice([0, 1, 1, 2, 3, 4, 5, 6, 8, 12])
    messages = conversation(rng, n)
    # an agent loop: user, assistant with calls, results out of order
    if rng.random() < 0.25:
        calls = [tool_call(rng, i) for i in range(rng.randint(2, 4))]
        for i, c in enumerate(calls):
            c["id"] = "call_%d" % i
        messages += [user_message(rng), {"role": "assistant", "content": "",
                                         "tool_calls": calls}]
        ids = ["call_%d" % i for i in range(len(calls))] + ["call_9"]
        rng.shuffle(ids)
        for tid in ids[:rng.randint(1, len(ids))]:
            messages.append({"role": "tool", "tool_call_id": tid,
                             "content": text(rng)})
        if rng.random() < 0.5:
            messages.append(user_message(rng))
    if rng.random() < 0.02 and messages:
        # a wrongly typed field
        m = rng.choice(messages)
        m[rng.choice(["content", "role", "tool_calls", "reasoning_content",
                      "tools", "task", "content_blocks"])] = weird_value(rng)
    case = {"kind": "render", "messages": messages}
    r = rng.random()
    case["thinking_mode"] = ("thinking" if r < 0.5 else "chat" if r < 0.97
                             else rng.choice(["", None, "Thinking", "none"]))
    if rng.random() < 0.25:
        case["context"] = conversation(rng, rng.randint(0, 5))
    if rng.random() < 0.3:
        case["drop_thinking"] = rng.choice([False, True, 0, 1, None, ""])
    if rng.random() < 0.15:
        case["add_default_bos_token"] = rng.choice([False, True, 0, 1, None])
    r = rng.random()
    if r < 0.3:
        case["reasoning_effort"] = rng.choice(EFFORT_NAMES)
    elif r < 0.45:
        case["reasoning_effort"] = rng.randint(1, 100)
    elif r < 0.5:
        case["reasoning_effort"] = rng.choice([0, 101, -5, 2 ** 40, True, False,
                                               50.0, "xhigh", "medium", "High",
                                               "", [50], {"a": 1}])
    elif r < 0.55:
        case["reasoning_effort"] = None
    return case


# ---------------------------------------------------------------------------
# Completions
# ---------------------------------------------------------------------------

def dsml_param(rng, name, value):
    if isinstance(value, str):
        return ('<%s parameter name="%s" string="true">%s</%s parameter>'
                % (DSML, name, value, DSML))
    return ('<%s parameter name="%s" string="false">%s</%s parameter>'
            % (DSML, name, json.dumps(value, ensure_ascii=False), DSML))


def dsml_calls(rng):
    invokes = []
    for _ in range(rng.randint(1, 3)):
        params = []
        for _ in range(rng.randint(0, 3)):
            if rng.random() < 0.1:
                # a string="false" value that is not JSON, or odd whitespace
                params.append('<%s parameter name="%s" string="false">%s</%s parameter>'
                              % (DSML, ident(rng), text(rng, 2, 0), DSML))
            else:
                params.append(dsml_param(rng, ident(rng), json_value(rng)))
        name = qualified(rng, 0.25)
        body = "\n".join(params)
        invokes.append('<%s invoke name="%s">\n%s%s</%s invoke>'
                       % (DSML, name, body, "\n" if params else "", DSML))
    return "<%s calls>\n%s\n</%s calls>" % (DSML, "\n".join(invokes), DSML)


MUTATIONS = [
    lambda rng, t: t.replace(EOS, "", 1),
    lambda rng, t: t.replace(THINK_END, "", 1),
    lambda rng, t: t + text(rng, 1, 0),
    lambda rng, t: t[:rng.randint(0, len(t))],
    lambda rng, t: _insert(rng, t, rng.choice(SPECIAL)),
    lambda rng, t: _insert(rng, t, text(rng, 1)),
    lambda rng, t: t.replace(">\n", ">", 1),
    lambda rng, t: t.replace("\n\n<" + DSML, "\n<" + DSML, 1),
    lambda rng, t: t.replace('string="true"', 'string="yes"', 1),
    lambda rng, t: t.replace('name="', 'name= "', 1),
    lambda rng, t: _dup_param(t),
    lambda rng, t: t.replace("</" + DSML + " calls>", "", 1),
    lambda rng, t: t.replace("</" + DSML + " invoke>", "", 1),
    lambda rng, t: t.replace(DSML, "|DSML|"),
    lambda rng, t: t.replace(" invoke", "invoke"),
    lambda rng, t: t + EOS,
    lambda rng, t: t.replace(EOS, "\n" + EOS, 1),
    lambda rng, t: _delete(rng, t),
]


def _insert(rng, t, s):
    i = rng.randint(0, len(t))
    return t[:i] + s + t[i:]


def _delete(rng, t):
    if not t:
        return t
    i = rng.randint(0, len(t) - 1)
    j = min(len(t), i + rng.randint(1, 12))
    return t[:i] + t[j:]


def _dup_param(t):
    start = t.find("<" + DSML + " parameter")
    if start < 0:
        return t
    end = t.find("\n", start)
    if end < 0:
        return t
    line = t[start:end + 1]
    return t[:end + 1] + line + t[end + 1:]


def gen_parse(rng):
    mode = "thinking" if rng.random() < 0.5 else "chat"
    if rng.random() < 0.03:
        mode = rng.choice(["", "Thinking", "none"])
    parts = []
    if mode == "thinking":
        parts.append(text(rng, special=0.01))
        if rng.random() < 0.05:
            parts.append(CALLS_OPEN + ">\n")   # a calls block in the reasoning
        parts.append(THINK_END)
    parts.append(text(rng, special=0.01))
    if rng.random() < 0.55:
        parts.append("\n\n" + dsml_calls(rng))
        if rng.random() < 0.05:
            parts.append(text(rng, 1, 0))
    if rng.random() < 0.95:
        parts.append(EOS)
    t = "".join(parts)
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
        t = rng.choice(MUTATIONS)(rng, t)
    return {"kind": "parse", "text": t, "thinking_mode": mode}


def gen_case(rng, parse_rate=0.4):
    if rng.random() < parse_rate:
        return gen_parse(rng)
    return gen_render(rng)


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 10
    seed = int(argv[2]) if len(argv) > 2 else 1
    rng = random.Random(seed)
    for _ in range(n):
        print(json.dumps(gen_case(rng), ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv)
