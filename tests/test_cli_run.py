"""`gradkit run` and the group: exit codes, argv pass-through, tracebacks, errors, --version."""
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradkit
from gradkit.cli.main import main

SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"


def gradkit_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real CLI in a fresh interpreter, as a user would."""
    return subprocess.run([sys.executable, "-m", "gradkit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="gradkit")


def test_version_is_the_packages():
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output == f"gradkit, version {gradkit.__version__}\n"


@pytest.mark.parametrize("command", [[], ["profile"], ["run"], ["trace"], ["trace", "summary"]])
def test_every_command_has_help(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert result.output.startswith(f"Usage: gradkit {' '.join(command)}".rstrip() + " ")
    assert "Show this message and exit." in result.output


@pytest.mark.parametrize("command", ["run", "profile"])
def test_missing_script_is_one_error_line(tmp_path, command):
    result = invoke(command, tmp_path / "nope.py")
    assert result.exit_code == 1
    assert result.output == f"Error: script not found: {tmp_path / 'nope.py'}\n"


def test_script_options_are_passed_through_not_parsed():
    result = invoke("run", SCRIPTS / "echo_argv.py", "--help", "-o", "x", "--detect-anomaly")
    assert result.exit_code == 0
    seen = json.loads(result.stdout)
    assert seen["argv"] == ["--help", "-o", "x", "--detect-anomaly"]
    assert seen["name"] == "__main__" and seen["file"] == "echo_argv.py"


@pytest.mark.parametrize("code", [0, 3, 42])
def test_exit_code_is_the_scripts_in_process(code):
    assert invoke("run", SCRIPTS / "exit_with.py", code).exit_code == code


def test_real_run_passes_argv_path_and_exit_code(tmp_path):
    proc = gradkit_cli("run", SCRIPTS / "echo_argv.py", "a b", "--flag", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen == {"name": "__main__", "argv": ["a b", "--flag"], "file": "echo_argv.py",
                    "path0": str(SCRIPTS.resolve())}
    assert gradkit_cli("run", SCRIPTS / "exit_with.py", "5").returncode == 5


def test_real_run_of_a_raising_script_prints_the_scripts_traceback():
    proc = gradkit_cli("run", SCRIPTS / "raises.py")
    assert proc.returncode == 1
    plain = subprocess.run([sys.executable, SCRIPTS / "raises.py"], capture_output=True,
                           text=True, timeout=120)
    assert proc.stderr == plain.stderr  # exactly what `python raises.py` prints
    assert proc.stderr.startswith("Traceback (most recent call last):\n")
    assert "ValueError: batch of 512 is too large" in proc.stderr
    assert "cli" not in proc.stderr and "runpy" not in proc.stderr


def test_real_run_interrupted_exits_130():
    proc = gradkit_cli("run", SCRIPTS / "interrupt.py")
    assert proc.returncode == 128 + signal.SIGINT
    assert proc.stderr.rstrip().endswith("KeyboardInterrupt")
    assert "not reached" not in proc.stdout
