"""The backward passes running on each thread: what multi-grad hooks and checkpoints ask of
the engine (the pass running now; a callback at its end), apart from the engine, which
imports the graph that re-exports those hooks."""
from __future__ import annotations

import threading


class BackwardPass(list):
    """One running engine pass: the callbacks queued for its end, and whether it runs only
    towards given inputs (``autograd.grad``, ``backward(inputs=...)``; torch's graph task
    with exec_info), which reentrant checkpoints refuse."""

    __slots__ = ("targeted",)

    def __init__(self, targeted: bool) -> None:
        super().__init__()
        self.targeted = targeted


class _Passes(threading.local):
    stack: tuple = ()  # one BackwardPass per engine pass running on this thread (innermost last)


passes = _Passes()


def queue_callback(callback) -> None:
    """Run ``callback()`` when the innermost backward pass of this thread has finished."""
    if not passes.stack:
        raise RuntimeError("queue_callback can only be called during the backward pass")
    passes.stack[-1].append(callback)


def current_pass() -> BackwardPass | None:
    """This thread's innermost running backward pass (torch's current graph task), or None."""
    return passes.stack[-1] if passes.stack else None
