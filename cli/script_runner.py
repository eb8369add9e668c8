"""Run a Python script as ``__main__`` the way ``python SCRIPT ARGS...`` does.

The script gets its own ``sys.argv``, its folder first on ``sys.path`` and its
``__file__``; both are restored afterwards. Whatever the script does (returns,
calls ``sys.exit``, raises, is interrupted with Ctrl-C) comes back as a
:class:`ScriptResult`, so the caller can still write its trace before exiting.
"""
from __future__ import annotations

import importlib.util
import os
import runpy
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from gradkit.cli.signals import Terminated, exit_code_of_signal

EXIT_INTERRUPTED = exit_code_of_signal(signal.SIGINT)  # 130, what a shell reports

# Frames from these places sit between the user and their script; a traceback
# should start at the script, as with ``python SCRIPT``.
_CLI_DIR = os.path.dirname(os.path.abspath(__file__))
_RUNPY_FILE = os.path.abspath(runpy.__file__)


class ScriptNotFoundError(Exception):
    """SCRIPT does not exist or is not a file."""


@dataclass
class ScriptResult:
    """How a script ended: its exit code and, if it raised, the exception."""

    exit_code: int
    exception: BaseException | None = None
    interrupted: bool = False
    forked_child: bool = False  # the run ended in a process the script forked


def run_script(path: str | os.PathLike, args: list[str] | tuple[str, ...] = (),
               init_globals: dict | None = None, module: bool = False) -> ScriptResult:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *args]``; never raises for the script.

    With ``module``, ``path`` is a module name run as ``python -m`` runs it (the current folder
    first on ``sys.path``). ``init_globals`` are extra names the script finds in its globals.

    >>> run_script("train.py", ["--epochs", "1"]).exit_code  # doctest: +SKIP
    0
    """
    name = os.fspath(path)
    if module:
        check_module(name)
        folder = os.getcwd()
    else:
        folder = str(check_script(path).resolve().parent)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [name, *args]
    sys.path.insert(0, folder)
    try:
        if module:
            runpy.run_module(name, init_globals, run_name="__main__", alter_sys=True)
        else:
            # __file__ absolute, as ``python SCRIPT`` sets it; argv[0] as given
            runpy.run_path(os.path.abspath(name), init_globals, run_name="__main__")
        return ScriptResult(exit_code=0)
    except SystemExit as exc:
        return ScriptResult(exit_code=_exit_code_of(exc))
    except KeyboardInterrupt as exc:
        return ScriptResult(EXIT_INTERRUPTED, exception=exc, interrupted=True)
    except Terminated as exc:
        return ScriptResult(exit_code_of_signal(signal.SIGTERM), exception=exc, interrupted=True)
    except BaseException as exc:  # the script's own error (GeneratorExit included): as Python,
        return ScriptResult(exit_code=1, exception=exc)  # its traceback and exit code 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        _flush_std_streams()


def check_module(name: str) -> None:
    """ScriptNotFoundError unless ``name`` is a module ``python -m`` could run."""
    sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    finally:
        sys.path.pop(0)
    if spec is None:
        raise ScriptNotFoundError(f"No module named {name!r}")


def check_script(path: str | os.PathLike) -> Path:
    """``path`` as a Path if it is a file, else ScriptNotFoundError."""
    script = Path(path)
    if not script.is_file():
        raise ScriptNotFoundError(f"script not found: {path}")
    return script


def _exit_code_of(exc: SystemExit) -> int:
    """Map ``sys.exit(code)`` to a process exit status exactly as the interpreter does."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints the message and exits 1
    return 1


def format_script_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` as ``python SCRIPT`` prints it: no gradkit/runpy frames on top."""
    exc.__traceback__ = _trim_runner_frames(exc.__traceback__)
    return "".join(traceback.format_exception(exc))


def _trim_runner_frames(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and _is_runner_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def _is_runner_frame(filename: str) -> bool:
    path = os.path.abspath(filename)
    return (path == _RUNPY_FILE or path.startswith(_CLI_DIR + os.sep)
            or filename.startswith("<frozen runpy"))


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a script may close its streams
            pass
