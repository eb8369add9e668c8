"""``gradkit run``: run a script with anomaly mode, render the anomaly report."""
from __future__ import annotations

import click

from gradkit.cli.options import no_color_option
from gradkit.cli.script_command import (
    SCRIPT_CONTEXT, anomaly_mode, exit_if_forked_child, report_script_failure, run_user_script,
    script_arguments)


@click.command(context_settings=SCRIPT_CONTEXT,
               short_help="Run a script under anomaly mode; report where NaNs come from.")
@click.option("--detect-anomaly", is_flag=True,
              help="Record each op's forward stack; stop at the backward node that returns NaN.")
@click.option("--check-forward", is_flag=True,
              help="Also stop at the first forward op that creates NaN/Inf (implies "
                   "--detect-anomaly).")
@no_color_option
@script_arguments
def run(detect_anomaly: bool, check_forward: bool, no_color: bool, module: bool, script: str,
        args: tuple[str, ...]) -> None:
    """Run SCRIPT as __main__ (with ARGS as its argv) under anomaly mode.

    \b
    Example:
      gradkit run --detect-anomaly train.py --epochs 1
    """
    with anomaly_mode(detect_anomaly or check_forward, check_forward):
        result = run_user_script(script, args, module=module)
    exit_if_forked_child(result)
    report_script_failure(result, no_color)
    raise SystemExit(result.exit_code)

