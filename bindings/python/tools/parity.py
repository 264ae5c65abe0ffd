#!/usr/bin/env python3
"""Run random cases through the reference encoder and the binding; print
every mismatch with a minimal reproduction.

usage: parity.py REFERENCE N [--seed S] [--golden] [--max-shrink K]

REFERENCE is a copy of the reference encoding.py.  N random cases come from
gen.py (seeded; the same seed gives the same cases).  --golden also runs
every golden case of testdata/.  Completions are also fed to the streaming
detector (strict and lenient, random chunking) and must end in the parser's
result.  Exit status 1 when any mismatch was found.

A mismatch kind is one of: "reference refused, binding accepted",
"reference accepted, binding refused", "different result", "different
error" (a completion refused for another reason than the reference's), "detector",
"exception" (a Python exception other than DsmlError escaped the binding).
Identical minimal reproductions are printed once, with a count.
"""

import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402
import paritylib as P  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reference")
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--golden", action="store_true")
    ap.add_argument("--kinds", default="render,parse",
                    help="case kinds to run (default render,parse)")
    ap.add_argument("--max-shrink", type=int, default=100,
                    help="shrink at most this many mismatches (default 100)")
    args = ap.parse_args(argv)

    sys.setrecursionlimit(10000)
    ref = P.load_reference(args.reference)
    cases = []
    if args.golden:
        testdata = os.path.join(REPO, "testdata")
        for name, kind in (("render.jsonl", "render"), ("parse.jsonl", "parse")):
            for cid, case in P.golden_cases(os.path.join(testdata, name), kind):
                cases.append((cid, case))
    rng = random.Random(args.seed)
    for i in range(args.n):
        cases.append(("random-%d" % i, gen.gen_case(rng)))
    kinds = set(args.kinds.split(","))
    cases = [(cid, case) for cid, case in cases if case["kind"] in kinds]

    start = time.time()
    counts = {}
    found = {}
    shrunk = 0
    for cid, case in cases:
        kind, ro, do = P.check(ref, case, random.Random(cid))
        counts[case["kind"]] = counts.get(case["kind"], 0) + 1
        if kind is None:
            continue
        if shrunk < args.max_shrink:
            small = P.shrink(ref, case, kind)
            shrunk += 1
            _, sro, sdo = P.check(ref, small)
            repro = P.describe(small, sro, sdo)
        else:
            repro = P.describe(case, ro, do) + "\n  (not shrunk)"
        key = (kind, repro)
        if key not in found:
            found[key] = [cid]
            print("MISMATCH [%s] first seen in %s\n%s\n" % (kind, cid, repro),
                  flush=True)
        else:
            found[key].append(cid)

    total = sum(len(v) for v in found.values())
    print("cases: %s; mismatches: %d (%d distinct reproductions); %.1fs" % (
        ", ".join("%s %d" % kv for kv in sorted(counts.items())), total,
        len(found), time.time() - start))
    for (kind, repro), ids in sorted(found.items(), key=lambda kv: -len(kv[1])):
        print("  %4d x [%s] e.g. %s" % (len(ids), kind, ", ".join(ids[:3])))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
