#!/usr/bin/env python3
"""Tests of the grammars dsml-render writes (`dsml-render grammar`), run with
python3-lark (Debian's package; the tests are skipped, exit status 77, when
it is missing).

  run_tests.py --binary PATH --testdata DIR

- Every golden completion with calls (parse.jsonl, prerelease-parse.jsonl,
  v4-parse.jsonl, v32-parse.jsonl, each in its profile):
  the golden completions carry no tool declarations, so the tools are read
  back from the expected calls -- one tool a name, its parameters inferred
  from the argument values of its calls (types; objects with the keys every
  value has required; array items); the grammar writes properties in their
  schema's order, so calls (or objects) whose keys come in orders no one
  order fits get a declaration (a schema in an anyOf) each.  The Lark
  grammar for those tools
  accepts the completion under "required" and "auto", under a named
  tool_choice when every call names that tool, with parallel calls off when
  there is one call; it rejects the completion with an undeclared name, with
  a required parameter left out, with a value of a type its schema does not
  allow, with a stray byte in a tag, and under a named tool_choice naming
  another tool.  Completions whose string="false" text is not JSON (the
  reference inserts it verbatim) are rejected whatever the parameters are.
  The grammars of a dialect are built as one Lark parser (grammarlib's
  LarkBatch: each grammar its own start symbol, the rules they share written
  once), and every completion is parsed from its grammar's start.
- GBNF: for a sample of those cases, the GBNF grammar's structure (a root;
  every rule referred to is defined and every rule defined is reached) and
  its rules run by Lark (GBNF turned into Lark rule for rule) on the same
  accepted and mutated completions; the structural tag's per-tool content
  grammars on each invoke's parameter lines.
- The text expressions: random texts near the special tokens and the
  parameter closer, the expression against a plain "holds none of" test.
- Schema features, the unsupported ones refused with their path, the
  tool_choice forms, the lazy GBNF and its trigger.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grammarlib as gl  # noqa: E402

ARGS = None
LARK = None
D = gl.D
SPECIALS = ["<｜begin▁of▁sentence｜>", gl.EOS, "<think>", "</think>", D]
STOP = "/" + D + " parameter"

# The dialects and their golden completions; a profile added to the
# library adds a line here (and its tag names to grammarlib.TAGS).
DIALECTS = [("v41", "parse.jsonl"), ("prerelease", "prerelease-parse.jsonl"),
            ("v4", "v4-parse.jsonl"), ("v32", "v32-parse.jsonl")]


def grammar(request, fmt="lark", *options):
    """Runs `dsml-render grammar` on the request (standard input); returns
    (status, stdout text, stderr)."""
    p = subprocess.run([ARGS.binary, "grammar", "--format", fmt, *options, "-"],
                       input=json.dumps(request, ensure_ascii=False).encode("utf-8"),
                       capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")


def must(request, fmt="lark", *options):
    st, out, err = grammar(request, fmt, *options)
    if st != 0:
        raise AssertionError(f"dsml-render grammar failed ({st}): {err}")
    return out


def parser(text):
    return LARK.Lark(text, start="start")


def accepts(p, text):
    try:
        p.parse(text)
        return True
    except LARK.exceptions.LarkError:
        return False


def completion(text):
    """What the grammar constrains: the text before the EOS token."""
    return text[:-len(gl.EOS)] if text.endswith(gl.EOS) else text


def golden_calls(name):
    with open(os.path.join(ARGS.testdata, name), encoding="utf-8") as f:
        for line in f:
            g = json.loads(line)
            msg = g["expect"].get("message")
            if msg and msg["tool_calls"]:
                yield g


class Golden(unittest.TestCase):
    def run_dialect(self, profile, name):
        tags = gl.TAGS[profile]
        counts = dict(cases=0, not_json=0, mutants=0, gbnf=0, tags=0, named=0, single=0)
        failures = []
        # Every grammar of the dialect goes into one parser (gl.LarkBatch);
        # the checks are collected first and run once it is built.
        batch = gl.LarkBatch(LARK)
        checks = []

        def check(cond, case, what):
            if not cond:
                failures.append(f"{profile} {case['id']}: {what}")

        def expect(grammar_text, text, want, case, what):
            checks.append((batch.add(grammar_text), text, want, case, what))

        def lark(request, mode):
            return must(request, "lark", mode, "--profile", profile)

        for i, case in enumerate(golden_calls(name)):
            text = completion(case["text"])
            mode = "--thinking" if case["thinking_mode"] == "thinking" else "--chat"
            calls = case["expect"]["message"]["tool_calls"]
            tools = gl.tools_for(calls)
            if tools is None:
                # parameters of any type: still no schema takes text that is
                # not JSON
                counts["not_json"] += 1
                names = {}
                for _, _, n, params in gl.invokes(text, tags):
                    props = names.setdefault(n, {})
                    for p in params:
                        props[p.group(1)] = {}
                tools = [{"type": "function", "function": {
                    "name": n, "parameters": {"type": "object", "properties": props}}}
                         for n, props in names.items()]
                expect(lark({"tools": tools, "tool_choice": "required"}, mode), text, False, case,
                       "accepted string=\"false\" text that is not JSON")
                continue
            counts["cases"] += 1
            request = {"tools": tools, "tool_choice": "required"}
            g = lark(request, mode)
            expect(g, text, True, case, "the required grammar refused the completion")
            mutants = [("undeclared name", gl.undeclared_name(text, tags)),
                       ("missing required parameter", gl.missing_required(text, tools, tags)),
                       ("wrong type", gl.wrong_type(text, tools, tags))]
            mutants += [("stray byte", t) for t in gl.stray_bytes(text, case["id"], tags)]
            for what, t in mutants:
                if t is None:
                    continue
                counts["mutants"] += 1
                expect(g, t, False, case, f"accepted a mutant ({what}): {t!r}")
            if i % 3 != 0:
                continue  # the other tool_choice forms on a third of the cases
            names = {gl.call_name(c) for c in calls}
            first = gl.call_name(calls[0])
            named = lark(dict(request, tool_choice={"type": "function", "function": {"name": first}}),
                         mode)
            expect(lark(dict(request, tool_choice="auto"), mode), text, True, case,
                   "the auto grammar refused the completion")
            counts["named"] += 1
            expect(named, text, len(names) == 1, case,
                   f"named tool_choice {first!r}, calls to {sorted(names)}")
            counts["single"] += 1
            expect(lark(dict(request, parallel_tool_calls=False), mode), text, len(calls) == 1, case,
                   f"parallel calls off, {len(calls)} calls")
            if i % 9 == 0:
                counts["gbnf"] += 1
                gbnf = must(request, "gbnf", mode, "--profile", profile)
                try:
                    gl.gbnf_check(gbnf)
                except ValueError as e:
                    check(False, case, f"GBNF: {e}")
                    continue
                gg = gl.gbnf_to_lark(gbnf)
                expect(gg, text, True, case, "the GBNF grammar refused the completion")
                for what, t in mutants[:3]:
                    if t is not None:
                        expect(gg, t, False, case, f"GBNF accepted a mutant ({what})")
                tag = json.loads(must(request, "structural-tag", mode, "--profile", profile))
                for start, end, n, _ in gl.invokes(text, tags):
                    counts["tags"] += 1
                    body = text[text.index(' name="', start) + 7:end]
                    content = self.tag_content(tag, n, tags)
                    if content is None:
                        check(False, case, f"the structural tag has no tag for invoke {n!r}")
                    else:
                        expect(content, body, True, case,
                               f"structural tag content refused invoke {n!r}")
        for key, text, want, case, what in checks:
            check(batch.accepts(key, text) == want, case, what)
        for f in failures[:20]:
            print(f, file=sys.stderr)
        print(f"{profile}: {counts}, {len(checks)} parses, {len(batch.grammars)} grammars",
              file=sys.stderr)
        self.assertEqual(failures, [])
        self.assertGreater(counts["cases"], 50)
        self.assertGreater(counts["mutants"], 4 * counts["cases"])

    def tag_content(self, tag, name, tags):
        """The structural tag's one invoke tag: its content grammar (as
        Lark), which starts with the tool's name; None when there is no such
        tag."""
        def find(fmt):
            if fmt["type"] == "tags_with_separator":
                return fmt
            kids = (fmt.get("elements", []) + [t["content"] for t in fmt.get("tags", [])] +
                    ([fmt["content"]] if "content" in fmt else []))
            return next((f for f in map(find, kids) if f is not None), None)
        invokes = find(tag["format"])
        self.assertEqual(len(invokes["tags"]), 1)
        t = invokes["tags"][0]
        if t["begin"] != "<" + D + tags[1] + ' name="':
            return None
        self.assertEqual(t["end"], "</" + D + tags[1] + ">")
        gl.gbnf_check(t["content"]["grammar"])
        return gl.gbnf_to_lark(t["content"]["grammar"])

    def test_dialects(self):
        for profile, name in DIALECTS:
            with self.subTest(profile=profile):
                self.run_dialect(profile, name)


class TextExpressions(unittest.TestCase):
    """The expressions for text without special tokens and for values
    without the parameter closer, against a plain test."""

    def terminal(self, lark_text, name):
        m = re.search(r"^" + name + r": /(.*)/$", lark_text, re.M)
        self.assertIsNotNone(m, name)
        return re.compile(m.group(1), re.S)

    def random_texts(self, alphabet, words, n, seed):
        rnd = random.Random(seed)
        for _ in range(n):
            parts = []
            for _ in range(rnd.randint(0, 6)):
                w = rnd.choice(words)
                if rnd.random() < 0.6:  # a piece of a word: the near misses
                    a = rnd.randrange(len(w))
                    w = w[a:rnd.randint(a + 1, len(w))]
                parts.append(w if rnd.random() < 0.7 else rnd.choice(alphabet))
            yield "".join(parts)

    def test_text_and_values(self):
        tools = [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"s": {"type": "string"},
                                             "o": {"type": "object"}}}}}]
        lark_text = must({"tools": tools, "tool_choice": "required"}, "lark", "--thinking")
        text = self.terminal(lark_text, "TEXT")
        value = self.terminal(lark_text, "STRING_VALUE")
        jstring = self.terminal(lark_text, "JSON_STRING")
        close = "</" + D + " parameter>"
        alphabet = list("<｜>/ \n\"\\abcdefghiklmnoprstDSMLT▁é")
        n = 0
        for s in self.random_texts(alphabet, SPECIALS + [STOP, close, "\\u0041", "\\n"], 20000, 1):
            n += 1
            want = s != "" and not any(p in s for p in SPECIALS)
            self.assertEqual(bool(text.fullmatch(s)), want, repr(s))
            self.assertEqual(bool(value.fullmatch(s + close)), STOP not in s, repr(s))
            try:
                ok = (isinstance(json.loads('"' + s + '"'), str) and STOP not in s and
                      "\\/" not in re.findall(r"\\.|.", s, re.S))
            except ValueError:
                ok = False
            self.assertEqual(bool(jstring.fullmatch('"' + s + '"')), ok, repr(s))
        self.assertEqual(n, 20000)


def tools_with(**props):
    return [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": props, "required": list(props)[:1]}}}]


def invoke(*params, name="f"):
    lines = "".join('<' + D + ' parameter name="' + k + '" string="' + s + '">' + v + '</' + D +
                    ' parameter>\n' for k, s, v in params)
    return '<' + D + ' invoke name="' + name + '">\n' + (lines or "\n") + '</' + D + ' invoke>'


def block(*invokes):
    return "\n\n<" + D + " calls>\n" + "\n".join(invokes) + "\n</" + D + " calls>"


class Schemas(unittest.TestCase):
    def check(self, tools, good, bad, choice="required"):
        for fmt in ("lark", "gbnf"):
            out = must({"tools": tools, "tool_choice": choice}, fmt, "--chat")
            if fmt == "gbnf":
                gl.gbnf_check(out)
                out = gl.gbnf_to_lark(out)
            p = parser(out)
            for t in good:
                self.assertTrue(accepts(p, t), f"{fmt} refused {t!r}")
            for t in bad:
                self.assertFalse(accepts(p, t), f"{fmt} accepted {t!r}")

    def test_types(self):
        tools = tools_with(n={"type": "number"}, i={"type": "integer"}, b={"type": "boolean"},
                           z={"type": "null"}, s={"type": ["string", "null"]})
        self.check(tools,
                   [block(invoke(("n", "false", "-1.5e+07"))),
                    block(invoke(("n", "false", "0"), ("i", "false", "-42"), ("b", "false", "false"),
                                 ("z", "false", "null"), ("s", "true", " raw \"text\"\n"))),
                    block(invoke(("n", "false", "2"), ("s", "false", "null")))],
                   [block(invoke(("i", "false", "1"))),  # n is required
                    block(invoke(("n", "false", "01"))),
                    block(invoke(("n", "false", "1"), ("i", "false", "1.5"))),
                    block(invoke(("n", "false", "1"), ("b", "false", "True"))),
                    block(invoke(("n", "true", "1"))),
                    block(invoke(("n", "false", "1"), ("s", "false", "\"x\""))),
                    block(invoke(("i", "false", "1"), ("n", "false", "1")))])  # order

    def test_enum_const_anyof(self):
        tools = tools_with(u={"enum": ["c", "f", 1, None]}, k={"const": {"a": [1, 2.0]}},
                           a={"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["x"]}]})
        self.check(tools,
                   [block(invoke(("u", "true", "c"))), block(invoke(("u", "false", "1"))),
                    block(invoke(("u", "false", "null"), ("k", "false", '{"a": [1, 2.0]}'),
                                 ("a", "true", "x"))),
                    block(invoke(("u", "true", "f"), ("a", "false", "7")))],
                   [block(invoke(("u", "true", "d"))), block(invoke(("u", "false", '"c"'))),
                    block(invoke(("u", "true", "c"), ("k", "false", '{"a": [1, 2]}'))),
                    block(invoke(("u", "true", "c"), ("a", "true", "y")))])

    def test_nested(self):
        tools = tools_with(o={"type": "object", "properties": {
            "x": {"type": "integer"}, "y": {"type": "array", "items": {"type": "string"}},
            "z": {"type": "object", "properties": {"w": {"type": "boolean"}}, "required": ["w"]}},
            "required": ["z"]},
            free={"type": "object"}, arr={"type": "array"})
        self.check(tools,
                   [block(invoke(("o", "false", '{"z": {"w": true}}'))),
                    block(invoke(("o", "false", '{"x": 1, "y": ["a", "b\\n"], "z": {"w": false}}'),
                                 ("free", "false", '{"any": [1, {"k": null}], "more": "v"}'),
                                 ("arr", "false", '[1, "two", [], {}]'))),
                    block(invoke(("o", "false", '{"y": [], "z": {"w": true}}')))],
                   [block(invoke(("o", "false", '{"x": 1}'))),
                    block(invoke(("o", "false", '{"z": {}}'))),
                    block(invoke(("o", "false", '{"z": {"w": true}, "x": 1}'))),
                    block(invoke(("o", "false", '{"z":{"w":true}}'))),
                    block(invoke(("o", "false", '{"y": [1], "z": {"w": true}}'))),
                    block(invoke(("o", "false", '{"z": {"w": true}, "q": 1}')))])

    def test_optional_only_and_no_parameters(self):
        tools = [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}}},
                 {"type": "function", "function": {"name": "g"}}]
        self.check(tools,
                   [block(invoke()), block(invoke(("b", "true", "1"))),
                    block(invoke(("a", "true", ""), ("b", "true", "2"))),
                    block(invoke(name="g"), invoke(("a", "true", "x")))],
                   [block(invoke(("b", "true", "1"), ("a", "true", "2"))),
                    block(invoke(("a", "true", "1"), ("a", "true", "2"))),
                    block(invoke(("a", "true", "1"), name="g")),
                    block(), "\n\n<" + D + " calls>\n</" + D + " calls>"])

    def test_content_and_reasoning(self):
        tools = tools_with(a={"type": "string"})
        call = block(invoke(("a", "true", "v")))
        for fmt in ("lark", "gbnf"):
            out = must({"tools": tools, "tool_choice": "auto"}, fmt, "--thinking", "--whole-turn")
            p = parser(gl.gbnf_to_lark(out) if fmt == "gbnf" else out)
            for t in ["</think>", "r</think>c", "r\n\n</think>" + call, "<｜User｜></think>x<",
                      "</think>Hi <｜Assistant｜>" + call]:
                self.assertTrue(accepts(p, t), f"{fmt} refused {t!r}")
            for t in ["", "no end of reasoning", "a" + call, "a<think></think>", "</think>a</think>",
                      "</think>" + D, "</think>" + call + "\n", "</think>" + call + call,
                      "</think>x" + call.replace("\n\n", "\n", 1)]:
                self.assertFalse(accepts(p, t), f"{fmt} accepted {t!r}")

    def test_none(self):
        tools = tools_with(a={"type": "string"})
        p = parser(must({"tools": tools, "tool_choice": "none"}, "lark", "--chat"))
        self.assertTrue(accepts(p, "Hello"))
        self.assertFalse(accepts(p, "Hi" + block(invoke(("a", "true", "v")))))

    def test_unsupported_refused(self):
        cases = [({"type": "string", "minLength": 1}, "$.tools[0].function.parameters.properties.a.minLength"),
                 ({"type": "integer", "maximum": 3}, "$.tools[0].function.parameters.properties.a.maximum"),
                 ({"$ref": "#/x"}, "$.tools[0].function.parameters.properties.a.$ref"),
                 ({"oneOf": [{"type": "string"}]}, "$.tools[0].function.parameters.properties.a.oneOf"),
                 ({"type": "array", "items": [{"type": "string"}]},
                  "$.tools[0].function.parameters.properties.a.items"),
                 ({"type": "object", "additionalProperties": {"type": "string"}},
                  "$.tools[0].function.parameters.properties.a.additionalProperties"),
                 ({"type": "date"}, "$.tools[0].function.parameters.properties.a.type"),
                 ({"type": "object", "properties": {"b": {"pattern": "x"}}},
                  "$.tools[0].function.parameters.properties.a.properties.b.pattern"),
                 ({"enum": ["x" + STOP]}, "$.tools[0].function.parameters.properties.a.enum[0]")]
        for schema, path in cases:
            for fmt in ("gbnf", "lark", "structural-tag"):
                st, out, err = grammar({"tools": tools_with(a=schema), "tool_choice": "auto"}, fmt)
                self.assertEqual((st, out), (1, ""), err)
                self.assertIn(path + ":", err)
                self.assertIn("(DSML_ERR_SCHEMA)", err)

    def test_tool_choice(self):
        tools = tools_with(a={"type": "string"}) + [
            {"type": "function", "function": {"name": "g"}},
            {"type": "function", "function": {"name": "lookup", "namespace": "shop"}}]
        st, out, err = grammar({"tools": tools, "tool_choice": {"type": "function",
                                                                "function": {"name": "nope"}}})
        self.assertEqual(st, 1)
        self.assertIn("$.tool_choice.function.name", err)
        self.assertIn("DSML_ERR_UNKNOWN_TOOL", err)
        st, out, err = grammar({"tools": [], "tool_choice": "required"})
        self.assertIn("DSML_ERR_UNKNOWN_TOOL", err)
        st, out, err = grammar({"tools": tools, "tool_choice": "sometimes"})
        self.assertIn("$.tool_choice: ", err)
        self.assertIn("DSML_ERR_TYPE", err)
        st, out, err = grammar({"tools": tools, "tool_choice": {"type": "function"}})
        self.assertIn("DSML_ERR_MISSING_KEY", err)
        # by declared name, by the name a call writes, from the command line
        for choice, opts in ((None, ("--tool-choice", "lookup")), (None, ("--tool-choice", "shop::lookup")),
                             ({"type": "function", "function": {"name": "lookup"}}, ())):
            request = {"tools": tools} if choice is None else {"tools": tools, "tool_choice": choice}
            p = parser(must(request, "lark", *opts))
            self.assertTrue(accepts(p, block(invoke(name="shop::lookup"))))
            self.assertFalse(accepts(p, block(invoke(name="g"))))
            self.assertFalse(accepts(p, block(invoke(name="lookup"))))
        # the pre-release profile writes names as declared
        p = parser(must({"tools": tools, "tool_choice": "required"}, "lark", "--profile", "prerelease"))
        self.assertTrue(accepts(p, block(invoke(name="lookup"))))
        self.assertFalse(accepts(p, block(invoke(name="shop::lookup"))))


class Command(unittest.TestCase):
    def test_json_and_lazy(self):
        tools = tools_with(a={"type": "string"})
        for mode, pattern in (("--chat", "[\\s\\S]*?(\\n\\n<" + D + " calls>)[\\s\\S]*"),
                              ("--thinking", "[\\s\\S]*?</think>[\\s\\S]*?(\\n\\n<" + D +
                               " calls>)[\\s\\S]*")):
            r = json.loads(must({"tools": tools}, "gbnf", mode, "--json"))
            self.assertEqual((r["format"], r["lazy"], r["trigger"]),
                             ("gbnf", True, "\n\n<" + D + " calls>"))
            self.assertEqual(r["trigger_pattern"], pattern)
            self.assertTrue(r["grammar"].startswith('root ::= "\\n\\n<' + D + ' calls>\\n" calls\n'))
            gl.gbnf_check(r["grammar"])
            # the pattern finds the block where the reference does
            m = re.fullmatch(pattern, "a</think>b\n\n<" + D + " calls>\nc", re.S)
            self.assertIsNotNone(m)
            p = parser(gl.gbnf_to_lark(r["grammar"]))
            self.assertTrue(accepts(p, block(invoke(("a", "true", "x")))))
        # each dialect's trigger, and its block through the lazy grammar
        for profile, (blk, inv, par) in gl.TAGS.items():
            r = json.loads(must({"tools": tools}, "gbnf", "--chat", "--json", "--profile", profile))
            self.assertEqual(r["trigger"], "\n\n<" + D + blk + ">")
            self.assertEqual(r["trigger_pattern"], "[\\s\\S]*?(\\n\\n<" + D + blk + ">)[\\s\\S]*")
            p = parser(gl.gbnf_to_lark(r["grammar"]))
            call = ("\n\n<" + D + blk + ">\n<" + D + inv + ' name="f">\n<' + D + par +
                    ' name="a" string="true">x</' + D + par + ">\n</" + D + inv + ">\n</" + D +
                    blk + ">")
            self.assertTrue(accepts(p, call), profile)
            for other in {b for b, _, _ in gl.TAGS.values()} - {blk}:
                self.assertFalse(accepts(p, call.replace(blk + ">", other + ">")), profile)
        for choice in ("required", "none"):
            r = json.loads(must({"tools": tools, "tool_choice": choice}, "gbnf", "--json"))
            self.assertEqual((r["lazy"], r["trigger"], r["trigger_pattern"]), (False, None, None))
        r = json.loads(must({"tools": tools}, "structural-tag", "--json"))
        self.assertEqual((r["lazy"], r["rules"]), (False, 1))

    def test_thinking_from_the_request(self):
        tools = tools_with(a={"type": "string"})
        base = {"tools": tools, "tool_choice": "required",
                "messages": [{"role": "user", "content": "Hi"}]}
        for extra, thinking in (({}, False), ({"thinking_mode": "thinking"}, True),
                                ({"chat_template_kwargs": {"thinking": True}}, True)):
            out = must(dict(base, **extra), "gbnf")
            self.assertEqual(out.startswith("root ::= reasoning "), thinking, out[:80])
        st, out, err = grammar(dict(base, messages=[{"role": "robot", "content": ""}]), "gbnf")
        self.assertEqual(st, 1)
        self.assertIn("DSML_ERR_ROLE", err)

    def test_usage(self):
        p = subprocess.run([ARGS.binary, "grammar", "--help"], capture_output=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn(b"structural-tag", p.stdout)
        for bad in (["--format", "yacc"], ["--profile", "v9"], ["--tool-choice"], ["--bogus"],
                    ["a", "b"]):
            p = subprocess.run([ARGS.binary, "grammar", *bad], capture_output=True)
            self.assertEqual(p.returncode, 2, bad)
        p = subprocess.run([ARGS.binary, "grammar", "-"], input=b"[1]", capture_output=True)
        self.assertEqual(p.returncode, 1)


def main():
    global ARGS, LARK
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--testdata", required=True)
    ARGS, rest = ap.parse_known_args()
    LARK = gl.load_lark()
    if LARK is None:
        print("skipped: python3-lark is not installed (apt-get install python3-lark)")
        return 77
    import lark.exceptions  # noqa: F401
    prog = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
