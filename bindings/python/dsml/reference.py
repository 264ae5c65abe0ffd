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
from . import _surface as S
from ._native import DsmlError
from ._surface import *  # noqa: F401,F403  (the names V4 and V4.1 spell alike)
from .render import encode_messages

# ---------------------------------------------------------------------------
# Tokens, templates, tables (the reference's values, byte for byte; the
# ones every generation shares are dsml._surface's)
# ---------------------------------------------------------------------------

SYSTEM_SP_TOKEN = "<｜System｜>"

IMAGE_PLACEHOLDER = "<｜deepseek_image｜>"
IMAGE_TAG_PATTERN = re.compile(r"<image>(.*?)</image>", re.DOTALL)

tool_calls_block_name = " calls"
tool_call_tag_name = " invoke"
tool_parameter_tag_name = " parameter"
_TAGS = S.names(tool_calls_block_name, tool_call_tag_name, tool_parameter_tag_name)
tool_call_template = ('<{dsml_token}{tool_call_tag_name} name="{name}">\n{arguments}\n'
                      '</{dsml_token}{tool_call_tag_name}>')

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
    namespace, name = _qualify(tool_name)
    call = {"name": name, "arguments": S.arguments_text(tool_args)}
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
    return S.parameter_lines(arguments, _TAGS)


# ---------------------------------------------------------------------------
# Preprocessing: tool results, images
# ---------------------------------------------------------------------------


def _user_blocks(msg):
    blocks = msg.get("content_blocks")
    return [{"type": "text", "text": msg.get("content", "")}] if blocks is None else blocks


def _user_turn(msg, blocks):
    msg["content_blocks"] = blocks
    return msg


def merge_tool_messages(messages):
    """Tool messages become tool_result blocks of a user message (appended to
    the previous one when it has blocks); consecutive user messages are
    joined unless the first has a task.  The input is not changed."""
    return S.merge_tool_results(messages, _user_blocks, _user_turn)


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
    return S.tools_text(TOOLS_TEMPLATE, tools, _TAGS)


def find_last_user_index(messages):
    """Index of the last user message (or system message after the first), or -1."""
    for index in range(len(messages) - 1, -1, -1):
        role = messages[index].get("role")
        if role == "user" or (role == "system" and index > 0):
            return index
    return -1


def render_message(index, messages, thinking_mode, drop_thinking=True,
                   reasoning_effort=None):
    """One message of a merged, sorted list, as V4.1 writes it: <｜System｜>
    and the effort line first (message 0), a later system message as a turn
    of its own, then the generation header or task token that the next
    message calls for."""
    msg, role, content, tools, response_format, calls, thinking, last_user = S.message(
        index, messages, thinking_mode, find_last_user_index, tools_from_openai_format,
        tool_calls_from_openai_format)
    effort = render_reasoning_effort(index, thinking_mode, reasoning_effort)
    out = [SYSTEM_SP_TOKEN if index == 0 and (effort or role == "system") else "", effort]

    if role == "system":
        if index > 0:
            out.append(SYSTEM_SP_TOKEN)
        out += [system_msg_template.format(content=content or ""),
                S.appendix(tools, response_format, render_tools)]
    elif role == "user":
        out += [USER_SP_TOKEN, S.user_text(msg)]
    elif role == "latest_reminder":
        out += [LATEST_REMINDER_SP_TOKEN, latest_reminder_msg_template.format(content=content)]
    elif role == "assistant":
        block = ""
        if calls:
            block = S.calls_block(calls, _qualified_name, encode_arguments_to_dsml,
                                  tool_call_template, tool_calls_template, _TAGS)
        out.append(S.assistant_text(index, messages, thinking, drop_thinking, last_user, block))
    elif role == "tool":
        raise DsmlError(N.ERR_ROLE, "tool messages must be merged into user messages "
                        "first (merge_tool_messages)")
    else:
        raise DsmlError(N.ERR_ROLE, "Unknown role: {}".format(role))
    asks = role == "user" or (role == "system" and index > 0)
    return "".join(out) + S.turn_end(index, messages, thinking, drop_thinking, last_user, asks)


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


parse_tool_calls = S.calls_parser(_TAGS, decode_dsml_to_arguments)


__all__ = [name for name in dir() if not name.startswith("_")
           and name not in ("copy", "json", "re", "N", "S", "DsmlError", "encode_messages")]
