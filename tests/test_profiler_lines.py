"""Time per source line: forward ops by the line that called them, backward nodes by the
forward line that created them; the rows add up to the op table's cpu_op self time."""
import inspect
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradkit
from gradkit.cli.main import main
from gradkit.profiler import load_trace, profile
from gradkit.profiler.analysis import UNATTRIBUTED, line_costs
from gradkit.profiler.trace_summary import summarize_trace

sys.path.insert(0, str(Path(__file__).parent))
from test_profiler import fake_clock  # noqa: E402


def _line_of(marker: str, function=None) -> str:
    source, first = inspect.getsourcelines(function or _model)
    index = next(i for i, text in enumerate(source) if marker in text)
    return f"{__file__}:{first + index}"


def _model(x):
    h = x.sin()          # line A
    return (h * h).sum()  # line B


def _profiled(**options):
    x = gradkit.randn(5, requires_grad=True)
    with profile(clock=fake_clock(1000), **options) as prof:
        _model(x).backward()
    return prof


def test_forward_and_backward_time_land_on_the_forward_lines():
    costs = {c.site: c for c in line_costs(_profiled().events())}
    line_a, line_b = _line_of("line A"), _line_of("line B")
    assert costs[line_a].calls == 1 and costs[line_b].calls == 2  # sin; mul and sum
    # with the fake clock every op lasts 1 us; each node 0.998 us in a 1 us wrapper
    assert costs[line_a].forward_us == pytest.approx(1.0)
    assert costs[line_b].forward_us == pytest.approx(2.0)
    assert costs[line_a].backward_us == pytest.approx(1.0)   # SinBackward0 + its wrapper
    assert costs[line_b].backward_us == pytest.approx(2.0)   # MulBackward0, SumBackward0
    assert costs[UNATTRIBUTED].calls == 0  # the engine's own time


def test_the_rows_add_up_to_the_cpu_op_self_time():
    events = _profiled().events()
    expected = sum(e.self_cpu_time_total for e in events if e.cat == "cpu_op")
    assert sum(c.total_us for c in line_costs(events)) == pytest.approx(expected)


def test_a_trace_gives_the_same_lines_as_the_live_profile(tmp_path):
    prof = _profiled()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    live = {c.site: (c.calls, c.backward_us) for c in line_costs(prof.events())}
    loaded = {c.site: (c.calls, c.backward_us) for c in line_costs(load_trace(path).events())}
    for site in (_line_of("line A"), _line_of("line B")):
        assert loaded[site][0] == live[site][0]
        assert loaded[site][1] == pytest.approx(live[site][1], abs=1e-3)


def test_trace_summary_prints_the_line_table(tmp_path):
    path = tmp_path / "t.json"
    _profiled().export_chrome_trace(str(path))
    result = CliRunner().invoke(main, ["trace", "summary", "--no-color", str(path)])
    assert result.exit_code == 0, result.output
    assert "Time per source line" in result.output
    line_a = _line_of("line A")
    row = next(r for r in result.output.splitlines() if line_a in r)
    assert "h = x.sin()" in row  # the code of the line, read from the file


def test_no_ops_gives_an_empty_list():
    assert line_costs([]) == []


class _Net(gradkit.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = gradkit.nn.Linear(4, 4)
        self.head = gradkit.nn.Sequential(gradkit.nn.Linear(4, 2), gradkit.nn.Tanh())

    def forward(self, x):
        return self.head(self.fc1(x).relu())


def _step(net, x):
    net(x).sum().backward()


def test_with_modules_names_each_call_by_its_path_and_splits_a_line_by_module():
    net, x = _Net(), gradkit.ones(3, 4)
    with profile(with_modules=True) as prof:
        _step(net, x)
    ranges = [e.name for e in prof.events() if e.name.startswith("nn.Module: ")]
    assert ranges == ["nn.Module: _Net (_Net)", "nn.Module: _Net.fc1 (Linear)",
                      "nn.Module: _Net.head (Sequential)", "nn.Module: _Net.head.0 (Linear)",
                      "nn.Module: _Net.head.1 (Tanh)"]
    costs = line_costs(prof.events())
    here = _line_of("return self.head", _Net.forward)  # one line calls all the layers
    modules = {c.module: c for c in costs if c.site == here}
    assert set(modules) == {"_Net.fc1 (Linear)", "_Net (_Net)", "_Net.head.0 (Linear)",
                            "_Net.head.1 (Tanh)"}  # relu runs in _Net itself
    assert modules["_Net.fc1 (Linear)"].calls == 2  # its t and addmm (torch's aten::t, aten::addmm)
    assert modules["_Net.fc1 (Linear)"].backward_us > 0  # AddmmBackward0, by its forward op
    events = prof.events()
    expected = sum(e.self_cpu_time_total for e in events if e.cat == "cpu_op")
    assert sum(c.total_us for c in costs) == pytest.approx(expected)


def test_without_with_modules_no_module_ranges_are_recorded():
    with profile() as prof:
        _Net()(gradkit.ones(3, 4))
    assert not any(e.name.startswith("nn.Module: ") for e in prof.events())
    assert {c.module for c in line_costs(prof.events())} == {""}


def test_a_module_called_by_a_module_that_does_not_hold_it_is_named_by_its_class():
    shared = gradkit.nn.Tanh()

    class Caller(gradkit.nn.Module):
        def forward(self, x):
            return shared(x)
    with profile(with_modules=True) as prof:
        Caller()(gradkit.ones(2))
    names = [e.name for e in prof.events() if e.name.startswith("nn.Module: ")]
    assert names == ["nn.Module: Caller (Caller)", "nn.Module: Caller.Tanh (Tanh)"]


class _Inner(gradkit.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = gradkit.nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)  # line I


class _Outer(gradkit.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seq = gradkit.nn.Sequential(gradkit.nn.Linear(4, 4))
        self.inner = _Inner()

    def forward(self, x):
        a = self.seq(x)     # line S
        b = self.inner(x)   # line O
        return a + b


def test_one_op_called_from_user_frames_at_several_depths_gets_each_its_own_line():
    """linear through Sequential from line S, then from _Inner's line I (itself called from
    line O, as deep as S's call): each linear goes to its own innermost user line."""
    model, x = _Outer(), gradkit.randn(2, 4, requires_grad=True)
    with profile() as prof:
        for _ in range(2):
            model(x).sum().backward()
    sites = [e.site for e in prof.events() if e.name in ("gradkit::addmm", "gradkit::linear")]
    line_s, line_i = _line_of("line S", _Outer.forward), _line_of("line I", _Inner.forward)
    assert sites == [line_s, line_i] * 2


def _updated(x, opt):
    with gradkit.no_grad():
        y = x * 3  # line C
    opt.step()  # line D
    return y


def test_ops_that_make_no_node_get_their_line_without_with_stack(tmp_path):
    """no_grad ops and an optimizer's update are attributed to their line as any op, in the
    live profile and in its trace; nothing is left to the unattributed row but the engine."""
    x = gradkit.randn(5, requires_grad=True)
    x.grad = gradkit.ones(5)
    opt = gradkit.optim.SGD([x], lr=0.1, momentum=0.9)
    with profile(clock=fake_clock(1000)) as prof:
        _updated(x, opt)
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    line_c, line_d = _line_of("line C", _updated), _line_of("line D", _updated)
    ops = [e for e in prof.events() if e.cat == "cpu_op"]
    step_ops = sum(1 for e in ops if e.site == line_d)
    assert step_ops >= 1 and {e.site for e in ops} == {line_c, line_d}
    for lines in (line_costs(prof.events()), line_costs(load_trace(path).events()),
                  summarize_trace(path, 1).lines):  # live, loaded, `gradkit trace summary`
        costs = {c.site: c.calls for c in lines}
        assert costs[line_c] == 1 and costs[line_d] == step_ops
        assert costs.get(UNATTRIBUTED, 0) == 0
