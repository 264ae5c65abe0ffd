"""grammar(): the grammar that constrains a turn's decoding to valid calls
(dsml_grammar), for the engines' constrained decoding: GBNF (llama.cpp,
XGrammar's EBNF, SGLang's build_ebnf), Lark (llguidance) or an XGrammar
structural tag."""

import ctypes
import json

from . import _native as N
from ._native import DsmlError
from .render import _utf8

_THINKING = {"chat": N.CHAT, "thinking": N.THINKING}


def grammar(tools=None, *, format="gbnf", profile="v41", thinking_mode="chat",
            tool_choice="auto", parallel_tool_calls=True, whole_turn=False):
    """(text, info) of the grammar for a request's tools and tool_choice.

    tools: the request's "tools" (a list, or its JSON text); tool_choice:
    "auto", "none", "required" or {"type": "function", "function":
    {"name": ...}} (or its JSON text); format: "gbnf", "lark" or
    "structural_tag"; thinking_mode "thinking" when the prompt ended with
    <think>; whole_turn: GBNF under "auto" as the whole turn, not the lazy
    grammar of the calls block.  info: {"lazy", "trigger",
    "trigger_pattern", "rules"}.  Refusals (a schema outside the supported
    subset, an unknown tool) raise DsmlError with the request's JSON path."""
    if format not in N.GRAMMAR_FORMATS:
        raise DsmlError(N.ERR_ARGUMENT, "format must be one of %s, not %r"
                        % (", ".join(repr(f) for f in N.GRAMMAR_FORMATS), format))
    if profile not in N.PROFILES:
        raise DsmlError(N.ERR_ARGUMENT, "unknown profile %r" % (profile,))
    if thinking_mode not in _THINKING:
        raise DsmlError(N.ERR_ARGUMENT, "thinking_mode must be 'chat' or 'thinking', "
                        "not %r" % (thinking_mode,))
    opts = N.GrammarOptions()
    N.lib.dsml_grammar_options_init_size(ctypes.byref(opts), ctypes.sizeof(opts))
    opts.format = N.GRAMMAR_FORMATS[format]
    opts.profile = N.PROFILES[profile]
    opts.thinking_mode = _THINKING[thinking_mode]
    if isinstance(tool_choice, bytes):
        choice = tool_choice
    elif isinstance(tool_choice, str) and tool_choice not in ("auto", "none", "required"):
        choice = _utf8(tool_choice, "tool_choice")          # JSON text
    else:
        choice = _utf8(json.dumps(tool_choice), "tool_choice")
    opts.tool_choice_json = choice
    opts.tool_choice_len = len(choice)
    opts.parallel_calls = 0 if parallel_tool_calls else 1
    opts.flags = N.GRAMMAR_WHOLE_TURN if whole_turn else 0
    if tools is None:
        data = b"[]"
    elif isinstance(tools, (str, bytes)):
        data = _utf8(tools, "tools") if isinstance(tools, str) else bytes(tools)
    else:
        data = _utf8(json.dumps(tools, ensure_ascii=False), "tools")
    out = N.Output()
    info = N.GrammarInfo()
    info.size = ctypes.sizeof(info)
    err = N.Error()
    N.lib.dsml_error_init(ctypes.byref(err))
    status = N.lib.dsml_grammar(data, len(data), ctypes.byref(opts), ctypes.byref(out),
                                ctypes.byref(info), ctypes.byref(err))
    if status != 0:
        N.raise_error(status, err)
    try:
        text = ctypes.string_at(out.text, out.len).decode("utf-8")
        details = {
            "lazy": bool(info.lazy),
            "trigger": info.trigger.decode("utf-8") if info.trigger else None,
            "trigger_pattern": (info.trigger_pattern.decode("utf-8")
                                if info.trigger_pattern else None),
            "rules": info.rules,
        }
    finally:
        N.lib.dsml_output_free(ctypes.byref(out))
    return text, details
