"""dsml for vLLM: DsmlToolParser and DsmlReasoningParser, with the method
names, signatures and return shapes of vLLM's ToolParser and
ReasoningParser, on dsml.Detector (O(1) work per token).

With vLLM importable they subclass vLLM's classes, return its protocol
objects (ExtractedToolCallInformation, DeltaMessage, ...) and are registered
as "dsml" (tool parser and reasoning parser) -- by register(), which vLLM
calls through the "vllm.general_plugins" entry point of the installed
package, or on import of this module (--tool-parser-plugin
dsml/integrations/vllm.py works too).  Without vLLM they are plain objects
returning look-alike records with the same attribute names.

    vllm serve deepseek-ai/DeepSeek-V4.1-Flash --enable-auto-tool-choice \\
        --tool-call-parser dsml --reasoning-parser dsml

Detector options (markers="variants" for V4's unspaced tags, policies,
limits) are class attributes: subclass and register under another name to
change them.
"""

from collections import namedtuple

from ._common import CallStream, ReasoningSplit, call_id


def _import(*paths):
    """The first of module.attr paths that imports, or None."""
    import importlib
    for path in paths:
        module, _, attr = path.rpartition(".")
        try:
            return getattr(importlib.import_module(module), attr)
        except Exception:
            continue
    return None


def _record(name, fields, defaults):
    cls = namedtuple(name, fields, defaults=defaults)
    cls.__doc__ = "Stand-in for vLLM's %s (vLLM is not installed)." % name
    return cls


_PROTOCOL = ("vllm.entrypoints.openai.engine.protocol",
             "vllm.entrypoints.openai.protocol")
_ToolParser = _import("vllm.tool_parsers.abstract_tool_parser.ToolParser",
                      "vllm.entrypoints.openai.tool_parsers.abstract_tool_parser.ToolParser")
_ReasoningParser = _import("vllm.reasoning.abs_reasoning_parsers.ReasoningParser",
                           "vllm.reasoning.ReasoningParser")
DeltaMessage = _import(*(p + ".DeltaMessage" for p in _PROTOCOL)) or _record(
    "DeltaMessage", "role content reasoning reasoning_content tool_calls",
    (None, None, None, None, ()))
DeltaToolCall = _import(*(p + ".DeltaToolCall" for p in _PROTOCOL)) or _record(
    "DeltaToolCall", "index id type function", (None, None, None))
DeltaFunctionCall = _import(*(p + ".DeltaFunctionCall" for p in _PROTOCOL)) or _record(
    "DeltaFunctionCall", "name arguments", (None, None))
ExtractedToolCallInformation = _import(
    *(p + ".ExtractedToolCallInformation" for p in _PROTOCOL)) or _record(
    "ExtractedToolCallInformation", "tools_called tool_calls content", (None,))
ToolCall = _import(*(p + ".ToolCall" for p in _PROTOCOL)) or _record(
    "ToolCall", "id type function", ())
FunctionCall = _import(*(p + ".FunctionCall" for p in _PROTOCOL)) or _record(
    "FunctionCall", "name arguments", ())
_make_id = _import("vllm.entrypoints.chat_utils.make_tool_call_id") or call_id


def _reasoning_delta(reasoning, content):
    """DeltaMessage with reasoning under the field this vLLM names it."""
    fields = getattr(DeltaMessage, "model_fields", None) or DeltaMessage._fields
    key = "reasoning" if "reasoning" in fields else "reasoning_content"
    kwargs = {}
    if reasoning:
        kwargs[key] = reasoning
    if content:
        kwargs["content"] = content
    return DeltaMessage(**kwargs) if kwargs else None


class DsmlToolParser(*(() if _ToolParser is None else (_ToolParser,))):
    """vLLM ToolParser for DSML tool calls (the text after the reasoning)."""

    detector_options = {}

    def __init__(self, tokenizer=None, tools=None, *args, **kwargs):
        if _ToolParser is not None:
            try:
                super().__init__(tokenizer, tools, *args, **kwargs)
            except TypeError:  # vLLM before tools= was a constructor argument
                super().__init__(tokenizer)
        self.model_tokenizer = tokenizer
        self._stream = CallStream(**self.detector_options)
        self._ids = []
        self._share_state()

    def _share_state(self):
        stream = self._stream
        self.prev_tool_call_arr = stream.prev_tool_call_arr
        self.streamed_args_for_tool = stream.streamed_args_for_tool
        self.current_tool_id = stream.current_tool_id
        self.current_tool_name_sent = stream.current_tool_id >= 0

    def adjust_request(self, request):
        return request

    def extract_tool_calls(self, model_output, request=None):
        """Whole output -> ExtractedToolCallInformation(tools_called,
        tool_calls, content)."""
        content, calls = CallStream.parse(model_output, **self.detector_options)
        if not calls:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[],
                                                content=model_output)
        tool_calls = [ToolCall(id=_make_id(), type="function",
                               function=FunctionCall(name=name, arguments=arguments))
                      for name, arguments in calls]
        return ExtractedToolCallInformation(tools_called=True, tool_calls=tool_calls,
                                            content=content or None)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text,
                                     previous_token_ids=(), current_token_ids=(),
                                     delta_token_ids=(), request=None):
        """One delta -> DeltaMessage (content and/or tool-call pieces) or None.
        A new stream (previous_text empty) starts afresh."""
        if not previous_text:
            self._stream.reset()
            self._ids = []
        return self._delta(*self._stream.feed(delta_text))

    def finish_streaming(self):
        """The text the detector still held at the end of the stream (vLLM
        has no such call; a server that knows the stream ended may use it)."""
        return self._delta(*self._stream.finish())

    def _delta(self, content, pieces):
        calls = []
        for index, name, arguments in pieces:
            if name is not None:
                self._ids.append(_make_id())
                calls.append(DeltaToolCall(index=index, id=self._ids[index], type="function",
                                           function=DeltaFunctionCall(name=name,
                                                                      arguments=arguments)))
            else:
                calls.append(DeltaToolCall(index=index,
                                           function=DeltaFunctionCall(arguments=arguments)))
        self._share_state()
        if not content and not calls:
            return None
        return DeltaMessage(content=content or None, tool_calls=calls)


class DsmlReasoningParser(*(() if _ReasoningParser is None else (_ReasoningParser,))):
    """vLLM ReasoningParser: reasoning up to </think> (or a calls block),
    the raw rest as content for the tool parser.  Thinking is on unless the
    request's chat_template_kwargs say {"thinking": False}."""

    detector_options = {}

    def __init__(self, tokenizer=None, *args, chat_template_kwargs=None, **kwargs):
        if _ReasoningParser is not None:
            super().__init__(tokenizer, *args, **kwargs)
        self.model_tokenizer = tokenizer
        thinking = (chat_template_kwargs or {}).get("thinking", True)
        self._split = ReasoningSplit(bool(thinking), **self.detector_options)
        vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
        self.end_token_id = vocab.get("</think>")

    def is_reasoning_end(self, input_ids):
        return self.end_token_id is not None and self.end_token_id in input_ids

    def extract_content_ids(self, input_ids):
        ids = list(input_ids)
        if self.end_token_id not in ids:
            return []
        return ids[ids.index(self.end_token_id) + 1:]

    def extract_reasoning(self, model_output, request=None):
        """Whole output -> (reasoning or None, content or None)."""
        return self._split.split(model_output)

    def extract_reasoning_streaming(self, previous_text, current_text, delta_text,
                                    previous_token_ids=(), current_token_ids=(),
                                    delta_token_ids=()):
        """One delta -> DeltaMessage(reasoning / content) or None."""
        if not previous_text:
            self._split.reset()
        return _reasoning_delta(*self._split.feed(delta_text))

    def finish_streaming(self):
        """What was held back at the end of the stream, as a DeltaMessage."""
        return _reasoning_delta(*self._split.finish())

    # the names of vLLM releases before the rename
    extract_reasoning_content = extract_reasoning
    extract_reasoning_content_streaming = extract_reasoning_streaming


NAME = "dsml"


def register():
    """Register both parsers as "dsml" with vLLM (no-op without vLLM)."""
    tools = _import("vllm.tool_parsers.ToolParserManager",
                    "vllm.entrypoints.openai.tool_parsers.ToolParserManager")
    reasoning = _import("vllm.reasoning.ReasoningParserManager",
                        "vllm.reasoning.abs_reasoning_parsers.ReasoningParserManager")
    if tools is not None:
        tools.register_module(NAME, True, DsmlToolParser)
    if reasoning is not None:
        reasoning.register_module(NAME, True, DsmlReasoningParser)
    return tools is not None or reasoning is not None


register()
