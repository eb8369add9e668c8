"""NumPy's floating-point RuntimeWarnings never leak out of gradkit's ops (torch returns
nan/inf silently), even where a warnings context dropped the filter gradkit added at import,
while the user's own NumPy code keeps its warnings (gradkit/quiet_numpy.py)."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gradkit


def _nan_program(lib):
    x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = lib.log(x) + x / lib.tensor([0.0, 0.0, 1.0]) + lib.exp(x * 1e3)
    b = lib.tensor([-1.0, 0.0, 1.0], dtype=lib.float64, requires_grad=True)
    (0 ** b).sum().backward()
    return y, b.grad


@pytest.mark.parametrize("action", ["error", "always"])
def test_ops_stay_silent_under_a_users_filter(action):
    libs = [gradkit]
    torch = sys.modules.get("torch")
    if torch is not None:
        libs.append(torch)
    for lib in libs:  # torch (when present) is silent on the same program
        with warnings.catch_warnings(record=True) as log:
            warnings.simplefilter(action)
            values, grad = _nan_program(lib)
        assert [str(w.message) for w in log] == []
        assert grad.tolist() == [-np.inf, 0.0, 0.0]
        assert np.isnan(values[0].item())


def test_the_users_numpy_still_warns():
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        gradkit.zeros(2)  # re-adds gradkit's filter: it matches gradkit's modules only
        np.log(np.array([-1.0]))
    assert [w.category for w in log] == [RuntimeWarning]


def test_import_inside_a_warnings_context_keeps_ops_silent():
    """catch_warnings restores the filter list of its entry, dropping the one the import added
    (pytest collects inside such a context)."""
    code = ("import warnings\n"
            "with warnings.catch_warnings():\n"
            "    import gradkit\n"
            "warnings.simplefilter('error')\n"
            "print(gradkit.log(gradkit.tensor([-1.0])).isnan().item())\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert (result.returncode, result.stdout.strip()) == (0, "True"), result.stderr
