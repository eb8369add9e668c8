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

sys.path.insert(0, str(Path(__file__).parent))
from test_profiler import fake_clock  # noqa: E402


def _line_of(marker: str) -> str:
    source, first = inspect.getsourcelines(_model)
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
