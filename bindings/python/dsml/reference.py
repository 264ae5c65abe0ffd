"""The rest of the reference encoding.py's public surface: its tokens,
templates and tables, and its helper functions (tool-name qualification,
tool-call conversion, merging and sorting tool results, image blocks, the
effort line, the tools block, one message, the DSML calls parser), so that
``import dsml as encoding`` serves code written against the reference.

The entry points (encode_messages, encode_case,
parse_message_from_completion_text) go through libdsml and never use the
helpers below; the helpers are plain Python that gives the reference's
results, for code that calls them directly (SGLang's tests render single
messages with render_message, for instance).  What the reference refuses
raises DsmlError, which is both an AssertionError and a ValueError.
"""

import copy
import json
import re

from . import _native as N
from ._native import DsmlError
from .render import encode_messages

# ---------------------------------------------------------------------------
# Tokens, templates, tables (the reference's values, byte for byte)
# ---------------------------------------------------------------------------

bos_token = "<｜begin▁of▁sentence｜>"
eos_token = "<｜end▁of▁sentence｜>"
thinking_start_token = "<think>"
thinking_end_token = "</think>"
dsml_token = "｜DSML｜"

USER_SP_TOKEN = "<｜User｜>"
ASSISTANT_SP_TOKEN = "<｜Assistant｜>"
LATEST_REMINDER_SP_TOKEN = "<｜latest_reminder｜>"
SYSTEM_SP_TOKEN = "<｜System｜>"

IMAGE_PLACEHOLDER = "<｜deepseek_image｜>"
IMAGE_TAG_PATTERN = re.compile(r"<image>(.*?)</image>", re.DOTALL)

DS_TASK_SP_TOKENS = {name: "<｜%s｜>" % name for name in
                     ("action", "query", "authority", "domain", "title", "read_url")}
VALID_TASKS = set(DS_TASK_SP_TOKENS)

system_msg_template = "{content}"
user_msg_template = "{content}"
latest_reminder_msg_template = "{content}"
assistant_msg_template = "{reasoning}{content}{tool_calls}" + eos_token
assistant_msg_wo_eos_template = "{reasoning}{content}{tool_calls}"
thinking_template = "{reasoning_content}"
response_format_template = ("## Response Format:\n\nYou MUST strictly adhere to "
                            "the following schema to reply:\n{schema}")
tool_output_template = "<tool_result>{content}</tool_result>"

tool_calls_block_name = " calls"
tool_call_tag_name = " invoke"
tool_parameter_tag_name = " parameter"
tool_call_template = ('<{dsml_token}{tool_call_tag_name} name="{name}">\n{arguments}\n'
                      '</{dsml_token}{tool_call_tag_name}>')
tool_calls_template = "<{dsml_token}{tc_block_name}>\n{tool_calls}\n</{dsml_token}{tc_block_name}>"

REASONING_EFFORT_TEMPLATE = ("Reasoning Effort: {budget} (range 1-100, the higher the "
                             "value, the more thorough the reasoning)\n\n")
REASONING_EFFORT_MAPPINGS = {"low": 50, "high": 75, "max": 100}
DEFAULT_REASONING_EFFORT = "high"

_INVOKE_EXAMPLE = ("<{dsml_token}{tool_call_tag_name} name=\"$TOOL_NAME%s\">\n%s...\n"
                   "</{dsml_token}{tool_call_tag_name}>\n")
TOOLS_TEMPLATE = (
    "## Tools\n\nYou have access to a set of tools to help answer the user's question. "
    "You can invoke tools by writing a \"<{dsml_token}{tc_block_name}>\" block like the "
    "following:\n\n<{dsml_token}{tc_block_name}>\n"
    + _INVOKE_EXAMPLE % ("", "<{dsml_token}{tool_parameter_tag_name} name=\"$PARAMETER_NAME\" "
                         "string=\"true|false\">$PARAMETER_VALUE"
                         "</{dsml_token}{tool_parameter_tag_name}>\n")
    + _INVOKE_EXAMPLE % ("2", "")
    + "</{dsml_token}{tc_block_name}>\n\n"
    "String parameters should be specified as is and set `string=\"true\"`. For all other "
    "types (numbers, booleans, arrays, objects), pass the value in JSON format and set "
    "`string=\"false\"`.\n\n"
    "If thinking_mode is enabled (triggered by {thinking_start_token}), you MUST output "
    "your complete reasoning inside {thinking_start_token}...{thinking_end_token} BEFORE "
    "any tool calls or final response.\n\n"
    "Otherwise, output directly after {thinking_end_token} with tool calls or final "
    "response.\n\n### Available Tool Schemas\n\n{tool_schemas}\n\n"
    "You MUST strictly follow the above defined tool name and parameter schemas to "
    "invoke tool calls.\n")
del _INVOKE_EXAMPLE

# ---------------------------------------------------------------------------
# Tool names and calls
# ---------------------------------------------------------------------------


def to_json(value):
    """json.dumps(value, ensure_ascii=False), or ASCII-escaped when that fails."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except Exception:
        return json.dumps(value, ensure_ascii=True)


def _qualify(name, namespace=None):
    """(namespace, bare name) of "ns::name" or of name and its namespace."""
    head, sep, tail = name.partition("::")
    if sep:
        if namespace is not None and namespace != head:
            raise DsmlError(N.ERR_TOOL_NAME, "Conflicting tool namespaces: {} != {}"
                            .format(namespace, head))
        namespace, name = head, tail
    if "::" in name:
        raise DsmlError(N.ERR_TOOL_NAME, "Tool name must not contain '::': {}".format(name))
    if namespace is not None and "::" in namespace:
        raise DsmlError(N.ERR_TOOL_NAME,
                        "Tool namespace must not contain '::': {}".format(namespace))
    return namespace, name


def _qualified_name(entry):
    """The "ns::name" (or bare name) a tool schema or an internal call shows."""
    namespace = entry.get("namespace")
    if isinstance(namespace, dict):
        namespace = namespace["name"]
    namespace, name = _qualify(entry["name"], namespace)
    return name if namespace is None else "{}::{}".format(namespace, name)


def tools_from_openai_format(tools):
    """OpenAI tools -> the function schemas the prompt shows, names qualified."""
    functions = []
    for tool in tools:
        function = dict(tool["function"])
        if tool.get("namespace") is not None:
            function["namespace"] = tool["namespace"]
        function["name"] = _qualified_name(function)
        namespace = function.pop("namespace", None)
        if isinstance(namespace, dict) and namespace.get("description"):
            function["description"] = (namespace["description"] + "\n"
                                       + (function.get("description") or ""))
        functions.append(function)
    return functions


def tool_calls_from_openai_format(tool_calls):
    """OpenAI tool calls -> {"name", "arguments"[, "namespace"]}."""
    calls = []
    for tool_call in tool_calls:
        function = tool_call["function"]
        namespace, name = _qualify(function["name"], tool_call.get("namespace")
                                   or function.get("namespace"))
        call = {"name": name, "arguments": function["arguments"]}
        if namespace is not None:
            call["namespace"] = namespace
        calls.append(call)
    return calls


def tool_calls_to_openai_format(tool_calls):
    """{"name", "arguments"[, "namespace"]} -> OpenAI tool calls."""
    calls = []
    for tool_call in tool_calls:
        call = {"type": "function", "function": {"name": tool_call["name"],
                                                 "arguments": tool_call["arguments"]}}
        if tool_call.get("namespace") is not None:
            call["namespace"] = tool_call["namespace"]
        calls.append(call)
    return calls


def decode_dsml_to_arguments(tool_name, tool_args):
    """A parsed invoke -> {"name", "arguments" (JSON text)[, "namespace"]}.

    tool_args maps each parameter name to (value text, "true" | "false"):
    "true" values are JSON-quoted, others inserted verbatim.
    """
    pairs = ["{}: {}".format(to_json(key), to_json(value) if string == "true" else value)
             for key, (value, string) in tool_args.items()]
    namespace, name = _qualify(tool_name)
    call = {"name": name, "arguments": "{" + ", ".join(pairs) + "}"}
    if namespace is not None:
        call["namespace"] = namespace
    return call


def encode_arguments_to_dsml(tool_call):
    """The parameter lines of one call: its arguments (an object, JSON text
    of one, or double-encoded JSON; anything else is {"arguments": it})."""
    arguments = tool_call["arguments"]
    if not isinstance(arguments, dict):
        decoded = arguments
        for _ in range(2):
            if not isinstance(decoded, str):
                break
            try:
                decoded = json.loads(decoded)
            except Exception:
                break
        arguments = decoded if isinstance(decoded, dict) else {"arguments": arguments}
    line = ('<{d}{p} name="{key}" string="{flag}">{value}</{d}{p}>')
    return "\n".join(
        line.format(d=dsml_token, p=tool_parameter_tag_name, key=key,
                    flag="true" if isinstance(value, str) else "false",
                    value=value if isinstance(value, str) else to_json(value))
        for key, value in arguments.items())


# ---------------------------------------------------------------------------
# Preprocessing: tool results, images
# ---------------------------------------------------------------------------


def merge_tool_messages(messages):
    """Tool messages become tool_result blocks of a user message (appended to
    the previous one when it has blocks); consecutive user messages are
    joined unless the first has a task.  The input is not changed."""
    merged = []
    for msg in messages:
        msg = copy.deepcopy(msg)
        role = msg.get("role")
        last = merged[-1] if merged else None
        open_user = (last is not None and last.get("role") == "user"
                     and "content_blocks" in last)
        if role == "tool":
            block = {"type": "tool_result", "tool_use_id": msg.get("tool_call_id", ""),
                     "content": msg.get("content", "")}
            if open_user:
                last["content_blocks"].append(block)
            else:
                merged.append({"role": "user", "content_blocks": [block]})
        elif role == "user":
            blocks = msg.get("content_blocks")
            if blocks is None:
                blocks = [{"type": "text", "text": msg.get("content", "")}]
            if open_user and last.get("task") is None:
                last["content_blocks"].extend(blocks)
            else:
                msg["content_blocks"] = blocks
                merged.append(msg)
        else:
            merged.append(msg)
    return merged


def sort_tool_results_by_call_order(messages):
    """Reorder, in place, the tool_result blocks of each user message by the
    call order of the latest assistant with tool calls; returns messages."""
    order = {}
    for msg in messages:
        role = msg.get("role")
        if role == "assistant" and msg.get("tool_calls"):
            order = {}
            for position, call in enumerate(msg["tool_calls"]):
                ident = call.get("id") or call.get("function", {}).get("id", "")
                if ident:
                    order[ident] = position
        elif role == "user" and msg.get("content_blocks"):
            blocks = msg["content_blocks"]
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if len(results) > 1 and order:
                ranked = iter(sorted(results,
                                     key=lambda b: order.get(b.get("tool_use_id", ""), 0)))
                msg["content_blocks"] = [next(ranked) if b.get("type") == "tool_result"
                                         else b for b in blocks]
    return messages


def parse_tagged_text(text):
    """Text with <image>path</image> tags -> content blocks (the text itself
    when it has none)."""
    found = list(IMAGE_TAG_PATTERN.finditer(text))
    rest = IMAGE_TAG_PATTERN.sub("", text)
    if "<image>" in rest or "</image>" in rest:
        raise DsmlError(N.ERR_IMAGE, "Malformed <image>path</image> tag")
    if not found:
        return text
    blocks = []
    at = 0
    for match in found:
        if match.start() > at:
            blocks.append({"type": "text", "text": text[at:match.start()]})
        if not match.group(1):
            raise DsmlError(N.ERR_IMAGE, "Image path must not be empty")
        blocks.append({"type": "image_url", "image_url": {"url": match.group(1)}})
        at = match.end()
    if at < len(text):
        blocks.append({"type": "text", "text": text[at:]})
    return blocks


def _image_record(block):
    record = {"type": "image"}
    if block.get("type") == "image_url":
        url = block.get("image_url")
        record["url"] = url if isinstance(url, str) else (url or {}).get("url", "")
    else:
        record.update((key, block[key]) for key in ("source", "url", "data") if key in block)
    if not any(record.get(key) for key in ("source", "url", "data")):
        raise DsmlError(N.ERR_IMAGE, "Image block does not contain a valid source")
    return record


def _replace_images(blocks, images):
    """Image blocks (also inside tool results) -> placeholder text blocks,
    their records appended to images in order."""
    out = []
    for block in blocks:
        if isinstance(block, dict):
            kind = block.get("type")
            if kind in ("image", "image_url"):
                images.append(_image_record(block))
                block = {"type": "text", "text": IMAGE_PLACEHOLDER}
            elif kind == "tool_result" and isinstance(block.get("content"), list):
                block = copy.copy(block)
                block["content"] = _replace_images(block["content"], images)
            elif kind == "text" and IMAGE_PLACEHOLDER in (block.get("text") or ""):
                raise DsmlError(N.ERR_IMAGE, "Text block contains image placeholder %r; "
                                "images are separate content blocks" % IMAGE_PLACEHOLDER)
        out.append(block)
    return out


def process_image_messages(messages):
    """(messages with image blocks replaced by placeholders, image records in
    prompt order).  A list content becomes content_blocks, and content the
    text blocks joined by blank lines."""
    processed = []
    images = []
    for msg in messages:
        msg = copy.deepcopy(msg)
        for key in ("content", "reasoning_content"):
            if isinstance(msg.get(key), str) and IMAGE_PLACEHOLDER in msg[key]:
                raise DsmlError(N.ERR_IMAGE, "%s contains image special token %r; images "
                                "are image content blocks" % (key, IMAGE_PLACEHOLDER))
        if isinstance(msg.get("content"), list) and "content_blocks" not in msg:
            msg["content_blocks"] = msg.pop("content")
        if msg.get("content_blocks"):
            msg["content_blocks"] = _replace_images(msg["content_blocks"], images)
            if not isinstance(msg.get("content"), str):
                msg["content"] = "\n\n".join(
                    block.get("text", "") for block in msg["content_blocks"]
                    if isinstance(block, dict) and block.get("type") == "text")
        processed.append(msg)
    return processed, images


# ---------------------------------------------------------------------------
# Rendering pieces
# ---------------------------------------------------------------------------


def render_reasoning_effort(index, thinking_mode, effort):
    """The effort line (thinking mode, message 0 only, else ""); refuses an
    invalid effort wherever it is asked."""
    if effort is None:
        effort = DEFAULT_REASONING_EFFORT
    if not ((type(effort) is int and 1 <= effort <= 100)
            or effort in REASONING_EFFORT_MAPPINGS):
        raise DsmlError(N.ERR_EFFORT, "Invalid reasoning effort for deepseek_v41: {}, should "
                        "be int within [1,100] or {}"
                        .format(effort, list(REASONING_EFFORT_MAPPINGS)))
    if type(effort) is str:
        effort = REASONING_EFFORT_MAPPINGS[effort]
    if index == 0 and thinking_mode == "thinking":
        return REASONING_EFFORT_TEMPLATE.format(budget=effort)
    return ""


def render_tools(tools):
    """The tools block for function schemas (tools_from_openai_format's)."""
    return TOOLS_TEMPLATE.format(
        tool_schemas="\n".join(to_json(tool) for tool in tools), dsml_token=dsml_token,
        tc_block_name=tool_calls_block_name, tool_call_tag_name=tool_call_tag_name,
        tool_parameter_tag_name=tool_parameter_tag_name,
        thinking_start_token=thinking_start_token, thinking_end_token=thinking_end_token)


def find_last_user_index(messages):
    """Index of the last user message (or system message after the first), or -1."""
    for index in range(len(messages) - 1, -1, -1):
        role = messages[index].get("role")
        if role == "user" or (role == "system" and index > 0):
            return index
    return -1


def _block_text(block):
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            content = "\n\n".join(
                part.get("text", "") if part.get("type") == "text"
                else "[Unsupported {}]".format(part.get("type")) for part in content)
        return tool_output_template.format(content=content)
    return "[Unsupported {}]".format(kind)


def _calls_block(calls):
    invokes = "\n".join(
        tool_call_template.format(dsml_token=dsml_token, tool_call_tag_name=tool_call_tag_name,
                                  name=_qualified_name(call),
                                  arguments=encode_arguments_to_dsml(call))
        for call in calls)
    return "\n\n" + tool_calls_template.format(dsml_token=dsml_token, tool_calls=invokes,
                                               tc_block_name=tool_calls_block_name)


def render_message(index, messages, thinking_mode, drop_thinking=True,
                   reasoning_effort=None):
    """The text of messages[index] in a merged, sorted message list, with the
    generation header or task token that the next message calls for."""
    if not 0 <= index < len(messages):
        raise DsmlError(N.ERR_ARGUMENT, "message index %r out of range" % (index,))
    if thinking_mode not in ("chat", "thinking"):
        raise DsmlError(N.ERR_THINKING_MODE, "Invalid thinking_mode `{}`".format(thinking_mode))
    thinking = thinking_mode == "thinking"
    msg = messages[index]
    last_user = find_last_user_index(messages)
    role = msg.get("role")
    content = msg.get("content")
    tools = msg.get("tools")
    response_format = msg.get("response_format")
    calls = msg.get("tool_calls")
    if tools:
        tools = tools_from_openai_format(tools)
    if calls:
        calls = tool_calls_from_openai_format(calls)
    effort = render_reasoning_effort(index, thinking_mode, reasoning_effort)
    out = [SYSTEM_SP_TOKEN if index == 0 and (effort or role == "system") else "", effort]

    if role == "system":
        if index > 0:
            out.append(SYSTEM_SP_TOKEN)
        out.append(system_msg_template.format(content=content or ""))
        if tools:
            out += ["\n\n", render_tools(tools)]
        if response_format:
            out += ["\n\n", response_format_template.format(schema=to_json(response_format))]
    elif role == "user":
        blocks = msg.get("content_blocks")
        out += [USER_SP_TOKEN,
                "\n\n".join([_block_text(b) for b in blocks]) if blocks else content or ""]
    elif role == "latest_reminder":
        out += [LATEST_REMINDER_SP_TOKEN, latest_reminder_msg_template.format(content=content)]
    elif role == "assistant":
        block = _calls_block(calls) if calls else ""
        after_task = index > 0 and messages[index - 1].get("task") is not None
        reasoning = ""
        if thinking and not after_task and (not drop_thinking or index > last_user):
            reasoning = thinking_template.format(
                reasoning_content=msg.get("reasoning_content") or "") + thinking_end_token
        template = (assistant_msg_wo_eos_template if msg.get("wo_eos", False)
                    else assistant_msg_template)
        out.append(template.format(reasoning=reasoning, content=content or "",
                                   tool_calls=block))
    elif role == "tool":
        raise DsmlError(N.ERR_ROLE, "tool messages must be merged into user messages "
                        "first (merge_tool_messages)")
    else:
        raise DsmlError(N.ERR_ROLE, "Unknown role: {}".format(role))

    following = messages[index + 1].get("role") if index + 1 < len(messages) else None
    if index + 1 < len(messages) and following not in ("assistant", "latest_reminder"):
        return "".join(out)
    task = msg.get("task")
    if task is not None:
        if task not in VALID_TASKS:
            raise DsmlError(N.ERR_TASK, "Invalid task: '{}'. Valid tasks are: {}"
                            .format(task, list(VALID_TASKS)))
        if task == "action":
            out += [ASSISTANT_SP_TOKEN, thinking_start_token if thinking else thinking_end_token]
        out.append(DS_TASK_SP_TOKENS[task])
    elif role == "user" or (role == "system" and index > 0):
        opens = thinking and (not drop_thinking or index >= last_user)
        out += [ASSISTANT_SP_TOKEN, thinking_start_token if opens else thinking_end_token]
    return "".join(out)


# ---------------------------------------------------------------------------
# Cases and the calls parser
# ---------------------------------------------------------------------------


def load_cases(input_file):
    """The cases of a JSON file: one case object, a list of them, or a bare
    message list; "tools" is attached to the first message."""
    with open(input_file) as f:
        data = json.load(f)
    if isinstance(data, dict):
        data = [data]
    elif data and isinstance(data[0], dict) and "role" in data[0]:
        data = [{"messages": data}]
    cases = []
    for case in data:
        messages = copy.deepcopy(case["messages"])
        if "tools" in case:
            if not messages:
                raise DsmlError(N.ERR_TYPE, "A case with tools must contain at least one message")
            messages[0]["tools"] = case["tools"]
        cases.append({"messages": messages, "context": case.get("context"),
                      "thinking_mode": case.get("thinking_mode"),
                      "reasoning_effort": case.get("reasoning_effort")})
    return cases


def encode_case(case, thinking_mode):
    """(prompt, image records) of one case from load_cases; the case's own
    thinking_mode, when set, wins over the argument."""
    prompt, media = encode_messages(
        case["messages"], thinking_mode=case.get("thinking_mode") or thinking_mode,
        context=case.get("context"), reasoning_effort=case.get("reasoning_effort"),
        return_multi_modal_data=True)
    return prompt, media["images"]


def _until(text, at, stops):
    """(position after the first stop found from at, text before it, the
    stop), or (len(text), the rest, None).  The earliest stop wins; at one
    position, the first listed."""
    best, hit = len(text), None
    for stop in stops:
        pos = text.find(stop, at)
        if pos != -1 and pos < best:
            best, hit = pos, stop
    if hit is None:
        return len(text), text[at:], None
    return best + len(hit), text[at:best], hit


_CALLS_END = "</%s%s>" % (dsml_token, tool_calls_block_name)
_INVOKE_OPEN = "<" + dsml_token + tool_call_tag_name
_INVOKE_CLOSE = "</" + dsml_token + tool_call_tag_name
_PARAM_OPEN = "<" + dsml_token + tool_parameter_tag_name
_PARAM_CLOSE = "/" + dsml_token + tool_parameter_tag_name
_INVOKE_HEAD = re.compile(r'\s*name="(.*?)">\n$', re.DOTALL)
_PARAM_BODY = re.compile(r' name="(.*?)" string="(true|false)">(.*?)<$', re.DOTALL)


def parse_tool_calls(index, text):
    """Parse the invokes of a calls block from text[index:] (just after its
    opening tag) up to its closing tag.  Returns (index after it, the last
    stop token, [{"name", "arguments"[, "namespace"]}])."""
    calls = []
    stop = None
    while index < len(text):
        index, gap, stop = _until(text, index, [_INVOKE_OPEN, _CALLS_END])
        if gap != ">\n":
            raise DsmlError(N.ERR_CALL_FORMAT,
                            "Tool call format error: expected '>\\n' but got '%s'" % gap)
        if stop == _CALLS_END:
            break
        if stop is None:
            raise DsmlError(N.ERR_CALL_FORMAT, "Missing special token in tool calls")
        index, head, stop = _until(text, index, [_PARAM_OPEN, _INVOKE_CLOSE])
        name = _INVOKE_HEAD.match(head)
        if name is None:
            raise DsmlError(N.ERR_INVOKE_FORMAT, "Tool name format error: '%s'" % head)
        params = {}
        while stop == _PARAM_OPEN:
            index, body, stop = _until(text, index, [_PARAM_CLOSE])
            param = _PARAM_BODY.match(body)
            if param is None:
                raise DsmlError(N.ERR_PARAMETER_FORMAT, "Parameter format error: '%s'" % body)
            key, string, value = param.groups()
            if key in params:
                raise DsmlError(N.ERR_DUPLICATE_PARAMETER,
                                "Duplicate parameter name: '%s'" % key)
            params[key] = (value, string)
            index, gap, stop = _until(text, index, [_PARAM_OPEN, _INVOKE_CLOSE])
            if gap != ">\n":
                raise DsmlError(N.ERR_PARAMETER_FORMAT,
                                "Parameter format error: expected '>\\n' but got '%s'" % gap)
        calls.append(decode_dsml_to_arguments(name.group(1), params))
    return index, stop, calls


__all__ = [name for name in dir() if not name.startswith("_")
           and name not in ("copy", "json", "re", "N", "DsmlError", "encode_messages")]
