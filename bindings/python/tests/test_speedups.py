"""The compiled fast path (dsml._speedups) against the ctypes path: the same
prompt, or the same refusal (code, message, offset), for values whose JSON
text needs care (float and integer lexemes, tuples, every width of str,
keys that are not str, NaN and infinities, subclasses, deep nesting, NUL
and lone surrogates), with and without images; and Detector events alike.
Skipped when the fast path is not loaded (DSML_SPEEDUPS=off, or not built).
"""

import enum
import threading
import unittest

import _support  # noqa: F401  (loads the library)
import dsml
from dsml import _fast
from dsml import parse as P
from dsml import render as R
from dsml import turn as T


class Tag(enum.IntEnum):
    ONE = 1


class Text(str):
    pass


def call(args):
    return [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "a", "type": "function",
                 "function": {"name": "f", "arguments": args}}]},
            {"role": "tool", "tool_call_id": "a", "content": "done"}]


CASES = [
    [{"role": "user", "content": "plain"}],
    [{"role": "user", "content": "é 東京 👍🏽 \x7f \t\n\"\\ <｜x"}],
    [{"role": "system", "content": "s", "tools": [{"type": "function", "function": {
        "name": "f", "description": "d", "parameters": {
            "type": "object", "properties": {"x": {"type": "number", "default": 1.0}}}}}]},
     {"role": "user", "content": "q"}],
    call({"a": 1.0, "b": 1e-07, "c": 1e22, "d": -0.0, "e": 2 ** 70, "f": 10 ** 62,
          "g": True, "h": None, "i": [1, (2, 3)], "j": {"k": "v"}}),
    call({"big": 10 ** 63}),
    call({"z": 0, "n": -1, "lo": -2 ** 63, "hi": 2 ** 63 - 1, "past": 2 ** 63, "m": -1234567890}),
    call({"inf": float("inf")}),
    call({"nan": float("nan")}),
    call({None: 1, True: 2}),
    call({"enum": Tag.ONE, "sub": Text("t")}),
    call("{\"x\": 1.50}"),
    [{"role": "user", "content": "nul \x00 inside"}],
    [{"role": "user", "content": "lone \ud800 surrogate"}],
    [{"role": "user", "content": [{"type": "text", "text": "a"},
                                  {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}],
    [{"role": "user", "content": "deep", "x": [[[[[[[[[[[]]]]]]]]]]]}],
    [{"role": "user", "content": "deeper", "x": "nested below"}],
    [{"role": "assistant", "content": "no user"}],
    [{"role": "wizard", "content": "bad role"}],
    ({"role": "user", "content": "a tuple of messages"},),
]


def nested(depth):
    v = []
    for _ in range(depth):
        v = [v]
    return v


CASES[-4][0]["x"] = nested(600)


def outcome(fn):
    try:
        return ("ok", fn())
    except dsml.DsmlError as exc:
        return ("error", exc.code, exc.message, exc.offset, exc.path)
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        return ("raised", type(exc).__name__, str(exc))


@unittest.skipIf(_fast.speedups is None, "the compiled fast path is not loaded (%s)"
                 % _fast.origin)
class FastPath(unittest.TestCase):

    def both(self, *args, **kw):
        fast = outcome(lambda: dsml.encode_messages(*args, **kw))
        saved = R._fast_render
        R._fast_render = None
        try:
            slow = outcome(lambda: dsml.encode_messages(*args, **kw))
        finally:
            R._fast_render = saved
        self.assertEqual(fast, slow, args)
        return fast

    def test_values(self):
        for messages in CASES:
            for mode in ("chat", "thinking", "bogus"):
                for effort in (None, "max", 30, Text("max"), 1.5):
                    self.both(messages, mode, reasoning_effort=effort)
            self.both(messages, "thinking", return_multi_modal_data=True)
            self.both(messages, "chat", guard=True)
            self.both(messages, "chat", context=[{"role": "user", "content": "c 1.0"}])

    def fast(self, messages, context=None):
        R._options(dsml._native.CHAT, "v41", 0)
        return R._fast_encode(messages, dsml._native.CHAT, "chat", context, None, "v41",
                              R._address_cache[(dsml._native.CHAT, "v41", 0)], False)

    def test_fast_path_taken(self):
        # a plain conversation is rendered without JSON text
        self.assertIsNotNone(self.fast(CASES[0]))

    def test_python_only_content_left_to_the_text_path(self):
        # the compiled path renders no content the reference would print
        # with str() (a tuple inside a message's content): the JSON text
        # path refuses it, naming the place
        base = [{"role": "user", "content": "q"}]
        for content in [("a", 1), {"k": (1, 2)}, [{"type": "text", "text": ("a",)}]]:
            self.assertIsNone(self.fast(base + [{"role": "tool", "content": content}]))
            self.assertIsNone(self.fast(base, context=[{"role": "user", "content": content}]))
        # tuples elsewhere are JSON arrays, as json.dumps writes them
        self.assertIsNotNone(self.fast(base + [{"role": "user", "content": [
            {"type": "text", "text": "t"}]}, {"role": "assistant", "content": "a",
                                              "tool_calls": ({"type": "function", "function": {
                                                  "name": "f", "arguments": {"x": (1, 2)}}},)}]))

    def test_parse(self):
        # parse_message_from_completion_text: the compiled path gives the
        # ctypes path's dict (its keys in the same order) or leaves the
        # refusal to it, on every golden completion of each profile
        files = {"parse.jsonl": "v41", "prerelease-parse.jsonl": "prerelease",
                 "v4-parse.jsonl": "v4", "v32-parse.jsonl": "v32"}
        taken = 0
        for name, profile in files.items():
            for case in _support.golden_lines(name):
                for text in (case["text"], case["text"].encode("utf-8")):
                    mode = case.get("thinking_mode")
                    handle = P._parse_detector(
                        dsml._native.THINKING if mode == "thinking" else dsml._native.CHAT,
                        profile)
                    direct = P._fast_parse(handle, text)
                    fast = outcome(lambda: dsml.parse_message_from_completion_text(
                        text, mode, profile=profile))
                    saved = P._fast_parse
                    P._fast_parse = None
                    try:
                        slow = outcome(lambda: dsml.parse_message_from_completion_text(
                            text, mode, profile=profile))
                    finally:
                        P._fast_parse = saved
                    self.assertEqual(fast, slow, (name, case.get("id")))
                    if fast[0] == "ok":
                        self.assertEqual(list(fast[1]), list(slow[1]))
                        self.assertEqual(direct, fast[1], (name, case.get("id")))
                        taken += 1
                    else:
                        self.assertIsNone(direct, (name, case.get("id")))
        self.assertGreater(taken, 1000)
        # not str or bytes: the ctypes path's refusal
        self.assertIsNone(P._fast_parse(P._parse_detector(dsml._native.CHAT, "v41"), 12))
        # refusals of the arguments, in the ctypes path's order
        for text, profile in ((12, "nope"), ("a", "nope"), ("a", ["v41"]), (12, "v41"),
                              ("lone \ud800<｜end▁of▁sentence｜>", "v41")):
            fast = outcome(lambda: dsml.parse_message_from_completion_text(
                text, "chat", profile=profile))
            saved = P._fast_parse
            P._fast_parse = None
            try:
                slow = outcome(lambda: dsml.parse_message_from_completion_text(
                    text, "chat", profile=profile))
            finally:
                P._fast_parse = saved
            self.assertEqual(fast, slow, (text, profile))
            self.assertNotEqual(fast[0], "ok")

    def test_detector_events(self):
        text = ("why</think>ok\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"f\">\n"
                "<｜DSML｜ parameter name=\"q\" string=\"true\">x\"y</｜DSML｜ parameter>\n"
                "</｜DSML｜ invoke>\n</｜DSML｜ calls><｜end▁of▁sentence｜>tail")
        runs = []
        for fast in (True, False):
            saved = P._speedups
            if not fast:
                P._speedups = None
            try:
                det = dsml.Detector("thinking")
                events = []
                for i in range(0, len(text), 3):
                    events += det.feed(text[i:i + 3])
                events += det.finish()
                runs.append((events, det.message()))
                with self.assertRaises(dsml.DsmlError) as cm:
                    det.feed("more")
                self.assertEqual(cm.exception.name, "DSML_ERR_STATE")
                bad = dsml.Detector("chat")
                with self.assertRaises(dsml.DsmlError) as cm:
                    bad.feed(b"ok\xff")
                runs.append((cm.exception.code, cm.exception.events))
            finally:
                P._speedups = saved
        self.assertEqual(runs[0], runs[2])
        self.assertEqual(runs[1], runs[3])

    def test_responder(self):
        # Responder.feed / end in one compiled call, items as ctypes gives them
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
                "chat_template_kwargs": {"thinking": True}, "stream": True}
        text = ("why</think>ok\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"f\">\n"
                "<｜DSML｜ parameter name=\"q\" string=\"false\">x</｜DSML｜ parameter>\n"
                "</｜DSML｜ invoke>\n</｜DSML｜ calls>")
        self.assertIsNotNone(T._respond)
        runs = []
        for fast in (True, False):
            saved = T._respond
            if not fast:
                T._respond = None
            try:
                for sse in (False, True):
                    responder = dsml.Turn(body).responder(sse=sse, id="c", created=1, seed="s")
                    out = []
                    for i in range(0, len(text), 4):
                        out += responder.feed(text[i:i + 4])
                    out += responder.end("stop")
                    runs.append((out, responder.diagnostics, responder.completion()))
                    with self.assertRaises(dsml.DsmlError) as cm:
                        responder.feed("more")
                    runs.append(cm.exception.name)
                strict = dsml.Turn(body, mode="strict").responder(id="c", created=1, seed="s")
                with self.assertRaises(dsml.DsmlError) as cm:
                    strict.feed(b"a</think>b\xff")
                runs.append((cm.exception.name, cm.exception.chunks))
            finally:
                T._respond = saved
        self.assertEqual(runs[:5], runs[5:])


def large(text, turns=3):
    """A conversation whose prompt is over 1 MiB of UTF-8, made of text."""
    reps = (1 << 20) // (len(text.encode("utf-8")) * turns) + 1
    messages = []
    for i in range(turns):
        messages.append({"role": "user", "content": "%d %s" % (i, text * reps)})
        messages.append({"role": "assistant", "content": text * (reps // 4) + " ok",
                         "reasoning_content": "r"})
    messages.append({"role": "user", "content": "last"})
    return messages


@unittest.skipIf(_fast.speedups is None, "the compiled fast path is not loaded (%s)"
                 % _fast.origin)
class LargePrompts(unittest.TestCase):
    """Prompts of 1 MiB and more: the str made in huge pages (a thread's
    first, with room cut afterwards) and as it is (the thread's later ones),
    in each width of str, against the ctypes path."""

    def both(self, messages):
        """The prompt through the fast path and through the ctypes path,
        compared without printing megabytes when they differ."""
        fast = outcome(lambda: dsml.encode_messages(messages, "thinking"))
        saved = R._fast_render
        R._fast_render = None
        try:
            slow = outcome(lambda: dsml.encode_messages(messages, "thinking"))
        finally:
            R._fast_render = saved
        if fast != slow:
            at = next((i for i, (a, b) in enumerate(zip(str(fast), str(slow))) if a != b), None)
            self.fail("fast path %s, text path %s, first difference at %s: %r / %r" % (
                fast[0], slow[0], at, str(fast)[at:at + 40] if at is not None else "",
                str(slow)[at:at + 40] if at is not None else ""))
        return fast

    TEXTS = ["plain ascii text, ", "latin é à ÿ, ", "east 東京 ｜ mixed a, ",
             "wide 👍🏽 and 𝄞, ", "👍", "é", "東", "a" * 15 + "é"]

    def test_each_width_first_and_later(self):
        for text in self.TEXTS:
            messages = large(text)
            got = []

            def run():
                try:
                    for _ in range(2):  # the thread's first large str, then a later one
                        got.append(self.both(messages))
                except BaseException as exc:  # noqa: BLE001 - reported below
                    got.append(("raised", repr(exc)))

            worker = threading.Thread(target=run)
            worker.start()
            worker.join()
            self.assertEqual(len(got), 2, (text, got[-1:]))
            self.assertEqual(got[0][0], "ok", (text, got[0][:3]))
            self.assertTrue(got[0] == got[1], text)
            prompt = got[0][1]
            self.assertGreater(len(prompt.encode("utf-8")), 1 << 20)
            self.assertEqual(prompt, prompt.encode("utf-8").decode("utf-8"))
            self.assertEqual(max(map(ord, prompt)), max(map(ord, "".join(
                [m["content"] for m in messages] + ["｜"]))), text)

    def test_refusals_as_the_text_path(self):
        # a NUL or a lone surrogate deep in a large conversation
        for bad in ("\x00", "\ud800"):
            messages = large("some text é, ")
            messages[2]["content"] += bad
            result = self.both(messages)
            self.assertEqual(result[0], "error", bad)


if __name__ == "__main__":
    unittest.main()
