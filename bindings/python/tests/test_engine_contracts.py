"""The adapters inside the engines' own call paths (issue 26, items 1-17).

Each test drives an adapter the way the engine does, through a small
stand-in for the engine's code written from its sources (vLLM main, mid
2026: vllm/parser/abstract_parser.py DelegatingParser.parse_delta and
finalize_generation, vllm/reasoning/abs_reasoning_parsers.py,
vllm/tool_parsers/abstract_tool_parser.py, vllm/parser/deepseek_v4.py,
serving_chat's end-of-stream arguments; SGLang main:
python/sglang/srt/parser/reasoning_parser.py ReasoningParser.__init__,
python/sglang/srt/plugins/__init__.py load_plugins_by_group, serving_chat's
_check_for_unstreamed_tool_args).  No engine code is imported or copied:
the stand-ins call only the members the engines call."""

import json
import os
import types
import unittest

import _support  # noqa: F401  (import path)
from dsml.integrations import sglang as S
from dsml.integrations import vllm as V

D = "｜DSML｜"
EOS = "<｜end▁of▁sentence｜>"
START, END, EOS_ID = 1, 2, 3


class Tokenizer:
    eos_token_id = EOS_ID

    def get_vocab(self):
        return {"<think>": START, "</think>": END, EOS: EOS_ID}


def v41_call(name, params, block="%s calls" % D, invoke="%s invoke" % D,
             parameter="%s parameter" % D):
    body = "".join('<%s name="%s" string="%s">%s</%s>\n'
                   % (parameter, k, s, v, parameter) for k, (s, v) in params.items())
    return '\n\n<%s>\n<%s name="%s">\n%s</%s>\n</%s>' % (block, invoke, name, body,
                                                        invoke, block)


def v4_call(name, params):
    return v41_call(name, params, block="%stool_calls" % D, invoke="%sinvoke" % D,
                    parameter="%sparameter" % D)


def request(**fields):
    fields.setdefault("tools", None)
    fields.setdefault("tool_choice", "auto")
    fields.setdefault("chat_template_kwargs", None)
    return types.SimpleNamespace(**fields)


def vllm_delegate(reasoning, tools, deltas, prompt_ids, req=None):
    """DelegatingParser.parse_delta for parsers that are not engine-based:
    the prompt decides whether the reasoning is already over; the reasoning
    parser gets each delta until is_reasoning_end_streaming (the base
    class's default: is_reasoning_end of the ids) says it ended, and its
    content at that point is the tool parser's first delta (with the
    tool-phase text starting afresh)."""
    req = req or request()
    ended = reasoning.is_reasoning_end(prompt_ids)
    if not ended and hasattr(reasoning, "adjust_initial_state_from_prompt"):
        reasoning.adjust_initial_state_from_prompt(prompt_ids)
    out, previous, ids, tool_started = [], "", [], False
    end_check = getattr(reasoning, "is_reasoning_end_streaming",
                        lambda ids, delta: reasoning.is_reasoning_end(ids))
    for text, delta_ids in deltas:
        current, current_ids = previous + text, ids + delta_ids
        message = None
        if not ended:
            message = reasoning.extract_reasoning_streaming(previous, current, text, ids,
                                                            current_ids, delta_ids)
            if end_check(current_ids, delta_ids):
                ended = True
                text = (message.content if message else None) or ""
                current = text
                if message is not None:
                    out.append(types.SimpleNamespace(reasoning=_reasoning(message),
                                                     content=None, tool_calls=[]))
                message = None
            elif message is not None:
                out.append(message)
        if ended:
            if not tool_started:
                tool_started, previous, ids = True, "", []
                current, current_ids = text, delta_ids
            message = tools.extract_tool_calls_streaming(previous, current, text, ids,
                                                         current_ids, delta_ids, req)
            if message is not None:
                out.append(message)
        previous, ids = current, current_ids
    return out


def _reasoning(message):
    return getattr(message, "reasoning", None) or getattr(message, "reasoning_content", None)


def joined(messages):
    reasoning = "".join(_reasoning(m) or "" for m in messages)
    content = "".join(m.content or "" for m in messages)
    calls = {}
    for m in messages:
        for c in m.tool_calls or ():
            entry = calls.setdefault(c.index, {"name": None, "arguments": ""})
            if c.function.name:
                entry["name"] = c.function.name
            entry["arguments"] += c.function.arguments or ""
    return reasoning, content, [calls[i] for i in sorted(calls)]


def chunks(text, size):
    return [(text[i:i + size], [10]) for i in range(0, len(text), size)]


def vllm_unstreamed(parser):
    """serving_chat / ToolParser.get_remaining_unstreamed_args at the end of
    a stream: json.dumps of the last call's arguments (a dict), less what
    was streamed."""
    if not parser.prev_tool_call_arr:
        return ""
    index = len(parser.prev_tool_call_arr) - 1
    args = parser.prev_tool_call_arr[index].get("arguments", {})
    expected = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    actual = parser.streamed_args_for_tool[index]
    return expected[len(actual):] if expected.startswith(actual) else expected


class VllmReasoningContract(unittest.TestCase):

    def test_1_reasoning_end_is_the_last_marker(self):
        parser = V.DsmlReasoningParser(Tokenizer())
        # a multi-turn thinking prompt: an earlier turn's </think>, then <think>
        self.assertFalse(parser.is_reasoning_end([7, START, 8, END, 9, START]))
        self.assertTrue(parser.is_reasoning_end([7, START, 8, END]))
        messages = vllm_delegate(V.DsmlReasoningParser(Tokenizer()),
                                 V.DsmlToolParser(Tokenizer()),
                                 [("Think", [11]), ("</think>", [END]), ("Answer", [12])],
                                 [7, START, 8, END, 9, START])
        self.assertEqual(joined(messages)[:2], ("Think", "Answer"))

    def test_2_calls_block_ends_the_reasoning_when_streamed(self):
        text = "Let me look." + v41_call("get", {"q": ("true", "x")})
        for size in (1, 5, 1000):
            messages = vllm_delegate(V.DsmlReasoningParser(Tokenizer()),
                                     V.DsmlToolParser(Tokenizer()), chunks(text, size),
                                     [9, START])
            reasoning, content, calls = joined(messages)
            self.assertEqual(reasoning, "Let me look.", size)
            self.assertEqual([(c["name"], json.loads(c["arguments"])) for c in calls],
                             [("get", {"q": "x"})], size)
            self.assertEqual(content.strip(), "", size)

    def test_5_thinking_switches(self):
        answer = "A plain answer."
        for kwargs in ({"enable_thinking": False}, {"thinking": False},
                       {"reasoning_effort": "none"}):
            parser = V.DsmlReasoningParser(Tokenizer(), chat_template_kwargs=kwargs)
            self.assertEqual(
                parser.extract_reasoning(answer, request(chat_template_kwargs=kwargs)),
                (None, answer), kwargs)
        on = V.DsmlReasoningParser(Tokenizer(), chat_template_kwargs={"enable_thinking": True})
        self.assertEqual(on.extract_reasoning("r</think>a", None), ("r", "a"))
        # nothing said: a chat prompt (ending with </think>) makes the answer content
        messages = vllm_delegate(V.DsmlReasoningParser(Tokenizer()),
                                 V.DsmlToolParser(Tokenizer()), chunks(answer, 4),
                                 [9, START, END])
        self.assertEqual(joined(messages)[:2], ("", answer))
        self.assertEqual(V.DsmlReasoningParser(Tokenizer()).extract_reasoning(answer, request()),
                         (None, answer))

    def test_6_reasoning_tokens_and_markers(self):
        parser = V.DsmlReasoningParser(Tokenizer(), chat_template_kwargs={"thinking": True})
        self.assertEqual(parser.count_reasoning_tokens([5, 6, END, 7]), 2)
        self.assertEqual(parser.count_reasoning_tokens([START, 5, END, 7, 8]), 1)
        self.assertEqual((parser.reasoning_start_str, parser.reasoning_end_str),
                         ("<think>", "</think>"))


    def test_18_end_of_sentence_in_an_unterminated_reasoning(self):
        """vLLM's test_eos_not_leaked_when_reasoning_never_ends: the stream
        ends inside the reasoning with the end-of-sentence token; nothing of
        it comes out, neither while streamed nor from
        get_streaming_fallback_content (finalize_generation's content)."""
        text = "Good morning! How can I help you today?"
        for size in (1, 2, 5, 1000):
            parser = V.DsmlReasoningParser(Tokenizer(), chat_template_kwargs={"thinking": True})
            pieces = chunks(text, size) + [(EOS, [EOS_ID])]
            messages = vllm_delegate(parser, V.DsmlToolParser(Tokenizer()), pieces, [9, START])
            reasoning, content, calls = joined(messages)
            self.assertEqual((reasoning, content, calls), (text, "", []), size)
            self.assertEqual(parser.get_streaming_fallback_content(text + EOS), "", size)
        self.assertEqual(V.DsmlReasoningParser(Tokenizer()).extract_reasoning(
            "Thinking" + EOS, request(chat_template_kwargs={"thinking": True})),
            ("Thinking", None))


class VllmToolContract(unittest.TestCase):

    def test_3_adjust_request(self):
        parser = V.DsmlToolParser(Tokenizer())
        tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        req = parser.adjust_request(request(tools=tools, tool_choice="required",
                                            skip_special_tokens=True))
        self.assertIs(req.skip_special_tokens, False)
        # a forced call is DSML text: vLLM must parse it, not expect JSON,
        # and decoding is kept to a calls block of the declared tools
        self.assertIs(parser.supports_required_and_named, False)
        self.assertIn("<%s calls>" % D, req.guided_grammar)
        named = parser.adjust_request(request(tools=tools, tool_choice={
            "type": "function", "function": {"name": "f"}}))
        self.assertIn('name=\\"f\\"', named.guided_grammar)

    def test_4_held_text_comes_out_at_the_end(self):
        parser = V.DsmlToolParser(Tokenizer())
        out = [parser.extract_tool_calls_streaming("", "a <", "a <", [], [5], [5], request())]
        # the last delta: the end-of-sentence token, its text stripped
        out.append(parser.extract_tool_calls_streaming("a <", "a <", "", [5], [5, EOS_ID],
                                                       [EOS_ID], request()))
        self.assertEqual("".join(m.content or "" for m in out if m), "a <")
        # or kept (skip_special_tokens=False)
        parser = V.DsmlToolParser(Tokenizer())
        out = [parser.extract_tool_calls_streaming("", "a <", "a <", [], [5], [5], request()),
               parser.extract_tool_calls_streaming("a <", "a <" + EOS, EOS, [5], [5, 6], [6],
                                                   request())]
        self.assertEqual("".join(m.content or "" for m in out if m), "a <")

    def test_4_finish_streaming_at_every_end(self):
        """vLLM main's DelegatingParser.parse_delta(finished=True) ->
        _flush_engine_parsers: finish_streaming() on a parser whose
        engine_based_streaming is true.  A stream cut by max_tokens or a
        stop string (no end-of-sentence token) keeps nothing back."""
        parser = V.DsmlToolParser(Tokenizer())
        self.assertIs(parser.engine_based_streaming, True)
        out = [parser.extract_tool_calls_streaming("", "a <", "a <", [], [5], [5], request())]
        out.append(parser.finish_streaming())
        self.assertEqual("".join(m.content or "" for m in out if m), "a <")
        # a call cut inside a value: closed into valid JSON
        parser = V.DsmlToolParser(Tokenizer())
        text = v41_call("get", {"city": ("true", "Paris")})
        text = text[:text.index("Paris") + 2]
        out = [parser.extract_tool_calls_streaming("", text, text, [], [5], [5], request()),
               parser.finish_streaming()]
        self.assertEqual(json.loads(joined([m for m in out if m])[2][0]["arguments"]),
                         {"city": "Pa"})
        # after the end-of-sentence token ended the stream: nothing more
        parser = V.DsmlToolParser(Tokenizer())
        parser.extract_tool_calls_streaming("", "a <", "a <", [], [5, EOS_ID], [5, EOS_ID],
                                            request())
        self.assertIsNone(parser.finish_streaming())

    def test_4_engine_based_deltas(self):
        """A tool parser alone is driven as engine-based: vLLM gives it each
        delta with no previous text (StreamState.advance); the deltas are
        one stream until it ends, and the next stream starts afresh."""
        text = "Hi." + v41_call("get", {"q": ("true", "x")})
        parser = V.DsmlToolParser(Tokenizer())
        for _ in range(2):
            out = [parser.extract_tool_calls_streaming("", piece, piece, [], [5], [5], request())
                   for piece, _ids in chunks(text, 7)]
            out.append(parser.finish_streaming())
            content, calls = joined([m for m in out if m])[1:]
            self.assertEqual(content, "Hi.")
            self.assertEqual([(c["name"], json.loads(c["arguments"])) for c in calls],
                             [("get", {"q": "x"})])

    def test_7_request_tools_reach_the_detector(self):
        parser = type("P", (V.DsmlToolParser,), {"detector_options": {"tool_names": "declared"}})
        tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        text = v41_call("f", {"a": ("true", "1")}) + v41_call("g", {"a": ("true", "2")})
        info = parser(Tokenizer()).extract_tool_calls(text, request(tools=tools))
        self.assertEqual([c.function.name for c in info.tool_calls], ["f"])
        streaming = parser(Tokenizer())
        streamed = joined([m for m in (streaming.extract_tool_calls_streaming(
            "", text, text, [], [], [], request(tools=tools)),) if m])
        self.assertEqual([c["name"] for c in streamed[2]], ["f"])

    def test_7_tool_choice_and_parallel_calls_of_the_request(self):
        """The request's tool_choice and parallel_tool_calls, as a dsml.Turn
        of the request decides them, reach the detector: a call they do not
        allow never reaches the client, streamed or whole."""
        tools = [{"type": "function", "function": {"name": n, "parameters": {}}}
                 for n in ("f", "g")]
        text = v41_call("f", {"a": ("true", "1")}) + v41_call("g", {"a": ("true", "2")})
        for fields, names in (({"tool_choice": {"type": "function", "function": {"name": "g"}}},
                               ["g"]),
                              ({"parallel_tool_calls": False}, ["f"]),
                              ({"tool_choice": "required"}, ["f", "g"]),
                              ({}, ["f", "g"])):
            req = request(tools=tools, **dict({"tool_choice": "auto"}, **fields))
            info = V.DsmlToolParser(Tokenizer()).extract_tool_calls(text, req)
            self.assertEqual([c.function.name for c in info.tool_calls], names, fields)
            parser = V.DsmlToolParser(Tokenizer())
            out = [parser.extract_tool_calls_streaming("", piece, piece, [], [5], [5], req)
                   for piece, _ids in chunks(text, 9)] + [parser.finish_streaming()]
            _, content, calls = joined([m for m in out if m])
            self.assertEqual([c["name"] for c in calls], names, fields)
            self.assertEqual(content.strip(), "", fields)
            self.assertEqual([c["name"] for c in parser.prev_tool_call_arr], names, fields)

    def test_7_tools_as_objects(self):
        # vLLM hands its parsers pydantic tools, tests hand them mocks, and
        # the Responses API's function tools hold the name at the top: the
        # function's attributes are read, as vLLM's own parsers read them
        parser = type("P", (V.DsmlToolParser,), {"detector_options": {"tool_names": "declared"}})
        text = v41_call("f", {"a": ("true", "1")}) + v41_call("g", {"a": ("true", "2")})
        nested = types.SimpleNamespace(function=types.SimpleNamespace(
            name="f", parameters={"type": "object"}, description=object()))
        flat = types.SimpleNamespace(type="function", name="f", parameters={})
        for tool in (nested, flat):
            info = parser(Tokenizer()).extract_tool_calls(text, request(tools=[tool]))
            self.assertEqual([c.function.name for c in info.tool_calls], ["f"])

    def test_15_structural_tag(self):
        # vLLM's get_structural_tag / structural_tag_model: not one of
        # xgrammar's built-in tags, libdsml's own (dsml.grammar)
        parser = V.DsmlToolParserV4(Tokenizer())
        self.assertIsNone(parser.structural_tag_model)
        tools = [{"type": "function", "function": {"name": n, "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}}}} for n in "fg"]
        for choice in ("auto", "required", {"type": "function", "function": {"name": "g"}}):
            tag = parser.get_structural_tag(request(tools=tools, tool_choice=choice))
            expected, _ = V.grammar(tools, format="structural_tag", profile="v4",
                                    tool_choice=choice)
            self.assertEqual(tag.model_dump(), json.loads(expected))
        # the named tool's invokes only: the invoke tag's grammar names g, never f
        invokes = [t for e in tag.model_dump()["format"]["elements"]
                   for t in e.get("tags", []) if t["begin"].endswith('invoke name="')]
        self.assertEqual(len(invokes), 1)
        grammar = invokes[0]["content"]["grammar"]
        self.assertIn('root ::= "g\\">', grammar)
        self.assertNotIn('"f\\">', grammar)
        self.assertIsNone(parser.get_structural_tag(request(tools=tools, tool_choice="none")))
        self.assertIsNone(parser.get_structural_tag(request(tools=None)))

    def test_15_strict_tool_calling_takes_the_structural_tag(self):
        # VLLM_ENFORCE_STRICT_TOOL_CALLING: vLLM's adjust_request puts the
        # parser's structural tag in structured_outputs for "auto" too
        import sys
        saved = V._StructuredOutputsParams, sys.modules.get("vllm"), sys.modules.get("vllm.envs")
        envs = types.ModuleType("vllm.envs")
        envs.VLLM_ENFORCE_STRICT_TOOL_CALLING = True
        sys.modules["vllm"], sys.modules["vllm.envs"] = types.ModuleType("vllm"), envs
        sys.modules["vllm"].envs = envs
        V._StructuredOutputsParams = lambda **kw: types.SimpleNamespace(**kw)
        try:
            tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
            req = V.DsmlToolParser(Tokenizer()).adjust_request(
                request(tools=tools, structured_outputs=None))
        finally:
            V._StructuredOutputsParams = saved[0]
            for name, module in (("vllm", saved[1]), ("vllm.envs", saved[2])):
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module
        self.assertEqual(json.loads(req.structured_outputs.structural_tag),
                         json.loads(V.grammar(tools, format="structural_tag")[0]))

    def test_8_one_tool_call_per_index_per_delta(self):
        text = v41_call("f", {"a": ("true", "1")})
        message = V.DsmlToolParser(Tokenizer()).extract_tool_calls_streaming(
            "", text, text, [], [], [], request())
        indexes = [c.index for c in message.tool_calls]
        self.assertEqual(len(indexes), len(set(indexes)))
        self.assertEqual(message.tool_calls[0].function.name, "f")
        self.assertEqual(json.loads(message.tool_calls[0].function.arguments), {"a": "1"})

    def test_9_failed_call_is_retracted(self):
        text = ('\n\n<%s calls>\n<%s invoke name="f">\n<%s parameter name="a" string="true">'
                'x</%s parameter>\n<%sbogus>' % (D, D, D, D, D))
        parser = V.DsmlToolParser(Tokenizer())
        messages = [m for m in (parser.extract_tool_calls_streaming(
            "", text[:60], text[:60], [], [], [], request()),
            parser.extract_tool_calls_streaming(text[:60], text, text[60:], [], [], [EOS_ID],
                                                request())) if m]
        _, _, calls = joined(messages)
        self.assertEqual(parser.prev_tool_call_arr, [])   # finish_reason is not tool_calls
        for call in calls:                                # what the client got parses
            json.loads(call["arguments"])

    def test_10_cut_stream_arguments(self):
        text = v41_call("weather", {"city": ("true", "Paris")})
        cut = text[:text.index("Paris") + 3]
        parser = V.DsmlToolParser(Tokenizer())
        messages = [m for m in (parser.extract_tool_calls_streaming(
            "", cut, cut, [], [], [], request()),) if m]
        self.assertIsInstance(parser.prev_tool_call_arr[0]["arguments"], dict)
        streamed = joined(messages)[2][0]["arguments"] + vllm_unstreamed(parser)
        self.assertEqual(json.loads(streamed), {"city": "Par"})

    def test_11_arguments_are_json(self):
        text = v41_call("f", {"label": ("false", "hello"), "n": ("false", "2")})
        info = V.DsmlToolParser(Tokenizer()).extract_tool_calls(text, request())
        self.assertEqual(json.loads(info.tool_calls[0].function.arguments),
                         {"label": "hello", "n": 2})
        message = V.DsmlToolParser(Tokenizer()).extract_tool_calls_streaming(
            "", text, text, [], [], [], request())
        self.assertEqual(json.loads(joined([message])[2][0]["arguments"]),
                         {"label": "hello", "n": 2})


class SglangContract(unittest.TestCase):

    def test_12_plugin_entry_point(self):
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            self.skipTest("tomllib needs Python 3.11")
        with open(os.path.join(_support.BINDING, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f)["project"]
        target = project["entry-points"]["sglang.srt.plugins"]["dsml"]
        module, _, attr = target.partition(":")
        self.assertEqual((module, attr), ("dsml.integrations.sglang", "register"))
        getattr(S, attr)()   # SGLang calls it with no arguments

    def test_13_defaults_of_sglangs_v4_detector(self):
        detector = S.DsmlReasoningDetector()
        self.assertEqual((detector.reasoning_default, detector.thinks_internally,
                          detector.force_reasoning), ("explicit_thinking", True, False))
        self.assertEqual(detector.detect_and_parse("A chat answer.").normal_text,
                         "A chat answer.")

    def test_14_reasoning_parser_arguments(self):
        # ReasoningParser.__init__ passes these when the request has them
        detector = S.DsmlReasoningDetector(stream_reasoning=True, force_reasoning=False,
                                           continue_final_message=True,
                                           previous_content="<think>Hm", 
                                           force_nonempty_content=False)
        result = detector.detect_and_parse("more.</think>Done.")
        self.assertEqual((result.reasoning_text, result.normal_text), ("more.", "Done."))
        forced = S.DsmlReasoningDetector(force_reasoning=True, force_nonempty_content=True)
        result = forced.detect_and_parse("only thoughts")
        self.assertEqual((result.reasoning_text, result.normal_text), ("", "only thoughts"))

    def test_16_tools_and_json(self):
        tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        text = v41_call("f", {"a": ("false", "hi")}) + v41_call("g", {"a": ("true", "2")})
        detector = S.DsmlDetector(tool_names="declared")
        result = detector.detect_and_parse(text, tools)
        self.assertEqual([(c.name, json.loads(c.parameters)) for c in result.calls],
                         [("f", {"a": "hi"})])
        stream = S.DsmlDetector()
        stream.parse_streaming_increment(text[:text.index("</%s parameter>" % D)], tools)
        self.assertIsInstance(stream.prev_tool_call_arr[0]["arguments"], dict)
        # a last call without parameters: "{}" once, not '{}""'
        empty = '\n\n<%s calls>\n<%s invoke name="f">\n</%s invoke>\n</%s calls>' % (D, D, D, D)
        stream = S.DsmlDetector()
        got = "".join(c.parameters for c in stream.parse_streaming_increment(empty, tools).calls)
        got += "".join(c.parameters for c in stream.finish().calls)
        self.assertEqual(got + vllm_unstreamed(stream), "{}")

    def test_15_constrained_calls(self):
        # FunctionCallParser.get_structure_constraint: the detector's own
        # structural tag for forced calls, never SGLang's JSON array
        tools = [{"type": "function", "function": {"name": "get", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"]}}}]
        detector = S.DsmlDetectorV4()
        self.assertTrue(detector.parses_required_natively())
        tag = detector.get_structural_tag(tools=tools, thinking_mode=True,
                                          tool_choice="required", parallel_tool_calls=False)
        if not isinstance(tag, dict):
            tag = tag.model_dump()
        self.assertEqual(tag["type"], "structural_tag")
        self.assertIn("<%stool_calls>" % D, json.dumps(tag, ensure_ascii=False))
        self.assertIn("</think>", json.dumps(tag, ensure_ascii=False))
        self.assertIsNone(detector.get_auto_tool_call_structural_tag(tools=tools))
        ebnf = detector.build_ebnf(tools)          # SGLang before its EBNF removal
        self.assertIn("<%stool_calls>" % D, ebnf)
        self.assertIn("city", ebnf)

    def test_17_one_name_per_profile(self):
        self.assertEqual(sorted(S.DETECTORS), ["dsml", "dsml-v32", "dsml-v4"])
        self.assertEqual(sorted(V.PARSERS), ["dsml", "dsml-v32", "dsml-v4"])
        v4 = S.DETECTORS["dsml-v4"][0]().detect_and_parse(v4_call("f", {"a": ("true", "1")}))
        self.assertEqual([c.name for c in v4.calls], ["f"])
        v32 = V.PARSERS["dsml-v32"][0](Tokenizer()).extract_tool_calls(
            v41_call("f", {"a": ("true", "1")}, block="%sfunction_calls" % D,
                     invoke="%sinvoke" % D, parameter="%sparameter" % D), None)
        self.assertEqual([c.function.name for c in v32.tool_calls], ["f"])


if __name__ == "__main__":
    unittest.main()
