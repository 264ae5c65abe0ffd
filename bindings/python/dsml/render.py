"""Prompt rendering: encode_messages (the reference's signature), render_case
and render_request, on top of dsml_render_case / dsml_render_request.

Python values become JSON text with json.dumps(ensure_ascii=False), the same
serializer the reference encoder uses, so number texts (1.0, 1e-07, big
integers) reach the library exactly as the reference would print them.
"""

import ctypes
import json
import math
import re
import threading

from . import _fast
from . import _native as N
from ._native import DsmlError

# check_circular off: a cycle ends in RecursionError, reported as DsmlError,
# and the serializer runs faster without its bookkeeping.
_dumps = json.JSONEncoder(ensure_ascii=False, check_circular=False,
                          allow_nan=False).encode
_loads = json.loads

# Infinite floats have no JSON text; the library reads an out-of-range
# number such as 1e400 as infinity and prints it as the reference does
# ("Infinity"), so they are sent that way.  The serializer's own
# Infinity/-Infinity/NaN tokens are rewritten where they stand outside
# strings: no string, whatever it holds, can be taken for one.
_dumps_nonfinite = json.JSONEncoder(ensure_ascii=False, check_circular=False,
                                    allow_nan=True).encode
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|-?Infinity|NaN')
_FINITE = {"Infinity": "1e400", "-Infinity": "-1e400"}


def _finite_token(match):
    token = match.group()
    if token[0] == '"':
        return token
    if token == "NaN":
        raise DsmlError(N.ERR_TYPE, "NaN has no JSON text libdsml can read")
    return _FINITE[token]


def _dumps_infinities(value):
    return _TOKENS.sub(_finite_token, _dumps_nonfinite(value))
_byref = ctypes.byref
_render_case = N.lib.dsml_renderer_render_case
_render_request = N.lib.dsml_renderer_render_request
_renderer_create = N.lib.dsml_renderer_create
_renderer_destroy = N.lib.dsml_renderer_destroy
_string_at = ctypes.string_at
_Output = N.Output
_error_struct = N.error_struct

_MODES = {"chat": N.CHAT, "thinking": N.THINKING}

# The compiled fast path (dsml._speedups): Python objects read straight into
# the renderer's tree; None from it means "take the JSON text path".
_fast_render = _fast.speedups.render_case if _fast.speedups is not None else None

# Options are read-only for the library, so one struct per combination is
# shared by every call (and thread); the compiled path takes its address.
_options_cache = {}
_address_cache = {}


def _options(mode, profile, flags):
    key = (mode, profile, flags)
    opts = _options_cache.get(key)
    if opts is None:
        opts = N.new_render_options()
        opts.thinking_mode = mode
        opts.profile = N.profile_value(profile)
        opts.flags = flags
        _options_cache[key] = opts
        _address_cache[key] = ctypes.addressof(opts)
    return opts


def to_json_text(value, what="value"):
    """JSON text of a Python value, as the reference would serialize it.

    Failures of the serializer become DsmlError like every other refusal.
    """
    try:
        try:
            return _dumps(value)
        except ValueError as exc:
            if "Out of range float" not in str(exc):
                raise
            return _dumps_infinities(value)
    except RecursionError:
        raise DsmlError(N.ERR_LIMIT, "%s: nested too deeply" % what) from None
    except (TypeError, ValueError) as exc:
        raise DsmlError(N.ERR_TYPE, "%s: %s" % (what, exc)) from None


def _utf8(text, what):
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DsmlError(
            N.ERR_SURROGATE,
            "%s: lone surrogate %r at character %d; text must be valid Unicode"
            % (what, exc.object[exc.start:exc.end], exc.start)) from None


# The reference's effort names: a str subclass is looked up in this dict
# (its own __hash__ and __eq__ decide), then written into the effort line
# with str.format, as itself.
_V41_EFFORTS = {"low": 50, "high": 75, "max": 100}
_BOS = "<｜begin▁of▁sentence｜>"
_EFFORT_LINE = "<｜System｜>Reasoning Effort: "


def _effort_subclass(effort):
    """(JSON text, line text) for a V4.1 effort that is a str subclass.

    The reference accepts it when `effort in {"low", "high", "max"}` and then
    writes format(effort, "") where the level goes ("Reasoning Effort:
    max"); the library is given a valid name and the level is replaced in
    the prompt.  Otherwise the library is given a text no name equals, so
    that it refuses it when a message is rendered, as the reference does.
    """
    try:
        known = effort in _V41_EFFORTS
        text = format(effort, "")
    except Exception as exc:  # the reference's lookup or format raises too
        raise DsmlError(N.ERR_EFFORT, "Invalid reasoning effort: %s: %s"
                        % (type(effort).__name__, exc)) from None
    if known:
        return '"max"', text
    if text in _V41_EFFORTS:
        text = "%s (%s)" % (text, type(effort).__name__)
    return _dumps(text), None


def _effort_line(prompt, bos, text):
    """The prompt with the effort line's level ("100", for "max") replaced
    by `text`; the line is the prompt's start when it is there."""
    head = (_BOS if bos else "") + _EFFORT_LINE
    if prompt.startswith(head + "100 (range 1-100"):
        return head + text + prompt[len(head) + 3:]
    return prompt


def _effort_json(effort):
    """reasoning_effort as JSON for a case object.

    A plain int or str keeps its value; anything else (bool, float, int or
    str subclasses, containers) is sent so that the library refuses it when
    a message is rendered, as the reference does.
    """
    t = type(effort)
    if t is int or t is str:
        return _dumps(effort)
    if t is bool:
        return "true" if effort else "false"
    if t is float:
        return '"%r"' % effort if not math.isfinite(effort) else _dumps(effort)
    if isinstance(effort, str):
        # a str subclass (pre-release profile): compared by its text
        return _dumps(str(effort))
    try:
        text = _dumps(effort)
    except (TypeError, ValueError, RecursionError):
        return _dumps(repr(effort))
    if isinstance(effort, int):
        # an int subclass (IntEnum ...) is not `type(effort) is int`
        return _dumps(repr(effort))
    return text


def _text_keys(arguments, where):
    """Tool-call arguments with every key as the reference writes it into a
    parameter's name="..." (str.format: None -> "None", True -> "True"),
    where json.dumps would write "null", "true"."""
    out, first = {}, {}
    for key, value in arguments.items():
        text = key if type(key) is str else format(key, "")
        if text in out:
            raise DsmlError(N.ERR_TOOL_ARGUMENTS,
                            "%s: keys %r and %r are both parameter name %r; JSON text "
                            "cannot carry both" % (where, first[text], key, text),
                            path=where)
        out[text] = value
        first[text] = key
    return out


def _str_keys(args):
    for key in args:
        if type(key) is not str:
            return False
    return True


def _argument_keys(messages, what):
    """`messages` with each tool call's dict arguments keyed by text (copies
    made only where a key is not a str; the caller's objects are left
    alone)."""
    if type(messages) is not list and not isinstance(messages, (list, tuple)):
        return messages
    out = None
    for i, msg in enumerate(messages):
        calls = msg.get("tool_calls") if isinstance(msg, dict) else None
        if not calls or not isinstance(calls, (list, tuple)):
            continue
        new_calls = None
        for j, call in enumerate(calls):
            fn = call.get("function") if isinstance(call, dict) else None
            args = fn.get("arguments") if isinstance(fn, dict) else None
            if not isinstance(args, dict) or _str_keys(args):
                continue
            where = "%s[%d].tool_calls[%d].function.arguments" % (what, i, j)
            if new_calls is None:
                new_calls = list(calls)
            new_calls[j] = dict(call, function=dict(fn, arguments=_text_keys(args, where)))
        if new_calls is not None:
            if out is None:
                out = list(messages)
            out[i] = dict(msg, tool_calls=new_calls)
    return messages if out is None else out


def _python_only(value):
    """What in a content value JSON cannot carry as the reference prints it
    (str() of the value): a tuple ("('a', 1)", JSON has lists only) or a dict
    key that is not a str ("{1: 'x'}"); None when there is none."""
    if isinstance(value, tuple):
        return "a tuple"
    if isinstance(value, dict):
        for key, item in value.items():
            if type(key) is not str:
                return "a dict key that is not a str (%r)" % (key,)
            found = _python_only(item)
            if found:
                return found
    elif isinstance(value, list):
        for item in value:
            found = _python_only(item)
            if found:
                return found
    return None


def _check_contents(messages, what):
    """Refuses a message content the library would render otherwise than
    the reference does: the reference prints such a value with str(), which
    JSON (the library's input) cannot carry; it is refused, never altered."""
    if not isinstance(messages, (list, tuple)):
        return
    for i, msg in enumerate(messages):
        content = msg.get("content") if isinstance(msg, dict) else None
        if content is None or type(content) is str:
            continue
        try:
            found = _python_only(content)
        except RecursionError:  # a cycle: refused by the serializer
            continue
        if found:
            raise DsmlError(N.ERR_TYPE, "%s[%d].content: %s: the reference prints it as "
                            "Python writes it, which JSON cannot carry; pass the text "
                            "(str(value)) or JSON data" % (what, i, found))


def _document_keys(doc):
    """A case or request dict with its messages' (and context's) argument
    keys as text."""
    if not isinstance(doc, dict):
        return doc
    for key in ("messages", "context"):
        _check_contents(doc.get(key), "$." + key)
    new = {key: _argument_keys(doc[key], "$." + key)
           for key in ("messages", "context") if key in doc}
    if all(new[key] is doc[key] for key in new):
        return doc
    return dict(doc, **new)


def _mode_text(mode):
    """Text of an invalid thinking mode, never "", "chat" or "thinking"."""
    text = mode if isinstance(mode, str) else str(mode)
    if text in ("", "chat", "thinking"):
        text = repr(mode)
    return text


class _Renderer(N.Handle):
    """A dsml_renderer: the memory of a render kept for the next one.  With
    the compiled fast path, its blocks come from dsml._speedups' allocator
    (large ones as huge pages), and `pages` (an int at `pages_address`)
    says whether this thread has made a large prompt's str before."""

    _destroy = _renderer_destroy

    def __init__(self):
        handle = ctypes.c_void_p()
        alloc = _fast.speedups.allocator() if _fast.speedups is not None else None
        status = _renderer_create(alloc, _byref(handle))
        if status != 0:
            N.raise_error(status, _error_struct())
        self._handle = handle.value
        self.pages = ctypes.c_int(0)
        self.pages_address = ctypes.addressof(self.pages)


# One renderer per thread (a renderer is used by one thread at a time); its
# output is copied out before the thread's next render.
_thread = threading.local()


def _renderer():
    r = getattr(_thread, "renderer", None)
    if r is None:
        r = _thread.renderer = _Renderer()
    return r


def _call(fn, data, opts, want_images):
    out = ctypes.POINTER(_Output)()
    err = _error_struct()
    status = fn(_renderer()._handle, data, len(data), _byref(opts), _byref(out), _byref(err))
    if status != 0:
        N.raise_error(status, err)
    lent = out.contents
    prompt = _string_at(lent.text, lent.len).decode("utf-8")
    images = None
    if want_images:
        images = _string_at(lent.images, lent.images_len) if lent.images else b"[]"
    if want_images:
        return prompt, {"images": _loads(images)}
    return prompt


def _flags(strict, guard, drop_thinking=True, add_default_bos_token=True,
           _strict=N.RENDER_STRICT, _guard=N.RENDER_GUARD, _keep=N.RENDER_KEEP_THINKING,
           _no_bos=N.RENDER_NO_BOS):
    return ((_strict if strict else 0) | (_guard if guard else 0)
            | (0 if drop_thinking else _keep) | (0 if add_default_bos_token else _no_bos))


def encode_messages(messages, thinking_mode, context=None, drop_thinking=True,
                    add_default_bos_token=True, reasoning_effort=None,
                    return_multi_modal_data=False, *, profile="v41",
                    strict=False, guard=False):
    """Render OpenAI-style messages into the DeepSeek-V4.1 prompt.

    Same arguments and result as the reference encoder's encode_messages:
    the prompt text, or ``(prompt, {"images": [...]})`` when
    return_multi_modal_data is true.  Keyword-only extras: profile ("v41",
    "prerelease", or DeepSeek-V4's "v4" and V3.2's "v32", each its own
    reference encoder), strict (refuse the developer role, as the reference does)
    and guard (refuse special tokens inside user, tool, system and developer
    text).  Every refusal raises DsmlError.
    """
    mode = _MODES.get(thinking_mode) if type(thinking_mode) is str else None
    key = (N.CHAT if mode is None else mode, profile,
           _flags(strict, guard, drop_thinking, add_default_bos_token))
    opts = _options(*key)
    if _fast_render is not None:
        # the compiled path refuses (None) what _check_contents would
        result = _fast_encode(messages, mode, thinking_mode, context, reasoning_effort,
                              profile, _address_cache[key], return_multi_modal_data)
        if result is not None:
            return result
    _check_contents(messages, "$.messages")
    _check_contents(context, "$.context")
    parts = ['{"messages": ', to_json_text(_argument_keys(messages, "$.messages"), "messages")]
    if context:
        parts.append(', "context": ')
        parts.append(to_json_text(_argument_keys(context, "$.context"), "context"))
    if mode is None:
        # refused by the library when a message is rendered, as the
        # reference refuses it
        parts.append(', "thinking_mode": ')
        parts.append(_dumps(_mode_text(thinking_mode)))
    line_text = None
    if reasoning_effort is not None:
        parts.append(', "reasoning_effort": ')
        if (isinstance(reasoning_effort, str) and type(reasoning_effort) is not str
                and profile == "v41"):
            effort, line_text = _effort_subclass(reasoning_effort)
            parts.append(effort)
        else:
            parts.append(_effort_json(reasoning_effort))
    parts.append("}")
    data = _utf8("".join(parts), "messages")
    result = _call(_render_case, data, opts, return_multi_modal_data)
    if line_text is not None and mode == N.THINKING and not context:
        # the line is written at index 0, which is rendered without a context
        if return_multi_modal_data:
            return _effort_line(result[0], add_default_bos_token, line_text), result[1]
        return _effort_line(result, add_default_bos_token, line_text)
    return result


def _fast_encode(messages, mode, thinking_mode, context, effort, profile, address,
                 want_images):
    """encode_messages through dsml._speedups, or None when the JSON text
    path must take it (anything unusual, and every refusal, so that errors
    carry their offsets in that text)."""
    if effort is None:
        effort_json = None
    elif isinstance(effort, str) and type(effort) is not str and profile == "v41":
        return None  # a str subclass: its own line text
    else:
        effort_json = _effort_json(effort)
    mode_json = None if mode is not None else _dumps(_mode_text(thinking_mode))
    r = _renderer()
    result = _fast_render(messages, context or None, mode_json, effort_json,
                          address, want_images, r._handle, r.pages_address)
    if result is not None and want_images:
        return result[0], {"images": _loads(result[1])}
    return result


def _json_bytes(doc, what):
    if isinstance(doc, (bytes, bytearray, memoryview)):
        return bytes(doc)
    if isinstance(doc, str):
        return _utf8(doc, what)
    return _utf8(to_json_text(doc, what), what)


def render_case(case, *, profile="v41", strict=False, guard=False,
                return_multi_modal_data=False):
    """Render a case object (the reference's test-input format).

    ``case`` is a dict, or its JSON text (str or bytes; number texts are kept
    exactly as written): ``messages`` and optionally ``tools`` (attached to
    the first message), ``context``, ``thinking_mode``, ``drop_thinking``,
    ``add_default_bos_token`` and ``reasoning_effort``.
    """
    opts = _options(N.CHAT, profile, _flags(strict, guard))
    data = _json_bytes(_document_keys(case), "case")
    return _call(_render_case, data, opts, return_multi_modal_data)


def render_request(body, *, thinking_mode=None, reasoning_effort=None,
                   profile="v41", strict=False, guard=False,
                   return_multi_modal_data=False):
    """Render an OpenAI chat-completion request body (dict, or JSON text).

    The body's ``messages``, ``tools`` (attached to a leading system message),
    ``reasoning_effort`` and thinking switch (``thinking_mode``,
    ``chat_template_kwargs.thinking`` or ``thinking.type``) are used; the
    keyword arguments are the fallbacks for fields the body does not have.
    """
    if thinking_mode is None:
        mode = N.CHAT
    else:
        mode = _MODES.get(thinking_mode) if type(thinking_mode) is str else None
        if mode is None:
            raise DsmlError(N.ERR_THINKING_MODE,
                            "Invalid thinking_mode `%s`" % (thinking_mode,))
    opts = N.new_render_options()
    opts.thinking_mode = mode
    opts.profile = N.profile_value(profile)
    opts.flags = _flags(strict, guard)
    if reasoning_effort is not None:
        if type(reasoning_effort) is str:
            name = _utf8(reasoning_effort, "reasoning_effort")
            opts.effort_kind = N.EFFORT_NAME
            opts.effort_name = name
            opts.effort_name_len = len(name)
        elif type(reasoning_effort) is int and -2**31 <= reasoning_effort < 2**31:
            opts.effort_kind = N.EFFORT_LEVEL
            opts.effort_level = reasoning_effort
        else:
            raise DsmlError(N.ERR_EFFORT,
                            "Invalid reasoning effort: %r, should be int within "
                            "[1,100] or a name" % (reasoning_effort,))
    data = _json_bytes(_document_keys(body), "body")
    return _call(_render_request, data, opts, return_multi_modal_data)
