"""`import dsml as encoding`: every public name of the reference encoding.py
exists in dsml and, when DSML_REFERENCE_ENCODING names a copy of the
reference, gives the reference's result on the golden cases and on random
ones from tools/gen.py: the same value (and the same changes to its
arguments), or a refusal where the reference refuses; where the reference
raises AssertionError or ValueError, so does dsml (DsmlError is both)."""

import functools
import json
import os
import random
import tempfile
import unittest

import _support
import dsml
import gen
import paritylib as P
from _surface_check import Comparison, public_names, ref_try, strings

REFERENCE = os.environ.get("DSML_REFERENCE_ENCODING")
RANDOM_CASES = int(os.environ.get("DSML_SURFACE_CASES", "300"))

# The public names of the reference encoding.py (V4.1-Flash dba1be0a).
PUBLIC = (
    "bos_token", "eos_token", "thinking_start_token", "thinking_end_token", "dsml_token",
    "USER_SP_TOKEN", "ASSISTANT_SP_TOKEN", "LATEST_REMINDER_SP_TOKEN", "SYSTEM_SP_TOKEN",
    "IMAGE_PLACEHOLDER", "IMAGE_TAG_PATTERN", "DS_TASK_SP_TOKENS", "VALID_TASKS",
    "system_msg_template", "user_msg_template", "latest_reminder_msg_template",
    "assistant_msg_template", "assistant_msg_wo_eos_template", "thinking_template",
    "response_format_template", "tool_output_template", "tool_calls_block_name",
    "tool_call_tag_name", "tool_parameter_tag_name", "tool_call_template",
    "tool_calls_template", "REASONING_EFFORT_TEMPLATE", "REASONING_EFFORT_MAPPINGS",
    "DEFAULT_REASONING_EFFORT", "TOOLS_TEMPLATE",
    "to_json", "tools_from_openai_format", "tool_calls_from_openai_format",
    "tool_calls_to_openai_format", "decode_dsml_to_arguments", "merge_tool_messages",
    "sort_tool_results_by_call_order", "parse_tagged_text", "process_image_messages",
    "render_reasoning_effort", "render_tools", "encode_arguments_to_dsml",
    "find_last_user_index", "render_message", "encode_messages", "load_cases",
    "encode_case", "parse_tool_calls", "parse_message_from_completion_text",
)
CALLS_OPEN = "\n\n<" + dsml.dsml_token + dsml.tool_calls_block_name
# The developer role is rendered by default (as the serving image renders
# it); strict=True refuses it as the reference does.
STRICT = {"encode_messages": functools.partial(dsml.encode_messages, strict=True)}


class Surface(unittest.TestCase):

    def test_every_public_name(self):
        for name in PUBLIC:
            self.assertTrue(hasattr(dsml, name), name)
            self.assertIn(name, dsml.__all__)

    def test_used_as_the_reference(self):
        import dsml as encoding
        messages = [{"role": "user", "content": "hi"}]
        prompt = encoding.encode_messages(messages, "chat")
        self.assertEqual(prompt, encoding.bos_token + encoding.USER_SP_TOKEN + "hi"
                         + encoding.ASSISTANT_SP_TOKEN + encoding.thinking_end_token)
        self.assertEqual(encoding.render_message(0, encoding.merge_tool_messages(messages),
                                                 "chat"), prompt[len(encoding.bos_token):])
        text = encoding.eos_token
        self.assertEqual(encoding.parse_message_from_completion_text(text, "chat")["content"], "")
        try:
            encoding.render_reasoning_effort(0, "thinking", "fast")
        except (AssertionError, ValueError) as exc:  # a handler written for the reference
            self.assertIsInstance(exc, dsml.DsmlError)
        else:
            self.fail("an invalid effort was accepted")


TAGGED = ["a<image>x.png</image>b", "<image></image>", "<image>open", "x</image>",
          "<image>a</image><image>b\n</image>tail", "plain", ""]
EFFORTS = [None, "low", "high", "max", "xhigh", 1, 100, 0, 101, True, 50.0, "", [1]]
ODD_VALUES = [float("nan"), float("inf"), "\ud800", {1: 2}, {"a": (1, 2)}, set(), 10 ** 30]


@unittest.skipUnless(REFERENCE, "DSML_REFERENCE_ENCODING not set: the reference "
                     "surface is not compared")
class AgainstReference(Comparison, unittest.TestCase):

    surface = dsml
    overrides = STRICT

    @classmethod
    def setUpClass(cls):
        cls.ref = P.load_reference(REFERENCE)
        rng = random.Random(7)
        cls.render = [c for _, c in P.golden_cases(_support.testdata("render.jsonl"), "render")]
        cls.parse = [c for _, c in P.golden_cases(_support.testdata("parse.jsonl"), "parse")]
        cls.render += [gen.gen_render(rng) for _ in range(RANDOM_CASES)]
        cls.parse += [gen.gen_parse(rng) for _ in range(RANDOM_CASES)]

    def test_names_are_the_references(self):
        self.assertEqual(public_names(self.ref), set(PUBLIC))

    def test_values(self):
        self.check_values(PUBLIC)

    def test_messages_and_tools(self):
        ref = self.ref
        for case in self.render:
            messages = case["messages"]
            self.agree("to_json", messages)
            self.agree("merge_tool_messages", messages)
            self.agree("process_image_messages", messages)
            merged = ref_try(ref.merge_tool_messages, (case.get("context") or []) + messages)
            if merged is not None:
                self.agree("sort_tool_results_by_call_order", merged)
                self.agree("find_last_user_index", merged)
            for msg in messages if isinstance(messages, list) else ():
                if not isinstance(msg, dict):
                    continue
                for text in strings(msg.get("content")):
                    self.agree("parse_tagged_text", text)
                self.agree_tools_and_calls(msg)
        for value in ODD_VALUES:
            self.agree("to_json", value)
        for text in TAGGED:
            self.agree("parse_tagged_text", text)
        self.report(["to_json", "merge_tool_messages", "process_image_messages",
                     "sort_tool_results_by_call_order", "find_last_user_index",
                     "parse_tagged_text", "tools_from_openai_format", "render_tools",
                     "tool_calls_from_openai_format", "encode_arguments_to_dsml",
                     "tool_calls_to_openai_format", "decode_dsml_to_arguments"])

    def test_rendering(self):
        ref = self.ref
        for case in self.render:
            mode = case.get("thinking_mode")
            kwargs = {k: case[k] for k in P.RENDER_KEYS if k in case}
            self.agree("encode_messages", case["messages"], mode, kwargs.get("context"),
                       kwargs.get("drop_thinking", True),
                       kwargs.get("add_default_bos_token", True),
                       kwargs.get("reasoning_effort"), True)
            effort = kwargs.get("reasoning_effort")
            for index in (0, 1):
                self.agree("render_reasoning_effort", index, mode, effort)
            full = ref_try(lambda c: _preprocessed(ref, c), case)
            if full is None:
                continue
            for drop in (True, False):
                for index in range(len(full)):
                    self.agree("render_message", index, full, mode, drop, effort)
        for effort in EFFORTS:
            for mode in ("chat", "thinking", "none"):
                self.agree("render_reasoning_effort", 0, mode, effort)
        self.agree("render_message", 3, [{"role": "user"}], "chat")
        self.agree("render_message", 0, [{"role": "user"}], "fast")
        self.report(["encode_messages", "render_reasoning_effort", "render_message"])

    def test_cases(self):
        with tempfile.TemporaryDirectory() as tmp:
            for n, case in enumerate(self.render[:200]):
                doc = {"messages": case["messages"], "thinking_mode": case.get("thinking_mode"),
                       "reasoning_effort": case.get("reasoning_effort")}
                if n % 3 == 0:
                    doc = [doc]
                elif n % 3 == 1 and case["messages"]:
                    doc = case["messages"]
                if any(isinstance(m, dict) and m.get("role") == "developer"
                       for m in case["messages"]):
                    continue  # rendered by dsml's default profile, refused by the reference
                path = os.path.join(tmp, "%d.json" % n)
                try:
                    with open(path, "w") as f:
                        json.dump(doc, f, ensure_ascii=False)
                except (TypeError, ValueError):
                    continue
                self.agree("load_cases", path)
                for loaded in ref_try(self.ref.load_cases, path) or ():
                    self.agree("encode_case", loaded, "thinking")
        self.report(["load_cases", "encode_case"])

    def test_parsing(self):
        for case in self.parse:
            self.agree_completion(case["text"], case["thinking_mode"], CALLS_OPEN)
        self.report(["parse_message_from_completion_text", "parse_tool_calls"])


def _preprocessed(ref, case):
    """The message list the reference hands to render_message for a case."""
    messages, _ = ref.process_image_messages(case["messages"])
    context, _ = ref.process_image_messages(case.get("context") or [])
    full = ref.sort_tool_results_by_call_order(
        ref.merge_tool_messages(context) + ref.merge_tool_messages(messages))
    drop = case.get("drop_thinking", True) and not any(m.get("tools") for m in full)
    if case.get("thinking_mode") == "thinking" and drop:
        full = ref._drop_thinking_messages(full)
    return full


if __name__ == "__main__":
    unittest.main()
