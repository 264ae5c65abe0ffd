"""DeepSeek-V3.2's reference surface: every public name of its
encoding_dsv32.py, so that ``import dsml.v32 as encoding_dsv32`` serves code
written against it.

encode_messages and parse_message_from_completion_text go through libdsml
with the V3.2 profile.  The helpers (tool-call conversion, the tools block,
dropping history reasoning, one message, the calls parser) are plain Python
giving the reference's results; V3.2's tool-call conversions and tag names
are V4's (dsml.v4), its calls block is "<｜DSML｜function_calls>", tool
results are rendered inline after the assistant's calls.  What the
reference refuses raises DsmlError, both an AssertionError and a
ValueError.
"""

import copy
import json

from . import _native as N
from . import _surface as S
from . import render as _render
from ._native import DsmlError
from ._surface import (  # noqa: F401  (the reference's names)
    assistant_msg_template, bos_token, dsml_token, eos_token, response_format_template,
    system_msg_template, thinking_end_token, thinking_start_token, thinking_template,
    to_json)
from .v4 import (  # noqa: F401  (the reference's names, the same as V4's)
    decode_dsml_to_arguments, find_last_user_index, tool_call_template,
    tool_calls_from_openai_format, tool_calls_to_openai_format, tools_from_openai_format)

_TAGS = S.names("function_calls", "invoke", "parameter")

user_msg_template = "<｜User｜>{content}<｜Assistant｜>"
tool_calls_template = S.tool_calls_template.replace("{tc_block_name}", _TAGS["tc_block_name"])
tool_output_template = "\n<result>{content}</result>"

_INVOKE_EXAMPLE = ('<{dsml_token}invoke name="$FUNCTION_NAME%s">\n%s...\n'
                   '</{dsml_token}invoke>\n')
TOOLS_SYSTEM_TEMPLATE = (
    "## Tools\n\nYou have access to a set of tools you can use to answer the user's "
    "question.\nYou can invoke functions by writing a \"<{dsml_token}function_calls>\" "
    "block like the following as part of your reply to the user:\n"
    "<{dsml_token}function_calls>\n"
    + _INVOKE_EXAMPLE % ("", '<{dsml_token}parameter name="$PARAMETER_NAME" '
                         'string="true|false">$PARAMETER_VALUE</{dsml_token}parameter>\n')
    + _INVOKE_EXAMPLE % ("2", "")
    + "</{dsml_token}function_calls>\n\n"
    "String and scalar parameters should be specified as is without any escaping or "
    "quotes, while lists and objects should use JSON format. The \"string\" attribute "
    "should be set to \"true\" for string type parameters and \"false\" for other types "
    "(numbers, booleans, arrays, objects).\n\n"
    "If the thinking_mode is enabled, then after function results you should strongly "
    "consider outputting a thinking block. Here is an example:\n\n"
    "<{dsml_token}function_calls>\n...\n</{dsml_token}function_calls>\n\n"
    "<function_results>\n...\n</function_results>\n\n"
    "{thinking_start_token}...thinking about results{thinking_end_token}\n\n"
    "Here are the functions available in JSONSchema format:\n<functions>\n"
    "{tool_schemas}\n</functions>\n")
del _INVOKE_EXAMPLE


def encode_arguments_to_dsml(tool_call):
    """The parameter lines of one call: its arguments, JSON text of an
    object (json.loads raises on anything else, as in the reference)."""
    return S.parameter_lines(json.loads(tool_call["arguments"]), _TAGS)


def render_tools(tools):
    """The tools block for function schemas (tools_from_openai_format's)."""
    return S.tools_text(TOOLS_SYSTEM_TEMPLATE, tools, _TAGS)


def drop_thinking_messages(messages, last_user_idx=None):
    """The messages without the reasoning of assistants before the last user
    message (by default find_last_user_index's); other messages before it
    except user, system and tool ones are left out.  The input is not
    changed."""
    if last_user_idx is None:
        last_user_idx = find_last_user_index(messages)
    kept = []
    for index, msg in enumerate(messages):
        role = msg.get("role")
        if role in ("user", "system", "tool") or index >= last_user_idx:
            kept.append(msg)
        elif role == "assistant":
            msg = copy.copy(msg)
            msg.pop("reasoning_content", None)
            kept.append(msg)
    return kept


def _tool_results(index, messages, content, thinking, last_user):
    """A tool message: its <result> inside the <function_results> of the
    assistant's calls that it answers (opened by the first, closed by the
    last, then the thinking token)."""
    at = index - 1
    assistant = messages[at]
    while at >= 0 and assistant.get("role") == "tool":
        at -= 1
        assistant = messages[at]
    if index != 0 and not (at >= 0 and assistant.get("role") == "assistant"):
        raise DsmlError(N.ERR_ROLE, "Invalid messages at %d: tool results must follow "
                        "an assistant message" % index)
    order = index - at
    calls = assistant.get("tool_calls")
    if not (calls and len(calls) >= order):
        raise DsmlError(N.ERR_ROLE, "No tool calls but found tool output")
    text = ("\n\n<function_results>" if order == 1 else "") + tool_output_template.format(
        content=content)
    if order == len(calls):
        opens = index >= last_user and thinking
        text += "\n</function_results>\n\n" + (thinking_start_token if opens
                                                else thinking_end_token)
    return text


def render_message(index, messages, thinking_mode):
    """The text of messages[index]: a user (or developer) turn with its
    generation header, a system message, tool results, an assistant turn
    (reasoning only after the last user message)."""
    msg, role, content, tools, response_format, calls, thinking, last_user = S.message(
        index, messages, thinking_mode, find_last_user_index, tools_from_openai_format,
        tool_calls_from_openai_format)
    if role == "system":
        return (system_msg_template.format(content=content or "")
                + S.appendix(tools, response_format, render_tools))
    if role in ("user", "developer"):
        if role == "developer":
            if not content:
                raise DsmlError(N.ERR_DEVELOPER, "Invalid message for role `developer`: "
                                "its content must not be empty")
            content = (S.appendix(tools, response_format, render_tools)
                       + "\n\n# The user's message is: {}".format(content))
        opens = index == last_user and thinking
        return user_msg_template.format(content=content) + (
            thinking_start_token if opens else thinking_end_token)
    if role == "tool":
        return _tool_results(index, messages, content, thinking, last_user)
    if role == "assistant":
        block = ""
        if calls:
            block = S.calls_block(calls, lambda call: call.get("name"),
                                  encode_arguments_to_dsml, tool_call_template,
                                  tool_calls_template, _TAGS)
        reasoning = ""
        if thinking and index > last_user:
            if not (msg.get("reasoning_content") or calls):
                raise DsmlError(N.ERR_MISSING_KEY, "an assistant message after the last "
                                "user message needs reasoning_content or tool_calls in "
                                "thinking mode")
            reasoning = thinking_template.format(
                reasoning_content=msg.get("reasoning_content") or "") + thinking_end_token
        return assistant_msg_template.format(reasoning=reasoning, content=content or "",
                                             tool_calls=block)
    raise DsmlError(N.ERR_ROLE, "Unknown role: {}".format(role))


def encode_messages(messages, thinking_mode, context=None, drop_thinking=True,
                    add_default_bos_token=True, *, guard=False):
    """Render OpenAI-style messages into the DeepSeek-V3.2 prompt (libdsml's
    V3.2 profile): the reference's arguments and result (it has no
    reasoning effort).  guard=True refuses special tokens inside user, tool,
    system and developer text."""
    return _render.encode_messages(messages, thinking_mode, context, drop_thinking,
                                   add_default_bos_token, profile="v32", guard=guard)


parse_message_from_completion_text = S.completion_parser("v32", "V3.2")
parse_tool_calls = S.calls_parser(_TAGS, decode_dsml_to_arguments)

__all__ = S.public(globals())
