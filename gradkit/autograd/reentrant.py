"""Deep reentrant backward (a backward called inside a backward, e.g. by a custom Function or
reentrant checkpoint) continues on a fresh thread, as torch's engine does: every nesting level
costs Python frames, and a few hundred levels would overflow the caller's stack."""
from __future__ import annotations

import threading

from gradkit import backend
from gradkit.autograd import saved_mutation
from gradkit.autograd.batching import state as batch_state
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.saved_hooks import saved_hooks_state

PASSES_PER_THREAD = 50  # nested passes one thread runs before the next level moves on

# the thread-local settings a nested pass inherits, as torch propagates its ThreadLocalState
_INHERITED = (grad_state, batch_state, saved_hooks_state, saved_mutation.state, backend._defaults)


def on_fresh_thread(function, *args):
    """``function(*args)`` on a new thread that starts with this thread's settings; waits for
    it and returns its result or raises its exception here."""
    settings = [dict(vars(local)) for local in _INHERITED]
    outcome: list = []

    def body() -> None:
        for local, values in zip(_INHERITED, settings, strict=True):
            vars(local).update(values)
        try:
            outcome.append((True, function(*args)))
        except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
            outcome.append((False, exc))

    worker = threading.Thread(target=body, name="gradkit reentrant backward")
    worker.start()
    worker.join()
    finished, value = outcome[0]
    if not finished:
        raise value
    return value
