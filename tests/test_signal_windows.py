"""Window functions against torch: torch.*_window and torch.signal.windows (values, dtypes,
requires_grad and the graph behind it, errors)."""
import numpy as np
import pytest

import gradkit
from test_torch_numerics import assert_same_as_torch

torch = pytest.importorskip("torch")

WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window")
SIGNAL_WINDOWS = ("bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
                  "general_hamming", "hamming", "hann", "kaiser", "nuttall")


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 3, 4, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(name, length, periodic):
    for dtype in ("float32", "float64", "float16"):
        rtol = {"float16": 1e-3, "float32": 1e-6}.get(dtype, 1e-13)
        assert_same_as_torch(lambda m, dtype=dtype: getattr(m, name)(length, periodic,
                                                         dtype=getattr(m, dtype)),
                             rtol=rtol, atol=rtol)
    assert_same_as_torch(lambda m: getattr(m, name)(length), rtol=1e-6, atol=1e-6)


def test_window_parameters_match_torch():
    assert_same_as_torch(lambda m: m.hamming_window(6, False, 0.3, 0.2, dtype=m.float64),
                         rtol=1e-14)
    assert_same_as_torch(lambda m: m.hamming_window(6, True, alpha=0.6, dtype=m.float64),
                         rtol=1e-14)
    for beta in (0.0, 3.0, 20.0):
        assert_same_as_torch(lambda m, beta=beta: m.kaiser_window(9, False, beta, dtype=m.float64),
                             rtol=1e-13)
        assert_same_as_torch(lambda m, beta=beta: m.kaiser_window(9, True, beta), rtol=1e-6,
                             atol=1e-7)


@pytest.mark.parametrize("name", WINDOWS)
def test_a_window_is_a_leaf_that_may_require_grad(name):
    for m in (torch, gradkit):
        w = getattr(m, name)(5, requires_grad=True)
        assert w.requires_grad and w.is_leaf and w.grad_fn is None


@pytest.mark.parametrize("name", WINDOWS)
def test_window_errors_match_torch(name):
    for dtype in ("int64", "int32", "bool", "uint8", "complex64", "complex128"):
        assert_same_as_torch(lambda m, dtype=dtype: getattr(m, name)(4, dtype=getattr(m, dtype)))
    assert_same_as_torch(lambda m: getattr(m, name)(-2))
    assert_same_as_torch(lambda m: getattr(m, name)(2.5))


@pytest.mark.parametrize("name", SIGNAL_WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 3, 4, 7])
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows_match_torch(name, length, sym):
    extra = {"general_cosine": {"a": [0.5, 0.3, 0.2]}}.get(name, {})
    for dtype, rtol in (("float32", 1e-6), ("float64", 1e-13)):
        assert_same_as_torch(lambda m, dtype=dtype: getattr(m.signal.windows, name)(
            length, sym=sym, dtype=getattr(m, dtype), **extra), rtol=rtol, atol=rtol)


def test_signal_window_parameters_match_torch():
    def windows(m):
        w = m.signal.windows
        return (w.exponential(7, tau=2.5), w.exponential(6, center=1.5, sym=False),
                w.gaussian(7, std=0.7), w.kaiser(8, beta=4.0), w.kaiser(8, beta=0.0),
                w.general_hamming(6, alpha=0.7), w.general_cosine(5, a=(1.0,)))
    assert_same_as_torch(windows, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", SIGNAL_WINDOWS)
def test_signal_windows_with_requires_grad_are_computed_from_a_leaf(name):
    """As torch's: the window is a function of requires-grad sample points (and coefficients),
    so it has a node of torch's name and backward reaches those leaves."""
    extra = {"general_cosine": {"a": [0.5, 0.3, 0.2]}}.get(name, {})
    ours = getattr(gradkit.signal.windows, name)(5, requires_grad=True, **extra)
    theirs = getattr(torch.signal.windows, name)(5, requires_grad=True, **extra)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert not ours.is_leaf

    def names(node):
        return sorted(n.name().removeprefix("torch::autograd::")
                      for n, _ in node.next_functions if n is not None)
    assert names(ours.grad_fn) == names(theirs.grad_fn)


def _signal_error(m, call):
    try:
        call(m.signal.windows, m)
    except (ValueError, TypeError) as error:
        return type(error).__name__, str(error).replace("torch.", "").replace("gradkit.", "")
    return None


@pytest.mark.parametrize("call", [
    lambda w, m: w.hann(-1), lambda w, m: w.hann(4, dtype=m.float16),
    lambda w, m: w.cosine(4, dtype=m.int64), lambda w, m: w.exponential(4, tau=0.0),
    lambda w, m: w.exponential(4, center=1.0), lambda w, m: w.gaussian(4, std=-1.0),
    lambda w, m: w.kaiser(4, beta=-1.0), lambda w, m: w.general_cosine(4, a=3),
    lambda w, m: w.general_cosine(4, a=[]), lambda w, m: w.bartlett(-3),
    lambda w, m: w.blackman(3, dtype=m.complex64)])
def test_signal_window_errors_match_torch(call):
    expected = _signal_error(torch, call)
    assert expected is not None
    assert _signal_error(gradkit, call) == expected


def test_signal_window_values_are_the_closed_forms():
    n = np.arange(6)
    np.testing.assert_allclose(gradkit.signal.windows.hann(6, dtype=gradkit.float64).numpy(),
                               0.5 - 0.5 * np.cos(2 * np.pi * n / 5), atol=1e-15)
    np.testing.assert_allclose(gradkit.hann_window(6, dtype=gradkit.float64).numpy(),
                               0.5 - 0.5 * np.cos(2 * np.pi * n / 6), atol=1e-15)


def test_signal_module_example_runs_and_missing_names_are_named():
    import doctest
    assert doctest.testmod(gradkit.signal).failed == 0
    with pytest.raises(AttributeError, match="gradkit does not implement torch.signal.filters"):
        gradkit.signal.filters  # noqa: B018 - the lookup is the test
