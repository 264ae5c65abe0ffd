"""Comparing a dsml reference surface (dsml, dsml.v4, dsml.v32) with the
reference module it stands for, name by name: the suites of
test_reference_surface.py and test_reference_surface_dialects.py."""

import copy
import json
import sys
import types

TYPING = ("Any", "Dict", "List", "Union", "Optional", "Tuple")


def public_names(ref):
    """The reference's public names: its own functions, values and compiled
    patterns, not the modules or typing names it imports."""
    return {n for n, v in vars(ref).items() if not n.startswith("_")
            and not isinstance(v, types.ModuleType)
            and getattr(v, "__module__", ref.__name__) in (ref.__name__, "re", None)
            and n not in TYPING}


def functions(module, names):
    """The names that are functions in module (not compiled patterns)."""
    return {n for n in names if callable(getattr(module, n, None))
            and not hasattr(getattr(module, n), "pattern")}


def outcome(fn, args):
    args = copy.deepcopy(args)
    try:
        result = fn(*args)
    except RecursionError:
        raise
    except Exception as exc:
        return "error", exc, args
    return "ok", result, args


def ref_try(fn, *args):
    """fn(*args) on copies, or None when it raises."""
    try:
        return fn(*copy.deepcopy(args))
    except Exception:
        return None


def strings(value):
    """Every str inside a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def dsml_args(ref, call):
    """decode_dsml_to_arguments arguments for an internal call."""
    arguments = call["arguments"]
    if not isinstance(arguments, dict):
        arguments = {"arguments": arguments}
    params = {str(k): (v, "true") if isinstance(v, str) else (ref.to_json(v), "false")
              for k, v in arguments.items()}
    name = call["name"] if "namespace" not in call else "%s::%s" % (call["namespace"],
                                                                   call["name"])
    return name, params


def short(value, limit=300):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class Comparison:
    """A TestCase mixin: agree(name, *args) runs the reference's and the
    surface's function of that name on copies of args and records a
    disagreement (different value, different changes to the arguments, or
    one refusing when the other does not; where the reference raises
    AssertionError or ValueError, dsml must raise one of them);
    report(names) prints the counts and fails on any disagreement or on a
    name never checked.  Subclasses set `surface` (the dsml module), `ref`
    (the reference module) and optionally `overrides` (name -> the callable
    to use instead of the surface's)."""

    surface = None
    ref = None
    overrides = {}

    def setUp(self):
        self.bad = []
        self.checked = {}

    def agree(self, name, *args):
        ro = outcome(getattr(self.ref, name), args)
        do = outcome(self.overrides.get(name, getattr(self.surface, name)), args)
        self.checked[name] = self.checked.get(name, 0) + 1
        if ro[0] == "error":
            ok = do[0] == "error" and (
                not isinstance(ro[1], (AssertionError, ValueError))
                or isinstance(do[1], (AssertionError, ValueError)))
        else:
            ok = do[0] == "ok" and do[1] == ro[1] and do[2] == ro[2]
        if not ok:
            self.bad.append((name, args, ro[:2], do[:2]))

    def report(self, names):
        for name, args, ro, do in self.bad[:10]:
            print("%s%r\n  reference: %r\n  dsml:      %r" % (name, short(args), ro, do),
                  file=sys.stderr)
        print("%s surface: %s" % (self.surface.__name__, ", ".join(
            "%s %d" % (n, self.checked.get(n, 0)) for n in sorted(names))))
        for name in names:
            self.assertGreater(self.checked.get(name, 0), 0, name)
        self.assertEqual(len(self.bad), 0, "%d disagreements" % len(self.bad))

    def agree_tools_and_calls(self, msg):
        """A message's tools (their schemas and tools block) and its tool
        calls (conversions both ways, parameter lines, and the decoding of
        their parameters)."""
        ref = self.ref
        if msg.get("tools"):
            self.agree("tools_from_openai_format", msg["tools"])
            functions = ref_try(ref.tools_from_openai_format, msg["tools"])
            if functions is not None:
                self.agree("render_tools", functions)
        if msg.get("tool_calls"):
            self.agree("tool_calls_from_openai_format", msg["tool_calls"])
            for call in ref_try(ref.tool_calls_from_openai_format, msg["tool_calls"]) or ():
                self.agree("encode_arguments_to_dsml", call)
                self.agree("tool_calls_to_openai_format", [call])
                if isinstance(call.get("arguments"), str):
                    decoded = ref_try(json.loads, call["arguments"])
                    if isinstance(decoded, dict):
                        call = dict(call, arguments=decoded)
                self.agree("decode_dsml_to_arguments", *dsml_args(ref, call))

    def agree_completion(self, text, mode, opener):
        """A completion: the whole parse, and the calls parser from the calls
        block (opener: its opening tag up to the name) and from the middle."""
        self.agree("parse_message_from_completion_text", text, mode)
        at = text.find(opener)
        if at >= 0:
            self.agree("parse_tool_calls", at + len(opener), text)
            calls = ref_try(self.ref.parse_tool_calls, at + len(opener), text)
            if calls is not None:
                self.agree("tool_calls_to_openai_format", calls[2])
        self.agree("parse_tool_calls", len(text) // 2, text)

    def check_values(self, names):
        """Every public name that is not a function equals the reference's."""
        for name in set(names) - functions(self.surface, names):
            self.assertEqual(getattr(self.surface, name), getattr(self.ref, name), name)
