#!/usr/bin/env python3
"""Tests of `dsml-render audit`, run through the built binary (stdlib only).

  audit_tests.py --binary PATH --testdata DIR

- the golden render files as a corpus, v41 against prerelease: the groups
  the two reference encoders differ in, each with an example that still
  shows its difference when rendered again by `dsml-render`;
- a profile against itself: nothing differs;
- the pre-release golden file as captured prompts: the same groups as the
  pre-release profile gives;
- completions (--parse): strict against lenient, v41 against prerelease;
- corpus line kinds, files and directories, the reports (text, --json,
  --html), the progress line and the exit statuses.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

ARGS = None
RENDER_FILES = ("render.jsonl", "developer-render.jsonl", "prerelease-render.jsonl")

# How the checkpoint's encoder (V4.1 reference, strict: it has no developer
# role) and the pre-release serving image's differ, from the references
# (PROTOCOL.md section 6; DIALECTS.md): the effort tiers (a different number
# on the effort line; "xhigh", which only the serving image knows), tool
# namespaces (qualified names; conflicting or '::'-holding names the
# checkpoint refuses), the developer role (the checkpoint refuses it) and
# tool-call arguments (the serving image refuses what is not a JSON object).
EXPECTED_GROUPS = {
    ("effort line", "differ"),
    ("effort line", "refused by v41 only"),
    ("namespaces", "differ"),
    ("namespaces", "refused by v41 only"),
    ("developer role", "refused by v41 only"),
    ("tool-call arguments", "refused by prerelease only"),
}

# The V4.1 reference encoder run on every case of prerelease-render.jsonl and
# compared with the prompts the pre-release encoder produced for them (the
# file's expectations): 150 identical, 26 refused by both, and these.
EXPECTED_PRERELEASE_CORPUS = {
    ("effort line", "differ"): 89,
    ("namespaces", "differ"): 20,
    ("namespaces", "refused by v41 only"): 6,
    ("developer role", "refused by v41 only"): 5,
    ("tool-call arguments", "refused by prerelease only"): 104,
}


def run(*argv, stdin=None):
    """Runs the binary; returns (status, stdout bytes, stderr text)."""
    p = subprocess.run([ARGS.binary, *argv], input=stdin, capture_output=True,
                       timeout=300, env=dict(os.environ, NO_COLOR=""))
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def audit_json(*argv):
    status, out, err = run("audit", "--json", *argv)
    if status not in (0, 1):
        raise AssertionError(f"audit {argv}: status {status}: {err}")
    return status, json.loads(out)


def groups_of(report):
    return {(g["kind"], g["outcome"]): g for g in report["groups"]}


def testdata(name):
    return os.path.join(ARGS.testdata, name)


def golden(name):
    with open(testdata(name), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class TempDir:
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def write(self, name, text):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return self.path(name)

    def jsonl(self, name, docs):
        return self.write(name, "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))

    def corpus_dir(self):
        d = self.path("corpus")
        os.mkdir(d)
        for name in RENDER_FILES:
            shutil.copy(testdata(name), d)
        return d


def render(example, profile, strict):
    """The example of a group rendered by the plain command."""
    opts = ["--profile", profile, "--input-format", example["format"]]
    return run(*opts, *(["--strict"] if strict else []), "-",
               stdin=example["input"].encode("utf-8"))


class GoldenCorpus(TempDir, unittest.TestCase):
    def test_the_groups_the_references_differ_in(self):
        status, rep = audit_json("--profile", "v41", "--against", "prerelease", self.corpus_dir())
        self.assertEqual(status, 1)
        self.assertEqual(rep["items"], 2000)
        self.assertEqual(set(groups_of(rep)), EXPECTED_GROUPS)
        total = sum(g["count"] for g in rep["groups"])
        self.assertEqual(total, rep["differ"] + rep["refused_a"] + rep["refused_b"])
        self.assertEqual(rep["identical"] + total + rep["refused_both"], rep["items"])
        for g in rep["groups"]:
            self.check_example(g)

    def check_example(self, g):
        """The example, rendered again by `dsml-render`, still shows it."""
        ex = g["example"]
        why = f"{g['kind']}, {g['outcome']}: {ex['input']}"
        self.assertTrue(ex["shrunk"], why)
        self.assertLess(ex["bytes"], ex["original_bytes"], why)
        self.assertEqual(len(ex["input"].encode("utf-8")), ex["bytes"], why)
        sa, a, ea = render(ex, "v41", True)
        sb, b, eb = render(ex, "prerelease", False)
        if g["outcome"] == "differ":
            self.assertEqual((sa, sb), (0, 0), why)
            self.assertNotEqual(a, b, why)
            at = next(i for i in range(min(len(a), len(b)) + 1)
                      if i == min(len(a), len(b)) or a[i] != b[i])
            self.assertEqual(at, g["first_differing_byte"], why)
            self.assertEqual(ex["a"]["prompt"].encode("utf-8"), a, why)
            self.assertEqual(ex["b"]["prompt"].encode("utf-8"), b, why)
        else:
            refused, other, err = (sa, sb, ea) if "v41" in g["outcome"] else (sb, sa, eb)
            self.assertEqual((refused, other), (1, 0), why)
            self.assertIn(f"({g['code']}", err, why)

    def test_the_prerelease_corpus_as_the_references_compare(self):
        status, rep = audit_json("--against", "prerelease", testdata("prerelease-render.jsonl"))
        counts = {k: g["count"] for k, g in groups_of(rep).items()}
        self.assertEqual(counts, EXPECTED_PRERELEASE_CORPUS)
        self.assertEqual((rep["identical"], rep["refused_both"]), (150, 26))

    def test_a_profile_against_itself(self):
        corpus = self.corpus_dir()
        for profile in ("v41", "prerelease"):
            status, rep = audit_json("--profile", profile, "--against", profile, corpus)
            self.assertEqual(status, 0, profile)
            self.assertEqual((rep["differ"], rep["refused_a"], rep["refused_b"], rep["groups"]),
                             (0, 0, 0, []), profile)
            self.assertEqual(rep["identical"] + rep["refused_both"], 2000)

    def test_strictness_of_both_sides(self):
        corpus = testdata("developer-render.jsonl")
        _, reference = audit_json("--against", "prerelease", corpus)
        self.assertIn(("developer role", "refused by v41 only"), groups_of(reference))
        for opt in ("--strict", "--developer"):
            _, rep = audit_json("--against", "prerelease", opt, corpus)
            self.assertNotIn("developer role", {k for k, _ in groups_of(rep)}, opt)

    def test_shrinking_keeps_what_shows_the_difference(self):
        # a long conversation whose only difference is the effort line: the
        # example keeps one message and the thinking mode, nothing else
        msgs = [{"role": "system", "content": "You are terse."},
                {"role": "user", "content": "What is 2+2?"},
                {"role": "assistant", "content": "4", "reasoning_content": "Add."},
                {"role": "user", "content": "And 3+3?"}]
        body = {"model": "m", "messages": msgs, "thinking": {"type": "enabled"},
                "temperature": 0.5}
        path = self.jsonl("c.jsonl", [body])
        status, rep = audit_json("--against", "prerelease", path)
        self.assertEqual(status, 1)
        (g,) = rep["groups"]
        self.assertEqual((g["kind"], g["outcome"], g["count"]), ("effort line", "differ", 1))
        ex = json.loads(g["example"]["input"])
        self.assertEqual(len(ex["messages"]), 1, ex)
        self.assertEqual(set(ex), {"messages", "thinking"}, ex)
        self.assertEqual(g["example"]["format"], "request")
        self.assertIn("Reasoning Effort: 75", g["example"]["a"]["prompt"])
        self.assertIn("Reasoning Effort: 50", g["example"]["b"]["prompt"])


class Captured(TempDir, unittest.TestCase):
    def captured_file(self):
        """The pre-release encoder's prompts as a server would log them."""
        lines = []
        for g in golden("prerelease-render.jsonl"):
            e = g["expect"]
            lines.append({"id": g["id"], "prompt": e["prompt"]} if "prompt" in e
                         else {"id": g["id"], "error": e["error"]})
        return self.jsonl("captured.jsonl", lines)

    def summary(self, rep, name):
        return {(g["kind"], g["outcome"].replace(name, "B")): g["count"] for g in rep["groups"]}

    def test_same_groups_as_the_profile(self):
        corpus = testdata("prerelease-render.jsonl")
        _, profile = audit_json("--against", "prerelease", corpus)
        for captured in (self.captured_file(), corpus):
            status, rep = audit_json("--captured", captured, corpus)
            self.assertEqual(status, 1)
            self.assertEqual(rep["lane"], "captured")
            self.assertEqual(self.summary(rep, "captured"), self.summary(profile, "prerelease"))
            for key in ("items", "identical", "differ", "refused_a", "refused_b", "refused_both"):
                self.assertEqual(rep[key], profile[key], key)
            self.assertEqual(rep["unmatched"], 0)
            for g in rep["groups"]:
                self.assertIsNone(g["example"]["shrunk"])

    def test_matched_by_id(self):
        case = {"messages": [{"role": "user", "content": "Hi"}]}
        prompt = run("-", stdin=json.dumps(case).encode())[1].decode()
        captured = self.jsonl("cap.jsonl", [{"id": "b", "prompt": prompt + "x"},
                                            {"id": "a", "prompt": prompt}])
        corpus = self.jsonl("corpus.jsonl", [dict(case, id="a"), dict(case, id="b"),
                                             dict(case, id="c"), case])
        status, rep = audit_json("--captured", captured, corpus)
        self.assertEqual(status, 1)
        self.assertEqual((rep["identical"], rep["differ"], rep["unmatched"]), (1, 1, 2))
        (g,) = rep["groups"]
        self.assertEqual(g["example"]["id"], "b")
        self.assertEqual(g["first_differing_byte"], len(prompt.encode()))
        # nothing matched: nothing to compare
        status, _, err = run("audit", "--captured", captured, self.jsonl("none.jsonl", [case]))
        self.assertEqual(status, 2)
        self.assertIn("no request of the corpus has a captured prompt", err)


class Parse(TempDir, unittest.TestCase):
    def check_refusals(self, rep):
        """Each example is refused by `parse --strict` with its group's code
        and parsed by `parse` (lenient)."""
        for g in rep["groups"]:
            ex = g["example"]
            path = self.write("c.txt", ex["input"])
            mode = ["--thinking"] if ex["thinking_mode"] == "thinking" else []
            status, _, err = run("parse", "--strict", *mode, path)
            self.assertEqual(status, 1, (g["kind"], ex))
            self.assertIn(f"({g['code']}", err, (g["kind"], ex))
            self.assertEqual(run("parse", *mode, path)[0], 0, (g["kind"], ex))

    def test_strict_against_lenient(self):
        status, rep = audit_json("--parse", testdata("parse.jsonl"), "--against", "lenient")
        self.assertEqual(status, 1)
        self.assertEqual(rep["items"], 900)
        self.assertEqual((rep["a"]["name"], rep["b"]["name"]), ("strict", "lenient"))
        self.assertEqual(rep["refused_b"], 0)
        self.assertGreater(rep["refused_a"], 100)
        codes = [g["code"] for g in rep["groups"]]
        self.assertEqual(len(codes), len(set(codes)))
        self.assertIn("DSML_ERR_MISSING_EOS", codes)
        for g in rep["groups"]:
            self.assertEqual(g["outcome"], "refused by strict only")
            self.assertIn("events", g["example"]["b"])
            self.assertLessEqual(g["example"]["bytes"], g["example"]["original_bytes"])
        self.check_refusals(rep)

    def test_two_profiles(self):
        status, rep = audit_json("--parse", testdata("prerelease-parse.jsonl"),
                                 "--against", "prerelease")
        self.assertEqual(status, 1)
        g = groups_of(rep)[("namespaces", "differ")]
        self.assertIn('namespace="', g["example"]["a"]["events"])
        self.assertNotIn('namespace="', g["example"]["b"]["events"])
        status, rep = audit_json("--parse", testdata("parse.jsonl"), "--against", "v41:strict")
        self.assertEqual((status, rep["groups"]), (0, []))

    def test_lines(self):
        lines = ['"Hello<｜end▁of▁sentence｜>"',
                 json.dumps({"id": "t1", "text": "Think.</think>Hi<｜end▁of▁sentence｜>x",
                             "thinking_mode": "thinking"}),
                 json.dumps({"text": "no end"})]
        path = self.write("c.jsonl", "\n".join(lines) + "\n")
        status, rep = audit_json("--parse", path, "--against", "lenient")
        self.assertEqual(rep["items"], 3)
        self.assertEqual(rep["identical"], 1)
        self.assertEqual(rep["refused_a"], 2)
        ids = {g["example"]["id"] for g in rep["groups"]}
        self.assertEqual(ids, {"t1", path + ":3"})
        # a line that is no completion is an error
        bad = self.write("bad.jsonl", '{"messages": []}\n')
        status, out, err = run("audit", "--parse", bad, "--against", "lenient")
        self.assertEqual(status, 2)
        self.assertIn("not a completion", err)


class Corpus(TempDir, unittest.TestCase):
    def test_line_kinds(self):
        user = {"role": "user", "content": "Hi"}
        g = next(g for g in golden("developer-render.jsonl")
                 if "prompt" in g["expect"] and '"developer"' in g["case"])
        lines = [json.dumps(g), json.dumps({"messages": [user], "thinking_mode": "thinking"}),
                 json.dumps({"id": "req-7", "model": "m", "messages": [user],
                             "reasoning_effort": "high", "thinking": {"type": "enabled"}}),
                 json.dumps([user]), ""]
        path = self.write("mixed.jsonl", "\n".join(lines) + "\n")
        status, rep = audit_json("--against", "prerelease", path)
        self.assertEqual(rep["items"], 4)
        (eff,) = [x for x in rep["groups"] if x["kind"] == "effort line"]
        self.assertEqual(eff["count"], 2)
        # the smallest of the two: the case file on line 2 or the request
        self.assertIn(eff["example"]["id"], (path + ":2", "req-7"))
        # a golden line is read as its case, by its id
        status, rep = audit_json("--against", "v41", "--developer", path)
        self.assertEqual((status, rep["identical"]), (0, 4))

    def test_files_and_directories(self):
        d = self.path("dir")
        os.mkdir(d)
        case = {"messages": [{"role": "user", "content": "Hi"}], "thinking_mode": "thinking"}
        with open(os.path.join(d, "one.json"), "w") as f:
            json.dump(case, f, indent=2)
        with open(os.path.join(d, "two.jsonl"), "w") as f:
            f.write(json.dumps(case) + "\n" + json.dumps(case) + "\n")
        with open(os.path.join(d, ".hidden.jsonl"), "w") as f:
            f.write(json.dumps(case) + "\n")
        status, rep = audit_json("--against", "prerelease", d)
        self.assertEqual((rep["items"], rep["differ"]), (3, 3))
        self.assertEqual(rep["groups"][0]["example"]["id"], os.path.join(d, "two.jsonl") + ":1")
        p = subprocess.run([ARGS.binary, "audit", "--json", "--against", "prerelease", "-"],
                           input=(json.dumps(case) + "\n").encode(), capture_output=True)
        self.assertEqual((p.returncode, json.loads(p.stdout)["items"]), (1, 1))

    def test_overrides(self):
        path = self.jsonl("c.jsonl", [{"messages": [{"role": "user", "content": "Hi"}]}])
        self.assertEqual(audit_json("--against", "prerelease", path)[0], 0)
        status, rep = audit_json("--against", "prerelease", "--thinking", path)
        self.assertEqual((status, rep["groups"][0]["kind"]), (1, "effort line"))
        status, rep = audit_json("--against", "prerelease", "--thinking", "--effort", "max", path)
        self.assertEqual(status, 0)


class Reports(TempDir, unittest.TestCase):
    def test_text(self):
        status, out, err = run("audit", "--against", "prerelease", "--no-progress",
                               testdata("prerelease-render.jsonl"))
        self.assertEqual((status, err), (1, ""))
        text = out.decode("utf-8")
        self.assertTrue(text.startswith("audit of 400 requests: v41 against prerelease\n"), text)
        self.assertRegex(text, r"\n  identical +150\n")
        self.assertRegex(text, r"\n  refused by prerelease only +104\n")
        self.assertIn("5 groups:", text)
        self.assertRegex(text, r"#\d+ +effort line +differ +89  first differing byte \d+")
        # the example at its first difference, in the --show notation
        self.assertIn("⟦<｜System｜>⟧Reasoning Effort: ▶75◀ (range", text)
        self.assertIn("⟦<｜System｜>⟧Reasoning Effort: ▶50◀ (range", text)
        self.assertNotIn("\x1b[", text)
        coloured = run("audit", "--against", "prerelease", "--color",
                       testdata("prerelease-render.jsonl"))[1]
        self.assertIn(b"\x1b[", coloured)

    def test_html(self):
        page = self.path("report.html")
        status, out, err = run("audit", "--against", "prerelease", "--json", "--html", page,
                               testdata("prerelease-render.jsonl"))
        self.assertEqual(status, 1, err)
        rep = json.loads(out)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        for outside in ("http:", "https:", "src=", "<link", "<script", "@import", "url("):
            self.assertNotIn(outside, html)
        for key, name in (("items", "items"), ("identical", "identical"), ("differ", "differ"),
                          ("refused_a", "refused-a"), ("refused_b", "refused-b"),
                          ("refused_both", "refused-both")):
            self.assertIn(f'id="count-{name}">{rep[key]}<', html)
        self.assertEqual(len(re.findall(r'<section id="group-\d+">', html)), len(rep["groups"]))
        self.assertIn('<span class="tok">&lt;｜System｜&gt;</span>', html)
        self.assertIn('<mark class="a">75</mark>', html)
        self.assertIn('<mark class="b">50</mark>', html)

    def test_exit_status_and_usage(self):
        corpus = testdata("prerelease-render.jsonl")
        missing = self.path("missing.jsonl")
        for argv in ([corpus], ["--against", "v40", corpus], ["--against", "prerelease"],
                     ["--captured", corpus, "--against", "prerelease", corpus],
                     ["--mode", "strict", "--against", "prerelease", corpus],
                     ["--parse", corpus, "--against", "bogus"], ["--bogus", corpus],
                     ["--against"]):
            status, out, err = run("audit", *argv)
            self.assertEqual((status, out), (2, b""), argv)
            self.assertIn("dsml-render audit --help", err, argv)
        self.assertEqual(run("audit", "--against", "prerelease", missing)[0], 2)
        self.assertEqual(run("audit", "--captured", missing, corpus)[0], 2)
        self.assertEqual(run("audit", "--against", "prerelease", self.write("e.jsonl", ""))[0], 2)
        status, out, _ = run("audit", "--help")
        self.assertEqual(status, 0)
        for opt in ("--against", "--captured", "--parse", "--mode", "--json", "--html",
                    "--progress", "--strict", "--developer"):
            self.assertIn(opt.encode(), out)
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "dsml-render.1"),
                  encoding="utf-8") as f:
            man = f.read().replace("\\-", "-")
        for opt in sorted(set(re.findall(r"--[a-z][a-z-]+", out.decode()))):
            self.assertIn(opt, man)

    def test_progress(self):
        corpus = testdata("prerelease-render.jsonl")
        status, out, err = run("audit", "--against", "prerelease", "--progress", corpus)
        self.assertRegex(err, r"^(dsml-render: audit: \d+ requests?, \d+ differ, "
                              r"\d+ refused by one side\n)+$")
        self.assertIn("dsml-render: audit: 400 requests, 109 differ, 115 refused by one side\n",
                      err)
        self.assertEqual(run("audit", "--against", "prerelease", "--no-progress", corpus)[2], "")

    def test_progress_after_a_second(self):
        # a corpus that arrives slowly: the line appears once a second has
        # passed, not before
        line = (json.dumps({"messages": [{"role": "user", "content": "Hi"}]}) + "\n").encode()
        p = subprocess.Popen([ARGS.binary, "audit", "--against", "prerelease", "-"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        p.stdin.write(line * 3)
        p.stdin.flush()
        time.sleep(1.3)
        out, err = p.communicate(input=line * 2, timeout=120)
        self.assertEqual(p.returncode, 0, err)
        lines = err.decode().splitlines()
        self.assertEqual(lines[0], "dsml-render: audit: 4 requests, 0 differ, 0 refused by one side")
        self.assertEqual(lines[-1], "dsml-render: audit: 5 requests, 0 differ, 0 refused by one side")
        self.assertLessEqual(len(lines), 3)
        # a corpus read at once prints none
        self.assertEqual(run("audit", "--against", "prerelease", "-", stdin=line * 3)[2], "")


class HostileCorpus(TempDir, unittest.TestCase):
    """Corpora that would stall, exhaust or fool the audit."""

    def run_limited(self, *argv, stdin=None, timeout=120):
        """Runs the binary under a 1.5 GB address-space limit (not under
        AddressSanitizer, whose shadow memory needs terabytes of it)."""
        import resource

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
        with open(ARGS.binary, "rb") as f:
            asan = b"__asan_init" in f.read()
        p = subprocess.run([ARGS.binary, *argv], input=stdin, capture_output=True,
                           timeout=timeout, preexec_fn=None if asan else limit,
                           env=dict(os.environ, NO_COLOR=""))
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")

    def test_a_line_without_end(self):
        # a line is read up to the input limit, never to an allocation failure
        # taken for the end of the file
        status, out, err = self.run_limited("audit", "--against", "prerelease", "/dev/zero")
        self.assertEqual(status, 2, err)
        self.assertIn("/dev/zero:1: a line over 268435456 bytes (the input limit)", err)
        self.assertRegex(out.decode(), r"\n  unreadable lines +1\n")
        case = self.jsonl("c.jsonl", [{"id": "a", "messages": [{"role": "user"}]}])
        status, out, err = self.run_limited("audit", "--captured", "/dev/zero", case)
        self.assertEqual((status, out), (2, b""), err)
        self.assertIn("/dev/zero:1: a line over 268435456 bytes (the input limit)", err)

    def test_garbage_is_unreadable(self):
        for lines in ("aaaa\n", '{"messages": tru}\n', "5\n"):
            status, out, err = run("audit", "--against", "prerelease", "-",
                                   stdin=lines.encode())
            self.assertEqual(status, 2, lines)
            self.assertIn("-:1: not a request", err)
            self.assertRegex(out.decode(), r"\n  refused by both +0\n")
            self.assertRegex(out.decode(), r"\n  unreadable lines +1\n")
        good = json.dumps({"messages": [{"role": "user", "content": "Hi"}]})
        status, out, err = run("audit", "--json", "--against", "prerelease", "-",
                               stdin=(good + "\nnot json\n").encode())
        rep = json.loads(out)
        self.assertEqual((status, rep["items"], rep["identical"], rep["unreadable"]),
                         (2, 1, 1, 1))
        self.assertIn("-:2: not a request", err)

    def test_ids_are_escaped(self):
        evil = "\x1b]0;HACKED\x07\x1b[2J\u202e"
        path = self.jsonl("c.jsonl", [{"id": evil, "thinking_mode": "thinking",
                                       "messages": [{"role": "user", "content": "Hi"}]}])
        status, out, err = run("audit", "--against", "prerelease", path)
        self.assertEqual(status, 1, err)
        text = out.decode("utf-8")
        self.assertIn("example \\u001b]0;HACKED\\u0007\\u001b[2J\\u202e (", text)
        for c in ("\x1b", "\x07", "\u202e"):
            self.assertNotIn(c, text)

    def test_shrink_budget(self):
        # 1.6 MB of a request that differs: the shrink stops at its budget
        # (it took minutes without one) and the report says so
        msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"word {i} " * 10}
                for i in range(12000)]
        path = self.jsonl("big.jsonl", [{"id": "big", "messages": msgs,
                                         "thinking_mode": "thinking"}])
        start = time.monotonic()
        status, out, err = run("audit", "--json", "--against", "prerelease", path)
        self.assertLess(time.monotonic() - start, 60)
        self.assertEqual(status, 1, err)
        (g,) = json.loads(out)["groups"]
        self.assertTrue(g["example"]["shrink_stopped"])
        self.assertLessEqual(g["example"]["bytes"], g["example"]["original_bytes"])
        status, out, err = run("audit", "--against", "prerelease", path)
        self.assertIn("the shrink budget (4000 tries, 64 MiB run, 10 s) stopped it", out.decode())
        # a small group is shrunk whole, within its budget
        small = self.jsonl("s.jsonl", [{"thinking_mode": "thinking", "messages": msgs[:3]}])
        (g,) = audit_json("--against", "prerelease", small)[1]["groups"]
        self.assertFalse(g["example"]["shrink_stopped"])


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--testdata", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
