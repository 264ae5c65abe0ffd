"""Loading libdsml and declaring its C API for ctypes.

This module owns everything that touches ctypes: finding the shared library,
checking its version, the structure layouts of include/dsml/dsml.h, the
prototype table (every C function used by the binding, declared once), the
exception class for error statuses, and the helpers that copy borrowed text
and free owned output.
"""

import ctypes
import ctypes.util
import glob
import os

# The release of libdsml this binding was written against.  A library with
# another major or minor number is refused at import.
EXPECTED_MAJOR = 0
EXPECTED_MINOR = 1

size_t = ctypes.c_size_t
NO_OFFSET = ctypes.c_size_t(-1).value

# Status codes used by the binding itself (the full table lives in the C
# library: dsml_status_name / dsml_status_message).
OK = 0
ERR_NOMEM = -1
ERR_ARGUMENT = -2
ERR_JSON = -3
ERR_UTF8 = -4
ERR_SURROGATE = -6
ERR_LIMIT = -7
ERR_TYPE = -8
ERR_MISSING_KEY = -9
ERR_ROLE = -10
ERR_THINKING_MODE = -11
ERR_EFFORT = -12
ERR_TASK = -13
ERR_IMAGE = -14
ERR_TOOL_NAME = -15
ERR_TOOL_ARGUMENTS = -16
ERR_DEVELOPER = -17
ERR_CALL_FORMAT = -22
ERR_INVOKE_FORMAT = -23
ERR_PARAMETER_FORMAT = -24
ERR_DUPLICATE_PARAMETER = -25
ERR_STATE = -29
ERR_TOOL_CHOICE = -30


# ---------------------------------------------------------------------------
# Structures (must match include/dsml/dsml.h field for field)
# ---------------------------------------------------------------------------

class Error(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("code", ctypes.c_int),
        ("offset", size_t),
        ("path", ctypes.c_char * 256),
        ("message", ctypes.c_char * 512),
    ]


class Allocator(ctypes.Structure):
    _fields_ = [
        ("malloc", ctypes.c_void_p),
        ("realloc", ctypes.c_void_p),
        ("free", ctypes.c_void_p),
        ("ctx", ctypes.c_void_p),
    ]


class Output(ctypes.Structure):
    _fields_ = [
        ("text", ctypes.c_void_p),
        ("len", size_t),
        ("images", ctypes.c_void_p),
        ("images_len", size_t),
        ("image_count", size_t),
        ("segments", ctypes.c_void_p),
        ("segments_len", size_t),
        ("reserved_", ctypes.c_void_p * 4),
        ("alloc_", Allocator),
    ]


class Limits(ctypes.Structure):
    _fields_ = [
        ("max_input_bytes", size_t),
        ("max_depth", size_t),
        ("max_messages", size_t),
        ("max_held_bytes", size_t),
        ("max_argument_bytes", size_t),
        ("max_calls", size_t),
    ]


class RenderOptions(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("thinking_mode", ctypes.c_int),
        ("profile", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("effort_kind", ctypes.c_int),
        ("effort_name", ctypes.c_char_p),
        ("effort_name_len", size_t),
        ("effort_level", ctypes.c_int),
        ("context_json", ctypes.c_char_p),
        ("context_len", size_t),
        ("limits", ctypes.POINTER(Limits)),
        ("allocator", ctypes.POINTER(Allocator)),
        ("max_json_values", size_t),
    ]


class DetectorOptions(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("thinking_mode", ctypes.c_int),
        ("profile", ctypes.c_int),
        ("mode", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("reasoning_calls", ctypes.c_int),
        ("missing_think_end", ctypes.c_int),
        ("stray_think_end", ctypes.c_int),
        ("trailing_text", ctypes.c_int),
        ("trim", ctypes.c_int),
        ("tool_names", ctypes.c_int),
        ("false_values", ctypes.c_int),
        ("markers", ctypes.c_int),
        ("tools_json", ctypes.c_char_p),
        ("tools_len", size_t),
        ("limits", ctypes.POINTER(Limits)),
        ("allocator", ctypes.POINTER(Allocator)),
        # set up with dsml_detector_options_init_size(sizeof this struct):
        # the library reads what this struct declares, no more
        ("tool_choice", ctypes.c_int),
        ("tool_choice_name", ctypes.c_char_p),
        ("tool_choice_name_len", size_t),
        ("parallel_calls", ctypes.c_int),
        ("recoveries", ctypes.c_uint),
        ("think_end_window", size_t),
    ]


class Event(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("type", ctypes.c_int),
        ("text", ctypes.c_void_p),
        ("len", size_t),
        ("call_index", size_t),
        ("name", ctypes.c_void_p),
        ("name_len", size_t),
        ("ns", ctypes.c_void_p),
        ("ns_len", size_t),
        ("status", ctypes.c_int),
        ("offset", size_t),
    ]


class GrammarOptions(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("format", ctypes.c_int),
        ("profile", ctypes.c_int),
        ("thinking_mode", ctypes.c_int),
        ("tool_choice", ctypes.c_int),
        ("tool_choice_name", ctypes.c_char_p),
        ("tool_choice_name_len", size_t),
        ("tool_choice_json", ctypes.c_char_p),
        ("tool_choice_len", size_t),
        ("parallel_calls", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("limits", ctypes.POINTER(Limits)),
        ("allocator", ctypes.POINTER(Allocator)),
    ]


class GrammarInfo(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("lazy", ctypes.c_int),
        ("trigger", ctypes.c_char_p),
        ("trigger_len", size_t),
        ("trigger_pattern", ctypes.c_char_p),
        ("trigger_pattern_len", size_t),
        ("rules", size_t),
    ]


class EffortAlias(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("as_", ctypes.c_char_p), ("level", ctypes.c_int)]


class TurnOptions(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("render", ctypes.POINTER(RenderOptions)),
        ("detect", ctypes.POINTER(DetectorOptions)),
        ("flags", ctypes.c_uint),
        ("effort_aliases", ctypes.POINTER(EffortAlias)),
        ("effort_alias_count", size_t),
        ("grammar", ctypes.POINTER(GrammarOptions)),
        ("default_thinking", ctypes.c_int),
        ("reasoning_lookup", ctypes.c_void_p),
        ("reasoning_lookup_ctx", ctypes.c_void_p),
        ("api", ctypes.c_int),
    ]


class TurnInfo(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("prompt", ctypes.c_void_p), ("prompt_len", size_t),
        ("images", ctypes.c_void_p), ("images_len", size_t), ("image_count", size_t),
        ("segments", ctypes.c_void_p), ("segments_len", size_t),
        ("thinking_mode", ctypes.c_int),
        ("thinking_from", ctypes.c_char_p),
        ("starts_in_reasoning", ctypes.c_int),
        ("effort_level", ctypes.c_int),
        ("effort_in_prompt", ctypes.c_int),
        ("tools", ctypes.c_void_p), ("tools_len", size_t), ("tool_count", size_t),
        ("tools_in_prompt", ctypes.c_int),
        ("tool_choice", ctypes.c_int),
        ("tool_choice_name", ctypes.c_void_p), ("tool_choice_name_len", size_t),
        ("parallel_tool_calls", ctypes.c_int),
        ("response_format", ctypes.c_void_p), ("response_format_len", size_t),
        ("prefill", ctypes.c_int),
        ("ignored", ctypes.c_void_p), ("ignored_len", size_t), ("ignored_count", size_t),
        ("model", ctypes.c_void_p), ("model_len", size_t),
        ("grammar", ctypes.c_void_p), ("grammar_len", size_t),
        ("grammar_info", ctypes.POINTER(GrammarInfo)),
        ("grammar_from", ctypes.c_char_p),
        ("grammar_status", ctypes.c_int),
        ("grammar_error", ctypes.POINTER(Error)),
        ("missing_reasoning", ctypes.c_void_p), ("missing_reasoning_len", size_t),
        ("missing_reasoning_count", size_t),
        ("restored", ctypes.c_void_p), ("restored_len", size_t), ("restored_count", size_t),
        ("stop", ctypes.c_void_p), ("stop_len", size_t), ("stop_count", size_t),
        ("n", size_t),
        ("stream", ctypes.c_int),
        ("include_usage", ctypes.c_int),
        ("api", ctypes.c_int),
    ]


class ResponderOptions(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("flags", ctypes.c_uint),
        ("id", ctypes.c_char_p), ("id_len", size_t),
        ("created", ctypes.c_longlong),
        ("model", ctypes.c_char_p), ("model_len", size_t),
        ("call_id", ctypes.c_void_p), ("call_id_ctx", ctypes.c_void_p),
        ("seed", ctypes.c_char_p), ("seed_len", size_t),
        ("allocator", ctypes.POINTER(Allocator)),
        ("choice_index", size_t),
        ("signature", ctypes.c_char_p), ("signature_len", size_t),
    ]


class Item(ctypes.Structure):
    _fields_ = [
        ("size", size_t),
        ("type", ctypes.c_int),
        ("text", ctypes.c_void_p), ("len", size_t),
        ("status", ctypes.c_int),
        ("offset", size_t),
    ]


# DSML_TURN_*, DSML_RESPOND_*, dsml_item_type, dsml_end_reason
TURN_NONE_DROPS_TOOLS, TURN_GRAMMAR_AUTO, TURN_GRAMMAR_OPTIONAL = 0x1, 0x2, 0x4
RESPOND_HOLD_CALLS, RESPOND_DROP_RAW, RESPOND_SSE = 0x1, 0x2, 0x4
RESPOND_STREAM_ARGUMENTS, RESPOND_KEEP_RAW = 0x10, 0x20
ITEM_CHUNK, ITEM_DIAGNOSTIC, ITEM_DONE = 1, 2, 3
END_REASONS = {"text": 0, "stop": 1, "length": 2, "abort": 3}

# dsml_grammar_format, DSML_GRAMMAR_*
GRAMMAR_FORMATS = {"gbnf": 0, "lark": 1, "structural_tag": 2}
APIS = {"chat": 0, "anthropic": 1, "responses": 2}
TURN_THINKING = {None: 0, "chat": 1, "thinking": 2}
GRAMMAR_WHOLE_TURN = 0x1

# dsml_thinking_mode, dsml_profile, dsml_effort_kind, DSML_RENDER_*
CHAT = 0
THINKING = 1
PROFILE_V41 = 0
PROFILE_PRERELEASE = 1
PROFILE_V4 = 2
PROFILE_V32 = 3
EFFORT_ABSENT = 0
EFFORT_NAME = 1
EFFORT_LEVEL = 2
RENDER_KEEP_THINKING = 0x1
RENDER_NO_BOS = 0x2
RENDER_STRICT = 0x4
RENDER_GUARD = 0x8
RENDER_SEGMENTS = 0x10

# dsml_detect_mode, DSML_DETECT_*, dsml_event_type, DSML_CALL_*
DETECT_LENIENT = 0
DETECT_STRICT = 1
DETECT_RECOVER = 2
DETECT_NO_MESSAGE = 0x1
EVENT_NONE = 0
EVENT_REASONING = 1
EVENT_CONTENT = 2
EVENT_CALL_BEGIN = 3
EVENT_ARGUMENTS = 4
EVENT_CALL_END = 5
EVENT_DIAGNOSTIC = 6
CALL_COMPLETE = 0
CALL_INCOMPLETE = 1
CALL_REFUSED = 2
TOOL_CHOICES = {"auto": 0, "none": 1, "required": 2}
TOOL_CHOICE_FUNCTION = 3
PARALLEL_CALLS_FIRST = 1
PACK_FINISH = 0x1
PACKED_HEADER_SIZE = 48
PACKED_NO_NS = (1 << 64) - 1

# The detector's policies: keyword -> (value names in enum order).  Value 0
# is the reference's behaviour.
POLICIES = {
    "reasoning_calls": ("refuse", "parse"),
    "missing_think_end": ("refuse", "content"),
    "stray_think_end": ("refuse", "reasoning", "drop"),
    "trailing_text": ("refuse", "content"),
    "trim": ("none", "whitespace"),
    "tool_names": ("any", "declared"),
    "false_values": ("verbatim", "validate"),
    "markers": ("exact", "variants"),
}

PROFILES = {"v41": PROFILE_V41, "prerelease": PROFILE_PRERELEASE,
            "v4": PROFILE_V4, "v32": PROFILE_V32}

DETECT_MODES = {"lenient": DETECT_LENIENT, "strict": DETECT_STRICT, "recover": DETECT_RECOVER}

# DSML_RECOVER_*: the recoveries' bit values by name
RECOVERIES = {"spellings": 0x1, "structure": 0x2, "attributes": 0x4, "bodies": 0x8,
              "bare_tags": 0x10, "thinking": 0x20, "cdata": 0x40, "schema": 0x80,
              "foreign": 0x100}

# ---------------------------------------------------------------------------
# Prototype table: (name, restype, argtypes).  Every C function the binding
# calls is declared here and nowhere else.
# ---------------------------------------------------------------------------

_c = ctypes.c_char_p
_p = ctypes.POINTER

PROTOTYPES = [
    ("dsml_version", ctypes.c_char_p, []),
    ("dsml_version_number", ctypes.c_int, []),
    ("dsml_status_name", ctypes.c_char_p, [ctypes.c_int]),
    ("dsml_status_message", ctypes.c_char_p, [ctypes.c_int]),
    ("dsml_error_init", None, [_p(Error)]),
    ("dsml_output_free", None, [_p(Output)]),
    ("dsml_render_options_init_size", None, [_p(RenderOptions), size_t]),
    ("dsml_render", ctypes.c_int,
     [_c, size_t, _p(RenderOptions), _p(Output), _p(Error)]),
    ("dsml_render_request", ctypes.c_int,
     [_c, size_t, _p(RenderOptions), _p(Output), _p(Error)]),
    ("dsml_render_case", ctypes.c_int,
     [_c, size_t, _p(RenderOptions), _p(Output), _p(Error)]),
    ("dsml_renderer_create", ctypes.c_int, [ctypes.c_void_p, _p(ctypes.c_void_p)]),
    ("dsml_renderer_destroy", None, [ctypes.c_void_p]),
    ("dsml_renderer_render", ctypes.c_int,
     [ctypes.c_void_p, _c, size_t, _p(RenderOptions), _p(_p(Output)), _p(Error)]),
    ("dsml_renderer_render_request", ctypes.c_int,
     [ctypes.c_void_p, _c, size_t, _p(RenderOptions), _p(_p(Output)), _p(Error)]),
    ("dsml_renderer_render_case", ctypes.c_int,
     [ctypes.c_void_p, _c, size_t, _p(RenderOptions), _p(_p(Output)), _p(Error)]),
    ("dsml_detector_options_init_size", None, [_p(DetectorOptions), size_t]),
    ("dsml_detector_create", ctypes.c_int,
     [_p(DetectorOptions), _p(ctypes.c_void_p), _p(Error)]),
    ("dsml_detector_destroy", None, [ctypes.c_void_p]),
    ("dsml_detector_feed", ctypes.c_int, [ctypes.c_void_p, _c, size_t]),
    ("dsml_detector_next", ctypes.c_int, [ctypes.c_void_p, _p(Event)]),
    # called once per token: no argtypes, so that ctypes converts nothing
    # (the binding passes c_void_p, bytes, c_size_t, int, the buffer array,
    # c_size_t, None: exactly the C types)
    ("dsml_detector_feed_packed", ctypes.c_int, None),
    ("dsml_detector_finish", ctypes.c_int, [ctypes.c_void_p]),
    ("dsml_detector_reset", None, [ctypes.c_void_p]),
    ("dsml_detector_error", _p(Error), [ctypes.c_void_p]),
    ("dsml_detector_message", ctypes.c_int,
     [ctypes.c_void_p, _p(Output), _p(Error)]),
    ("dsml_parse_completion", ctypes.c_int,
     [_c, size_t, _p(DetectorOptions), _p(Output), _p(Error)]),
    ("dsml_grammar_options_init_size", None, [_p(GrammarOptions), size_t]),
    ("dsml_turn_options_init_size", None, [_p(TurnOptions), size_t]),
    ("dsml_turn_create", ctypes.c_int,
     [_c, size_t, _p(TurnOptions), _p(ctypes.c_void_p), _p(Error)]),
    ("dsml_turn_destroy", None, [ctypes.c_void_p]),
    ("dsml_turn_get_info", _p(TurnInfo), [ctypes.c_void_p]),
    ("dsml_responder_options_init_size", None, [_p(ResponderOptions), size_t]),
    ("dsml_responder_create", ctypes.c_int,
     [ctypes.c_void_p, _p(ResponderOptions), _p(ctypes.c_void_p), _p(Error)]),
    ("dsml_responder_destroy", None, [ctypes.c_void_p]),
    ("dsml_responder_feed", ctypes.c_int, [ctypes.c_void_p, _c, size_t]),
    ("dsml_responder_end", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    ("dsml_responder_next", ctypes.c_int, [ctypes.c_void_p, _p(Item)]),
    ("dsml_responder_completion", ctypes.c_int,
     [ctypes.c_void_p, _p(Output), _p(Error)]),
    ("dsml_responder_error", _p(Error), [ctypes.c_void_p]),
    ("dsml_responder_stopped", ctypes.c_int, [ctypes.c_void_p]),
    ("dsml_responder_set_usage", ctypes.c_int, [ctypes.c_void_p, size_t, size_t, size_t]),
    ("dsml_error_json_api", ctypes.c_int, [_p(Error), ctypes.c_int, _p(Output)]),
    ("dsml_grammar", ctypes.c_int,
     [_c, size_t, _p(GrammarOptions), _p(Output), _p(GrammarInfo), _p(Error)]),
]


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------

def _candidates():
    """Library paths to try, in order, with where each came from."""
    env = os.environ.get("DSML_LIBRARY")
    if env:
        # An explicit choice is final: no silent fallback to another copy.
        return [(env, "DSML_LIBRARY")]
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    for pattern in ("libdsml.so", "libdsml.so.*", "libdsml.dylib",
                    "libdsml.*.dylib", "dsml.dll"):
        for path in sorted(glob.glob(os.path.join(here, pattern))):
            found.append((path, "beside the package"))
    try:
        # written when the package was built against an installed libdsml
        # (pkg-config) or installed by `cmake --install`: absolute, or
        # relative to this directory
        from ._library import PATH
    except ImportError:
        pass
    else:
        found.append((os.path.join(here, PATH), "recorded at installation"))
    system = ctypes.util.find_library("dsml")
    if system:
        found.append((system, "system"))
    found.append(("libdsml.so.0", "system"))
    return found


def _load():
    errors = []
    for path, origin in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            errors.append("%s (%s): %s" % (path, origin, exc))
            continue
        return lib, path
    raise ImportError(
        "dsml: cannot load libdsml; set DSML_LIBRARY to the path of "
        "libdsml.so.  Tried: " + "; ".join(errors))


def _declare(lib, path):
    missing = []
    for name, restype, argtypes in PROTOTYPES:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise ImportError("dsml: %s lacks %s (a libdsml older than this binding?)"
                          % (path, ", ".join(missing)))


lib, library_path = _load()
_declare(lib, library_path)


class Handle:
    """Owns one native handle (``_handle``): freed by close(), at the end of
    a ``with`` block, or when the object is collected; close() again does
    nothing.  A subclass names its destroy function in ``_destroy`` (taken
    when the class is made, so collection at interpreter exit does not need
    this module)."""

    _handle = None
    _destroy = None

    def close(self):
        """Free the handle (also done when the object is collected)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            self._destroy(handle)

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _open(self):
        """The handle; DsmlError (DSML_ERR_STATE) once closed."""
        if self._handle is None:
            raise DsmlError(ERR_STATE, "the %s is closed" % type(self).__name__)
        return self._handle

def check_version(number, text, path):
    """Refuse a library whose major or minor release differs."""
    if number // 10000 != EXPECTED_MAJOR or number // 100 % 100 != EXPECTED_MINOR:
        raise ImportError(
            "dsml: %s is libdsml %s (version number %d); this binding needs "
            "%d.%d.x" % (path, text, number, EXPECTED_MAJOR, EXPECTED_MINOR))


version_number = lib.dsml_version_number()
version = lib.dsml_version().decode("ascii", "replace")
check_version(version_number, version, library_path)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

def status_name(code):
    """DSML_ERR_... name of a status code."""
    return lib.dsml_status_name(code).decode("ascii", "replace")


def status_message(code):
    """One-line description of a status code."""
    return lib.dsml_status_message(code).decode("utf-8", "replace")


class DsmlError(ValueError, AssertionError):
    """Raised for every refusal of libdsml.

    It is both a ValueError and an AssertionError, the two classes the
    reference encoder raises for what it refuses, so handlers written around
    the reference (``except (AssertionError, ValueError)``) catch it.

    Attributes: code (negative int), name ("DSML_ERR_..."), offset (byte
    offset in the input, or None), path (JSON path of the offending value,
    "" when none) and message (what is wrong, naming the place).  A
    Detector's error also carries events: the events produced before the
    failure point.
    """

    def __init__(self, code, message, offset=None, path="", events=()):
        self.code = code
        self.events = list(events)
        self.name = status_name(code)
        self.offset = offset
        self.path = path
        self.message = message
        super().__init__(message)

    def __str__(self):
        text = "%s: %s" % (self.name, self.message)
        if self.offset is not None:
            text += " (at byte %d)" % self.offset
        return text

    def __repr__(self):
        return "DsmlError(%s, %r)" % (self.name, self.message)

    def __reduce__(self):
        return (DsmlError, (self.code, self.message, self.offset, self.path,
                            self.events))


def make_error(status, err, events=()):
    """DsmlError from a failed call's status and dsml_error."""
    code = err.code if err.code != OK else status
    message = err.message.decode("utf-8", "replace") or status_message(code)
    offset = None if err.offset == NO_OFFSET else err.offset
    path = err.path.decode("utf-8", "replace")
    return DsmlError(code, message, offset, path, events)


def raise_error(status, err):
    """Raise DsmlError from a failed call's status and dsml_error."""
    raise make_error(status, err)


ERROR_SIZE = ctypes.sizeof(Error)


def error_struct():
    """A cleared dsml_error ready for one call."""
    err = Error()
    err.size = ERROR_SIZE
    return err


def take_output(out, want_images=False):
    """Copy an output's text (and images JSON when asked), then free it."""
    try:
        text = ctypes.string_at(out.text, out.len).decode("utf-8") if out.text else ""
        images = None
        if want_images:
            images = (ctypes.string_at(out.images, out.images_len).decode("utf-8")
                      if out.images else "[]")
        return text, images
    finally:
        lib.dsml_output_free(ctypes.byref(out))


def new_render_options():
    opts = RenderOptions()
    lib.dsml_render_options_init_size(ctypes.byref(opts), ctypes.sizeof(opts))
    return opts


def new_detector_options():
    opts = DetectorOptions()
    lib.dsml_detector_options_init_size(ctypes.byref(opts), ctypes.sizeof(opts))
    return opts


def profile_value(profile):
    try:
        return PROFILES[profile]
    except (KeyError, TypeError):
        raise DsmlError(ERR_ARGUMENT, "profile must be one of %s, not %r"
                        % (", ".join(sorted(PROFILES)), profile)) from None


__all__ = ["DsmlError", "lib", "library_path", "version", "version_number"]
