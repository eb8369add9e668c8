"""What a long profile shows while it runs (events so far, the trace's size to come), and the
warning before a trace too large for viewers is written."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

# trace bytes per recorded event, measured on an MLP step: a backward node writes its wrapper,
# itself and a flow arrow (about 190 bytes per trace event, two trace events per record)
BYTES_PER_EVENT = 400
DEFAULT_WARN_MB = 100.0  # the Perfetto UI and chrome://tracing slow down past about this


def trace_megabytes(events: int) -> float:
    """The size, in MB, of the uncompressed trace of ``events`` recorded events (an estimate)."""
    return events * BYTES_PER_EVENT / 1e6


def progress_text(script: str, events: int) -> str:
    return f"Profiling {script}: {events:,} events (~{trace_megabytes(events):.1f} MB of trace)"


def size_warning(events: int, limit_mb: float) -> str | None:
    """A warning when the trace to be written exceeds ``limit_mb``, with what to do; else None."""
    size = trace_megabytes(events)
    if size <= limit_mb:
        return None
    return (f"the trace will be about {size:,.0f} MB ({events:,} events), more than viewers load "
            f"comfortably ({limit_mb:g} MB). Record fewer steps with --schedule "
            "WAIT,WARMUP,ACTIVE (the script calls __profiler__.step() after each step), or write "
            "a .json.gz.")


@contextlib.contextmanager
def live_progress(console, script: str, prof, interval_s: float = 0.5) -> Iterator[None]:
    """A spinner that counts the events recorded so far, when a person watches a terminal."""
    if not (console.is_terminal and console.color_system is not None):  # not with --no-color
        yield
        return
    with console.status(progress_text(script, 0)) as status:
        stop = threading.Event()

        def update() -> None:
            while not stop.wait(interval_s):
                status.update(progress_text(script, prof.recorded_events()))
        poller = threading.Thread(target=update, name="gradkit-progress", daemon=True)
        poller.start()
        try:
            yield
        finally:
            stop.set()
            poller.join()
