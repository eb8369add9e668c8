"""`gradkit trace summary` on PyTorch's and gradkit's traces; its error messages."""
import gzip
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradkit.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures"
HAND_WRITTEN = FIXTURES / "torch_trace_small.json"  # expected values in fixtures/README.md
sys.path.insert(0, str(Path(__file__).parent))
from test_cli_run import gradkit_cli  # noqa: E402


def summary(*args):
    return CliRunner().invoke(main, ["trace", "summary", *map(str, args)], prog_name="gradkit")


def section(output: str, title: str) -> list[list[str]]:
    """Rows (as lists of words) of the rich table printed under ``title``."""
    lines = [line.strip() for line in output.splitlines()]
    start = lines.index(title)
    rows = []
    for line in lines[start + 4:]:  # title, blank line, column names, rule
        if not line.strip():
            break
        rows.append(line.split())
    return rows


def test_summary_of_hand_written_pytorch_trace():
    result = summary(HAND_WRITTEN)
    assert result.exit_code == 0, result.output
    mm_row = next(line for line in result.output.splitlines()
                  if line.strip().startswith("aten::mm "))
    assert mm_row.split()[1:3] == ["50.00%", "200.000us"] and mm_row.split()[-1] == "2"
    assert "Self CPU time total: 400.000us" in result.output
    assert section(result.output, "Time per category (self)") == [
        ["cpu_op", "11", "306.000us", "76.50%"], ["user_annotation", "1", "94.000us", "23.50%"]]
    assert section(result.output, "Slowest backward nodes") == [
        ["MmBackward0", "90.000us", "aten::mm"], ["ReluBackward0", "40.000us", "aten::relu"],
        ["SumBackward0", "10.000us", "aten::sum"]]


def test_top_and_row_limit(tmp_path):
    result = summary("--top", "1", "--row-limit", "3", "--sort-by", "count", HAND_WRITTEN)
    assert result.exit_code == 0, result.output
    assert section(result.output, "Slowest backward nodes") == [
        ["MmBackward0", "90.000us", "aten::mm"]]
    lines = result.output.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("---")]
    assert rules[2] - rules[1] - 1 == 3
    assert lines[rules[1] + 1].split()[0] == "aten::mm"  # the only op called twice


def test_summary_of_a_gzipped_trace(tmp_path):
    packed = tmp_path / "small.json.gz"
    with open(HAND_WRITTEN, "rb") as src, gzip.open(packed, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert summary(packed).output == summary(HAND_WRITTEN).output.replace(
        str(HAND_WRITTEN), str(packed))


def test_summary_of_a_real_pytorch_trace(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "torch.json"
    x = torch.ones(4, 3, requires_grad=True)
    with torch.profiler.profile(record_shapes=True) as prof:
        (x.sin() * 2).sum().backward()
    prof.export_chrome_trace(str(path))
    proc = gradkit_cli("trace", "summary", path)
    assert proc.returncode == 0, proc.stderr
    assert "aten::sin" in proc.stdout and "aten::mul" in proc.stdout
    backward = section(proc.stdout, "Slowest backward nodes")
    forward_of = {row[0]: row[2] for row in backward}
    assert forward_of["SinBackward0"] == "aten::sin"
    assert forward_of["MulBackward0"] == "aten::mul"
    assert forward_of["SumBackward0"] == "aten::sum"


def test_summary_of_a_gradkit_trace_names_the_forward_line(tmp_path):
    out = tmp_path / "step.json.gz"
    script = FIXTURES / "scripts" / "train_step.py"
    assert gradkit_cli("profile", "-o", out, script, "1").returncode == 0
    proc = gradkit_cli("trace", "summary", out)
    assert proc.returncode == 0, proc.stderr
    rows = section(proc.stdout, "Slowest backward nodes")
    assert {row[0]: row[2] for row in rows} == {
        "SumBackward0": "gradkit::sum", "ReluBackward0": "gradkit::relu",
        "MmBackward0": "gradkit::matmul"}
    assert all(row[3] == f"{script}:10" for row in rows)  # loss = (x @ w).relu().sum()


@pytest.mark.parametrize("content, message", [
    (b"{not json", r"^Error: .*bad\.json is not a readable Chrome trace \(JSON\)"),
    (b"\x1f\x8bnot gzip", r"^Error: .*bad\.json is not a readable Chrome trace"),
    (b'{"traceEvents": 5}',
     r"^Error: .*bad\.json: not a Chrome trace: 'traceEvents' must be a list, got a number"),
    (b'42', r"^Error: .*bad\.json: not a Chrome trace: the top-level JSON value is a number"),
    (b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "args": 5}]}',
     r"^Error: .*bad\.json: event #0 \('a'\): 'args' must be an object, got a number$"),
    (b'{"traceEvents": [{"ph": "X", "name": "a", "ts": [1]}]}',
     r"^Error: .*bad\.json: event #0 \('a'\): "),
])
def test_malformed_trace_is_one_error_line(tmp_path, content, message):
    (tmp_path / "bad.json").write_bytes(content)
    result = summary(tmp_path / "bad.json")
    assert result.exit_code == 1
    assert len(result.output.splitlines()) == 1
    assert result.output.startswith("Error: ") and "Traceback" not in result.output
    assert re.search(message, result.output)


def test_missing_or_unreadable_trace_is_one_error_line(tmp_path):
    result = summary(tmp_path / "nope.json")
    assert (result.exit_code, result.output) == (1, f"Error: no such trace file: "
                                                    f"{tmp_path / 'nope.json'}\n")
    result = summary(tmp_path)
    assert (result.exit_code, result.output) == (1, f"Error: cannot read trace {tmp_path}: "
                                                    "Is a directory\n")


def test_an_empty_trace_is_an_error_that_says_so(tmp_path):
    (tmp_path / "empty.json").write_text('{"traceEvents": []}')
    result = summary(tmp_path / "empty.json")
    assert (result.exit_code, result.output) == (
        1, f"Error: no host op events in {tmp_path / 'empty.json'}: its event list is empty\n")
