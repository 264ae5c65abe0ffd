"""Every render case of the golden files through the binding: the prompt and
the image records byte for byte, and a DsmlError wherever the reference
refused.  Same files, modes and counts as the C golden runner."""

import copy
import json
import sys
import unittest

import _support
import dsml

FILES = [
    # file, profile, strict, cases
    ("render.jsonl", "v41", True, 1200),
    ("developer-render.jsonl", "v41", False, 400),
    ("prerelease-render.jsonl", "prerelease", False, 400),
    ("v4-render.jsonl", "v4", False, 1200),
    ("v4-render.jsonl", "v4", True, 1200),
    ("v32-render.jsonl", "v32", False, 800),
]


def check(line, got, exc):
    """None when the result matches the golden expectation, else why not."""
    expect = line["expect"]
    if "error" in expect:
        if exc is None:
            return "rendered, but the reference refused: %s" % expect["error"]["message"]
        if not isinstance(exc, dsml.DsmlError) or exc.code >= 0 or not exc.message:
            return "refused without a DsmlError: %r" % (exc,)
        return None
    if exc is not None:
        return "refused: %s" % (exc,)
    prompt, media = got
    diff = _support.first_difference(expect["prompt"], prompt)
    if diff:
        return "prompt " + diff
    if media["images"] != expect.get("images", []):
        return "images: want %r, got %r" % (expect.get("images", []), media["images"])
    return None


class GoldenRender(unittest.TestCase):

    def run_file(self, name, profile, strict, want_cases, through):
        cases = passed = 0
        for line in _support.golden_lines(name):
            cases += 1
            got = exc = None
            try:
                got = through(line, profile, strict)
            except Exception as e:  # any escape is a failure, reported below
                exc = e
            why = check(line, got, exc)
            if why is None:
                passed += 1
            else:
                print("%s: %s" % (line["id"], why), file=sys.stderr)
        print("%s: %d/%d" % (name, passed, cases))
        self.assertEqual(cases, want_cases)
        self.assertEqual(passed, cases)

    @staticmethod
    def via_encode_messages(line, profile, strict):
        messages, mode, kwargs = _support.case_arguments(json.loads(line["case"]))
        return dsml.encode_messages(messages, mode, return_multi_modal_data=True,
                                    profile=profile, strict=strict, **kwargs)

    @staticmethod
    def via_render_case(line, profile, strict):
        return dsml.render_case(line["case"], profile=profile, strict=strict,
                                return_multi_modal_data=True)

    def test_encode_messages(self):
        for name, profile, strict, n in FILES:
            with self.subTest(file=name):
                self.run_file(name, profile, strict, n, self.via_encode_messages)

    def test_render_case_text(self):
        for name, profile, strict, n in FILES:
            with self.subTest(file=name):
                self.run_file(name, profile, strict, n, self.via_render_case)

    def official(self, name, profile, stripped=False):
        """The publishers' cases of ../shared/golden/official/<name>."""
        path = _support.shared("golden", "official", name)
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except OSError:
            self.skipTest("official cases: skipped (%s not found)" % path)
        n = passed = 0
        for c in doc["cases"]:
            n += 1
            case = c["input"]
            if isinstance(case, list):
                case = {"messages": case}
            if "thinking_mode" in c:
                case = dict(case, thinking_mode=c["thinking_mode"])
            try:
                got = dsml.render_case(case, profile=profile)
            except dsml.DsmlError as e:
                print("official-%s: refused: %s" % (c["case_id"], e), file=sys.stderr)
                continue
            diff = _support.first_difference(c["expected_prompt"],
                                             got.strip() if stripped else got)
            if diff:
                print("official-%s: prompt %s" % (c["case_id"], diff), file=sys.stderr)
            else:
                passed += 1
        print("official %s: %d/%d" % (name, passed, n))
        self.assertGreater(n, 0)
        self.assertEqual(passed, n)
        return doc

    def test_official_cases(self):
        self.official("cases.json", "v41")

    def test_official_cases_v4(self):
        self.official("cases-v4.json", "v4")

    def test_official_cases_v32(self):
        # the official V3.2 test compares stripped prompts, and parses two
        # messages back after rendering each with the earlier ones as context
        doc = self.official("cases-v32.json", "v32", stripped=True)
        trip = doc["parse_round_trip_input"]
        messages = trip["messages"]
        messages[0]["tools"] = trip["tools"]
        for at, dropped in ((4, "content"), (len(messages) - 6, "tool_calls")):
            message = copy.deepcopy(messages[at])
            for call in message.get("tool_calls") or []:
                call.pop("id")
            prompt = dsml.encode_messages([messages[at]], "thinking", context=messages[:at],
                                          profile="v32")
            parsed = dsml.parse_message_from_completion_text(prompt, "thinking",
                                                              profile="v32")
            parsed.pop(dropped)
            self.assertEqual(parsed, message, at)

if __name__ == "__main__":
    unittest.main()
