"""record_function: a named range in the profile, as a context manager or decorator."""
from __future__ import annotations

import contextlib

from gradkit.profiler.recorder import active_recorders


class record_function(contextlib.ContextDecorator):
    """Mark a block (or every call of a function) as a named ``user_annotation`` range.

    Costs one check when no profile is recording.

    >>> with gradkit.profiler.profile() as prof:
    ...     with gradkit.profiler.record_function("forward"):
    ...         y = gradkit.ones(3) * 2
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function name must be a str, but got {type(name).__name__}")
        self.name = name
        self.args = args
        self._tokens = ()

    def _recreate_cm(self):
        # a fresh range per decorated call, so recursion and threads never share tokens
        return record_function(self.name, self.args)

    def __enter__(self) -> record_function:
        recorders = active_recorders()
        if recorders:
            self._tokens = [(r, r.range_enter(self.name, self.args)) for r in recorders]
        return self

    def __exit__(self, *exc) -> bool:
        tokens, self._tokens = self._tokens, ()
        for recorder, token in reversed(tokens):
            recorder.range_exit(token)
        return False
