"""The optional compiled fast path, dsml._speedups.

It is taken from the path in the environment variable DSML_SPEEDUPS when
set ("off" or "0": not used; a path that does not load fails the import,
as DSML_LIBRARY does), else beside the package when the package was built
with a C compiler and Python's headers.  Without it everything runs
through ctypes.  It is used only when the renderer compiled into it is
the release of the libdsml that ctypes loaded; its detector functions are
that library's own (their addresses are handed to it here).
"""

import ctypes
import importlib.machinery
import importlib.util
import os

from . import _native as N

speedups = None
origin = None


def _load():
    choice = os.environ.get("DSML_SPEEDUPS")
    if choice in ("off", "0", "no"):
        return None, "off (DSML_SPEEDUPS)"
    if choice:
        loader = importlib.machinery.ExtensionFileLoader("dsml._speedups", choice)
        spec = importlib.util.spec_from_file_location("dsml._speedups", choice, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        where = choice
    else:
        try:
            from . import _speedups as module
        except ImportError:
            return None, "not built"
        where = module.__file__
    if module.version_number() != N.version_number:
        return None, "%s is for another libdsml release" % where
    return module, where


def _address(name):
    return ctypes.cast(getattr(N.lib, name), ctypes.c_void_p).value


def _bind(module, event_class, kinds):
    module.bind(_address("dsml_detector_feed"), _address("dsml_detector_next"),
                _address("dsml_detector_finish"), event_class, kinds,
                _address("dsml_detector_reset"))


def bind_responder(module):
    module.bind_responder(_address("dsml_responder_feed"), _address("dsml_responder_end"),
                          _address("dsml_responder_next"))


speedups, origin = _load()
