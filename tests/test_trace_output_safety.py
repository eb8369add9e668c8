"""Hostile output paths: a trace never replaces what the user named with something else.

Each row names a path kind, what writing a trace there must do, and that nothing outside
the named path (and its symlink target) changes, and no temporary file is left.
"""
import json
import os
import stat
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradkit
from gradkit.cli.main import main
from gradkit.profiler import profile
from gradkit.profiler.chrome_trace import ChromeTraceWriter

SCRIPT = Path(__file__).parent / "fixtures" / "scripts" / "train_step.py"


def _profiled():
    with profile() as prof:
        (gradkit.ones(3, requires_grad=True) * 2).sum().backward()
    return prof


def _leftovers(folder: Path) -> list:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    _profiled().export_chrome_trace(str(link))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["traceEvents"]
    assert not _leftovers(tmp_path)


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "new.json")
    _profiled().export_chrome_trace(str(link))
    assert link.is_symlink() and json.loads((tmp_path / "new.json").read_text())


def test_dev_null_is_written_through_and_stays_a_device():
    _profiled().export_chrome_trace("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_dev_full_fails_with_the_reason_and_stays_a_device():
    with pytest.raises(OSError, match="No space left on device"):
        _profiled().export_chrome_trace("/dev/full")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_fifo_with_a_reader_receives_the_trace(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    try:
        for _ in range(200):  # wait until the reader has opened its end
            try:
                _profiled().export_chrome_trace(str(fifo))
                break
            except OSError:
                threading.Event().wait(0.01)
    finally:
        reader.join(timeout=10)
    assert json.loads(received[0])["traceEvents"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not _leftovers(tmp_path)


def test_a_fifo_nobody_reads_is_an_error_not_a_hang(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="no process is reading the FIFO"):
        _profiled().export_chrome_trace(str(fifo))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not _leftovers(tmp_path)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(OSError, match="is a directory; give a file name"):
        _profiled().export_chrome_trace(str(tmp_path))


def test_a_target_that_became_a_directory_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "t.json"
    writer = ChromeTraceWriter(str(path), base_time_ns=0)
    path.mkdir()
    with pytest.raises(OSError):
        writer.close()
    assert not _leftovers(tmp_path)


def test_a_failing_final_flush_leaves_no_temporary_file(tmp_path, monkeypatch):
    writer = ChromeTraceWriter(str(tmp_path / "t.json"), base_time_ns=0)

    def disk_full(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(writer._file, "write", disk_full)
    with pytest.raises(OSError, match="No space left"):
        writer.close()
    assert not _leftovers(tmp_path) and not (tmp_path / "t.json").exists()


def test_a_name_of_255_characters_is_written(tmp_path):
    path = tmp_path / ("t" * 250 + ".json")
    _profiled().export_chrome_trace(str(path))
    assert json.loads(path.read_text()) and not _leftovers(tmp_path)


@pytest.mark.parametrize("output, code, message", [
    ("/dev/full", 1, "No space left on device"),
    ("{tmp}/" + "n" * 300 + ".json", 1, "File name too long"),
    ("{tmp}", 2, "is a directory"),  # click's usage error, before the script runs
])
def test_the_cli_says_why_in_one_line(tmp_path, output, code, message):
    output = output.format(tmp=tmp_path)
    result = CliRunner().invoke(main, ["profile", "--no-color", "-o", output, str(SCRIPT), "1"])
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not _leftovers(tmp_path)


def test_the_cli_writes_through_dev_null():
    result = CliRunner().invoke(main, ["profile", "--no-color", "-o", "/dev/null", str(SCRIPT),
                                       "1"])
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
