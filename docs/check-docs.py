#!/usr/bin/env python3
"""check-docs.py --cli DSML_RENDER --lib LIBDSML_SO FILE.md...

Checks that the examples in the documentation are true of the code.  A
fenced block is checked when an HTML comment right before it says how:

  <!-- check: dsml-render ARGS -->     the next block is the input (fed on
                                      stdin), the block after it the exact
                                      output (stdout and stderr)
  <!-- check: session -->             a console block: each "$ COMMAND" line
                                      is run by bash in the repository's root
                                      with dsml-render on PATH; the lines up to
                                      the next "$ " are its exact stdout
  <!-- check: golden FILE ID -->       the block is a piece of the expected
                                      prompt (or message JSON) of that golden
                                      case in testdata/FILE
  <!-- check: same-as PATH -->        the block equals the text of PATH
                                      between the lines "/* README begin */"
                                      and "/* README end */"
  <!-- check: python -->              the block runs (the binding on
                                      PYTHONPATH, DSML_LIBRARY set); the block
                                      after it is its exact stdout

A block's text is its lines, each with its newline; an output or piece is
also taken as matching when it equals the block without its last newline
(a prompt has no newline at its end).
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"^<!-- check: (.*?) -->$")
FENCE = re.compile(r"^(`{3,})(\S*)\s*$")


def blocks_after(lines, i, count):
    """The next `count` fenced blocks after line i: (text, end line)."""
    found = []
    while len(found) < count and i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip() and found:
                break  # prose between an input and its output
            i += 1
            continue
        fence, body = m.group(1), []
        i += 1
        while i < len(lines) and lines[i].rstrip("\n") != fence:
            body.append(lines[i])
            i += 1
        found.append("".join(body))
        i += 1
    if len(found) < count:
        raise ValueError("expected %d fenced block(s)" % count)
    return found


def matches(got, block):
    return got == block or (block.endswith("\n") and got == block[:-1])


def run(args, stdin=b"", env=None, shell=False):
    return subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          cwd=ROOT, env=env, shell=shell, check=False).stdout.decode("utf-8")


def golden_case(name, case_id, cache={}):
    if name not in cache:
        with open(os.path.join(ROOT, "testdata", name), encoding="utf-8") as f:
            cache[name] = {c["id"]: c for c in map(json.loads, f)}
    return cache[name][case_id]


def check(kind, arg, lines, i, opts):
    """None when the example holds, else what is wrong."""
    if kind == "dsml-render":
        src, want = blocks_after(lines, i, 2)
        if src.endswith("\n"):
            src = src[:-1]
        got = run([opts.cli] + arg.split(), stdin=src.encode("utf-8"))
        return None if matches(got, want) else "output differs:\n" + got
    if kind == "session":
        (text,) = blocks_after(lines, i, 1)
        env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(opts.cli)) + os.pathsep
                   + os.environ.get("PATH", ""), NO_COLOR="1")
        cmds = []
        for line in text.splitlines(True):
            if line.startswith("$ "):
                cmds.append([line[2:], ""])
            elif cmds:
                cmds[-1][1] += line
            else:
                return "session does not start with '$ '"
        for cmd, want in cmds:
            got = subprocess.run(["bash", "-c", cmd], stdout=subprocess.PIPE, cwd=ROOT, env=env,
                                 check=False).stdout.decode("utf-8")
            if not matches(got, want) and not matches(got + "\n", want):
                return "$ %s-- got:\n%s-- expected:\n%s" % (cmd, got, want)
        return None
    if kind == "golden":
        name, case_id = arg.split()
        (piece,) = blocks_after(lines, i, 1)
        expect = golden_case(name, case_id)["expect"]
        whole = expect["prompt"] if "prompt" in expect else json.dumps(expect, ensure_ascii=False)
        if piece in whole or piece.rstrip("\n") in whole:
            return None
        return "not in the expected output of %s %s" % (name, case_id)
    if kind == "same-as":
        (code,) = blocks_after(lines, i, 1)
        with open(os.path.join(ROOT, arg), encoding="utf-8") as f:
            src = f.read()
        m = re.search(r"/\* README begin \*/\n(.*?)/\* README end \*/\n", src, re.S)
        if not m:
            return "%s has no README markers" % arg
        return None if m.group(1) == code else "differs from %s" % arg
    if kind == "python":
        code, want = blocks_after(lines, i, 2)
        env = dict(os.environ, DSML_LIBRARY=opts.lib,
                   PYTHONPATH=os.path.join(ROOT, "bindings", "python"))
        got = run([sys.executable, "-B", "-c", code], env=env)
        return None if matches(got, want) else "output differs:\n" + got
    return "unknown check %r" % kind


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("files", nargs="+")
    opts = ap.parse_args()
    total = failed = 0
    for path in opts.files:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        for i, line in enumerate(lines):
            m = MARK.match(line.rstrip("\n"))
            if not m:
                continue
            kind, _, arg = m.group(1).partition(" ")
            total += 1
            try:
                problem = check(kind, arg, lines, i + 1, opts)
            except (ValueError, KeyError, OSError) as e:
                problem = "%s: %s" % (type(e).__name__, e)
            if problem:
                failed += 1
                print("%s:%d: %s: %s" % (path, i + 1, m.group(1), problem))
    print("%d documentation examples checked, %d failed" % (total, failed))
    sys.exit(1 if failed or not total else 0)


if __name__ == "__main__":
    main()
