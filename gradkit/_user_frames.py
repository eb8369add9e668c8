"""The user's frames: where an op was called from, and where the user's stack ends.

``first_user_frame`` finds the innermost frame outside gradkit (the profiler's call site of
an op, the first frame of anomaly mode's traceback). It runs per op that makes a node while
observing, walking out from the caller through gradkit's frames.

``gradkit run/profile SCRIPT`` (and ``python -m``) run the user's code through runpy, under
the console script and click. Stacks that gradkit formats for people (anomaly tracebacks,
the profiler's ``Call stack`` and ``export_stacks``) stop below the innermost runpy frame, so
they start at the script, as ``python SCRIPT`` tracebacks do. Only formatting reads this:
capturing a stack costs the same as before.

>>> user_frame_count([script_code, run_code_of_runpy, click_code])
1
"""
from __future__ import annotations

import os
import runpy
import sys
import warnings
from sys import _getframe
from collections.abc import Iterable

_RUNPY_FILES = (runpy.__file__, "<frozen runpy>")  # the source file, or the frozen module

# filename -> True when the file is gradkit's (keyed by name: a str caches its hash, a code
# object hashes its constants on every lookup)
internal_files: dict = {}


def _internal_dirs() -> tuple:
    dirs = [os.path.dirname(os.path.abspath(__file__)) + os.sep]
    cli = sys.modules.get("gradkit.cli")  # installed from cli/, outside the package folder
    if cli is not None and getattr(cli, "__file__", None):
        dirs.append(os.path.dirname(os.path.abspath(cli.__file__)) + os.sep)
    return tuple(dirs)


def is_internal(filename: str) -> bool:
    """Whether ``filename`` is part of gradkit (remembered in ``internal_files``)."""
    internal = internal_files[filename] = filename.startswith(_internal_dirs())
    return internal


def first_user_frame(key, skip: int = 2):
    """The innermost frame outside gradkit; the ``skip - 1`` frames above this call (its
    caller, and so on) must be gradkit's. ``key`` (an op's name) is unused: kept for callers.

    Every frame from ``skip`` outwards is looked at: a probe at the depth one op name found
    last time returned wrong lines, since an op (``linear``) is called from user frames at
    several depths (a layer called in one module's forward is found in the forward that
    called that module).
    """
    frame = _getframe(skip)
    while frame is not None:
        filename = frame.f_code.co_filename
        try:  # a subscript, not a .get call: this runs per frame of every observed op
            internal = internal_files[filename]
        except KeyError:  # a file not seen yet
            internal = is_internal(filename)
        if not internal:
            return frame
        frame = frame.f_back
    return None


_warned_once: set = set()


# torch.set_warn_always(True): warn-once warnings warn every time, as torch's
warn_always = [False]


def warn_once_at_user(message: str, category: type = UserWarning) -> None:
    """Warn once per process (every time under ``set_warn_always(True)``), at the user's line
    (torch's TORCH_WARN_ONCE)."""
    if warn_always[0] or message not in _warned_once:
        _warned_once.add(message)
        warn_at_user(message, category)


def warn_at_user(message: str, category: type = UserWarning) -> None:
    """Warn at the user's line, the innermost frame outside gradkit (torch's TORCH_WARN)."""
    frame = first_user_frame(None)
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
        return
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__", "<string>"),  # as warn's
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


def user_frame_count(codes: Iterable) -> int:
    """How many of ``codes`` (a stack's code objects, innermost first) are the user's."""
    count = 0
    for code in codes:
        if code.co_filename in _RUNPY_FILES:
            break
        count += 1
    return count
