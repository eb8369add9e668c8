"""export_stacks writes valid folded stacks whatever the file names hold, as torch does:
separators inside frames become ``_``, equal stacks are summed, stacks under 1 µs left out."""
import itertools
import re

import pytest

import gradkit
from gradkit.profiler import profile

FOLDED_LINE = re.compile(r"^[^ ;\t\n]+(;[^ ;\t\n]+)* [1-9]\d*$")  # frame;...;leaf <count>
ODD_FILE = "my dir/model;v2\tfinal.py"


def _program():
    """``model`` defined in a file whose name has a space, a semicolon and a tab."""
    namespace = {"gradkit": gradkit}
    exec(compile("def model(x):\n    return (x * 2).exp()\n", ODD_FILE, "exec"), namespace)
    return namespace["model"]


def _stacks(tmp_path, clock_step_ns, metric="self_cpu_time_total", calls=2):
    model, x = _program(), gradkit.randn(3)
    with profile(with_stack=True, clock=itertools.count(0, clock_step_ns).__next__) as prof:
        for _ in range(calls):
            model(x)
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path), metric)
    return path.read_text().splitlines()


def test_folded_lines_stay_parseable_with_separators_in_file_names(tmp_path):
    lines = _stacks(tmp_path, clock_step_ns=1000)
    assert len(lines) == 2  # gradkit::mul and gradkit::exp, each called twice from one line
    for line in lines:
        assert FOLDED_LINE.match(line), line
    stacks = dict(line.rsplit(" ", 1) for line in lines)
    mul = next(s for s in stacks if s.endswith(";gradkit::mul"))
    assert mul.split(";")[-2] == "my_dir/model_v2_final.py(2):_model"
    caller = mul.split(";")[-3]  # outermost first: the caller comes before model
    assert caller.startswith(f"{__file__}(") and caller.endswith(":__stacks")
    assert stacks[mul] == "2"  # two calls of 1 µs each (one fake clock step), summed


def test_metric_and_stacks_under_one_microsecond(tmp_path):
    assert _stacks(tmp_path, clock_step_ns=100) == []  # 0.1 µs per op: nothing to draw
    total = dict(line.rsplit(" ", 1) for line in
                 _stacks(tmp_path, clock_step_ns=1000, metric="cpu_time_total", calls=3))
    assert sorted(total.values()) == ["3", "3"]
    with pytest.raises(ValueError, match="unknown metric 'cpu'; expected one of "
                                         "self_cpu_time_total, cpu_time_total"):
        _stacks(tmp_path, clock_step_ns=1000, metric="cpu")
