"""docs/cli.md is click's --help of every command; this test keeps them in sync.

Regenerate after changing a command: python tests/test_cli_docs.py
"""
from pathlib import Path

import click
from click.testing import CliRunner

from gradkit.cli.main import main

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

INTRO = """# gradkit command line

`gradkit` (or `python -m gradkit`) profiles scripts, runs them under anomaly
mode and summarizes Chrome traces. Every command runs SCRIPT as `__main__`
with its own argv, like `python SCRIPT ARGS...`, and exits with the script's
exit code (an uncaught exception gives 1, Ctrl-C gives 130, SIGTERM 143). A
failing or interrupted script still leaves a trace of what ran; a signal that
arrives after the script has ended waits until the trace is complete (a second
one abandons it, leaving no file). A script that ends with `os._exit()` skips
gradkit too: no table and no trace, as no code runs after it. A child the
script forks ends with the script, without a second table or trace. Errors about gradkit's
own inputs (missing script, unreadable trace, unwritable output) are one line
starting with `Error:`.

After a profile, gradkit warns when NumPy's BLAS may run several threads on a
small (4 cores or fewer) or busy machine while matrix products take a tenth of
the time or more: there, one thread is often several times faster
(`OPENBLAS_NUM_THREADS=1`). The thread count is threadpoolctl's where it is
installed, else the `*_NUM_THREADS` variables, else one per core.

Under the op table, `gradkit profile` and `gradkit trace summary` print the time
per line of the user's source: forward ops by the line that called them, and
backward nodes by the forward line that created them.

`gradkit trace summary` keeps no object per event: it streams the file into
compact arrays (a few dozen bytes per event) and adds up its tables from them, so
a 1 GB trace of ours is summarized in under 300 MB of memory (194 MiB with shapes
and memory events, 288 MiB for ops only; 3 GB before). Its tables are those of
`load_trace(path).events()` through `key_averages()`, `costs_per_line` (with the
`Saved at peak` column for a trace with memory) and the other analyses, row for
row.

The `gradkit trace` commands (`summary`, `diff`, `report`) exit with 0 when done,
1 after an `Error:` line (an unreadable or malformed trace, an unwritable report),
2 for a wrong option or argument, and 130 on Ctrl-C, which stops any of them with
one line, e.g. `Interrupted: trace diff stopped.`, not click's `Aborted!`. SIGTERM
ends them as it ends any program (143 in a shell). `trace report` builds its HTML
in memory and writes it at the end: stopped while reading or aggregating, it
leaves no file.

On a terminal, `gradkit profile` counts the events recorded so far and the trace's
size to come; before writing a trace larger than `--warn-trace-mb` (100 MB) it
warns and suggests `--schedule`.

Output is coloured on a terminal and plain text when piped, with `--no-color`
or when the `NO_COLOR` environment variable is set.

Typical sessions:

```text
gradkit profile --record-shapes -o traces/mlp.json.gz train.py --epochs 1
gradkit profile --group-by-stack-n 1 train.py  # one op-table row per op and line
gradkit profile -m mypackage.train --epochs 1  # a module, as `python -m` runs it
gradkit run --detect-anomaly train.py        # which forward line made backward NaN?
gradkit run --check-forward train.py         # first op whose output is NaN/Inf
gradkit trace summary traces/mlp.json.gz     # also reads PyTorch's traces
```

With `--schedule`, the script marks each step's end with `__profiler__.step()`
(the running profile is in its globals as `__profiler__`):

```python no-run
profiler = globals().get("__profiler__")     # None under plain `python train.py`
for batch in loader:
    train_step(batch)
    if profiler is not None:
        profiler.step()
```

A script that ends during a warmup step (a schedule with `REPEAT` 0 or above 1 that starts
another cycle) writes no trace and says so: as in torch, the profile then holds an empty
recording in place of the cycle before it.

Where the trace goes: `-o` names a file. A new path or a regular file is written
atomically (a temporary file beside it, renamed into place: an interrupted write
leaves neither half a trace nor a `.tmp`). A symlink is followed as editors do:
its target gets the trace and the link stays a link. A character device or FIFO
(`-o /dev/null`, a named pipe) is written through and stays what it was; a FIFO
nobody reads is an error, not a hang. A directory, a name longer than the file
system allows, or a full disk is one `Error:` line, before the script runs where
that can be known. `export_chrome_trace` and `tensorboard_trace_handler` follow
the same rules.

This reference is generated from `--help` (see `tests/test_cli_docs.py`).
"""


def command_paths(group: click.Group = main, prefix: tuple[str, ...] = ()) -> list[tuple]:
    """Every command path under the group, depth first: (), ("profile",), ("trace", "summary")."""
    paths = [prefix]
    for name in sorted(group.commands):
        command = group.commands[name]
        if isinstance(command, click.Group):
            paths += command_paths(command, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths


def cli_reference() -> str:
    sections = [INTRO]
    for path in command_paths():
        result = CliRunner().invoke(main, [*path, "--help"], prog_name="gradkit",
                                    terminal_width=80)
        assert result.exit_code == 0, result.output
        title = " ".join(("gradkit", *path))
        sections.append(f"## `{title}`\n\n```text\n{result.output.rstrip()}\n```\n")
    return "\n".join(sections)


def test_docs_match_help_output():
    assert DOCS.read_text() == cli_reference(), (
        "docs/cli.md is out of date: run `python tests/test_cli_docs.py`")


def test_reference_covers_every_command():
    assert command_paths() == [(), ("profile",), ("run",), ("trace",), ("trace", "diff"),
                              ("trace", "report"), ("trace", "summary")]


if __name__ == "__main__":
    DOCS.write_text(cli_reference())
    print(f"wrote {DOCS}")
