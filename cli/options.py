"""Options shared by several commands, declared once."""
from __future__ import annotations

from collections.abc import Callable

import click

from gradkit.profiler.table import SORT_KEYS


def table_options(command: Callable) -> Callable:
    """``--sort-by`` and ``--row-limit`` of the key_averages table."""
    row_limit = click.option("--row-limit", default=20, show_default=True,
                             type=click.IntRange(min=-1), help="Rows in the table (-1: all).")
    sort_by = click.option("--sort-by", default="self_cpu_time_total", show_default=True,
                           type=click.Choice(SORT_KEYS), metavar="COLUMN",
                           help=f"Column that orders the table: {', '.join(SORT_KEYS)}.")
    return sort_by(row_limit(command))


no_color_option = click.option("--no-color", is_flag=True,
                               help="Plain text output (NO_COLOR is respected too).")
