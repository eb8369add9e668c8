"""``register_multi_grad_hook``: one hook over the gradients of several tensors.

Re-exported from :mod:`gradkit.autograd.graph`. Each tensor gets an ordinary
tensor hook that records its gradient; the first one to fire in a backward
pass queues a callback that runs once the pass has finished (so it sees every
gradient of that pass) and resets the state for the next pass.
"""
from __future__ import annotations

import threading

from gradkit.autograd.backward_pass import current_pass, queue_callback


class MultiHandle:
    """Removes every tensor hook that a multi-grad hook installed."""

    def __init__(self, handles) -> None:
        self.handles = tuple(handles)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> MultiHandle:
    """Call ``fn`` once per backward pass with the gradients of ``tensors``.

    mode ``"all"``: ``fn(grads)`` after the pass, ``None`` for tensors without a
    gradient; mode ``"any"``: ``fn(grad)`` with the first gradient computed.

    >>> handle = register_multi_grad_hook((a, b), lambda grads: print(grads))
    >>> (a * b).sum().backward()    # prints both gradients, once
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()  # backward passes of several threads may reach these tensors
    state = {"pass": None, "grads": None}

    def finish() -> None:
        with lock:
            grads, state["grads"], state["pass"] = state["grads"], None, None
        if mode == "all":
            fn(tuple(grads))

    def make_hook(index: int):
        def hook(grad):
            with lock:
                # a new pass (also after one that raised and never ran its callback)
                first = state["pass"] is not current_pass()
                if first:
                    state["pass"], state["grads"] = current_pass(), [None] * len(tensors)
                    queue_callback(finish)
                state["grads"][index] = grad
            if mode == "any" and first:
                fn(grad)
        return hook

    return MultiHandle(t.register_hook(make_hook(i)) for i, t in enumerate(tensors)
                       if t.requires_grad)
