"""What the vLLM and SGLang adapters share: the two jobs a server's parsers
do, each on one dsml.Detector, each O(1) per token (a delta is fed once; no
earlier text is scanned again).

ReasoningSplit  completion text -> reasoning deltas, then the raw text after
                the reasoning (for the tool parser).
CallStream      content text -> content deltas and tool-call pieces, or, in
                one shot, the content and the complete calls.

Options are the Detector's keyword arguments (markers="variants" for V4's
unspaced tags, mode="recover" for what models write beside the format,
policies, tools, limits).  Lenient and recover mode: no text is lost; what
cannot be placed stays content.
"""

import json
import uuid

from ..parse import Detector
from ..reference import eos_token, thinking_end_token, thinking_start_token

_MISSING_THINK_END = -19
CALL_REFUSED = 2    # a call_begin's code: tool_choice / parallel_tool_calls refuse it


def call_id():
    """A fresh OpenAI tool-call id."""
    return "call_" + uuid.uuid4().hex[:24]


class ReasoningSplit:
    """Splits a completion that starts inside the reasoning (the prompt
    ended with <think>) at its end: </think>, or a calls block (which ends
    the reasoning, as vLLM and SGLang read it).  feed() returns (reasoning
    delta, raw text after the reasoning); once the reasoning is over, deltas
    pass through untouched.  With thinking=False everything is text after
    the reasoning unless the completion opens with <think> (then it starts
    there, as both engines read it); a leading <think> is dropped."""

    def __init__(self, thinking=True, **options):
        options.setdefault("reasoning_calls", "parse")
        self._options = options
        self.thinking = thinking
        self.reset()

    def reset(self):
        self._detector = Detector("thinking", **self._options) if self.thinking else None
        self._pending = ""      # text fed and not yet given out as reasoning
        self._start = True      # a leading <think> may still come
        self.ended = False

    def _open(self):
        """At the start: None while the text could still be <think>, else
        the text after an echoed <think> (thinking on from there), or all of
        it when there is no reasoning."""
        text = self._pending
        if thinking_start_token.startswith(text) and text != thinking_start_token:
            return None
        self._start = False
        self._pending = ""
        if text.startswith(thinking_start_token):
            text = text[len(thinking_start_token):]
            if self._detector is None:
                self._detector = Detector("thinking", **self._options)
        elif self._detector is None:
            self.ended = True
        return text

    def feed(self, text):
        if self.ended:
            return "", text
        if self._start:
            self._pending += text
            text = self._open()
            if text is None:
                return "", ""
            if self.ended:
                return "", text
        return self._take(self._detector.feed(text), text)

    def finish(self):
        """The last reasoning and text held back at the end of the stream."""
        if self.ended:
            return "", ""
        head = ("", "")
        if self._start:
            self._start = False
            text, self._pending = self._pending, ""
            if self._detector is None:
                self.ended = True
                return "", text
            head = self._take(self._detector.feed(text), text)
            if self.ended:
                return head
        reasoning, rest = self._take(self._detector.finish(), "")
        if not self.ended:
            # no end: what is left stays reasoning
            self.ended = True
            self._detector.close()
            reasoning, self._pending = reasoning + self._pending, ""
        return head[0] + reasoning, head[1] + rest

    def _take(self, events, text):
        self._pending += text
        reasoning = "".join(e.text for e in events if e.kind == "reasoning")
        self._pending = self._pending[len(reasoning):]
        over = any(e.kind not in ("reasoning", "diagnostic") or
                   (e.kind == "diagnostic" and e.code == _MISSING_THINK_END)
                   for e in events)
        if self._pending.startswith(thinking_end_token):
            over, rest = True, self._pending[len(thinking_end_token):]
        elif self._pending.startswith(eos_token):
            # the completion ended inside the reasoning: the end-of-sentence
            # token is the end of the stream, no text after the reasoning
            rest = ""
        else:
            rest = self._pending
        if not over:
            return reasoning, ""
        self.ended = True
        self._pending = ""
        self._detector.close()
        return reasoning, rest

    def split(self, text):
        """One shot: (reasoning or None, text after it or None)."""
        self.reset()
        reasoning, rest = self.feed(text)
        more, tail = self.finish()
        reasoning += more
        rest += tail
        if self._detector is None:      # no reasoning at all
            return None, rest or None
        return reasoning or None, rest or None


class _JsonTail:
    """Follows one call's arguments JSON text as its fragments arrive (each
    character read once) and knows the text that closes it: the partial
    arguments of a stream cut inside a call become valid JSON by appending
    closers only, so what was streamed stays a prefix of the result."""

    def __init__(self):
        self.text = []
        self._stack = []        # "}" / "]" still to close
        self._string = False
        self._escape = False
        self._key = False       # the open string is an object key
        self._last = ""         # last character outside strings (not space)

    def feed(self, piece):
        self.text.append(piece)
        for ch in piece:
            if self._string:
                if self._escape:
                    self._escape = False
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self._string = False
                    self._last = "k" if self._key else '"'
            elif ch == '"':
                self._string = True
                self._key = bool(self._stack) and self._stack[-1] == "}" and \
                    self._last in ("{", ",")
            elif ch in "{[":
                self._stack.append("}" if ch == "{" else "]")
                self._last = ch
            elif ch in "}]":
                if self._stack:
                    self._stack.pop()
                self._last = ch
            elif not ch.isspace():
                self._last = ch

    def closed(self):
        """The arguments as a dict: the complete text parsed, or the partial
        text closed; {} when it cannot be closed by appending."""
        text = "".join(self.text)
        tail = ""
        if self._string:
            if self._escape:
                return {}
            tail = '"' + (": null" if self._key else "")
        elif self._last == "k":
            tail = ": null"
        elif self._last == ":":
            tail = " null"
        elif self._last == ",":
            return {}
        try:
            value = json.loads(text + tail + "".join(reversed(self._stack)))
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


class _Call(dict):
    """One entry of prev_tool_call_arr: {"name", "arguments"}, arguments a
    dict (as vLLM's and SGLang's parsers keep it; both json.dumps it at the
    end of a stream to send what was not streamed), worked out when read."""

    def __init__(self, name):
        super().__init__(name=name)
        self.json = _JsonTail()

    def __getitem__(self, key):
        if key == "arguments":
            return self.json.closed()
        return super().__getitem__(key)

    def get(self, key, default=None):
        return self["arguments"] if key == "arguments" else super().get(key, default)

    def __contains__(self, key):
        return key == "arguments" or super().__contains__(key)

    def keys(self):
        return ["name", "arguments"]

    def items(self):
        return [("name", self["name"]), ("arguments", self["arguments"])]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return 2

    def __repr__(self):
        return repr(dict(self.items()))


def tool_dicts(tools):
    """Declared tools as plain dicts for dsml.Detector, or None.  The
    engines pass objects (pydantic models, or the Responses API's function
    tools with the name at the top): their function's name, description,
    parameters and strict are read as attributes, as the engines' own
    parsers read them."""
    if not tools:
        return None
    return [tool if isinstance(tool, dict) else _tool_dict(tool) for tool in tools]


def _tool_dict(tool):
    function = getattr(tool, "function", None) or tool
    out = {"name": getattr(function, "name", None)}
    for key, kinds in (("description", str), ("parameters", dict), ("strict", bool)):
        value = getattr(function, key, None)
        if isinstance(value, kinds):
            out[key] = value
    return {"type": "function", "function": out}


def adapter_options(options, tools=None):
    """The adapters' detector options: a server must hand out valid JSON
    arguments, so string="false" values that are not JSON are checked
    (false_values="validate": kept as strings, with a diagnostic) unless
    the options say otherwise; the request's tools are declared."""
    options = dict(options)
    options.setdefault("false_values", "validate")
    declared = tool_dicts(tools)
    if declared is not None and "tools" not in options:
        options["tools"] = declared
    return options


class CallStream:
    """Content text (what follows the reasoning) -> content and tool calls.

    feed() returns (content delta, [(index, name or None, arguments piece)]):
    one piece per call and delta; a call's first piece carries its name and
    the arguments so far, later ones argument fragments that concatenate to
    its arguments JSON text.  prev_tool_call_arr / streamed_args_for_tool
    keep the calls seen so far, as vLLM and SGLang parsers keep them
    (arguments as a dict).  A call that fails after it began is retracted
    from both lists (its text comes back as content, the library's lenient
    rule) and its streamed arguments are closed into valid JSON."""

    def __init__(self, **options):
        self._options = adapter_options(options)
        self.reset()

    def reset(self, tools=None, tool_choice=None, parallel_tool_calls=True):
        """A new stream: the request's tools declared (unless the options
        declare some), and the calls its tool_choice and parallel_tool_calls
        allow (a call not allowed never reaches the client)."""
        options = self._options
        declared = tool_dicts(tools)
        if declared is not None and "tools" not in options:
            options = dict(options, tools=declared)
        self._detector = Detector("chat", keep_message=False, tool_choice=tool_choice,
                                  parallel_tool_calls=parallel_tool_calls, **options)
        self.prev_tool_call_arr = []
        self.streamed_args_for_tool = []
        self.current_tool_id = -1
        self._calls = {}        # detector index -> _Call
        self._refused = set()   # detector indexes of calls not allowed
        self._next_index = 0
        self.ended = False

    def feed(self, text):
        if self.ended:  # text after the end of the stream stays content
            return text, []
        return self._take(self._detector.feed(text))

    def finish(self):
        """The end of the stream: held text, and the close of a cut call."""
        if self.ended:
            return "", []
        self.ended = True
        content, pieces = self._take(self._detector.finish())
        return content, pieces

    def _piece(self, pieces, index, name, text):
        if pieces and pieces[-1][0] == index:
            last = pieces[-1]
            pieces[-1] = (index, last[1] or name, last[2] + text)
        else:
            pieces.append((index, name, text))

    def _slot(self, call):
        return next(i for i, c in enumerate(self.prev_tool_call_arr) if c is call)

    def _take(self, events):
        content = []
        pieces = []
        for e in events:
            if e.kind == "content":
                content.append(e.text)
            elif e.index in self._refused:
                continue
            elif e.kind == "call_begin" and e.code == CALL_REFUSED:
                self._refused.add(e.index)   # parsed, not allowed: never sent
            elif e.kind == "call_begin":
                name = e.name if e.namespace is None else "%s::%s" % (e.namespace, e.name)
                call = self._calls[e.index] = _Call(name)
                call.index = self._next_index   # the stream's index, never reused
                self._next_index += 1
                self.current_tool_id = len(self.prev_tool_call_arr)
                self.prev_tool_call_arr.append(call)
                self.streamed_args_for_tool.append("")
                self._piece(pieces, call.index, name, "")
            elif e.kind == "arguments":
                call = self._calls[e.index]
                call.json.feed(e.text)
                self.streamed_args_for_tool[self._slot(call)] += e.text
                self._piece(pieces, call.index, None, e.text)
            elif e.kind == "call_end" and not e.complete:
                self._retract(self._calls[e.index], pieces)
        return "".join(content), pieces

    def _retract(self, call, pieces):
        """A call that failed: its arguments closed for the client that got
        them, and the call out of the lists a server counts calls from."""
        slot = self._slot(call)
        streamed = self.streamed_args_for_tool[slot]
        closing = json.dumps(call.json.closed(), ensure_ascii=False)
        if closing.startswith(streamed):
            self._piece(pieces, call.index, None, closing[len(streamed):])
        del self.prev_tool_call_arr[slot]
        del self.streamed_args_for_tool[slot]
        self.current_tool_id = len(self.prev_tool_call_arr) - 1

    @staticmethod
    def parse(text, request_tools=None, **options):
        """One shot: (content, [(name, arguments text)]) of complete calls.
        request_tools: the request's tools, declared unless the options
        declare some."""
        detector = Detector("chat", **adapter_options(options, request_tools))
        detector.feed(text)
        detector.finish()
        message = detector.message()
        detector.close()
        calls = []
        for call in message["tool_calls"]:
            name = call["function"]["name"]
            if call.get("namespace") is not None:
                name = "%s::%s" % (call["namespace"], name)
            calls.append((name, call["function"]["arguments"]))
        return message["content"], calls
