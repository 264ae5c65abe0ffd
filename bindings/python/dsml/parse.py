"""Completions: parse_message_from_completion_text (the reference's
signature), parse_completion with the detector's options, and Detector, the
streaming detector (feed text, get typed events, finish, take the message).
"""

import ctypes
import json
import struct
from collections import namedtuple

from . import _fast
from . import _native as N
from ._native import DsmlError
from .render import _utf8, to_json_text

_byref = ctypes.byref
_string_at = ctypes.string_at
_size_t = ctypes.c_size_t
_loads = json.loads
# The library's message JSON is well-formed, starts at offset 0 and has no
# surrounding space, so the decoder's scanner is called directly.
_scan = json.JSONDecoder().scan_once
_lib = N.lib

_THINKING = {"chat": N.CHAT, "thinking": N.THINKING}


def _text_bytes(text, what="text"):
    if isinstance(text, str):
        return _utf8(text, what)
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise DsmlError(N.ERR_TYPE, "%s must be str or bytes, not %s"
                    % (what, type(text).__name__))


def _policy_value(name, value):
    names = N.POLICIES[name]
    if type(value) is str and value in names:
        return names.index(value)
    if type(value) is bool:
        return int(value)
    if type(value) is int and 0 <= value < len(names):
        return value
    raise DsmlError(N.ERR_ARGUMENT, "%s must be one of %s, not %r"
                    % (name, ", ".join(repr(n) for n in names), value))


def _limits(limits):
    lim = N.Limits()
    for key, value in dict(limits).items():
        if key not in dict(N.Limits._fields_):
            raise DsmlError(N.ERR_ARGUMENT, "unknown limit %r (one of %s)"
                            % (key, ", ".join(f for f, _ in N.Limits._fields_)))
        if type(value) is not int or value < 0:
            raise DsmlError(N.ERR_ARGUMENT, "limit %s must be an int >= 0" % key)
        setattr(lim, key, value)
    return lim


def _mode(mode, strict, default):
    """The detector mode from mode= ("strict", "lenient", "recover") and its
    older spelling strict= (True: "strict"); None for neither."""
    if mode is None:
        if strict is None:
            return default
        return "strict" if strict else "lenient"
    if mode not in N.DETECT_MODES:
        raise DsmlError(N.ERR_ARGUMENT, "mode must be one of %s, not %r"
                        % (", ".join(repr(m) for m in N.DETECT_MODES), mode))
    if strict is not None and bool(strict) != (mode == "strict"):
        raise DsmlError(N.ERR_ARGUMENT, "strict=%r contradicts mode=%r" % (strict, mode))
    return mode


def _recoveries(value):
    """recoveries=: names of the recoveries (DSML_RECOVER_*), or the DSML_RECOVER_*
    bits as an int."""
    if type(value) is int and 0 <= value <= 0x3F:
        return value
    if isinstance(value, str):
        value = (value,)
    bits = 0
    for name in value:
        if name not in N.RECOVERIES:
            raise DsmlError(N.ERR_ARGUMENT, "unknown recovery %r (one of %s)"
                            % (name, ", ".join(sorted(N.RECOVERIES))))
        bits |= N.RECOVERIES[name]
    return bits


def _tool_choice(opts, choice, keep):
    """tool_choice ("auto", "none", "required", or {"type": "function",
    "function": {"name": N}}) into the options."""
    if isinstance(choice, str) and choice in N.TOOL_CHOICES:
        opts.tool_choice = N.TOOL_CHOICES[choice]
        return
    function = choice.get("function") if isinstance(choice, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if choice.get("type") != "function" if isinstance(choice, dict) else True:
        name = None
    if type(name) is not str:
        raise DsmlError(N.ERR_TOOL_CHOICE, "tool_choice must be \"auto\", \"none\", "
                        "\"required\" or {\"type\": \"function\", \"function\": "
                        "{\"name\": ...}}, not %r" % (choice,))
    data = _text_bytes(name, "tool_choice")
    keep.append(data)
    opts.tool_choice = N.TOOL_CHOICE_FUNCTION
    opts.tool_choice_name = data
    opts.tool_choice_name_len = len(data)


def _detector_options(thinking_mode, profile, mode, tools, limits,
                      keep_message, policies, recoveries=None, tool_choice=None,
                      parallel_tool_calls=True):
    """(options struct, objects that must outlive it)."""
    opts = N.new_detector_options()
    thinking = _THINKING.get(thinking_mode) if type(thinking_mode) is str else None
    if thinking is None:
        raise DsmlError(N.ERR_THINKING_MODE, "Invalid thinking_mode `%s`"
                        % (thinking_mode,))
    opts.thinking_mode = thinking
    opts.profile = N.profile_value(profile)
    opts.mode = N.DETECT_MODES[mode]
    if recoveries is not None:
        opts.recoveries = _recoveries(recoveries)
    if not keep_message:
        opts.flags |= N.DETECT_NO_MESSAGE
    for name, value in policies.items():
        if name not in N.POLICIES:
            raise TypeError("unknown policy %r (one of %s)"
                            % (name, ", ".join(sorted(N.POLICIES))))
        setattr(opts, name, _policy_value(name, value))
    keep = []
    if tools is not None:
        if isinstance(tools, (str, bytes, bytearray, memoryview)):
            data = _text_bytes(tools, "tools")
        else:
            data = _text_bytes(to_json_text(tools, "tools"), "tools")
        keep.append(data)
        opts.tools_json = data
        opts.tools_len = len(data)
    if limits is not None:
        lim = _limits(limits)
        keep.append(lim)
        opts.limits = ctypes.pointer(lim)
    if tool_choice is not None:
        _tool_choice(opts, tool_choice, keep)
    if parallel_tool_calls is False:
        opts.parallel_calls = N.PARALLEL_CALLS_FIRST
    elif parallel_tool_calls is not True:
        raise DsmlError(N.ERR_TYPE, "parallel_tool_calls must be True or False, not %r"
                        % (parallel_tool_calls,))
    return opts, keep


# ---------------------------------------------------------------------------
# Whole completions
# ---------------------------------------------------------------------------

# Strict reference options per (thinking, profile); read-only for the library.
_strict_cache = {}


def _strict_options(thinking, profile):
    key = (thinking, profile)
    opts = _strict_cache.get(key)
    if opts is None:
        opts = N.new_detector_options()
        opts.thinking_mode = thinking
        opts.profile = N.profile_value(profile)
        opts.mode = N.DETECT_STRICT
        _strict_cache[key] = opts
    return opts


def _parse(data, opts):
    out = N.Output()
    err = N.error_struct()
    status = _lib.dsml_parse_completion(data, len(data), _byref(opts),
                                        _byref(out), _byref(err))
    if status != 0:
        N.raise_error(status, err)
    try:
        text = _string_at(out.text, out.len).decode("utf-8")
    finally:
        _lib.dsml_output_free(_byref(out))
    return _scan(text, 0)[0]


# Detectors kept for parse_message_from_completion_text's compiled path, one
# per (thinking, profile): strict, keeping no message.  The compiled call
# holds the GIL from the reset to the last event, so one detector serves
# every thread.
_parse_detectors = {}


def _parse_detector(thinking, profile):
    """The kept detector's address, or None (the ctypes path then reports
    a profile it does not know, in its order)."""
    handle = _parse_detectors.get((thinking, profile))
    if handle is None:
        try:
            value = N.profile_value(profile)
        except DsmlError:
            return None
        opts = N.new_detector_options()
        opts.thinking_mode = thinking
        opts.profile = value
        opts.mode = N.DETECT_STRICT
        opts.flags |= N.DETECT_NO_MESSAGE
        h = ctypes.c_void_p()
        if _lib.dsml_detector_create(_byref(opts), _byref(h), None) != 0:
            return None
        handle = _parse_detectors.setdefault((thinking, profile), h.value)
        if handle != h.value:  # another thread made one first
            _lib.dsml_detector_destroy(h)
    return handle


def parse_message_from_completion_text(text, thinking_mode, *, profile="v41"):
    """Parse a completion into the assistant message, as the reference does.

    Strict: returns the reference's dict ({"role", "content",
    "reasoning_content", "tool_calls"}) or raises DsmlError wherever the
    reference raises.  As in the reference, thinking_mode "thinking" parses
    reasoning first and any other value parses a chat completion.
    """
    thinking = N.THINKING if thinking_mode == "thinking" else N.CHAT
    if _fast_parse is not None and type(profile) is str:
        handle = _parse_detectors.get((thinking, profile)) or _parse_detector(thinking, profile)
        if handle is not None:
            result = _fast_parse(handle, text)
            if result is not None:
                return result
    if type(text) is str:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = _text_bytes(text)
    else:
        data = _text_bytes(text)
    return _parse(data, _strict_options(thinking, profile))


def parse_completion(text, thinking_mode="chat", *, profile="v41", strict=None,
                     mode=None, tools=None, limits=None, recoveries=None, **policies):
    """Parse a whole completion with the detector's options.

    mode="strict" (the default) is the reference parser, "lenient" the
    lenient mode, "recover" the recovery mode; strict=True / strict=False
    are the older spellings of "strict" / "lenient".  policies and
    recoveries: see Detector.  Returns the message dict.
    """
    opts, keep = _detector_options(thinking_mode, profile, _mode(mode, strict, "strict"),
                                   tools, limits, True, policies, recoveries)
    result = _parse(_text_bytes(text), opts)
    del keep
    return result


# ---------------------------------------------------------------------------
# Streaming
# ---------------------------------------------------------------------------

_KINDS = {
    N.EVENT_REASONING: "reasoning",
    N.EVENT_CONTENT: "content",
    N.EVENT_CALL_BEGIN: "call_begin",
    N.EVENT_ARGUMENTS: "arguments",
    N.EVENT_CALL_END: "call_end",
    N.EVENT_DIAGNOSTIC: "diagnostic",
}


class Event(namedtuple("Event", "kind text index name namespace code offset")):
    """One detector event.

    kind       "reasoning", "content", "call_begin", "arguments",
               "call_end" or "diagnostic"
    text       reasoning / content delta, arguments fragment, or the
               diagnostic's message; None otherwise
    index      call index (call_begin, arguments, call_end), else None
    name       bare tool name (call_begin), else None
    namespace  namespace of a qualified name (call_begin), else None
    code       call_end: 0 complete, 1 incomplete, 2 refused (tool_choice,
               parallel_tool_calls), 3 unterminated; call_begin: 2 refused,
               else None; diagnostic: the DSML_ERR_* code strict mode would
               have failed with; else None
    offset     byte offset in the stream (diagnostic; call_begin: the invoke
               tag; call_end: what ended the call), else None
    """

    __slots__ = ()

    @property
    def complete(self):
        """call_end: whether the call is complete (safe to execute)."""
        return self.kind == "call_end" and self.code == N.CALL_COMPLETE

    @property
    def code_name(self):
        """diagnostic: the DSML_ERR_* name of code."""
        return N.status_name(self.code) if self.kind == "diagnostic" else None


_tuple_new = tuple.__new__
_TEXT_KINDS = (None, "reasoning", "content")
# dsml_packed_event: type, status, text_len | name_len, ns_len, call_index,
# offset (machine byte order)
_HEAD = struct.Struct("=IiQ").unpack_from
_TAIL = struct.Struct("=QQQQ").unpack_from
_HEADER = N.PACKED_HEADER_SIZE


def _records(buf, events):
    """Appends the events of the packed records in buf; returns the final
    header's text_len (the capacity the next event needs, or 0)."""
    off = 0
    append = events.append
    while True:
        t, status, n = _HEAD(buf, off)
        start = off + _HEADER
        if t == 1 or t == 2:
            # reasoning, content: most feeds make one of these
            append(_tuple_new(Event, (_TEXT_KINDS[t], buf[start:start + n].decode("utf-8"),
                                      None, None, None, None, None)))
            off = (start + n + 7) & ~7
            continue
        if t == 0:
            return n
        name_len, ns_len, index, offset = _TAIL(buf, off + 16)
        offset = None if offset == N.NO_OFFSET else offset
        if t == N.EVENT_ARGUMENTS:
            ev = (_KINDS[t], buf[start:start + n].decode("utf-8"), index, None, None,
                  None, None)
        elif t == N.EVENT_CALL_BEGIN:
            name = buf[start:start + name_len].decode("utf-8")
            ns = None
            if ns_len != N.PACKED_NO_NS:
                ns = buf[start + name_len:start + name_len + ns_len].decode("utf-8")
            else:
                ns_len = 0
            ev = (_KINDS[t], None, index, name, ns, status or None, offset)
            n = name_len + ns_len
        elif t == N.EVENT_CALL_END:
            ev = (_KINDS[t], None, index, None, None, status, offset)
        elif t == N.EVENT_DIAGNOSTIC:
            ev = (_KINDS[t], buf[start:start + n].decode("utf-8", "replace"), None, None,
                  None, status, offset)
        else:
            ev = (_KINDS.get(t, "unknown"), None, None, None, None, status, offset)
        append(_tuple_new(Event, ev))
        off = (start + n + 7) & ~7


_BUFFER = 1 << 16

_speedups = _fast.speedups
_fast_parse = None
if _speedups is not None:
    _fast._bind(_speedups, Event, (_KINDS.get(0, "unknown"),) + tuple(
        _KINDS[t] for t in range(1, 7)))
    _fast_feed = _speedups.feed
    _fast_parse = _speedups.parse


class Detector(N.Handle):
    """The streaming detector.

    Detector(thinking_mode="chat", *, profile="v41", tools=None,
             mode="lenient", limits=None, keep_message=True, recoveries=None,
             tool_choice=None, parallel_tool_calls=True, **policies)

    feed(str | bytes) -> list[Event] (bytes may split a UTF-8 character);
    finish() -> list[Event]; message() -> dict (after finish, the same shape
    as parse_message_from_completion_text's result).  A failure raises
    DsmlError whose ``events`` holds the events produced before it; the
    error is sticky until reset().

    mode: "lenient" (the default), "strict" (the reference parser) or
    "recover" (lenient with every recovery: what models write beside the
    format is taken as calls; with tools declared, only calls to them);
    strict=True / strict=False are the older spellings of "strict" /
    "lenient".  recoveries: some of the recoveries (DSML_RECOVER_*) in lenient mode,
    names among "spellings", "structure", "attributes", "bodies",
    "bare_tags", "thinking", "cdata", "schema", "foreign" (or their
    DSML_RECOVER_* bits).

    tools: the declared tools (OpenAI "tools" list, or its JSON text), used
    with tool_names="declared" and by recover mode.  Policies, value names in brackets (the
    first is the reference's behaviour, the default):
    reasoning_calls [refuse, parse], missing_think_end [refuse, content],
    stray_think_end [refuse, reasoning], trailing_text [refuse, content],
    trim [none, whitespace], tool_names [any, declared],
    false_values [verbatim, validate], markers [exact, variants].
    limits: dict of dsml_limits fields (max_held_bytes, ...).
    tool_choice ("auto", "none", "required", {"type": "function",
    "function": {"name": N}}) and parallel_tool_calls=False: which calls the
    request allows (options 9 and 10); a call not allowed is parsed and
    reported (a DSML_ERR_TOOL_CHOICE / DSML_ERR_PARALLEL_CALLS diagnostic,
    call_begin and call_end with code CALL_REFUSED, 2) and left out of the
    message.

    One Detector is used by one thread at a time.
    """

    _destroy = _lib.dsml_detector_destroy

    def __init__(self, thinking_mode="chat", *, profile="v41", tools=None,
                 strict=None, mode=None, limits=None, keep_message=True,
                 recoveries=None, tool_choice=None, parallel_tool_calls=True, **policies):
        self._handle = None
        mode = _mode(mode, strict, "lenient")
        opts, keep = _detector_options(thinking_mode, profile, mode, tools,
                                       limits, keep_message, policies, recoveries,
                                       tool_choice, parallel_tool_calls)
        handle = ctypes.c_void_p()
        err = N.error_struct()
        status = _lib.dsml_detector_create(_byref(opts), _byref(handle), _byref(err))
        del keep
        if status != 0:
            N.raise_error(status, err)
        self._handle = handle
        self._set_buffer(_BUFFER)
        self._len = _size_t(0)
        self.thinking_mode = thinking_mode
        self.mode = mode
        self.strict = mode == "strict"

    def _set_buffer(self, size):
        # the records of one call land in a bytearray that ctypes writes
        # through an array sharing its memory
        self._buf = bytearray(size)
        self._arr = (ctypes.c_char * size).from_buffer(self._buf)
        self._cap = _size_t(size)

    def _pump(self, data, flags, _packed=_lib.dsml_detector_feed_packed):
        """One dsml_detector_feed_packed call (more while the buffer was
        full); returns the events."""
        handle = self._open()
        length = self._len
        length.value = len(data) if data is not None else 0
        r = _packed(handle, data, length, flags, self._arr, self._cap, None)
        events = []
        need = _records(self._buf, events)
        while r == 1:
            if need:
                self._set_buffer(max(need, 2 * len(self._buf)))
            length.value = 0
            r = _packed(handle, None, length, 0, self._arr, self._cap, None)
            need = _records(self._buf, events)
        if r != 0:
            raise self._error(r, events)
        return events

    def _error(self, status, events):
        err = _lib.dsml_detector_error(self._handle)
        if err:
            return N.make_error(status, err.contents, events)
        return DsmlError(status, N.status_message(status), events=events)

    def feed(self, data):
        """Feed the next piece of the completion; returns the new events."""
        if data is None:  # the compiled path reads None as "no text"
            raise DsmlError(N.ERR_TYPE, "text must be str or bytes, not NoneType")
        if _speedups is not None and self._handle is not None:
            r = _fast_feed(self._handle.value, data, False)
            if type(r) is list:
                return r
            if r is not NotImplemented:
                raise self._error(r[1], r[0])
        if type(data) is str:
            try:
                data = data.encode("utf-8")
            except UnicodeEncodeError:
                data = _text_bytes(data)
        elif type(data) is not bytes:
            data = _text_bytes(data)
        return self._pump(data, 0)

    def finish(self):
        """End of the stream; returns the last events."""
        if _speedups is not None and self._handle is not None:
            r = _fast_feed(self._handle.value, None, True)
            if type(r) is list:
                return r
            raise self._error(r[1], r[0])
        return self._pump(None, N.PACK_FINISH)

    def message(self):
        """After finish(): the whole message as a dict."""
        handle = self._open()
        out = N.Output()
        err = N.error_struct()
        status = _lib.dsml_detector_message(handle, _byref(out), _byref(err))
        if status != 0:
            N.raise_error(status, err)
        try:
            text = _string_at(out.text, out.len)
        finally:
            _lib.dsml_output_free(_byref(out))
        return _loads(text)

    @property
    def error(self):
        """The sticky error as a DsmlError, or None."""
        err = _lib.dsml_detector_error(self._open())
        if not err or err.contents.code == 0:
            return None
        return N.make_error(err.contents.code, err.contents)

    def reset(self):
        """Back to the state after creation (same options)."""
        _lib.dsml_detector_reset(self._open())

