"""`gradkit trace diff A B`: self time per op and per source line, A against B, on gradkit's
and torch's traces; its errors for misuse."""
import inspect
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradkit
from gradkit.cli.main import main
from gradkit.profiler import load_trace, profile
from gradkit.profiler.diff import line_changes, op_changes

sys.path.insert(0, str(Path(__file__).parent))
from test_profiler import fake_clock  # noqa: E402


def _model(x):
    return x.sin().sum()  # the line


def _trace(path, steps: int, clock_ns: int = 1000):
    """A gradkit trace of ``steps`` forward+backward passes, each clock read ``clock_ns``."""
    x = gradkit.randn(5, requires_grad=True)
    with profile(clock=fake_clock(clock_ns)) as prof:
        for _ in range(steps):
            _model(x).backward()
    prof.export_chrome_trace(str(path))
    return load_trace(path).events()


def diff(*args):
    return CliRunner().invoke(main, ["trace", "diff", *map(str, args)],
                                              prog_name="gradkit")


def test_ops_and_lines_that_ran_twice_as_long_are_slower_by_what_they_took(tmp_path):
    before, after = _trace(tmp_path / "a.json", 1), _trace(tmp_path / "b.json", 1, 2000)
    ops = {c.key: c for c in op_changes(before, after)}
    # every op lasts one clock step: 1 us before, 2 us after; namespaces are dropped
    assert (ops["sin"].before_us, ops["sin"].after_us) == pytest.approx((1.0, 2.0))
    assert ops["sin"].verdict == "slower" and ops["sin"].ratio == pytest.approx(2.0)
    source, first = inspect.getsourcelines(_model)
    site = f"{__file__}:{first + 1}"
    line = next(c for c in line_changes(before, after) if c.key == site)
    assert line.after_us == pytest.approx(2 * line.before_us) and line.verdict == "slower"
    assert line.before_calls == line.after_calls == 2  # sin and sum, once each


def test_rows_come_largest_change_first_with_new_and_gone_ops(tmp_path):
    before = _trace(tmp_path / "a.json", 1)
    x = gradkit.randn(5, requires_grad=True)
    with profile(clock=fake_clock(1000)) as prof:
        x.cos().sum().backward()
    after = prof.events()
    changes = op_changes(before, after)
    assert [abs(c.change_us) for c in changes] == sorted((abs(c.change_us) for c in changes),
                                                         reverse=True)
    verdicts = {c.key: c.verdict for c in changes}
    assert verdicts["cos"] == "new" and verdicts["sin"] == "gone" and verdicts["sum"] == "same"


def test_a_gradkit_trace_against_torchs_matches_ops_across_namespaces(tmp_path):
    torch = pytest.importorskip("torch")
    x = torch.randn(16, 16, requires_grad=True)
    with torch.profiler.profile() as tprof:
        (x @ x).sum().backward()
    tprof.export_chrome_trace(str(tmp_path / "torch.json"))
    ours = _trace(tmp_path / "ours.json", 1)
    both = [c for c in op_changes(ours, load_trace(tmp_path / "torch.json").events())
            if c.before_calls and c.after_calls]
    torch_sums = sum(e.name == "aten::sum" for e in load_trace(tmp_path / "torch.json").events())
    sums = next(c for c in both if c.key == "sum")  # gradkit::sum and aten::sum are one row
    assert (sums.before_calls, sums.after_calls) == (1, torch_sums)
    result = diff(tmp_path / "ours.json", tmp_path / "torch.json")
    assert result.exit_code == 0, result.output + result.stderr
    assert "Self time per op, A -> B" in result.stdout
    row = next(r for r in result.stdout.splitlines() if r.strip().startswith("sum "))
    assert row.split()[-3:-1] == ["1", str(torch_sums)]


def test_cli_prints_both_tables_with_verdicts(tmp_path):
    _trace(tmp_path / "a.json", 1)
    _trace(tmp_path / "b.json", 2)
    result = diff(tmp_path / "a.json", tmp_path / "b.json")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "Self time per op, A -> B" in out and "Time per source line" in out
    sin = next(r.split() for r in out.splitlines() if r.strip().startswith("sin "))
    assert sin[-3:] == ["1", "2", "slower"]


@pytest.mark.parametrize("case, expected", [
    ("same file", "Error: A and B are the same file ({a}): give two traces to compare"),
    ("missing B", "Error: no such trace file: {missing}"),
    ("empty B", "Error: no host op events in {empty}: its event list is empty"),
    ("not JSON", "is not a readable Chrome trace (JSON)"),
])
def test_misuse_is_a_one_line_error(tmp_path, case, expected):
    a = tmp_path / "a.json"
    _trace(a, 1)
    empty, missing, text = tmp_path / "empty.json", tmp_path / "missing.json", tmp_path / "t.txt"
    empty.write_text('{"traceEvents": []}')
    text.write_text("not a trace")
    b = {"same file": a, "missing B": missing, "empty B": empty, "not JSON": text}[case]
    result = diff(a, b)
    assert result.exit_code == 1
    assert expected.format(a=a, missing=missing, empty=empty) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_one_trace_only_is_a_usage_error(tmp_path):
    result = diff(tmp_path / "a.json")
    assert result.exit_code == 2 and "Missing argument 'B'" in result.stderr


def test_traces_with_no_op_in_common_get_a_note(tmp_path):
    a = tmp_path / "a.json"
    _trace(a, 1)
    other = tmp_path / "other.json"
    other.write_text('{"traceEvents": [{"ph": "X", "name": "aten::conv2d", "cat": "cpu_op", '
                     '"pid": 1, "tid": 1, "ts": 0, "dur": 5}]}')
    result = diff(a, other)
    assert result.exit_code == 0
    assert "A and B have no op in common" in result.stderr


def test_the_engine_row_has_no_calls_and_is_compared_by_time(tmp_path):
    before, after = _trace(tmp_path / "a.json", 1), _trace(tmp_path / "b.json", 2)
    engine = next(c for c in line_changes(before, after) if c.key == "(no source line)")
    assert (engine.before_calls, engine.after_calls) == (0, 0)
    assert engine.after_us == pytest.approx(2 * engine.before_us) and engine.verdict == "slower"
