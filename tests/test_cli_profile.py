"""`gradkit profile`: a real script under the profiler, its trace, table and exit code."""
import gzip
import json
import re
import signal
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradkit.cli.main import main

SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"
sys.path.insert(0, str(Path(__file__).parent))
from test_cli_run import gradkit_cli  # noqa: E402  (one helper for real CLI runs)


def invoke(*args, **kwargs):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="gradkit", **kwargs)


def trace_events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def op_names(events: list[dict]) -> set[str]:
    return {e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"}


def table_rows(output: str) -> list[list[str]]:
    """Column names, then the rows, of the printed key_averages table, as lists of cells."""
    lines = output.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("---")]
    cells = lambda line: re.split(r"\s{2,}", line.strip())
    return [cells(lines[rules[0] + 1])] + [cells(line) for line in lines[rules[1] + 1:rules[2]]]


def test_profile_writes_trace_and_prints_table(tmp_path):
    out = tmp_path / "step.json"
    proc = gradkit_cli("profile", "-o", out, SCRIPTS / "train_step.py", "3")
    assert proc.returncode == 0, proc.stderr
    assert "trained 3 steps" in proc.stdout
    names = op_names(trace_events(out))
    assert {"gradkit::matmul", "gradkit::relu", "gradkit::sum"} <= names
    assert any(name.endswith("Backward0") for name in names)
    for column in ("Name", "Self CPU %", "CPU total", "# of Calls", "gradkit::matmul"):
        assert column in proc.stdout
    assert f"Trace written to {out}" in proc.stdout
    assert "ui.perfetto.dev" in proc.stdout and "chrome://tracing" in proc.stdout
    assert "\x1b[" not in proc.stdout  # piped output is plain text


def test_profile_gzip_output(tmp_path):
    out = tmp_path / "step.json.gz"
    proc = gradkit_cli("profile", "-o", out, SCRIPTS / "train_step.py", "1")
    assert proc.returncode == 0, proc.stderr
    with open(out, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    assert "gradkit::matmul" in op_names(trace_events(out))


def test_default_trace_path_creates_the_folder(tmp_path):
    proc = gradkit_cli("profile", SCRIPTS / "train_step.py", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [trace] = (tmp_path / "traces").iterdir()
    assert trace.name.startswith("train_step-") and trace.suffix == ".json"
    assert len(trace.stem.removeprefix("train_step-")) == len("YYYYmmdd-HHMMSS")
    assert op_names(trace_events(trace))


def test_failing_script_leaves_a_trace_and_its_exit_code(tmp_path):
    out = tmp_path / "fail.json"
    proc = gradkit_cli("profile", "-o", out, SCRIPTS / "raises.py")
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback (most recent call last):\n")
    assert "ValueError: batch of 512 is too large" in proc.stderr
    assert "cli" not in proc.stderr.split("ValueError")[0]
    assert "gradkit::mul" in op_names(trace_events(out))  # what ran before the error


def test_sys_exit_code_passes_through(tmp_path):
    proc = gradkit_cli("profile", "-o", tmp_path / "t.json", SCRIPTS / "exit_with.py", "7")
    assert proc.returncode == 7
    assert (tmp_path / "t.json").exists()


def test_ctrl_c_still_writes_the_trace(tmp_path):
    out = tmp_path / "interrupted.json"
    proc = gradkit_cli("profile", "-o", out, SCRIPTS / "interrupt.py")
    assert proc.returncode == 128 + signal.SIGINT
    assert "Interrupted" in proc.stdout
    assert "gradkit::mul" in op_names(trace_events(out))


def test_options_reach_the_profiler(tmp_path):
    out = tmp_path / "shapes.json"
    result = invoke("profile", "--group-by-input-shape", "--sort-by", "count", "--row-limit",
                    "2", "-o", out, SCRIPTS / "train_step.py", "1")
    assert result.exit_code == 0, result.output
    assert "Input Shapes" in result.output
    assert "[[16, 8], [8, 4]]" in result.output
    header, *rows = table_rows(result.output)
    assert len(rows) == 2
    calls = header.index("# of Calls")
    counts = [int(row[calls]) for row in rows]
    assert counts == sorted(counts, reverse=True)


@pytest.mark.parametrize("value, message", [
    ("1,2", "expected wait,warmup,active[,repeat] as integers, got '1,2'"),
    ("a,b,c", "expected wait,warmup,active[,repeat] as integers"),
    ("1,2,3,4,5", "expected wait,warmup,active[,repeat] as integers"),
    ("1,-1,2", "Invalid profiler schedule arguments. Got wait=1 (need >= 0), warmup=-1"),
    ("0,0,0", "active=0 (need > 0)"),
])
def test_bad_schedule_is_a_usage_error(value, message):
    result = invoke("profile", "--schedule", value, SCRIPTS / "exit_with.py", "0")
    assert result.exit_code == 2
    assert message in result.output


def test_schedule_records_the_active_steps_of_one_cycle(tmp_path):
    out = tmp_path / "steps.json"
    result = invoke("profile", "--schedule", "1,1,2", "-o", out, SCRIPTS / "stepped.py", "6")
    assert result.exit_code == 0, result.output
    steps = {e["name"] for e in trace_events(out) if e["name"].startswith("ProfilerStep#")}
    assert steps == {"ProfilerStep#2", "ProfilerStep#3"}  # wait 0, warm up 1, record 2 and 3


def test_schedule_that_never_records_is_one_error_line(tmp_path):
    out = tmp_path / "none.json"
    result = invoke("profile", "--schedule", "9,1,1", "-o", out, SCRIPTS / "stepped.py", "2")
    assert result.exit_code == 1
    assert result.output.startswith("Error: no trace written: ")
    assert "nothing was recorded" in result.output and not out.exists()


def test_script_that_ends_in_warmup_is_one_error_line(tmp_path):
    # the profile follows torch (ending in warmup keeps an empty recording): the CLI says so
    out = tmp_path / "warm.json"
    result = invoke("profile", "--schedule", "0,1,1,0", "-o", out, SCRIPTS / "stepped.py", "4")
    assert result.exit_code == 1
    assert result.output.startswith("Error: no trace written: the script ended in a warmup "
                                    "step (step 4)")
    assert not out.exists()


def test_unknown_sort_column_is_a_usage_error():
    result = invoke("profile", "--sort-by", "speed", SCRIPTS / "exit_with.py", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--sort-by': 'speed' is not one of" in result.output


def test_memory_flops_and_stack_options(tmp_path):
    out = tmp_path / "all.json"
    result = invoke("profile", "--profile-memory", "--with-flops", "--with-stack", "-o", out,
                    SCRIPTS / "train_step.py", "1")
    assert result.exit_code == 0, result.output
    header = table_rows(result.output)[0]
    assert "CPU Mem" in header and "Total KFLOPs" in header
    matmul = next(e for e in trace_events(out) if e["name"] == "gradkit::matmul")
    assert matmul["args"]["flops"] == 2 * 16 * 8 * 4
    assert "train_step.py(10)" in matmul["args"]["Call stack"]
    assert any(e["name"] == "[memory]" for e in trace_events(out))


def test_unwritable_output_fails_before_the_script_runs(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    result = invoke("profile", "-o", blocker / "t.json", SCRIPTS / "echo_argv.py")
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot create trace folder ")
    assert len(result.output.splitlines()) == 1 and "__main__" not in result.output


def test_output_that_is_a_directory_is_an_error(tmp_path):
    result = invoke("profile", "-o", tmp_path, SCRIPTS / "echo_argv.py")
    assert result.exit_code != 0
    assert "Error:" in result.output and "directory" in result.output


def test_relative_output_is_relative_to_where_gradkit_started(tmp_path):
    (tmp_path / "start").mkdir()
    (tmp_path / "elsewhere").mkdir()
    proc = gradkit_cli("profile", "-o", "out/t.json", SCRIPTS / "chdir_away.py",
                       tmp_path / "elsewhere", cwd=tmp_path / "start")
    assert proc.returncode == 0, proc.stderr
    assert "gradkit::mul" in op_names(trace_events(tmp_path / "start" / "out" / "t.json"))
    assert not (tmp_path / "elsewhere" / "out").exists()


def test_names_with_control_characters_reach_the_terminal_escaped(tmp_path):
    """Newlines, NUL, ANSI escapes and bidi overrides in a range name are printed as escapes:
    one table row, nothing that moves the cursor or colours the terminal."""
    script = tmp_path / "weird.py"
    script.write_text("import gradkit\nfrom gradkit.profiler import record_function\n"
                      "with record_function('two\\nlines\\x00\\x1b[31mred\\u202e'):\n"
                      "    gradkit.ones(2) * 2\n")
    out = tmp_path / "t.json"
    result = invoke("profile", "--no-color", "-o", out, script)
    assert result.exit_code == 0, result.output
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e]", result.output)
    assert "two\\nlines\\x00\\x1b[31mred\\u202e" in result.output
    rows = table_rows(result.output)
    assert any(row[0].startswith("two\\nlines") for row in rows[1:])


def test_trace_summary_escapes_names_and_reads_no_markup(tmp_path):
    trace = tmp_path / "t.json"
    names = ["[bold]marked[/bold]\x1b[2J", "node\nBackward0"]
    events = [{"ph": "X", "cat": "cpu_op", "name": n, "pid": 1, "tid": 1, "ts": 10.0 * i,
               "dur": 5.0} for i, n in enumerate(names)]
    trace.write_text(json.dumps({"traceEvents": events}))
    result = invoke("trace", "summary", "--no-color", trace)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "[bold]marked[/bold]\\x1b[2J" in result.output
    assert "node\\nBackward0" in result.output
