"""``gradkit trace summary|diff|report``: read Chrome traces written by gradkit or PyTorch."""
from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable

import click

from gradkit.cli import render
from gradkit.cli.options import no_color_option, table_options
from gradkit.cli.signals import exit_code_of_signal, written_whole
from gradkit.profiler import load_trace
from gradkit.profiler.diff import line_changes, op_changes
from gradkit.profiler.html_report import html_report
from gradkit.profiler.output_file import write_text_file
from gradkit.profiler.trace_summary import summarize_trace


@click.group()
def trace() -> None:
    """Read Chrome traces (gradkit's or PyTorch's, .json or .json.gz)."""


def _stopped_in_one_line(command: Callable[..., None]) -> Callable[..., None]:
    """Ctrl-C during a trace command: ``Interrupted: trace <command> stopped.`` and the
    shell's code for SIGINT (130), as `gradkit profile`, not click's "Aborted!" and 1."""
    @functools.wraps(command)
    def stoppable(*args, no_color: bool, **kwargs) -> None:
        try:
            command(*args, no_color=no_color, **kwargs)
        except KeyboardInterrupt:
            render.status_line(render.make_console(no_color, stderr=True),
                               f"Interrupted: trace {command.__name__} stopped.")
            raise SystemExit(exit_code_of_signal(signal.SIGINT)) from None
    return stoppable


@trace.command(short_help="Op table, time per category, slowest backward nodes.")
@click.argument("trace_file", metavar="TRACE", type=click.Path())
@table_options
@click.option("--top", default=10, show_default=True, type=click.IntRange(min=0),
              help="How many of the slowest backward nodes to list.")
@no_color_option
@_stopped_in_one_line
def summary(trace_file: str, sort_by: str, row_limit: int, top: int, no_color: bool) -> None:
    """Print the op table of TRACE, time per category and the slowest backward nodes.

    \b
    Example:
      gradkit trace summary traces/train-20250101-120000.json.gz
    """
    # compact columns, not an object per event: a GB of trace in bounded memory
    loaded = _read(summarize_trace, trace_file, top)
    if not loaded.event_count:
        raise _nothing_to_summarize(trace_file, loaded.notes)
    console = render.make_console(no_color)
    warnings = render.make_console(no_color, stderr=True)
    for note in loaded.notes:
        render.status_line(warnings, f"Note: {note}.")
    table = loaded.averages.table(sort_by=sort_by, row_limit=row_limit)
    render.averages_table(console, table, f"gradkit trace summary {trace_file}")
    render.line_table(console, loaded.lines, row_limit)
    render.category_totals(console, loaded.categories)
    render.slowest_backward(console, loaded.slowest_backward)


@trace.command(short_help="What got faster or slower from trace A to trace B.")
@click.argument("before", metavar="A", type=click.Path())
@click.argument("after", metavar="B", type=click.Path())
@click.option("--row-limit", default=20, show_default=True, type=click.IntRange(min=-1),
              help="Rows in each table (-1: all).")
@no_color_option
@_stopped_in_one_line
def diff(before: str, after: str, row_limit: int, no_color: bool) -> None:
    """Compare self time per op and per source line from trace A to trace B.

    Rows are ordered by the size of the change. Op names are compared without
    their aten::/gradkit:: namespace, so a gradkit trace can be set against
    PyTorch's; source lines are compared by file:line, so both traces should
    come from the same script.

    \b
    Example:
      gradkit trace diff traces/before.json traces/after.json
    """
    if os.path.exists(before) and os.path.exists(after) and os.path.samefile(before, after):
        raise click.ClickException(f"A and B are the same file ({before}): give two traces "
                                   "to compare, e.g. before and after a change")
    (a, a_notes), (b, b_notes) = _load(before), _load(after)
    warnings = render.make_console(no_color, stderr=True)
    for name, notes in (("A", a_notes), ("B", b_notes)):
        for note in notes:
            render.status_line(warnings, f"Note ({name}): {note}.")
    ops = op_changes(a, b)
    if not any(c.before_calls and c.after_calls for c in ops):
        render.status_line(warnings, "Note: A and B have no op in common: are they traces of "
                                     "the same program?")
    console = render.make_console(no_color)
    render.status_line(console, f"gradkit trace diff {before} {after}", style="bold cyan")
    render.changes(console, "Self time per op, A -> B", "Op", ops, row_limit)
    render.changes(console, "Time per source line (self; backward by the forward line), A -> B",
                   "Source line", line_changes(a, b), row_limit)


@trace.command(short_help="Write a self-contained HTML report (tables, memory plot).")
@click.argument("trace_file", metavar="TRACE", type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="HTML file to write.  [default: TRACE with .html for .json/.json.gz]")
@click.option("--row-limit", default=50, show_default=True, type=click.IntRange(min=-1),
              help="Rows in each table (-1: all).")
@no_color_option
@_stopped_in_one_line
def report(trace_file: str, output: str | None, row_limit: int, no_color: bool) -> None:
    """Write an HTML report of TRACE: the op table, time and saved bytes per
    source line, and memory over time as a plot.

    One file with no script and nothing fetched: it opens offline in any
    browser. For the timeline itself, open TRACE in the Perfetto UI.

    \b
    Example:
      gradkit trace report traces/train.json -o report.html
    """
    events, notes = _load(trace_file)
    path = output or _html_path(trace_file)
    text = html_report(events, os.path.basename(trace_file), row_limit)
    warnings = render.make_console(no_color, stderr=True)
    with written_whole(warnings, "report") as late:  # never a partial file at PATH
        try:
            write_text_file(path, text)
        except OSError as exc:
            raise click.ClickException(f"cannot write report to {path}: "
                                       f"{exc.strerror or exc}") from None
    console = render.make_console(no_color)
    for note in notes:
        render.status_line(warnings, f"Note: {note}.")
    render.status_line(console, f"Report written to {path} (open it in any browser).",
                       style="bold green")
    if late.received:  # a signal during the write: handled now that the report is whole
        raise SystemExit(exit_code_of_signal(late.received))


def _html_path(trace_file: str) -> str:
    """``x.json``/``x.json.gz`` -> ``x.html`` (anything else: ``+ .html``)."""
    for suffix in (".json.gz", ".json"):
        if trace_file.endswith(suffix):
            return trace_file[:-len(suffix)] + ".html"
    return trace_file + ".html"


def _load(trace_file: str) -> tuple:
    """(events, notes) of ``trace_file``; a one-line error when it cannot be summarized."""
    loaded = _read(load_trace, trace_file)
    events = loaded.events()
    if not events:
        raise _nothing_to_summarize(trace_file, loaded.notes)
    return events, loaded.notes


def _read(reader, trace_file: str, *args):
    """``reader(trace_file, *args)``; a one-line error when the file cannot be read."""
    try:
        return reader(trace_file, *args)
    except OSError as exc:
        raise _one_line_error("cannot read trace", trace_file, exc.strerror or exc) from None
    except ValueError as exc:  # the content, not the file
        raise _one_line_error("malformed trace", trace_file, exc) from None


def _nothing_to_summarize(trace_file: str, notes: list) -> click.ClickException:
    """No host op events: say what the file did hold."""
    return click.ClickException(f"no host op events in {trace_file}: " + (
        "; ".join(notes) if notes else "its event list is empty"))


def _one_line_error(what: str, path: str, reason) -> click.ClickException:
    """``what path: reason``, or just the reason when it already names the file."""
    reason = str(reason)
    return click.ClickException(reason if path in reason else f"{what} {path}: {reason}")
