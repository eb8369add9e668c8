"""`gradkit run --detect-anomaly / --check-forward` and `profile --detect-anomaly`: NaN hunts."""
import json
from pathlib import Path

from click.testing import CliRunner

from gradkit.cli.main import main

SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="gradkit")


def report_of(stderr: str) -> str:
    """The rendered anomaly report (the panel after the traceback)."""
    return stderr[stderr.index("gradkit anomaly report"):]


def stats_row(report: str, label: str) -> list[str]:
    """min, max, nan, inf of the value labelled ``label`` in the report's statistics table."""
    for line in report.splitlines():
        cells = line.strip("│ \n").split()
        if " ".join(cells[:2]) == label:
            return cells[-4:]
    raise AssertionError(f"no row {label!r} in:\n{report}")


def test_backward_nan_names_the_node_and_marks_the_forward_line():
    result = invoke("run", "--detect-anomaly", SCRIPTS / "nan_backward.py")
    assert result.exit_code == 1
    message = "Function 'MulBackward0' returned nan values in its 0th output."
    assert f"RuntimeError: {message}\n" in result.stderr  # the script's traceback, as Python's
    report = report_of(result.stderr)
    assert message in report
    assert "Op: gradkit::mul / MulBackward0" in report
    assert f"Source: {SCRIPTS / 'nan_backward.py'}:5 in <module>" in report
    assert "❱ 5 y = (x * x).sqrt()" in report
    assert "Path from the loss: SumBackward0 -> SqrtBackward0 -> MulBackward0" in report
    assert stats_row(report, "grad_input 0")[2:] == ["1", "0"]  # one NaN in the gradient
    assert stats_row(report, "grad_output 0")[2:] == ["0", "1"]  # from an inf coming in
    assert "grad" not in result.stdout  # the script stopped at backward


def test_report_is_rendered_once_and_without_the_runners_frames():
    result = invoke("run", "--detect-anomaly", SCRIPTS / "nan_backward.py")
    assert result.stderr.count("Path from the loss") == 1  # not repeated as a plain note
    report = report_of(result.stderr)
    files = [line.split('"')[1] for line in report.splitlines() if 'File "' in line]
    assert files == [str(SCRIPTS / "nan_backward.py")]  # no click, runpy or gradkit frames


def test_without_anomaly_mode_the_nan_goes_unnoticed():
    result = invoke("run", SCRIPTS / "nan_backward.py")
    assert result.exit_code == 0
    assert "grad tensor([nan,1.])" in result.stdout.replace(" ", "").replace("grad", "grad ")
    assert "anomaly report" not in result.output


def test_check_forward_stops_at_the_op_that_creates_nan():
    result = invoke("run", "--check-forward", SCRIPTS / "nan_forward.py")
    assert result.exit_code == 1
    report = report_of(result.stderr)
    assert "Op 'gradkit::log' returned nan values in its 0th output in the forward pass." in report
    assert "❱ 5 y = x.log()" in report
    assert stats_row(report, "input 0") == ["-1", "2", "0", "0"]  # x = [-1, 2]
    assert stats_row(report, "output 0")[2:] == ["1", "0"]  # log(-1) is one NaN


def test_detect_anomaly_alone_does_not_check_forward():
    result = invoke("run", "--detect-anomaly", SCRIPTS / "nan_forward.py")
    assert result.exit_code == 0, result.output
    assert "grad tensor([-2.,1.])" in result.stdout.replace(" ", "").replace("grad", "grad ")


def test_plain_output_has_no_escape_codes():
    result = invoke("run", "--no-color", "--detect-anomaly", SCRIPTS / "nan_backward.py")
    assert "\x1b[" not in result.stderr and "❱ 5" in result.stderr


def test_anomaly_mode_does_not_change_a_healthy_script():
    result = invoke("run", "--detect-anomaly", "--check-forward", SCRIPTS / "echo_argv.py", "a")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["argv"] == ["a"]


def test_profile_with_detect_anomaly_reports_and_keeps_the_trace(tmp_path):
    out = tmp_path / "nan.json"
    result = invoke("profile", "--detect-anomaly", "-o", out, SCRIPTS / "nan_backward.py")
    assert result.exit_code == 1
    assert "MulBackward0" in report_of(result.stderr)
    names = {e["name"] for e in json.loads(out.read_text())["traceEvents"]}
    assert {"gradkit::mul", "gradkit::sqrt", "SqrtBackward0"} <= names


def test_a_scripts_own_anomaly_attribute_is_not_mistaken_for_a_report(tmp_path):
    script = tmp_path / "own.py"
    script.write_text("e = ValueError('mine')\ne.anomaly = 'not a report'\nraise e\n")
    result = invoke("run", "--detect-anomaly", script)
    assert result.exit_code == 1
    assert result.stderr.endswith("ValueError: mine\n")
