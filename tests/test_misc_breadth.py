"""torch's remaining top-level functions, global switches and Tensor methods (issue 15), each
run the same way in torch and gradkit."""
from __future__ import annotations

import pathlib
import subprocess
import sys
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")
ROOT = pathlib.Path(__file__).resolve().parent.parent


def outcome(program, module):
    """What ``program(module)`` gives: ("ok", value) or ("raises", type name, message)."""
    try:
        return ("ok", program(module))
    except Exception as error:  # noqa: BLE001 - the error is the outcome compared
        return ("raises", type(error).__name__, str(error))


def assert_same(program):
    """program(torch) and program(gradkit) return equal plain values or raise alike."""
    expected, got = outcome(program, torch), outcome(program, gradkit)
    assert got == expected


# -- global switches ----------------------------------------------------------------------

@pytest.fixture
def restore_switches():
    """Put both libraries' switches back as they were (the tests flip global state)."""
    def snapshot(m):
        return (m.are_deterministic_algorithms_enabled(),
                m.is_deterministic_algorithms_warn_only_enabled(), m.is_warn_always_enabled(),
                m.get_float32_matmul_precision(), m.get_default_dtype())
    saved = {m: snapshot(m) for m in (torch, gradkit)}
    yield
    for m, (det, warn_only, always, precision, dtype) in saved.items():
        m.use_deterministic_algorithms(det, warn_only=warn_only)
        m.set_warn_always(always)
        m.set_float32_matmul_precision(precision)
        m.set_default_dtype(dtype)
        m.set_anomaly_enabled(False)


def _deterministic(m):
    return (m.are_deterministic_algorithms_enabled(),
            m.is_deterministic_algorithms_warn_only_enabled(), m.get_deterministic_debug_mode())


@pytest.mark.parametrize("switch", [
    lambda m: m.use_deterministic_algorithms(True),
    lambda m: m.use_deterministic_algorithms(True, warn_only=True),
    lambda m: m.use_deterministic_algorithms(False, warn_only=True),
    lambda m: m.set_deterministic_debug_mode("warn"),
    lambda m: m.set_deterministic_debug_mode("error"),
    lambda m: m.set_deterministic_debug_mode("default"),
    lambda m: m.set_deterministic_debug_mode(1),
    lambda m: m.set_deterministic_debug_mode(True),
    lambda m: m.set_deterministic_debug_mode("foo"),
    lambda m: m.set_deterministic_debug_mode(5),
    lambda m: m.set_deterministic_debug_mode(1.0),
    lambda m: m.use_deterministic_algorithms(1),
    lambda m: m.use_deterministic_algorithms(True, warn_only=1),
])
def test_deterministic_switches(restore_switches, switch):
    assert_same(lambda m: (switch(m), _deterministic(m)))


@pytest.mark.parametrize("precision", ["highest", "high", "medium", 3])
def test_float32_matmul_precision(restore_switches, precision):
    assert_same(lambda m: (m.set_float32_matmul_precision(precision),
                           m.get_float32_matmul_precision()))


def test_float32_matmul_precision_unknown_warns_as_torch(restore_switches):
    for m in (torch, gradkit):
        with pytest.warns(UserWarning, match="foo is not one of 'highest', 'high', or 'medium'; "
                                             "the currentsetFloat32MatmulPrecision call has no "
                                             "effect"):
            m.set_float32_matmul_precision("foo")
        assert m.get_float32_matmul_precision() == "highest"


INTEROP_PROGRAM = """
import sys
m = __import__(sys.argv[1])
def attempt(count):
    try:
        m.set_num_interop_threads(count)
    except Exception as error:
        return type(error).__name__, str(error)
    return m.get_num_interop_threads()
print([attempt(count) for count in (0, 1.5, True, 3, 4)], m.get_num_interop_threads())
"""


def test_interop_threads_set_once():
    # torch sets its inter-op pool once per process: each library runs in a fresh one
    results = [subprocess.run([sys.executable, "-c", INTEROP_PROGRAM, name], capture_output=True,
                              text=True, check=True, cwd=ROOT).stdout
               for name in ("torch", "gradkit")]
    assert results[1] == results[0]


def test_interop_threads_start_at_torchs_default():
    assert gradkit.get_num_interop_threads() == torch.get_num_interop_threads()


@pytest.mark.parametrize("value", [True, False, 1])
def test_warn_always_switch(restore_switches, value):
    assert_same(lambda m: (m.set_warn_always(value), m.is_warn_always_enabled()))


def test_warn_always_repeats_warn_once_warnings(restore_switches):
    def casts(m):
        z = m.tensor([1 + 2j])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                z.to(m.float64)
        return len([w for w in caught if "discards the imaginary part" in str(w.message)])
    casts(torch), casts(gradkit)  # the first warning of each is spent
    assert casts(gradkit) == casts(torch) == 0
    torch.set_warn_always(True)
    gradkit.set_warn_always(True)
    assert casts(gradkit) == casts(torch) == 2


def test_flush_denormal_is_not_available():
    # NumPy has no flush-to-zero switch: gradkit answers as torch on a CPU without one
    assert gradkit.set_flush_denormal(True) is False
    assert gradkit.set_flush_denormal(False) is False
    assert gradkit.tensor([1e-320], dtype=gradkit.float64).item() == 1e-320
    with pytest.raises(RuntimeError, match="flush_denormal expects a bool, but got int"):
        gradkit.set_flush_denormal(1)
    assert_same(lambda m: m.set_flush_denormal(1))


@pytest.mark.parametrize("args", [(True,), (True, False), (False,), (1,)])
def test_anomaly_switch(restore_switches, args):
    assert_same(lambda m: (m.set_anomaly_enabled(*args), m.is_anomaly_enabled(),
                           m.is_anomaly_check_nan_enabled()))


@pytest.mark.filterwarnings("ignore:Error detected in SqrtBackward0", "ignore::RuntimeWarning")
def test_anomaly_switch_is_gradkits_anomaly_mode(restore_switches):
    gradkit.set_anomaly_enabled(True)
    x = gradkit.zeros(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="SqrtBackward0"):
        (x.sqrt() * 0).sum().backward()
    gradkit.set_anomaly_enabled(False)
    assert gradkit.autograd.is_anomaly_enabled() is False


@pytest.mark.parametrize("spec", ["DoubleTensor", "FloatTensor", "IntTensor", "torch.DoubleTensor",
                                  "torch.LongTensor", "foo", "float64", 3])
def test_default_tensor_type(restore_switches, spec):
    def program(m):
        t = getattr(m, spec) if spec in ("DoubleTensor", "FloatTensor", "IntTensor",
                                          "float64") else spec
        m.set_warn_always(True)  # the deprecation warning is torch's warn-once
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            error = outcome(lambda m: m.set_default_tensor_type(t), m)
        deprecated = [str(w.message).split(" (Triggered")[0] for w in caught
                      if "is deprecated" in str(w.message)]
        return (error, deprecated, str(m.get_default_dtype()).split(".")[1],
                str(m.tensor([1.0]).dtype).split(".")[1])
    assert_same(program)


# -- torch's top-level names for Tensor methods ---------------------------------------------

def _values(result):
    """Plain values of a tensor or of a tuple of tensors (for comparing both libraries)."""
    if isinstance(result, (tuple, list)):
        return [_values(r) for r in result]
    if hasattr(result, "detach"):
        return (str(result.dtype).split(".")[1], result.detach().numpy().tolist())
    return result


@pytest.mark.parametrize("program", [
    lambda m: m.fix(m.tensor([-2.5, -0.5, 0.5, 2.7])),
    lambda m: m.fix(3),
    lambda m: m.ger(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0, 5.0])),
    lambda m: m.ger(m.tensor([1, 2]), m.tensor([3, 4])),
    lambda m: m.ger(m.tensor([1.0]), 3),
    lambda m: m.ger(3, m.tensor([1.0])),
    lambda m: m.is_conj(m.tensor([1 + 2j]).conj()),
    lambda m: m.is_conj(m.tensor([1 + 2j])),
    lambda m: m.is_conj(3),
    lambda m: m.resolve_conj(m.tensor([1 + 2j]).conj()),
    lambda m: m.resolve_conj(m.tensor([1 + 2j]).conj()).is_conj(),
    lambda m: m.resolve_conj(3),
    lambda m: m.split_with_sizes(m.arange(4.0), [1, 3]),
    lambda m: m.split_with_sizes(m.arange(6.0).reshape(2, 3), split_sizes=(2, 0, 1), dim=1),
    lambda m: m.arange(4.0).split_with_sizes([1, 3]),
    lambda m: m.split_with_sizes(m.arange(4.0), [1, 2]),
    lambda m: m.split_with_sizes(m.arange(4.0), 2),
    lambda m: m.split_with_sizes(m.arange(4.0), [1, 3], 1),
    lambda m: m.split_with_sizes(3, [1]),
    lambda m: m.index_put_(m.zeros(4), (m.tensor([1, 3]),), m.tensor([5.0, 6.0])),
    lambda m: m.index_put_(m.zeros(4), (m.tensor([1, 1]),), m.tensor([5.0, 6.0]), True),
    lambda m: m.index_put_(3, (m.tensor([1]),), m.tensor(1.0)),
    lambda m: m.as_strided_(m.arange(6.0), (2, 2), (1, 2)),
    lambda m: m.as_strided_(3, (2,), (1,)),
])
def test_top_level_method_functions(program):
    assert_same(lambda m: _values(program(m)))


def test_top_level_inplace_functions_write_in_place():
    for m in (torch, gradkit):
        x = m.zeros(4)
        assert m.index_put_(x, (m.tensor([2]),), m.tensor(7.0)) is x
        assert m.as_strided_(x, (2,), (2,)) is x and x.tolist() == [0.0, 7.0]


def test_split_with_sizes_grad_fn_as_torch():
    names = [m.split_with_sizes(m.ones(4, requires_grad=True), [1, 3])[0].grad_fn.name()
             for m in (torch, gradkit)]
    assert names[0] == names[1]
