"""Bytes held for backward per source line at the peak (profile_memory): each line's share is
what its ops saved and still held then; the shares add up to the counter's peak; torch's
saved_tensors_hooks, attributing each saved tensor to the line that saved it, agree."""
import inspect
import json
import sys

import pytest
from click.testing import CliRunner

import gradkit
from gradkit.cli.main import main
from gradkit.profiler import load_trace, profile
from gradkit.profiler.saved_lines import costs_per_line, saved_at_peak
from gradkit.profiler.trace_export import SAVED_BYTES


def _line_of(marker: str, function) -> str:
    source, first = inspect.getsourcelines(function)
    index = next(i for i, text in enumerate(source) if marker in text)
    return f"{__file__}:{first + index}"


def _model(lib, x, w1, w2):
    h = lib.relu(x @ w1)             # line A
    return (h @ w2).sin().sum()      # line B


def _dropped_then_kept(lib, x, w1, w2):
    small = (x * 2).exp().sum()      # line C: its graph is dropped before the peak
    del small
    return _model(lib, x, w1, w2)


_ARRAYS = [gradkit.randn(*shape, dtype=gradkit.float64).numpy()
           for shape in ((8, 16), (16, 32), (32, 4))]


def _params(lib, x_grad: bool = True):
    """x, w1, w2 as ``lib``'s tensors (the same values for gradkit and torch)."""
    return [lib.tensor(a, requires_grad=i > 0 or x_grad) for i, a in enumerate(_ARRAYS)]


def _profiled(program, x_grad: bool = True):
    params = _params(gradkit, x_grad)
    with profile(profile_memory=True) as prof:
        program(gradkit, *params).backward()
    return prof


def _torch_saved_by_line(program, x_grad: bool = True) -> dict:
    """{file:line: bytes} torch saves for backward, each tensor charged to the line of this
    file on the stack when torch packed it (a tensor saved twice counted once per save)."""
    torch = pytest.importorskip("torch")
    by_line: dict = {}

    def pack(t):
        frame = sys._getframe(1)
        while frame.f_code.co_filename != __file__:
            frame = frame.f_back
        site = f"{__file__}:{frame.f_lineno}"
        by_line[site] = by_line.get(site, 0) + t.nelement() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        program(torch, *_params(torch, x_grad))
    return by_line


def test_each_line_holds_what_it_saved_as_torch_saves_it():
    peak, by_line = saved_at_peak(_profiled(_model).events())
    expected = _torch_saved_by_line(_model)
    line_a, line_b = _line_of("line A", _model), _line_of("line B", _model)
    assert {site: n for (site, _), n in by_line.items()} == expected
    assert set(expected) == {line_a, line_b}
    assert peak == sum(expected.values())


def test_a_matmul_saves_only_what_the_needed_gradient_reads():
    # torch saves x, not w1, for x @ w1 when x needs no gradient
    _, by_line = saved_at_peak(_profiled(_model, x_grad=False).events())
    assert {site: n for (site, _), n in by_line.items()} == _torch_saved_by_line(_model, False)


def test_a_graph_dropped_before_the_peak_holds_nothing_at_it():
    peak, by_line = saved_at_peak(_profiled(_dropped_then_kept).events())
    sites = {site for site, _ in by_line}
    assert _line_of("line C", _dropped_then_kept) not in sites
    assert peak == sum(_torch_saved_by_line(_model).values())


def test_a_trace_file_gives_the_same_shares_and_they_add_up_to_its_counter(tmp_path):
    prof = _profiled(_model)
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    counter = [e["args"]["Saved"] for e in json.loads(path.read_text())["traceEvents"]
               if e.get("name") == SAVED_BYTES]
    peak, by_line = saved_at_peak(load_trace(path).events())
    assert (peak, by_line) == saved_at_peak(prof.events())
    assert peak == max(counter) == sum(by_line.values())


def test_the_table_gets_the_column_only_with_saved_records():
    with profile() as prof:  # no memory profile: no column, nothing filled
        _model(gradkit, *_params(gradkit)).backward()
    assert all(c.saved_bytes is None for c in costs_per_line(prof.events()))
    costs = costs_per_line(_profiled(_model).events())
    assert sum(c.saved_bytes for c in costs) == saved_at_peak(_profiled(_model).events())[0]


def test_cli_summary_prints_the_saved_column_for_ours_not_for_torchs(tmp_path):
    path = tmp_path / "t.json"
    _profiled(_model).export_chrome_trace(str(path))
    ours = CliRunner().invoke(main, ["trace", "summary", "--no-color", str(path)])
    assert ours.exit_code == 0, ours.output
    row = next(line for line in ours.output.splitlines() if "line A" in line)
    assert "Saved at peak" in ours.output and row.rstrip().endswith("KB")
    torch_trace = "tests/fixtures/torch_trace_small.json"
    theirs = CliRunner().invoke(main, ["trace", "summary", "--no-color", torch_trace])
    assert theirs.exit_code == 0 and "Saved at peak" not in theirs.output


def test_a_saved_event_with_a_pack_that_is_not_a_number_is_refused_by_name(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [{"ph": "X", "name": "aten::mm", "cat": "cpu_op", '
                    '"pid": 1, "tid": 1, "ts": 0, "dur": 5}, {"ph": "i", "name": "[saved]", '
                    '"pid": 1, "tid": 1, "ts": 1, "args": {"Bytes": 8, "Pack": [1]}}]}')
    with pytest.raises(ValueError, match=r"event #1 \('\[saved\]'\): 'args.Pack' must be a "
                                         r"number, got a list"):
        load_trace(path)
