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

import uuid

from ..parse import Detector
from ..reference import thinking_end_token, thinking_start_token

_MISSING_THINK_END = -19


def call_id():
    """A fresh OpenAI tool-call id."""
    return "call_" + uuid.uuid4().hex[:24]


class ReasoningSplit:
    """Splits a completion that starts inside the reasoning (the prompt
    ended with <think>) at its end: </think>, or a calls block (which ends
    the reasoning, as vLLM and SGLang read it).  feed() returns (reasoning
    delta, raw text after the reasoning); once the reasoning is over, deltas
    pass through untouched.  With thinking=False everything is text after
    the reasoning.  A leading <think> (servers that echo it) is dropped."""

    def __init__(self, thinking=True, **options):
        options.setdefault("reasoning_calls", "parse")
        self._options = options
        self.thinking = thinking
        self.reset()

    def reset(self):
        self._detector = Detector("thinking", **self._options) if self.thinking else None
        self._pending = ""      # text fed and not yet given out as reasoning
        self._start = self.thinking
        self.ended = not self.thinking

    def feed(self, text):
        if self.ended:
            return "", text
        if self._start:
            # drop an echoed <think>; wait while the text could still be one
            self._pending += text
            if thinking_start_token.startswith(self._pending):
                return "", ""
            self._start = False
            text = self._pending
            if text.startswith(thinking_start_token):
                text = text[len(thinking_start_token):]
            self._pending = ""
        return self._take(self._detector.feed(text), text)

    def finish(self):
        """The last reasoning and text held back at the end of the stream."""
        if self.ended:
            return "", ""
        head = ("", "")
        if self._start:
            self._start = False
            text, self._pending = self._pending, ""
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
        if not self.thinking:
            return None, rest or None
        return reasoning or None, rest or None


class CallStream:
    """Content text (what follows the reasoning) -> content and tool calls.

    feed() returns (content delta, [(index, name or None, arguments piece)]):
    a call's first piece carries its name (and an empty arguments piece),
    later ones argument fragments that concatenate to its arguments JSON
    text.  prev_tool_call_arr / streamed_args_for_tool keep the calls seen
    so far, as vLLM and SGLang parsers keep them."""

    def __init__(self, **options):
        self._options = options
        self.reset()

    def reset(self):
        self._detector = Detector("chat", keep_message=False, **self._options)
        self.prev_tool_call_arr = []
        self.streamed_args_for_tool = []
        self.current_tool_id = -1

    def feed(self, text):
        return self._take(self._detector.feed(text))

    def finish(self):
        return self._take(self._detector.finish())

    def _take(self, events):
        content = []
        pieces = []
        for e in events:
            if e.kind == "content":
                content.append(e.text)
            elif e.kind == "call_begin":
                name = e.name if e.namespace is None else "%s::%s" % (e.namespace, e.name)
                self.current_tool_id = e.index
                self.prev_tool_call_arr.append({"name": name, "arguments": ""})
                self.streamed_args_for_tool.append("")
                pieces.append((e.index, name, ""))
            elif e.kind == "arguments":
                self.prev_tool_call_arr[e.index]["arguments"] += e.text
                self.streamed_args_for_tool[e.index] += e.text
                if pieces and pieces[-1][0] == e.index and pieces[-1][1] is None:
                    pieces[-1] = (e.index, None, pieces[-1][2] + e.text)
                else:
                    pieces.append((e.index, None, e.text))
        return "".join(content), pieces

    @staticmethod
    def parse(text, **options):
        """One shot: (content, [(name, arguments text)]) of complete calls."""
        detector = Detector("chat", **options)
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
