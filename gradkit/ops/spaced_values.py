"""torch's CPU linspace and logspace kernels, value for value (and histogram's bin edges).

torch does not scale ``i / (steps - 1)`` as NumPy: it steps from the start for the first half
and back from the end for the rest, so a float32 linspace from NumPy is an ulp off torch's at a
third of its values, and a logspace's exponents are other doubles.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.ops.conversion import fitted
from gradkit.ops.fused import fused_multiply_add
from gradkit.ops.promotion import SCALAR_TYPE_NAMES
from gradkit.ops.unary_helpers import cpp_number

_C_COMPLEX = {"complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def spaced_arguments(name: str, start, end, steps: int, dtype, np_dtype: np.dtype):
    """(start, end, NumPy dtype) of linspace/logspace (``name``) with torch's checks: ends are
    numbers or 0-d tensors; complex ends make the default complex dtype and refuse another;
    bool and the wide unsigned dtypes have no kernel (one value or none needs none)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _number(name, start, "start"), _number(name, end, "end")
    if isinstance(start, complex) or isinstance(end, complex):
        inferred = backend.get_default_dtype().to_complex().np
        if dtype is None:
            np_dtype = inferred
        elif np_dtype.kind != "c":
            raise RuntimeError(f"torch.{name}(): inferred dtype {_C_COMPLEX[inferred.name]} "
                               "can't be safely cast to passed dtype "
                               f"{SCALAR_TYPE_NAMES.get(np_dtype.name, np_dtype.name)}")
    if steps > 1 and (np_dtype.kind == "b" or np_dtype.kind == "u" and np_dtype.itemsize > 1):
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{SCALAR_TYPE_NAMES[np_dtype.name]}'")
    return start, end, np_dtype


def _number(name: str, value, which: str):
    """A start or end as a Python number (a 0-d tensor's value; a NumPy number's)."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, "
                               f"but got {which} with {value.ndim} dimension(s).")
        return value.item()
    return value.item() if isinstance(value, np.generic) else value


def linspace_values(xp, start, end, steps: int, dtype):
    """``steps`` values from the numbers ``start`` to ``end`` in ``dtype``, as torch's kernel:
    ``start + step * i`` below ``steps // 2``, ``end - step * (steps - 1 - i)`` from there, with
    ``step = (end - start) / (steps - 1)``. Floats compute in their dtype (float16 rounds every
    operation, float32 and float64 fuse each multiply-add), integer dtypes in float64 from the
    truncated ends, truncating each value; complex numbers part by part."""
    dtype = np.dtype(dtype)
    if steps < 2:  # torch fills the start (its step would divide by zero), checks no end,
        # and its fill of one float16 takes an overflow as inf
        with np.errstate(over="ignore"):
            return xp.full(steps, _in_dtype(start, dtype, steps == 1) if steps else 0, dtype)
    start, end = _in_dtype(start, dtype), _in_dtype(end, dtype)
    if dtype.kind == "c":
        part = np.finfo(dtype).dtype
        out = xp.empty(steps, dtype)
        out.real[...] = linspace_values(xp, complex(start).real, complex(end).real, steps, part)
        out.imag[...] = linspace_values(xp, complex(start).imag, complex(end).imag, steps, part)
        return out
    compute = np.dtype(np.float64) if dtype.kind in "iu" else dtype
    number = compute.type
    first, last = number(start), number(end)
    step = number(number(last - first) / number(steps - 1))
    index = xp.arange(steps)
    from_start, from_end = index.astype(compute), (steps - 1 - index).astype(compute)
    with np.errstate(all="ignore"):  # an infinite end: inf * 0 is NaN, as in torch
        if compute == np.float16:  # c10::Half rounds each product and sum
            values = xp.where(index < steps // 2, first + step * from_start,
                              last - step * from_end)
        else:
            values = xp.where(index < steps // 2,
                              fused_multiply_add(xp, xp.full(steps, step), from_start, first),
                              fused_multiply_add(xp, xp.full(steps, -step), from_end, last))
    return (xp.trunc(values) if dtype.kind in "iu" else values).astype(dtype)


def logspace_values(start, end, steps: int, base: float, dtype) -> np.ndarray:
    """``base ** x`` for ``steps`` exponents from ``start`` to ``end``, as torch's kernel: the
    ends in ``dtype`` (integers truncated), their difference in ``dtype``, the exponents
    ``start + step * i`` (then from the end, as linspace) in float64 unfused, and C's pow in
    float64. Complex dtypes compute in the dtype as torch's kernel: the exponents as
    linspace's, then std::pow, ``exp(x * log(base))``."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        with np.errstate(all="ignore"):
            if steps < 2:  # torch fills std::pow(double base, complex<double> start)
                return np.full(steps, fitted(_pow_of_real(base, complex(start)), dtype, True)
                               if steps else 0, dtype)
            first, last = dtype.type(_in_dtype(start, dtype)), dtype.type(_in_dtype(end, dtype))
            step = (last - first) / dtype.type(steps - 1)
            index = np.arange(steps)
            exponents = np.where(index < steps // 2, first + step * index.astype(dtype),
                                 last - step * (steps - 1 - index).astype(dtype))
            return np.exp(_times_unfused(exponents.astype(dtype), np.log(dtype.type(base))))
    if steps < 2:  # torch fills pow(base, start), start not cast to the dtype first
        value = fitted(_c_pow(float(base), float(start)), dtype, True) if steps else 0
        with np.errstate(over="ignore"):  # float16 takes an overflow as inf, unchecked
            return np.full(steps, math.trunc(value) if dtype.kind in "iu" else value, dtype)
    first, last = _in_dtype(start, dtype), _in_dtype(end, dtype)
    if dtype.kind in "iu":
        difference = float(last - first)
    else:
        first, last = dtype.type(first), dtype.type(last)
        with np.errstate(all="ignore"):
            difference = float(last - first)
    step = difference / (steps - 1)
    index = np.arange(steps)
    with np.errstate(all="ignore"):
        exponents = np.where(index < steps // 2, float(first) + step * index,
                             float(last) - step * (steps - 1 - index))
        values = _c_pow_each(float(base), exponents).astype(np.float64)
        if dtype == np.float16:  # a double into c10::Half goes through float: rounded twice
            values = values.astype(np.float32)
        return (np.trunc(values) if dtype.kind in "iu" else values).astype(dtype)


def _pow_of_real(base: float, exponent: complex) -> complex:
    """C++'s std::pow(double, complex<double>): polar for a positive base, else the complex
    pow ``exp(exponent * log(base))``."""
    if base > 0:
        modulus, angle = _c_pow(base, exponent.real), exponent.imag * math.log(base)
        return complex(modulus * math.cos(angle), modulus * math.sin(angle))
    with np.errstate(all="ignore"):
        return complex(np.exp(_times_unfused(np.array([exponent]), np.log(np.complex128(
            base))))[0])


def _times_unfused(x: np.ndarray, y) -> np.ndarray:
    """x * y for complex x and a complex number y, part by part as C++'s std::complex (NumPy's
    complex product fuses, an ulp off where both parts of y are nonzero: a negative base)."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    out = np.empty(x.shape, x.dtype)
    out.real, out.imag = a * c - b * d, a * d + b * c
    return out


_GRAIN = 32768  # at::internal::GRAIN_SIZE: torch splits a longer range among its threads


def arange_values(start, end, step, dtype, threads: int) -> np.ndarray:
    """torch's arange in ``dtype`` with its checks (made on the numbers as doubles). Integer
    dtypes step in int64 from the truncated start and step; floats in float64 (float32 for
    float16) as torch's kernel, whose 32-byte vectors start from ``start + step * i`` and step
    ``base + k * step`` from the vector's first value cast to the dtype (each fused), the
    leftover values of a chunk from the start; ``threads`` chunks beyond 32768 values."""
    dtype = np.dtype(dtype)
    if dtype == np.int64 and type(start) is int and type(end) is int and type(step) is int \
            and (0 < step and start <= end or step < 0 and end <= start) \
            and max(abs(start), abs(end), abs(step)) < 2 ** 62:
        return np.arange(start, end, step, dtype=dtype)  # the common arange(n): exact
    if dtype.kind in "bc" or dtype.kind == "u" and dtype.itemsize > 1:
        raise NotImplementedError(f'"arange_cpu" not implemented for '
                                  f"'{SCALAR_TYPE_NAMES[dtype.name]}'")
    low, high, stride = (_as_double(v) for v in (start, end, step))
    if not (stride > 0 or stride < 0):  # torch's check, which a NaN fails
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"unsupported range: {cpp_number(low)} -> {cpp_number(high)}")
    if not (stride > 0 and high >= low or stride < 0 and high <= low):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = math.ceil((high - low) / stride)
    if dtype.kind in "iu":
        first, stride = _in_dtype(start, np.dtype(np.int64)), _in_dtype(step, np.dtype(np.int64))
        if dtype == np.int64:  # its size from the integers (exact beyond 2 ** 53)
            last = _in_dtype(end, dtype)
            if stride == 0:
                raise ValueError("step must be nonzero")
            size = (last - first + stride - (1 if stride > 0 else -1)) // stride
    if not 0 <= size <= 2 ** 63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    if dtype.kind in "iu":
        with np.errstate(over="ignore"):  # int64 arithmetic wraps, as C's
            return (np.int64(first) + np.int64(stride) * np.arange(size)).astype(dtype)
    compute = np.float32 if dtype == np.float16 else np.float64
    exact = 2.0 ** (np.finfo(dtype).nmant + 1)  # integers up to it are exact in the dtype
    if low.is_integer() and stride.is_integer() and \
            max(abs(low), abs(low + stride * size)) <= exact:
        return (low + stride * np.arange(size, dtype=compute)).astype(dtype)  # no rounding
    return _vectorized_steps(compute(low), compute(stride), size, dtype, threads)


def _vectorized_steps(first, stride, size: int, dtype: np.dtype, threads: int) -> np.ndarray:
    """``first + stride * i`` as torch's vectorized loop rounds it (see arange_values): per
    thread's chunk, pairs of 32-byte vectors, then the chunk's leftover values."""
    width = 32 // dtype.itemsize
    chunk = -(-size // max(1, min(threads, -(-size // _GRAIN))))
    lanes = np.arange(width, dtype=first.dtype)[None, :]
    out = np.empty(size, dtype)
    with np.errstate(all="ignore"):
        for begin in range(0, size, max(chunk, 1)):
            end = min(begin + chunk, size)
            vectors = (end - begin) // (2 * width) * 2
            starts = (begin + width * np.arange(vectors)).astype(first.dtype)
            bases = fused_multiply_add(np, np.full(vectors, stride), starts,
                                       np.full(vectors, first)).astype(dtype)
            stop = begin + vectors * width
            out[begin:stop] = fused_multiply_add(
                np, lanes, stride, bases.astype(first.dtype)[:, None]).reshape(-1)
            rest = np.arange(stop, end).astype(first.dtype)
            out[stop:end] = fused_multiply_add(np, np.full(rest.shape[0], stride), rest,
                                               np.full(rest.shape[0], first))
    return out


def _as_double(value) -> float:
    """A number as torch's ``Scalar.to<double>()``: a complex one only without an imaginary
    part."""
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        value = value.real
    return float(value)


def _c_pow(base: float, exponent: float) -> float:
    """C's pow, which torch's kernel calls (NumPy's vectorized power is an ulp off it at one
    value in twenty); Python's math.pow is C's, but raises where C returns inf or NaN."""
    try:
        return math.pow(base, exponent)
    except (OverflowError, ValueError):
        with np.errstate(all="ignore"):
            return float(np.power(base, exponent))


_c_pow_each = np.frompyfunc(_c_pow, 2, 1)


def _in_dtype(value, dtype, one_element: bool = False):
    """A number as torch's checked Scalar conversion makes it: refused out of range, truncated
    toward zero for an integer dtype (``one_element``: as ``fitted``'s)."""
    value = fitted(value, dtype, one_element)
    return math.trunc(value) if dtype.kind in "iu" and type(value) is float else value
