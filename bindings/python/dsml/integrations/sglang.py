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

from collections import namedtuple

from ..reference import dsml_token, tool_calls_block_name, tool_call_tag_name
from ._common import CallStream, ReasoningSplit
from .vllm import _import

_BaseFormatDetector = _import("sglang.srt.function_call.base_format_detector.BaseFormatDetector")
_BaseReasoning = _import("sglang.srt.parser.reasoning_parser.BaseReasoningFormatDetector",
                         "sglang.srt.reasoning_parser.BaseReasoningFormatDetector")
ToolCallItem = _import("sglang.srt.function_call.core_types.ToolCallItem")
StreamingParseResult = _import("sglang.srt.function_call.core_types.StreamingParseResult")
StructureInfo = _import("sglang.srt.function_call.core_types.StructureInfo")
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

CALLS_TAG = "<%s%s>" % (dsml_token, tool_calls_block_name)


class DsmlDetector(*(() if _BaseFormatDetector is None else (_BaseFormatDetector,))):
    """SGLang format detector for DSML tool calls (the text after the
    reasoning).  Keyword arguments are dsml.Detector options
    (markers="variants" for V4's unspaced tags, mode="recover" and tools for
    what models write beside the format, policies, limits)."""

    def __init__(self, **detector_options):
        if _BaseFormatDetector is not None:
            super().__init__()
        self.bot_token = CALLS_TAG
        self.eot_token = "</%s%s>" % (dsml_token, tool_calls_block_name)
        self.detector_options = detector_options
        self._stream = CallStream(**detector_options)
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
        return CALLS_TAG in text or (
            self.detector_options.get("markers") == "variants" and
            any(tag in text for tag in ("<%stool_calls>" % dsml_token, "<|DSML| calls>",
                                        "<｜｜DSML｜｜ calls>")))

    def detect_and_parse(self, text, tools=None):
        """Whole text -> StreamingParseResult(normal_text, calls)."""
        content, calls = CallStream.parse(text, **self.detector_options)
        return StreamingParseResult(normal_text=content, calls=[
            ToolCallItem(tool_index=i, name=name, parameters=arguments)
            for i, (name, arguments) in enumerate(calls)])

    def parse_streaming_increment(self, new_text, tools=None):
        """One increment -> StreamingParseResult(normal_text, calls): a
        call's name first (empty parameters), then argument fragments."""
        return self._result(*self._stream.feed(new_text))

    def finish(self, tools=None):
        """The end of the stream: what the detector still held."""
        result = self._result(*self._stream.finish())
        self._stream.reset()
        return result

    def _result(self, content, pieces):
        self._share_state()
        return StreamingParseResult(normal_text=content, calls=[
            ToolCallItem(tool_index=index, name=name, parameters=arguments)
            for index, name, arguments in pieces])

    def supports_structural_tag(self):
        return False

    def structure_info(self):
        return lambda name: StructureInfo(
            begin='\n\n%s\n<%s%s name="%s">\n' % (CALLS_TAG, dsml_token, tool_call_tag_name,
                                                  name),
            end="</%s%s>\n%s" % (dsml_token, tool_call_tag_name, self.eot_token),
            trigger=CALLS_TAG)


class DsmlReasoningDetector(*(() if _BaseReasoning is None else (_BaseReasoning,))):
    """SGLang reasoning detector: reasoning up to </think> (or a calls
    block), the raw rest as normal text for the tool detector.
    force_reasoning (the prompt ended with <think>) defaults to on; off, all
    text is normal text."""

    def __init__(self, stream_reasoning=True, force_reasoning=True, **detector_options):
        if _BaseReasoning is not None:
            super().__init__("<think>", "</think>", force_reasoning=force_reasoning,
                             stream_reasoning=stream_reasoning)
        self._split = ReasoningSplit(bool(force_reasoning), **detector_options)

    def detect_and_parse(self, text):
        reasoning, rest = self._split.split(text)
        return ReasoningResult(normal_text=rest or "", reasoning_text=reasoning or "")

    def parse_streaming_increment(self, new_text):
        reasoning, rest = self._split.feed(new_text)
        return ReasoningResult(normal_text=rest, reasoning_text=reasoning)

    def finish(self):
        reasoning, rest = self._split.finish()
        return ReasoningResult(normal_text=rest, reasoning_text=reasoning)


NAME = "dsml"


def register():
    """Register both detectors as "dsml" with SGLang (no-op without it)."""
    parser = _import("sglang.srt.function_call.function_call_parser.FunctionCallParser")
    reasoning = _import("sglang.srt.parser.reasoning_parser.ReasoningParser",
                        "sglang.srt.reasoning_parser.ReasoningParser")
    if parser is not None:
        parser.ToolCallParserEnum[NAME] = DsmlDetector
    if reasoning is not None:
        reasoning.DetectorMap[NAME] = DsmlReasoningDetector
    return parser is not None or reasoning is not None


register()
