"""`import dsml.v4 as encoding_dsv4` and `import dsml.v32 as encoding_dsv32`:
every public name of DeepSeek-V4's encoding_dsv4.py and V3.2's
encoding_dsv32.py exists in dsml.v4 and dsml.v32.  Without the references,
the golden files go through each module's entry points and its Python
helpers, which must give the golden prompts and messages.  When
DSML_REFERENCE_ENCODING_V4 / DSML_REFERENCE_ENCODING_V32 name copies of the
references (shared/spec/DIALECTS.md, beside the repository, says where they
are and gives their sha256), every name is compared with the reference's on
the golden cases, on random ones from tools/gen.py and on direct calls: the
same value (and the same changes to its arguments), or a refusal where the
reference refuses; where the reference raises AssertionError or
ValueError, so does dsml (DsmlError is both)."""

import os
import random
import unittest

import _support
import dsml
import dsml.v32
import dsml.v4
import gen
import paritylib as P
from _surface_check import Comparison, public_names, ref_try

RANDOM_CASES = int(os.environ.get("DSML_SURFACE_CASES", "300"))
D = dsml.dsml_token

# The public names of encoding_dsv4.py (V4-Flash 60d8d707) and
# encoding_dsv32.py (V3.2 a7e62ac0).
SHARED = (
    "bos_token", "eos_token", "thinking_start_token", "thinking_end_token", "dsml_token",
    "system_msg_template", "user_msg_template", "assistant_msg_template",
    "thinking_template", "response_format_template", "tool_call_template",
    "tool_calls_template", "tool_output_template",
    "to_json", "tools_from_openai_format", "tool_calls_from_openai_format",
    "tool_calls_to_openai_format", "encode_arguments_to_dsml", "decode_dsml_to_arguments",
    "render_tools", "find_last_user_index", "render_message", "encode_messages",
    "parse_tool_calls", "parse_message_from_completion_text",
)
PUBLIC_V4 = SHARED + (
    "USER_SP_TOKEN", "ASSISTANT_SP_TOKEN", "LATEST_REMINDER_SP_TOKEN", "DS_TASK_SP_TOKENS",
    "VALID_TASKS", "latest_reminder_msg_template", "assistant_msg_wo_eos_template",
    "tool_calls_block_name", "REASONING_EFFORT_MAX", "TOOLS_TEMPLATE",
    "merge_tool_messages", "sort_tool_results_by_call_order",
)
PUBLIC_V32 = SHARED + ("TOOLS_SYSTEM_TEMPLATE", "drop_thinking_messages")

V4_EFFORTS = [None, "high", "max", "low", "", 1, True, ["max"]]


def v4_message_list(module, case):
    """(the list render_message is given, the indexes rendered, the
    drop_thinking it is given) for a V4 case, made with module's
    preprocessing helpers as the reference's encode_messages makes it."""
    context = case.get("context") or []
    messages = module.merge_tool_messages(case["messages"])
    module.sort_tool_results_by_call_order(context + messages)
    context = module.sort_tool_results_by_call_order(module.merge_tool_messages(context))
    full = context + messages
    drop = case.get("drop_thinking", True) and not any(m.get("tools") for m in full)
    first = len(context)
    if case.get("thinking_mode") == "thinking" and drop:
        drop_step = getattr(module, "_drop_thinking_messages", v4_drop_thinking)
        first = len(drop_step(context))
        full = drop_step(full)
    return full, range(first, len(full)), drop


def v32_message_list(module, case):
    """The same for a V3.2 case (its render_message takes no drop_thinking)."""
    context = case.get("context") or []
    full = context + case["messages"]
    if case.get("thinking_mode") == "thinking" and case.get("drop_thinking", True):
        full = module.drop_thinking_messages(full)
    return full, range(len(context), len(context) + len(case["messages"])), None


class Dialect:
    """What the suites need to know of one surface: its module, public
    names, environment variable, calls block, golden files, how a case
    becomes render_message's list, and whether its encode_messages and
    render_message take drop_thinking and reasoning_effort (V4) or not."""

    def __init__(self, name, surface, public, block, message_list, effort):
        self.surface, self.public, self.block = surface, public, block
        self.env = "DSML_REFERENCE_ENCODING_" + name.upper()
        self.render_file, self.parse_file = name + "-render.jsonl", name + "-parse.jsonl"
        self.message_list, self.effort = message_list, effort

    def encode_args(self, case):
        args = (case["messages"], case.get("thinking_mode"), case.get("context"),
                case.get("drop_thinking", True), case.get("add_default_bos_token", True))
        return args + (case.get("reasoning_effort"),) if self.effort else args

    def render_args(self, index, full, case, drop):
        args = (index, full, case.get("thinking_mode"))
        return args + (drop, case.get("reasoning_effort")) if self.effort else args


V4 = Dialect("v4", dsml.v4, PUBLIC_V4, "tool_calls", v4_message_list, effort=True)
V32 = Dialect("v32", dsml.v32, PUBLIC_V32, "function_calls", v32_message_list, effort=False)


def v4_drop_thinking(messages):
    """The step of V4's encode_messages that has no public name (the
    reference's _drop_thinking_messages): before the last user or developer
    message, assistants lose their reasoning and only user, system, tool and
    latest_reminder messages are kept besides them."""
    last_user = dsml.v4.find_last_user_index(messages)
    kept = []
    for index, msg in enumerate(messages):
        role = msg.get("role")
        if index >= last_user or role in ("user", "system", "tool", "latest_reminder",
                                          "direct_search_results"):
            kept.append(msg)
        elif role == "assistant":
            kept.append({k: v for k, v in msg.items() if k != "reasoning_content"})
    return kept


def respelled(text, block):
    """A V4.1 completion (tools/gen.py) in a dialect's unspaced tags."""
    return (text.replace(D + " calls", D + block).replace(D + " invoke", D + "invoke")
            .replace(D + " parameter", D + "parameter"))


def golden_prompt(dialect, case):
    """The prompt of a golden case made with the surface's Python helpers."""
    module = dialect.surface
    full, indexes, drop = dialect.message_list(module, case)
    context = case.get("context")
    bos = module.bos_token if case.get("add_default_bos_token", True) and not context else ""
    return bos + "".join(module.render_message(*dialect.render_args(i, full, case, drop))
                         for i in indexes)


class Golden:
    """Mixin: the golden files through the surface, no reference needed."""

    dialect = None

    def test_every_public_name(self):
        module = self.dialect.surface
        for name in self.dialect.public:
            self.assertTrue(hasattr(module, name), name)
        self.assertEqual(set(module.__all__), set(self.dialect.public))

    def test_golden_render(self):
        """encode_messages (libdsml) gives each golden prompt or refuses."""
        n = 0
        for line in _support.golden_lines(self.dialect.render_file):
            case = dict(P.golden_case(line, "render"))
            n += 1
            with self.subTest(id=line["id"]):
                if "error" in line["expect"]:
                    with self.assertRaises(dsml.DsmlError):
                        self.dialect.surface.encode_messages(*self.dialect.encode_args(case))
                else:
                    self.assertEqual(
                        self.dialect.surface.encode_messages(*self.dialect.encode_args(case)),
                        line["expect"]["prompt"])
        self.assertGreater(n, 0)

    def test_golden_render_helpers(self):
        """The Python helpers (merging, sorting, dropping, render_message)
        give the same golden prompts, and fail where the reference failed."""
        made = refused = 0
        for line in _support.golden_lines(self.dialect.render_file):
            case = dict(P.golden_case(line, "render"))
            with self.subTest(id=line["id"]):
                if "error" in line["expect"]:
                    with self.assertRaises(Exception):
                        golden_prompt(self.dialect, case)
                    refused += 1
                else:
                    self.assertEqual(golden_prompt(self.dialect, case),
                                     line["expect"]["prompt"])
                    made += 1
        print("%s helpers: %d golden prompts, %d refusals" % (
            self.dialect.surface.__name__, made, refused))
        self.assertGreater(made, 0)
        self.assertGreater(refused, 0)

    def test_golden_parse(self):
        """parse_message_from_completion_text (libdsml) and parse_tool_calls
        (Python) give each golden message or refuse."""
        module = self.dialect.surface
        opener = "\n\n<" + D + self.dialect.block
        calls = 0
        for line in _support.golden_lines(self.dialect.parse_file):
            text, mode = line["text"], line["thinking_mode"]
            with self.subTest(id=line["id"]):
                if "error" in line["expect"]:
                    with self.assertRaises(dsml.DsmlError):
                        module.parse_message_from_completion_text(text, mode)
                    continue
                want = line["expect"]["message"]
                self.assertEqual(module.parse_message_from_completion_text(text, mode), want)
                if want["tool_calls"]:
                    at = text.index(opener, text.find("</think>") + 1 if mode == "thinking"
                                    else 0) + len(opener)
                    parsed = module.parse_tool_calls(at, text)[2]
                    self.assertEqual(module.tool_calls_to_openai_format(parsed),
                                     want["tool_calls"])
                    calls += 1
        self.assertGreater(calls, 0)

    def test_guard(self):
        """guard=True (keyword-only) refuses special tokens in user text."""
        module = self.dialect.surface
        messages = [{"role": "user", "content": "x" + dsml.eos_token}]
        self.assertIn(dsml.eos_token, module.encode_messages(messages, "chat"))
        with self.assertRaises(dsml.DsmlError) as cm:
            module.encode_messages(messages, "chat", guard=True)
        self.assertEqual(cm.exception.name, "DSML_ERR_SPECIAL_TOKEN")

    def test_refusals_are_dsml_errors(self):
        module = self.dialect.surface
        for args in ((5, [{"role": "user"}], "chat"), (0, [{"role": "user"}], "fast"),
                     (0, [{"role": "other"}], "chat")):
            with self.assertRaises(dsml.DsmlError) as cm:
                module.render_message(*args)
            self.assertIsInstance(cm.exception, AssertionError)
            self.assertIsInstance(cm.exception, ValueError)
        with self.assertRaises(ValueError):
            module.parse_message_from_completion_text("no end", "chat")


class GoldenV4(Golden, unittest.TestCase):
    dialect = V4

    def test_used_as_the_reference(self):
        import dsml.v4 as encoding_dsv4
        messages = [{"role": "user", "content": "hi"}]
        prompt = encoding_dsv4.encode_messages(messages, "thinking", reasoning_effort="max")
        self.assertEqual(prompt, encoding_dsv4.bos_token + encoding_dsv4.REASONING_EFFORT_MAX
                         + encoding_dsv4.USER_SP_TOKEN + "hi"
                         + encoding_dsv4.ASSISTANT_SP_TOKEN + encoding_dsv4.thinking_start_token)
        with self.assertRaises(AssertionError):
            encoding_dsv4.render_message(0, messages, "thinking", reasoning_effort="low")
        with self.assertRaises(AssertionError):
            encoding_dsv4.encode_messages(messages, "thinking", reasoning_effort="low")
        self.assertIn("<" + D + "tool_calls>", encoding_dsv4.render_tools([]))


class GoldenV32(Golden, unittest.TestCase):
    dialect = V32

    def test_used_as_the_reference(self):
        import dsml.v32 as encoding_dsv32
        messages = [{"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                    {"role": "tool", "content": "ok"}]
        prompt = encoding_dsv32.encode_messages(messages, "thinking")
        self.assertTrue(prompt.endswith("<function_results>\n<result>ok</result>\n"
                                        "</function_results>\n\n<think>"), prompt)
        self.assertEqual(prompt, encoding_dsv32.bos_token + "".join(
            encoding_dsv32.render_message(i, messages, "thinking") for i in range(3)))
        with self.assertRaises(TypeError):  # the reference has no effort parameter
            encoding_dsv32.encode_messages(messages, "thinking", reasoning_effort="max")

    def test_dropped_context_refused(self):
        """V3.2's thinking drop leaves out a latest_reminder before the last
        user message, also in the context, and the reference then fails on
        its own indexes; V4 keeps it."""
        context = [{"role": "latest_reminder", "content": "r"}, {"role": "user", "content": "a"}]
        hi = [{"role": "user", "content": "Hi"}]
        with self.assertRaises(dsml.DsmlError):
            dsml.v32.encode_messages(hi, "thinking", context=context)
        header = dsml.v4.USER_SP_TOKEN + "Hi" + dsml.v4.ASSISTANT_SP_TOKEN + "<think>"
        self.assertEqual(dsml.v32.encode_messages(hi, "thinking", context=context,
                                                  drop_thinking=False), header)
        self.assertEqual(dsml.v4.encode_messages(hi, "thinking", context=context), header)


class AgainstReference(Comparison):
    """Mixin: every name against the dialect's reference."""

    dialect = None

    @classmethod
    def setUpClass(cls):
        path = os.environ.get(cls.dialect.env)
        if not path:
            raise unittest.SkipTest("%s not set: the %s reference surface is not compared"
                                    % (cls.dialect.env, cls.dialect.surface.__name__))
        cls.ref = P.load_reference(path)
        cls.surface = cls.dialect.surface
        rng = random.Random(11)
        cls.render = [c for _, c in P.golden_cases(
            _support.testdata(cls.dialect.render_file), "render")]
        cls.parse = [c for _, c in P.golden_cases(
            _support.testdata(cls.dialect.parse_file), "parse")]
        cls.render += [gen.gen_render(rng) for _ in range(RANDOM_CASES)]
        for _ in range(RANDOM_CASES):
            case = gen.gen_parse(rng)
            case["text"] = respelled(case["text"], cls.dialect.block)
            cls.parse.append(case)

    def test_names_are_the_references(self):
        self.assertEqual(public_names(self.ref), set(self.dialect.public))

    def test_values(self):
        self.check_values(self.dialect.public)

    def test_messages_and_tools(self):
        ref = self.ref
        names = ["to_json", "find_last_user_index", "tools_from_openai_format",
                 "render_tools", "tool_calls_from_openai_format", "encode_arguments_to_dsml",
                 "tool_calls_to_openai_format", "decode_dsml_to_arguments"]
        v4 = hasattr(ref, "merge_tool_messages")
        names += (["merge_tool_messages", "sort_tool_results_by_call_order"] if v4
                  else ["drop_thinking_messages"])
        for case in self.render:
            messages = case["messages"]
            full = (case.get("context") or []) + messages
            self.agree("to_json", messages)
            self.agree("find_last_user_index", full)
            if v4:
                self.agree("merge_tool_messages", messages)
                merged = ref_try(ref.merge_tool_messages, full)
                if merged is not None:
                    self.agree("sort_tool_results_by_call_order", merged)
                    self.agree("find_last_user_index", merged)
            else:
                self.agree("drop_thinking_messages", full)
                self.agree("drop_thinking_messages", full, 1)
            for msg in messages if isinstance(messages, list) else ():
                if isinstance(msg, dict):
                    self.agree_tools_and_calls(msg)
        for value in (float("nan"), "\ud800", {1: 2}, set(), 10 ** 30):
            self.agree("to_json", value)
        for arguments in ("[1]", "1", "null", '"x"', "{", None, {"a": 1}, '{"a": [1, "x"]}'):
            self.agree("encode_arguments_to_dsml", {"name": "f", "arguments": arguments})
        self.agree("encode_arguments_to_dsml", {"name": "f"})
        self.agree("tool_calls_to_openai_format", [{"name": "f", "arguments": "{}",
                                                    "namespace": "ns"}])
        self.report(names)

    def test_rendering(self):
        ref = self.ref
        dialect = self.dialect
        for case in self.render:
            self.agree("encode_messages", *dialect.encode_args(case))
            made = ref_try(lambda c: dialect.message_list(ref, c), case)
            if made is None:
                continue
            full, _, drop = made
            for index in range(len(full)):
                self.agree("render_message", *dialect.render_args(index, full, case, drop))
            if dialect is V4 and full:
                for effort in V4_EFFORTS:
                    self.agree("render_message", 0, full, "thinking", drop, effort)
        messages = [{"role": "user", "content": "x"}]
        for mode in ("chat", "thinking", "fast"):
            self.agree("render_message", 0, messages, mode)
            self.agree("encode_messages", messages, mode)
        self.agree("render_message", 1, messages, "chat")
        self.agree("render_message", -1, messages, "chat")
        self.agree("encode_messages", [], "fast")
        self.agree("render_message", 0, [{"role": "tool", "content": "r"}], "chat")
        if dialect is V4:
            for effort in V4_EFFORTS:
                self.agree("encode_messages", messages, "thinking", None, True, True, effort)
        self.report(["encode_messages", "render_message"])

    def test_parsing(self):
        opener = "\n\n<" + D + self.dialect.block
        for case in self.parse:
            self.agree_completion(case["text"], case["thinking_mode"], opener)
        for text in ("", dsml.eos_token, "a</think>b" + dsml.eos_token,
                     "x" + opener + ">\n</" + D + self.dialect.block + ">" + dsml.eos_token,
                     "x" + opener + ">\n<" + D + "invoke name=\"f\">\n</" + D + "invoke>\n</"
                     + D + self.dialect.block + ">" + dsml.eos_token + "tail"):
            for mode in ("chat", "thinking"):
                self.agree("parse_message_from_completion_text", text, mode)
        self.report(["parse_message_from_completion_text", "parse_tool_calls",
                     "tool_calls_to_openai_format"])


class AgainstV4Reference(AgainstReference, unittest.TestCase):
    dialect = V4


class AgainstV32Reference(AgainstReference, unittest.TestCase):
    dialect = V32


if __name__ == "__main__":
    unittest.main()
