"""docs/examples: each script really trains (run as a user would, in a subprocess)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def run_example(name: str, *args: str, timeout: int = 120) -> str:
    """Run docs/examples/<name> with ``args``; return its stdout (fails on a non-zero exit)."""
    # one BLAS thread: on a small shared machine OpenBLAS threads spin and are ~100x slower
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True,
                          text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def numbers_after(label: str, text: str) -> list[float]:
    return [float(m) for m in re.findall(rf"{label}\s+([-+0-9.e]+)", text)]


@pytest.mark.parametrize("script,epochs", [("mlp_digits.py", "4"), ("cnn_digits.py", "3")])
def test_digits_classifiers_learn(script, epochs):
    out = run_example(script, "--epochs", epochs)
    losses = numbers_after("train loss", out)
    accuracies = numbers_after("test accuracy", out)
    assert len(accuracies) == int(epochs)
    assert losses[-1] < 0.5 * losses[0]
    assert accuracies[-1] > 0.9  # chance is 0.1


def test_char_transformer_learns():
    out = run_example("char_transformer.py", "--steps", "150", "--sample", "40")
    losses = numbers_after("loss", out)
    assert losses[0] > 2.0 and losses[-1] < 2.0  # from ln(46) ≈ 3.8 at the start
    generated = out.split("step  150")[1].split("\n", 1)[1]
    assert len(generated.strip()) >= 40  # the prompt and the sampled characters


def test_newton_converges_quadratically():
    out = run_example("newton_chain.py")
    norms = numbers_after(r"\|grad E\| =", out)
    assert norms[-1] < 1e-8
    assert len(norms) <= 12
    # the last steps square the error, the mark of Newton's method
    assert norms[-1] < norms[-2] ** 1.5


def test_examples_are_documented_scripts():
    for script in ("mlp_digits.py", "cnn_digits.py", "char_transformer.py", "newton_chain.py"):
        source = (EXAMPLES / script).read_text(encoding="utf-8")
        assert 'if __name__ == "__main__":' in source, script
        assert source.startswith('"""'), f"{script} needs a docstring saying what it shows"


def test_readme_command_profiles_the_flagship(tmp_path):
    trace = tmp_path / "mlp.json"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "gradkit", "profile", "-o", str(trace),
         str(EXAMPLES / "mlp_digits.py"), "--epochs", "1"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "test accuracy" in proc.stdout
    names = {e.get("name") for e in json.loads(trace.read_text())["traceEvents"]}
    assert {"forward", "backward", "Optimizer.step#Adam.step", "gradkit::addmm"} <= names
