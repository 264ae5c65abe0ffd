"""dsml.Turn and its Responder (dsml_turn_*, dsml_responder_*) against the
library's other results on the golden corpora: the turn's prompt is
render_request's, and a strict responder's completion is the golden parse
message, its chunks adding up to it."""

import json
import random
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


if __name__ == "__main__":
    unittest.main()
