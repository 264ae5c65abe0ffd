"""Shared helpers of the binding's test suites: import path, golden files,
first-difference reports."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(BINDING))
TOOLS = os.path.join(BINDING, "tools")

# DSML_TEST_INSTALLED: the suites check the installed package (see
# tools/check_install.py), so the source tree must not shadow it.
for _p in (TOOLS,) if os.environ.get("DSML_TEST_INSTALLED") else (BINDING, TOOLS):
    if _p not in sys.path:
        sys.path.insert(0, _p)


def testdata(name):
    root = os.environ.get("DSML_TESTDATA") or os.path.join(REPO, "testdata")
    return os.path.join(root, name)


def shared(*parts):
    return os.path.join(os.path.dirname(REPO), "shared", *parts)


def golden_lines(name):
    with open(testdata(name), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def first_difference(want, got):
    """'at character N: want ... got ...' for two texts, or None if equal."""
    if want == got:
        return None
    n = 0
    for n, (a, b) in enumerate(zip(want, got)):
        if a != b:
            break
    else:
        n = min(len(want), len(got))
    lo = max(0, n - 30)
    return "at character %d: want %r, got %r" % (
        n, want[lo:n + 30], got[lo:n + 30])


def case_arguments(case):
    """encode_messages arguments for a golden case object, as the reference's
    load_cases / encode_case build them."""
    messages = case["messages"]
    if "tools" in case:
        messages[0]["tools"] = case["tools"]
    kwargs = {
        "context": case.get("context"),
        "reasoning_effort": case.get("reasoning_effort"),
    }
    for key in ("drop_thinking", "add_default_bos_token"):
        if key in case:
            kwargs[key] = case[key]
    return messages, case.get("thinking_mode") or "chat", kwargs
