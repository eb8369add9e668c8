"""Rich rendering for the CLI: consoles, profiler tables, trace summaries, anomaly reports.

Collection lives in the library; this file only turns its results into text.
On a terminal the output is coloured; piped, or with ``--no-color``/``NO_COLOR``,
it is plain text wide enough that tables are never wrapped.
"""
from __future__ import annotations

import sys

from rich.console import Console
from rich.text import Text

PLAIN_WIDTH = 250  # tables are wide; never fold them when output goes to a file or pipe
VIEWER_HINT = "Open it in the Perfetto UI (https://ui.perfetto.dev) or in chrome://tracing."


def make_console(no_color: bool = False, stderr: bool = False) -> Console:
    """A console on stdout (or stderr) that honours --no-color, NO_COLOR and pipes."""
    stream = sys.stderr if stderr else sys.stdout
    interactive = stream.isatty()
    return Console(file=stream, no_color=no_color, highlight=False, soft_wrap=False,
                   width=None if interactive else PLAIN_WIDTH)


def averages_table(console: Console, table: str, title: str) -> None:
    """Print a ``key_averages().table()`` string under a title, with its header row in bold."""
    console.print(Text(title, style="bold cyan"))
    lines = table.rstrip("\n").splitlines()
    for i, line in enumerate(lines):
        header = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"} and i < 3
        console.print(Text(line, style="bold" if header else ""), overflow="ignore", crop=False)


def trace_written(console: Console, path: str) -> None:
    """Tell where the trace is and how to look at it."""
    console.print(Text.assemble(("Trace written to ", ""), (path, "bold green")))
    console.print(VIEWER_HINT)


def status_line(console: Console, message: str, style: str = "yellow") -> None:
    console.print(Text(message, style=style))


def anomaly_report(console: Console, report) -> None:
    """Render the report anomaly mode attached to an error (``err.anomaly``)."""
    console.print(Text(report.render()))
