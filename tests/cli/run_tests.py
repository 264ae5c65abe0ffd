#!/usr/bin/env python3
"""Tests of dsml-render, run through the built binary (stdlib only).

  run_tests.py --binary PATH --testdata DIR --snapshot FILE [--update-snapshot]

- the golden render cases: a sample (every 10th line) of render.jsonl with
  --strict, developer-render.jsonl in the default mode, prerelease-render.jsonl
  with --profile prerelease, and every line of v4-render.jsonl and
  v32-render.jsonl with --profile v4 and v32; the prompt bytes must match, or
  the command must fail with status 1 and a message where the reference
  refused;
- input formats and their detection, every option, every exit status;
- --json, --show (compared with tests/cli/show.snapshot, without colour),
  --diff (the hunks applied to the first prompt give the second);
- `dsml-render parse`, when the library has the parser (every line of the V4
  and V3.2 parse files);
- `dsml-render respond`: the chat.completion object, and SSE lines that add
  up to it at every chunk size; with --grammar the turn's grammar first.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ARGS = None
HERE = os.path.dirname(os.path.abspath(__file__))
BOS = "<｜begin▁of▁sentence｜>"


def run(*argv, stdin=None):
    """Runs the binary; returns (status, stdout bytes, stderr text)."""
    p = subprocess.run([ARGS.binary, *argv], input=stdin, capture_output=True,
                       timeout=120, env=dict(os.environ, NO_COLOR=""))
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def golden(name, step=10):
    with open(os.path.join(ARGS.testdata, name), encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i % step == 0:
                yield json.loads(line)


class TempFiles:
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
            f.write(data if isinstance(data, (str, bytes)) else json.dumps(data))
        return path


class Golden(TempFiles, unittest.TestCase):
    def check_file(self, name, options, step=10):
        cases = failures = 0
        for g in golden(name, step):
            cases += 1
            path = self.write("case.json", g["case"])
            # the golden files hold cases (detection refuses the ones whose
            # tools a request would render)
            status, out, err = run(*options, "--input-format", "case", path)
            expect = g["expect"]
            if "error" in expect:
                ok = (status == 1 and out == b"" and err.startswith("dsml-render: ")
                      and "(DSML_ERR_" in err)
                why = f"status {status}, stderr {err!r}"
            else:
                ok = status == 0 and out == expect["prompt"].encode("utf-8")
                why = f"status {status}, stderr {err!r}"
                if ok and expect.get("images"):
                    status, out, err = run(*options, "--input-format", "case", "--json", path)
                    ok = json.loads(out)["images"] == expect["images"]
                    why = "image records differ"
            if not ok:
                failures += 1
                print(f"{name} {g['id']}: {why}", file=sys.stderr)
        print(f"{name} through dsml-render {' '.join(options)}: {cases - failures}/{cases}",
              file=sys.stderr)
        self.assertGreater(cases, 10)
        self.assertEqual(failures, 0, f"{failures} of {cases} cases of {name}")

    def test_render_strict(self):
        self.check_file("render.jsonl", ["--strict"])

    def test_developer_default(self):
        self.check_file("developer-render.jsonl", [])

    def test_prerelease(self):
        self.check_file("prerelease-render.jsonl", ["--profile", "prerelease"])

    def test_v4(self):
        self.check_file("v4-render.jsonl", ["--profile", "v4"], step=1)

    def test_v32(self):
        self.check_file("v32-render.jsonl", ["--profile", "v32"], step=1)

    def test_refusal_names_the_json_path(self):
        path = self.write("bad.json", {"messages": [{"role": "user", "content": "hi"},
                                                    {"role": "wizard", "content": "x"}]})
        status, out, err = run(path)
        self.assertEqual(status, 1)
        self.assertEqual(out, b"")
        self.assertIn("$.messages[1]", err)
        self.assertIn(path, err)


USER = {"role": "user", "content": "What is 2+2?"}
SYSTEM = {"role": "system", "content": "Be brief."}
ASSISTANT = {"role": "assistant", "content": "4", "reasoning_content": "Add them."}
TOOLS = [{"type": "function", "function": {"name": "calc", "description": "Calculator",
                                           "parameters": {"type": "object"}}}]


class Formats(TempFiles, unittest.TestCase):
    def render(self, doc, *options):
        status, out, err = run(*options, self.write("in.json", doc))
        self.assertEqual(status, 0, err)
        return out

    def test_messages_array(self):
        self.assertEqual(self.render([USER]), self.render({"messages": [USER]}))
        out = run("--json", self.write("m.json", [USER]))[1]
        self.assertEqual(json.loads(out)["options"]["input_format"], "messages")

    def test_stdin(self):
        data = json.dumps({"messages": [USER]}).encode()
        expect = self.render({"messages": [USER]})
        self.assertEqual(run("-", stdin=data)[1], expect)
        self.assertEqual(run(stdin=data)[1], expect)

    def test_request_detection(self):
        # A request's tools go to a system message prepended when missing; a
        # case's tools go to messages[0].
        with_system = {"messages": [{"role": "system", "content": ""}, USER], "tools": TOOLS}
        as_case = self.render({"messages": [USER], "tools": TOOLS}, "--input-format", "case")
        for body in ({"model": "m", "messages": [USER], "tools": TOOLS},
                     {"messages": [USER], "tools": TOOLS, "temperature": 0.2},
                     {"messages": [USER], "tools": TOOLS, "model": "m", "stream": True}):
            self.assertEqual(self.render(body), self.render(with_system), body)
        self.assertNotEqual(as_case, self.render(with_system))
        out = run("--json", self.write("r.json", {"model": "m", "messages": [USER]}))[1]
        self.assertEqual(json.loads(out)["options"]["input_format"], "request")

    def test_case_only_keys_make_a_case(self):
        doc = {"messages": [SYSTEM, USER], "tools": TOOLS, "drop_thinking": True}
        self.assertEqual(self.render(doc), self.render(doc, "--input-format", "case"))

    def test_detection_never_drops_a_key(self):
        # Without "model", tools and a user message first: a case would not
        # render the tools (they vanished with status 0), a request would.
        body = {"messages": [USER], "tools": TOOLS, "thinking_mode": "chat"}
        status, out, err = run(self.write("b.json", body))
        self.assertEqual((status, out), (1, b""))
        self.assertIn("$.tools: without \"model\"", err)
        self.assertIn("--input-format case|request", err)
        self.assertIn("## Tools", self.render(body, "--input-format", "request").decode())
        # what a case knows and what it does not: refused, naming the key
        for doc, key in (({"messages": [USER], "drop_thinking": True, "stream": True}, "stream"),
                         ({"model": "m", "messages": [USER], "context": []}, "model"),
                         ({"messages": [USER], "context": [], "tool_choice": "auto"},
                          "tool_choice")):
            status, out, err = run(self.write("d.json", doc))
            self.assertEqual((status, out), (1, b""), doc)
            self.assertIn(f"$.{key}: the document fits no single format", err)
            self.assertIn("--input-format", err)
        # one format only: as before
        self.assertEqual(self.render({"messages": [SYSTEM, USER], "tools": TOOLS}),
                         self.render({"messages": [SYSTEM, USER], "tools": TOOLS},
                                     "--input-format", "case"))
        self.assertEqual(self.render({"messages": [USER], "thinking_mode": "thinking"}),
                         self.render({"messages": [USER], "thinking_mode": "thinking"},
                                     "--input-format", "case"))
        for args in (("--diff", "prerelease"), ("--json",), ("--show",)):
            self.assertEqual(run(*args, self.write("b.json", body))[0], 1, args)

    def test_input_format_forced(self):
        doc = {"messages": [USER], "tools": TOOLS}
        with_system = {"messages": [{"role": "system", "content": ""}, USER], "tools": TOOLS}
        self.assertEqual(self.render(doc, "--input-format", "request"),
                         self.render(with_system))
        self.assertEqual(self.render(doc, "--input-format=case"),
                         self.render({"messages": [USER]}))
        self.assertEqual(self.render([USER], "--input-format", "messages"),
                         self.render([USER]))
        status, out, err = run("--input-format", "messages", self.write("o.json", doc))
        self.assertEqual((status, out), (1, b""))
        self.assertIn("messages must be a list", err)

    def test_input_format_other_apis(self):
        # never detected: an Anthropic or Responses body renders as its chat form
        chat = {"messages": [{"role": "system", "content": "S"}, USER],
                "thinking_mode": "thinking"}
        anthropic = {"model": "m", "max_tokens": 9, "system": "S", "messages": [USER],
                     "thinking": {"type": "enabled"}}
        responses = {"model": "m", "instructions": "S", "input": [USER]}
        self.assertEqual(self.render(anthropic, "--input-format", "anthropic"),
                         self.render(chat))
        self.assertEqual(self.render(responses, "--input-format", "responses", "--thinking"),
                         self.render(chat))
        self.assertNotEqual(self.render(anthropic), self.render(chat))
        self.assertEqual(self.render(anthropic, "--input-format", "anthropic", "--chat"),
                         self.render({"messages": chat["messages"]}))
        out = run("--json", "--input-format", "responses", self.write("r.json", responses))[1]
        self.assertEqual(json.loads(out)["options"]["input_format"], "responses")
        del anthropic["max_tokens"]
        status, out, err = run("--input-format", "anthropic", self.write("a.json", anthropic))
        self.assertEqual((status, out), (1, b""))
        self.assertIn("$.max_tokens", err)

    def test_request_thinking_switches(self):
        thinking = self.render({"messages": [USER], "thinking_mode": "thinking"})
        for body in ({"model": "m", "messages": [USER], "chat_template_kwargs": {"thinking": True}},
                     {"model": "m", "messages": [USER], "thinking": {"type": "enabled"}}):
            self.assertEqual(self.render(body), thinking)
            self.assertEqual(self.render(body, "--chat"), self.render([USER]))


class Options(TempFiles, unittest.TestCase):
    def render(self, doc, *options):
        status, out, err = run(*options, self.write("in.json", doc))
        self.assertEqual(status, 0, err)
        return out.decode("utf-8")

    def test_thinking_and_chat_override_the_file(self):
        chat = {"messages": [USER]}
        thinking = {"messages": [USER], "thinking_mode": "thinking"}
        self.assertEqual(self.render(chat, "--thinking"), self.render(thinking))
        self.assertEqual(self.render(thinking, "--chat"), self.render(chat))
        self.assertTrue(self.render(thinking).endswith("<｜Assistant｜><think>"))
        self.assertTrue(self.render(chat).endswith("<｜Assistant｜></think>"))

    def test_effort(self):
        doc = {"messages": [USER], "thinking_mode": "thinking", "reasoning_effort": "max"}
        self.assertIn("Reasoning Effort: 100 ", self.render(doc))
        self.assertIn("Reasoning Effort: 50 ", self.render(doc, "--effort", "low"))
        self.assertIn("Reasoning Effort: 33 ", self.render(doc, "--effort=33"))
        self.assertIn("Reasoning Effort: 25 ",
                      self.render(doc, "--effort", "low", "--profile", "prerelease"))
        self.assertIn("Reasoning Effort: 75 ",
                      self.render(doc, "--effort", "xhigh", "--profile=prerelease"))
        for bad in ("0", "101", "xhigh", "medium"):
            status, out, err = run("--effort", bad, self.write("e.json", doc))
            self.assertEqual((status, out), (1, b""), bad)
            self.assertIn("DSML_ERR_EFFORT", err)

    def test_keep_thinking(self):
        doc = {"messages": [USER, ASSISTANT, USER], "thinking_mode": "thinking",
               "drop_thinking": True}
        self.assertNotIn("Add them.", self.render(doc))
        kept = self.render(doc, "--keep-thinking")
        self.assertIn("Add them.</think>", kept)
        del doc["drop_thinking"]
        doc["drop_thinking"] = False
        self.assertEqual(self.render(doc), kept)

    def test_no_bos(self):
        doc = {"messages": [USER], "add_default_bos_token": True}
        self.assertTrue(self.render(doc).startswith(BOS))
        self.assertEqual(self.render(doc, "--no-bos"), self.render(doc)[len(BOS):])

    def test_context(self):
        ctx = [{"role": "user", "content": "Earlier question"},
               {"role": "assistant", "content": "Earlier answer"}]
        ctx_path = self.write("ctx.json", ctx)
        doc = {"messages": [USER]}
        out = self.render(doc, "--context", ctx_path)
        self.assertEqual(out, self.render({"messages": [USER], "context": ctx}))
        self.assertFalse(out.startswith(BOS))
        # --context replaces the case's own context
        other = {"messages": [USER], "context": [{"role": "user", "content": "x"}, ASSISTANT]}
        self.assertEqual(self.render(other, "--context=" + ctx_path), out)
        # and applies to a messages array and a request body as well
        self.assertEqual(self.render([USER], "--context", ctx_path), out)
        self.assertEqual(self.render({"model": "m", "messages": [USER]}, "--context", ctx_path),
                         out)
        status, _, err = run("--context", os.path.join(self.tmp.name, "missing.json"),
                             self.write("d.json", doc))
        self.assertEqual(status, 1)
        self.assertIn("missing.json", err)

    def test_strict_refuses_developer(self):
        doc = {"messages": [{"role": "developer", "content": "Be brief."}, USER]}
        self.assertTrue(self.render(doc).startswith(BOS + "<｜User｜>Be brief."))
        status, out, err = run("--strict", self.write("dev.json", doc))
        self.assertEqual((status, out), (1, b""))
        self.assertIn("$.messages[0]", err)

    def test_guard(self):
        doc = {"messages": [{"role": "user", "content": "hi <｜end▁of▁sentence｜>"}]}
        self.render(doc)
        status, out, err = run("--guard", self.write("g.json", doc))
        self.assertEqual((status, out), (1, b""))
        self.assertIn("DSML_ERR_SPECIAL_TOKEN", err)

    def test_profile(self):
        doc = {"messages": [USER], "thinking_mode": "thinking"}
        self.assertIn("Reasoning Effort", self.render(doc, "--profile", "v41") + "Reasoning Effort")
        for name in ("prerelease", "v4", "v32"):
            out = run("--json", "--profile", name, self.write("p.json", doc))[1]
            self.assertEqual(json.loads(out)["profile"], name)

    def test_json(self):
        with open(os.path.join(HERE, "show_case.json"), encoding="utf-8") as f:
            doc = json.load(f)
        path = self.write("j.json", doc)
        status, out, err = run("--json", path)
        self.assertEqual(status, 0, err)
        self.assertTrue(out.endswith(b"}\n"))
        d = json.loads(out)
        self.assertEqual(sorted(d), ["images", "options", "profile", "prompt", "segments"])
        prompt = d["prompt"].encode("utf-8")
        self.assertEqual(prompt, run(path)[1])
        self.assertEqual(d["images"], [{"type": "image", "url": "https://example.com/sign.png"}])
        self.assertEqual(d["profile"], "v41")
        self.assertEqual([s["role"] for s in d["segments"]],
                         ["system", "user", "assistant", "user"])
        self.assertEqual(d["segments"][0]["start"], len(BOS.encode()))
        for a, b in zip(d["segments"], d["segments"][1:]):
            self.assertEqual(a["end"], b["start"])
        self.assertEqual(d["segments"][-1]["end"], len(prompt))
        self.assertEqual(d["options"], {
            "input_format": "case", "thinking_mode": "thinking", "reasoning_effort": "max",
            "drop_thinking": True, "add_default_bos_token": True, "strict": False,
            "guard": False, "context": None})
        d = json.loads(run("--json", "--chat", "--effort", "7", "--no-bos", "--keep-thinking",
                           "--strict", path)[1])
        self.assertEqual(d["options"], {
            "input_format": "case", "thinking_mode": "chat", "reasoning_effort": 7,
            "drop_thinking": False, "add_default_bos_token": False, "strict": True,
            "guard": False, "context": None})


def strip_sgr(b):
    return re.sub(rb"\x1b\[[0-9;]*m", b"", b)


class Show(TempFiles, unittest.TestCase):
    CASE = os.path.join(HERE, "show_case.json")

    def test_snapshot(self):
        status, out, err = run("--show", "--color=never", self.CASE)
        self.assertEqual(status, 0, err)
        if ARGS.update_snapshot:
            with open(ARGS.snapshot, "wb") as f:
                f.write(out)
        with open(ARGS.snapshot, "rb") as f:
            expect = f.read()
        self.assertEqual(out.decode("utf-8").splitlines(), expect.decode("utf-8").splitlines())
        self.assertEqual(out, expect)

    def test_colour(self):
        plain = run("--show", "--no-color", self.CASE)[1]
        self.assertNotIn(b"\x1b[", plain)
        self.assertEqual(run("--show", self.CASE)[1], plain)  # not a terminal
        coloured = run("--show", "--color", self.CASE)[1]
        self.assertIn(b"\x1b[1;36m<\xef\xbd\x9cUser\xef\xbd\x9c>\x1b[0m", coloured)
        self.assertEqual(strip_sgr(run("--show", "--color=always", self.CASE)[1]),
                         strip_sgr(coloured))
        # without colour, tokens are bracketed instead
        self.assertIn("⟦<｜User｜>⟧".encode(), plain)
        self.assertNotIn("⟦".encode(), coloured)

    def test_oneline(self):
        out = run("--show", "--oneline", "--color=never", self.CASE)[1].decode()
        lines = out.splitlines()
        self.assertEqual(len(lines), 2 + 5)  # header, options, BOS + 4 segments
        self.assertTrue(lines[3].startswith("#0 system"))
        self.assertIn("value⟨U+200B⟩", lines[3])
        self.assertIn("⟦<｜deepseek_image｜>⟧«image 1: https://example.com/sign.png»", lines[4])


def lines_of(text):
    """Lines split at '\n' only (str.splitlines also splits at U+2028...)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def apply_unified(a, diff):
    """Applies a unified diff (as text) to the text `a`; returns the result."""
    src = lines_of(a)
    out, pos = [], 0
    lines = lines_of(diff)
    assert lines[0].startswith("--- ") and lines[1].startswith("+++ "), lines[:2]
    i = 2
    while i < len(lines):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n", lines[i])
        assert m, lines[i]
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out.extend(src[pos:start])
        pos = start
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            kind, text = lines[i][0], lines[i][1:]
            if i + 1 < len(lines) and lines[i + 1] == "\\ No newline at end of file\n":
                text = text[:-1]
                i += 1
            if kind in " -":
                assert src[pos] == text, (src[pos], text)
                pos += 1
            if kind in " +":
                out.append(text)
            i += 1
    out.extend(src[pos:])
    return "".join(out)


class Diff(TempFiles, unittest.TestCase):
    def test_identical(self):
        path = self.write("c.json", {"messages": [USER]})
        self.assertEqual(run("--diff", "prerelease", path), (0, b"", ""))
        self.assertEqual(run("--diff=v41", path), (0, b"", ""))

    def test_differs(self):
        path = self.write("c.json", {"messages": [USER], "thinking_mode": "thinking"})
        status, out, err = run("--diff", "prerelease", path)
        self.assertEqual(status, 1, err)
        text = out.decode()
        self.assertTrue(text.startswith("--- v41\n+++ prerelease\n@@ -1,3 +1,3 @@\n"), text)
        self.assertIn("-" + BOS + "<｜System｜>Reasoning Effort: 75 ", text)
        self.assertIn("+" + BOS + "<｜System｜>Reasoning Effort: 50 ", text)
        # the other way round
        text = run("--profile", "prerelease", "--diff", "v41", path)[1].decode()
        self.assertTrue(text.startswith("--- prerelease\n+++ v41\n"))

    def test_across_dialects(self):
        # a lane moving from V4 to V4.1: the tags, the System token and the
        # effort line change; V3.2 puts the tool results after the calls
        doc = {"thinking_mode": "thinking", "messages": [
            {"role": "system", "content": "Be brief."}, USER,
            {"role": "assistant", "content": "", "reasoning_content": "Add.", "tool_calls": [
                {"type": "function", "function": {"name": "calc", "arguments": "{\"a\": 2}"}}]},
            {"role": "tool", "content": "4"}]}
        path = self.write("c.json", doc)
        status, out, err = run("--profile", "v4", "--diff", "v41", path)
        self.assertEqual(status, 1, err)
        text = out.decode()
        self.assertTrue(text.startswith("--- v4\n+++ v41\n"), text)
        self.assertIn("-" + BOS + "Be brief.", text)
        self.assertIn("+" + BOS + "<｜System｜>Reasoning Effort: 75 ", text)
        self.assertIn("-<｜DSML｜tool_calls>\n", text)
        self.assertIn("+<｜DSML｜ calls>\n", text)
        a, b = run("--profile", "v4", path)[1], run(path)[1]
        self.assertEqual(apply_unified(a.decode(), text), b.decode())
        text = run("--profile", "v32", "--diff", "v4", path)[1].decode()
        self.assertTrue(text.startswith("--- v32\n+++ v4\n"), text)
        self.assertIn("-</｜DSML｜function_calls><｜end▁of▁sentence｜>\n", text)
        self.assertIn("<function_results>", text)
        # a refusal on one side names the profile that refused
        path = self.write("e.json", dict(doc, reasoning_effort=50))
        status, out, err = run("--profile", "v41", "--diff", "v4", path)
        self.assertEqual((status, out), (1, b""))
        self.assertIn("(profile v4)", err)
        self.assertIn("DSML_ERR_EFFORT", err)
        self.assertEqual(run("--profile", "v32", "--diff=v32", self.write("u.json", {"messages": [USER]})),
                         (0, b"", ""))

    def test_hunks_rebuild_the_second_prompt(self):
        checked = 0
        for g in golden("developer-render.jsonl", step=7):
            if "error" in g["expect"]:
                continue
            path = self.write("c.json", g["case"])
            s1, a, _ = run(path)
            s2, b, _ = run("--profile", "prerelease", path)
            if s1 or s2:
                continue
            status, out, err = run("--diff", "prerelease", path)
            self.assertEqual(status, 1 if a != b else 0, g["id"])
            if a != b:
                self.assertEqual(apply_unified(a.decode(), out.decode()), b.decode(), g["id"])
                checked += 1
        self.assertGreater(checked, 5)

    def test_against_a_file(self):
        # --diff-file: the prompt against text captured elsewhere, for
        # inserted, removed and changed lines, with and without a final
        # newline on either side.
        base = [f"line {i}" for i in range(40)]
        variants = [
            base,
            base[:5] + ["new"] + base[5:],
            base[:10] + base[12:30] + ["x", "y"] + base[31:],
            ["top"] + base + ["bottom"],
            base[20:],
            base[::-1],
            [],
        ]
        case = {"messages": [{"role": "system", "content": "\n".join(base)}]}
        path = self.write("a.json", case)
        prompt = run(path)[1].decode()
        for i, var in enumerate(variants):
            for tail in ("", "\n"):
                other = prompt.replace("\n".join(base), "\n".join(var)) + tail
                status, out, err = run("--diff-file", self.write("b.txt", other), path)
                self.assertEqual(status, 0 if other == prompt else 1, (i, tail, err))
                if status == 1:
                    text = out.decode()
                    self.assertTrue(text.startswith("--- v41\n+++ "), text)
                    self.assertEqual(apply_unified(prompt, text), other, (i, tail))
                else:
                    self.assertEqual(out, b"")
        # a missing file is an error
        self.assertEqual(run("--diff-file", os.path.join(self.tmp.name, "no"), path)[0], 1)


def has_parser():
    status, _, err = run("parse", "-", stdin=b"hi<\xef\xbd\x9cend\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>")
    return "no completion parser" not in err


class Parse(TempFiles, unittest.TestCase):
    def setUp(self):
        super().setUp()
        if not has_parser():
            self.skipTest("this libdsml has no completion parser")

    def events(self, out):
        """The event lines of --stream output: [(kind, rest)] and the message."""
        events, message = [], None
        for line in out.decode("utf-8").split("\n")[:-1]:
            kind, _, rest = line.partition(" ")
            rest = rest.lstrip(" ")
            if kind == "message":
                message = json.loads(rest)
            else:
                events.append((kind, rest))
        return events, message

    def check_file(self, name, options, step=10):
        cases = failures = 0
        for g in golden(name, step):
            cases += 1
            path = self.write("completion.txt", g["text"].encode("utf-8"))
            mode = ["--thinking"] if g["thinking_mode"] == "thinking" else []
            status, out, err = run("parse", *options, *mode, path)
            expect = g["expect"]
            if "error" in expect:
                ok = status == 1 and out == b"" and "(DSML_ERR_" in err
            else:
                ok = status == 0 and json.loads(out) == expect["message"]
                if ok:
                    # streamed in 3-byte chunks: the same message, and the
                    # events add up to it
                    s2, out2, err = run("parse", *options, *mode, "--stream", "3", path)
                    events, message = self.events(out2)
                    msg = expect["message"]
                    text = {"reasoning": "", "content": ""}
                    args = {}
                    for kind, rest in events:
                        if kind in text:
                            text[kind] += json.loads(rest)
                        elif kind == "arguments":
                            idx, _, frag = rest.partition(" ")
                            args[idx] = args.get(idx, "") + json.loads(frag)
                    ok = (s2 == 0 and message == msg
                          and text["reasoning"] == (msg.get("reasoning_content") or "")
                          and text["content"] == (msg.get("content") or "")
                          and [args.get(f"#{i}") for i in range(len(msg.get("tool_calls") or []))]
                          == [c["function"]["arguments"] for c in msg.get("tool_calls") or []])
            if not ok:
                failures += 1
                print(f"{name} {g['id']}: status {status}, stderr {err!r}", file=sys.stderr)
        print(f"{name} through dsml-render parse {' '.join(options)}: {cases - failures}/{cases}",
              file=sys.stderr)
        self.assertGreater(cases, 10)
        self.assertEqual(failures, 0, f"{failures} of {cases} cases of {name}")

    def test_golden_strict(self):
        self.check_file("parse.jsonl", ["--strict"])

    def test_golden_prerelease(self):
        self.check_file("prerelease-parse.jsonl", ["--strict", "--profile", "prerelease"])

    def test_golden_v4(self):
        self.check_file("v4-parse.jsonl", ["--strict", "--profile", "v4"], step=1)

    def test_golden_v32(self):
        self.check_file("v32-parse.jsonl", ["--strict", "--profile", "v32"], step=1)

    def test_stream_events(self):
        text = ("Let me check.</think>Checking.\n\n<｜DSML｜ calls>\n"
                "<｜DSML｜ invoke name=\"weather\">\n"
                "<｜DSML｜ parameter name=\"city\" string=\"true\">Zürich</｜DSML｜ parameter>\n"
                "<｜DSML｜ parameter name=\"days\" string=\"false\">2</｜DSML｜ parameter>\n"
                "</｜DSML｜ invoke>\n</｜DSML｜ calls><｜end▁of▁sentence｜>")
        path = self.write("c.txt", text)
        status, whole, err = run("parse", "--thinking", path)
        self.assertEqual(status, 0, err)
        msg = json.loads(whole)
        self.assertEqual(msg["reasoning_content"], "Let me check.")
        self.assertEqual(msg["tool_calls"][0]["function"]["arguments"],
                         '{"city": "Zürich", "days": 2}')
        for n in ("1", "2", "7", "100000"):
            status, out, err = run("parse", "--thinking", "--stream", n, path)
            self.assertEqual(status, 0, err)
            events, message = self.events(out)
            self.assertEqual(message, msg, n)
            kinds = [k for k, _ in events]
            self.assertIn("call_begin", kinds)
            self.assertIn("call_end", kinds)
            begin = next(r for k, r in events if k == "call_begin")
            self.assertTrue(begin.startswith('#0 name="weather"'), begin)
            end = next(r for k, r in events if k == "call_end")
            self.assertTrue(end.startswith("#0 complete"), end)

    def test_lenient_and_strict(self):
        path = self.write("bad.txt", "no end of sentence")
        status, out, err = run("parse", "--strict", path)
        self.assertEqual((status, out), (1, b""))
        self.assertIn("DSML_ERR_MISSING_EOS", err)
        status, out, err = run("parse", path)
        self.assertEqual(status, 0, err)
        self.assertEqual(json.loads(out)["content"], "no end of sentence")
        status, out, _ = run("parse", "--stream", "4", path)
        self.assertIn(b"diagnostic  DSML_ERR_MISSING_EOS", out)


    def test_declared_tools(self):
        text = ('\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="rm">\n</｜DSML｜ invoke>\n'
                '</｜DSML｜ calls><｜end▁of▁sentence｜>')
        path = self.write("c.txt", text)
        self.assertEqual(run("parse", "--strict", path)[0], 0)
        tools = self.write("tools.json", TOOLS)
        status, out, err = run("parse", "--strict", "--tools", tools, path)
        self.assertEqual((status, out), (1, b""))
        self.assertIn("DSML_ERR_UNKNOWN_TOOL", err)
        self.assertEqual(run("parse", "--strict", "--tools",
                             self.write("t2.json", [{"type": "function", "function": {"name": "rm"}}]),
                             path)[0], 0)


class ParseUsage(TempFiles, unittest.TestCase):
    def test_usage(self):
        path = self.write("c.txt", "x")
        for argv in (["--stream", "0", path], ["--stream", "x", path], ["--stream"],
                     ["--profile", "v3", path], ["--bogus", path], [path, path],
                     ["--tools"]):
            status, out, err = run("parse", *argv)
            self.assertEqual((status, out), (2, b""), argv)
            self.assertIn("dsml-render parse --help", err)
        status, out, _ = run("parse", "--help")
        self.assertEqual(status, 0)
        self.assertIn(b"--stream", out)


class ShowRequest(TempFiles, unittest.TestCase):
    def test_added_system_message(self):
        # the system message a request's tools are attached to has no index
        # in the body: labelled "+ system", the body's messages by theirs
        body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}],
                "tools": [{"type": "function", "function": {"name": "f"}}]}
        status, out, err = run("--show", "--no-color", self.write("r.json", body))
        self.assertEqual(status, 0, err)
        labels = [line.split("│")[0].strip() for line in out.decode().splitlines()
                  if "│" in line and line.split("│")[0].strip()]
        self.assertEqual(labels, ["-", "+ system", "#0 user"])


class Respond(TempFiles, unittest.TestCase):
    """`dsml-render respond`: the chat.completion object, and the SSE lines
    that add up to it at every chunk size."""

    REQUEST = {"model": "deepseek-v4.1", "thinking_mode": "thinking",
               "messages": [{"role": "user", "content": "Weather in Zürich?"}],
               "tools": [{"type": "function", "function": {"name": "weather"}}]}
    # the engine stopped at the EOS and left it out of the text
    TEXT = ("Look it up.</think>\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"weather\">\n"
            "<｜DSML｜ parameter name=\"city\" string=\"true\">Zürich \"Süd\"</｜DSML｜ parameter>\n"
            "</｜DSML｜ invoke>\n</｜DSML｜ calls>")
    FIXED = ["--seed", "7", "--created", "1700000000", "--id", "chatcmpl-t"]

    def files(self, request=None, text=None):
        return (self.write("req.json", request or self.REQUEST),
                self.write("c.txt", text if text is not None else self.TEXT))

    def completion(self, *argv):
        status, out, err = run("respond", *self.FIXED, *argv)
        self.assertEqual(status, 0, err)
        self.assertTrue(out.endswith(b"\n") and out.count(b"\n") == 1)
        return json.loads(out), err

    @staticmethod
    def add_up(out):
        """The message the SSE lines add up to, and the finish reason."""
        events = out.decode("utf-8").split("\n\n")
        assert events.pop() == "", "ends with a blank line"
        assert events.pop() == "data: [DONE]"
        msg, finish = {"role": "assistant"}, None
        for i, ev in enumerate(events):
            assert ev.startswith("data: ") and "\n" not in ev, ev
            chunk = json.loads(ev[6:])
            assert chunk["object"] == "chat.completion.chunk" and chunk["id"] == "chatcmpl-t"
            (choice,) = chunk["choices"]
            assert finish is None
            finish = choice["finish_reason"]
            for key, value in choice["delta"].items():
                if key in ("content", "reasoning_content"):
                    msg[key] = msg.get(key, "") + value
                elif key == "tool_calls":
                    (call,) = value
                    calls = msg.setdefault("tool_calls", [])
                    if "id" in call:
                        assert call["index"] == len(calls) and call["type"] == "function"
                        assert call["function"]["name"]
                        calls.append({k: v for k, v in call.items() if k != "index"})
                    else:
                        calls[call["index"]]["function"]["arguments"] += call["function"]["arguments"]
                else:
                    assert key == "role" and i == 0
        return msg, finish

    def test_completion_object(self):
        req, text = self.files()
        obj, err = self.completion(req, text)
        self.assertEqual(err, "")  # no missing-EOS note: --end stop is the default
        self.assertEqual((obj["object"], obj["id"], obj["created"], obj["model"]),
                         ("chat.completion", "chatcmpl-t", 1700000000, "deepseek-v4.1"))
        (choice,) = obj["choices"]
        self.assertEqual(choice["finish_reason"], "tool_calls")
        msg = choice["message"]
        self.assertIsNone(msg["content"])
        self.assertEqual(msg["reasoning_content"], "Look it up.")
        (call,) = msg["tool_calls"]
        self.assertRegex(call["id"], r"^call_[A-Za-z0-9]{24}$")
        self.assertEqual(call["function"], {"name": "weather",
                                            "arguments": '{"city": "Zürich \\"Süd\\""}'})
        # the same seed, the same ids
        self.assertEqual(self.completion(req, text)[0], obj)

    def test_stream_adds_up_at_every_chunk_size(self):
        req, text = self.files()
        want = self.completion(req, text)[0]["choices"][0]
        for n in range(1, len(self.TEXT.encode()) + 2):
            status, out, err = run("respond", *self.FIXED, "--stream", str(n), req, text)
            self.assertEqual(status, 0, err)
            msg, finish = self.add_up(out)
            self.assertEqual(finish, want["finish_reason"], n)
            self.assertEqual(msg, {k: v for k, v in want["message"].items() if v is not None}, n)

    def test_other_apis(self):
        """--api anthropic / responses: each API's object, and its events."""
        schema = {"type": "object", "properties": {"city": {"type": "string"}}}
        bodies = {
            "anthropic": {"model": "m", "max_tokens": 50, "thinking": {"type": "enabled"},
                          "messages": [{"role": "user", "content": "Weather?"}],
                          "tools": [{"name": "weather", "input_schema": schema}]},
            "responses": {"model": "m", "input": "Weather?", "reasoning": {"effort": "high"},
                          "tools": [{"type": "function", "name": "weather", "parameters": schema}]},
        }
        for api, body in bodies.items():
            req, text = self.files(request=body)
            status, out, err = run("respond", "--seed", "7", "--api", api, req, text)
            self.assertEqual(status, 0, err)
            obj = json.loads(out)
            if api == "anthropic":
                self.assertEqual((obj["type"], obj["stop_reason"]), ("message", "tool_use"))
                self.assertEqual([b["type"] for b in obj["content"]], ["thinking", "tool_use"])
                self.assertEqual(obj["content"][1]["input"], {"city": 'Zürich "Süd"'})
            else:
                self.assertEqual((obj["object"], obj["status"]), ("response", "completed"))
                self.assertEqual([i["type"] for i in obj["output"]], ["reasoning", "function_call"])
                self.assertEqual(obj["output"][0]["summary"][0]["text"], "Look it up.")
            status, out, err = run("respond", "--seed", "7", "--api", api, "--stream", "3", req, text)
            self.assertEqual(status, 0, err)
            events = out.decode("utf-8").split("\n\n")
            self.assertEqual(events.pop(), "")
            names = []
            for ev in events:
                head, data = ev.split("\n")
                self.assertTrue(head.startswith("event: ") and data.startswith("data: "), ev)
                self.assertEqual(json.loads(data[6:])["type"], head[7:])
                names.append(head[7:])
            self.assertEqual(names[-1], "message_stop" if api == "anthropic" else "response.completed")
        status, _, err = run("respond", "--api", "gemini", req, text)
        self.assertEqual(status, 2, err)

    def test_anthropic_signature(self):
        """--signature: the thinking block's, and its signature_delta last."""
        body = {"model": "m", "max_tokens": 50, "thinking": {"type": "enabled"},
                "messages": [{"role": "user", "content": "Weather?"}]}
        req, text = self.files(request=body, text="Think.</think>Sunny.")
        status, out, err = run("respond", "--api", "anthropic", "--signature", "s-1", req, text)
        self.assertEqual(status, 0, err)
        self.assertEqual(json.loads(out)["content"][0],
                         {"type": "thinking", "thinking": "Think.", "signature": "s-1"})
        status, out, err = run("respond", "--api", "anthropic", "--signature", "s-1",
                               "--stream", "2", req, text)
        self.assertEqual(status, 0, err)
        events = [json.loads(ev.split("\n")[1][6:])
                  for ev in out.decode("utf-8").split("\n\n") if ev]
        at = [i for i, e in enumerate(events) if e.get("delta", {}).get("type") == "signature_delta"]
        self.assertEqual(len(at), 1)
        self.assertEqual(events[at[0]]["delta"]["signature"], "s-1")
        self.assertEqual(events[at[0] + 1], {"type": "content_block_stop", "index": 0})
        status, _, err = run("respond", "--api", "anthropic", "--signature", req, text)
        self.assertEqual(status, 2, err)

    def test_anthropic_usage_streamed(self):
        """--usage: message_start carries the prompt's count, message_delta the output's."""
        body = {"model": "m", "max_tokens": 50, "stream": True,
                "messages": [{"role": "user", "content": "Hi"}]}
        req, text = self.files(request=body, text="Hello.")
        status, out, err = run("respond", "--api", "anthropic", "--usage", "11,4,0",
                               "--stream", "2", req, text)
        self.assertEqual(status, 0, err)
        events = [json.loads(ev.split("\n")[1][6:])
                  for ev in out.decode("utf-8").split("\n\n") if ev]
        self.assertEqual(events[0]["type"], "message_start")
        self.assertEqual(events[0]["message"]["usage"]["input_tokens"], 11)
        (delta,) = [e for e in events if e["type"] == "message_delta"]
        self.assertEqual(delta["usage"]["output_tokens"], 4)

    def test_end_reasons(self):
        req, text = self.files(text="Hello, this is")
        obj, err = self.completion("--end", "length", req, text)
        self.assertEqual(obj["choices"][0]["finish_reason"], "length")
        self.assertEqual(err, "")
        obj, _ = self.completion("--end", "abort", req, text)
        self.assertEqual(obj["choices"][0]["finish_reason"], "abort")
        # a call cut by the length limit is not sent (the default; --hold-calls
        # is accepted); with --stream-arguments it was sent in part, reported
        req, text = self.files(text=self.TEXT[:-60])
        for extra in ([], ["--hold-calls"]):
            status, out, err = run("respond", *self.FIXED, "--stream", "3", *extra,
                                   "--end", "length", req, text)
            self.assertEqual(status, 0, err)
            msg, finish = self.add_up(out)
            self.assertEqual(finish, "length")
            self.assertNotIn("tool_calls", msg)
            self.assertIn("is incomplete: not sent", err)
        status, out, err = run("respond", *self.FIXED, "--stream", "3", "--stream-arguments",
                               "--end", "length", req, text)
        self.assertEqual(status, 0, err)
        self.assertIn("tool_calls", self.add_up(out)[0])
        self.assertIn("sent in part, not to be executed", err)

    def test_safe_defaults(self):
        # the example: an undeclared tool is no call; its markup is not content
        ex = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
        obj, err = self.completion(os.path.join(ex, "request.json"),
                                   os.path.join(ex, "completion.txt"))
        (choice,) = obj["choices"]
        self.assertEqual(choice["finish_reason"], "stop")
        self.assertNotIn("tool_calls", choice["message"])
        self.assertNotIn("lookup_order", choice["message"]["content"])
        self.assertIn("DSML_ERR_UNKNOWN_TOOL", err)
        # --keep-raw keeps it as content
        obj, _ = self.completion("--keep-raw", os.path.join(ex, "request.json"),
                                 os.path.join(ex, "completion.txt"))
        self.assertIn("lookup_order", obj["choices"][0]["message"]["content"])
        # the thinking-off leak: the deliberation is reasoning, </think> is gone
        req, text = self.files(request={"messages": [USER], "thinking": {"type": "disabled"}},
                               text="We need answer only number. 17*23=391.</think>\n391")
        msg = self.completion(req, text)[0]["choices"][0]["message"]
        self.assertEqual((msg["content"], msg["reasoning_content"]),
                         ("\n391", "We need answer only number. 17*23=391."))
        # a window shorter than the deliberation: content, the tag still dropped
        msg = self.completion("--think-window", "8", req, text)[0]["choices"][0]["message"]
        self.assertEqual(msg["content"], "We need answer only number. 17*23=391.\n391")
        # an id that is not UTF-8: refused, never invalid JSON
        status, out, err = run("respond", "--id", b"\xff".decode("utf-8", "surrogateescape"),
                               req, text)
        self.assertEqual((status, out), (1, b""))
        self.assertIn("DSML_ERR_UTF8", err)

    def test_stop_usage_choice(self):
        req, text = self.files(request={"model": "m", "messages": [USER], "stop": "END",
                                        "thinking": {"type": "disabled"}, "stream": True,
                                        "stream_options": {"include_usage": True}},
                               text="Hello END more")
        obj, _ = self.completion("--usage", "5,3,0", "--choice-index", "1", req, text)
        (choice,) = obj["choices"]
        self.assertEqual((choice["index"], choice["message"]["content"], choice["finish_reason"]),
                         (1, "Hello ", "stop"))
        self.assertEqual(obj["usage"], {"prompt_tokens": 5, "completion_tokens": 3,
                                        "total_tokens": 8,
                                        "completion_tokens_details": {"reasoning_tokens": 0}})
        for n in range(1, 16):
            status, out, err = run("respond", *self.FIXED, "--stream", str(n), "--usage", "5,3,0",
                                   req, text)
            self.assertEqual(status, 0, err)
            events = out.decode().split("\n\n")
            usage = json.loads(events[-3][6:])
            self.assertEqual((usage["choices"], usage["usage"]["total_tokens"]), ([], 8))
            self.assertEqual(self.add_up(("\n\n".join(events[:-3] + events[-2:])).encode())[0]
                             ["content"], "Hello ", n)
        for argv in (["--usage", "1,2"], ["--usage", "1,2,3"], ["--choice-index", "x"],
                     ["--think-window", "0"]):
            status, out, err = run("respond", *argv, req, text)
            self.assertEqual((status, out), (2, b""), argv)

    def grammar_line(self, err):
        """The grammar object --grammar prints first on standard error."""
        prefix = "dsml-render: respond: grammar: "
        self.assertTrue(err.startswith(prefix), err[:200])
        return json.loads(err[len(prefix):err.index("\n")])

    def test_grammar(self):
        # "auto" without strict tools: none, unless --grammar-auto
        req, text = self.files()
        status, out, err = run("respond", *self.FIXED, "--grammar", "gbnf", req, text)
        self.assertEqual(status, 0, err)
        self.assertEqual(self.grammar_line(err), {
            "grammar": None, "format": "gbnf", "lazy": False, "trigger": None,
            "trigger_pattern": None, "rules": 0, "from": None})
        # the response is the same with or without it
        self.assertEqual(json.loads(out), self.completion(req, text)[0])
        status, out, err = run("respond", *self.FIXED, "--grammar", "gbnf", "--grammar-auto",
                               req, text)
        g = self.grammar_line(err)
        self.assertEqual((g["lazy"], g["trigger"], g["from"]), (True, "\n\n<｜DSML｜ calls>", ""))
        self.assertEqual(g["grammar"], run("grammar", "--format", "gbnf", req)[1].decode())
        # "required", a strict tool: the grammar `dsml-render grammar` writes
        for extra, frm in (({"tool_choice": "required"}, "$.tool_choice"),
                           ({"tools": [{"type": "function", "function": {
                               "name": "weather", "strict": True}}]},
                            "$.tools[0].function.strict")):
            for fmt in ("gbnf", "lark", "structural-tag"):
                req, text = self.files(request=dict(self.REQUEST, **extra))
                status, out, err = run("respond", *self.FIXED, "--grammar", fmt, req, text)
                self.assertEqual(status, 0, err)
                g = self.grammar_line(err)
                self.assertEqual((g["format"], g["from"]), (fmt, frm))
                self.assertEqual(g["grammar"], run("grammar", "--format", fmt, req)[1].decode())
                self.assertEqual(g["lazy"], fmt == "gbnf" and frm != "$.tool_choice")
        # a schema the grammar cannot hold refuses the request, naming it
        bad = dict(self.REQUEST, tool_choice="required", tools=[{"type": "function", "function": {
            "name": "weather", "parameters": {"properties": {"city": {"pattern": "x"}}}}}])
        req, text = self.files(request=bad)
        status, out, err = run("respond", "--grammar", "lark", req, text)
        self.assertEqual((status, out), (1, b""))
        self.assertIn("$.tools[0].function.parameters.properties.city.pattern", err)
        self.assertEqual(run("respond", req, text)[0], 0)
        for argv in (["--grammar", "yacc"], ["--grammar"], ["--grammar-auto"]):
            status, out, err = run("respond", *argv, req, text)
            self.assertEqual((status, out), (2, b""), argv)

    def test_refusals(self):
        req, text = self.files(request={"messages": [], "tools": [{"function": {"name": 1}}]})
        status, out, err = run("respond", req, text)
        self.assertEqual((status, out), (1, b""))
        self.assertIn("$.tools[0].function.name", err)
        for argv in ([req], ["--end", "eos", req, text], ["--stream", "0", req, text],
                     ["--created", "x", req, text], ["-", "-"], [req, text, text], ["--x", req, text]):
            status, out, err = run("respond", *argv)
            self.assertEqual((status, out), (2, b""), argv)
            self.assertIn("dsml-render respond --help", err)
        status, out, _ = run("respond", "--help")
        self.assertEqual(status, 0)
        self.assertIn(b"--stream-arguments", out)
        self.assertIn(b"--keep-raw", out)


class ExitStatus(TempFiles, unittest.TestCase):
    def test_usage_errors(self):
        path = self.write("c.json", {"messages": [USER]})
        for argv in (["--bogus", path], ["--profile", "v40", path], ["--profile"],
                     ["--diff", "nope", path], ["--diff"], ["--show", "--json", path],
                     ["--show", "--diff", "v41", path], ["--effort"], ["--context"],
                     ["--diff", "v41", "--diff-file", path, path], ["--diff-file"],
                     ["--input-format", "yaml", path], ["--color=sometimes", path],
                     [path, path]):
            status, out, err = run(*argv)
            self.assertEqual(status, 2, argv)
            self.assertEqual(out, b"", argv)
            self.assertIn("Try 'dsml-render --help'", err, argv)

    def test_failures(self):
        self.assertEqual(run(os.path.join(self.tmp.name, "none.json"))[0], 1)
        status, out, err = run(self.write("bad.json", b"{\"messages\": [}"))
        self.assertEqual((status, out), (1, b""))
        self.assertIn("DSML_ERR_JSON", err)
        self.assertIn("byte", err)

    def test_directory_refused(self):
        # refused with the system's message alone: under the sanitizer
        # build, a leak would add LeakSanitizer's report to it
        for argv in ([self.tmp.name], ["parse", self.tmp.name],
                     ["--context", self.tmp.name, self.write("c.json", {"messages": [USER]})]):
            status, out, err = run(*argv)
            self.assertEqual((status, out), (1, b""), argv)
            self.assertEqual(err, "dsml-render: %s: Is a directory\n" % self.tmp.name, argv)

    LIMIT = 256 << 20  # DSML_DEFAULT_MAX_INPUT_BYTES

    def test_input_limit(self):
        # a regular file larger than the limit: refused without reading it
        path = os.path.join(self.tmp.name, "big.json")
        with open(path, "wb") as f:
            f.truncate(self.LIMIT + 1)
        status, out, err = run(path)
        self.assertEqual((status, out), (1, b""))
        self.assertIn("larger than the input limit of %d bytes" % self.LIMIT, err)
        if os.path.exists("/dev/zero"):
            status, out, err = run("/dev/zero")
            self.assertEqual((status, out), (1, b""))
            self.assertIn("/dev/zero: larger than the input limit", err)

    def test_endless_input_stops_at_the_limit(self):
        # standard input that never ends: the tool stops reading past the
        # limit and refuses it; it must not read (and hold) what follows
        p = subprocess.Popen([ARGS.binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, bufsize=0)
        chunk = b" " * (1 << 20)
        written, stopped = 0, False
        try:
            while written < self.LIMIT + (64 << 20):
                p.stdin.write(chunk)
                written += len(chunk)
        except BrokenPipeError:
            stopped = True
        if not stopped:
            p.kill()
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
        p.stdin = None
        out, err = p.communicate(timeout=120)
        self.assertTrue(stopped, "read %d bytes without stopping" % written)
        self.assertEqual((p.returncode, out), (1, b""))
        self.assertIn("standard input: larger than the input limit", err.decode())

    def test_effort_out_of_int_range(self):
        path = self.write("e.json", {"messages": [USER], "thinking_mode": "thinking"})
        for bad in ("99999999999999999999", "-99999999999999999999", "2147483648"):
            status, out, err = run("--effort", bad, path)
            self.assertEqual((status, out), (2, b""), bad)
            self.assertIn("--effort %s: out of range" % bad, err)
            self.assertNotIn("2147483647", err)

    def test_messages_are_safe_to_print(self):
        # control characters from a file name, an option or the input are
        # escaped in what goes to the terminal
        name = os.path.join(self.tmp.name, "no\x1b[2J\u202efile.json")
        cases = [([name], 1, "no\\u001b[2J\\u202efile.json"),
                 (["--bogus\x1b]0;title\x07"], 2, "--bogus\\u001b]0;title\\u0007"),
                 ([self.write("r.json", [{"role": "\x1b[2Jx\x9b", "content": "q"}])], 1,
                  "Unknown role: \\u001b[2Jx\\u009b")]
        for argv, want_status, want_text in cases:
            status, _, err = run(*argv)
            self.assertEqual(status, want_status, argv)
            self.assertIn(want_text, err)
            for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
                self.assertNotIn(raw, err, argv)

    def test_help_and_version(self):
        status, out, err = run("--help")
        self.assertEqual((status, err), (0, ""))
        text = out.decode()
        for opt in ("--show", "--json", "--diff", "--thinking", "--chat", "--effort",
                    "--keep-thinking", "--no-bos", "--context", "--profile", "--strict",
                    "--guard", "--input-format", "--diff-file", "--color", "--oneline", "--stream",
                    "--tools", "parse", "Exit status"):
            self.assertIn(opt, text)
        self.assertEqual(run("-h")[1], out)
        # the man page documents every long option of --help
        with open(os.path.join(HERE, "..", "..", "docs", "dsml-render.1"), encoding="utf-8") as f:
            man = f.read().replace("\\-", "-")
        for opt in sorted(set(re.findall(r"--[a-z][a-z-]+", text))):
            self.assertIn(opt, man)
        status, out, _ = run("--version")
        self.assertEqual(status, 0)
        self.assertTrue(out.startswith(b"dsml-render "))


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--testdata", required=True)
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--update-snapshot", action="store_true")
    ap.add_argument("--skip", default="", help="comma-separated test classes not to run "
                    "(another entry runs them)")
    ARGS, rest = ap.parse_known_args()
    skip = {name for name in ARGS.skip.split(",") if name}
    if skip:
        unknown = skip - {c.__name__ for c in globals().values()
                          if isinstance(c, type) and issubclass(c, unittest.TestCase)}
        if unknown:
            sys.exit("--skip: no test class " + ", ".join(sorted(unknown)))
        loader = unittest.defaultTestLoader
        suite = unittest.TestSuite(
            loader.loadTestsFromTestCase(c) for c in globals().values()
            if isinstance(c, type) and issubclass(c, unittest.TestCase) and c.__name__ not in skip)
        result = unittest.TextTestRunner(verbosity=2).run(suite)
        sys.exit(0 if result.wasSuccessful() else 1)
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
