"""Click pieces shared by the commands that run a user script (``profile``, ``run``)."""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

import click

from gradkit.autograd.anomaly_mode import AnomalyReport, set_detect_anomaly
from gradkit.cli import render
from gradkit.cli.script_runner import (
    ScriptNotFoundError, ScriptResult, check_module, check_script, format_script_traceback,
    run_script)
from gradkit.cli.signals import terminate_raises

# After SCRIPT every token belongs to the script, even ``--help`` or ``-o``.
SCRIPT_CONTEXT = {"ignore_unknown_options": True, "allow_interspersed_args": False}


def script_arguments(command: Callable) -> Callable:
    """Add ``[-m] SCRIPT [ARGS]...`` (ARGS passed through untouched) to a command."""
    command = click.argument("args", nargs=-1, type=click.UNPROCESSED)(command)
    command = click.argument("script", type=click.Path())(command)
    return click.option("-m", "--module", is_flag=True,
                        help="SCRIPT is a module name, run as `python -m SCRIPT` runs it.")(
        command)


def require_script(script: str, module: bool = False) -> None:
    """A missing script or module is a one-line ``Error: ...``, never a traceback."""
    try:
        check_module(script) if module else check_script(script)
    except ScriptNotFoundError as exc:
        raise click.ClickException(str(exc)) from None


def run_user_script(script: str, args: tuple[str, ...], init_globals: dict | None = None,
                    module: bool = False) -> ScriptResult:
    """Run the script (checked first with :func:`require_script`); SIGTERM ends it as
    Ctrl-C does (exit code 143), so what ran is still reported."""
    require_script(script, module)
    parent = os.getpid()
    with terminate_raises():
        result = run_script(script, args, init_globals, module)
    result.forked_child = os.getpid() != parent
    return result


def exit_if_forked_child(result: ScriptResult) -> None:
    """A child the script forked that ran off the script's end exits as under ``python``:
    with the script's status, and without a second table and trace."""
    if result.forked_child:
        if result.exception is not None:
            sys.stderr.write(format_script_traceback(result.exception))
        raise SystemExit(result.exit_code)


def anomaly_mode(enabled: bool, check_forward: bool = False) -> contextlib.AbstractContextManager:
    """Anomaly mode (with check_forward) when enabled, else nothing; set_detect_anomaly, as
    detect_anomaly() would warn on stderr that the mode the user asked for is on."""
    if not enabled:
        return contextlib.nullcontext()
    return set_detect_anomaly(True, check_forward=check_forward)


def report_script_failure(result: ScriptResult, no_color: bool) -> None:
    """Print the script's exception as Python would, then the anomaly report if there is one.

    The traceback goes to stderr without the runner's frames (click, runpy, gradkit.cli).
    """
    exc = result.exception
    if exc is None:
        return
    report = getattr(exc, "anomaly", None)
    if not isinstance(report, AnomalyReport):  # a script's own exception may use the name
        report = None
    if report is not None:  # the report's plain text is a note on exc: render it richer instead
        notes = getattr(exc, "__notes__", [])
        notes[:] = [note for note in notes if note != report.render()]
    if sys.stderr.closed:  # the script closed it: Python would print nothing either
        return
    sys.stderr.write(format_script_traceback(exc))
    sys.stderr.flush()
    if report is not None:
        render.anomaly_report(render.make_console(no_color, stderr=True), report)
