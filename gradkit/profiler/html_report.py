"""A self-contained HTML report of a profile: op table, time (and saved bytes) per source line,
memory over time as an inline SVG plot. One file, no script, nothing fetched: it opens offline
in any browser and can be attached to an issue.

>>> events = gradkit.profiler.load_trace("traces/train.json").events()
>>> write_html_report(events, "report.html", title="train.py")
"""
from __future__ import annotations

import os
from html import escape

from gradkit.profiler.analysis import category_totals, source_text
from gradkit.profiler.output_file import write_text_file
from gradkit.profiler.saved_lines import costs_per_line
from gradkit.profiler.svg_plot import memory_plot, running_totals
from gradkit.profiler.table import format_memory, format_time, printable

ALLOCATED_COLOUR, SAVED_COLOUR = "#1f77b4", "#d62728"
_STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 2px 10px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th { background: #f0f0f0; } td.text, th.text { text-align: left; }
td { white-space: nowrap; }
code { font-family: monospace; white-space: pre; }
td.bar { text-align: left; min-width: 120px; }
td.bar span { display: inline-block; height: 0.8em; background: #1f77b4; }
.note { color: #666; font-size: 0.9em; }
"""


def html_report(events, title: str, row_limit: int = 50) -> str:
    """The report of ``events`` (``prof.events()`` or ``load_trace(path).events()``) as HTML."""
    if row_limit < 0:
        row_limit = len(events) + 1
    sections = [f"<h1>gradkit profile: {_text(title)}</h1>", _summary(events),
                _op_table(events, row_limit), _line_table(events, row_limit), _memory(events)]
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{_text(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(sections) + "\n</body></html>\n")


def write_html_report(events, path, title: str, row_limit: int = 50) -> str:
    """Write :func:`html_report` to ``path`` (UTF-8) as traces are written (never a partial
    file; a symlink followed, a device or FIFO written through); returns the path."""
    return write_text_file(path, html_report(events, title, row_limit))


def _text(value) -> str:
    """A name from a trace, safe in HTML: control characters escaped, then HTML-escaped."""
    return escape(printable(str(value)))


def _table(headers: list, rows: list, text_columns: int = 1) -> str:
    """A table whose first ``text_columns`` columns are left-aligned text, the rest numbers;
    cells are HTML already."""
    head = "".join(f'<th class="text">{h}</th>' if i < text_columns else f"<th>{h}</th>"
                   for i, h in enumerate(headers))
    body = "\n".join("<tr>" + "".join(
        f'<td class="text">{c}</td>' if i < text_columns else
        (c if c.startswith("<td") else f"<td>{c}</td>") for i, c in enumerate(row)) + "</tr>"
        for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def _site(site: str) -> str:
    """``file.py:line`` in the cell, the whole path when the pointer rests on it."""
    short = os.path.basename(site.rpartition(":")[0]) + ":" + site.rpartition(":")[2] \
        if site.rpartition(":")[2].isdigit() else site
    return f'<span title="{_text(site)}">{_text(short)}</span>'


def _bar(share: float) -> str:
    return f'<td class="bar"><span style="width:{max(share, 0) * 120:.0f}px"></span></td>'


def _summary(events) -> str:
    totals = category_totals(events)
    start = min(e.start_ns for e in events) if events else 0
    end = max(e.end_ns for e in events) if events else 0
    rows = [[_text(t.category or "(none)"), str(t.count), format_time(t.self_time_us)]
            for t in totals]
    return (f'<p class="note">{len(events)} events over {format_time((end - start) / 1000)}. '
            "Self time: a nested event is not counted in its parent.</p>\n<h2>Time per "
            "category</h2>\n" + _table(["Category", "Events", "Self time"], rows))


def _op_table(events, row_limit: int) -> str:
    averages = sorted(events.key_averages(), key=lambda a: a.self_cpu_time_total, reverse=True)
    total = sum(a.self_cpu_time_total for a in averages) or 1.0
    memory = bool(getattr(events, "memory", ()))
    rows = []
    for a in averages[:row_limit]:
        share = a.self_cpu_time_total / total
        rows.append([_text(a.key), f"{100 * share:.2f}%", _bar(share),
                     format_time(a.self_cpu_time_total), format_time(a.cpu_time_total),
                     format_time(a.cpu_time), str(a.count),
                     *([format_memory(a.self_cpu_memory_usage)] if memory else [])])
    headers = ["Name", "Self CPU %", "", "Self CPU", "CPU total", "CPU time avg", "Calls",
               *(["Self CPU Mem"] if memory else [])]
    return (f"<h2>Ops by self time (top {min(row_limit, len(averages))} of "
            f"{len(averages)})</h2>\n" + _table(headers, rows))


def _line_table(events, row_limit: int) -> str:
    costs = costs_per_line(events)
    total = sum(c.total_us for c in costs) or 1.0
    modules = any(c.module for c in costs)
    saved = any(c.saved_bytes is not None for c in costs)
    rows = []
    for c in costs[:row_limit]:
        share = c.total_us / total
        rows.append([_site(c.site), f"<code>{_text(source_text(c.site, 60))}</code>",
                     *([_text(c.module)] if modules else []), format_time(c.forward_us),
                     format_time(c.backward_us), format_time(c.total_us),
                     f"{100 * share:.2f}%", _bar(share), str(c.calls),
                     *([format_memory(c.saved_bytes or 0)] if saved else [])])
    headers = ["Source line", "Code", *(["Module"] if modules else []), "Forward", "Backward",
               "Total", "%", "", "Calls", *(["Saved at peak"] if saved else [])]
    note = ("Forward time goes to the line that called each op; backward time to the forward "
            "line that created each node." + (" <i>Saved at peak</i>: the bytes each line "
                                               "held for backward when the total held was "
                                               "highest." if saved else ""))
    return (f'<h2>Time per source line</h2>\n<p class="note">{note}</p>\n'
            + _table(headers, rows, text_columns=3 if modules else 2))


def _memory(events) -> str:
    memory, saved = getattr(events, "memory", ()), getattr(events, "saved", ())
    if not memory and not saved:
        return ("<h2>Memory over time</h2>\n<p class=\"note\">No memory records in this "
                "profile: profile with <code>--profile-memory</code> "
                "(<code>profile_memory=True</code>).</p>")
    start = min(e.start_ns for e in events) if events else 0
    end = max([e.end_ns for e in events] + [m[0] for m in (*memory, *saved)])
    series = [(label, running_totals(changes), colour) for label, changes, colour in (
        ("Allocated", memory, ALLOCATED_COLOUR), ("Saved for backward", saved, SAVED_COLOUR))
        if changes]
    return ("<h2>Memory over time</h2>\n<p class=\"note\">Bytes allocated by ops and backward "
            "nodes (host), and bytes held for backward, from the first event.</p>\n"
            + memory_plot(series, end, start))
