"""Rich rendering for the CLI: consoles, profiler tables, trace summaries, anomaly reports.

Collection lives in the library; this file only turns its results into text.
On a terminal the output is coloured; piped, or with ``--no-color``/``NO_COLOR``,
it is plain text wide enough that tables are never wrapped.
"""
from __future__ import annotations

import linecache
import os
import sys

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from gradkit.profiler.analysis import source_text
from gradkit.profiler.table import format_memory, format_time, printable

PLAIN_WIDTH = 250  # tables are wide; never fold them when output goes to a file or pipe
VIEWER_HINT = "Open it in the Perfetto UI (https://ui.perfetto.dev) or in chrome://tracing."


def make_console(no_color: bool = False, stderr: bool = False) -> Console:
    """A console on stdout (or stderr) that honours --no-color, NO_COLOR and pipes.

    A script may close stdout: then stderr is used, and if that is closed too, nothing.
    """
    stream = next((s for s in ((sys.stderr,) if stderr else (sys.stdout, sys.stderr))
                   if s is not None and not s.closed), None) or open(os.devnull, "w")  # noqa: SIM115
    plain = no_color or bool(os.environ.get("NO_COLOR"))  # no-color.org: set and not empty
    return Console(file=stream, highlight=False, soft_wrap=False,
                   width=None if stream.isatty() else PLAIN_WIDTH,
                   color_system=None if plain else "auto")  # None: no escape codes, not even bold


def averages_table(console: Console, table: str, title: str) -> None:
    """Print a ``key_averages().table()`` string under a title, its column names in bold.

    The library formats the table (torch's columns and units); it is printed as is so
    the CLI and ``print(prof.key_averages().table())`` always agree.
    """
    console.print(Text(title, style="bold cyan"))
    if not table:
        console.print("No events were recorded.")
        return
    for i, line in enumerate(table.rstrip("\n").splitlines()):
        style = "bold" if i == 1 else ""  # line 0 is a rule, line 1 the column names
        console.print(Text(line, style=style), overflow="ignore", crop=False)


def category_totals(console: Console, totals) -> None:
    """Time per trace category (``cpu_op``, ``user_annotation``, ...), self time only."""
    grand_total = sum(t.self_time_us for t in totals)
    console.print()
    table = Table(title="Time per category (self)", title_justify="left", box=box.SIMPLE)
    for column in ("Category", "Events", "Self time", "%"):
        table.add_column(column, justify="left" if column == "Category" else "right")
    for t in totals:
        share = f"{100 * t.self_time_us / grand_total:.2f}%" if grand_total else "-"
        table.add_row(_cell(t.category or "(none)"), str(t.count), format_time(t.self_time_us),
                      share)
    console.print(table)


def slowest_backward(console: Console, costs) -> None:
    """The slowest backward nodes, each with the forward op (and line) that created it."""
    console.print()
    table = Table(title="Slowest backward nodes", title_justify="left", box=box.SIMPLE)
    for column in ("Backward node", "Time", "Forward op", "Forward call site"):
        table.add_column(column, justify="right" if column == "Time" else "left")
    for cost in costs:
        forward = cost.forward.name if cost.forward is not None else "(not in trace)"
        table.add_row(_cell(cost.node.name), format_time(cost.node.cpu_time_total),
                      _cell(forward), _cell(cost.site or ""))
    if not costs:
        table.add_row("(no backward nodes in this trace)", "", "", "")
    console.print(table)


def line_table(console: Console, costs, row_limit: int) -> None:
    """Time per line of the user's source (forward, and backward by the forward line), and
    with a memory profile the bytes each line held for backward at the peak."""
    total = sum(c.total_us for c in costs)
    modules = any(c.module for c in costs)  # profiled with_modules: a Module column
    saved = any(c.saved_bytes is not None for c in costs)  # profiled memory: a Saved column
    console.print()
    table = Table(title="Time per source line (self; backward by the forward line)" + (
        "; bytes saved for backward held at the peak" if saved else ""),
        title_justify="left", box=box.SIMPLE)
    columns = ("Source line", "Code", *(("Module",) if modules else ()), "Forward",
               "Backward", "Total", "%", "Calls", *(("Saved at peak",) if saved else ()))
    for column in columns:
        table.add_column(column, justify="left" if column in ("Source line", "Code", "Module")
                         else "right")
    for cost in costs if row_limit < 0 else costs[:row_limit]:
        table.add_row(_cell(cost.site), _cell(source_text(cost.site)),
                      *((_cell(cost.module),) if modules else ()),
                      format_time(cost.forward_us), format_time(cost.backward_us),
                      format_time(cost.total_us),
                      f"{100 * cost.total_us / total:.2f}%" if total else "-", str(cost.calls),
                      *((format_memory(cost.saved_bytes or 0),) if saved else ()))
    if not costs:
        table.add_row("(no ops recorded)", *[""] * (len(columns) - 1))
    console.print(table)


def changes(console: Console, title: str, what: str, rows, row_limit: int) -> None:
    """A diff table (``gradkit.profiler.diff.Change`` rows): time in A and B, the change."""
    modules = any(c.module for c in rows)
    console.print()
    table = Table(title=title, title_justify="left", box=box.SIMPLE)
    columns = (what, *(("Module",) if modules else ()), "A", "B", "Change", "B/A", "Calls A",
               "Calls B", "")
    for column in columns:
        table.add_column(column, justify="left" if column in (what, "Module", "") else "right")
    for c in rows if row_limit < 0 else rows[:row_limit]:
        sign = "+" if c.change_us > 0 else "-" if c.change_us < 0 else ""
        style = {"slower": "red", "new": "red", "faster": "green", "gone": "green"}.get(
            c.verdict, "")
        table.add_row(_cell(c.key), *((_cell(c.module),) if modules else ()),
                      format_time(c.before_us), format_time(c.after_us),
                      sign + format_time(abs(c.change_us)),
                      f"{c.ratio:.2f}x" if c.ratio is not None else "-", str(c.before_calls),
                      str(c.after_calls), Text(c.verdict, style=style))
    if not rows:
        table.add_row("(nothing recorded)", *[""] * (len(columns) - 1))
    console.print(table)


def _cell(text: str) -> Text:
    """A name from a trace as a table cell: control characters escaped, no rich markup."""
    return Text(printable(text))


def trace_written(console: Console, path: str) -> None:
    """Tell where the trace is and how to look at it."""
    console.print(Text.assemble(("Trace written to ", ""), (printable(path), "bold green")))
    console.print(VIEWER_HINT)


def status_line(console: Console, message: str, style: str = "yellow") -> None:
    console.print(Text(message, style=style))



def anomaly_report(console: Console, report) -> None:
    """Render an ``AnomalyReport`` (``err.anomaly``): what went wrong, the source line
    highlighted in context, statistics of the values involved and the forward traceback."""
    body: list = [Text(report.message, style="bold red")]
    op = " / ".join(n for n in (report.op_name, report.node_name) if n)
    if op:
        body.append(Text.assemble(("Op: ", "bold"), op))
    source = report.source
    if source is not None:
        body.append(Text.assemble(("Source: ", "bold"),
                                  f"{source.filename}:{source.lineno} in {source.function}"))
        body.append(_source_excerpt(source))
    stats = [*report.inputs, *report.outputs]
    if stats:
        body.append(_stats_table(report.inputs, report.outputs))
    if report.path:
        body.append(Text.assemble(("Path from the loss: ", "bold"), " -> ".join(report.path)))
    # the report's text already starts at the script (runner frames are trimmed by gradkit)
    body.append(Text(report.traceback_text().rstrip("\n"), style="dim"))
    console.print(Panel(Group(*body), title="gradkit anomaly report", title_align="left",
                        border_style="red", expand=False))


def _source_excerpt(frame, context: int = 2):
    """The lines around ``frame`` with the offending one marked (``❱``) and highlighted."""
    lines = linecache.getlines(frame.filename)
    if not lines:
        return Text(f"    {frame.line}")
    first = max(frame.lineno - context, 1)
    last = min(frame.lineno + context, len(lines))
    width = max(len(line.rstrip()) for line in lines[first - 1:last]) + 1
    return Syntax("".join(lines), "python", line_numbers=True, line_range=(first, last),
                  highlight_lines={frame.lineno}, code_width=width, theme="ansi_dark")


def _stats_table(inputs, outputs) -> Table:
    table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
    for column in ("value", "shape", "dtype", "min", "max", "nan", "inf"):
        table.add_column(column, justify="left" if column in ("value", "dtype") else "right")
    for stats, style in [*((s, "") for s in inputs), *((s, "bold red") for s in outputs)]:
        table.add_row(stats.label, str(list(stats.shape)), stats.dtype,
                      *(_number(v) for v in (stats.min, stats.max, stats.nan, stats.inf)),
                      style=style)
    return table


def _number(value) -> str:
    return "" if value is None else f"{value:.6g}"
