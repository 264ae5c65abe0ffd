"""Recovery mode through the binding: mode="recover" (strict=True kept as
the spelling of mode="strict"), recoveries= in lenient mode, and the
vLLM and SGLang adapters on the model outputs of public bug reports
(testdata/real-outputs.jsonl), each recovered as its reporter expected or
listed as not recovered (the C suite test_recover_cases gives the
reasons)."""

import json
import unittest

import _support
import dsml
from dsml.integrations import sglang as S
from dsml.integrations import vllm as V

D = "｜DSML｜"
V4_BLOCK = ('<%stool_calls>\n<%sinvoke name="read">\n<%sparameter name="path" '
            'string="true">/a</%sparameter>\n</%sinvoke>\n</%stool_calls>' % ((D,) * 6))

NOT_RECOVERED = {
    "pi-free-376-aio-webcontent",
    "opencrabs-419-element-style-dsml-closers",
    "vllm-ascend-13794-toolcall-json-fence",
    "memoh-435-tool-call-tag-json",
    "adk-python-5654-v3-tool-tokens-fenced-json",
    "ai-free-vscode-17-tool-call-file-search-tag",
    "ai-free-vscode-17-tool-call-read-file-tag",
    "lucebox-670-function-call-elements",
}

# the request settings a report states: tool_choice "none" refuses the call
# (the serving layer's decision, not the parser's)
CASE_OPTIONS = {
    "sglang-35736-bash-pwd": {"tool_choice_none": True},
}


def tools_of(case):
    names = case.get("declared_tools")
    if not names:
        return None
    return [{"type": "function", "function": {"name": n}} for n in names]


def same_arguments(want, text):
    if want.get("arguments") is not None:
        return json.loads(text) == want["arguments"]
    raw = want.get("arguments_raw")
    if raw is not None:
        try:
            got = json.loads(text)
        except ValueError:
            got = None
        if isinstance(got, dict) and all(got.get(k) == v for k, v in raw.items()):
            return True
        return text == "{%s}" % ", ".join("%s: %s" % (json.dumps(k, ensure_ascii=False), v)
                                          for k, v in raw.items())
    return True


class ModeTest(unittest.TestCase):
    def test_modes(self):
        msg = dsml.parse_completion(V4_BLOCK, mode="recover")
        self.assertEqual(msg["tool_calls"][0]["function"]["name"], "read")
        self.assertEqual(dsml.parse_completion(V4_BLOCK, mode="lenient")["tool_calls"], [])
        with self.assertRaises(dsml.DsmlError):
            dsml.parse_completion(V4_BLOCK)  # strict, the default
        with self.assertRaises(dsml.DsmlError):
            dsml.parse_completion(V4_BLOCK, strict=True)
        self.assertEqual(dsml.parse_completion(V4_BLOCK, strict=False)["tool_calls"], [])
        det = dsml.Detector(mode="recover")
        self.assertEqual((det.mode, det.strict), ("recover", False))
        events = det.feed(V4_BLOCK) + det.finish()
        self.assertTrue(any(e.kind == "call_end" and e.complete for e in events))
        self.assertTrue(any(e.kind == "diagnostic" for e in events))
        self.assertTrue(dsml.Detector(strict=True).strict)

    def test_refused(self):
        for kwargs in ({"mode": "fast"}, {"mode": "recover", "strict": True},
                       {"mode": "strict", "strict": False}, {"recoveries": ["guess"]},
                       {"mode": "strict", "recoveries": "spellings"}):
            with self.assertRaises(dsml.DsmlError, msg=repr(kwargs)):
                dsml.Detector(**kwargs)

    def test_recoveries(self):
        msg = dsml.parse_completion(V4_BLOCK, mode="lenient", recoveries=["spellings"])
        self.assertEqual(len(msg["tool_calls"]), 1)
        self.assertEqual(dsml.parse_completion(V4_BLOCK, mode="lenient",
                                               recoveries="structure")["tool_calls"], [])

    def test_schema(self):
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"days": {"type": "integer"}}}}}]
        text = ('\n\n<%stool_calls>\n<%sinvoke name="get_weather">\n<%sparameter name="days" '
                'string="true">3</%sparameter>\n</%sinvoke>\n</%stool_calls>' % ((D,) * 6)
                + "<｜end▁of▁sentence｜>")
        args = lambda **kw: json.loads(
            dsml.parse_completion(text, profile="v4", tools=tools, **kw)["tool_calls"][0]["function"]["arguments"])
        self.assertEqual(args(mode="recover"), {"days": 3})
        self.assertEqual(args(mode="lenient", recoveries=["schema"]), {"days": 3})
        self.assertEqual(args(mode="lenient", recoveries=["cdata"]), {"days": "3"})
        self.assertEqual(args(mode="strict"), {"days": "3"})

    def test_declared_tools_anchor(self):
        tools = [{"type": "function", "function": {"name": "other"}}]
        msg = dsml.parse_completion(V4_BLOCK, mode="recover", tools=tools)
        self.assertEqual(msg["tool_calls"], [])
        self.assertEqual(msg["content"], V4_BLOCK)


class AdaptersOnRealOutputsTest(unittest.TestCase):
    def cases(self):
        for case in _support.golden_lines("real-outputs.jsonl"):
            want = case["expect"]["tool_calls"]
            if case["id"] not in NOT_RECOVERED:
                yield case, want

    def options(self, case):
        options = {"mode": "recover"}
        tools = tools_of(case)
        if tools is not None:
            options["tools"] = tools
        extra = dict(CASE_OPTIONS.get(case["id"], {}))
        if extra.pop("tool_choice_none", False):
            return None  # the call is refused by the request, not the parser
        options.update(extra)
        return options

    def check(self, case, want, content, calls):
        if want is None:
            self.assertEqual(calls, [], case["id"])
            return
        self.assertEqual([n for n, _ in calls], [c["name"] for c in want], case["id"])
        for (_, arguments), w in zip(calls, want):
            self.assertTrue(same_arguments(w, arguments), "%s: %s" % (case["id"], arguments))
        if case["expect"]["content"] is not None:
            self.assertEqual(content, case["expect"]["content"], case["id"])

    def text_after_reasoning(self, case):
        """The vLLM reasoning parser's content, in recover mode (a calls
        block ends the reasoning, as the adapter reads it)."""
        if case["thinking_mode"] != "thinking":
            return case["text"]
        parser = type("R", (V.DsmlReasoningParser,), {"detector_options": {"mode": "recover"}})
        return parser(None).extract_reasoning(case["text"])[1] or ""

    def test_vllm_tool_parser(self):
        n = 0
        for case, want in self.cases():
            options = self.options(case)
            if options is None:
                continue
            parser_class = type("P", (V.DsmlToolParser,), {"detector_options": options})
            parser = parser_class(None)
            text = self.text_after_reasoning(case)
            info = parser.extract_tool_calls(text)
            calls = [(c.function.name, c.function.arguments) for c in info.tool_calls]
            content = info.content if info.tools_called else None
            self.check(case, want, content, calls)
            n += 1
        self.assertEqual(n, 20)

    def test_sglang_detector(self):
        n = 0
        for case, want in self.cases():
            options = self.options(case)
            if options is None:
                continue
            detector = S.DsmlDetector(**options)
            text = self.text_after_reasoning(case)
            result = detector.detect_and_parse(text)
            calls = [(c.name, c.parameters) for c in result.calls]
            self.check(case, want, result.normal_text if calls else None, calls)
            if want:
                self.assertTrue(detector.has_tool_call(text), case["id"])
            n += 1
        self.assertEqual(n, 20)


if __name__ == "__main__":
    unittest.main()
