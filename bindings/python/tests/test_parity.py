"""The binding against the reference encoder itself, when
DSML_REFERENCE_ENCODING names a copy of its encoding.py: every golden case
and DSML_PARITY_CASES (default 1000) random conversations and completions
from tools/gen.py must give the same result, or both refuse.  Without the
variable the test is skipped."""

import os
import random
import sys
import unittest

import _support  # noqa: F401  (import path)
import gen
import paritylib as P

REFERENCE = os.environ.get("DSML_REFERENCE_ENCODING")


@unittest.skipUnless(REFERENCE, "DSML_REFERENCE_ENCODING not set: parity skipped")
class Parity(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.ref = P.load_reference(REFERENCE)

    def run_cases(self, label, cases):
        n = 0
        bad = []
        for cid, case in cases:
            n += 1
            kind, ro, do = P.check(self.ref, case, random.Random(cid))
            if kind is not None:
                bad.append((cid, kind, ro, do, case))
        for cid, kind, ro, do, case in bad[:20]:
            print("%s [%s]\n%s" % (cid, kind, P.describe(case, ro, do)), file=sys.stderr)
        print("%s: %d/%d agree" % (label, n - len(bad), n))
        return bad

    def test_golden(self):
        bad = []
        for name, kind in (("render.jsonl", "render"), ("parse.jsonl", "parse")):
            bad += self.run_cases("reference parity, " + name,
                                  P.golden_cases(_support.testdata(name), kind))
        self.assertEqual(bad, [])

    def test_random(self):
        n = int(os.environ.get("DSML_PARITY_CASES", "1000"))
        seed = int(os.environ.get("DSML_PARITY_SEED", "1"))
        rng = random.Random(seed)
        cases = [("random-%d" % i, gen.gen_case(rng)) for i in range(n)]
        bad = self.run_cases("reference parity, %d random cases (seed %d)" % (n, seed),
                             cases)
        self.assertEqual(len(bad), 0, "%d mismatches; run tools/parity.py for "
                         "minimal reproductions" % len(bad))


if __name__ == "__main__":
    unittest.main()
