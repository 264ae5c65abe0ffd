#!/usr/bin/env python3
"""Speed of the binding against the reference encoder, measured in the same
run on the golden cases the reference accepts.

usage: bench.py REFERENCE [--runs R] [--breakdown]

Renders every accepted case of testdata/render.jsonl with encode_messages
and parses every accepted completion of testdata/parse.jsonl with
parse_message_from_completion_text, through the reference and through the
binding, alternating, R times (default 7); prints the median time of a pass
for each and the ratio reference / binding.  Targets: render >= 5x,
parse >= 3x.  --breakdown also times the parts of a binding call (Python
serialization, the bare C call, result decoding) to show where time goes.
"""

import argparse
import copy
import ctypes
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(BINDING))
sys.path.insert(0, HERE)
sys.path.insert(0, BINDING)

import dsml  # noqa: E402
import paritylib as P  # noqa: E402

TARGETS = {"render": 5.0, "parse": 3.0}


def render_cases():
    out = []
    with open(os.path.join(REPO, "testdata", "render.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if "error" in d["expect"]:
                continue
            c = json.loads(d["case"])
            messages = c["messages"]
            if "tools" in c:
                messages[0]["tools"] = c["tools"]
            kwargs = {k: c[k] for k in P.RENDER_KEYS if k in c}
            out.append((messages, c.get("thinking_mode") or "chat", kwargs))
    return out


def parse_cases():
    out = []
    with open(os.path.join(REPO, "testdata", "parse.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if "error" not in d["expect"]:
                out.append((d["text"], d["thinking_mode"]))
    return out


def timed(fn, cases):
    start = time.perf_counter()
    for args in cases:
        fn(*args)
    return time.perf_counter() - start


def compare(name, ref_fn, bin_fn, cases, runs, nbytes):
    # one untimed pass each (imports, caches)
    timed(ref_fn, cases)
    timed(bin_fn, cases)
    ref_t, bin_t = [], []
    for _ in range(runs):
        ref_t.append(timed(ref_fn, cases))
        bin_t.append(timed(bin_fn, cases))
    r, b = statistics.median(ref_t), statistics.median(bin_t)
    ratio = r / b
    print("%-6s %4d cases, %.1f MB: reference %7.1f ms, binding %7.1f ms "
          "(%5.1f us/case, %5.1f MB/s): %.2fx (target %.0fx%s)"
          % (name, len(cases), nbytes / 1e6, r * 1e3, b * 1e3,
             b / len(cases) * 1e6, nbytes / b / 1e6, ratio, TARGETS[name],
             "" if ratio >= TARGETS[name] else ", MISSED"))
    return ratio


def breakdown_render(cases, runs):
    from dsml import _native as N
    from dsml import render as R
    texts = []

    def serialize():
        texts.clear()
        for messages, mode, kwargs in cases:
            case = {"messages": messages}
            case.update(kwargs)
            texts.append(R._dumps(case).encode("utf-8"))
    opts = R._options(N.CHAT, "v41", 0)
    fn, free, byref = N.lib.dsml_render_case, N.lib.dsml_output_free, ctypes.byref

    def bare():
        for t in texts:
            out, err = N.Output(), N.Error()
            fn(t, len(t), byref(opts), byref(out), byref(err))
            free(byref(out))
    parts = {"JSON text of the case": [], "C dsml_render_case": []}
    for _ in range(runs):
        s = time.perf_counter()
        serialize()
        parts["JSON text of the case"].append(time.perf_counter() - s)
        s = time.perf_counter()
        bare()
        parts["C dsml_render_case"].append(time.perf_counter() - s)
    for k, v in parts.items():
        print("         render %-24s %7.1f ms" % (k, statistics.median(v) * 1e3))


def breakdown_parse(cases, runs):
    from dsml import _native as N
    from dsml import parse as Q
    data = [(t.encode("utf-8"), Q._strict_options(
        N.THINKING if m == "thinking" else N.CHAT, "v41")) for t, m in cases]
    fn, free, byref = N.lib.dsml_parse_completion, N.lib.dsml_output_free, ctypes.byref
    outs = []

    def bare():
        outs.clear()
        for t, opts in data:
            out, err = N.Output(), N.Error()
            fn(t, len(t), byref(opts), byref(out), byref(err))
            outs.append(ctypes.string_at(out.text, out.len))
            free(byref(out))

    def decode():
        for o in outs:
            Q._scan(o.decode("utf-8"), 0)
    parts = {"C dsml_parse_completion": [], "decoding the result": []}
    for _ in range(runs):
        s = time.perf_counter()
        bare()
        parts["C dsml_parse_completion"].append(time.perf_counter() - s)
        s = time.perf_counter()
        decode()
        parts["decoding the result"].append(time.perf_counter() - s)
    for k, v in parts.items():
        print("         parse  %-24s %7.1f ms" % (k, statistics.median(v) * 1e3))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reference")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--breakdown", action="store_true")
    args = ap.parse_args(argv)
    ref = P.load_reference(args.reference)
    print("libdsml %s at %s; Python %s" % (dsml.library_version, dsml.library_path,
                                            sys.version.split()[0]))

    rc = render_cases()
    # the reference does not modify its input; copy once so neither side
    # sees the other's objects
    rc_ref = copy.deepcopy(rc)
    nbytes = sum(len(json.dumps(m, ensure_ascii=False).encode()) for m, _, _ in rc)
    ok = True
    ratio = compare_render(ref, rc, rc_ref, args.runs, nbytes)
    ok &= ratio >= TARGETS["render"]
    if args.breakdown:
        breakdown_render(rc, args.runs)

    pc = parse_cases()
    nbytes = sum(len(t.encode()) for t, _ in pc)
    ratio = compare("parse", ref.parse_message_from_completion_text,
                    dsml.parse_message_from_completion_text, pc, args.runs, nbytes)
    ok &= ratio >= TARGETS["parse"]
    if args.breakdown:
        breakdown_parse(pc, args.runs)
    return 0 if ok else 1


def compare_render(ref, rc, rc_ref, runs, nbytes):
    ref_fn = ref.encode_messages
    bin_fn = dsml.encode_messages

    def run_ref():
        start = time.perf_counter()
        for m, mode, kw in rc_ref:
            ref_fn(m, mode, **kw)
        return time.perf_counter() - start

    def run_bin():
        start = time.perf_counter()
        for m, mode, kw in rc:
            bin_fn(m, mode, **kw)
        return time.perf_counter() - start
    run_ref()
    run_bin()
    ref_t, bin_t = [], []
    for _ in range(runs):
        ref_t.append(run_ref())
        bin_t.append(run_bin())
    r, b = statistics.median(ref_t), statistics.median(bin_t)
    ratio = r / b
    print("%-6s %4d cases, %.1f MB: reference %7.1f ms, binding %7.1f ms "
          "(%5.1f us/case, %5.1f MB/s): %.2fx (target %.0fx%s)"
          % ("render", len(rc), nbytes / 1e6, r * 1e3, b * 1e3,
             b / len(rc) * 1e6, nbytes / b / 1e6, ratio, TARGETS["render"],
             "" if ratio >= TARGETS["render"] else ", MISSED"))
    return ratio


if __name__ == "__main__":
    sys.exit(main())
