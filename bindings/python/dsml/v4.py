"""DeepSeek-V4's reference surface: every public name of its
encoding_dsv4.py (V4-Flash, V4-Pro), so that ``import dsml.v4 as
encoding_dsv4`` serves code written against it.

encode_messages and parse_message_from_completion_text go through libdsml
with the V4 profile.  The helpers (tool-call conversion, merging and sorting
tool results, the tools block, one message, the calls parser) are plain
Python giving the reference's results, most of them dsml._surface's pieces
with V4's unspaced tag names ("<｜DSML｜tool_calls>", "<｜DSML｜invoke",
"<｜DSML｜parameter").  What the reference refuses raises DsmlError, both an
AssertionError and a ValueError.
"""

import json

from . import _native as N
from . import _surface as S
from . import reference as _v41
from . import render as _render
from ._native import DsmlError
from ._surface import *  # noqa: F401,F403  (the names V4 and V4.1 spell alike)

# ---------------------------------------------------------------------------
# Tag names and templates: V4.1's texts are V4's with the spaced tag names
# (docs/FORMAT.md), so V4's are V4.1's with the plain names written in
# ---------------------------------------------------------------------------

tool_calls_block_name = "tool_calls"
_TAGS = S.names(tool_calls_block_name, "invoke", "parameter")


def _unspaced(template):
    for field in ("tc_block_name", "tool_call_tag_name", "tool_parameter_tag_name"):
        template = template.replace("{%s}" % field, _TAGS[field])
    return template


tool_call_template = _unspaced(_v41.tool_call_template)
TOOLS_TEMPLATE = _unspaced(_v41.TOOLS_TEMPLATE)

REASONING_EFFORT_MAX = (
    "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n"
    "You MUST be very thorough in your thinking and comprehensively decompose the problem "
    "to resolve the root cause, rigorously stress-testing your logic against all potential "
    "paths, edge cases, and adversarial scenarios.\n"
    "Explicitly write out your entire deliberation process, documenting every intermediate "
    "step, considered alternative, and rejected hypothesis to ensure absolutely no "
    "assumption is left unchecked.\n\n")
_EFFORTS = ("max", None, "high")

# ---------------------------------------------------------------------------
# Tool calls (V3.2's are the same: dsml.v32 takes these)
# ---------------------------------------------------------------------------


def tools_from_openai_format(tools):
    """OpenAI tools -> their function schemas (the same objects)."""
    return [tool["function"] for tool in tools]


def tool_calls_from_openai_format(tool_calls):
    """OpenAI tool calls -> {"name", "arguments"}."""
    return [{"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
            for call in tool_calls]


def tool_calls_to_openai_format(tool_calls):
    """{"name", "arguments"} -> OpenAI tool calls."""
    return [{"type": "function", "function": {"name": call["name"],
                                              "arguments": call["arguments"]}}
            for call in tool_calls]


def decode_dsml_to_arguments(tool_name, tool_args):
    """A parsed invoke -> {"name", "arguments" (JSON text)}; tool_args maps
    each parameter name to (value text, "true" | "false")."""
    return {"name": tool_name, "arguments": S.arguments_text(tool_args)}


def encode_arguments_to_dsml(tool_call):
    """The parameter lines of one call: its arguments' JSON text decoded;
    anything that is not JSON text (an object included) becomes
    {"arguments": it}."""
    try:
        arguments = json.loads(tool_call["arguments"])
    except Exception:
        arguments = {"arguments": tool_call["arguments"]}
    return S.parameter_lines(arguments, _TAGS)


def find_last_user_index(messages):
    """Index of the last user or developer message, or -1."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") in ("user", "developer"):
            return index
    return -1


def render_tools(tools):
    """The tools block for function schemas (tools_from_openai_format's)."""
    return S.tools_text(TOOLS_TEMPLATE, tools, _TAGS)


def _calls_text(calls):
    return S.calls_block(calls, lambda call: call.get("name"), encode_arguments_to_dsml,
                         tool_call_template, tool_calls_template, _TAGS)


# ---------------------------------------------------------------------------
# Preprocessing and one message
# ---------------------------------------------------------------------------


def _user_turn(msg, blocks):
    turn = {"role": "user", "content": msg.get("content", ""), "content_blocks": blocks}
    turn.update((key, msg[key]) for key in ("task", "wo_eos", "mask") if key in msg)
    return turn


def merge_tool_messages(messages):
    """Tool messages become tool_result blocks of a user message (appended to
    the previous one when it has blocks); a user message's content joins
    such a message as a text block unless it has a task, else starts one
    that keeps only role, content, task, wo_eos and mask.  The input is not
    changed."""
    return S.merge_tool_results(
        messages, lambda msg: [{"type": "text", "text": msg.get("content", "")}], _user_turn)


def render_message(index, messages, thinking_mode, drop_thinking=True,
                   reasoning_effort=None):
    """One message of a merged, sorted list, as V4 writes it: the "max"
    effort paragraph first (message 0, thinking mode), a system message as
    its text, a developer message as a user turn with its tools, then the
    generation header or task token that the next message calls for."""
    msg, role, content, tools, response_format, calls, thinking, last_user = S.message(
        index, messages, thinking_mode, find_last_user_index, tools_from_openai_format,
        tool_calls_from_openai_format)
    if reasoning_effort not in _EFFORTS:
        raise DsmlError(N.ERR_EFFORT, "Invalid reasoning effort: {} (V4 knows only 'high' "
                        "and 'max')".format(reasoning_effort))
    out = [REASONING_EFFORT_MAX if index == 0 and thinking and reasoning_effort == "max"
           else ""]

    if role == "system":
        out += [system_msg_template.format(content=content or ""),
                S.appendix(tools, response_format, render_tools)]
    elif role == "developer":
        if not content:
            raise DsmlError(N.ERR_DEVELOPER, "Invalid message for role `developer`: "
                            "its content must not be empty")
        out.append(user_msg_template.format(
            content=USER_SP_TOKEN + content + S.appendix(tools, response_format, render_tools)))
    elif role == "user":
        out += [USER_SP_TOKEN, S.user_text(msg)]
    elif role == "latest_reminder":
        out += [LATEST_REMINDER_SP_TOKEN, latest_reminder_msg_template.format(content=content)]
    elif role == "tool":
        raise DsmlError(N.ERR_ROLE, "tool messages must be merged into user messages "
                        "first (merge_tool_messages)")
    elif role == "assistant":
        out.append(S.assistant_text(index, messages, thinking, drop_thinking, last_user,
                                    _calls_text(calls) if calls else ""))
    else:
        raise DsmlError(N.ERR_ROLE, "Unknown role: {}".format(role))
    return "".join(out) + S.turn_end(index, messages, thinking, drop_thinking, last_user,
                                     role in ("user", "developer"))


# ---------------------------------------------------------------------------
# The entry points (libdsml) and the calls parser
# ---------------------------------------------------------------------------


def encode_messages(messages, thinking_mode, context=None, drop_thinking=True,
                    add_default_bos_token=True, reasoning_effort=None, *, guard=False):
    """Render OpenAI-style messages into the DeepSeek-V4 prompt (libdsml's V4
    profile): the reference's arguments and result.  reasoning_effort is
    None, "high" or "max"; guard=True refuses special tokens inside user,
    tool, system and developer text."""
    return _render.encode_messages(messages, thinking_mode, context, drop_thinking,
                                   add_default_bos_token, reasoning_effort,
                                   profile="v4", guard=guard)


parse_message_from_completion_text = S.completion_parser("v4", "V4")
parse_tool_calls = S.calls_parser(_TAGS, decode_dsml_to_arguments)

__all__ = S.public(globals())
