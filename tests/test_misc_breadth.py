"""torch's remaining top-level functions, global switches and Tensor methods (issue 15), each
run the same way in torch and gradkit."""
from __future__ import annotations

import array
import pathlib
import subprocess
import sys
import warnings

import numpy as np
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


# -- a tensor's memory: resize_, set_, new, layout, memory formats --------------------------

def _state(t):
    """What a tensor is: values, dtype, shape, strides, storage offset (an empty tensor's
    strides left out: NumPy's are 0 there, docs/numerics.md)."""
    return (str(t.dtype).split(".")[1], t.tolist(), tuple(t.shape),
            t.stride() if t.numel() else None, t.storage_offset())


def _resized(m, start, *sizes, **kwargs):
    """resize_ ``start`` (a program of m): whether it is self, its state, its version bump,
    whether it kept its memory, and what its base (when a view) then holds."""
    x = start(m)
    pointer, version = x.data_ptr(), x._version
    result = x.resize_(*sizes, **kwargs)
    keep = slice(None) if x.numel() <= 6 else slice(0, 6)  # grown memory: torch's is garbage
    return (result is x, _state(x)[0], x.reshape(-1)[keep].tolist(), tuple(x.shape), x.stride(),
            x._version - version, x.data_ptr() == pointer)


@pytest.mark.parametrize("start, sizes, kwargs", [
    (lambda m: m.arange(6.0), (2, 3), {}),
    (lambda m: m.arange(6.0), ((2, 3),), {}),
    (lambda m: m.arange(6.0), ([3, 2],), {}),
    (lambda m: m.arange(6.0), (2,), {}),
    (lambda m: m.arange(6.0), (6,), {}),
    (lambda m: m.arange(6.0), (8,), {}),
    (lambda m: m.arange(6.0), (0,), {}),
    (lambda m: m.arange(6.0).view(2, 3).t(), (3,), {}),
    (lambda m: m.arange(6.0)[2:], (2,), {}),
    (lambda m: m.arange(6.0)[2:], (2, 2), {}),
    (lambda m: m.arange(24.0), (1, 2, 3, 4), {"memory_format": "channels_last"}),
    (lambda m: m.arange(6.0), (2, 3), {"memory_format": "channels_last"}),
    (lambda m: m.arange(6.0), (-1,), {}),
    (lambda m: m.arange(6.0), (2, 2.5), {}),
    (lambda m: m.arange(6.0), (), {}),
    (lambda m: m.arange(6.0, requires_grad=True), (2,), {}),
    (lambda m: m.arange(6.0, requires_grad=True) * 1, (6,), {}),
])
def test_resize_(start, sizes, kwargs):
    def program(m):
        options = {key: getattr(m, value) for key, value in kwargs.items()}
        return _resized(m, start, *sizes, **options)
    assert_same(program)


def test_resize_keeps_memory_of_views_and_grows_a_copy():
    for m in (torch, gradkit):
        base = m.arange(6.0)
        x = base[:]
        x.resize_(2, 2)
        x[0, 0] = 9.0
        assert base[0].item() == 9.0  # it fitted: the same memory
        x.resize_(3, 3)
        assert x.reshape(-1)[:6].tolist() == [9.0, 1, 2, 3, 4, 5]
    # torch grows the storage its views share; gradkit moves x alone to the grown copy
    x[0, 0] = 7.0
    assert base[0].item() == 9.0


def test_resize_refused_on_requires_grad_under_no_grad():
    for m in (torch, gradkit):
        with m.no_grad(), pytest.raises(RuntimeError,
                                        match="cannot resize variables that require grad"):
            m.zeros(3, requires_grad=True).resize_(2)


@pytest.mark.parametrize("program", [
    lambda m: _state(m.zeros(4).resize_as_(m.zeros(2, 2))),
    lambda m: m.zeros(3).resize_as_(m.zeros(2, 2, 2, 2), memory_format=m.channels_last).stride(),
    lambda m: m.zeros(3).resize_as_(3),
    lambda m: m.zeros(3, requires_grad=True).resize_as_(m.zeros(2)),
])
def test_resize_as_(program):
    assert_same(program)


def _set(m, target, *args):
    x = target(m)
    version = x._version
    result = x.set_(*args)
    return result is x, _state(x), x._version - version


@pytest.mark.parametrize("program", [
    lambda m: _set(m, lambda m: m.zeros(3), m.arange(6.0).view(2, 3).t()),
    lambda m: _set(m, lambda m: m.zeros(3)),
    lambda m: _set(m, lambda m: m.zeros(3), m.arange(3)),
    lambda m: _set(m, lambda m: m.zeros(3, dtype=m.int32), m.arange(3.0)),
    lambda m: _set(m, lambda m: m.zeros(3), m.arange(6.0), 1, (2, 2)),
    lambda m: _set(m, lambda m: m.zeros(3), m.arange(6.0), 1, (2, 2), (1, 2)),
    lambda m: _set(m, lambda m: m.zeros(3, requires_grad=True), m.arange(3.0)),
])
def test_set_(program):
    assert_same(program)


def test_set_shares_the_source_memory():
    for m in (torch, gradkit):
        source = m.arange(6.0)
        x = m.zeros(1).set_(source)
        x[1] = 10.0
        assert source[1].item() == 10.0 and x.data_ptr() == source.data_ptr()
        with pytest.raises(TypeError, match=r"set_\(\) received an invalid combination of "
                                            r"arguments - got \(int\), but expected one of:"):
            x.set_(3)


def test_set_with_autograd_history_refused_by_gradkit():
    # torch records a NotImplemented node there; gradkit says it does not support it
    with pytest.raises(NotImplementedError, match="set_ on tensors with autograd history"):
        (gradkit.zeros(3, requires_grad=True) * 1).set_(gradkit.arange(3.0))
    with pytest.raises(NotImplementedError, match="set_ on tensors with autograd history"):
        gradkit.zeros(3).set_(gradkit.ones(3, requires_grad=True))


@pytest.mark.parametrize("program", [
    lambda m: _state(m.arange(6.0).new(2, 3).zero_()),
    lambda m: _state(m.arange(6.0).new((2, 3))),
    lambda m: _state(m.arange(6.0).new([1, 2])),
    lambda m: _state(m.arange(6.0).new()),
    lambda m: _state(m.arange(3).new([1.5])),
    lambda m: _state(m.arange(3.0, dtype=m.float64).new(m.Size([2])).zero_()),
    lambda m: m.arange(6.0).new(2.5),
    lambda m: m.arange(6.0).new(2, 3, dtype=m.int64),
    lambda m: m.arange(6.0).new(m.zeros(3, requires_grad=True)).requires_grad,
])
def test_new(program):
    outcome_torch, outcome_gradkit = outcome(program, torch), outcome(program, gradkit)
    if outcome_torch[0] == "raises":  # the errors' types match; torch's texts list overloads
        assert outcome_gradkit[:2] == outcome_torch[:2]
    else:
        assert outcome_gradkit == outcome_torch


def test_new_aliases_a_tensor():
    x = gradkit.arange(3.0)
    alias = gradkit.zeros(1).new(x)
    alias[0] = 5.0
    assert x[0].item() == 5.0
    with pytest.raises(TypeError, match="expected gradkit.float32 tensor"):
        gradkit.zeros(1).new(gradkit.arange(3))


@pytest.mark.parametrize("program", [
    lambda m: (repr(m.zeros(2).layout).split(".")[1], m.zeros(2).layout is m.strided,
               isinstance(m.strided, m.layout)),
    lambda m: [repr(f).split(".")[1] for f in (m.contiguous_format, m.preserve_format,
                                               m.channels_last, m.channels_last_3d)],
    lambda m: all(isinstance(f, m.memory_format) for f in (
        m.contiguous_format, m.preserve_format, m.channels_last, m.channels_last_3d)),
    lambda m: (m.zeros(2).is_shared(), m.zeros(2).is_pinned()),
    lambda m: [(x.share_memory_() is x, x.is_shared(), x[1:].is_shared()) for x in [m.zeros(3)]],
])
def test_layout_and_sharing(program):
    assert_same(program)


def test_pin_memory_is_refused_without_a_gpu():
    if gradkit.cuda.is_available():
        pytest.skip("the message is torch's for a machine without a GPU")
    assert_same(lambda m: m.zeros(2).pin_memory())


def _layouts(m, x):
    return (x.stride(), x.is_contiguous(),
            x.is_contiguous(memory_format=m.channels_last), x.tolist())


@pytest.mark.parametrize("program", [
    lambda m: _layouts(m, m.arange(120.0).view(2, 3, 4, 5).contiguous(
        memory_format=m.channels_last)),
    lambda m: _layouts(m, m.arange(120.0).view(2, 3, 4, 5).clone(
        memory_format=m.channels_last)),
    lambda m: _layouts(m, m.clone(m.arange(120.0).view(2, 3, 4, 5),
                                  memory_format=m.channels_last)),
    lambda m: _layouts(m, m.arange(120.0).view(2, 3, 4, 5).contiguous(
        memory_format=m.channels_last).contiguous()),
    lambda m: m.arange(240.0).view(2, 3, 4, 5, 2).contiguous(
        memory_format=m.channels_last_3d).stride(),
    lambda m: m.arange(240.0).view(2, 3, 4, 5, 2).contiguous(
        memory_format=m.channels_last_3d).is_contiguous(memory_format=m.channels_last_3d),
    lambda m: m.arange(6.0).view(2, 3).t().contiguous(memory_format=m.preserve_format).stride(),
    lambda m: m.arange(6.0).view(2, 3).t().contiguous(memory_format=m.contiguous_format).stride(),
    lambda m: m.arange(6.0).contiguous(memory_format=m.channels_last),
    lambda m: m.arange(6.0).clone(memory_format=m.channels_last_3d),
    lambda m: m.arange(6.0).contiguous(memory_format=3),
    lambda m: m.arange(6.0).clone(memory_format=3),
    lambda m: m.arange(6.0).is_contiguous(memory_format=3),
    lambda m: m.arange(6.0).is_contiguous(memory_format=m.preserve_format),
    lambda m: [m.empty(2, 1, 4, 5).is_contiguous(memory_format=m.channels_last),
               m.empty(2, 3, 1, 1).is_contiguous(memory_format=m.channels_last)],
])
def test_memory_formats(program):
    assert_same(program)


def test_channels_last_clone_is_differentiable():
    def program(m):
        x = m.arange(24.0, dtype=m.float64).view(1, 2, 3, 4).requires_grad_()
        y = x.contiguous(memory_format=m.channels_last)
        (y * m.arange(24.0, dtype=m.float64).view(1, 2, 3, 4)).sum().backward()
        return y.grad_fn.name(), x.grad.tolist(), x.grad.stride()
    assert_same(program)
    x = gradkit.randn(1, 2, 2, 2, dtype=gradkit.float64, requires_grad=True)
    fn = lambda x: x.clone(memory_format=gradkit.channels_last)  # noqa: E731
    assert gradkit.autograd.gradcheck(fn, (x,)) and gradkit.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("like", ["empty_like", "zeros_like", "ones_like", "randn_like"])
@pytest.mark.parametrize("source", [
    lambda m: m.zeros(2, 3, 4, 5).contiguous(memory_format=m.channels_last),
    lambda m: m.zeros(2, 3).t(),
    lambda m: m.zeros(2, 3).t()[::2],
    lambda m: m.zeros(3, 1).expand(3, 4),
    lambda m: m.zeros(2, 1, 3).permute(2, 1, 0),
])
@pytest.mark.parametrize("fmt", [None, "contiguous_format", "preserve_format", "channels_last"])
def test_like_memory_format(like, source, fmt):
    def program(m):
        options = {} if fmt is None else {"memory_format": getattr(m, fmt)}
        return getattr(m, like)(source(m), **options).stride()
    assert_same(program)


@pytest.mark.parametrize("fmt", [None, "contiguous_format", "channels_last"])
def test_randint_like_memory_format(fmt):
    def program(m):
        options = {} if fmt is None else {"memory_format": getattr(m, fmt)}
        source = m.zeros(2, 3, 4, 5).contiguous(memory_format=m.channels_last)
        return m.randint_like(source, 10, **options).stride()
    assert_same(program)


def test_full_like_memory_format():
    assert_same(lambda m: m.full_like(m.zeros(2, 3).t(), 2.0).stride())
    assert_same(lambda m: m.full_like(m.zeros(2, 3).t(), 2.0,
                                      memory_format=m.contiguous_format).stride())


@pytest.mark.parametrize("program", [
    lambda m: _state(m.empty_permuted((2, 3, 4), (2, 0, 1)).zero_()),
    lambda m: _state(m.empty_permuted([2, 3], [1, 0], dtype=m.int64).zero_()),
    lambda m: _state(m.empty_permuted((), ()).zero_()),
    lambda m: m.empty_permuted((2, 3), (1, 0), requires_grad=True).requires_grad,
    lambda m: m.empty_permuted((2, 3), (0,)),
    lambda m: m.empty_permuted((2, 3), (0, 0)),
    lambda m: m.empty_permuted((2, 3), (0, 2)),
    lambda m: m.empty_permuted((2, 3), (1, -1)),
    lambda m: m.empty_permuted(3, (0,)),
])
def test_empty_permuted(program):
    assert_same(program)


# -- binomial, norm_except_dim -----------------------------------------------------------

@pytest.mark.parametrize("program", [
    lambda m: _values(m.binomial(m.tensor([0.0, 4.0, 7.0, -2.0]),
                                 m.tensor([0.5, 0.0, 1.0, 0.5]))),
    lambda m: [str(v) for v in m.binomial(m.tensor([3.0, 3.0]),
                                          m.tensor([float("nan"), -0.5])).tolist()],
    lambda m: _values(m.binomial(m.zeros(0, dtype=m.float64), m.zeros(0, dtype=m.float64))),
    lambda m: tuple(m.binomial(m.full((2, 3), 5.0), m.tensor([0.5, 0.2, 0.1])).shape),
    lambda m: m.binomial(m.tensor([10, 5]), m.tensor([0.5, 1.0])),
    lambda m: m.binomial(m.tensor([10.0]), m.tensor([1])),
    lambda m: m.binomial(m.tensor([10.0]), m.tensor([0.5], dtype=m.float64)),
    lambda m: m.binomial(m.tensor([10.0]), 0.5),
    lambda m: m.binomial(10.0, m.tensor([0.5])),
    lambda m: m.binomial(m.tensor([4.0]), m.tensor([0.5]), generator=3),
])
def test_binomial(program):
    assert_same(program)


def test_binomial_distribution_and_generator():
    count = gradkit.full((20000,), 12.0, dtype=gradkit.float64)
    prob = gradkit.full((20000,), 0.25, dtype=gradkit.float64)
    draws = gradkit.binomial(count, prob).numpy()
    assert draws.dtype == np.float64 and set(np.unique(draws)) <= set(range(13))
    # mean n p = 3 and variance n p (1 - p) = 2.25, within a few standard errors
    assert abs(draws.mean() - 3.0) < 0.05 and abs(draws.var() - 2.25) < 0.1
    first = gradkit.binomial(count[:50], prob[:50], generator=gradkit.Generator().manual_seed(5))
    again = gradkit.binomial(count[:50], prob[:50], generator=gradkit.Generator().manual_seed(5))
    assert first.tolist() == again.tolist()


def test_binomial_resize_warning_as_torch():
    for m in (torch, gradkit):
        with pytest.warns(UserWarning, match=r"had shape \[1, 1\], which does not match the "
                                             r"required output shape \[1, 2\]"):
            m.binomial(m.tensor([[10.0]]), m.tensor([0.5, 0.2]))


def test_binomial_has_no_derivative():
    def program(m):
        count = m.tensor([10.0, 5.0], requires_grad=True)
        y = m.binomial(count, m.tensor([0.5, 1.0]))
        name = y.grad_fn.name().split("::")[-1]
        y.sum().backward()
        return name
    assert outcome(program, gradkit) == ("raises", "RuntimeError",
                                         "derivative for aten::binomial is not implemented")
    assert outcome(program, torch)[:3] == outcome(program, gradkit)[:3]


@pytest.mark.parametrize("program", [
    lambda m: m.norm_except_dim(m.ones(2, 3), 2, 5),
    lambda m: m.norm_except_dim(m.ones(2, 3), 2, -3),
    lambda m: _values(m.norm_except_dim(m.arange(6.0).view(2, 3))),
    lambda m: _values(m.norm_except_dim(m.arange(24.0).view(2, 3, 4), 1, 1)),
    lambda m: _values(m.norm_except_dim(m.arange(6.0).view(2, 3).t(), 2, 1)),
])
def test_norm_except_dim(program):
    assert_same(program)


# -- frombuffer, DLPack ----------------------------------------------------------------------

FLOATS = b"\x00\x00\x80?\x00\x00\x00@"  # 1.0 and 2.0 as little-endian float32


@pytest.mark.parametrize("kwargs", [
    {}, {"count": 1, "offset": 4}, {"count": 3}, {"offset": 9}, {"offset": 2}, {"count": 0},
    {"offset": -1}, {"requires_grad": True},
])
def test_frombuffer(kwargs):
    def program(m):
        options = dict(kwargs)
        dtype = m.float32
        x = m.frombuffer(bytearray(FLOATS), dtype=dtype, **options)
        return _values(x), x.requires_grad
    assert_same(program)


@pytest.mark.parametrize("program", [
    lambda m: m.frombuffer(bytearray(b"abc"), dtype=m.float32),
    lambda m: m.frombuffer(bytearray(), dtype=m.float32),
    lambda m: m.frombuffer(3, dtype=m.float32),
    lambda m: _values(m.frombuffer(array.array("i", [1, 2, 3]), dtype=m.int32)),
    lambda m: _values(m.frombuffer(bytearray(b"\x01\x02"), dtype=m.uint8)),
])
def test_frombuffer_sources(program):
    assert_same(program)


def test_frombuffer_shares_memory_and_warns_on_read_only():
    for m in (torch, gradkit):
        buffer = bytearray(FLOATS)
        m.frombuffer(buffer, dtype=m.float32)[1] = 4.0
        assert buffer[4:] == b"\x00\x00\x80@"
    gradkit.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="The given buffer is not writable"):
            x = gradkit.frombuffer(b"\x01\x02", dtype=gradkit.uint8)
    finally:
        gradkit.set_warn_always(False)
    assert x.tolist() == [1, 2]


def test_dlpack_shares_memory_both_ways():
    array = np.arange(3.0)
    gradkit.from_dlpack(array)[0] = 9.0
    assert array[0] == 9.0
    theirs = torch.ones(2)
    gradkit.from_dlpack(theirs)[1] = 4.0
    assert theirs.tolist() == [1.0, 4.0]
    ours = gradkit.ones(2)
    torch.from_dlpack(ours)[0] = 5.0
    np.from_dlpack(ours)[1] = 6.0
    assert ours.tolist() == [5.0, 6.0]
    assert gradkit.from_dlpack(gradkit.to_dlpack(ours)).tolist() == [5.0, 6.0]
    alias = gradkit.from_dlpack(ours)
    assert alias.data_ptr() == ours.data_ptr() and alias.grad_fn is None
    assert gradkit.from_dlpack(torch.to_dlpack(torch.arange(3))).tolist() == [0, 1, 2]


@pytest.mark.parametrize("program", [
    lambda m: _values(m.from_dlpack(np.arange(3.0))),
    lambda m: _values(m.from_dlpack(m.to_dlpack(m.arange(4, dtype=m.int32)))),
    lambda m: m.from_dlpack(3),
    lambda m: m.to_dlpack(3),
    lambda m: _values(m.from_dlpack(m.to_dlpack(m.ones(2, requires_grad=True)))),
    lambda m: m.ones(2, requires_grad=True).__dlpack__(),
    lambda m: np.from_dlpack(m.ones(2, requires_grad=True)),
    lambda m: m.ones(2).__dlpack_device__(),
])
def test_dlpack(program):
    assert_same(program)


# -- segment_reduce (values and gradients: tests/op_db.py) -----------------------------------

@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod", "amax", "amin"])
def test_segment_reduce_empty_segments(reduce):
    def program(m):
        data = m.tensor([1.0, 2.0, 2.0, 3.0, 0.0, 5.0], dtype=m.float64, requires_grad=True)
        y = m.segment_reduce(data, reduce, lengths=m.tensor([3, 0, 3]))
        return [str(v) for v in y.tolist()], y.requires_grad
    assert_same(program)


@pytest.mark.parametrize("program", [
    lambda m: m.segment_reduce(m.ones(6), "foo", lengths=m.tensor([6])),
    lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor([2, 2])),
    lambda m: m.segment_reduce(m.ones(6), "sum"),
    lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor([6]), axis=1),
    lambda m: m.segment_reduce(m.ones(6, 2), "sum", lengths=m.tensor([6]), axis=1),
    lambda m: m.segment_reduce(m.ones(6, 2), "sum", offsets=m.tensor([0, 6]), axis=1),
    lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor([2, -1, 5])),
    lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor([6.0])),
    lambda m: m.segment_reduce(m.ones(6, dtype=m.int32), "sum", lengths=m.tensor([6])),
    lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor([6]), indices=m.tensor([0])),
    lambda m: m.segment_reduce(m.ones(3), "sum", lengths=m.tensor([], dtype=m.int64)),
    lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor([2, 2]), unsafe=True).tolist(),
])
def test_segment_reduce_errors(program):
    assert_same(program)


# -- is_set_to, dim_order, tensor kinds, nonzero_static, torch.resize_as_ ----------------------

@pytest.mark.parametrize("program", [
    lambda m: [x.is_set_to(y) for x in [m.arange(6.0)] for y in (
        x, x[:], x.view(2, 3), m.arange(6.0), x[1:], m.zeros(1).set_(x))],
    lambda m: m.arange(6.0)[:3].is_set_to(m.arange(6.0)[:3]),
    lambda m: m.empty(0).is_set_to(m.empty(0)),
    lambda m: m.arange(6.0).is_set_to(3),
    lambda m: [x.dim_order() for x in (
        m.zeros(2, 3), m.zeros(2, 3).t(), m.zeros(2, 3, 4, 5).contiguous(
            memory_format=m.channels_last), m.zeros(3, 1).expand(3, 4),
        m.zeros(1, 3).expand(4, 3), m.zeros(2, 1, 3).permute(2, 1, 0), m.zeros(()))],
    lambda m: m.zeros(2, 3).dim_order(ambiguity_check=True),
    lambda m: m.zeros(2, 1).dim_order(ambiguity_check=True),
    lambda m: [getattr(m.zeros(2), name) for name in (
        "is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_mkldnn", "is_nested",
        "is_xpu", "is_mps", "is_vulkan", "is_xla", "is_ipu", "is_maia", "is_mtia")],
    lambda m: _values(m.nonzero_static(m.tensor([0, 1, 0, 2]), size=3)),
    lambda m: _values(m.nonzero_static(m.tensor([[0, 1], [3, 2]]), size=2, fill_value=7)),
    lambda m: _values(m.nonzero_static(m.tensor([0, 1, 0, 2]), size=0)),
    lambda m: _values(m.tensor([0, 1.0, 0, 2]).nonzero_static(size=1)),
    lambda m: _values(m.nonzero_static(m.tensor(3.0), size=2)),
    lambda m: m.nonzero_static(m.tensor([0, 1]), size=-1),
    lambda m: m.nonzero_static([0, 1], size=1),
    lambda m: _state(m.resize_as_(m.zeros(4), m.zeros(2, 2))),
    lambda m: m.resize_as_(3, m.zeros(2)),
])
def test_queries_and_functions(program):
    assert_same(program)


@pytest.mark.parametrize("program", [
    lambda m: _values(m.arange(6.0).resize(2, 3)),
    lambda m: _values(m.arange(6.0).view(2, 3).t().resize(6)),
    lambda m: m.arange(6.0).resize((2, 3)),
    lambda m: m.arange(6.0).resize(4),
    lambda m: _values(m.arange(6.0).resize_as(m.zeros(3, 2))),
    lambda m: m.arange(6.0).resize_as(m.zeros(4)),
])
def test_deprecated_resize(program):
    def warned(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = outcome(program, m)
        return result, [str(w.message) for w in caught]
    assert warned(gradkit) == warned(torch)


def test_deprecated_resize_views_and_differentiates():
    def program(m):
        x = m.arange(6.0, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = x.resize(2, 3)
        (y * m.arange(6.0).view(2, 3)).sum().backward()
        base = m.arange(6.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base.resize(3, 2)[0, 0] = 7.0
        return x.grad.tolist(), base.tolist()
    assert_same(program)
