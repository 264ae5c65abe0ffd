#!/usr/bin/env python3
"""Speed of the binding against the reference encoder and against a bare
ctypes call, measured in the same run.

usage: bench.py REFERENCE [--runs R] [--breakdown] [--installed]
                [--only render,parse,tokens,sessions,fresh]

render    every accepted case of testdata/render.jsonl with encode_messages,
          through the reference and through the binding, alternating, R
          times (default 7): the median time of a pass for each and the
          ratio reference / binding.  Target >= 10x.
parse     the same for the accepted completions of testdata/parse.jsonl and
          parse_message_from_completion_text.  Target >= 3x.
tokens    Detector("thinking").feed called once per token on agent
          completions of about 4k, 32k and 131k tokens (tools/benchinputs.py:
          special tokens whole, other pieces of at most 4 bytes), against a
          bare ctypes call (dsml_version_number(), no arguments) made as
          many times in the same run.  Target: a token costs <= 8 bare calls.
sessions  encode_messages(messages, "thinking") of long agent sessions (200
          and 1600 turns with tool calls and results, about 1.2 and 9.6 MB
          of JSON) and of a text-heavy one (200 turns, every text 8 times
          longer, about 8.4 MB), through the reference, the binding, and the bare C render
          (dsml_render_case on the case's JSON text made beforehand).
          Targets: the binding >= 2x the reference on the agent sessions
          and >= 1x on the text-heavy one; the C render >= 2x the reference
          on the text-heavy one.

fresh     encode_messages(messages, "thinking") of the agent sessions of 200
          and 1600 turns (1.2 and 9.6 MB) and of the text-heavy one, each
          call in a new interpreter (a subprocess that imports the reference
          or dsml, builds the session, then times the one call): R runs of
          each side, interleaved, the median times, their ratio, its spread
          (the ratio of each run's pair) and the minor page faults of the
          call (getrusage).  A process that has rendered a larger session
          before keeps memory that hides the cost of a first call.  The
          kernel's cost of a page fault is printed before and after (a
          block mapped afresh and written, against written again).  Targets:
          the binding >= 4x the reference on the 200-turn session, >= 3x on
          the 1600-turn one.

--breakdown also times the parts of a binding call (Python serialization,
the bare C call, result decoding) to show where time goes.  --installed
imports dsml as it is installed (bindings/python is not put on sys.path):
run it with the interpreter of the venv the package is installed in.
"""

import argparse
import copy
import ctypes
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(BINDING))
INSTALLED = "--installed" in sys.argv[1:]
sys.path.insert(0, HERE)
if not INSTALLED:
    sys.path.insert(0, BINDING)


def fresh_child(side, reference, kind, turns, scale):
    """One measured call in this (new) process: prints a JSON line with the
    seconds and minor page faults of the call and a digest of its prompt."""
    import gc
    import benchinputs
    if side == "reference":
        import importlib.util
        spec = importlib.util.spec_from_file_location("dsml_reference_encoding", reference)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        encode = module.encode_messages
    else:
        import dsml
        encode = dsml.encode_messages
    messages = benchinputs.session(int(turns), int(scale))
    gc.collect()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    prompt = encode(messages, "thinking")
    seconds = time.perf_counter() - start
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    print(json.dumps({"seconds": seconds, "faults": faults, "kind": kind,
                      "digest": hashlib.sha1(prompt.encode("utf-8")).hexdigest()}))
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["--fresh-child"]:
    sys.exit(fresh_child(*sys.argv[2:7]))

import dsml  # noqa: E402
import benchinputs as B  # noqa: E402
import paritylib as P  # noqa: E402

TARGETS = {"render": 10.0, "parse": 3.0}
TOKEN_TARGET = 8.0        # a token's feed in bare ctypes calls, at most
SESSION_TARGETS = {"agent": 2.0, "text": 1.0}   # binding vs reference
C_TEXT_TARGET = 2.0       # the C render vs the reference, text-heavy


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


def interleaved(kernels, runs):
    """Median seconds of each kernel, run `runs` times interleaved (the
    order rotates), after one untimed run each."""
    for fn in kernels:
        fn()
    times = [[] for _ in kernels]
    for r in range(runs):
        for j in range(len(kernels)):
            k = (j + r) % len(kernels)
            start = time.perf_counter()
            kernels[k]()
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def bench_tokens(runs):
    """Detector.feed per token against a bare ctypes call."""
    bare = dsml._native.lib.dsml_version_number
    ok = True
    for wanted in (4096, 32768, 131072):
        toks = B.token_stream(wanted)

        def feed():
            det = dsml.Detector("thinking")
            f = det.feed
            for t in toks:
                f(t)
            det.finish()

        def calls():
            for _ in toks:
                bare()
        t_feed, t_bare = interleaved([feed, calls], runs)
        n = len(toks)
        ratio = t_feed / t_bare
        ok &= ratio <= TOKEN_TARGET
        print("tokens %6d: Detector.feed %6.0f ns/token, bare ctypes call %5.0f ns: "
              "%.2fx a bare call (target <= %.0fx%s)"
              % (n, t_feed / n * 1e9, t_bare / n * 1e9, ratio, TOKEN_TARGET,
                 "" if ratio <= TOKEN_TARGET else ", MISSED"))
    return ok


def bench_sessions(ref, runs):
    """encode_messages of long sessions: reference, binding, bare C render."""
    from dsml import _native as N
    from dsml import render as R
    ok = True
    series = [("agent", 200, 1), ("agent", 1600, 1), ("text", 200, 8)]
    for kind, turns, scale in series:
        heavy = scale > 1
        msgs = B.session(turns, scale)
        msgs_ref = copy.deepcopy(msgs)
        case = {"messages": msgs, "thinking_mode": "thinking"}
        data = R._dumps(case).encode("utf-8")
        opts = R._options(N.CHAT, "v41", 0)
        fn, free, byref = N.lib.dsml_render_case, N.lib.dsml_output_free, ctypes.byref
        want = ref.encode_messages(msgs_ref, "thinking")
        if dsml.encode_messages(msgs, "thinking") != want:
            raise SystemExit("bench.py: the binding's prompt differs from the "
                             "reference's on the %s session of %d turns" % (kind, turns))

        def c_render():
            out, err = N.Output(), N.Error()
            if fn(data, len(data), byref(opts), byref(out), byref(err)) != 0:
                raise SystemExit("bench.py: the C render refused a session")
            free(byref(out))
        t_ref, t_bin, t_c = interleaved(
            [lambda: ref.encode_messages(msgs_ref, "thinking"),
             lambda: dsml.encode_messages(msgs, "thinking"), c_render], runs)
        r_bin, r_c = t_ref / t_bin, t_ref / t_c
        target = SESSION_TARGETS[kind]
        ok &= r_bin >= target
        line = ("session %-5s %4d turns, %4.1f MB: reference %7.1f ms, binding %7.1f ms, "
                "C render %7.1f ms: binding %.2fx (target %.0fx%s), C render %.2fx"
                % (kind, turns, len(data) / 1e6, t_ref * 1e3, t_bin * 1e3, t_c * 1e3,
                   r_bin, target, "" if r_bin >= target else ", MISSED", r_c))
        if heavy:
            ok &= r_c >= C_TEXT_TARGET
            line += " (target %.0fx%s)" % (C_TEXT_TARGET,
                                           "" if r_c >= C_TEXT_TARGET else ", MISSED")
        print(line)
    return ok


FRESH_TARGETS = {("agent", 200): 4.0, ("agent", 1600): 3.0}


def _fresh_run(side, reference, kind, turns, scale):
    cmd = [sys.executable, os.path.abspath(__file__), "--fresh-child", side,
           os.path.abspath(reference), kind, str(turns), str(scale)]
    if INSTALLED:
        cmd.append("--installed")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def fault_cost(size=16 << 20, runs=5):
    """The kernel's cost of a page mapped afresh, as the session kernel of
    dsml-bench measures it: a block of `size` mapped (anonymous mmap),
    written and unmapped, against the same block written again where it
    was; the medians of `runs`, and the minor faults of a fresh pass."""
    import mmap
    data = b"\x5a" * size
    fresh, again, faults = [], [], []
    for _ in range(runs):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        block = mmap.mmap(-1, size)
        block.write(data)
        block.close()
        fresh.append(time.perf_counter() - start)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    block = mmap.mmap(-1, size)
    block.write(data)
    for _ in range(runs):
        start = time.perf_counter()
        block.seek(0)
        block.write(data)
        again.append(time.perf_counter() - start)
    block.close()
    t_fresh, t_again = statistics.median(fresh), statistics.median(again)
    pages = statistics.median(faults)
    print("page faults: a %d MiB block mapped afresh, written, unmapped %.1f ms (%d faults), "
          "written again %.2f ms: %.1f us a fault"
          % (size >> 20, t_fresh * 1e3, pages, t_again * 1e3,
             (t_fresh - t_again) / max(pages, 1) * 1e6))


def bench_fresh(reference, runs):
    """encode_messages, one call per new interpreter, reference and binding."""
    ok = True
    fault_cost()
    for kind, turns, scale in [("agent", 200, 1), ("agent", 1600, 1), ("text", 200, 8)]:
        got = {"reference": [], "binding": []}
        for r in range(runs):
            sides = ["reference", "binding"] if r % 2 == 0 else ["binding", "reference"]
            for side in sides:
                got[side].append(_fresh_run(side, reference, kind, turns, scale))
        digests = {g["digest"] for side in got for g in got[side]}
        if len(digests) != 1:
            raise SystemExit("bench.py: the binding's prompt differs from the reference's "
                             "on the %s session of %d turns" % (kind, turns))
        t_ref = [g["seconds"] for g in got["reference"]]
        t_bin = [g["seconds"] for g in got["binding"]]
        pairs = sorted(a / b for a, b in zip(t_ref, t_bin))
        ratio = statistics.median(t_ref) / statistics.median(t_bin)
        target = FRESH_TARGETS.get((kind, turns))
        met = target is None or ratio >= target
        ok &= met
        print("fresh   %-5s %4d turns: reference %7.1f ms (%d faults), binding %7.1f ms "
              "(%d faults): %.2fx (runs %.2f to %.2f)%s"
              % (kind, turns, statistics.median(t_ref) * 1e3,
                 statistics.median(g["faults"] for g in got["reference"]),
                 statistics.median(t_bin) * 1e3,
                 statistics.median(g["faults"] for g in got["binding"]),
                 ratio, pairs[0], pairs[-1],
                 "" if target is None else " (target %.0fx%s)" % (target, "" if met
                                                                  else ", MISSED")))
    fault_cost()
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reference")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--breakdown", action="store_true")
    ap.add_argument("--installed", action="store_true",
                    help="import dsml as installed (bindings/python not on sys.path)")
    ap.add_argument("--only", default="render,parse,tokens,sessions",
                    help="comma-separated sections (render, parse, tokens, sessions, "
                         "fresh)")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    ref = P.load_reference(args.reference)
    from dsml import _fast
    print("dsml at %s; libdsml %s at %s; Python %s; compiled fast path: %s"
          % (os.path.dirname(dsml.__file__), dsml.library_version, dsml.library_path,
             sys.version.split()[0], _fast.origin))
    ok = True
    if "render" in only:
        ok &= section_render(ref, args)
    if "parse" in only:
        ok &= section_parse(ref, args)
    if "tokens" in only:
        ok &= bench_tokens(args.runs)
    if "sessions" in only:
        ok &= bench_sessions(ref, args.runs)
    if "fresh" in only:
        ok &= bench_fresh(args.reference, args.runs)
    return 0 if ok else 1


def section_render(ref, args):
    rc = render_cases()
    # the reference does not modify its input; copy once so neither side
    # sees the other's objects
    rc_ref = copy.deepcopy(rc)
    nbytes = sum(len(json.dumps(m, ensure_ascii=False).encode()) for m, _, _ in rc)
    ratio = compare_render(ref, rc, rc_ref, args.runs, nbytes)
    if args.breakdown:
        breakdown_render(rc, args.runs)
    return ratio >= TARGETS["render"]


def section_parse(ref, args):
    pc = parse_cases()
    nbytes = sum(len(t.encode()) for t, _ in pc)
    ratio = compare("parse", ref.parse_message_from_completion_text,
                    dsml.parse_message_from_completion_text, pc, args.runs, nbytes)
    if args.breakdown:
        breakdown_parse(pc, args.runs)
    return ratio >= TARGETS["parse"]


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
