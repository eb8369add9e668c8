"""``gradkit trace summary`` reads a trace into compact columns (trace_columns.py) instead of
an object per event: the same tables as load_trace's events give, in bounded memory.

Sameness is checked on real traces (gradkit's with modules and memory, PyTorch's), the
hand-written ones of the load tests and random traces that mix threads, equal timestamps,
overlaps, flows with odd ids, colliding sequence numbers and memory events; memory on traces
of ours of 8 and 32 MB, each in a child process.
"""
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import gradkit
from gradkit import nn
from gradkit.profiler import load_trace, profile
from gradkit.profiler.analysis import category_totals, slowest_backward
from gradkit.profiler.saved_lines import costs_per_line
from gradkit.profiler.table import SORT_KEYS
from gradkit.profiler.trace_summary import summarize_trace

HERE = Path(__file__).parent
HAND_WRITTEN = HERE / "fixtures" / "torch_trace_small.json"
BENCH = HERE / "benchmarks" / "bench_trace_summary.py"


def _by_load_trace(path, top):
    trace = load_trace(path)
    events = trace.events()
    return (trace.notes, [events.key_averages().table(sort_by=k, row_limit=-1) for k in SORT_KEYS],
            [vars(line) for line in costs_per_line(events)],
            [vars(total) for total in category_totals(events)], _backward(
                slowest_backward(events, top)))


def _by_columns(path, top):
    summary = summarize_trace(path, top)
    return (summary.notes, [summary.averages.table(sort_by=k, row_limit=-1) for k in SORT_KEYS],
            [vars(line) for line in summary.lines],
            [vars(total) for total in summary.categories], _backward(summary.slowest_backward))


def _backward(costs):
    # an empty call site is no site for the columns (None): the CLI prints both as ""
    return [(c.node.name, c.node.thread, c.node.cpu_time_total, c.site or None,
             None if c.forward is None else (c.forward.name, c.forward.start_ns)) for c in costs]


def _same(path, top=1000):
    expected = _by_load_trace(path, top)
    assert _by_columns(path, top) == expected  # floats too: added in the same order
    return expected


def test_a_gradkit_trace_with_modules_memory_and_shapes(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    x = gradkit.randn(5, 3)
    with profile(record_shapes=True, profile_memory=True, with_modules=True,
                 with_stack=True) as prof:
        for _ in range(3):
            model(x).pow(2).mean().backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    notes, tables, lines, _, backward = _same(path)
    assert "CPU Mem" in tables[0]
    assert {"Sequential.0 (Linear)", "Sequential.2 (Linear)"} <= {line["module"] for line in lines}
    assert all(line["saved_bytes"] is not None for line in lines)  # the Saved at peak column
    assert any(line["saved_bytes"] for line in lines if line["module"] == "Sequential.0 (Linear)")
    assert len(backward) > 5 and all(site for _, _, _, site, _ in backward)


def test_the_hand_written_pytorch_trace_and_a_real_one(tmp_path):
    _same(HAND_WRITTEN)
    torch = pytest.importorskip("torch")
    x = torch.ones(4, 3, requires_grad=True)
    with torch.profiler.profile(profile_memory=True, record_shapes=True) as prof:
        (x.sin() * 2).sum().backward()
    path = tmp_path / "torch.json"
    prof.export_chrome_trace(str(path))
    _same(path)


def _random_trace(rng):
    """Events of several threads in any order: equal times, overlaps, negative durations,
    backward markers of every kind, flows with int/float/str/bool ids, memory, saved-for-
    backward packs and releases, non-objects."""
    threads = [(1, 1), (1, 2), (2, "w"), (2, 1), ("p", 10)]
    names = ["aten::mm", "aten::add", "MmBackward0", "step",
             "autograd::engine::evaluate_function: MmBackward0",
             "nn.Module: net.0 (Linear)", "nn.Module: net (Sequential)"]
    events, memory = [], rng.random()  # memory events, or saved-bytes ones
    for _ in range(rng.randint(1, 80)):
        pid, tid = rng.choice(threads)
        place = {"pid": pid, "tid": tid, "ts": rng.randint(0, 120) / rng.choice([1, 4])}
        kind = rng.random()
        if kind < 0.6:
            args = {}
            if rng.random() < 0.7:
                args["Sequence number"] = rng.randint(0, 4)
            if rng.random() < 0.6:
                args["Fwd thread id"] = rng.choice([0, 0, 1, "", None, 0.0])
            if rng.random() < 0.5:
                args["Forward call site"] = rng.choice(["a.py:1", "b.py:2", ""])
            events.append({"ph": "X", "name": rng.choice(names), "args": args,
                           "cat": rng.choice(["cpu_op"] * 4 + ["user_annotation", "kernel"]),
                           "dur": rng.randint(-2, 40), **place})
        elif kind < 0.8:
            flow = {"ph": rng.choice("sf"), "cat": "fwdbwd", "name": "fwdbwd",
                    "id": rng.choice([1, 2, 3, 1.0, "x", True, 2**70]), **place}
            if rng.random() < 0.7:
                flow["bp"] = "e"
            events.append(flow)
        elif kind < 0.8 + 0.17 * memory:
            events.append({"ph": "i", "name": "[memory]", "args": {
                "Bytes": rng.randint(-64, 64), "Device Type": rng.choice([0, 0, 1])}, **place})
        elif kind < 0.97:  # packs and releases, paired or not, pack numbers reused
            events.append({"ph": "i", "name": "[saved]", "args": {
                "Bytes": rng.randint(-32, 64), "Pack": rng.choice([0, 1, 2, 1.0, 2**40, 0.5])},
                **place})
        else:
            events.append(rng.choice([7, None, [1]]))
    rng.shuffle(events)
    return events


@pytest.mark.parametrize("seed", range(40))
def test_random_traces_give_the_same_tables(tmp_path, seed):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": _random_trace(random.Random(seed))}))
    try:
        expected = _by_load_trace(path, top=5)
    except ValueError as e:  # nothing host-side to read: both must say so alike
        with pytest.raises(ValueError, match=str(e)[-20:]):
            summarize_trace(path)
        return
    assert _by_columns(path, top=5) == expected


@pytest.mark.parametrize("seed", range(30))
def test_random_saved_bytes_give_the_same_saved_at_peak_column(tmp_path, seed):
    """Many packs and releases at the starts, ends and insides of the ops of a random trace
    (nested, of several threads, in module ranges): each line's bytes at the peak alike."""
    rng = random.Random(seed)
    events = [e for e in _random_trace(rng) if isinstance(e, dict) and e["ph"] == "X"]
    ops = events + [{"ph": "X", "cat": "user_annotation", "name": "nn.Module: net.0 (Linear)",
                     "pid": 1, "tid": 1, "ts": 0, "dur": 60}]
    events = list(ops)
    for _ in range(rng.randint(1, 60)):
        op = rng.choice(ops)
        ts = op["ts"] + rng.choice([0, op["dur"], rng.randint(0, 40), -1])
        events.append({"ph": "i", "name": "[saved]", "pid": op["pid"], "tid": op["tid"],
                       "ts": ts, "args": {"Bytes": rng.randint(-32, 64),
                                          "Pack": rng.randint(0, 6)}})
    rng.shuffle(events)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    expected = _by_load_trace(path, top=5)
    assert _by_columns(path, top=5) == expected


def test_the_link_cases_of_the_load_tests(tmp_path):
    from test_profiler_load import _flow, _op, _two_thread_trace
    traces = [_two_thread_trace(), [e for e in _two_thread_trace() if e["ph"] == "X"],
              [_op("aten::mm", 1, 10, 20), _op("aten::inner", 1, 10, 5), _flow(1, "s", 1, 10),
               _op("outer", 1, 50, 20), _op("MmBackward0", 1, 51, 10), _flow(1, "f", 1, 55),
               _op("aten::add", 1, 80, 2), _flow(2, "s", 1, 81),
               _op("AddBackward0", 1, 90, 2), _flow(2, "f", 1, 85, bp=None)]]
    for i, trace in enumerate(traces):
        path = tmp_path / f"t{i}.json"
        path.write_text(json.dumps(trace))
        assert _same(path)[4], "no backward node was summarized"


def test_codes_widen_past_16_and_32_bits(tmp_path):
    """40,000 names and threads, sequence numbers past 2**31: the narrow columns widen."""
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": i % 40_000,
               "ts": i, "dur": 3, "args": {"Sequence number": 2**40 + i % 7,
                                           "Fwd thread id": i % 2}} for i in range(40_000)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    assert len(_same(path, top=3)[1][0].splitlines()) == 40_000 + 5


def test_errors_are_those_of_load_trace(tmp_path):
    path = tmp_path / "t.json"
    for content in ('[{"ph": "X", "name": "a", "args": {"flops": "many"}}]',
                    '[{"ph": "X", "name": "a", "pid": [1]}]', '{"traceEvents": 5}',
                    '[{"ph": "X", "name": "a", "args": {"Forward call site": 3}}]'):
        path.write_text(content)
        with pytest.raises(ValueError) as from_load:
            load_trace(path)
        with pytest.raises(ValueError, match=str(from_load.value).replace("(", r"\(")
                           .replace(")", r"\)").replace("[", r"\[")):
            summarize_trace(path)
    with pytest.raises(FileNotFoundError, match="no such trace file"):
        summarize_trace(tmp_path / "missing.json")


_PEAK = """
import sys, time
def mib(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024
from gradkit.profiler import trace_columns
from gradkit.profiler.trace_summary import summarize_trace
# small slices: their fixed cost (a few MB) would blur what grows with the trace here
trace_columns._CHUNK, trace_columns._QUERIES = 1 << 10, 1 << 12
before = mib("VmRSS:")
summary = summarize_trace(sys.argv[1])
print(mib("VmHWM:") - before, summary.event_count)
"""


def _growth(path) -> float:
    """Peak RSS growth (MiB) of a child process summarizing ``path``."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True,
                         text=True, check=True, env=env).stdout.split()
    assert int(out[1]) > 1000  # host events were summarized
    return float(out[0])


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc (Linux)")
def test_memory_grows_by_a_fraction_of_the_trace_size(tmp_path):
    """Peak memory (RSS) summarizing traces of ours of 8 and 32 MB: each MB more of trace costs
    under 0.3 MiB more (0.18 measured). Through load_trace's objects it costs 2.8 MiB (3 GiB
    for 1 GB); tests/benchmarks/bench_trace_summary.py measures the 1 GB case."""
    sys.path.insert(0, str(BENCH.parent))
    import bench_trace_summary
    sizes, growths = [], []
    for mb in (8, 32):
        path = tmp_path / f"trace{mb}.json"
        bench_trace_summary.write_trace(str(path), mb * 1_000_000)
        sizes.append(path.stat().st_size / (1 << 20))
        growths.append(_growth(path))
    per_mb = (growths[1] - growths[0]) / (sizes[1] - sizes[0])
    assert per_mb < 0.3, f"{growths} MiB to summarize {sizes} MiB"
