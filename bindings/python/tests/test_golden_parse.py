"""Every completion of the golden parse files through the binding: the
strict parser must return the reference's message or refuse where the
reference refused; the streaming detector, fed the same text in random
chunks (splitting UTF-8 characters too), must end the same way."""

import random
import sys
import unittest

import _support
import dsml


FILES = [
    # file, profile, cases
    ("parse.jsonl", "v41", 900),
    ("prerelease-parse.jsonl", "prerelease", 300),
    ("v4-parse.jsonl", "v4", 600),
    ("v32-parse.jsonl", "v32", 500),
]


def outcome(fn):
    try:
        return ("ok", fn())
    except dsml.DsmlError as e:
        return ("error", e.name)


def detector_outcome(text, mode, profile, rng):
    data = text.encode("utf-8")
    try:
        with dsml.Detector(mode, profile=profile, strict=True) as det:
            i = 0
            while i < len(data):
                n = rng.choice([1, 2, 3, 4, 7, 16, 100])
                det.feed(data[i:i + n])
                i += n
            det.finish()
            return ("ok", det.message())
    except dsml.DsmlError as e:
        return ("error", e.name)


class GoldenParse(unittest.TestCase):

    def test_parser(self):
        for name, profile, want in FILES:
            with self.subTest(file=name):
                cases = passed = 0
                for line in _support.golden_lines(name):
                    cases += 1
                    got = outcome(lambda: dsml.parse_message_from_completion_text(
                        line["text"], line["thinking_mode"], profile=profile))
                    expect = line["expect"]
                    if "error" in expect:
                        ok = got[0] == "error"
                        why = "parsed, but the reference refused: %s" % (
                            expect["error"]["message"],)
                    else:
                        ok = got == ("ok", expect["message"])
                        why = "got %r, want %r" % (got, expect["message"])
                    if ok:
                        passed += 1
                    else:
                        print("%s: %s" % (line["id"], why), file=sys.stderr)
                print("%s: %d/%d" % (name, passed, cases))
                self.assertEqual(cases, want)
                self.assertEqual(passed, cases)

    def test_detector_chunked(self):
        rng = random.Random(20)
        for name, profile, want in FILES:
            with self.subTest(file=name):
                cases = passed = 0
                for line in _support.golden_lines(name):
                    cases += 1
                    mode = "thinking" if line["thinking_mode"] == "thinking" else "chat"
                    parsed = outcome(lambda: dsml.parse_message_from_completion_text(
                        line["text"], mode, profile=profile))
                    streamed = detector_outcome(line["text"], mode, profile, rng)
                    if streamed == parsed:
                        passed += 1
                    else:
                        print("%s: detector %r, parser %r" % (line["id"], streamed, parsed),
                              file=sys.stderr)
                print("%s (strict detector, random chunks): %d/%d" % (name, passed, cases))
                self.assertEqual(cases, want)
                self.assertEqual(passed, cases)


if __name__ == "__main__":
    unittest.main()
