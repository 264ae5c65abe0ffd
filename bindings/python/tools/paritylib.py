"""Comparing the binding with the reference encoder, case by case, and
shrinking a mismatching case to a minimal reproduction.

A case is a dict made by gen.py (or taken from a golden file):
{"kind": "render", "messages", "thinking_mode", ...} or
{"kind": "parse", "text", "thinking_mode"}.  Outcomes are ("ok", value) or
("error", "what was raised").
"""

import copy
import importlib.util
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.dirname(HERE)
if BINDING not in sys.path:
    sys.path.insert(0, BINDING)

import dsml  # noqa: E402

RENDER_KEYS = ("context", "drop_thinking", "add_default_bos_token",
               "reasoning_effort")


def load_reference(path):
    """Import the reference encoding.py from a path."""
    spec = importlib.util.spec_from_file_location("dsml_reference_encoding", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _render_kwargs(case):
    return {k: copy.deepcopy(case[k]) for k in RENDER_KEYS if k in case}


def run_reference(ref, case):
    try:
        if case["kind"] == "render":
            prompt, media = ref.encode_messages(
                copy.deepcopy(case["messages"]), case.get("thinking_mode"),
                return_multi_modal_data=True, **_render_kwargs(case))
            return ("ok", (prompt, media["images"]))
        return ("ok", ref.parse_message_from_completion_text(
            case["text"], case.get("thinking_mode")))
    except RecursionError:
        raise
    except Exception as exc:
        return ("error", "%s: %s" % (type(exc).__name__, exc))


def _chunks(data, rng):
    """Split bytes at random points (possibly inside a UTF-8 character)."""
    i = 0
    while i < len(data):
        n = rng.choice([1, 1, 2, 3, 5, 8, 13, 64, len(data)])
        yield data[i:i + n]
        i += n


def _detector_outcome(text, mode, strict, rng):
    events = []
    try:
        det = dsml.Detector(mode if mode in ("chat", "thinking") else "chat",
                            strict=strict)
        with det:
            for chunk in _chunks(text.encode("utf-8"), rng):
                events += det.feed(chunk)
            events += det.finish()
            return ("ok", det.message()), events
    except dsml.DsmlError as exc:
        return ("error", exc.name), events + exc.events


def _events_agree(message, events):
    """Whether the text events and argument fragments add up to message."""
    content = "".join(e.text for e in events if e.kind == "content")
    reasoning = "".join(e.text for e in events if e.kind == "reasoning")
    if content != message["content"] or reasoning != message["reasoning_content"]:
        return False
    args = {}
    ends = {}
    for e in events:
        if e.kind == "arguments":
            args[e.index] = args.get(e.index, "") + e.text
        elif e.kind == "call_end":
            ends[e.index] = e.complete
    done = [args.get(i, "") for i in sorted(ends) if ends[i]]
    return done == [c["function"]["arguments"] for c in message["tool_calls"]]


def run_binding(case, rng=None, detector=True):
    """The binding's outcome; for completions, also the detector's checks."""
    try:
        if case["kind"] == "render":
            prompt, media = dsml.encode_messages(
                copy.deepcopy(case["messages"]), case.get("thinking_mode"),
                return_multi_modal_data=True, strict=True, **_render_kwargs(case))
            return ("ok", (prompt, media["images"]))
        mode = case.get("thinking_mode")
        outcome = _parse_outcome(case["text"], mode)
        if detector and outcome[0] != "exception":
            rng = rng or random.Random(0)
            det_mode = "thinking" if mode == "thinking" else "chat"
            strict, _ = _detector_outcome(case["text"], det_mode, True, rng)
            want = outcome if outcome[0] == "ok" else ("error", outcome[2])
            if strict != want:
                return ("detector", "strict detector: %r, parser: %r" % (strict, want))
            if outcome[0] == "ok":
                lenient, events = _detector_outcome(case["text"], det_mode, False, rng)
                if lenient != outcome:
                    return ("detector", "lenient detector: %r" % (lenient,))
                if not _events_agree(outcome[1], events):
                    return ("detector", "events do not add up to the message: %r"
                            % (events,))
        return outcome[:2]
    except dsml.DsmlError as exc:
        return ("error", "%s: %s" % (exc.name, exc.message))
    except Exception as exc:
        return ("exception", "%s: %s" % (type(exc).__name__, exc))


def _parse_outcome(text, mode):
    try:
        return ("ok", dsml.parse_message_from_completion_text(text, mode))
    except dsml.DsmlError as exc:
        return ("error", "%s: %s" % (exc.name, exc.message), exc.name)


# The reference parser's errors and the codes dsml.h gives them.
PARSE_ERRORS = [
    ("Invalid thinking format: missing </think>", "DSML_ERR_MISSING_THINK_END"),
    ("Invalid format: missing EOS token", "DSML_ERR_MISSING_EOS"),
    ("Tool call format error", "DSML_ERR_CALL_FORMAT"),
    ("Missing special token in tool calls", "DSML_ERR_CALL_FORMAT"),
    ("Tool name format error", "DSML_ERR_INVOKE_FORMAT"),
    ("Parameter format error", "DSML_ERR_PARAMETER_FORMAT"),
    ("Duplicate parameter name", "DSML_ERR_DUPLICATE_PARAMETER"),
    ("Tool name must not contain '::'", "DSML_ERR_TOOL_NAME"),
    ("Unexpected content after tool calls", "DSML_ERR_TRAILING_TEXT"),
    ("Unexpected content at end", "DSML_ERR_TRAILING_TEXT"),
    ("Unexpected special token", "DSML_ERR_SPECIAL_TOKEN"),
]


def parse_error_code(reference_error):
    """The DSML_ERR_* name for a reference parser error, or None."""
    message = reference_error.partition(": ")[2]
    for prefix, code in PARSE_ERRORS:
        if message.startswith(prefix):
            return code
    return None


def mismatch(ref_outcome, dsml_outcome, kind=None):
    """None when the outcomes agree, else a short mismatch kind.  For
    completions (kind "parse") both sides must also fail for the same
    reason."""
    r, d = ref_outcome[0], dsml_outcome[0]
    if d in ("exception", "detector"):
        return d
    if r == "error" and d == "error":
        if kind == "parse":
            want = parse_error_code(ref_outcome[1])
            if want is not None and not dsml_outcome[1].startswith(want + ":"):
                return "different error"
        return None
    if r == "error":
        return "reference refused, binding accepted"
    if d == "error":
        return "reference accepted, binding refused"
    if ref_outcome[1] != dsml_outcome[1]:
        return "different result"
    return None


def check(ref, case, rng=None):
    """(kind or None, reference outcome, binding outcome)."""
    ro = run_reference(ref, case)
    do = run_binding(case, rng)
    return mismatch(ro, do, case["kind"]), ro, do


# ---------------------------------------------------------------------------
# Shrinking
# ---------------------------------------------------------------------------

def _candidates(value):
    """Smaller variants of a JSON value, biggest cuts first."""
    if isinstance(value, list):
        n = len(value)
        size = n // 2
        while size >= 1:
            for start in range(0, n, size):
                yield value[:start] + value[start + size:]
            size //= 2
        for i, item in enumerate(value):
            for smaller in _candidates(item):
                yield value[:i] + [smaller] + value[i + 1:]
    elif isinstance(value, dict):
        keys = list(value)
        for k in keys:
            yield {kk: vv for kk, vv in value.items() if kk != k}
        for k in keys:
            for smaller in _candidates(value[k]):
                out = dict(value)
                out[k] = smaller
                yield out
    elif isinstance(value, str):
        n = len(value)
        if n == 0:
            return
        yield ""
        size = n // 2
        while size >= 1:
            for start in range(0, n, size):
                yield value[:start] + value[start + size:]
            size //= 2
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if value not in (0, 1):
            yield 1


def shrink(ref, case, kind, budget=4000):
    """Smallest variant of case (within budget checks) with the same
    mismatch kind."""
    best = copy.deepcopy(case)
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        fixed = {"kind": best["kind"]}
        body = {k: v for k, v in best.items() if k != "kind"}
        for cand in _candidates(body):
            tries += 1
            if tries >= budget:
                break
            c = dict(fixed, **cand)
            if c["kind"] == "render" and "messages" not in c:
                continue
            if c["kind"] == "parse" and "text" not in c:
                continue
            try:
                k, _, _ = check(ref, c)
            except RecursionError:
                continue
            if k == kind:
                best = c
                improved = True
                break
    return best


def describe(case, ro, do):
    """A reproduction: the call for each side and both outcomes."""
    lines = []
    if case["kind"] == "render":
        kwargs = ", ".join("%s=%s" % (k, json.dumps(case[k], ensure_ascii=False))
                           for k in RENDER_KEYS if k in case)
        lines.append("encode_messages(%s, %s%s)" % (
            json.dumps(case["messages"], ensure_ascii=False),
            json.dumps(case.get("thinking_mode")), ", " + kwargs if kwargs else ""))
    else:
        lines.append("parse_message_from_completion_text(%s, %s)" % (
            json.dumps(case["text"], ensure_ascii=False),
            json.dumps(case.get("thinking_mode"))))
    lines.append("  reference: %s" % (_short(ro),))
    lines.append("  binding:   %s" % (_short(do),))
    return "\n".join(lines)


def _short(outcome, limit=600):
    text = repr(outcome[1]) if outcome[0] == "ok" else outcome[1]
    text = "%s %s" % (outcome[0], text)
    return text if len(text) <= limit else text[:limit] + "..."


def golden_case(line, kind):
    """The case of one golden line (its parsed JSON) in the parity format."""
    if kind == "render":
        c = json.loads(line["case"])
        messages = c["messages"]
        if "tools" in c and messages:
            messages[0]["tools"] = c["tools"]
        case = {"kind": "render", "messages": messages,
                "thinking_mode": c.get("thinking_mode") or "chat"}
        for k in RENDER_KEYS:
            if k in c:
                case[k] = c[k]
        return case
    return {"kind": "parse", "text": line["text"], "thinking_mode": line["thinking_mode"]}


def golden_cases(path, kind):
    """(id, case) of each line of a golden file, in the parity format."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                yield d["id"], golden_case(d, kind)
