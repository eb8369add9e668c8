"""`gradkit profile -m`, `__file__` as python sets it, --group-by-stack-n, and the BLAS advice."""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gradkit.cli import advice

sys.path.insert(0, str(Path(__file__).parent))
from test_cli_profile import invoke, table_rows  # noqa: E402

_PROBE = ("import json, os, sys\nimport gradkit\n"
          "(gradkit.ones(2, requires_grad=True) * 2).sum().backward()\n"
          "print(json.dumps({'name': __name__, 'argv': sys.argv[1:], 'file': __file__, "
          "'path0': sys.path[0]}))\n")


REPO = Path(__file__).resolve().parents[1]


def _cli(*args, cwd):
    """The CLI of this checkout, run from another folder."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "gradkit", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _python(*args, cwd):
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_dash_m_runs_a_module_as_python_dash_m_does(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(_PROBE)
    ours = _cli("profile", "--no-color", "-m", "pkg.probe", "a b", "--flag", cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr
    theirs = _python("-m", "pkg.probe", "a b", "--flag", cwd=tmp_path)
    assert json.loads(ours.stdout.splitlines()[0]) == json.loads(theirs.stdout)
    traces = list((tmp_path / "traces").glob("probe-*.json"))
    assert len(traces) == 1 and "Trace written to traces/probe-" in ours.stdout


def test_dash_m_of_a_missing_module_is_one_error_line(tmp_path):
    proc = _cli("profile", "-m", "no_such_module_here", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "Error: No module named 'no_such_module_here'\n")
    proc = _cli("run", "-m", "no_such.child", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "Error: No module named 'no_such.child'\n")


def test_a_script_sees_the_file_and_argv_python_gives_it(tmp_path):
    (tmp_path / "probe.py").write_text(_PROBE)
    ours = _cli("run", "probe.py", "x", cwd=tmp_path)
    theirs = _python("probe.py", "x", cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)
    assert Path(json.loads(ours.stdout)["file"]).is_absolute()


def test_group_by_stack_n_gives_one_row_per_op_and_source_line(tmp_path):
    script = tmp_path / "two_lines.py"
    script.write_text("import gradkit\nx = gradkit.ones(3)\n"
                      "a = x * 2\n"
                      "b = x * 3\n")
    result = invoke("profile", "--no-color", "--group-by-stack-n", "1", "-o",
                    tmp_path / "t.json", script)
    assert result.exit_code == 0, result.output
    rows = table_rows(result.output)
    assert "Source Location" in rows[0]
    sites = sorted(row[-1] for row in rows[1:] if row[0] == "gradkit::mul")
    assert [site.rsplit("(", 1)[-1] for site in sites] == ["3): <module>", "4): <module>"]


def test_group_by_stack_n_rejects_a_negative_depth(tmp_path):
    result = invoke("profile", "--group-by-stack-n", "-1", tmp_path / "x.py")
    assert result.exit_code == 2 and "-1 is not in the range x>=0" in result.output


@pytest.mark.parametrize("share, threads, cores, load, warned", [
    (0.47, 2, 2, 0.5, True),     # the measured case: addmm at 47% of self time, 2 threads
    (0.47, 1, 2, 0.5, False),    # one thread: nothing to fix
    (0.05, 2, 2, 0.5, False),    # matrix products are not where the time goes
    (0.47, 16, 16, 1.0, False),  # a big idle machine
    (0.47, 16, 16, 20.0, True),  # a big busy one
])
def test_blas_thread_advice(share, threads, cores, load, warned):
    text = advice.blas_thread_advice(share, threads, cores, load)
    assert (text is not None) == warned
    if warned:
        assert f"{threads} threads on {cores} cores" in text and "OPENBLAS_NUM_THREADS=1" in text


def test_blas_threads_follow_the_environment(monkeypatch):
    monkeypatch.setattr(advice, "threadpool_info", None)  # as where it is not installed
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert advice.blas_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setattr(advice.os, "cpu_count", lambda: 6)
    assert advice.blas_threads() == 6


def test_matrix_product_share_counts_products_and_their_backward_nodes():
    rows = [SimpleNamespace(key=k, self_cpu_time_total=t) for k, t in [
        ("gradkit::addmm", 30.0), ("AddmmBackward0", 20.0), ("gradkit::relu", 40.0),
        ("MmBackward0", 10.0)]]
    assert advice.matrix_product_share(rows) == pytest.approx(0.6)
    assert advice.matrix_product_share([]) == 0.0
