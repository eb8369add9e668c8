"""key_averages(), table() and export_stacks(): torch's grouping, columns, units and sorting."""
import itertools

import pytest

import gradkit
from gradkit.profiler import profile, record_function
from gradkit.profiler.table import format_memory, format_time


def _clock():
    return itertools.count(0, 1000).__next__


def _profiled(**options):
    """A deterministic profile: 3 muls in 'a', 1 exp and 2 muls in 'b' (fake clock)."""
    x = gradkit.randn(4)
    y = gradkit.randn(2, 2)
    with profile(clock=_clock(), **options) as prof:
        with record_function("a"):
            for _ in range(3):
                x * 2
        with record_function("b"):
            x.exp()
            y * 3
            y * 4
    return prof


def _rows(table):
    lines = table.splitlines()
    return [line.split() for line in lines[3:] if line and not line.startswith("-")
            and not line.startswith("Self CPU time total")]


def test_key_averages_sums_per_name():
    averages = {e.key: e for e in _profiled().key_averages()}
    assert averages["gradkit::mul"].count == 5
    assert averages["gradkit::mul"].cpu_time_total == 5.0  # one tick each
    # 'a' reads the clock at enter and exit around 3 muls of two reads each
    assert averages["a"].cpu_time_total == 7.0 and averages["a"].self_cpu_time_total == 4.0
    assert averages["b"].cpu_time == 7.0


def test_group_by_input_shape():
    averages = _profiled(record_shapes=True).key_averages(group_by_input_shape=True)
    muls = sorted((str(e.input_shapes), e.count) for e in averages if e.key == "gradkit::mul")
    assert muls == [("[[2, 2], []]", 2), ("[[4], []]", 3)]
    table = averages.table()
    assert "Input Shapes" in table and "[[2, 2], []]" in table


def test_group_by_stack_n():
    x = gradkit.randn(3)

    def f():
        return x * 2

    def g():
        return x * 2

    with profile(with_stack=True) as prof:
        f()
        g()
        g()
    muls = [e for e in prof.key_averages(group_by_stack_n=1) if e.key == "gradkit::mul"]
    assert sorted(e.count for e in muls) == [1, 2]
    assert len([e for e in prof.key_averages() if e.key == "gradkit::mul"]) == 1


def test_table_columns_in_torch_order():
    table = _profiled(profile_memory=True).key_averages().table()
    header = table.splitlines()[1]
    columns = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "CPU Mem", "Self CPU Mem", "# of Calls"]
    positions = [header.index(c) for c in columns]
    assert positions == sorted(positions)
    # 6 ops of one tick, 'a' and 'b' of 7 self ticks each (a free after each op reads the clock)
    assert table.rstrip().splitlines()[-1] == "Self CPU time total: 20.000us"


@pytest.mark.parametrize("sort_by", ["cpu_time_total", "self_cpu_time_total", "count"])
def test_table_sorts_descending(sort_by):
    averages = _profiled().key_averages()
    rows = _rows(averages.table(sort_by=sort_by, row_limit=-1))
    expected = sorted(averages, key=lambda e: getattr(e, sort_by), reverse=True)
    assert [r[0] for r in rows] == [e.key for e in expected]


@pytest.mark.parametrize("limit, count", [(2, 2), (0, 0), (-1, 4), (100, 4)])
def test_table_row_limit(limit, count):
    table = _profiled().key_averages().table(sort_by="cpu_time_total", row_limit=limit)
    assert len(_rows(table)) == count


def test_table_rejects_unknown_sort_key():
    with pytest.raises(ValueError, match="unknown sort_by 'cuda_time'; expected one of"):
        _profiled().key_averages().table(sort_by="cuda_time")


def test_percentages_add_up():
    rows = _rows(_profiled().key_averages().table())
    assert sum(float(r[1].rstrip("%")) for r in rows) == pytest.approx(100.0, abs=0.05)


@pytest.mark.parametrize("us", [0.0, 0.4567, 12.3456, 999.9994, 1234.5, 5e6, 123456789.0])
def test_time_format_matches_torch(us):
    profiler_util = pytest.importorskip("torch.autograd.profiler_util")
    assert format_time(us) == profiler_util._format_time(us)


@pytest.mark.parametrize("nbytes", [0, 12, -512, 1024, 5000, -3 << 20, 7 << 30])
def test_memory_format_matches_torch(nbytes):
    profiler_util = pytest.importorskip("torch.autograd.profiler_util")
    assert format_memory(nbytes) == profiler_util._format_memory(nbytes)


def test_export_stacks_writes_folded_stacks(tmp_path):
    x = gradkit.randn(3)

    def inner():
        return x * 2

    def outer():
        return inner().exp()

    with profile(with_stack=True, clock=_clock()) as prof:
        outer()
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path), "self_cpu_time_total")
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    stacks = dict(line.rsplit(" ", 1) for line in lines)
    mul = next(s for s in stacks if s.endswith(";gradkit::mul"))
    frames = mul.split(";")
    assert frames[-2].endswith(":_inner") and frames[-3].endswith(":_outer")
    assert all(" " not in s for s in stacks)
    assert stacks[mul] == "1"
    with pytest.raises(ValueError, match="unknown metric 'bogus'"):
        prof.export_stacks(str(path), "bogus")


def test_export_stacks_needs_with_stack(tmp_path):
    with profile() as prof:
        gradkit.ones(2) * 2
    with pytest.raises(RuntimeError, match="requires profile\\(with_stack=True\\)"):
        prof.export_stacks(str(tmp_path / "s.txt"))
