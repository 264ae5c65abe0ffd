"""The serving turn: Turn(body) reads and renders an OpenAI chat-completion
request (dsml_turn_create) and holds everything it decided; turn.responder()
turns the model's completion into the chunks and the chat.completion a
server sends (dsml_responder_*).  Turn(body, api="anthropic") reads an
Anthropic Messages body and its responder writes the message object and
its events; api="responses" an OpenAI Responses body, the response object
and its events.  error_json(error, api) is the error object of a 400
answer in the API's shape.

    turn = dsml.Turn(body)                 # dict, or its JSON text
    prompt = turn.prompt
    responder = turn.responder()
    for piece in engine_output:
        for chunk in responder.feed(piece):   # chat.completion.chunk dicts
            send(chunk)
    for chunk in responder.end("stop"):       # "stop", "length", "abort"
        send(chunk)
    response = responder.completion()         # the chat.completion dict
"""

import ctypes
import json

from . import _fast
from . import _native as N
from ._native import DsmlError
from .parse import _detector_options
from .render import _document_keys, _json_bytes, _utf8

_THINKING = {"chat": N.CHAT, "thinking": N.THINKING}
_API_NAMES = {value: name for name, value in N.APIS.items()}
_CHOICES = {0: "auto", 1: "none", 2: "required", 3: "function"}


def _text(ptr, length):
    return ctypes.string_at(ptr, length).decode("utf-8") if ptr else None


def _aliases(effort_aliases):
    """effort_aliases {name: accepted name or level 1..100} as the C array."""
    items = list(dict(effort_aliases or {}).items())
    array = (N.EffortAlias * max(len(items), 1))()
    keep = []
    for i, (name, value) in enumerate(items):
        if type(name) is not str or not (type(value) is str or type(value) is int):
            raise DsmlError(N.ERR_ARGUMENT, "effort_aliases maps names to a name or "
                            "a level, not %r: %r" % (name, value))
        encoded = _utf8(name, "effort_aliases")
        keep.append(encoded)
        array[i].name = encoded
        if type(value) is str:
            target = _utf8(value, "effort_aliases")
            keep.append(target)
            array[i].as_ = target
        else:
            array[i].level = value
    return array, len(items), keep


class Turn(N.Handle):
    """One request, read and rendered.

    Turn(body, *, api="chat", thinking_mode=None, reasoning_effort=None,
    profile="v41", strict=False, guard=False, segments=False,
    mode="lenient", limits=None, recoveries=None, none_drops_tools=False,
    effort_aliases=None, grammar=None, grammar_auto=False,
    grammar_optional=False, **policies)

    api: the body's API, "chat" (OpenAI chat completions), "anthropic"
    (Anthropic Messages) or "responses" (OpenAI Responses), never guessed
    from the body; the responders write that API's objects and events.
    thinking_mode ("chat", "thinking") / reasoning_effort apply when the
    body gives none (default_thinking); mode, limits, recoveries and
    policies are the Detector's, for the responders; grammar ("gbnf",
    "lark", "structural_tag") writes the grammar the request calls for.
    Attributes: everything dsml_turn_info holds (prompt, images,
    thinking_mode, thinking_from, starts_in_reasoning, effort_level,
    effort_in_prompt, tools, tools_in_prompt, tool_choice,
    parallel_tool_calls, response_format, prefill, ignored, model, grammar,
    grammar_info, grammar_from, grammar_status, grammar_error,
    missing_reasoning, restored, stop, n, stream, include_usage, api).
    Errors raise DsmlError with the JSON path in the body.  close() (or the
    end of a with block) frees the turn; its responders stay valid."""

    _destroy = N.lib.dsml_turn_destroy

    def __init__(self, body, *, api="chat", thinking_mode=None, reasoning_effort=None,
                 profile="v41", strict=False, guard=False, segments=False, mode="lenient",
                 limits=None, recoveries=None, none_drops_tools=False, effort_aliases=None,
                 grammar=None, grammar_auto=False, grammar_optional=False, **policies):
        self._handle = None
        if api not in N.APIS:
            raise DsmlError(N.ERR_ARGUMENT, "api must be one of %s, not %r"
                            % (", ".join(repr(a) for a in N.APIS), api))
        render = N.new_render_options()
        if thinking_mode is not None:
            if thinking_mode not in _THINKING:
                raise DsmlError(N.ERR_THINKING_MODE, "Invalid thinking_mode `%s`"
                                % (thinking_mode,))
            render.thinking_mode = _THINKING[thinking_mode]
        render.profile = N.profile_value(profile)
        render.flags = ((N.RENDER_STRICT if strict else 0) | (N.RENDER_GUARD if guard else 0)
                        | (N.RENDER_SEGMENTS if segments else 0))
        if reasoning_effort is not None:
            self._effort(render, reasoning_effort)
        detect, keep = _detector_options("chat", profile, mode, None, limits, True,
                                         policies, recoveries)
        opts = N.TurnOptions()
        N.lib.dsml_turn_options_init_size(ctypes.byref(opts), ctypes.sizeof(opts))
        opts.render = ctypes.pointer(render)
        opts.detect = ctypes.pointer(detect)
        opts.default_thinking = N.TURN_THINKING[thinking_mode]
        opts.api = N.APIS[api]
        opts.flags = ((N.TURN_NONE_DROPS_TOOLS if none_drops_tools else 0)
                      | (N.TURN_GRAMMAR_AUTO if grammar_auto else 0)
                      | (N.TURN_GRAMMAR_OPTIONAL if grammar_optional else 0))
        aliases, count, alias_keep = _aliases(effort_aliases)
        keep += [aliases, alias_keep]
        if count:
            opts.effort_aliases = aliases
            opts.effort_alias_count = count
        if grammar is not None:
            if grammar not in N.GRAMMAR_FORMATS:
                raise DsmlError(N.ERR_ARGUMENT, "grammar must be one of %s, not %r"
                                % (", ".join(repr(f) for f in N.GRAMMAR_FORMATS), grammar))
            gopts = N.GrammarOptions()
            N.lib.dsml_grammar_options_init_size(ctypes.byref(gopts), ctypes.sizeof(gopts))
            gopts.format = N.GRAMMAR_FORMATS[grammar]
            keep.append(gopts)
            opts.grammar = ctypes.pointer(gopts)
        data = _json_bytes(_document_keys(body) if isinstance(body, dict) else body, "body")
        handle = ctypes.c_void_p()
        err = N.error_struct()
        status = N.lib.dsml_turn_create(data, len(data), ctypes.byref(opts),
                                        ctypes.byref(handle), ctypes.byref(err))
        if status != 0:
            N.raise_error(status, err)
        self._handle = handle
        self._read(N.lib.dsml_turn_get_info(handle).contents)

    @staticmethod
    def _effort(render, effort):
        if type(effort) is int:
            render.effort_kind = N.EFFORT_LEVEL
            render.effort_level = effort
        elif type(effort) is str:
            name = _utf8(effort, "reasoning_effort")
            render._effort_name = name  # kept alive with the struct
            render.effort_kind = N.EFFORT_NAME
            render.effort_name = name
            render.effort_name_len = len(name)
        else:
            raise DsmlError(N.ERR_EFFORT, "reasoning_effort must be a str or an int, not %s"
                            % type(effort).__name__)

    def _read(self, info):
        self.prompt = _text(info.prompt, info.prompt_len)
        self.images = json.loads(_text(info.images, info.images_len) or "[]")
        self.segments = (json.loads(_text(info.segments, info.segments_len))
                         if info.segments else None)
        self.thinking_mode = "thinking" if info.thinking_mode == N.THINKING else "chat"
        self.thinking_from = (info.thinking_from or b"").decode("utf-8")
        self.starts_in_reasoning = bool(info.starts_in_reasoning)
        self.effort_level = info.effort_level
        self.effort_in_prompt = bool(info.effort_in_prompt)
        self.tools = json.loads(_text(info.tools, info.tools_len) or "[]")
        self.tools_in_prompt = bool(info.tools_in_prompt)
        choice = _CHOICES.get(info.tool_choice, "auto")
        if choice == "function":
            choice = {"type": "function", "function": {
                "name": _text(info.tool_choice_name, info.tool_choice_name_len)}}
        self.tool_choice = choice
        self.parallel_tool_calls = bool(info.parallel_tool_calls)
        fmt = _text(info.response_format, info.response_format_len)
        self.response_format = json.loads(fmt) if fmt is not None else None
        self.prefill = bool(info.prefill)
        self.ignored = json.loads(_text(info.ignored, info.ignored_len) or "[]")
        self.model = _text(info.model, info.model_len)
        self.grammar = _text(info.grammar, info.grammar_len)
        self.grammar_info = None
        if info.grammar_info:
            g = info.grammar_info.contents
            self.grammar_info = {
                "lazy": bool(g.lazy),
                "trigger": _text(g.trigger, g.trigger_len),
                "trigger_pattern": _text(g.trigger_pattern, g.trigger_pattern_len),
                "rules": g.rules}
        self.grammar_from = info.grammar_from.decode("utf-8") if info.grammar_from else None
        self.grammar_status = info.grammar_status
        self.grammar_error = (N.make_error(info.grammar_error.contents.code,
                                           info.grammar_error.contents)
                              if info.grammar_error else None)
        # the fields of later releases, when the library has them
        if info.size < N.TurnInfo.api.offset + ctypes.sizeof(ctypes.c_int):
            raise DsmlError(N.ERR_ARGUMENT, "the loaded libdsml predates this binding "
                            "(dsml_turn_info of %d bytes)" % info.size)
        self.missing_reasoning = json.loads(
            _text(info.missing_reasoning, info.missing_reasoning_len) or "[]")
        self.restored = json.loads(_text(info.restored, info.restored_len) or "[]")
        self.stop = json.loads(_text(info.stop, info.stop_len) or "[]")
        self.n = info.n
        self.stream = bool(info.stream)
        self.include_usage = bool(info.include_usage)
        self.api = _API_NAMES[info.api]

    def error_json(self, error):
        """The error object of this turn's API for error (a DsmlError), as
        a dict: see error_json()."""
        return error_json(error, self.api)

    def responder(self, **options):
        """A Responder for this turn's completion (see Responder)."""
        return Responder(self, **options)



def _event_data(text):
    """The data objects of server-sent events "event: NAME\\ndata: {...}\\n\\n"."""
    out = []
    for event in text.split(b"\n\n"):
        for line in event.split(b"\n"):
            if line.startswith(b"data: "):
                out.append(json.loads(line[6:]))
    return out


def _c_text(text, cap, what):
    """text as UTF-8 for a dsml_error field of cap bytes (NUL included)."""
    data = (text or "").encode("utf-8")
    if len(data) >= cap:
        raise DsmlError(N.ERR_ARGUMENT, "the error's %s is over %d bytes, more than a "
                        "dsml_error holds" % (what, cap - 1))
    return data


def error_json(error, api="chat"):
    """The error object a server answers a refused request with
    (dsml_error_json_api), as a dict: for "chat" and "responses" OpenAI's
    {"error": {"message", "type": "invalid_request_error", "param" (the JSON
    path or None), "code" (the DSML_ERR_* name in lower case)}}; for
    "anthropic" Anthropic's {"type": "error", "error": {"type":
    "invalid_request_error", "message" (naming the path: " (at PATH)" is
    added when the library's message does not begin with it)}}.  error: a
    DsmlError (what Turn() raises)."""
    if not isinstance(error, DsmlError):
        raise DsmlError(N.ERR_TYPE, "error must be a DsmlError, not %s"
                        % type(error).__name__)
    if api not in N.APIS:
        raise DsmlError(N.ERR_ARGUMENT, "api must be one of %s, not %r"
                        % (", ".join(repr(a) for a in N.APIS), api))
    err = N.error_struct()
    err.code = error.code
    err.offset = N.NO_OFFSET if error.offset is None else error.offset
    err.path = _c_text(error.path, N.Error.path.size, "path")
    err.message = _c_text(error.message, N.Error.message.size, "message")
    out = N.Output()
    status = N.lib.dsml_error_json_api(ctypes.byref(err), N.APIS[api], ctypes.byref(out))
    if status != 0:
        N.raise_error(status, N.error_struct())
    try:
        return json.loads(ctypes.string_at(out.text, out.len))
    finally:
        N.lib.dsml_output_free(ctypes.byref(out))


class Responder(N.Handle):
    """The completion of a Turn, fed as the engine writes it, into the
    chunks a server streams and the chat.completion at the end (for an
    Anthropic turn the events and the message object, for a Responses turn
    the events and the response object: the turn's api).

    Responder(turn, *, sse=False, hold_calls=False, drop_raw=False,
    id=None, created=0, model=None, seed=None, choice_index=0,
    signature=None, stream_arguments=False, keep_raw=False)

    choice_index: the choice's "index" (a request with n > 1: one
    responder per choice).  signature: an Anthropic turn's thinking-block
    signature (in the message and as a signature_delta event).
    stream_arguments=True sends a call's arguments as they arrive (RISK: a
    call cut later has been sent in part); keep_raw=True keeps a broken
    call's raw text as content (default: dropped, with a diagnostic).
    hold_calls and drop_raw are accepted and have no effect (both are the
    default).  set_usage(prompt, completion, reasoning=0) gives the token
    counts; .stopped is True once a stop string of the request matched
    (stop generating and call end()).

    feed(text) and end(reason) return the new chunks: dicts (the
    chat.completion.chunk objects; an Anthropic or Responses turn's event
    objects, their "type" the event's name), or with sse=True the
    server-sent event
    bytes ("data: {...}\\n\\n", and "data: [DONE]\\n\\n" after the last;
    Anthropic's and Responses' "event: NAME\\ndata: {...}\\n\\n").
    The detector's and the responder's diagnostics go to .diagnostics as
    (code name, offset, message).  completion() after end(): the
    chat.completion dict.  A failure (strict mode, a limit) raises
    DsmlError, after the chunks before it were returned."""

    _destroy = N.lib.dsml_responder_destroy

    def __init__(self, turn, *, sse=False, hold_calls=False, drop_raw=False, id=None,
                 created=0, model=None, seed=None, choice_index=0, signature=None,
                 stream_arguments=False, keep_raw=False):
        self._handle = None
        if not isinstance(turn, Turn) or turn._handle is None:
            raise DsmlError(N.ERR_ARGUMENT, "a Responder needs an open Turn")
        opts = N.ResponderOptions()
        N.lib.dsml_responder_options_init_size(ctypes.byref(opts), ctypes.sizeof(opts))
        opts.flags = ((N.RESPOND_SSE if sse else 0) | (N.RESPOND_HOLD_CALLS if hold_calls else 0)
                      | (N.RESPOND_DROP_RAW if drop_raw else 0)
                      | (N.RESPOND_STREAM_ARGUMENTS if stream_arguments else 0)
                      | (N.RESPOND_KEEP_RAW if keep_raw else 0))
        keep = []
        for field, value in (("id", id), ("model", model), ("seed", seed),
                             ("signature", signature)):
            if value is None:
                continue
            data = value if isinstance(value, bytes) else _utf8(value, field)
            keep.append(data)
            setattr(opts, field, data)
            setattr(opts, field + "_len", len(data))
        opts.created = int(created)
        if not isinstance(choice_index, int) or isinstance(choice_index, bool) \
                or choice_index < 0:
            raise DsmlError(N.ERR_ARGUMENT, "choice_index must be an int >= 0, not %r"
                            % (choice_index,))
        opts.choice_index = choice_index
        handle = ctypes.c_void_p()
        err = N.error_struct()
        status = N.lib.dsml_responder_create(turn._handle, ctypes.byref(opts),
                                             ctypes.byref(handle), ctypes.byref(err))
        if status != 0:
            N.raise_error(status, err)
        self._handle = handle
        self._sse = sse
        self._events = turn.api != "chat"   # items are "event: ..." texts
        self._item = N.Item()
        self._item.size = ctypes.sizeof(N.Item)
        self.diagnostics = []

    def _run(self, data, reason):
        """Feed data (bytes or None), then end with reason (or None): the
        new items as (type, text, status, offset), in one call on the
        compiled path, else through ctypes."""
        handle = self._open()
        if _respond is not None:
            items, status, error = _respond(handle.value, data, reason)
            if items is None:
                N.raise_error(status, N.lib.dsml_responder_error(handle).contents)
            return self._take(items, error)
        if data is not None:
            self._check(N.lib.dsml_responder_feed(handle, data, len(data)))
        if reason is not None:
            self._check(N.lib.dsml_responder_end(handle, reason))
        items, item = [], self._item
        while True:
            r = N.lib.dsml_responder_next(handle, ctypes.byref(item))
            if r <= 0:
                return self._take(items, r)
            items.append((item.type, ctypes.string_at(item.text, item.len) if item.text
                          else b"", item.status,
                          None if item.offset == N.NO_OFFSET else item.offset))

    def _take(self, items, error):
        """The chunks of the items; the diagnostics to .diagnostics; the
        sticky error raised after them, its .chunks the chunks before it."""
        out = []
        for kind, text, status, offset in items:
            if kind == N.ITEM_DIAGNOSTIC:
                self.diagnostics.append((N.status_name(status), offset,
                                         text.decode("utf-8")))
            elif self._sse:
                out.append(text)
            elif kind == N.ITEM_CHUNK and self._events:
                out += _event_data(text)
            elif kind == N.ITEM_CHUNK:
                out.append(json.loads(text))
        if error < 0:
            exc = N.make_error(error, N.lib.dsml_responder_error(self._handle).contents)
            exc.chunks = out
            raise exc
        return out

    def _check(self, status):
        if status == N.ERR_STATE or status == N.ERR_ARGUMENT:
            N.raise_error(status, N.lib.dsml_responder_error(self._handle).contents)

    def feed(self, text):
        """The next piece of the completion (str or bytes): the new chunks."""
        if text is None or not isinstance(text, (str, bytes, bytearray)):
            raise DsmlError(N.ERR_TYPE, "text must be str or bytes, not %s"
                            % type(text).__name__)
        data = _utf8(text, "text") if isinstance(text, str) else bytes(text)
        return self._run(data, None)

    def end(self, reason="stop"):
        """The engine stopped ("stop": its EOS, "length", "abort", "text"):
        the last chunks, the finish reason in the last."""
        if reason not in N.END_REASONS:
            raise DsmlError(N.ERR_ARGUMENT, "reason must be one of %s, not %r"
                            % (", ".join(repr(r) for r in N.END_REASONS), reason))
        return self._run(None, N.END_REASONS[reason])

    def set_usage(self, prompt_tokens, completion_tokens, reasoning_tokens=0):
        """The server's token counts for the usage object (and the usage
        chunk a request with stream_options.include_usage asks for; an
        Anthropic turn's message_start: give (P, 0) before feeding)."""
        counts = (prompt_tokens, completion_tokens, reasoning_tokens)
        if any(not isinstance(c, int) or isinstance(c, bool) or c < 0 for c in counts):
            raise DsmlError(N.ERR_ARGUMENT, "token counts must be ints >= 0, not %r"
                            % (counts,))
        if reasoning_tokens > completion_tokens:
            raise DsmlError(N.ERR_ARGUMENT, "reasoning_tokens (%d) above completion_tokens "
                            "(%d)" % (reasoning_tokens, completion_tokens))
        status = N.lib.dsml_responder_set_usage(self._open(), *counts)
        if status != 0:
            raise DsmlError(status, "the token counts %r cannot be written (their sum "
                            "overflows)" % (counts,))

    @property
    def stopped(self):
        """True once a stop string of the request matched: stop generating
        and call end()."""
        return bool(N.lib.dsml_responder_stopped(self._open()))

    def completion(self):
        """The chat.completion dict (after end()); for an Anthropic turn
        the message object, for a Responses turn the response object."""
        out = N.Output()
        err = N.error_struct()
        status = N.lib.dsml_responder_completion(self._open(), ctypes.byref(out),
                                                 ctypes.byref(err))
        if status != 0:
            N.raise_error(status, err)
        try:
            return json.loads(ctypes.string_at(out.text, out.len))
        finally:
            N.lib.dsml_output_free(ctypes.byref(out))



_respond = None
if _fast.speedups is not None and hasattr(_fast.speedups, "respond"):
    _fast.bind_responder(_fast.speedups)
    _respond = _fast.speedups.respond
