"""Where the user's stack ends: the frames a runner adds above a script are not the user's.

``gradkit run/profile SCRIPT`` (and ``python -m``) run the user's code through runpy, under
the console script and click. Stacks that gradkit formats for people (anomaly tracebacks,
the profiler's ``Call stack`` and ``export_stacks``) stop below the innermost runpy frame, so
they start at the script, as ``python SCRIPT`` tracebacks do. Only formatting reads this:
capturing a stack costs the same as before.

>>> user_frame_count([script_code, run_code_of_runpy, click_code])
1
"""
from __future__ import annotations

import runpy
from collections.abc import Iterable

_RUNPY_FILES = (runpy.__file__, "<frozen runpy>")  # the source file, or the frozen module


def user_frame_count(codes: Iterable) -> int:
    """How many of ``codes`` (a stack's code objects, innermost first) are the user's."""
    count = 0
    for code in codes:
        if code.co_filename in _RUNPY_FILES:
            break
        count += 1
    return count
