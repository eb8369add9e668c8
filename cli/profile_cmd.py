"""``gradkit profile``: run a script under the profiler, write a Chrome trace, print the table."""
from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import click

from gradkit import profiler
from gradkit.cli import advice, render
from gradkit.cli.options import no_color_option, table_options
from gradkit.cli.progress import DEFAULT_WARN_MB, live_progress, size_warning
from gradkit.profiler.saved_lines import costs_per_line
from gradkit.profiler.output_file import output_destination
from gradkit.cli.script_command import (
    SCRIPT_CONTEXT, anomaly_mode, exit_if_forked_child, report_script_failure, require_script,
    run_user_script, script_arguments)
from gradkit.cli.signals import exit_code_of_signal, written_whole

PROFILER_GLOBAL = "__profiler__"  # how a script reaches the running profile (for step())


def _parse_schedule(ctx: click.Context, param: click.Parameter, value: str | None):
    """``wait,warmup,active[,repeat]`` -> gradkit.profiler.schedule(...), checked by it.

    repeat defaults to 1 (not torch's 0, "forever"): one trace file holds one cycle.
    """
    if value is None:
        return None
    try:
        numbers = [int(part) for part in value.split(",")]
    except ValueError:
        numbers = []
    if len(numbers) not in (3, 4):
        raise click.BadParameter(f"expected wait,warmup,active[,repeat] as integers, got "
                                 f"{value!r}")
    try:
        wait, warmup, active, repeat = (*numbers, 1) if len(numbers) == 3 else numbers
        return profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command(context_settings=SCRIPT_CONTEXT,
               short_help="Profile a script; write a Chrome trace and print the op table.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Trace file to write (.json, or .json.gz to compress). "
                   "[default: traces/<script>-<YYYYmmdd-HHMMSS>.json]")
@table_options
@click.option("--group-by-input-shape", is_flag=True,
              help="One row per (op, input shapes); implies --record-shapes.")
@click.option("--group-by-stack-n", type=click.IntRange(min=0), default=0, metavar="N",
              help="One row per (op, its N innermost source frames), as torch's "
                   "key_averages(group_by_stack_n=N); implies --with-stack.")
@click.option("--record-shapes", is_flag=True, help="Record input shapes and dtypes of each op.")
@click.option("--profile-memory", is_flag=True,
              help="Record allocations, frees and bytes saved for backward.")
@click.option("--with-stack", is_flag=True, help="Record the Python stack of each op.")
@click.option("--with-flops", is_flag=True, help="Estimate FLOPs of matmul-like ops.")
@click.option("--with-modules", is_flag=True,
              help="Record each nn.Module call as a range named by its path (CNN.conv1 "
                   "(Conv2d)); the line table then tells layers called from one line apart.")
@click.option("--schedule", callback=_parse_schedule, metavar="WAIT,WARMUP,ACTIVE[,REPEAT]",
              help=f"Record only some steps. The script marks each step's end with "
                   f"{PROFILER_GLOBAL}.step() (the running profile, in its globals). REPEAT "
                   f"defaults to 1; with more cycles the trace holds the last one.")
@click.option("--detect-anomaly", is_flag=True, help="Also run under anomaly mode.")
@click.option("--warn-trace-mb", type=click.FloatRange(min=0), default=DEFAULT_WARN_MB,
              show_default=True, metavar="MB",
              help="Warn (and suggest --schedule) before writing a trace larger than this.")
@no_color_option
@script_arguments
def profile(output: str | None, row_limit: int, sort_by: str, group_by_input_shape: bool,
            group_by_stack_n: int, record_shapes: bool, profile_memory: bool, with_stack: bool,
            with_flops: bool, with_modules: bool, schedule, detect_anomaly: bool,
            warn_trace_mb: float, no_color: bool, module: bool, script: str,
            args: tuple[str, ...]) -> None:
    """Run SCRIPT as __main__ (with ARGS as its argv) under the profiler.

    Writes a Chrome trace and prints the ops' time table. The script's exit
    code becomes gradkit's; a script that fails or is interrupted (Ctrl-C,
    SIGTERM) still leaves a trace of what ran.

    \b
    Example:
      gradkit profile --record-shapes -o traces/mlp.json.gz train.py --epochs 1
    """
    require_script(script, module)
    trace_path = Path(output) if output else _default_trace_path(script, module)
    target = trace_path.absolute()  # the script may chdir; the trace goes where asked
    _prepare_output(target)
    console = render.make_console(no_color)
    prof = profiler.profile(record_shapes=record_shapes or group_by_input_shape,
                            profile_memory=profile_memory,
                            with_stack=with_stack or group_by_stack_n > 0,
                            with_flops=with_flops, with_modules=with_modules,
                            schedule=schedule)
    with live_progress(console, script, prof), anomaly_mode(detect_anomaly), prof:
        result = run_user_script(script, args, {PROFILER_GLOBAL: prof}, module)
    exit_if_forked_child(result)
    report_script_failure(result, no_color)
    console = render.make_console(no_color)  # the script may have closed or replaced stdout
    if result.interrupted:
        render.status_line(console, "Interrupted: writing the trace of what ran.")
    too_large = size_warning(prof.recorded_events(), warn_trace_mb)
    if too_large:
        render.status_line(console, f"Warning: {too_large}")
    with written_whole(console, "trace") as late:
        if schedule is not None and prof.current_action == profiler.ProfilerAction.WARMUP:
            # torch's rule (the profile keeps an empty recording) would write an empty trace
            raise click.ClickException(
                f"no trace written: the script ended in a warmup step (step "
                f"{prof.step_num}), which records nothing; let it run to the end of the "
                f"active steps or lower REPEAT")
        try:
            table = prof.key_averages(group_by_input_shape=group_by_input_shape,
                                      group_by_stack_n=group_by_stack_n).table(
                sort_by=sort_by, row_limit=row_limit)
        except RuntimeError as exc:  # a schedule that never reached an active step
            raise click.ClickException(f"no trace written: {exc}") from None
        _export(prof, target)
    render.averages_table(console, table, f"gradkit profile {script}")
    render.line_table(console, costs_per_line(prof.events()), row_limit)
    render.trace_written(console, str(trace_path))
    _advise(console, prof)
    raise SystemExit(exit_code_of_signal(late.received) if late.received else result.exit_code)


def _default_trace_path(script: str, module: bool) -> Path:
    stem = script.rpartition(".")[2] if module else Path(script).stem
    return Path("traces") / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}.json"


def _prepare_output(path: Path) -> None:
    """Fail before the script runs, not after, if the trace cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.ClickException(f"cannot create trace folder {path.parent}: "
                                   f"{exc.strerror or exc}") from None
    try:
        target, atomic = output_destination(path)
        if os.pathconf(os.path.dirname(target), "PC_NAME_MAX") < len(os.path.basename(target)):
            raise OSError(errno.ENAMETOOLONG, "file name too long")
    except OSError as exc:
        raise click.ClickException(f"cannot write trace to {path}: {exc.strerror or exc}") \
            from None
    folder_ok = os.access(os.path.dirname(target), os.W_OK) or not atomic
    if not folder_ok or (os.path.exists(target) and not os.access(target, os.W_OK)):
        raise click.ClickException(f"cannot write trace to {path}: permission denied")


def _export(prof, path: Path) -> None:
    try:
        prof.export_chrome_trace(str(path))
    except OSError as exc:
        raise click.ClickException(f"cannot write trace to {path}: {exc.strerror or exc}") from None


def _advise(console, prof) -> None:
    """Causes of slowness the table does not show (several BLAS threads on a small machine)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    share = advice.matrix_product_share(prof.key_averages())
    warning = advice.blas_thread_advice(share, advice.blas_threads(), advice.usable_cores(), load)
    if warning:
        render.status_line(console, f"Warning: {warning}")


