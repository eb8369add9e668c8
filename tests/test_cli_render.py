"""Consoles: colour only on a terminal, never with --no-color or NO_COLOR; completion."""
import io
import os
import shutil
import subprocess
import sys

import pytest

from gradkit.cli import render


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def styled_output(monkeypatch, stream, no_color=False) -> str:
    monkeypatch.setattr(sys, "stdout", stream)
    console = render.make_console(no_color)
    render.status_line(console, "hello")
    return stream.getvalue()


def test_terminal_gets_colour(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert "\x1b[" in styled_output(monkeypatch, FakeTerminal())


@pytest.mark.parametrize("env, flag", [({"NO_COLOR": "1"}, False), ({}, True)])
def test_no_color_means_no_escape_codes_at_all(monkeypatch, env, flag):
    monkeypatch.delenv("NO_COLOR", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert styled_output(monkeypatch, FakeTerminal(), no_color=flag) == "hello\n"


def test_pipe_is_plain_and_wide(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    stream = io.StringIO()
    assert styled_output(monkeypatch, stream) == "hello\n"
    monkeypatch.setattr(sys, "stdout", stream)
    assert render.make_console().width == render.PLAIN_WIDTH


def test_shell_completion_comes_from_click():
    script = shutil.which("gradkit", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the gradkit console script is not installed next to this Python")
    env = {**os.environ, "_GRADKIT_COMPLETE": "bash_source"}
    proc = subprocess.run([script], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "_GRADKIT_COMPLETE=bash_complete" in proc.stdout


@pytest.mark.parametrize("stream, no_color, spinner", [
    (FakeTerminal(), False, True), (FakeTerminal(), True, False), (io.StringIO(), False, False)])
def test_spinner_only_on_a_colour_terminal(monkeypatch, stream, no_color, spinner):
    from rich.console import Console

    from gradkit.cli.progress import live_progress
    shown = []
    real_status = Console.status
    monkeypatch.setattr(Console, "status",
                        lambda self, *a, **k: shown.append(a) or real_status(self, *a, **k))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setattr(sys, "stdout", stream)
    with live_progress(render.make_console(no_color), "x.py", None):
        pass
    assert bool(shown) == spinner
