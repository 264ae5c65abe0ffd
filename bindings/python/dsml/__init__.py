"""dsml - the DeepSeek-V4.1 chat protocol ("DSML") from Python, backed by
libdsml through ctypes (standard library only).

A drop-in for the reference encoder (``import dsml as encoding``): every
public name of its encoding.py, the entry points backed by libdsml::

    import dsml
    prompt = dsml.encode_messages(messages, "thinking")
    message = dsml.parse_message_from_completion_text(text, "thinking")

DeepSeek-V4's and V3.2's references have theirs in dsml.v4 and dsml.v32
(``import dsml.v4 as encoding_dsv4``), on libdsml's V4 and V3.2 profiles.

Every refusal raises dsml.DsmlError (code, name, offset, path, message).
The library is loaded from $DSML_LIBRARY, else beside this package, else
from the system.
"""

import sys

if sys.version_info < (3, 9):  # pragma: no cover
    raise ImportError("dsml needs Python 3.9 or later")

from ._native import DsmlError, library_path, status_message, status_name
from ._native import version as library_version
from .render import encode_messages, render_case, render_request
from .parse import (Detector, Event, parse_completion,
                    parse_message_from_completion_text)
from .turn import Responder, Turn, error_json
from .grammar import grammar
from . import reference as _reference
from .reference import *  # noqa: F401,F403  (the reference's other public names)
from . import v4, v32  # noqa: F401  (DeepSeek-V4's and V3.2's references)

__version__ = "0.1.0"

__all__ = [
    "Detector",
    "DsmlError",
    "Event",
    "Responder",
    "Turn",
    "grammar",
    "encode_messages",
    "error_json",
    "parse_completion",
    "parse_message_from_completion_text",
    "library_path",
    "library_version",
    "render_case",
    "render_request",
    "status_message",
    "status_name",
] + _reference.__all__
