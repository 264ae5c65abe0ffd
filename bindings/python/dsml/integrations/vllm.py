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

import json
from collections import namedtuple

from ..reference import eos_token, thinking_end_token, thinking_start_token
from ..grammar import grammar  # noqa: F401  (dsml.integrations.vllm.grammar)
from ..turn import Turn
from ._common import CallStream, ReasoningSplit, call_id, tool_dicts


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
_StructuredOutputsParams = _import("vllm.sampling_params.StructuredOutputsParams")
_StructuralTag = _import("xgrammar.StructuralTag")
_in_reasoning = _import(
    "vllm.tool_parsers.structural_tag_registry.get_enable_structured_outputs_in_reasoning")
_make_id = _import("vllm.entrypoints.chat_utils.make_tool_call_id") or call_id


class _TagRecord(dict):
    """Stand-in for xgrammar's StructuralTag (xgrammar is not installed):
    the tag's JSON as a dict, with model_dump()."""

    def model_dump(self, **_):
        return dict(self)


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


def _tools_of(request, default=None):
    tools = getattr(request, "tools", None)
    return tools if tools else default


def _request_turn(request, profile, grammar_format, thinking_mode, grammar_auto=False):
    """dsml.Turn of the request's tool fields (tools, tool_choice,
    parallel_tool_calls; no conversation): the library decides what the
    request calls for and writes the grammar (grammar_format), for the
    decoding vLLM constrains (thinking_mode "chat": after the reasoning,
    "thinking": from inside it).  None without tools or under "none"."""
    tools = tool_dicts(getattr(request, "tools", None))
    choice = getattr(request, "tool_choice", None) or "auto"
    if hasattr(choice, "model_dump"):
        choice = choice.model_dump(exclude_none=True)
    if not tools or choice == "none":
        return None
    body = {"messages": [{"role": "user", "content": ""}], "tools": tools,
            "tool_choice": choice}
    parallel = getattr(request, "parallel_tool_calls", None)
    if isinstance(parallel, bool):
        body["parallel_tool_calls"] = parallel
    return Turn(body, profile=profile, thinking_mode=thinking_mode, grammar=grammar_format,
                grammar_auto=grammar_auto)


def _allowed(request, profile):
    """(tool_choice, parallel_tool_calls) of the request, as a dsml.Turn of
    it decides them: the calls the detector lets through."""
    choice = getattr(request, "tool_choice", None)
    if choice == "none":
        return "none", True
    turn = _request_turn(request, profile, None, "chat")
    if turn is None:
        return None, True
    return turn.tool_choice, turn.parallel_tool_calls


def _token_id(tokenizer, text):
    try:
        vocab = tokenizer.get_vocab()
    except Exception:
        return None
    return vocab.get(text)


class DsmlToolParser(*(() if _ToolParser is None else (_ToolParser,))):
    """vLLM ToolParser for DSML tool calls (the text after the reasoning).

    A forced call (tool_choice "required" or a named tool) is written in
    DSML like any other, so vLLM is told to parse it as one
    (supports_required_and_named = False) rather than to expect JSON."""

    detector_options = {}
    supports_required_and_named = False
    # vLLM calls finish_streaming() at the end of every stream (any finish
    # reason) on a parser that says it is engine-based: held text comes out
    engine_based_streaming = True
    # not one of xgrammar's built-in tags: get_structural_tag gives libdsml's
    structural_tag_model = None

    def __init__(self, tokenizer=None, tools=None, *args, **kwargs):
        if _ToolParser is not None:
            try:
                super().__init__(tokenizer, tools, *args, **kwargs)
            except TypeError:  # vLLM before tools= was a constructor argument
                super().__init__(tokenizer)
        self.model_tokenizer = tokenizer
        self._tools = tools
        self._eos_id = getattr(tokenizer, "eos_token_id", None)
        if self._eos_id is None and tokenizer is not None:
            self._eos_id = _token_id(tokenizer, eos_token)
        self._stream = CallStream(**self.detector_options)
        self._ids = {}
        self._started = False
        self._accumulating = False  # the caller gives the previous text
        self._share_state()

    def _share_state(self):
        stream = self._stream
        self.prev_tool_call_arr = stream.prev_tool_call_arr
        self.streamed_args_for_tool = stream.streamed_args_for_tool
        self.current_tool_id = stream.current_tool_id
        self.current_tool_name_sent = stream.current_tool_id >= 0

    def adjust_request(self, request):
        """The DSML markers and the end-of-sentence token are special
        tokens: the detokenizer must keep them (skip_special_tokens=False)
        whenever calls may be written.  Under tool_choice "required" or a
        named tool, decoding is constrained to a calls block of the
        declared tools (the GBNF grammar a dsml.Turn of the request's tools,
        tool_choice and parallel_tool_calls writes, as vLLM's structured
        outputs read a grammar), since vLLM is told not to expect JSON.  With
        VLLM_ENFORCE_STRICT_TOOL_CALLING, as vLLM's own parsers, "auto",
        "required" and a named tool take get_structural_tag instead."""
        tools = getattr(request, "tools", None)
        choice = getattr(request, "tool_choice", None)
        if not tools or choice == "none":
            return request
        request.skip_special_tokens = False
        if _import("vllm.envs.VLLM_ENFORCE_STRICT_TOOL_CALLING") and \
                _StructuredOutputsParams is not None:
            tag = self.get_structural_tag(request)
            if tag is not None:
                text = json.dumps(tag.model_dump())
                if getattr(request, "structured_outputs", None) is None:
                    request.structured_outputs = _StructuredOutputsParams(structural_tag=text)
                else:
                    request.structured_outputs.structural_tag = text
                return request
        turn = _request_turn(request, self.detector_options.get("profile", "v41"), "gbnf",
                             "chat")
        if turn is not None and turn.grammar_from == "$.tool_choice":
            if _StructuredOutputsParams is not None:
                request.structured_outputs = _StructuredOutputsParams(grammar=turn.grammar)
            else:  # vLLM before structured_outputs, or no vLLM
                request.guided_grammar = turn.grammar
        return request

    def get_structural_tag(self, request):
        """libdsml's structural tag for the request (the grammar of a
        dsml.Turn of its tools, tool_choice and parallel_tool_calls, format
        "structural_tag"): under "auto" calls blocks of the declared
        tools wherever the model starts one, under "required" or a named
        tool a calls block that must come; each invoke with its schema's
        parameters.  It starts after the reasoning, where vLLM starts
        structured outputs, or inside it when vLLM applies them in the
        reasoning too.  An xgrammar StructuralTag (vLLM json.dumps its
        model_dump()); None without tools or under "none"."""
        turn = _request_turn(request, self.detector_options.get("profile", "v41"),
                             "structural_tag",
                             "thinking" if _in_reasoning and _in_reasoning() else "chat",
                             grammar_auto=True)
        if turn is None or turn.grammar is None:
            return None
        tag = json.loads(turn.grammar)
        return _StructuralTag.model_validate(tag) if _StructuralTag is not None \
            else _TagRecord(tag)

    def extract_tool_calls(self, model_output, request=None):
        """Whole output -> ExtractedToolCallInformation(tools_called,
        tool_calls, content)."""
        choice, parallel = _allowed(request, self.detector_options.get("profile", "v41"))
        content, calls = CallStream.parse(model_output,
                                          request_tools=_tools_of(request, self._tools),
                                          tool_choice=choice, parallel_tool_calls=parallel,
                                          **self.detector_options)
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
        Only delta_text is read.  The first delta starts a stream with the
        request's tools; so does a delta with no previous text after the
        stream ended, or, from a caller that gives the previous text (not
        vLLM's engine-based calls, which never do), any delta without it.
        The delta that carries the end-of-sentence token (its id, or
        its text when special tokens are kept) ends the stream: what the
        detector held comes out with it, also for a vLLM that does not call
        finish_streaming()."""
        if not self._started or (not previous_text and
                                 (self._stream.ended or self._accumulating)):
            choice, parallel = _allowed(request, self.detector_options.get("profile", "v41"))
            self._stream.reset(tools=_tools_of(request, self._tools), tool_choice=choice,
                               parallel_tool_calls=parallel)
            self._ids = {}
            self._started = True
        self._accumulating = self._accumulating or bool(previous_text)
        content, pieces = self._stream.feed(delta_text)
        if (self._eos_id is not None and self._eos_id in (delta_token_ids or ())) or \
                eos_token in delta_text:
            more, tail = self._stream.finish()
            content += more
            pieces = _merge(pieces, tail)
        return self._delta(content, pieces)

    def finish_streaming(self):
        """The end of the stream, whatever ended it (vLLM's
        _flush_engine_parsers on finished=True): the text the detector still
        held and the close of a cut call, as a DeltaMessage or None; None
        after the end-of-sentence token ended the stream."""
        return self._delta(*self._stream.finish())

    def _delta(self, content, pieces):
        calls = []
        for index, name, arguments in pieces:
            if name is not None:
                self._ids[index] = _make_id()
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


def _merge(pieces, more):
    """Two lists of call pieces as one: one piece per call."""
    out = list(pieces)
    for index, name, text in more:
        if out and out[-1][0] == index:
            out[-1] = (index, out[-1][1] or name, out[-1][2] + text)
        else:
            out.append((index, name, text))
    return out


def thinking_requested(chat_template_kwargs):
    """The request's thinking switch as vLLM's DeepSeek V4 parsers read it:
    chat_template_kwargs "thinking" or "enable_thinking", off when
    "reasoning_effort" is "none"; None when the request does not say."""
    kwargs = chat_template_kwargs or {}
    if kwargs.get("reasoning_effort") == "none":
        return False
    if "thinking" in kwargs or "enable_thinking" in kwargs:
        return bool(kwargs.get("thinking") or kwargs.get("enable_thinking"))
    return None


class DsmlReasoningParser(*(() if _ReasoningParser is None else (_ReasoningParser,))):
    """vLLM ReasoningParser: reasoning up to </think> (or a calls block),
    the raw rest as content for the tool parser.

    Thinking is what the request says (chat_template_kwargs "thinking" /
    "enable_thinking", reasoning_effort "none"); when it says nothing, the
    prompt decides: vLLM asks is_reasoning_end() of the prompt (a chat
    prompt ends with </think>) and adjust_initial_state_from_prompt() when
    it ends inside the reasoning.  One shot, with nothing said, a completion
    with a </think> is a thinking one."""

    detector_options = {}
    engine_based_streaming = False
    reasoning_start_str = thinking_start_token
    reasoning_end_str = thinking_end_token

    def __init__(self, tokenizer=None, *args, chat_template_kwargs=None, **kwargs):
        if _ReasoningParser is not None:
            super().__init__(tokenizer, *args, **kwargs)
        self.model_tokenizer = tokenizer
        self._requested = thinking_requested(chat_template_kwargs)
        self._split = ReasoningSplit(self._requested is not False, **self.detector_options)
        self.start_token_id = _token_id(tokenizer, thinking_start_token)
        self.end_token_id = _token_id(tokenizer, thinking_end_token)
        self._streaming = False

    def is_reasoning_end(self, input_ids):
        """Whether the last of <think> / </think> in input_ids is </think>."""
        for token in reversed(list(input_ids)):
            if token == self.start_token_id:
                return False
            if token == self.end_token_id:
                return True
        return False

    def is_reasoning_end_streaming(self, input_ids, delta_ids=()):
        """In a stream: whether this parser has seen the reasoning end
        (</think>, or a calls block that ends it)."""
        if self._streaming:
            return self._split.ended
        return self.is_reasoning_end(input_ids)

    def reasoning_ended_in_prompt(self, prompt_token_ids):
        return self.is_reasoning_end(prompt_token_ids)

    def adjust_initial_state_from_prompt(self, prompt_token_ids):
        """The prompt ends inside the reasoning: the completion starts there."""
        if self._requested is not False and not self.is_reasoning_end(prompt_token_ids):
            self._split.thinking = True
            self._split.reset()

    def extract_content_ids(self, input_ids):
        ids = list(input_ids)
        for at in range(len(ids) - 1, -1, -1):
            if ids[at] == self.end_token_id:
                return ids[at + 1:]
            if ids[at] == self.start_token_id:
                break
        return []

    def count_reasoning_tokens(self, token_ids):
        """Tokens between the start of the reasoning (the completion's start
        when it begins inside it, or <think>) and </think>."""
        inside = self._split.thinking
        count = 0
        for token in token_ids:
            if token == self.start_token_id:
                inside = True
            elif token == self.end_token_id:
                inside = False
            elif inside:
                count += 1
        return count

    def extract_reasoning(self, model_output, request=None):
        """Whole output -> (reasoning or None, content or None)."""
        thinking = thinking_requested(getattr(request, "chat_template_kwargs", None))
        if thinking is None:
            thinking = self._requested
        if thinking is None:
            thinking = thinking_end_token in model_output or \
                model_output.startswith(thinking_start_token)
        split = ReasoningSplit(thinking, **self.detector_options)
        return split.split(model_output)

    def extract_reasoning_streaming(self, previous_text, current_text, delta_text,
                                    previous_token_ids=(), current_token_ids=(),
                                    delta_token_ids=()):
        """One delta -> DeltaMessage(reasoning / content) or None."""
        if not previous_text and not self._streaming:
            self._split.reset()
        self._streaming = True
        return _reasoning_delta(*self._split.feed(delta_text))

    def finish_streaming(self):
        """What was held back at the end of the stream, as a DeltaMessage."""
        return _reasoning_delta(*self._split.finish())

    def get_streaming_fallback_content(self, previous_text, request=None):
        """vLLM's end-of-stream call while the reasoning is open: the text
        held back after the reasoning, if any, as content (an unterminated
        reasoning stays reasoning; nothing of it is promoted)."""
        reasoning, rest = self._split.finish()
        return rest

    # the names of vLLM releases before the rename
    extract_reasoning_content = extract_reasoning
    extract_reasoning_content_streaming = extract_reasoning_streaming


def _profile(cls, suffix, profile):
    options = dict(cls.detector_options, profile=profile)
    return type(cls.__name__ + suffix, (cls,), {"detector_options": options,
                                               "__doc__": cls.__doc__})


DsmlToolParserV4 = _profile(DsmlToolParser, "V4", "v4")
DsmlToolParserV32 = _profile(DsmlToolParser, "V32", "v32")
DsmlReasoningParserV4 = _profile(DsmlReasoningParser, "V4", "v4")
DsmlReasoningParserV32 = _profile(DsmlReasoningParser, "V32", "v32")

NAME = "dsml"
# one name per profile: DeepSeek-V4.1 (the default), V4 and V3.2
PARSERS = {
    "dsml": (DsmlToolParser, DsmlReasoningParser),
    "dsml-v4": (DsmlToolParserV4, DsmlReasoningParserV4),
    "dsml-v32": (DsmlToolParserV32, DsmlReasoningParserV32),
}


def register():
    """Register the parsers under their names with vLLM (no-op without
    vLLM)."""
    tools = _import("vllm.tool_parsers.ToolParserManager",
                    "vllm.entrypoints.openai.tool_parsers.ToolParserManager")
    reasoning = _import("vllm.reasoning.ReasoningParserManager",
                        "vllm.reasoning.abs_reasoning_parsers.ReasoningParserManager")
    for name, (tool_cls, reasoning_cls) in PARSERS.items():
        if tools is not None:
            tools.register_module(name, True, tool_cls)
        if reasoning is not None:
            reasoning.register_module(name, True, reasoning_cls)
    return tools is not None or reasoning is not None


register()
