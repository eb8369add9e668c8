"""torch.linspace and torch.logspace value for value: torch's kernels step from the start for
the first half and back from the end for the rest (NumPy's linspace scales i / n and is an ulp
off at a third of float32 values), and histogram's bin edges are that linspace."""
import math

import numpy as np
import pytest
from test_torch_numerics import assert_same_as_torch

import gradkit

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "complex64", "complex128", "int64", "int32",
          "int16", "int8", "uint8"]
# (start, end, steps): fractional ends (truncated first for integer dtypes), descending, one
# value per half, odd and even counts, ends far apart in magnitude
RANGES = [(-3.3, 7.1, 37), (0.1, 0.9, 100), (2.5, -1.7, 1000), (0, 1, 3), (-7, 100, 13),
          (1e-3, 120.25, 64), (5, 5, 9), (0, 1, 2), (3.7, 9, 1), (3.7, 9, 0), (0.3, -90, 1001)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start,end,steps", RANGES)
def test_linspace_is_torch_bit_for_bit(dtype, start, end, steps):
    if dtype == "uint8" and min(start, end) < 0:
        start, end = abs(start), abs(end)
    assert_same_as_torch(lambda m: m.linspace(start, end, steps, dtype=getattr(m, dtype)),
                         rtol=0)


def test_float32_linspace_differs_from_numpys_scaling():
    """The case this reproduces: NumPy's float32 linspace is an ulp off torch's here."""
    theirs = torch.linspace(-3.3, 7.1, 37).numpy()
    assert (np.linspace(-3.3, 7.1, 37).astype(np.float32) != theirs).any()
    np.testing.assert_array_equal(gradkit.linspace(-3.3, 7.1, 37).numpy(), theirs)


@pytest.mark.parametrize("start,end", [(1 + 1j, 2), (-2, 3.5 - 1j), (1j, -1j)])
@pytest.mark.parametrize("dtype", [None, "complex128"])
def test_complex_ends_make_a_complex_linspace(start, end, dtype):
    assert_same_as_torch(lambda m: m.linspace(
        start, end, 11, dtype=None if dtype is None else getattr(m, dtype)), rtol=0)


@pytest.mark.parametrize("start,end", [(0.0, math.inf), (-math.inf, 1.0), (math.nan, 2.0)])
def test_infinite_and_nan_ends(start, end):
    assert_same_as_torch(lambda m: m.linspace(start, end, 5), rtol=0)


def test_zero_dimensional_tensor_ends():
    assert_same_as_torch(lambda m: m.linspace(m.tensor(1.5, dtype=m.float64),
                                              m.tensor(-3.0), 7), rtol=0)


@pytest.mark.parametrize("call", [
    lambda m: m.linspace(1 + 1j, 2, 5, dtype=m.float32),
    lambda m: m.linspace(0, 1j, 5, dtype=m.int64),
    lambda m: m.linspace(0, 1, 5, dtype=m.bool),
    lambda m: m.linspace(0, 1, 5, dtype=m.uint16),
    lambda m: m.linspace(0, 1e39, 5, dtype=m.float32),
    lambda m: m.linspace(0, 7e4, 5, dtype=m.float16),
    lambda m: m.linspace(0, math.nan, 5, dtype=m.int32),
    lambda m: m.linspace(-1, 300, 5, dtype=m.uint8),
    lambda m: m.linspace(m.tensor([1.5]), 3, 4),
    lambda m: m.linspace(0, m.ones(2, 1), 4),
    lambda m: m.linspace(0, 1, -1),
], ids=["complex-to-float", "complex-to-long", "bool", "uint16", "float-overflow",
        "half-overflow", "nan-to-int", "uint8-overflow", "1d-start", "2d-end", "negative-steps"])
def test_linspace_refuses_as_torch(call):
    assert_same_as_torch(call)


@pytest.mark.parametrize("call", [
    lambda m: m.linspace(0, 1, 1, dtype=m.bool), lambda m: m.linspace(0, 1, 0, dtype=m.uint16),
    lambda m: m.linspace(2, 1e39, 1, dtype=m.float32), lambda m: m.linspace(-1, 200, 4,
                                                                            dtype=m.uint8),
], ids=["one-bool", "empty-uint16", "one-value-unchecked-end", "negative-wraps-into-uint8"])
def test_linspace_edges_torch_computes(call):
    """torch fills one value without its kernel (so without its dtype or end checks), makes an
    empty result before any check, and wraps a negative integer into uint8 (c10's rule)."""
    assert_same_as_torch(call, rtol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bins", [7, 64, 199])
def test_histogram_edges_are_torchs_linspace(dtype, bins):
    values = np.random.default_rng(bins).normal(size=300) * 13.7

    def program(m):
        out = m.histogram(m.tensor(values, dtype=getattr(m, dtype)), bins)
        return out.hist, out.bin_edges
    assert_same_as_torch(program, rtol=0)


LOG_DTYPES = [d for d in DTYPES if not d.startswith("complex")]


@pytest.mark.parametrize("dtype", LOG_DTYPES)
@pytest.mark.parametrize("start,end,steps", RANGES[:6] + [(-1.3, 2.9, 7), (2.7, 3, 1)])
@pytest.mark.parametrize("base", [10.0, 2.0, 0.5, 2.718281828])
def test_logspace_is_torch_bit_for_bit(dtype, start, end, steps, base):
    """The exponents in float64 from the ends cast to the dtype, C's pow (NumPy's vectorized
    power is an ulp off it at one value in twenty)."""
    if dtype in ("int8", "uint8", "int16"):  # exponents whose powers fit
        start, end = start % 2, end % 2
    if dtype == "float16":
        start, end = start / 30, end / 30

    def program(m):
        return m.logspace(start, end, steps, base=base, dtype=getattr(m, dtype))
    assert_same_as_torch(program, rtol=0)


@pytest.mark.parametrize("start,end", [(0.3 + 0.5j, 2.7 - 1j), (1.5, -2.0)])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_logspace_is_numpys_within_rounding(start, end, dtype):
    """Complex logspace stays NumPy's (docs/numerics.md): torch's values to a few ulp."""
    rtol = 1e-5 if dtype == "complex64" else 1e-13
    assert_same_as_torch(lambda m: m.logspace(start, end, 9, dtype=getattr(m, dtype)), rtol=rtol)


@pytest.mark.parametrize("call", [
    lambda m: m.logspace(1 + 1j, 2, 5, dtype=m.float32),
    lambda m: m.logspace(0, 1, 5, dtype=m.bool),
    lambda m: m.logspace(0, 1, 5, dtype=m.uint32),
    lambda m: m.logspace(0, 1e39, 5, dtype=m.float32),
    lambda m: m.logspace(20, 30, 1, dtype=m.int64),
    lambda m: m.logspace(m.ones(2), 3, 4),
    lambda m: m.logspace(0, 1, -1),
], ids=["complex-to-float", "bool", "uint32", "float-overflow", "one-value-overflow",
        "1d-start", "negative-steps"])
def test_logspace_refuses_as_torch(call):
    assert_same_as_torch(call)


@pytest.mark.parametrize("call", [
    lambda m: m.logspace(0, 400, 3, dtype=m.float64), lambda m: m.logspace(0, -500, 4),
    lambda m: m.logspace(2.7, 3, 3, base=-2.0), lambda m: m.logspace(-2, 3, 4, base=0.0),
    lambda m: m.logspace(0, math.inf, 4), lambda m: m.logspace(math.nan, 1, 4),
    lambda m: m.logspace(20, 30, 1, dtype=m.float16), lambda m: m.logspace(0, 1, 1, dtype=m.bool),
    lambda m: m.logspace(np.float64(-1.7), m.tensor(2.5), 5, dtype=m.int64),
    lambda m: m.logspace(1 + 1j, 2, 3),
], ids=["overflow-to-inf", "underflow", "negative-base", "zero-base", "infinite-end",
        "nan-start", "one-half-inf", "one-bool", "numpy-and-tensor-ends", "complex-ends"])
def test_logspace_edges_torch_computes(call):
    """C's pow at the edges (inf, 0, NaN of a negative base); one value is ``pow(base,
    start)`` filled without a range check for float16; NumPy numbers are Python's."""
    assert_same_as_torch(call, rtol=1e-6)


ARANGE_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8"]
# (start, end, step): fractional steps (torch's 32-byte vectors start from start + step * i and
# step from their first value in the dtype), integral ones, descending, fractional ends of an
# integer dtype (truncated), more than 32768 values (split among torch's threads)
ARANGE_RANGES = [(0.1, 0.9, 0.1), (-3.3, 7.1, 0.37), (2.5, -1.7, -0.013), (0, 10, 3),
                 (0.0, 100.0, 1.0), (-2.5, 3.7, 1.6), (0.5, 60.5, 0.25), (0.1, 4000.1, 0.1),
                 (0.1, 7000.1, 0.07), (3, 1.5, -0.5)]


@pytest.mark.parametrize("dtype", ARANGE_DTYPES)
@pytest.mark.parametrize("start,end,step", ARANGE_RANGES)
def test_arange_is_torch_bit_for_bit(dtype, start, end, step):
    if dtype in ("int8", "uint8", "int16", "float16") and max(abs(start), abs(end)) > 500:
        start, end, step = start / 100, end / 100, step / 100
    if dtype == "uint8" and min(start, end) < 0:
        start, end = abs(start), abs(end)
        step = abs(step) if end > start else -abs(step)
    assert_same_as_torch(lambda m: m.arange(start, end, step, dtype=getattr(m, dtype)), rtol=0)


def test_float32_arange_differs_from_numpys():
    """The case this reproduces: NumPy's float32 arange is an ulp off torch's here."""
    theirs = torch.arange(-3.3, 7.1, 0.37).numpy()
    assert (np.arange(-3.3, 7.1, 0.37).astype(np.float32) != theirs).any()
    np.testing.assert_array_equal(gradkit.arange(-3.3, 7.1, 0.37).numpy(), theirs)


@pytest.mark.parametrize("call", [
    lambda m: m.arange(0, 3, 0), lambda m: m.arange(0.0, 3.0, 0.0, dtype=m.int32),
    lambda m: m.arange(0, 3, 0.5, dtype=m.int64), lambda m: m.arange(3, 0, 1),
    lambda m: m.arange(-2.5, dtype=m.int64), lambda m: m.arange(0, math.inf),
    lambda m: m.arange(math.nan, 3, 0.5, dtype=m.int32),
    lambda m: m.arange(0.123456789, -math.inf, -1),
    lambda m: m.arange(0.0, 3.0, 1e-300), lambda m: m.arange(0, 10 ** 19),
    lambda m: m.arange(0, 1e20, 1e19, dtype=m.int8), lambda m: m.arange(0, 3 + 1j),
    lambda m: m.arange(0, 3, 0, dtype=m.bool), lambda m: m.arange(5, dtype=m.uint32),
], ids=["zero-step", "zero-float-step-of-int", "int64-step-truncated-to-zero", "wrong-sign",
        "int64-truncated-end-below", "infinite-end", "nan-start", "printed-range",
        "size-overflow", "int64-overflow", "int8-steps-in-int64", "complex-end", "bool-first",
        "uint32"])
def test_arange_refuses_as_torch(call):
    assert_same_as_torch(call)


@pytest.mark.parametrize("call", [
    lambda m: m.arange(0.0, 3.0, 0.5, dtype=m.int16), lambda m: m.arange(0, 500, 200, dtype=m.int8),
    lambda m: m.arange(0, 1e10, 1e9, dtype=m.int8), lambda m: m.arange(0, 2 ** 62, 2 ** 61),
    lambda m: m.arange(1 + 0j, 3), lambda m: m.arange(np.float32(0.1), 1, 0.1),
    lambda m: m.arange(m.tensor(0.3), 2, 0.2), lambda m: m.arange(0.5, 0.7, 1, dtype=m.int64),
    lambda m: m.arange(0, 0, 1), lambda m: m.arange(2.5),
], ids=["int16-step-truncated-to-zero", "int8-wraps", "int64-steps-wrap-into-int8",
        "int64-beyond-double", "complex-without-imaginary-part", "numpy-float32-start",
        "tensor-start", "int64-empty", "empty", "float-end"])
def test_arange_edges_torch_computes(call):
    """Integer dtypes step in int64 from the truncated start and step (int16's zero step
    repeats the start), then wrap into the dtype; the size comes from the numbers as given."""
    assert_same_as_torch(call, rtol=0)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_long_arange_splits_as_torchs_threads(threads):
    """Beyond 32768 values torch's kernel runs a chunk per thread, each with its own vectors
    and leftovers: gradkit follows ``set_num_threads``."""
    before = (torch.get_num_threads(), gradkit.get_num_threads())
    try:
        torch.set_num_threads(threads)
        gradkit.set_num_threads(threads)
        assert_same_as_torch(lambda m: m.arange(0.1, 7000.1, 0.07), rtol=0)
        assert_same_as_torch(lambda m: m.arange(-1.0, 1.0, 2e-5, dtype=m.float64), rtol=0)
    finally:
        torch.set_num_threads(before[0])
        gradkit.set_num_threads(before[1])


@pytest.mark.parametrize("args", [(10,), (0,), (5, 5), (-5, 5), (2, 50, 3), (50, 2, -3),
                                  (0, 8, 7), (-(2 ** 61), -(2 ** 61) + 5), (2 ** 62, 2 ** 62 + 3),
                                  (5, 0), (0, 5, -1), (0, 5, 0), (0.0, 5), (0, 5, 2.0)])
def test_integer_arange_first_line_and_general_path_agree_with_torch(args):
    """Python ints into int64 take NumPy's exact arange on arange_values' first line; bounds
    past 2**62, floats and the refusals take the general path."""
    assert_same_as_torch(lambda m: m.arange(*args))


@pytest.mark.parametrize("dtype", [None, "complex64", "complex128"])
@pytest.mark.parametrize("base", [10.0, 2.0, 0.5, -2.0, -0.5, 0.0, 1.0, 3.7])
@pytest.mark.parametrize("start,end,steps", [
    (0, 1j, 3), (1j, 2, 3), (0, 1 + 1j, 4), (-1 + 2j, 1 - 1j, 5), (-3.87 + 1.19j, 1.29 + 2.09j, 32),
    (2.81, 0.15 + 6.01j, 15), (-3.18, 4.13 + 0.1j, 1), (1.48 - 0.93j, 2j, 1), (0, 1j, 0),
    (0.3, 2.7 + 0.1j, 9)])
def test_complex_logspace_is_torch_bit_for_bit(dtype, base, start, end, steps):
    """The exponents in the complex dtype, std::pow as exp(x log base) with an unfused
    complex product; one value as std::pow(double, complex<double>) (polar for base > 0)."""
    def program(m):
        options = {} if dtype is None else {"dtype": getattr(m, dtype)}
        return m.logspace(start, end, steps, base=base, **options)
    assert_same_as_torch(program, rtol=0)


def test_complex_logspace_of_one_overflowing_value_refuses_as_torch():
    """One value filled: torch's checked conversion of std::pow's complex<double> (none for
    an empty result)."""
    assert_same_as_torch(lambda m: m.logspace(3.12 - 0.86j, 0.47, 1, base=1e30,
                                              dtype=m.complex64))
    assert_same_as_torch(lambda m: m.logspace(3.12 - 0.86j, 0.47, 0, base=1e30,
                                              dtype=m.complex64))
