"""What the reference surfaces of the DSML family have in common, written
once: dsml.reference (V4.1's encoding.py), dsml.v4 (encoding_dsv4.py) and
dsml.v32 (encoding_dsv32.py) are made of these pieces and their own tag
names and tables.

The shared tokens and templates (each reference spells them alike), the
parameter lines of a call and the JSON text of a parsed one, the calls
block, the tools and response-format appendix, merging and sorting tool
results (V4 and V4.1), a user turn's text, an assistant turn and the
generation header after a message (V4 and V4.1), and the calls parser for a
dialect's tag names.  What the references refuse raises DsmlError (an
AssertionError and a ValueError); a value of the wrong shape raises what
Python raises, as in the references.
"""

import copy
import json
import re
import types
from collections import namedtuple

from . import _native as N
from . import parse as _parse
from ._native import DsmlError

# The names V4's and V4.1's references spell alike, which dsml.v4 and
# dsml.reference take from here ("from ._surface import *").
__all__ = [
    "ASSISTANT_SP_TOKEN", "DS_TASK_SP_TOKENS", "LATEST_REMINDER_SP_TOKEN", "USER_SP_TOKEN",
    "VALID_TASKS", "assistant_msg_template", "assistant_msg_wo_eos_template", "bos_token",
    "dsml_token", "eos_token", "latest_reminder_msg_template", "response_format_template",
    "sort_tool_results_by_call_order", "system_msg_template", "thinking_end_token",
    "thinking_start_token", "thinking_template", "to_json", "tool_calls_template",
    "tool_output_template", "user_msg_template",
]

# ---------------------------------------------------------------------------
# Tokens and templates every generation shares (V3.2 has its own user
# turn, calls block and tool results)
# ---------------------------------------------------------------------------

bos_token = "<｜begin▁of▁sentence｜>"
eos_token = "<｜end▁of▁sentence｜>"
thinking_start_token = "<think>"
thinking_end_token = "</think>"
dsml_token = "｜DSML｜"

USER_SP_TOKEN = "<｜User｜>"
ASSISTANT_SP_TOKEN = "<｜Assistant｜>"
LATEST_REMINDER_SP_TOKEN = "<｜latest_reminder｜>"

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
tool_calls_template = "<{dsml_token}{tc_block_name}>\n{tool_calls}\n</{dsml_token}{tc_block_name}>"


def public(namespace):
    """A surface module's __all__: its names that are not private, not
    modules and not DsmlError."""
    return [name for name, value in namespace.items() if not name.startswith("_")
            and not isinstance(value, types.ModuleType) and name != "DsmlError"]


def completion_parser(profile, generation):
    """parse_message_from_completion_text for a libdsml profile."""
    def parse_message_from_completion_text(text, thinking_mode):
        return _parse.parse_message_from_completion_text(text, thinking_mode, profile=profile)
    parse_message_from_completion_text.__doc__ = (
        "Parse a completion into the assistant message (libdsml's strict %s parser): "
        "{\"role\", \"content\", \"reasoning_content\", \"tool_calls\"}, or DsmlError "
        "wherever the reference raises." % generation)
    return parse_message_from_completion_text


def names(block, invoke, parameter):
    """The fields a dialect's templates are formatted with (str.format
    ignores those a template does not use)."""
    return {"dsml_token": dsml_token, "tc_block_name": block, "tool_call_tag_name": invoke,
            "tool_parameter_tag_name": parameter, "thinking_start_token": thinking_start_token,
            "thinking_end_token": thinking_end_token}


# ---------------------------------------------------------------------------
# Values and calls
# ---------------------------------------------------------------------------


def to_json(value):
    """json.dumps(value, ensure_ascii=False), or ASCII-escaped when that fails."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except Exception:
        return json.dumps(value, ensure_ascii=True)


def parameter_lines(arguments, tags):
    """The parameter lines of a call's arguments (a mapping): strings as
    they are (string="true"), other values as JSON."""
    line = '<{d}{p} name="{key}" string="{flag}">{value}</{d}{p}>'
    return "\n".join(
        line.format(d=dsml_token, p=tags["tool_parameter_tag_name"], key=key,
                    flag="true" if isinstance(value, str) else "false",
                    value=value if isinstance(value, str) else to_json(value))
        for key, value in arguments.items())


def arguments_text(tool_args):
    """The JSON text of parsed parameters {name: (value text, "true" |
    "false")}: "true" values are JSON-quoted, others inserted verbatim."""
    return "{" + ", ".join(
        "{}: {}".format(to_json(key), to_json(value) if string == "true" else value)
        for key, (value, string) in tool_args.items()) + "}"


def calls_block(calls, name_of, encode, call_template, calls_template, tags):
    """The blank line and calls block of an assistant's internal calls."""
    invokes = "\n".join(call_template.format(name=name_of(call), arguments=encode(call), **tags)
                        for call in calls)
    return "\n\n" + calls_template.format(tool_calls=invokes, **tags)


def tools_text(template, tools, tags):
    """A tools prompt: the template with one JSON schema a line."""
    return template.format(tool_schemas="\n".join(to_json(tool) for tool in tools), **tags)


def appendix(tools, response_format, render_tools):
    """What follows a system (or developer) message's text: its tools block
    and its response format, each after a blank line."""
    text = ""
    if tools:
        text += "\n\n" + render_tools(tools)
    if response_format:
        text += "\n\n" + response_format_template.format(schema=to_json(response_format))
    return text


# ---------------------------------------------------------------------------
# Tool results as user turns (V4, V4.1)
# ---------------------------------------------------------------------------


def merge_tool_results(messages, user_blocks, user_turn):
    """Tool messages become tool_result blocks of a user message (appended
    to the previous one when it has blocks); a user message's blocks
    (user_blocks(msg)) join such a message unless it has a task, else
    user_turn(msg, blocks) starts one.  The input is not changed."""
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
            blocks = user_blocks(msg)
            if open_user and last.get("task") is None:
                last["content_blocks"].extend(blocks)
            else:
                merged.append(user_turn(msg, blocks))
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


# ---------------------------------------------------------------------------
# One message (V4, V4.1; V3.2 uses message and appendix)
# ---------------------------------------------------------------------------


Message = namedtuple("Message", "msg role content tools response_format calls thinking "
                                "last_user")


def message(index, messages, thinking_mode, find_last_user_index, tools_from, calls_from):
    """What render_message starts with: its checks (the index, the thinking
    mode), then messages[index] with its role, content, function schemas
    (tools_from), response format and internal calls (calls_from), whether
    it is thinking mode, and the last user index (find_last_user_index)."""
    if not 0 <= index < len(messages):
        raise DsmlError(N.ERR_ARGUMENT, "message index %r out of range" % (index,))
    if thinking_mode not in ("chat", "thinking"):
        raise DsmlError(N.ERR_THINKING_MODE, "Invalid thinking_mode `{}`".format(thinking_mode))
    msg = messages[index]
    last_user = find_last_user_index(messages)
    tools = msg.get("tools")
    response_format = msg.get("response_format")
    calls = msg.get("tool_calls")
    if tools:
        tools = tools_from(tools)
    if calls:
        calls = calls_from(calls)
    return Message(msg, msg.get("role"), msg.get("content"), tools, response_format, calls,
                   thinking_mode == "thinking", last_user)


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


def user_text(msg):
    """A user turn: its blocks (text, tool results) joined by blank lines,
    or its content."""
    blocks = msg.get("content_blocks")
    if blocks:
        return "\n\n".join([_block_text(block) for block in blocks])
    return msg.get("content") or ""


def assistant_text(index, messages, thinking, drop_thinking, last_user, calls_text):
    """An assistant turn: its reasoning (thinking mode, not after a task,
    kept or after the last user turn), content and calls, then EOS unless
    wo_eos."""
    msg = messages[index]
    after_task = index > 0 and messages[index - 1].get("task") is not None
    reasoning = ""
    if thinking and not after_task and (not drop_thinking or index > last_user):
        reasoning = thinking_template.format(
            reasoning_content=msg.get("reasoning_content") or "") + thinking_end_token
    template = (assistant_msg_wo_eos_template if msg.get("wo_eos", False)
                else assistant_msg_template)
    return template.format(reasoning=reasoning, content=msg.get("content") or "",
                           tool_calls=calls_text)


def turn_end(index, messages, thinking, drop_thinking, last_user, asks):
    """What follows messages[index] when the assistant (or a reminder) comes
    next, or nothing does: its task's token (after the generation header for
    "action"), else, when the message asks for a reply (asks), the
    generation header with the thinking token."""
    if index + 1 < len(messages) and (messages[index + 1].get("role")
                                      not in ("assistant", "latest_reminder")):
        return ""
    task = messages[index].get("task")
    if task is not None:
        if task not in VALID_TASKS:
            raise DsmlError(N.ERR_TASK, "Invalid task: '{}'. Valid tasks are: {}"
                            .format(task, list(VALID_TASKS)))
        head = ""
        if task == "action":
            head = ASSISTANT_SP_TOKEN + (thinking_start_token if thinking else thinking_end_token)
        return head + DS_TASK_SP_TOKENS[task]
    if asks:
        opens = thinking and (not drop_thinking or index >= last_user)
        return ASSISTANT_SP_TOKEN + (thinking_start_token if opens else thinking_end_token)
    return ""


# ---------------------------------------------------------------------------
# The calls parser
# ---------------------------------------------------------------------------


def until(text, at, stops):
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


def calls_parser(tags, decode):
    """parse_tool_calls for a dialect's tag names; decode(name, params)
    makes each call."""
    calls_end = "</%s%s>" % (dsml_token, tags["tc_block_name"])
    invoke_open = "<" + dsml_token + tags["tool_call_tag_name"]
    invoke_close = "</" + dsml_token + tags["tool_call_tag_name"]
    param_open = "<" + dsml_token + tags["tool_parameter_tag_name"]
    param_close = "/" + dsml_token + tags["tool_parameter_tag_name"]
    head_form = re.compile(r'\s*name="(.*?)">\n$', re.DOTALL)
    body_form = re.compile(r' name="(.*?)" string="(true|false)">(.*?)<$', re.DOTALL)

    def parse_tool_calls(index, text):
        """Parse the invokes of a calls block from text[index:] (just after
        its opening tag) up to its closing tag.  Returns (index after it,
        the last stop token, [{"name", "arguments"[, "namespace"]}])."""
        calls = []
        stop = None
        while index < len(text):
            index, gap, stop = until(text, index, [invoke_open, calls_end])
            if gap != ">\n":
                raise DsmlError(N.ERR_CALL_FORMAT,
                                "Tool call format error: expected '>\\n' but got '%s'" % gap)
            if stop == calls_end:
                break
            if stop is None:
                raise DsmlError(N.ERR_CALL_FORMAT, "Missing special token in tool calls")
            index, head, stop = until(text, index, [param_open, invoke_close])
            name = head_form.match(head)
            if name is None:
                raise DsmlError(N.ERR_INVOKE_FORMAT, "Tool name format error: '%s'" % head)
            params = {}
            while stop == param_open:
                index, body, stop = until(text, index, [param_close])
                param = body_form.match(body)
                if param is None:
                    raise DsmlError(N.ERR_PARAMETER_FORMAT,
                                    "Parameter format error: '%s'" % body)
                key, string, value = param.groups()
                if key in params:
                    raise DsmlError(N.ERR_DUPLICATE_PARAMETER,
                                    "Duplicate parameter name: '%s'" % key)
                params[key] = (value, string)
                index, gap, stop = until(text, index, [param_open, invoke_close])
                if gap != ">\n":
                    raise DsmlError(N.ERR_PARAMETER_FORMAT, "Parameter format error: "
                                    "expected '>\\n' but got '%s'" % gap)
            calls.append(decode(name.group(1), params))
        return index, stop, calls

    return parse_tool_calls
