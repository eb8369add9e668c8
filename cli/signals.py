"""Signals while gradkit runs a script: SIGTERM ends the script as Ctrl-C does, and once the
script has ended, SIGINT and SIGTERM wait until the trace is complete.

So every interruption leaves a complete trace or none (a second signal abandons the write,
and the writer removes its temporary file), and gradkit exits with the shell's code for the
signal: 130 for SIGINT, 143 for SIGTERM.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from gradkit.cli import render


class Terminated(BaseException):
    """SIGTERM, raised in the running script where Ctrl-C raises KeyboardInterrupt."""


def exit_code_of_signal(signum: int) -> int:
    """The status a shell reports for a process ended by ``signum`` (128 + its number)."""
    return 128 + signum


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


@contextlib.contextmanager
def _handlers(handler, *signums: int) -> Iterator[None]:
    """``handler`` for ``signums`` inside the block (only the main thread may set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum in signums}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def terminate_raises() -> contextlib.AbstractContextManager:
    """Inside the block SIGTERM raises :class:`Terminated` (the script ends, the trace stays)."""
    return _handlers(_raise_terminated, signal.SIGTERM)


class DeferredSignals:
    """Inside the block, the first SIGINT/SIGTERM is remembered (``received``), not acted on;
    a second one raises KeyboardInterrupt, abandoning what the block was writing."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._handlers = None

    def _handle(self, signum, frame) -> None:
        if self.received is not None:
            raise KeyboardInterrupt()
        self.received = signum

    def __enter__(self) -> DeferredSignals:
        self._handlers = _handlers(self._handle, signal.SIGINT, signal.SIGTERM)
        self._handlers.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._handlers.__exit__(*exc)


@contextlib.contextmanager
def written_whole(console, what: str) -> Iterator[DeferredSignals]:
    """Write ``what`` (a trace, a report) inside the block with SIGINT/SIGTERM deferred, so
    the file is complete or absent; a second signal abandons it (the writer removes its
    temporary file): ``Interrupted again: no <what> written.`` on ``console`` and the exit
    code of the first signal. Once the block is done, ``received`` says what arrived meanwhile.
    """
    late = DeferredSignals()
    try:
        with late:
            yield late
    except KeyboardInterrupt:
        render.status_line(console, f"Interrupted again: no {what} written.")
        raise SystemExit(exit_code_of_signal(late.received or signal.SIGINT)) from None
