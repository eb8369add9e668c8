"""Folded stacks (``root;caller;op value``), the input format of flamegraph.pl and speedscope."""
from __future__ import annotations

import os

METRICS = ("self_cpu_time_total", "cpu_time_total")
_SEPARATORS = str.maketrans(" ;\t\n", "____")  # as torch: a frame never splits a line or a stack


def folded_stacks(events, metric: str = "self_cpu_time_total") -> dict:
    """{folded stack: total microseconds} over events that carry a Python stack."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    totals: dict = {}
    for event in events:
        if not event.stack:
            continue
        frames = [f.translate(_SEPARATORS) for f in reversed(event.stack)]
        key = ";".join([*frames, event.name.translate(_SEPARATORS)])
        totals[key] = totals.get(key, 0.0) + getattr(event, metric)
    return totals


def export_stacks(events, path: str, metric: str = "self_cpu_time_total") -> None:
    """Write one ``stack value`` line per distinct stack (values in whole microseconds)."""
    lines = [f"{stack} {int(value)}\n" for stack, value in folded_stacks(events, metric).items()
             if int(value) > 0]  # as torch: a stack under 1 µs has no width in a flame graph
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(lines)
    os.replace(tmp, path)
