"""Python-version shims: gradkit supports Python 3.10 (pyproject's requires-python).

Keep 3.11-only features (``BaseException.add_note``, ``ExceptionGroup``,
``tomllib``, ``typing.Self``, ``except*``) out of the code, or route them through
a helper here.
"""
from __future__ import annotations

HAS_ADD_NOTE = hasattr(BaseException, "add_note")  # Python 3.11+


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``; on Python 3.10 the note goes into ``exc.__notes__`` as 3.11
    would put it (3.10's traceback does not print notes; programs that read them still can)."""
    if HAS_ADD_NOTE:
        exc.add_note(note)
        return
    notes = getattr(exc, "__notes__", None)
    if notes is None:
        notes = exc.__notes__ = []
    notes.append(note)
