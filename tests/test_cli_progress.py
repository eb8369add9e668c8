"""A long profile shows what it records, and warns before writing a trace too large to view."""
import io
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

import gradkit
from gradkit.cli import progress
from gradkit.profiler import profile

sys.path.insert(0, str(Path(__file__).parent))
from test_cli_profile import SCRIPTS, invoke  # noqa: E402


def test_recorded_events_count_what_the_recorder_holds():
    x = gradkit.ones(3, requires_grad=True)
    prof = profile(profile_memory=True)
    assert prof.recorded_events() == 0
    with prof:
        for _ in range(5):
            (x * 2).sin().sum().backward()
        during = prof.recorded_events()
    assert during > 0 and prof.recorded_events() == len(prof._finished.records)


@pytest.mark.parametrize("events, limit, warned", [(1000, 1.0, False), (10**6, 100.0, True),
                                                   (10**6, 500.0, False)])
def test_size_warning(events, limit, warned):
    text = progress.size_warning(events, limit)
    assert (text is not None) == warned
    if warned:
        assert f"{events:,} events" in text and "--schedule" in text


def test_progress_text_counts_events_and_megabytes():
    assert progress.progress_text("train.py", 12345) == \
        f"Profiling train.py: 12,345 events (~{12345 * progress.BYTES_PER_EVENT / 1e6:.1f} MB " \
        "of trace)"


def test_the_spinner_counts_events_on_a_terminal():
    class Growing:
        def __init__(self):
            self.n = 0

        def recorded_events(self):
            self.n += 1000
            return self.n
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="standard", width=120)
    with progress.live_progress(console, "train.py", Growing(), interval_s=0.01):
        time.sleep(0.2)
    assert "events (~" in out.getvalue() and "Profiling train.py" in out.getvalue()


def test_no_spinner_when_piped():
    console = Console(file=io.StringIO(), force_terminal=False)
    with progress.live_progress(console, "train.py", None):
        pass
    assert console.file.getvalue() == ""


def test_the_cli_warns_before_writing_a_large_trace(tmp_path):
    out = tmp_path / "t.json"
    result = invoke("profile", "--no-color", "--warn-trace-mb", "0.0001", "-o", out,
                    SCRIPTS / "train_step.py", "1")
    assert result.exit_code == 0, result.output
    assert "Warning: the trace will be about" in result.output and "--schedule" in result.output
    quiet = invoke("profile", "--no-color", "-o", out, SCRIPTS / "train_step.py", "1")
    assert "Warning: the trace will be" not in quiet.output
