"""`gradkit trace report`: one self-contained HTML file (no script, nothing fetched) with the
op table, the line table and memory over time as an inline SVG plot."""
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

import gradkit
from gradkit.cli.main import main
from gradkit.profiler import load_trace, profile, record_function
from gradkit.profiler.html_report import html_report
from gradkit.profiler.svg_plot import MAX_POINTS, _thin
from gradkit.profiler.table import format_memory
from gradkit.profiler.trace_export import SAVED_BYTES

HOSTILE = "<script>alert(1)</script>\x1b[31m"


class _Tags(HTMLParser):
    """Every start tag with its attributes, and whether the document closed what it opened."""

    def __init__(self) -> None:
        super().__init__()
        self.tags, self.open = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta", "rect", "line", "br"):
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        assert self.open and self.open.pop() == tag, f"</{tag}> closes nothing open"


def _profile_memory_trace(path):
    x = gradkit.randn(32, 32, requires_grad=True)
    with profile(profile_memory=True) as prof:
        with record_function(HOSTILE):
            loss = (x @ x).relu().sum()  # the line
        loss.backward()
    prof.export_chrome_trace(str(path))
    return prof


def test_the_report_is_self_contained_and_escapes_names(tmp_path):
    prof = _profile_memory_trace(tmp_path / "t.json")
    text = html_report(load_trace(tmp_path / "t.json").events(), "t.json")
    tags = _Tags()
    tags.feed(text)
    assert tags.open == []  # every element closed
    names = {tag for tag, _ in tags.tags}
    assert "script" not in names and "link" not in names and "img" not in names
    assert not any("src" in attrs or "href" in attrs for _, attrs in tags.tags)
    assert "url(" not in text and "@import" not in text
    assert HOSTILE not in text and "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m" in text
    assert "gradkit::matmul" in text and "(x @ x).relu().sum()  # the line" in text
    assert prof.events()  # profiled


def test_the_memory_plot_shows_the_peaks_of_the_trace(tmp_path):
    import json
    _profile_memory_trace(tmp_path / "t.json")
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    saved_peak = max(e["args"]["Saved"] for e in trace if e.get("name") == SAVED_BYTES)
    text = html_report(load_trace(tmp_path / "t.json").events(), "t")
    svg = re.search(r"<svg.*?</svg>", text, re.S).group(0)
    assert svg.count("<polyline") == 2
    assert f"Saved for backward (peak {format_memory(saved_peak)})" in svg
    assert "Saved at peak" in text  # the line table's column


def test_without_memory_records_the_report_says_how_to_get_them():
    with profile() as prof:
        gradkit.randn(3, requires_grad=True).sin().sum().backward()
    text = html_report(prof.events(), "plain")
    assert "<svg" not in text and "--profile-memory" in text


def test_thinning_keeps_every_peak_and_the_order():
    points = [(i, i % 7) for i in range(20 * MAX_POINTS)]
    points[12345] = (12345, 1000)
    kept = _thin(points)
    assert len(kept) <= 1.6 * MAX_POINTS and (12345, 1000) in kept
    assert kept == sorted(kept) and kept[-1] == points[-1]


def test_cli_writes_next_to_the_trace_and_reads_torch_traces(tmp_path):
    torch = pytest.importorskip("torch")
    x = torch.randn(16, 16, requires_grad=True)
    with torch.profiler.profile(profile_memory=True) as tprof:
        (x @ x).relu().sum().backward()
    tprof.export_chrome_trace(str(tmp_path / "torch.json"))
    result = CliRunner().invoke(main, ["trace", "report", str(tmp_path / "torch.json")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "torch.html").read_text()
    assert "aten::mm" in text and "Allocated (peak" in text  # torch's [memory] events


def test_cli_errors_name_the_file(tmp_path):
    _profile_memory_trace(tmp_path / "t.json")
    out = tmp_path / "missing-dir" / "r.html"
    result = CliRunner().invoke(main, ["trace", "report", str(tmp_path / "t.json"), "-o",
                                       str(out)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: cannot write report to {out}: No such file or directory"]
    missing = CliRunner().invoke(main, ["trace", "report", str(tmp_path / "nope.json")])
    assert missing.exit_code == 1 and "no such trace file" in missing.output
