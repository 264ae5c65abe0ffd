"""dsml.Turn and its Responder (dsml_turn_*, dsml_responder_*) against the
library's other results on the golden corpora: the turn's prompt is
render_request's, and a strict responder's completion is the golden parse
message, its chunks adding up to it."""

import json
import os
import random
import subprocess
import tempfile
import unittest

import _support
import dsml

USER = [{"role": "user", "content": "q"}]


def body_of(case):
    body = {"messages": case["messages"], "thinking_mode": case.get("thinking_mode") or "chat"}
    for key in ("tools", "reasoning_effort"):
        if key in case:
            body[key] = case[key]
    return body


def outcome(fn):
    try:
        return "ok", fn()
    except dsml.DsmlError as e:
        return "error", (e.name, e.path)


def chunks(text, rng):
    at = 0
    while at < len(text):
        n = rng.randint(1, 12)
        yield text[at:at + n]
        at += n


def assembled(chunks_):
    """The message the deltas of a stream add up to, and the finish reason."""
    msg = {"content": "", "reasoning_content": "", "tool_calls": {}}
    finish = None
    for chunk in chunks_:
        choice = chunk["choices"][0]
        delta = choice["delta"]
        finish = choice["finish_reason"] or finish
        msg["content"] += delta.get("content") or ""
        msg["reasoning_content"] += delta.get("reasoning_content") or ""
        for call in delta.get("tool_calls", ()):
            entry = msg["tool_calls"].setdefault(call["index"], {"name": "", "arguments": ""})
            entry["name"] += call["function"].get("name") or ""
            entry["arguments"] += call["function"].get("arguments") or ""
    msg["tool_calls"] = [msg["tool_calls"][i] for i in sorted(msg["tool_calls"])]
    return msg, finish


class TurnOnGoldenRender(unittest.TestCase):

    def test_prompt_is_render_request(self):
        cases = same = 0
        for line in _support.golden_lines("render.jsonl"):
            case = json.loads(line["case"])
            if "context" in case or "drop_thinking" in case or \
                    "add_default_bos_token" in case:
                continue
            cases += 1
            body = body_of(case)
            want = outcome(lambda: dsml.render_request(json.dumps(body)))
            got = outcome(lambda: dsml.Turn(json.dumps(body)).prompt)
            self.assertEqual(got, want, line["id"])
            same += 1
        print("render.jsonl: Turn.prompt == render_request on %d/%d cases" % (same, cases))
        self.assertGreater(cases, 500)

    def test_decisions(self):
        body = {"model": "m", "messages": USER, "temperature": 0.5,
                "chat_template_kwargs": {"thinking": True}, "reasoning_effort": "max",
                "tools": [{"type": "function", "function": {"name": "f", "parameters": {
                    "type": "object", "properties": {"a": {"type": "string"}}}}}],
                "tool_choice": {"type": "function", "function": {"name": "f"}},
                "parallel_tool_calls": False}
        turn = dsml.Turn(body, grammar="gbnf")
        self.assertEqual((turn.thinking_mode, turn.thinking_from, turn.starts_in_reasoning),
                         ("thinking", "$.chat_template_kwargs.thinking", True))
        self.assertEqual(turn.tool_choice, {"type": "function", "function": {"name": "f"}})
        self.assertEqual((turn.parallel_tool_calls, turn.model, turn.ignored),
                         (False, "m", ["$.temperature"]))
        self.assertEqual(turn.tools[0]["function"]["name"], "f")
        self.assertTrue(turn.prompt.endswith("<think>"))
        self.assertEqual(turn.grammar_from, "$.tool_choice")
        self.assertIn('name=\\"f\\"', turn.grammar)
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.Turn({"messages": USER, "tool_choice": "required"})
        self.assertEqual(cm.exception.path, "$.tool_choice")


class ResponderOnGoldenParse(unittest.TestCase):

    def test_completion_is_the_golden_message(self):
        rng = random.Random(26)
        turns = {mode: dsml.Turn({"messages": USER, "thinking_mode": mode}, mode="strict")
                 for mode in ("chat", "thinking")}
        cases = passed = 0
        for line in _support.golden_lines("parse.jsonl"):
            expect = line["expect"].get("message")
            if expect is None:
                continue
            cases += 1
            responder = turns[line["thinking_mode"]].responder(hold_calls=True)
            streamed = []
            for piece in chunks(line["text"], rng):
                streamed += responder.feed(piece)
            streamed += responder.end("text")
            message = responder.completion()["choices"][0]["message"]
            calls = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                     for c in message.get("tool_calls", ())]
            want_calls = [{"name": c["function"]["name"],
                           "arguments": c["function"]["arguments"]}
                          for c in expect["tool_calls"]]
            got = (message["content"] or "", message.get("reasoning_content", ""), calls)
            self.assertEqual(got, (expect["content"], expect["reasoning_content"], want_calls),
                             line["id"])
            total, finish = assembled(streamed)
            self.assertEqual((total["content"], total["reasoning_content"],
                              total["tool_calls"]), got, line["id"])
            self.assertEqual(finish, "tool_calls" if calls else "stop", line["id"])
            passed += 1
        print("parse.jsonl: responder == golden message on %d/%d cases" % (passed, cases))
        self.assertGreater(cases, 300)

    def test_sse_and_errors(self):
        turn = dsml.Turn({"messages": USER})
        responder = turn.responder(sse=True, id="chatcmpl-x", created=7, seed=b"s")
        events = responder.feed("Hi") + responder.end("length")
        self.assertTrue(all(e.startswith(b"data: ") and e.endswith(b"\n\n") for e in events))
        self.assertEqual(events[-1], b"data: [DONE]\n\n")
        self.assertEqual(json.loads(events[-2][6:])["choices"][0]["finish_reason"], "length")
        self.assertEqual(json.loads(events[0][6:])["id"], "chatcmpl-x")
        with self.assertRaises(dsml.DsmlError):
            responder.feed("more")            # after end
        with self.assertRaises(dsml.DsmlError):
            turn.responder().feed(None)
        # chat mode (a V4.1 body with no switch is thinking mode)
        strict = dsml.Turn({"messages": USER, "thinking": {"type": "disabled"}},
                           mode="strict").responder()
        with self.assertRaises(dsml.DsmlError):
            strict.feed("a</think>b")
            strict.end("stop")


RENDER = os.environ.get("DSML_RENDER")  # dsml-render of this build (tests/CMakeLists.txt)


APIS = ("chat", "anthropic", "responses")


def api_body(api, thinking):
    """A request of each API, thinking on or off."""
    if api == "anthropic":
        return {"model": "m", "max_tokens": 64, "system": "S",
                "messages": [{"role": "user", "content": "q"}],
                "thinking": {"type": "enabled" if thinking else "disabled"}}
    if api == "responses":
        return {"model": "m", "instructions": "S", "input": "q",
                "reasoning": {"effort": "high" if thinking else "none"}}
    return {"model": "m", "messages": USER,
            "thinking": {"type": "enabled" if thinking else "disabled"}}


@unittest.skipUnless(RENDER, "DSML_RENDER (dsml-render) not given")
class TurnApisAgainstTheCli(unittest.TestCase):
    """Turn(body, api=...) and its responder against `dsml-render respond
    --api ...` on completions of the golden parse corpus: the same
    response object, and the same server-sent events byte for byte when
    the completion comes in pieces of the same size."""

    def cli(self, api, body, text, *extra):
        with tempfile.TemporaryDirectory() as tmp:
            req, comp = os.path.join(tmp, "req.json"), os.path.join(tmp, "comp.txt")
            with open(req, "w", encoding="utf-8") as f:
                json.dump(body, f)
            with open(comp, "wb") as f:
                f.write(text)
            run = subprocess.run([RENDER, "respond", "--api", api, "--id", "x1", "--created",
                                  "7", "--seed", "s", *extra, req, comp],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertEqual(run.returncode, 0, run.stderr)
            return run.stdout

    def test_objects_and_events(self):
        lines = [line for line in _support.golden_lines("parse.jsonl")
                 if line["expect"].get("message") is not None]
        picked = lines[::max(1, len(lines) // 12)]
        seen = set()
        for line in picked:
            thinking = line["thinking_mode"] == "thinking"
            text = line["text"].encode("utf-8")
            for api in ("chat", "anthropic", "responses"):
                body = api_body(api, thinking)
                turn = dsml.Turn(body, api=api)
                self.assertEqual((turn.api, turn.thinking_mode),
                                 (api, line["thinking_mode"]), line["id"])
                responder = turn.responder(id="x1", created=7, seed=b"s")
                events = responder.feed(text) + responder.end("stop")
                want = json.loads(self.cli(api, body, text))
                self.assertEqual(responder.completion(), want, (api, line["id"]))
                if api != "chat":
                    self.assertTrue(events and all("type" in e for e in events), api)
                    seen.add(events[-1]["type"])
                sse = turn.responder(sse=True, id="x1", created=7, seed=b"s")
                streamed = b"".join(
                    b"".join(sse.feed(text[at:at + 5])) for at in range(0, len(text), 5))
                streamed += b"".join(sse.end("stop"))
                self.assertEqual(streamed, self.cli(api, body, text, "--stream", "5"),
                                 (api, line["id"]))
        self.assertEqual(seen, {"message_stop", "response.completed"})

    def test_responder_options(self):
        """Each responder option as the CLI's flag gives it, and each
        changes what is written (so the comparison can fail)."""
        closer = "parameter>"
        line = next(l for l in _support.golden_lines("parse.jsonl")
                    if l["thinking_mode"] == "thinking" and l["expect"].get("message")
                    and l["expect"]["message"].get("tool_calls")
                    and l["expect"]["message"].get("reasoning_content") and closer in l["text"])
        text = line["text"].encode("utf-8")
        cut = text[:text.index(closer.encode("utf-8"))]   # inside the first value's closer
        cases = [({"signature": "sig-1"}, ["--signature", "sig-1"], text, "stop", ("anthropic",)),
                 ({"choice_index": 2}, ["--choice-index", "2"], text, "stop", ("chat",)),
                 ({"stream_arguments": True}, ["--stream-arguments"], text, "stop", APIS),
                 ({"keep_raw": True}, ["--keep-raw"], cut, "length", APIS),
                 ({"usage": (3, 5, 1)}, ["--usage", "3,5,1"], text, "stop", APIS)]
        for options, flags, completion, reason, apis in cases:
            for api in apis:
                body = dict(api_body(api, True), stream=True)
                if api == "chat":
                    body["stream_options"] = {"include_usage": True}
                opts = dict(options)
                usage = opts.pop("usage", None)

                def streamed(**more):
                    r = dsml.Turn(body, api=api).responder(sse=True, id="x1", created=7,
                                                           seed=b"s", **more)
                    if usage:                   # as the CLI gives it: the prompt's first
                        r.set_usage(usage[0], 0, 0)
                    out = b"".join(b"".join(r.feed(completion[at:at + 5]))
                                   for at in range(0, len(completion), 5))
                    if usage:                   # and all three at the end
                        r.set_usage(*usage)
                    return out + b"".join(r.end(reason))
                got = streamed(**opts)
                self.assertEqual(got, self.cli(api, body, completion, "--stream", "5", "--end",
                                               reason, *flags), (api, flags))
                if usage is None:
                    self.assertNotEqual(got, streamed(), (api, flags))

    def test_stopped_and_usage_checks(self):
        turn = dsml.Turn({"messages": USER, "stop": ["END"], "thinking": {"type": "disabled"}})
        responder = turn.responder()
        self.assertFalse(responder.stopped)
        responder.feed("one END two")
        self.assertFalse(responder.stopped)     # the thinking-off window holds it
        responder.feed("x" * 200)
        self.assertTrue(responder.stopped)
        for counts in ((1, 2, 3), (-1, 0, 0), (True, 1, 0)):
            with self.assertRaises(dsml.DsmlError):
                responder.set_usage(*counts)
        with self.assertRaises(dsml.DsmlError):
            turn.responder(choice_index=-1)

    def test_length_and_error_objects(self):
        text = b"Half an ans"
        for api in ("anthropic", "responses"):
            body = api_body(api, False)
            responder = dsml.Turn(body, api=api).responder(id="x1", created=7, seed=b"s")
            responder.feed(text)
            responder.end("length")
            self.assertEqual(responder.completion(),
                             json.loads(self.cli(api, body, text, "--end", "length")), api)


class Handles(unittest.TestCase):
    """close(), a with block and collection free a Turn's, a Responder's
    and a Detector's handle once; a closed one refuses every call."""

    def test_close_once_and_refuse_after(self):
        turn = dsml.Turn({"messages": USER}, thinking_mode="chat")
        with turn.responder() as r:
            r.feed("a")
            self.assertTrue(r.end("stop"))
        self.assertIsNone(r._handle)
        r.close()
        for call in (lambda: r.feed("x"), lambda: r.end("stop"),
                     lambda: r.set_usage(1, 1), lambda: r.stopped, r.completion):
            with self.assertRaises(dsml.DsmlError) as cm:
                call()
            self.assertEqual(cm.exception.name, "DSML_ERR_STATE")
            self.assertIn("Responder is closed", str(cm.exception))
        # a responder outlives its turn's close
        r2 = turn.responder()
        turn.close()
        turn.close()
        r2.feed("b")
        r2.end("stop")
        self.assertEqual(r2.completion()["choices"][0]["message"]["content"], "b")
        with self.assertRaises(dsml.DsmlError) as cm:
            turn.responder()
        self.assertEqual(cm.exception.name, "DSML_ERR_ARGUMENT")
        with dsml.Detector("chat") as d:
            d.feed("c")
        with self.assertRaises(dsml.DsmlError) as cm:
            d.feed("x")
        self.assertIn("Detector is closed", str(cm.exception))


class TurnApis(unittest.TestCase):

    def test_api_fields_and_errors(self):
        body = {"model": "m", "max_tokens": 9, "stop_sequences": ["END"],
                "messages": [{"role": "user", "content": "q"}]}
        turn = dsml.Turn(body, api="anthropic")
        self.assertEqual((turn.api, turn.stop, turn.n, turn.stream), ("anthropic", ["END"], 1,
                                                                       False))
        self.assertEqual(dsml.Turn({"messages": USER, "stream": True, "n": 2,
                                    "stream_options": {"include_usage": True}})
                         .include_usage, True)
        with self.assertRaises(dsml.DsmlError) as cm:
            dsml.Turn({"messages": body["messages"]}, api="anthropic")
        self.assertEqual(cm.exception.path, "$.max_tokens")
        anthropic = dsml.error_json(cm.exception, "anthropic")
        self.assertEqual(anthropic["type"], "error")
        self.assertEqual(anthropic["error"]["message"], cm.exception.message)
        self.assertTrue(cm.exception.message.startswith("$.max_tokens"), cm.exception.message)
        self.assertEqual(turn.error_json(cm.exception), anthropic)
        self.assertEqual(dsml.error_json(cm.exception)["error"]["param"], "$.max_tokens")
        self.assertEqual(dsml.error_json(cm.exception, "responses"),
                         dsml.error_json(cm.exception, "chat"))
        with self.assertRaises(dsml.DsmlError):
            dsml.Turn(body, api="claude")
        with self.assertRaises(dsml.DsmlError):
            dsml.error_json(ValueError("x"))
        with self.assertRaises(dsml.DsmlError):
            dsml.Turn({"model": "m", "input": "q", "previous_response_id": "r"}, api="responses")

    def test_thinking_mode_is_the_default_of_a_body_without_one(self):
        self.assertEqual(dsml.Turn({"messages": USER}).thinking_mode, "thinking")
        chat = dsml.Turn({"messages": USER}, thinking_mode="chat")
        self.assertEqual((chat.thinking_mode, chat.starts_in_reasoning), ("chat", False))
        self.assertEqual(dsml.Turn({"messages": USER, "thinking": {"type": "enabled"}},
                                   thinking_mode="chat").thinking_mode, "thinking")


if __name__ == "__main__":
    unittest.main()
