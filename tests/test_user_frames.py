"""Stacks shown to people start at the user's script: the frames of whatever ran it (runpy,
click, the console script, gradkit's CLI) are trimmed from anomaly tracebacks, the profiler's
``Call stack`` and ``export_stacks``; without a runner nothing is trimmed."""
import json
import re
import runpy
import sys
from pathlib import Path

import pytest

import gradkit
from gradkit._user_frames import user_frame_count
from gradkit.profiler import profile

sys.path.insert(0, str(Path(__file__).parent))
from test_cli_run import gradkit_cli  # noqa: E402

MODEL = '''import gradkit

def model(x, w):
    return (x @ w).relu()                                  # line 4

x = gradkit.randn(5, 3)
w = gradkit.randn(3, 2, requires_grad=True)
model(x, w).sum().backward()                               # line 8
'''
NAN_MODEL = '''import gradkit

def model(x):
    return (x * x).sqrt()                                  # line 4

x = gradkit.tensor([0.0, 1.0], requires_grad=True)
try:
    model(x).sum().backward()                              # line 8
except RuntimeError as err:
    print(err.anomaly.traceback_text())
'''


def _script(tmp_path, text, name="model.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_user_frame_count_stops_at_the_innermost_runpy_frame():
    def script():
        pass

    runner = compile("pass", "<frozen runpy>", "exec")
    also_runner = compile("pass", runpy.__file__, "exec")
    user = script.__code__
    assert user_frame_count([user, user, runner, user, also_runner]) == 2
    assert user_frame_count([user, also_runner]) == 1
    assert user_frame_count([user, user]) == 2
    assert user_frame_count([]) == 0


def test_profile_call_stack_under_the_cli_starts_at_the_script(tmp_path):
    script = _script(tmp_path, MODEL)
    out = tmp_path / "t.json"
    proc = gradkit_cli("profile", "--with-stack", "-o", out, script)
    assert proc.returncode == 0, proc.stderr
    events = json.loads(out.read_text())["traceEvents"]
    matmul = next(e for e in events if e.get("name") == "gradkit::matmul")
    assert matmul["args"]["Call stack"].split(";") == [f"{script}(4): model",
                                                       f"{script}(8): <module>"]
    stacks = [e["args"]["Call stack"] for e in events if "Call stack" in e.get("args", {})]
    lines = tuple(f"{script}({n}): <module>" for n in (6, 7, 8))  # randn (6, 7): events too
    assert len(stacks) > 2 and all(s.endswith(lines) for s in stacks)
    assert all(frame.startswith(f"{script}(") for s in stacks for frame in s.split(";"))


def test_export_stacks_of_a_run_script_is_folded_from_the_script(tmp_path):
    script = _script(tmp_path, MODEL)
    with profile(with_stack=True) as prof:
        runpy.run_path(str(script), run_name="__main__")
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines
    folded = re.compile(r"^[^ ;]+(;[^ ;]+)* \d+$")  # frame;frame;...;op <integer>
    for line in lines:
        assert folded.match(line), line
        frames = line.rsplit(" ", 1)[0].split(";")
        assert frames[0] in {f"{script}({n}):_<module>" for n in (6, 7, 8)}  # randn: 6, 7
        assert frames[-1].startswith("gradkit::")
    matmul = next(line for line in lines if ";gradkit::matmul " in line)
    assert matmul.split(";")[:2] == [f"{script}(8):_<module>", f"{script}(4):_model"]


def test_without_a_runner_the_whole_stack_is_kept():
    x = gradkit.randn(2, requires_grad=True)
    with profile(with_stack=True) as prof:
        x * 2
    (mul,) = [e for e in prof.events() if e.name == "gradkit::mul"]
    assert mul.stack[0].startswith(f"{__file__}(")
    assert len(mul.stack) > 3 and any("pytest" in frame for frame in mul.stack)


def test_anomaly_traceback_text_under_the_cli_starts_at_the_script(tmp_path):
    script = _script(tmp_path, NAN_MODEL)
    proc = gradkit_cli("run", "--detect-anomaly", script)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("Error detected in MulBackward0. Traceback of forward call that "
                           "caused the error:\n")
    files = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', text)
    assert files == [(str(script), "8", "<module>"), (str(script), "4", "model")]
    assert "runpy" not in text and "click" not in text


def test_anomaly_report_of_a_run_script_in_process(tmp_path):
    script = _script(tmp_path, NAN_MODEL.replace("    print(err.anomaly.traceback_text())",
                                                 "    REPORTS.append(err.anomaly)"))
    reports = []
    with gradkit.autograd.detect_anomaly(), pytest.warns(UserWarning):
        runpy.run_path(str(script), {"REPORTS": reports}, run_name="__main__")
    (report,) = reports
    assert [(f.filename, f.lineno) for f in report.stack] == [(str(script), 8), (str(script), 4)]
