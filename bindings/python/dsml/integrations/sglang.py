"""dsml for SGLang: DsmlDetector (the interface of SGLang's
BaseFormatDetector: detect_and_parse, parse_streaming_increment,
has_tool_call, ...) and DsmlReasoningDetector (SGLang's reasoning
detectors: detect_and_parse, parse_streaming_increment), on dsml.Detector
(O(1) work per token).

With SGLang importable they subclass its classes, return its
StreamingParseResult and ToolCallItem, and are registered as "dsml" in
FunctionCallParser.ToolCallParserEnum and ReasoningParser.DetectorMap when
this module is imported (or register() is called), so that
--tool-call-parser dsml --reasoning-parser dsml select them.  Without SGLang
they are plain objects returning look-alike records.
"""

import inspect
import json
from collections import namedtuple

from ..reference import (dsml_token, thinking_end_token, thinking_start_token,
                         tool_call_tag_name, tool_calls_block_name)
from ..grammar import grammar
from ._common import CallStream, ReasoningSplit, tool_dicts
from .vllm import _import

_BaseFormatDetector = _import("sglang.srt.function_call.base_format_detector.BaseFormatDetector")
_BaseReasoning = _import("sglang.srt.parser.reasoning_parser.BaseReasoningFormatDetector",
                         "sglang.srt.reasoning_parser.BaseReasoningFormatDetector")
ToolCallItem = _import("sglang.srt.function_call.core_types.ToolCallItem")
StreamingParseResult = _import("sglang.srt.function_call.core_types.StreamingParseResult")
StructureInfo = _import("sglang.srt.function_call.core_types.StructureInfo")
_StructuralTag = _import("xgrammar.StructuralTag")
ReasoningResult = _import("sglang.srt.parser.reasoning_parser.StreamingParseResult",
                          "sglang.srt.reasoning_parser.StreamingParseResult")

if ToolCallItem is None:
    ToolCallItem = namedtuple("ToolCallItem", "tool_index name parameters", defaults=(None, ""))
    StreamingParseResult = namedtuple("StreamingParseResult", "normal_text calls",
                                      defaults=("", ()))
    StructureInfo = namedtuple("StructureInfo", "begin end trigger")
if ReasoningResult is None:
    ReasoningResult = namedtuple("StreamingParseResult", "normal_text reasoning_text",
                                 defaults=("", ""))

# the calls block's opening tag of each profile
CALLS_TAGS = {"v41": "<%s%s>" % (dsml_token, tool_calls_block_name),
              "v4": "<%stool_calls>" % dsml_token,
              "v32": "<%sfunction_calls>" % dsml_token}
CALLS_TAG = CALLS_TAGS["v41"]
_INVOKE = {"v41": tool_call_tag_name, "v4": "invoke", "v32": "invoke"}


def _accepted(cls, kwargs):
    """The keyword arguments cls.__init__ takes (SGLang's base classes
    gained some over time)."""
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


class DsmlDetector(*(() if _BaseFormatDetector is None else (_BaseFormatDetector,))):
    """SGLang format detector for DSML tool calls (the text after the
    reasoning).  Keyword arguments are dsml.Detector options (profile,
    markers="variants" for unspaced tags, mode="recover", policies,
    limits); the tools SGLang passes are declared to the detector."""

    profile = "v41"

    def __init__(self, **detector_options):
        if _BaseFormatDetector is not None:
            super().__init__()
        detector_options.setdefault("profile", self.profile)
        profile = detector_options["profile"]
        self.bot_token = CALLS_TAGS.get(profile, CALLS_TAG)
        self.eot_token = "</" + self.bot_token[1:]
        self._invoke = _INVOKE.get(profile, tool_call_tag_name)
        self.detector_options = detector_options
        self._stream = CallStream(**detector_options)
        self._started = False
        self._share_state()

    def _share_state(self):
        self.prev_tool_call_arr = self._stream.prev_tool_call_arr
        self.streamed_args_for_tool = self._stream.streamed_args_for_tool
        self.current_tool_id = self._stream.current_tool_id
        self.current_tool_name_sent = self.current_tool_id >= 0

    def has_tool_call(self, text):
        """Whether text holds the start of a calls block."""
        if self.detector_options.get("mode") == "recover":
            return "DSML" in text or "<invoke" in text or "<function_calls>" in text
        return self.bot_token in text or (
            self.detector_options.get("markers") == "variants" and
            any(tag in text for tag in ("<%stool_calls>" % dsml_token, "<|DSML| calls>",
                                        "<｜｜DSML｜｜ calls>")))

    def detect_and_parse(self, text, tools=None):
        """Whole text -> StreamingParseResult(normal_text, calls)."""
        content, calls = CallStream.parse(text, request_tools=tools, **self.detector_options)
        return StreamingParseResult(normal_text=content, calls=[
            ToolCallItem(tool_index=i, name=name, parameters=arguments)
            for i, (name, arguments) in enumerate(calls)])

    def parse_streaming_increment(self, new_text, tools=None):
        """One increment -> StreamingParseResult(normal_text, calls): one
        item per call, the first with the call's name."""
        if not self._started:
            self._started = True
            self._stream.reset(tools=tools)
        return self._result(*self._stream.feed(new_text))

    def finish(self, tools=None):
        """The end of the stream: what the detector still held."""
        result = self._result(*self._stream.finish())
        self._started = False
        return result

    def _result(self, content, pieces):
        self._share_state()
        return StreamingParseResult(normal_text=content, calls=[
            ToolCallItem(tool_index=index, name=name, parameters=arguments)
            for index, name, arguments in pieces])

    def supports_structural_tag(self):
        """SGLang's legacy structural tags hold JSON between begin and end;
        DSML parameters are not JSON: constrained calls take
        get_structural_tag (SGLang main) or build_ebnf (earlier SGLang)."""
        return False

    def parses_required_natively(self):
        """A forced call is written in DSML and parsed as such: SGLang must
        not constrain it to its JSON array."""
        return True

    def get_structural_tag(self, tools, tool_choice="required", thinking_mode=False,
                           parallel_tool_calls=True, **_):
        """The structural tag SGLang applies under tool_choice "required", a
        named tool, or "auto" with strict tools: a calls block of the
        declared tools, each invoke with its schema's parameters
        (dsml.grammar), starting inside the reasoning in thinking mode.  An
        xgrammar StructuralTag when xgrammar is importable, else its JSON
        as a dict."""
        if hasattr(tool_choice, "model_dump"):
            tool_choice = tool_choice.model_dump(exclude_none=True)
        text, _ = grammar(tool_dicts(tools), format="structural_tag",
                          profile=self.detector_options.get("profile", "v41"),
                          thinking_mode="thinking" if thinking_mode else "chat",
                          tool_choice=tool_choice,
                          parallel_tool_calls=parallel_tool_calls is not False)
        tag = json.loads(text)
        return _StructuralTag.model_validate(tag) if _StructuralTag is not None else tag

    def get_auto_tool_call_structural_tag(self, tools, thinking_mode=False,
                                          parallel_tool_calls=True, **_):
        """None: under "auto" without strict tools decoding is left free, and
        what the model writes is parsed as the reference parses it."""
        return None

    def build_ebnf(self, tools):
        """The grammar earlier SGLang applies under tool_choice "required" or
        a named tool (it passes the named tool alone): a calls block of
        these tools (dsml.grammar, GBNF)."""
        text, _ = grammar(tool_dicts(tools), format="gbnf", tool_choice="required",
                          profile=self.detector_options.get("profile", "v41"))
        return text

    def structure_info(self):
        return lambda name: StructureInfo(
            begin='\n\n%s\n<%s%s name="%s">\n' % (self.bot_token, dsml_token, self._invoke,
                                                  name),
            end="</%s%s>\n%s" % (dsml_token, self._invoke, self.eot_token),
            trigger=self.bot_token)


class DsmlReasoningDetector(*(() if _BaseReasoning is None else (_BaseReasoning,))):
    """SGLang reasoning detector: reasoning up to </think> (or a calls
    block), the raw rest as normal text for the tool detector.

    As SGLang's DeepSeek-V4 detector: force_reasoning off by default,
    reasoning_default "explicit_thinking" (reasoning only when the request
    asks for thinking; SGLang then passes force_reasoning=True),
    thinks_internally.  continue_final_message / previous_content (an
    assistant prefix: inside the reasoning when it opened <think> without
    closing it) and force_nonempty_content (reasoning handed out as normal
    text when there is no normal text) are SGLang's own arguments."""

    profile = "v41"

    def __init__(self, stream_reasoning=True, force_reasoning=False,
                 continue_final_message=False, previous_content="",
                 force_nonempty_content=False, tokenizer=None, **detector_options):
        detector_options.setdefault("profile", self.profile)
        if _BaseReasoning is not None:
            super().__init__(thinking_start_token, thinking_end_token, **_accepted(
                _BaseReasoning, dict(
                    force_reasoning=force_reasoning, stream_reasoning=stream_reasoning,
                    tool_start_token=CALLS_TAGS.get(detector_options["profile"]),
                    continue_final_message=continue_final_message,
                    previous_content=previous_content or "",
                    thinks_internally=True, reasoning_default="explicit_thinking",
                    force_nonempty_content=force_nonempty_content)))
        self.force_reasoning = force_reasoning
        self.stream_reasoning = stream_reasoning
        self.thinks_internally = True
        self.reasoning_default = "explicit_thinking"
        self._force_nonempty = force_nonempty_content
        thinking = bool(force_reasoning)
        previous = previous_content if continue_final_message and \
            isinstance(previous_content, str) else ""
        if thinking_start_token in previous:
            thinking = True
        if thinking_end_token in previous:
            thinking = previous.rfind(thinking_start_token) > previous.rfind(thinking_end_token)
        self._split = ReasoningSplit(thinking, **detector_options)
        self._held = ""         # reasoning kept back (stream_reasoning=False)
        self._normal = False    # normal text given out

    def detect_and_parse(self, text):
        reasoning, rest = self._split.split(text)
        reasoning, rest = reasoning or "", rest or ""
        if self._force_nonempty and not rest:
            reasoning, rest = rest, reasoning
        return ReasoningResult(normal_text=rest, reasoning_text=reasoning)

    def parse_streaming_increment(self, new_text):
        return self._out(*self._split.feed(new_text))

    def finish(self):
        reasoning, rest = self._split.finish()
        result = self._out(reasoning, rest, last=True)
        if self._force_nonempty and not self._normal and result.reasoning_text:
            return ReasoningResult(normal_text=result.reasoning_text + result.normal_text,
                                   reasoning_text="")
        return result

    def _out(self, reasoning, rest, last=False):
        if not self.stream_reasoning:
            self._held += reasoning
            reasoning = ""
            if self._split.ended or last:
                reasoning, self._held = self._held, ""
        self._normal = self._normal or bool(rest)
        return ReasoningResult(normal_text=rest, reasoning_text=reasoning)


def _profile(cls, suffix, profile):
    return type(cls.__name__ + suffix, (cls,), {"profile": profile, "__doc__": cls.__doc__})


DsmlDetectorV4 = _profile(DsmlDetector, "V4", "v4")
DsmlDetectorV32 = _profile(DsmlDetector, "V32", "v32")
DsmlReasoningDetectorV4 = _profile(DsmlReasoningDetector, "V4", "v4")
DsmlReasoningDetectorV32 = _profile(DsmlReasoningDetector, "V32", "v32")

NAME = "dsml"
# one name per profile: DeepSeek-V4.1 (the default), V4 and V3.2
DETECTORS = {
    "dsml": (DsmlDetector, DsmlReasoningDetector),
    "dsml-v4": (DsmlDetectorV4, DsmlReasoningDetectorV4),
    "dsml-v32": (DsmlDetectorV32, DsmlReasoningDetectorV32),
}


def register():
    """Register the detectors under their names with SGLang (no-op without
    it).  SGLang calls this through the package's "sglang.srt.plugins"
    entry point before it builds --tool-call-parser's choices."""
    parser = _import("sglang.srt.function_call.function_call_parser.FunctionCallParser")
    reasoning = _import("sglang.srt.parser.reasoning_parser.ReasoningParser",
                        "sglang.srt.reasoning_parser.ReasoningParser")
    for name, (tool_cls, reasoning_cls) in DETECTORS.items():
        if parser is not None:
            parser.ToolCallParserEnum[name] = tool_cls
        if reasoning is not None:
            reasoning.DetectorMap[name] = reasoning_cls
    return parser is not None or reasoning is not None


register()
