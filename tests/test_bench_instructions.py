"""bench_instructions.py's measured program runs under every configuration it names.

The counting itself needs valgrind and minutes; what can rot unnoticed is the program each
count runs, and the check of the names given on the command line.
"""
import os
import subprocess
import sys

import pytest

from gradkit.autograd import observers

SCRIPT = os.path.join(os.path.dirname(__file__), "benchmarks", "bench_instructions.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import bench_instructions  # noqa: E402


@pytest.mark.parametrize("config", sorted(bench_instructions._contexts()))
def test_each_configuration_runs_the_chain_and_detaches(config):
    bench_instructions._run_steps(config, 1)
    assert observers.active == ()


def test_an_unknown_configuration_is_refused_by_name():
    result = subprocess.run([sys.executable, SCRIPT, "plain", "fast"], capture_output=True,
                            text=True)
    assert result.returncode == 1
    assert "unknown configuration(s) ['fast']" in result.stderr
