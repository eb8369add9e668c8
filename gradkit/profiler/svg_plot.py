"""Memory over time as an inline SVG step plot: no script, no fonts or files fetched.

>>> svg = memory_plot([("Allocated", [(0, 0), (1000, 4096)], "#1f77b4")], end_ns=2000)
"""
from __future__ import annotations

from html import escape
from itertools import accumulate

from gradkit.profiler.table import format_memory, format_time

WIDTH, HEIGHT = 900, 260
LEFT, RIGHT, TOP, BOTTOM = 80, 40, 20, 40  # margins for the axes' labels
MAX_POINTS = 2000  # per series: a plot wider than its pixels shows nothing more


def running_totals(changes) -> list[tuple[int, int]]:
    """``(ts_ns, total)`` after each ``(ts_ns, nbytes, ...)`` change, in the given order."""
    times = [c[0] for c in changes]
    return list(zip(times, accumulate(c[1] for c in changes)))


def memory_plot(series: list, end_ns: int, start_ns: int = 0) -> str:
    """An ``<svg>`` of step lines ``[(label, [(ts_ns, bytes), ...], colour), ...]`` over
    ``start_ns..end_ns``, with a time axis, a bytes axis and a legend with each peak."""
    top = max((b for _, points, _ in series for _, b in points), default=0) or 1
    span = max(end_ns - start_ns, 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(ts: int) -> float:
        return LEFT + plot_w * (ts - start_ns) / span

    def y(nbytes: int) -> float:
        return TOP + plot_h * (1 - nbytes / top)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" font-family="sans-serif" '
             'font-size="11">',
             f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fafafa" '
             'stroke="#ccc"/>']
    for i in range(5):  # bytes axis: 0, 1/4 ... the top
        value = top * i / 4
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(value):.1f}" '
                     f'y2="{y(value):.1f}" stroke="#e4e4e4"/>'
                     f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">'
                     f'{escape(format_memory(int(value)))}</text>')
    for i in range(6):  # time axis, from the first event
        ts = start_ns + span * i / 5
        parts.append(f'<text x="{x(ts):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
                     f'{escape(format_time((ts - start_ns) / 1000))}</text>')
    for index, (label, points, colour) in enumerate(series):
        peak = max((b for _, b in points), default=0)
        steps = _steps([(x(ts), y(b)) for ts, b in _thin(points)], x(end_ns), y(0))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                     f'points="{steps}"><title>{escape(label)}</title></polyline>')
        parts.append(f'<rect x="{LEFT + 10 + 260 * index}" y="{HEIGHT - 14}" width="12" '
                     f'height="3" fill="{colour}"/><text x="{LEFT + 26 + 260 * index}" '
                     f'y="{HEIGHT - 9}">{escape(label)} (peak {escape(format_memory(peak))})'
                     '</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _thin(points: list) -> list:
    """At most about MAX_POINTS points: per bucket its first, highest and last points, in
    order, so that no peak is lost and each bucket ends at its true value."""
    if len(points) <= MAX_POINTS:
        return points
    bucket = len(points) * 3 // MAX_POINTS + 1
    kept = []
    for first in range(0, len(points), bucket):
        chunk = points[first:first + bucket]
        highest = max(range(len(chunk)), key=lambda i: chunk[i][1])
        kept += [chunk[i] for i in sorted({0, highest, len(chunk) - 1})]
    return kept


def _steps(points: list, end_x: float, zero_y: float) -> str:
    """SVG polyline points of a step function (the value holds until the next change)."""
    out, last_y = [], zero_y
    for px, py in points:
        out.append(f"{px:.1f},{last_y:.1f} {px:.1f},{py:.1f}")
        last_y = py
    out.append(f"{end_x:.1f},{last_y:.1f}")
    return " ".join(out)
