"""torch's three FFT primitives (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``), each an op with
derivatives.yaml's rules, and the argument checks every ``gradkit.fft`` transform shares.

The transforms (ops/fft_transforms.py) are compositions of these, as in ATen's SpectralOps.cpp,
so their graphs hold torch's nodes (``FftR2CBackward0``, ``FftC2CBackward0``,
``FftC2RBackward0``) and their gradients follow torch's formulas. ``normalization`` is ATen's
fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the signal size over the transformed dims.
NumPy's (and CuPy's) FFT is unnormalized with ``norm="backward"`` forwards and
``norm="forward"`` inverses; the scale is applied here.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.backend import get_default_dtype, to_numpy_dtype
from gradkit.ops._op import op
from gradkit.ops.arithmetic import add
from gradkit.ops.complex import real
from gradkit.ops.conversion import astype
from gradkit.ops.padding import pad
from gradkit.ops.shape import _normalize_dim
from gradkit.ops.slicing import _slice
from gradkit.ops.unary_helpers import scalar_type_name

NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
_SCALAR_NAMES = {"float16": "Half", "bfloat16": "BFloat16"}


def _scaled(out, signal_numel: int, normalization: int):
    if normalization == NORM_NONE:
        return out
    factor = 1 / math.sqrt(signal_numel) if normalization == NORM_BY_ROOT_N else 1 / signal_numel
    factor = out.real.dtype.type(factor)  # a scalar of out's precision keeps complex64
    if out.dtype.kind != "c":
        return out * factor
    # torch's FFT scales the real and imaginary parts apart: a complex product would give
    # inf * 0 = NaN in the other part of an infinite entry (breadth seed 88869)
    scaled = out.copy()
    for part in (scaled.real, scaled.imag):  # views written in place (CuPy's take no .real =)
        part *= factor
    return scaled


def _numel(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


def _by_stride(strides, dims) -> list:
    """ATen's _sort_dims: ``dims`` by decreasing stride (a stable sort, as std::sort's
    insertion sort of so few dims)."""
    return sorted(dims, key=lambda d: -strides[d])


def _exec_fft_strides(shape, in_strides, dims) -> tuple:
    """The element strides of ATen's _exec_fft output: contiguous in the order of the batch
    dims (by decreasing input stride), then the transformed ``dims`` as given."""
    transformed = set(dims)
    order = _by_stride(in_strides, _partition(list(range(len(shape))),
                                              lambda d: d not in transformed)) + list(dims)
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d], step = step, step * max(shape[d], 1)
    return tuple(strides)


def _partition(items: list, keep) -> list:
    """The items ``keep`` accepts, in the order libstdc++'s (unstable) std::partition leaves
    them: from the front, each rejected one swaps with the last accepted one from the back."""
    first, last = 0, len(items)
    while True:
        while first != last and keep(items[first]):
            first += 1
        if first == last:
            return items[:first]
        last -= 1
        while first != last and not keep(items[last]):
            last -= 1
        if first == last:
            return items[:first]
        items[first], items[last] = items[last], items[first]
        first += 1


def _laid_out(xp, out, strides):
    """``out``'s values in a new array of those element strides (torch's layout: a reshape of
    it then copies or views as torch's does)."""
    laid = xp.lib.stride_tricks.as_strided(xp.empty(out.size, out.dtype), out.shape,
                                           [s * out.itemsize for s in strides])
    laid[...] = out
    return laid


def _elements(strides, itemsize) -> list:
    return [s // itemsize for s in strides]


@op(name="fft_c2c", linear=True, node_name="FftC2CBackward0")
def fft_c2c(xp, x, *, dim, normalization, forward):
    """The complex-to-complex DFT of x over ``dim`` (the inverse when not ``forward``)."""
    if not dim or x.size == 0:
        return x.copy()
    transform = xp.fft.fftn if forward else xp.fft.ifftn
    out = transform(x, axes=dim, norm="backward" if forward else "forward")
    in_strides = _elements(x.strides, x.itemsize)
    strides = _exec_fft_strides(x.shape, in_strides, _by_stride(in_strides, dim))
    out = _scaled(out.astype(x.dtype, copy=False), _numel(x.shape, dim), normalization)
    return _laid_out(xp, out, strides)


# saves x, as torch does (node._saved_self), for its size along the last transformed dim
@op(name="fft_r2c", save="x", linear=True, node_name="FftR2CBackward0")
def fft_r2c(xp, x, *, dim, normalization, onesided):
    """The DFT of real x over ``dim``; ``onesided``: only the first n // 2 + 1 frequencies of
    the last transformed dim (the others are their conjugates)."""
    if x.dtype.kind == "c":
        raise RuntimeError("Only supports floating-point dtypes, but found: "
                           f"{scalar_type_name(x)}")
    shape = list(x.shape)
    if onesided:
        shape[dim[-1]] = shape[dim[-1]] // 2 + 1
    complex_dtype = _COMPLEX_OF[x.dtype.name]
    if x.size == 0:
        return xp.zeros(shape, dtype=complex_dtype)
    out = (xp.fft.rfftn if onesided else xp.fft.fftn)(x, axes=dim, norm="backward")
    in_strides = _elements(x.strides, x.itemsize)
    strides = _exec_fft_strides(shape, in_strides, _by_stride(in_strides, dim[:-1]) + [dim[-1]])
    out = _scaled(out.astype(complex_dtype, copy=False), _numel(x.shape, dim), normalization)
    return _laid_out(xp, out, strides)


@op(name="fft_c2r", linear=True, node_name="FftC2RBackward0")
def fft_c2r(xp, x, *, dim, normalization, last_dim_size):
    """The real signal of ``last_dim_size`` points along ``dim[-1]`` whose one-sided spectrum
    (over ``dim``) is x: the inverse DFT of x's Hermitian completion, unnormalized."""
    sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    shape = list(x.shape)
    shape[dim[-1]] = last_dim_size
    real_dtype = x.real.dtype
    if x.size == 0:
        return xp.zeros(shape, dtype=real_dtype)
    out = xp.fft.irfftn(x, s=sizes, axes=dim, norm="forward")
    # ATen: a c2c transform over the other dims first, then a c2r one over the last
    in_strides = _elements(x.strides, x.itemsize)
    if len(dim) > 1:
        in_strides = _exec_fft_strides(x.shape, in_strides, _by_stride(in_strides, dim[:-1]))
    strides = _exec_fft_strides(shape, in_strides, [dim[-1]])
    out = _scaled(out.astype(real_dtype, copy=False), math.prod(sizes), normalization)
    return _laid_out(xp, out, strides)


def _pad_along(g, dim: int, before: int, after: int):
    """g with zeros before and after its values along ``dim`` (F.pad lists pads from the last
    dim back, so ``dim``'s pair comes last)."""
    return pad(g, (0, 0) * (g.ndim - 1 - dim) + (before, after))


def _r2c_backward(g, x, dim, normalization, onesided):
    """torch's fft_r2c_backward: zero-fill the dropped half, inverse C2C, real part."""
    last = dim[-1]
    missing = x.shape[last] - g.shape[last]
    if onesided and missing > 0:
        g = _pad_along(g, last, 0, missing)
    return real(fft_c2c(g, dim=dim, normalization=normalization, forward=False))


def _c2r_backward(g, dim, normalization, last_dim_size):
    """torch's fft_c2r_backward: one-sided R2C, then frequencies 1 .. n - (n // 2 + 1), whose
    mirror images fall outside the half spectrum, count twice."""
    g_in = fft_r2c(g, dim=dim, normalization=normalization, onesided=True)
    last = dim[-1]
    doubled = g.shape[last] - g_in.shape[last]
    if doubled <= 0:
        return g_in
    twice = _slice(g_in, dim=last, start=1, end=1 + doubled, step=1)
    return add(g_in, _pad_along(twice, last, 1, g_in.shape[last] - 1 - doubled))


fft_c2c.defvjp(lambda g, dim, normalization, forward:
               fft_c2c(g, dim=dim, normalization=normalization, forward=not forward))
fft_r2c.defvjp(_r2c_backward)
fft_c2r.defvjp(_c2r_backward)


# -- the arguments every transform checks, with torch's messages --------------------------------

def norm_mode(norm: str | None, forward: bool) -> int:
    """ATen's norm_from_string: the scaling of a transform run in direction ``forward``."""
    if norm is None or norm == "backward":
        return NORM_NONE if forward else NORM_BY_N
    if norm == "forward":
        return NORM_BY_N if forward else NORM_NONE
    if norm == "ortho":
        return NORM_BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def wrap_dim(dim: int, ndim: int) -> int:
    """``dim`` in [0, ndim), refusing a 0-d tensor as torch's wrap_scalar=False does."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _normalize_dim(dim, ndim)


def promote(x, require_complex: bool = False):
    """x in a dtype the FFT supports: integers and bools to the default float dtype (torch's
    promote_tensor_fft), the complex dtype of that precision when ``require_complex``."""
    dtype = x._data.dtype
    if dtype.kind == "c":
        return x
    floating = dtype.kind == "f" or dtype.name == "bfloat16"
    name = dtype.name if floating else to_numpy_dtype(get_default_dtype()).name
    if name not in _COMPLEX_OF:
        raise RuntimeError(f"Unsupported dtype {_SCALAR_NAMES.get(name, name)}")
    target = _COMPLEX_OF[name] if require_complex else name
    return x if target == dtype.name else astype(x, dtype=np.dtype(target))


def check_real(x, function_name: str, what: str = "real") -> None:
    """rfft & co. take real input only (``what``: torch says "real-valued" for the n-d ones)."""
    if x._data.dtype.kind == "c":
        raise RuntimeError(f"{function_name} expects a {what} input tensor, but got "
                           f"{scalar_type_name(x._data)}")


def check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def resize(x, dims, sizes):
    """x cropped (from index 0) or zero-padded at the end so x.shape[dims[i]] == sizes[i]."""
    widths = [0] * (2 * x.ndim)
    for d, size in zip(dims, sizes):
        have = x.shape[d]
        if have > size:
            x = _slice(x, dim=d, start=0, end=size, step=1)
        elif have < size:
            widths[2 * (x.ndim - 1 - d) + 1] = size - have
    return pad(x, tuple(widths)) if any(widths) else x
