"""Keep NumPy's floating-point RuntimeWarnings (0/0, log(-1), overflow...) out of gradkit's
ops: torch returns nan/inf silently, and so do we.

A warnings filter matching RuntimeWarnings raised from gradkit's own modules costs nothing per
op and leaves the user's own NumPy code alone. But ``warnings.catch_warnings`` restores, on
exit, the filter list it saw on entry, dropping a filter added inside it; pytest wraps test
collection and every test in one, so a gradkit imported there lost its filter. Factories and
backward therefore call :func:`keep_quiet`, which re-adds the filter, first in the list, when
the list is not the one it last saw (one identity check otherwise).
"""
from __future__ import annotations

import warnings

_seen_filters: list | None = None


def keep_quiet() -> None:
    """Make sure the current warnings filter list silences NumPy's RuntimeWarnings raised in
    gradkit's modules."""
    global _seen_filters
    if warnings.filters is not _seen_filters:
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradkit\.")
        _seen_filters = warnings.filters
