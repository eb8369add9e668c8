"""``key_averages().table()``: torch's columns, units and footer, as plain text."""
from __future__ import annotations

import math

SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count",
             "cpu_memory_usage", "self_cpu_memory_usage", "flops")


# control characters (C0, DEL, C1) and bidi overrides, written as escapes: a name must not move
# the cursor, colour the terminal or reorder the line it is printed on
_UNPRINTABLE = {c: ascii(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0),
                                                 *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def printable(text: str) -> str:
    """``text`` with control characters escaped (``"a\\nb"`` for a newline), safe to print."""
    return text.translate(_UNPRINTABLE)


_TIME_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}


def format_time(us: float, unit: str | None = None) -> str:
    """Microseconds as torch prints them: ``1.234s``, ``1.234ms`` or ``1.234us``; ``unit``
    (``"s"``, ``"ms"`` or ``"us"``) fixes the unit, anything else chooses it (as torch)."""
    if unit in _TIME_UNITS:
        return f"{us / _TIME_UNITS[unit]:.3f}{unit}"
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    """Bytes as torch prints them: ``1.50 MB``, ``12.00 KB`` or ``48 B``."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{int(nbytes)} B"


def _percent(part: float, total: float) -> str:
    return f"{part * 100 / total:.2f}%" if total else "0.00%"


def _flops_unit(events) -> tuple[str, float]:
    largest = max((e.flops for e in events), default=0)
    names = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")
    power = min(int(math.log10(largest) // 3), len(names) - 1) if largest > 0 else 0
    return names[power], 10.0 ** (3 * power)


def format_table(events, sort_by=None, row_limit: int = 100, max_src_column_width: int = 75,
                 max_name_column_width: int = 55, max_shapes_column_width: int = 80, header=None,
                 top_level_events_only: bool = False, time_unit: str | None = None) -> str:
    """Render averaged (or raw) events as torch's profiler table (times in ``time_unit``:
    ``"s"``, ``"ms"``, ``"us"``, or None to choose per value)."""
    if sort_by is not None and sort_by not in SORT_KEYS:
        raise ValueError(f"unknown sort_by {sort_by!r}; expected one of {', '.join(SORT_KEYS)}")
    rows = list(events)
    if not rows:
        return ""
    if top_level_events_only:
        rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
    total_self = sum(e.self_cpu_time_total for e in events)
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]

    memory = getattr(events, "profile_memory", False)
    shapes = getattr(events, "record_shapes", False) and any(e.input_shapes for e in rows)
    stacks = getattr(events, "with_stack", False) and any(e.stack for e in rows)
    flops = getattr(events, "with_flops", False) and any(e.flops for e in rows)
    name_width = min(max(len(printable(e.key)) for e in events) + 4, max_name_column_width)
    columns = [("Name", name_width), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12),
               ("CPU total", 12), ("CPU time avg", 12)]
    if memory:
        columns += [("CPU Mem", 12), ("Self CPU Mem", 12)]
    columns.append(("# of Calls", 12))
    if shapes:
        width = min(max(len(str(e.input_shapes)) for e in rows) + 4, max_shapes_column_width)
        columns.append(("Input Shapes", width))
    if stacks:
        src_width = min(max(len(printable(e.stack[0])) for e in rows if e.stack) + 4,
                        max_src_column_width)
        columns.append(("Source Location", src_width))
    if flops:
        flops_name, flops_scale = _flops_unit(rows)
        columns.append((f"Total {flops_name}", 14))

    def line(cells):
        pairs = zip(cells, columns, strict=True)
        return "  ".join(_fit(str(c), w).rjust(w) for c, (_, w) in pairs) + "  "

    rule = "  ".join("-" * w for _, w in columns) + "  "
    out = []
    if header is not None:  # torch's banner: a line of "=" as wide as the table, the header
        out += ["=" * (len(rule) - 2), header]
    if top_level_events_only:
        out += ["=" * (len(rule) - 2), "This report only display top-level ops statistics"]
    out += [rule, line([name for name, _ in columns]), rule]
    for e in rows:
        cells = [e.key, _percent(e.self_cpu_time_total, total_self),
                 format_time(e.self_cpu_time_total, time_unit),
                 _percent(e.cpu_time_total, total_self), format_time(e.cpu_time_total, time_unit),
                 format_time(e.cpu_time, time_unit)]
        if memory:
            cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        cells.append(e.count)
        if shapes:
            cells.append(e.input_shapes if e.input_shapes is not None else [])
        if stacks:
            # cut at the start: the file's end, line and function are what tells sites apart
            site = printable(e.stack[0]) if e.stack else ""
            cells.append(site if len(site) <= src_width else "..." + site[3 - src_width:])
        if flops:
            cells.append(f"{e.flops / flops_scale:.3f}" if e.flops else "--")
        out.append(line(cells))
    out.append(rule)
    out.append(f"Self CPU time total: {format_time(total_self, time_unit)}")
    return "\n".join(out) + "\n"


def _fit(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[:width - 3] + "..."
