"""What got faster or slower between two profiles: self time per op and per source line.

Works on any two EventLists (``prof.events()`` or ``load_trace(path).events()``, gradkit's
or PyTorch's). Op names are compared without their namespace, so ``aten::mm`` in a torch
trace and ``gradkit::mm`` in ours are one row; lines are compared by ``file:line`` (and
module, with ``with_modules``), so both runs should come from the same script.

>>> before = load_trace("traces/before.json").events()
>>> after = load_trace("traces/after.json").events()
>>> [(c.key, round(c.change_us)) for c in op_changes(before, after)[:1]]
[('mm', -1520)]
"""
from __future__ import annotations

from dataclasses import dataclass

from gradkit.profiler.analysis import line_costs

NAMESPACES = ("aten::", "gradkit::")  # op names are compared without these


@dataclass
class Change:
    """One op (or source line) in both profiles: self time in µs and calls, before and after."""

    key: str
    module: str = ""  # lines only: the nn.Module path (profiles made with_modules)
    before_us: float = 0.0
    after_us: float = 0.0
    before_calls: int = 0
    after_calls: int = 0

    @property
    def change_us(self) -> float:
        return self.after_us - self.before_us

    @property
    def verdict(self) -> str:
        """``new``/``gone`` (in one profile only), else ``slower``/``faster``/``same``."""
        before = bool(self.before_calls or self.before_us)  # the engine's row counts no call
        after = bool(self.after_calls or self.after_us)
        if after and not before:
            return "new"
        if before and not after:
            return "gone"
        return "slower" if self.change_us > 0 else "faster" if self.change_us < 0 else "same"

    @property
    def ratio(self) -> float | None:
        """after / before (None when there was no time before)."""
        return self.after_us / self.before_us if self.before_us else None


def op_name(name: str) -> str:
    """``name`` without its ``aten::``/``gradkit::`` namespace."""
    for prefix in NAMESPACES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def op_changes(before, after) -> list[Change]:
    """Self time per op name in ``before`` and ``after``, the largest change first."""
    rows: dict = {}
    for side, events in (("before", before), ("after", after)):
        for avg in events.key_averages():
            row = rows.setdefault(op_name(avg.key), Change(op_name(avg.key)))
            _add(row, side, avg.self_cpu_time_total, avg.count)
    return _largest_first(rows)


def line_changes(before, after) -> list[Change]:
    """Time per source line (``line_costs``: forward plus backward self time) in ``before`` and
    ``after``, the largest change first."""
    rows: dict = {}
    for side, events in (("before", before), ("after", after)):
        for cost in line_costs(events):
            row = rows.setdefault((cost.site, cost.module), Change(cost.site, cost.module))
            _add(row, side, cost.total_us, cost.calls)
    return _largest_first(rows)


def _add(row: Change, side: str, time_us: float, calls: int) -> None:
    setattr(row, f"{side}_us", getattr(row, f"{side}_us") + time_us)
    setattr(row, f"{side}_calls", getattr(row, f"{side}_calls") + calls)


def _largest_first(rows: dict) -> list[Change]:
    return sorted(rows.values(), key=lambda c: abs(c.change_us), reverse=True)
