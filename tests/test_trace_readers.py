"""Every trace `gradkit profile` writes, with each option and with all of them, loads in two
readers from PyPI without a warning or a dropped slice: Holistic Trace Analysis
(``HolisticTraceAnalysis``) and TensorBoard's profiler plugin (``torch-tb-profiler``), each
compared event for event with what gradkit reads back.

Neither is in the ``test`` extra: together they pull in pandas, TensorBoard and Jupyter
(about 80 packages, 2 minutes to install). Each half skips when its reader is absent:
``pip install HolisticTraceAnalysis "pandas<3" torch-tb-profiler``.
"""
import logging
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradkit.cli.main import main
from gradkit.profiler import load_trace

pytestmark = pytest.mark.slow

SCRIPT = """\
import gradkit
from gradkit import nn
from gradkit.profiler import record_function

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
x = gradkit.randn(16, 4)
for step in range(4):
    with record_function("step \\\\ naïve"):  # a final backslash and non-ASCII, as written
        model(x).sum().backward()
    __profiler__.step()
"""

OPTIONS = {
    "plain": [], "record-shapes": ["--record-shapes"], "profile-memory": ["--profile-memory"],
    "with-stack": ["--with-stack"], "with-flops": ["--with-flops"],
    "with-modules": ["--with-modules"], "schedule": ["--schedule", "1,1,2"],
    "detect-anomaly": ["--detect-anomaly"], "group-by-input-shape": ["--group-by-input-shape"],
    "group-by-stack-n": ["--group-by-stack-n", "2"],
    "all, gzip": ["--record-shapes", "--profile-memory", "--with-stack", "--with-flops",
                  "--with-modules", "--schedule", "1,1,2", "--detect-anomaly"],
}


def _cli_trace(tmp_path: Path, case: str) -> Path:
    """The trace `gradkit profile OPTIONS[case]` writes for SCRIPT, alone in its folder."""
    options = OPTIONS[case]
    script = tmp_path / "train.py"
    script.write_text(SCRIPT, encoding="utf-8")
    folder = tmp_path / "trace"
    folder.mkdir()
    trace = folder / ("rank-0.json.gz" if "gzip" in case else "rank-0.json")
    result = CliRunner().invoke(main, ["profile", *options, "--no-color", "-o", str(trace),
                                       str(script)])
    assert result.exit_code == 0, result.output
    return trace


def _ours(trace: Path) -> Counter:
    """Slices per name as gradkit reads them back (X events, host side)."""
    return Counter(e.name for e in load_trace(trace).events())


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list = []

    def emit(self, record):
        self.records.append(record.getMessage())


def _warnings_of(logger: str) -> _Warnings:
    handler = _Warnings()
    logging.getLogger(logger).addHandler(handler)
    return handler


def _kind(message: str) -> str:
    """A log message without its paths and numbers (durations, process ids)."""
    return re.sub(r"/\S+|\d+(\.\d+)?", "", message)


def _hta_parse(folder: Path):
    """HTA's trace of the one file in ``folder``, and the messages it logged."""
    hta_trace = pytest.importorskip("hta.common.trace")
    handler = _warnings_of("hta")
    try:
        parsed = hta_trace.Trace(trace_dir=str(folder))
        parsed.parse_traces(max_ranks=1, use_multiprocessing=False)
    finally:
        logging.getLogger("hta").removeHandler(handler)
    return parsed, handler.records


def _hta_messages_on_torch_trace(tmp_path: Path) -> set:
    torch = pytest.importorskip("torch")
    folder = tmp_path / "torch"
    folder.mkdir()
    x = torch.randn(16, 4, requires_grad=True)
    with torch.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        (x @ x.T).relu().sum().backward()
    prof.export_chrome_trace(str(folder / "rank-0.json"))
    return {_kind(m) for m in _hta_parse(folder)[1]}


@pytest.mark.parametrize("case", OPTIONS)
def test_hta_reads_every_slice(tmp_path, case):
    pytest.importorskip("hta.common.trace")
    trace = _cli_trace(tmp_path, case)
    parsed, messages = _hta_parse(trace.parent)
    df = parsed.get_trace(0)
    symbols = parsed.symbol_table.get_sym_table()
    theirs = Counter(symbols[i] for i in df["name"])
    ours = _ours(trace)
    assert {name: theirs[name] for name in ours} == dict(ours)
    # HTA logs its progress at WARNING too: only messages it also gives torch's own trace
    assert {_kind(m) for m in messages} <= _hta_messages_on_torch_trace(tmp_path)


@pytest.mark.parametrize("case", OPTIONS)
def test_tensorboard_profiler_parses_every_op(tmp_path, case):
    data = pytest.importorskip("torch_tb_profiler.profiler.data")
    trace = _cli_trace(tmp_path, case)
    plugin = pytest.importorskip("torch_tb_profiler.consts").PLUGIN_NAME  # its logger's name
    handler = _warnings_of(plugin)
    try:
        parsed = data.RunProfileData.parse("worker0", "0", str(trace), str(tmp_path))
    finally:
        logging.getLogger(plugin).removeHandler(handler)
    theirs = Counter({op.name: op.calls for op in parsed.op_list_groupby_name})
    ours = Counter(e.name for e in load_trace(trace).events()
                   if e.cat == "cpu_op" and not e.name.startswith("ProfilerStep#"))
    assert dict(theirs) == dict(ours)
    assert handler.records == []
