"""Hostile inputs to `gradkit trace summary` / load_trace (signals: to diff and report too):
each is one clear line or a summary with notes, in bounded memory, never a traceback or a hang.

| input                                   | outcome                                        |
|-----------------------------------------|------------------------------------------------|
| /dev/zero, a FIFO with no writer        | refused: not a regular file                     |
| a gzip bomb                             | refused once it inflates past its cap          |
| JSON nested 3,000 deep in args          | read (the parser is iterative)                 |
| args.flops as a string                  | one error line naming the event                |
| an event list without its closing ]     | summarized, with a note                        |
| negative durations, partial overlaps    | summarized, with a note for each kind          |
| python_function (Python tracer) events  | left out of the tables, with a note            |
| an empty event list                     | one error line: nothing to summarize           |
| a symlink to a trace / to a device      | followed: summarized / refused as the device   |
| a dangling symlink, a directory         | one error line                                 |
| 20,000 events each inside the previous  | summarized (nesting is a loop, not recursion)  |
| a field of the wrong type (ts, dur, pid, | one error line naming the event and the field  |
|   args, sequence number, call site,     |                                                |
|   memory bytes, flops)                  |                                                |
| a 20 MB trace (1 GB: the benchmark)     | summarized in under a quarter of its size      |
|                                         | (test_trace_summary_scale.py)                  |
| SIGINT while reading, aggregating or    | "Interrupted: ..." (one line), exit 130 as     |
|   printing; SIGTERM at the same points  | `gradkit profile`, no traceback; SIGTERM:      |
|   (summary, diff and report alike)      | killed by the signal; nothing written (report: |
|                                         | its file once whole, before the last line)     |
"""
import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import tracemalloc

import pytest
from click.testing import CliRunner

import gradkit.profiler.load as load_module
from gradkit.cli.main import main
from gradkit.profiler import load_trace


def summary(path):
    return CliRunner().invoke(main, ["trace", "summary", "--no-color", str(path)])


def _x(name, ts, dur, **extra):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            **extra}


def _one_error_line(result, message):
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and len(result.output.splitlines()) == 1
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_refused_at_once():
    _one_error_line(summary("/dev/zero"), "is not a regular file")


def test_a_fifo_without_a_writer_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = []
    worker = threading.Thread(target=lambda: done.append(summary(fifo)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert done, "trace summary blocked on a FIFO"
    _one_error_line(done[0], "is not a regular file")


def test_a_gzip_bomb_is_refused_in_bounded_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(load_module, "_GZIP_FREE_BYTES", 1 << 20)  # the cap, scaled down
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb") as f:  # valid JSON so far: only the size gives it away
        f.write(b"[" + b" " * (64 << 20))
    assert bomb.stat().st_size < (1 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="refused as a gzip bomb"):
            load_trace(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20
    _one_error_line(summary(bomb), "refused as a gzip bomb")


def test_deep_nesting_is_read_without_recursion(tmp_path):
    deep = {"v": 1}
    for _ in range(3000):
        deep = {"v": deep}
    path = tmp_path / "deep.json"
    # json.dumps itself recurses: write the nesting by hand
    path.write_text('{"traceEvents": [' + json.dumps(_x("a", 0, 5))[:-1] + ', "args": '
                    + '{"v": ' * 3000 + "1" + "}" * 3000 + "}]}")
    assert [e.name for e in load_trace(path).events()] == ["a"]


def test_a_flops_field_of_the_wrong_type_is_one_error_line(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [_x("mm", 0, 5, args={"flops": "many"})]}))
    _one_error_line(summary(path), "event #0 ('mm'): 'args.flops' must be a number, got a string")


def test_a_list_without_its_closing_bracket_is_summarized_with_a_note(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("[" + json.dumps(_x("a", 0, 5)) + ",\n" + json.dumps(_x("b", 10, 5)) + ",\n")
    trace = load_trace(path)
    assert [e.name for e in trace.events()] == ["a", "b"]
    assert any("without its closing ']'" in note for note in trace.notes)
    result = summary(path)
    assert result.exit_code == 0 and "Note: the event list ends without" in result.output


def test_an_unclosed_object_is_an_error(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + json.dumps(_x("a", 0, 5)))
    _one_error_line(summary(path), "is not a readable Chrome trace (JSON)")


def test_malformed_events_are_reported_not_silently_mended(tmp_path):
    path = tmp_path / "t.json"
    events = [_x("parent", 0, 10), _x("overlapping", 5, 10), _x("backwards", 30, -4),
              {**_x("f", 40, 2), "cat": "python_function"}, 7]
    path.write_text(json.dumps({"traceEvents": events}))
    result = summary(path)
    assert result.exit_code == 0, result.output
    for note in ("1 events have a negative duration: counted as 0",
                 "1 events overlap the event they start in: cut at its end",
                 "1 python_function events are not host ops: left out of the tables",
                 "1 entries of the event list are not objects: ignored"):
        assert f"Note: {note}" in result.output


def test_a_trace_of_only_python_function_events_says_what_it_holds(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{**_x("f", 0, 2), "cat": "python_function"}]))
    _one_error_line(summary(path), "no host op events in")
    assert "1 python_function events are not host ops" in summary(path).output


def test_events_are_streamed_not_parsed_as_one_document(tmp_path, monkeypatch):
    """The whole-document parser is never used: a trace's text is never held whole."""
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [_x("a", 0, 5)]}))

    def whole_document(*args, **kwargs):
        raise AssertionError("json.load on a trace")
    monkeypatch.setattr(json, "load", whole_document)
    monkeypatch.setattr(json, "loads", whole_document)
    assert [e.name for e in load_trace(path).events()] == ["a"]


def test_symlinks_are_followed_to_what_they_name(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps([_x("a", 0, 5)]))
    (tmp_path / "to_trace.json").symlink_to(trace)
    result = summary(tmp_path / "to_trace.json")
    assert result.exit_code == 0 and "a" in result.output
    if os.path.exists("/dev/zero"):
        (tmp_path / "to_device.json").symlink_to("/dev/zero")
        _one_error_line(summary(tmp_path / "to_device.json"), "is not a regular file")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "gone.json")
    _one_error_line(summary(tmp_path / "dangling.json"), "no such trace file")
    _one_error_line(summary(tmp_path), "Is a directory")


def test_deeply_nested_events_are_summarized_without_recursion(tmp_path):
    depth = 20_000
    path = tmp_path / "t.json"
    path.write_text(json.dumps([_x(f"op{i % 3}", i, 2 * (depth - i)) for i in range(depth)]))
    result = summary(path)
    assert result.exit_code == 0, result.output
    assert "op0" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("event, message", [
    (_x("a", "soon", 5), "event #0 ('a'): could not convert string to float: 'soon'"),
    (_x("a", 0, [5]), "event #0 ('a'): float() argument must be"),
    ({**_x("a", 0, 5), "pid": True}, "'pid' must be a number or a string, got a boolean"),
    (_x("a", 0, 5, args=[1]), "'args' must be an object, got a list"),
    (_x("a", 0, 5, args={"Sequence number": "first"}), "invalid literal for int()"),
    (_x("a", 0, 5, args={"Forward call site": 12}),
     "'args.Forward call site' must be a string, got a number"),
    (_x("a", 0, 5, args={"flops": [1]}), "'args.flops' must be a number, got a list"),
    ({"ph": "i", "name": "[memory]", "ts": 1, "args": {"Bytes": "many"}},
     "event #0 ('[memory]'): invalid literal for int()"),
])
def test_a_field_of_the_wrong_type_is_one_error_line_naming_it(tmp_path, event, message):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([event]))
    _one_error_line(summary(path), message)


_INTERRUPTED = """
import os, signal, sys
from gradkit.cli import render
from gradkit.cli.main import main
from gradkit.profiler import diff, html_report, load, trace_columns
command, phase, signum = sys.argv[1], sys.argv[2], getattr(signal, sys.argv[3])
owner, name = {
    ("summary", "reading"): (trace_columns.TraceColumns, "_read_op"),
    ("summary", "aggregating"): (trace_columns.TraceColumns, "_link_by_flows"),
    ("summary", "printing"): (render, "line_table"),
    ("diff", "reading"): (load, "_function_event"),
    ("diff", "aggregating"): (diff, "_add"),
    ("diff", "printing"): (render, "changes"),
    ("report", "reading"): (load, "_function_event"),
    ("report", "aggregating"): (html_report, "_op_table"),
    ("report", "printing"): (render, "status_line"),  # the line after the report is written
}[command, phase]
original, sent = getattr(owner, name), []
def interrupted(*args, **kwargs):
    if not sent:  # once: the interruption's own line goes through status_line too
        sent.append(signum)
        os.kill(os.getpid(), signum)
    return original(*args, **kwargs)
setattr(owner, name, interrupted)
main(["trace", command, "--no-color", *sys.argv[4:]], prog_name="gradkit")
"""


@pytest.mark.parametrize("phase", ["reading", "aggregating", "printing"])
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["summary", "diff", "report"])
def test_a_signal_at_each_phase_of_a_trace_command(tmp_path, command, phase, signame):
    path, other = tmp_path / "t.json", tmp_path / "u.json"
    path.write_text(json.dumps([_x("a", 0, 5)]))
    other.write_text(json.dumps([_x("a", 0, 7)]))
    arguments = {"summary": [path], "diff": [path, other], "report": [path]}[command]
    before = sorted(os.listdir(tmp_path))
    result = subprocess.run([sys.executable, "-c", _INTERRUPTED, command, phase, signame,
                             *map(str, arguments)], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in result.stderr
    if signame == "SIGINT":
        # as `gradkit profile`: the shell's code for SIGINT and one line, not click's Abort
        assert (result.returncode, result.stderr.strip()) == (
            130, f"Interrupted: trace {command} stopped.")
    else:
        assert result.returncode == -signal.SIGTERM
    written = sorted(set(os.listdir(tmp_path)) - set(before))
    if command == "report" and phase == "printing":  # stopped after writing the report
        assert written == ["t.html"]
        assert (tmp_path / "t.html").read_text().rstrip().endswith("</html>")
    else:
        assert written == []
