"""An independent reader: Holistic Trace Analysis (PyPI ``HolisticTraceAnalysis``) loads our traces.

HTA is the PyTorch ecosystem's analyzer of profiler traces: it parses the JSON on
its own and rebuilds each thread's call stacks. Skipped when it is not installed
(``pip install HolisticTraceAnalysis "pandas<3"``).
"""
import logging
from collections import Counter

import pytest

import gradkit
from gradkit.profiler import profile, record_function

hta_trace = pytest.importorskip("hta.common.trace")
hta_call_graph = pytest.importorskip("hta.common.trace_call_graph")


def _write_trace(directory):
    x = gradkit.randn(64, 32, requires_grad=True)
    w = gradkit.randn(32, 16, requires_grad=True)
    with profile(record_shapes=True, profile_memory=True) as prof:
        for _ in range(3):
            with record_function("model"):
                loss = (x @ w).relu().sum()
            loss.backward()
    directory.mkdir()
    prof.export_chrome_trace(str(directory / "rank-0.json"))
    return prof


def test_hta_parses_our_trace_and_rebuilds_the_same_stacks(tmp_path):
    logging.disable(logging.WARNING)
    try:
        prof = _write_trace(tmp_path / "trace")
        trace = hta_trace.Trace(trace_dir=str(tmp_path / "trace"))
        trace.parse_traces(max_ranks=1, use_multiprocessing=False)
        df = trace.get_trace(0)
        symbols = trace.symbol_table.get_sym_table()
        hta_names = Counter(symbols[i] for i in df["name"])
        ours = Counter(e.name for e in prof.events())
        for name, count in ours.items():
            assert hta_names[name] == count, name
        graph = hta_call_graph.CallGraph(trace, ranks=[0])
        depths = Counter()
        for stack_graph in graph.call_stacks:
            for index, node in stack_graph.get_nodes().items():
                if index >= 0 and node.depth >= 0:
                    name = symbols[int(df.loc[df["index"] == index, "name"].iloc[0])]
                    depths[(name, node.depth)] += 1
    finally:
        logging.disable(logging.NOTSET)

    def depth(e):
        n = 0
        while e.cpu_parent is not None:
            e, n = e.cpu_parent, n + 1
        return n

    expected = Counter((e.name, depth(e)) for e in prof.events())
    assert max(d for _, d in expected) == 2  # backward > evaluate_function > node
    assert depths == expected
