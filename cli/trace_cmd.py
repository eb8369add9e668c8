"""``gradkit trace summary``: summarize a Chrome trace written by gradkit or PyTorch."""
from __future__ import annotations

import click

from gradkit.cli import render
from gradkit.cli.options import no_color_option, table_options
from gradkit.profiler.trace_summary import summarize_trace


@click.group()
def trace() -> None:
    """Read Chrome traces (gradkit's or PyTorch's, .json or .json.gz)."""


@trace.command(short_help="Op table, time per category, slowest backward nodes.")
@click.argument("trace_file", metavar="TRACE", type=click.Path())
@table_options
@click.option("--top", default=10, show_default=True, type=click.IntRange(min=0),
              help="How many of the slowest backward nodes to list.")
@no_color_option
def summary(trace_file: str, sort_by: str, row_limit: int, top: int, no_color: bool) -> None:
    """Print the op table of TRACE, time per category and the slowest backward nodes.

    \b
    Example:
      gradkit trace summary traces/train-20250101-120000.json.gz
    """
    try:  # compact columns, not an object per event: a GB of trace in bounded memory
        loaded = summarize_trace(trace_file, top)
    except OSError as exc:
        raise _one_line_error("cannot read trace", trace_file, exc.strerror or exc) from None
    except ValueError as exc:  # the content, not the file
        raise _one_line_error("malformed trace", trace_file, exc) from None
    if not loaded.event_count:  # nothing to summarize: say what the file did hold
        raise click.ClickException(f"no host op events in {trace_file}: " + (
            "; ".join(loaded.notes) if loaded.notes else "its event list is empty"))
    console = render.make_console(no_color)
    warnings = render.make_console(no_color, stderr=True)
    for note in loaded.notes:
        render.status_line(warnings, f"Note: {note}.")
    table = loaded.averages.table(sort_by=sort_by, row_limit=row_limit)
    render.averages_table(console, table, f"gradkit trace summary {trace_file}")
    render.line_table(console, loaded.lines, row_limit)
    render.category_totals(console, loaded.categories)
    render.slowest_backward(console, loaded.slowest_backward)


def _one_line_error(what: str, path: str, reason) -> click.ClickException:
    """``what path: reason``, or just the reason when it already names the file."""
    reason = str(reason)
    return click.ClickException(reason if path in reason else f"{what} {path}: {reason}")
