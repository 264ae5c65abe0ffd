"""The binding's own behaviour: loading, errors, argument mapping, the
keyword extras, the streaming detector's Python surface."""

import ctypes
import json
import os
import subprocess
import sys
import unittest

import _support
import dsml
from dsml import _native as N

USER = [{"role": "user", "content": "hi"}]
BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"


class Loading(unittest.TestCase):

    def test_version(self):
        self.assertEqual(N.version_number // 10000, N.EXPECTED_MAJOR)
        self.assertEqual(N.version_number // 100 % 100, N.EXPECTED_MINOR)
        self.assertRegex(dsml.library_version, r"^\d+\.\d+\.\d+")

    @unittest.skipUnless(os.environ.get("DSML_TEST_INSTALLED"),
                         "DSML_TEST_INSTALLED not set: the source tree is tested")
    def test_installed_package(self):
        # tools/check_install.py: the installed package and its own libdsml
        package = os.path.dirname(os.path.abspath(dsml.__file__))
        self.assertNotEqual(package, os.path.join(_support.BINDING, "dsml"))
        self.assertTrue(os.path.realpath(dsml.library_path).startswith(package))

    def test_version_mismatch_refused(self):
        with self.assertRaisesRegex(ImportError, "needs 0.1.x"):
            N.check_version(20000, "2.0.0", "/x/libdsml.so")
        with self.assertRaises(ImportError):
            N.check_version(200, "0.2.0", "/x/libdsml.so")
        N.check_version(107, "0.1.7", "/x/libdsml.so")

    def test_bad_library_path(self):
        env = dict(os.environ, DSML_LIBRARY="/nonexistent/libdsml.so",
                   PYTHONPATH=_support.BINDING)
        r = subprocess.run([sys.executable, "-c", "import dsml"], env=env,
                           capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError", r.stderr)
        self.assertIn("DSML_LIBRARY", r.stderr)

    def test_struct_layouts(self):
        # size_t first, then the fields in header order (LP64 / ILP32 alike)
        p = ctypes.sizeof(ctypes.c_void_p)
        self.assertEqual(N.Error.code.offset, ctypes.sizeof(ctypes.c_size_t))
        self.assertEqual(N.Error.message.size, 512)
        self.assertEqual(N.Output.alloc_.offset, 7 * p + 4 * p)
        self.assertEqual(ctypes.sizeof(N.Limits), 6 * ctypes.sizeof(ctypes.c_size_t))
        self.assertEqual(N.RenderOptions.max_json_values.offset
                         + p, ctypes.sizeof(N.RenderOptions))
        # the library reads as far as the binding's structs go
        self.assertEqual(N.new_render_options().size, ctypes.sizeof(N.RenderOptions))
        self.assertEqual(N.new_detector_options().size, ctypes.sizeof(N.DetectorOptions))

    def test_status_table(self):
        self.assertEqual(dsml.status_name(0), "DSML_OK")
        self.assertEqual(dsml.status_name(-11), "DSML_ERR_THINKING_MODE")
        self.assertTrue(dsml.status_message(-3))


class Render(unittest.TestCase):

    def test_reference_defaults(self):
        self.assertEqual(dsml.encode_messages(USER, "chat"),
                         BOS + "<｜User｜>hi<｜Assistant｜></think>")
        prompt, media = dsml.encode_messages(USER, "chat", return_multi_modal_data=True)
        self.assertEqual(media, {"images": []})
        self.assertEqual(dsml.encode_messages(USER, "chat", add_default_bos_token=False),
                         "<｜User｜>hi<｜Assistant｜></think>")

    def test_images(self):
        msgs = [{"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "a.png"}}]}]
        prompt, media = dsml.encode_messages(msgs, "chat", return_multi_modal_data=True)
        self.assertIn("<｜deepseek_image｜>", prompt)
        self.assertEqual(media["images"], [{"type": "image", "url": "a.png"}])

    def test_error_attributes(self):
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.encode_messages([{"role": "user", "content": "x"},
                                  {"role": "bogus"}], "chat")
        e = cm.exception
        self.assertLess(e.code, 0)
        self.assertEqual(e.name, dsml.status_name(e.code))
        self.assertTrue(e.name.startswith("DSML_ERR_"))
        self.assertIn("messages[1]", e.path)
        self.assertIn("bogus", e.message)
        self.assertIn(e.name, str(e))

    def test_error_caught_by_reference_handlers(self):
        # code written around the reference catches what it raises
        for catch in (AssertionError, ValueError, (AssertionError, ValueError)):
            with self.assertRaises(catch):
                dsml.encode_messages(USER, "thinking", reasoning_effort="fast")
            with self.assertRaises(catch):
                dsml.parse_message_from_completion_text("no eos", "chat")
        e = dsml.DsmlError(-12, "bad effort", 3, "$.reasoning_effort")
        self.assertEqual((e.code, e.name, e.offset, e.path, e.message),
                         (-12, "DSML_ERR_EFFORT", 3, "$.reasoning_effort", "bad effort"))

    def test_thinking_mode_checked_lazily(self):
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.encode_messages(USER, "fast")
        self.assertEqual(cm.exception.name, "DSML_ERR_THINKING_MODE")
        for bad in (None, "", "Thinking", 1):
            with self.assertRaises(dsml.DsmlError):
                dsml.encode_messages(USER, bad)
        # the reference renders nothing, so it refuses nothing
        self.assertEqual(dsml.encode_messages([], "fast"), BOS)

    def test_effort(self):
        def effort(e):
            return dsml.encode_messages(USER, "thinking", reasoning_effort=e)
        self.assertIn("Reasoning Effort: 100 ", effort("max"))
        self.assertIn("Reasoning Effort: 42 ", effort(42))
        self.assertIn("Reasoning Effort: 75 ", effort(None))
        for bad in (True, 50.0, 0, 101, "medium", [50], 10 ** 30):
            with self.assertRaises(dsml.DsmlError, msg=repr(bad)) as cm:
                effort(bad)
            self.assertEqual(cm.exception.name, "DSML_ERR_EFFORT")
        self.assertIn("Reasoning Effort: 75 ",
                      dsml.encode_messages(USER, "thinking", reasoning_effort="xhigh",
                                           profile="prerelease"))

    def test_strict_and_profile(self):
        dev = [{"role": "developer", "content": "rules"}, {"role": "user", "content": "q"}]
        self.assertIn("rules", dsml.encode_messages(dev, "chat"))
        with self.assertRaises(dsml.DsmlError):
            dsml.encode_messages(dev, "chat", strict=True)
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.encode_messages(USER, "chat", profile="v40")
        self.assertEqual(cm.exception.name, "DSML_ERR_ARGUMENT")

    def test_guard(self):
        msgs = [{"role": "user", "content": "a </think> b"}]
        dsml.encode_messages(msgs, "chat")
        with self.assertRaises(dsml.DsmlError):
            dsml.encode_messages(msgs, "chat", guard=True)

    def test_python_failures_become_dsml_errors(self):
        for msgs in ([{"role": "user", "content": object()}],
                     [{"role": "user", "content": "\ud800"}],
                     [{"role": "user", "content": float("nan")}]):
            with self.assertRaises(dsml.DsmlError, msg=repr(msgs)):
                dsml.encode_messages(msgs, "chat")
        loop = []
        loop.append(loop)
        with self.assertRaises(dsml.DsmlError):
            dsml.encode_messages(loop, "chat")

    def test_infinities(self):
        calls = [{"type": "function", "function": {
            "name": "f", "arguments": {"a": float("inf"), "b": [float("-inf"), "Infinity"]}}}]
        prompt = dsml.encode_messages([{"role": "assistant", "content": "",
                                        "tool_calls": calls}], "chat")
        self.assertIn('name="a" string="false">Infinity<', prompt)
        self.assertIn('name="b" string="false">[-Infinity, "Infinity"]<', prompt)
        with self.assertRaises(dsml.DsmlError):
            dsml.encode_messages([{"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "f",
                                                  "arguments": {"a": float("nan")}}}]}],
                "chat")

    def test_argument_keys_as_the_reference_writes_them(self):
        # encode_arguments_to_dsml in the reference encoding.py formats each
        # key into name="{key}" with str.format: None -> "None", True -> "True"
        args = {None: 1, True: "x", 1.5: [None], 2: {None: 0}, "s": "t"}
        calls = [{"type": "function", "function": {"name": "f", "arguments": args}}]
        msgs = [{"role": "assistant", "content": "", "tool_calls": calls}]
        prompt = dsml.encode_messages(msgs, "chat")
        for piece in ('name="None" string="false">1<', 'name="True" string="true">x<',
                      'name="1.5" string="false">[null]<',
                      # a value is JSON: its own keys are json.dumps keys
                      'name="2" string="false">{"null": 0}<', 'name="s" string="true">t<'):
            self.assertIn(piece, prompt)
        self.assertEqual(list(args), [None, True, 1.5, 2, "s"])  # left alone
        case = {"messages": msgs, "context": [{"role": "user", "content": "q"}] + msgs}
        self.assertIn('name="None"', dsml.render_case(case))
        self.assertIn('name="None"', dsml.render_request({"messages": msgs}))
        # two keys written alike cannot both reach the library as JSON
        calls[0]["function"]["arguments"] = {None: 1, "None": 2}
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.encode_messages(msgs, "chat")
        self.assertEqual(cm.exception.name, "DSML_ERR_TOOL_ARGUMENTS")
        self.assertEqual(cm.exception.path, "$.messages[0].tool_calls[0].function.arguments")

    def test_effort_str_subclass(self):
        # the reference checks `effort in {"low": 50, "high": 75, "max": 100}`
        # and converts only `type(effort) is str`: a subclass is written into
        # the effort line as itself ("Reasoning Effort: max")
        class Effort(str):
            pass

        class Alias(str):  # its own lookup decides
            def __hash__(self):
                return hash("max")

            def __eq__(self, other):
                return other == "max"

        class Shown(str):
            def __format__(self, spec):
                return "shown"

        def line(e, **kw):
            return dsml.encode_messages(USER, "thinking", reasoning_effort=e, **kw)
        tail = " (range 1-100, the higher the value, the more thorough the reasoning)\n\n"
        self.assertEqual(line(Effort("max")),
                         BOS + "<｜System｜>Reasoning Effort: max" + tail
                         + "<｜User｜>hi<｜Assistant｜><think>")
        self.assertTrue(line(Effort("low"), add_default_bos_token=False).startswith(
            "<｜System｜>Reasoning Effort: low" + tail))
        self.assertIn("Reasoning Effort: maximum" + tail, line(Alias("maximum")))
        self.assertIn("Reasoning Effort: shown" + tail, line(Shown("high")))
        prompt, media = line(Effort("high"), return_multi_modal_data=True)
        self.assertIn("Reasoning Effort: high" + tail, prompt)
        # no line in chat mode, nor with a context (index 0 is not rendered)
        self.assertEqual(dsml.encode_messages(USER, "chat", reasoning_effort=Effort("max")),
                         BOS + "<｜User｜>hi<｜Assistant｜></think>")
        self.assertNotIn("Reasoning Effort", line(Effort("max"), context=USER))
        # refused as the reference refuses it, when a message is rendered
        for bad in (Effort("medium"), Effort("xhigh"), Shown("medium")):
            for mode in ("thinking", "chat"):
                with self.assertRaises(dsml.DsmlError, msg=repr(bad)) as cm:
                    dsml.encode_messages(USER, mode, reasoning_effort=bad)
                self.assertEqual(cm.exception.name, "DSML_ERR_EFFORT")
        self.assertEqual(dsml.encode_messages([], "thinking", reasoning_effort=Effort("x")), BOS)

    def test_no_string_is_taken_for_an_infinity(self):
        # infinite floats become out-of-range numbers; a string, whatever it
        # holds, stays a string (here one the library then refuses)
        for marker in ("\x00dsml+inf\x00", "\x00dsml-inf\x00"):
            msgs = [{"role": "assistant", "content": "", "tool_calls": [{
                "type": "function", "function": {"name": "f", "arguments": {
                    "a": float("inf"), "b": marker}}}]}]
            with self.assertRaises(dsml.DsmlError) as cm:
                dsml.encode_messages(msgs, "chat")
            self.assertEqual(cm.exception.name, "DSML_ERR_NUL_ESCAPE")
        text = 'Infinity "-Infinity" \\"NaN\\'
        msgs = [{"role": "system", "content": text, "tools": [{"type": "function", "function": {
            "name": "f", "parameters": {"max": float("inf"), "s": text}}}]}]
        prompt = dsml.encode_messages(msgs, "chat")
        self.assertIn('"max": Infinity, "s": %s' % json.dumps(text, ensure_ascii=False), prompt)
        self.assertIn("<｜System｜>" + text + "\n\n", prompt)

    def test_number_texts(self):
        tools = [{"type": "function", "function": {
            "name": "f", "parameters": {"a": 1.0, "b": 1e-07, "c": 2 ** 70, "d": 1e16}}}]
        msgs = [{"role": "system", "content": "", "tools": tools}]
        prompt = dsml.encode_messages(msgs, "chat")
        self.assertIn('{"a": 1.0, "b": 1e-07, "c": 1180591620717411303424, "d": 1e+16}',
                      prompt)
        case = '{"messages": [{"role": "system", "content": "", "tools": [{"type": ' \
               '"function", "function": {"name": "f", "parameters": {"x": 1E2}}}]}]}'
        self.assertIn('{"x": 100.0}', dsml.render_case(case))

    def test_render_case_forms(self):
        case = {"messages": USER, "thinking_mode": "thinking", "reasoning_effort": "low"}
        want = dsml.encode_messages(USER, "thinking", reasoning_effort="low")
        self.assertEqual(dsml.render_case(case), want)
        self.assertEqual(dsml.render_case(json.dumps(case)), want)
        self.assertEqual(dsml.render_case(json.dumps(case).encode()), want)

    def test_render_request(self):
        body = {"messages": USER, "chat_template_kwargs": {"thinking": True},
                "reasoning_effort": "max",
                "tools": [{"type": "function", "function": {"name": "f"}}]}
        got = dsml.render_request(body)
        self.assertTrue(got.startswith(BOS + "<｜System｜>Reasoning Effort: 100 "))
        self.assertIn('{"name": "f"}', got)
        self.assertEqual(dsml.render_request(json.dumps(body)), got)
        self.assertEqual(dsml.render_request(json.dumps(body).encode()), got)
        self.assertTrue(dsml.render_request({"messages": USER}, thinking_mode="thinking")
                        .endswith("<think>"))
        with self.assertRaises(dsml.DsmlError):
            dsml.render_request({"messages": USER}, thinking_mode="x")
        with self.assertRaises(dsml.DsmlError):
            dsml.render_request(b"{not json")
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.render_request({"messages": USER, "thinking_mode": "fast"})
        self.assertEqual(cm.exception.name, "DSML_ERR_THINKING_MODE")

    def test_pickle_error(self):
        import pickle
        e = dsml.DsmlError(-3, "bad", 4, "$.x")
        f = pickle.loads(pickle.dumps(e))
        self.assertEqual((f.code, f.name, f.message, f.offset, f.path),
                         (-3, "DSML_ERR_JSON", "bad", 4, "$.x"))


CALL = ('\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="ns::get">\n'
        '<｜DSML｜ parameter name="city" string="true">東京</｜DSML｜ parameter>\n'
        '<｜DSML｜ parameter name="n" string="false">1.0</｜DSML｜ parameter>\n'
        '</｜DSML｜ invoke>\n</｜DSML｜ calls>' + EOS)


class Parse(unittest.TestCase):

    def test_parse(self):
        m = dsml.parse_message_from_completion_text("why</think>hello" + CALL, "thinking")
        self.assertEqual(m["reasoning_content"], "why")
        self.assertEqual(m["content"], "hello")
        self.assertEqual(m["tool_calls"], [{
            "type": "function", "namespace": "ns",
            "function": {"name": "get", "arguments": '{"city": "東京", "n": 1.0}'}}])
        # any mode other than "thinking" parses a chat completion
        self.assertEqual(dsml.parse_message_from_completion_text("a" + EOS, None)["content"],
                         "a")

    def test_parse_errors(self):
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.parse_message_from_completion_text("no end", "chat")
        self.assertEqual(cm.exception.name, "DSML_ERR_MISSING_EOS")
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.parse_message_from_completion_text("x" + EOS, "thinking")
        self.assertEqual(cm.exception.name, "DSML_ERR_MISSING_THINK_END")
        with self.assertRaises(dsml.DsmlError):
            dsml.parse_message_from_completion_text(b"\xff" + EOS.encode(), "chat")

    def test_lenient_parse(self):
        m = dsml.parse_completion("no end", "chat", strict=False)
        self.assertEqual(m["content"], "no end")


class Streaming(unittest.TestCase):

    TEXT = "why 🚀</think>hello 東京" + CALL

    @staticmethod
    def merged(events):
        out = []
        for e in events:
            if out and e.kind in ("reasoning", "content", "arguments") \
                    and out[-1].kind == e.kind and out[-1].index == e.index:
                out[-1] = out[-1]._replace(text=out[-1].text + e.text)
            else:
                out.append(e)
        return out

    def run_chunks(self, data, size, **kw):
        det = dsml.Detector("thinking", **kw)
        events = []
        for i in range(0, len(data), size):
            events += det.feed(data[i:i + size])
        events += det.finish()
        return events, det.message()

    def test_split_anywhere(self):
        data = self.TEXT.encode()
        whole, message = self.run_chunks(data, len(data))
        self.assertEqual(message, dsml.parse_message_from_completion_text(self.TEXT, "thinking"))
        for size in (1, 2, 3, 7):
            events, m = self.run_chunks(data, size)
            self.assertEqual(self.merged(events), self.merged(whole), size)
            self.assertEqual(m, message)
        events, _ = self.run_chunks(self.TEXT, 5)       # str chunks too
        self.assertEqual(self.merged(events), self.merged(whole))

    def test_events(self):
        events, message = self.run_chunks(self.TEXT.encode(), 4)
        kinds = [e.kind for e in self.merged(events)]
        self.assertEqual(kinds, ["reasoning", "content", "call_begin", "arguments",
                                 "call_end"])
        begin = [e for e in events if e.kind == "call_begin"][0]
        self.assertEqual((begin.index, begin.name, begin.namespace), (0, "get", "ns"))
        end = [e for e in events if e.kind == "call_end"][0]
        self.assertTrue(end.complete)
        args = "".join(e.text for e in events if e.kind == "arguments")
        self.assertEqual(args, message["tool_calls"][0]["function"]["arguments"])

    def test_strict_error_keeps_events(self):
        det = dsml.Detector("chat", strict=True)
        events = det.feed("hello")
        with self.assertRaises(dsml.DsmlError) as cm:
            events += det.finish()
        self.assertEqual(cm.exception.name, "DSML_ERR_MISSING_EOS")
        got = "".join(e.text for e in events + cm.exception.events if e.kind == "content")
        self.assertEqual(got, "hello")
        self.assertIsNotNone(det.error)
        det.reset()
        self.assertIsNone(det.error)

    def test_tool_choice_and_parallel_calls(self):
        # options 9 and 10: a call not allowed is parsed and reported
        # (call_begin and call_end code 2), and left out of the message
        two = CALL.replace("<\uff5cend\u2581of\u2581sentence\uff5c>", "")
        for choice, parallel, allowed in (("none", True, []), ("required", True, [True, True]),
                                          ("auto", False, [True, False]),
                                          ({"type": "function", "function": {"name": "ns::get"}},
                                           True, [True, True])):
            det = dsml.Detector("chat", tool_choice=choice, parallel_tool_calls=parallel)
            events = det.feed(two + two[two.index("\n\n<"):]) + det.finish()
            begins = [e.code is None for e in events if e.kind == "call_begin"]
            ends = [e.code for e in events if e.kind == "call_end"]
            self.assertEqual(len(begins), 2, choice)
            if not allowed:
                allowed = [False, False]
            self.assertEqual(begins, allowed, (choice, parallel))
            self.assertEqual(ends, [0 if a else 2 for a in allowed], (choice, parallel))
            self.assertEqual(len(det.message()["tool_calls"]), allowed.count(True))
        for bad in ({"type": "function"}, "some", 3):
            with self.assertRaises(dsml.DsmlError):
                dsml.Detector("chat", tool_choice=bad)
        with self.assertRaises(dsml.DsmlError):
            dsml.Detector("chat", parallel_tool_calls=None)

    def test_lenient_cut_call(self):
        det = dsml.Detector("chat")
        events = det.feed(CALL[:120]) + det.finish()
        ends = [e for e in events if e.kind == "call_end"]
        self.assertTrue(ends and not ends[-1].complete)

    def test_policies_and_options(self):
        with self.assertRaises(dsml.DsmlError):
            dsml.Detector("chat", markers="sometimes")
        with self.assertRaises(TypeError):
            dsml.Detector("chat", no_such_policy=1)
        with self.assertRaises(dsml.DsmlError):
            dsml.Detector("fast")
        det = dsml.Detector("chat", markers="variants", trim="whitespace",
                            tools=[{"type": "function", "function": {"name": "get"}}],
                            tool_names="declared", limits={"max_held_bytes": 4096})
        det.close()
        with self.assertRaises(dsml.DsmlError):
            det.feed("x")
        with dsml.Detector("chat", keep_message=False) as d:
            d.feed("a" + EOS)
            d.finish()
            with self.assertRaises(dsml.DsmlError) as cm:
                d.message()
            self.assertEqual(cm.exception.name, "DSML_ERR_STATE")


class PythonOnlyValues(unittest.TestCase):
    """Values the reference prints with str() that JSON cannot carry: refused,
    never rendered otherwise (issue 26); on the compiled path and ctypes."""

    BASE = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "f", "arguments": "{}"}}]}]

    def test_tuple_content_is_refused(self):
        for content in [("a", 1), {"k": (1, 2)}, [{"type": "text", "text": ("a",)}]]:
            with self.assertRaises(dsml.DsmlError) as cm:
                dsml.encode_messages(self.BASE + [{"role": "tool", "content": content}], "chat")
            self.assertEqual(cm.exception.name, "DSML_ERR_TYPE")
            self.assertIn("$.messages[2].content", str(cm.exception))

    def test_non_string_keys_are_refused(self):
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.encode_messages(self.BASE + [{"role": "tool", "content": {1: "x", None: 2}}],
                                 "chat")
        self.assertIn("$.messages[2].content", str(cm.exception))
        with self.assertRaises(dsml.DsmlError):
            dsml.render_request({"messages": self.BASE + [
                {"role": "tool", "content": {1: "x"}}]})

    def test_json_content_still_renders(self):
        prompt = dsml.encode_messages(self.BASE + [{"role": "tool", "content": {"a": [1]}}],
                                      "chat")
        self.assertIn("<tool_result>{'a': [1]}</tool_result>", prompt)

    def test_feed_none_raises(self):
        with dsml.Detector() as det:
            with self.assertRaises(dsml.DsmlError):
                det.feed(None)


if __name__ == "__main__":
    unittest.main()
