"""Hostile output paths: a trace or a report never replaces what the user named with
something else, nor leaves half a file there.

Each row names a path kind, what writing a trace there must do, and that nothing outside
the named path (and its symlink target) changes, and no temporary file is left.
`gradkit trace report -o PATH` writes through the same OutputFile:

| PATH                                  | outcome                                           |
|---------------------------------------|---------------------------------------------------|
| /dev/null                             | written through, stays a device, exit 0           |
| /dev/full                             | exit 1, "No space left on device", stays a device |
| a FIFO with a reader / without one    | the reader gets the report / exit 1, one line     |
| a symlink, a dangling symlink         | its target gets the report, the link stays        |
| a directory                           | usage error (exit 2) naming it                    |
| a file, the disk full during the write | exit 1, the old file intact, no temporary file   |
| a file, SIGINT/SIGTERM during the write | the report whole, then exit 130/143             |
| a file, the same signal twice          | "Interrupted again: no report written.", the old  |
|                                       | file intact, no temporary file, exit 130/143      |
"""
import builtins
import errno
import json
import os
import signal
import stat
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradkit
from gradkit.cli.main import main
from gradkit.profiler import profile
from gradkit.profiler import output_file
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



# -- `gradkit trace report -o PATH` ------------------------------------------------------------
OLD_REPORT = "the user's own file"


def _report(tmp_path, output):
    trace = tmp_path / "t.json"
    if not trace.exists():
        _profiled().export_chrome_trace(str(trace))
    return CliRunner().invoke(main, ["trace", "report", "--no-color", str(trace), "-o",
                                     str(output)])


def _is_whole_report(text: str) -> bool:
    return text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_a_report_into_a_device_is_written_through(tmp_path, device):
    if not os.path.exists(device):
        pytest.skip(f"needs {device}")
    result = _report(tmp_path, device)
    if device == "/dev/full":
        assert result.exit_code == 1 and result.output.strip() == (
            "Error: cannot write report to /dev/full: No space left on device")
    else:
        assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat(device).st_mode) and not _leftovers(tmp_path)


def test_a_report_into_a_fifo_reaches_its_reader_or_is_one_error_line(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = _report(tmp_path, fifo)
    assert result.exit_code == 1 and result.output.strip() == (
        f"Error: cannot write report to {fifo}: no process is reading the FIFO {fifo}")
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    try:
        for _ in range(200):  # wait until the reader has opened its end
            if _report(tmp_path, fifo).exit_code == 0:
                break
            threading.Event().wait(0.01)
    finally:
        reader.join(timeout=10)
    assert _is_whole_report(received[0])
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not _leftovers(tmp_path)


@pytest.mark.parametrize("existing", [True, False])
def test_a_report_through_a_symlink_goes_to_its_target(tmp_path, existing):
    target, link = tmp_path / "real.html", tmp_path / "link.html"
    if existing:
        target.write_text(OLD_REPORT)
    link.symlink_to(target)
    result = _report(tmp_path, link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert _is_whole_report(target.read_text()) and not _leftovers(tmp_path)


def test_a_report_into_a_directory_is_refused(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    result = _report(tmp_path, folder)
    assert result.exit_code == 2 and "is a directory" in result.output
    assert folder.is_dir() and not list(folder.iterdir())


def test_a_full_disk_during_the_report_keeps_the_old_file(tmp_path, monkeypatch):
    out = tmp_path / "r.html"
    out.write_text(OLD_REPORT)

    def full_disk(*args, **kwargs):
        f = builtins.open(*args, **kwargs)

        def write(text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        f.write = write
        return f
    monkeypatch.setattr(output_file, "open", full_disk, raising=False)
    result = _report(tmp_path, out)
    assert result.exit_code == 1 and result.output.strip() == (
        f"Error: cannot write report to {out}: No space left on device")
    assert out.read_text() == OLD_REPORT and not _leftovers(tmp_path)


@pytest.mark.parametrize("times", [1, 2])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_report_write_leaves_it_whole_or_absent(tmp_path, monkeypatch,
                                                                   signum, times):
    out = tmp_path / "r.html"
    out.write_text(OLD_REPORT)
    _profiled().export_chrome_trace(str(tmp_path / "t.json"))  # the trace is read, not written
    commit, sent = output_file.OutputFile.commit, []

    def signalled(self):  # the text is in the temporary file, not yet in place
        while len(sent) < times:
            sent.append(signum)
            os.kill(os.getpid(), signum)
        return commit(self)
    monkeypatch.setattr(output_file.OutputFile, "commit", signalled)
    result = _report(tmp_path, out)
    assert result.exit_code == 128 + signum, result.output
    assert "Traceback" not in result.output and not _leftovers(tmp_path)
    if times == 1:
        assert _is_whole_report(out.read_text()) and "Report written to" in result.output
    else:
        assert out.read_text() == OLD_REPORT
        assert result.output.strip() == "Interrupted again: no report written."


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
