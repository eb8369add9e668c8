"""Signals and odd script endings under `gradkit profile`: a complete trace or none, never a
temporary file, and the exit code a shell would report.

| when                      | signal          | exit | trace         |
|---------------------------|-----------------|------|---------------|
| the script runs           | SIGINT          | 130  | what ran      |
| the script runs           | SIGTERM         | 143  | what ran      |
| table phase (after it)    | SIGINT/SIGTERM  | 130/143 | complete   |
| export phase              | SIGINT/SIGTERM  | 130/143 | complete   |
| export phase              | the same twice  | 130  | none          |
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradkit.profiler import profile as Profile  # noqa: N812 - the class
from gradkit.cli.main import main
from gradkit.profiler.chrome_trace import ChromeTraceWriter

SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"
sys.path.insert(0, str(Path(__file__).parent))
from test_profiler_rules import validate_trace  # noqa: E402


def _leftovers(folder: Path) -> list:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text("import gradkit\nx = gradkit.ones(3, requires_grad=True)\n"
                    "(x * 2).sum().backward()\n" + body)
    return path


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_script_runs_leaves_the_trace_of_what_ran(tmp_path, signum):
    script = _script(tmp_path, "import time\nprint('ready', flush=True)\ntime.sleep(60)\n")
    out = tmp_path / "t.json"
    proc = subprocess.Popen([sys.executable, "-m", "gradkit", "profile", "--no-color", "-o",
                             str(out), str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, stderr
    assert "Interrupted: writing the trace of what ran." in stdout
    names = {e["name"] for e in validate_trace(out)["traceEvents"]}
    assert "gradkit::mul" in names and not _leftovers(tmp_path)


def _signal_once(signum: int, times: int = 1):
    """A stand-in that sends ``signum`` to this process ``times`` times, then calls on."""
    def wrap(original):
        sent = []

        def call(*args, **kwargs):
            while len(sent) < times:
                sent.append(signum)
                os.kill(os.getpid(), signum)
            return original(*args, **kwargs)
        return call
    return wrap


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("phase", ["table", "export"])
def test_a_signal_after_the_script_waits_for_a_complete_trace(tmp_path, monkeypatch, phase,
                                                              signum):
    if phase == "table":
        cls, method = Profile, "key_averages"
    else:
        cls, method = ChromeTraceWriter, "_flush"
    monkeypatch.setattr(cls, method, _signal_once(signum)(getattr(cls, method)))
    out = tmp_path / "t.json"
    result = CliRunner().invoke(main, ["profile", "--no-color", "-o", str(out),
                                       str(_script(tmp_path, ""))])
    assert result.exit_code == 128 + signum, result.output
    assert "gradkit::mul" in {e["name"] for e in validate_trace(out)["traceEvents"]}
    assert not _leftovers(tmp_path)


def test_a_second_signal_during_export_abandons_it_without_a_temporary_file(tmp_path,
                                                                           monkeypatch):
    wrap = _signal_once(signal.SIGINT, times=2)
    monkeypatch.setattr(ChromeTraceWriter, "_flush", wrap(ChromeTraceWriter._flush))
    out = tmp_path / "t.json"
    result = CliRunner().invoke(main, ["profile", "--no-color", "-o", str(out),
                                       str(_script(tmp_path, ""))])
    assert result.exit_code == 130, result.output
    assert "Interrupted again: no trace written." in result.output
    assert not out.exists() and not _leftovers(tmp_path)


@pytest.mark.parametrize("raised", ["GeneratorExit()", "type('Stop', (BaseException,), {})()"])
def test_a_script_raising_a_base_exception_exits_1_with_its_traceback(tmp_path, raised):
    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, "-m", "gradkit", "profile", "--no-color", "-o",
                           str(out), str(_script(tmp_path, f"raise {raised}\n"))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback (most recent call last):\n")
    assert "gradkit/cli" not in proc.stderr and validate_trace(out)


def test_a_script_that_closes_stdout_still_gets_its_trace(tmp_path):
    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, "-m", "gradkit", "profile", "--no-color", "-o",
                           str(out), str(_script(tmp_path, "import sys\nsys.stdout.close()\n"))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and validate_trace(out)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_that_returns_writes_no_second_table_or_trace(tmp_path):
    body = ("import os\npid = os.fork()\n"
            "if pid:\n    os.waitpid(pid, 0)\n    print('parent done', flush=True)\n")
    out = tmp_path / "t.json"
    started = time.time()
    proc = subprocess.run([sys.executable, "-m", "gradkit", "profile", "--no-color", "-o",
                           str(out), str(_script(tmp_path, body))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("Trace written to") == 1
    assert proc.stdout.count("Self CPU time total") == 1
    assert validate_trace(out) and out.stat().st_mtime >= started
    assert not _leftovers(tmp_path)
