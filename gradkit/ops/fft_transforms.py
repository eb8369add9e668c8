"""The transforms of ``gradkit.fft`` (torch.fft): each is ATen's composition of the three FFT
primitives (ops/fft_primitives.py) with the dtype promotion, cropping / zero padding to ``n``
or ``s``, and conjugations torch uses, so values, dtypes, graphs and errors match torch's."""
from __future__ import annotations

from collections.abc import Sequence

from gradkit._tensor import Tensor
from gradkit.ops.complex import conj
from gradkit.ops.fft_primitives import (
    check_points, check_real, fft_c2c, fft_c2r, fft_r2c, norm_mode, promote, resize, wrap_dim)


def _checked_input(function: str, x, n=None) -> None:
    """Python-argument errors as torch's argument parser words them."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{function}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool)):
        raise TypeError(f"fft_{function}(): argument 'n' must be int, not {type(n).__name__}")


# -- one dimension ------------------------------------------------------------------------------

def _c2c(x, n, dim, norm, forward):
    dim = wrap_dim(dim, x.ndim)
    size = x.shape[dim] if n is None else n
    check_points(size)
    if n is not None:
        x = resize(x, (dim,), (n,))
    return fft_c2c(x, dim=(dim,), normalization=norm_mode(norm, forward), forward=forward)


def _r2c(function, x, n, dim, norm, forward, onesided):
    check_real(x, function)
    x = promote(x)
    dim = wrap_dim(dim, x.ndim)
    size = x.shape[dim] if n is None else n
    check_points(size)
    if n is not None:
        x = resize(x, (dim,), (n,))
    out = fft_r2c(x, dim=(dim,), normalization=norm_mode(norm, forward), onesided=onesided)
    return out if forward else conj(out)  # torch: the inverse is the conjugate of a forward r2c


def _c2r(x, n, dim, norm, forward):
    x = promote(x, require_complex=True)
    dim = wrap_dim(dim, x.ndim)
    size = 2 * (x.shape[dim] - 1) if n is None else n
    check_points(size)
    if n is not None:
        x = resize(x, (dim,), (size // 2 + 1,))
    mode = norm_mode(norm, forward)
    if forward:  # hfft: the c2r primitive only runs inverse transforms
        x = conj(x)
    return fft_c2r(x, dim=(dim,), normalization=mode, last_dim_size=size)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The 1-D discrete Fourier transform of ``input`` along ``dim`` (complex output)."""
    _checked_input("fft", input, n)
    if input.is_complex():
        return _c2c(input, n, dim, norm, forward=True)
    return _r2c("fft", input, n, dim, norm, forward=True, onesided=False)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The 1-D inverse discrete Fourier transform of ``input`` along ``dim``."""
    _checked_input("ifft", input, n)
    if input.is_complex():
        return _c2c(input, n, dim, norm, forward=False)
    return _r2c("ifft", input, n, dim, norm, forward=False, onesided=False)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-sided FFT of real ``input``: frequencies 0 .. n // 2 along ``dim``."""
    _checked_input("rfft", input, n)
    return _r2c("rfft", input, n, dim, norm, forward=True, onesided=True)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The real signal of ``n`` points (default 2 * (m - 1)) whose one-sided FFT is ``input``."""
    _checked_input("irfft", input, n)
    return _c2r(input, n, dim, norm, forward=False)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The (real) FFT of a Hermitian signal given by its one-sided half ``input``."""
    _checked_input("hfft", input, n)
    return _c2r(input, n, dim, norm, forward=True)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-sided inverse FFT of real ``input`` (the inverse of ``hfft``)."""
    _checked_input("ihfft", input, n)
    return _r2c("ihfft", input, n, dim, norm, forward=False, onesided=True)


# -- several dimensions -------------------------------------------------------------------------

def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, Sequence) else (value,)


def _shape_and_dims(x, s, dim) -> tuple[tuple, tuple]:
    """torch's canonicalize_fft_shape_and_dim_args: the signal size along each transformed dim
    (-1 in ``s``: the input's size) and those dims (default: the last len(s) dims, or all)."""
    ndim = x.ndim
    if dim is not None:
        dims = tuple(wrap_dim(d, ndim) for d in _as_tuple(dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = _as_tuple(s)
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dim is None:
            dims = tuple(range(ndim - len(s), ndim))
        shape = tuple(x.shape[d] if n == -1 else n for n, d in zip(s, dims))
    else:
        dims = tuple(range(ndim)) if dim is None else dims
        shape = tuple(x.shape[d] for d in dims)
    for n in shape:
        check_points(n)
    return shape, dims


def _nd_c2c(x, s, dim, norm, forward):
    shape, dims = _shape_and_dims(x, s, dim)
    x = resize(promote(x, require_complex=True), dims, shape)
    return fft_c2c(x, dim=dims, normalization=norm_mode(norm, forward), forward=forward)


def _c2r_shape_and_dims(function, x, s, dim) -> tuple[tuple, tuple, int]:
    """The one-sided input sizes, the dims, and the output's size along the last dim."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{function} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or _as_tuple(s)[-1] == -1 else shape[-1]
    check_points(last)
    return shape[:-1] + (last // 2 + 1,), dims, last


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D discrete Fourier transform over ``dim`` (default: all, or the last len(s))."""
    _checked_input("fftn", input)
    return _nd_c2c(input, s, dim, norm, forward=True)


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D inverse discrete Fourier transform over ``dim``."""
    _checked_input("ifftn", input)
    return _nd_c2c(input, s, dim, norm, forward=False)


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D FFT of real ``input``, one-sided along the last transformed dim."""
    _checked_input("rfftn", input)
    check_real(input, "rfftn", "real-valued")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = resize(promote(input), dims, shape)
    return fft_r2c(x, dim=dims, normalization=norm_mode(norm, True), onesided=True)


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D inverse FFT of real ``input``, one-sided along the last transformed dim."""
    _checked_input("ihfftn", input)
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = resize(promote(input), dims, shape)
    mode = norm_mode(norm, False)
    half = conj(fft_r2c(x, dim=dims[-1:], normalization=mode, onesided=True))
    if len(dims) == 1:
        return half
    return fft_c2c(half, dim=dims[:-1], normalization=mode, forward=False)


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D inverse of ``rfftn``: a real output, ``s[-1]`` (default 2 * (m - 1)) points long
    along the last transformed dim."""
    _checked_input("irfftn", input)
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = resize(promote(input, require_complex=True), dims, shape)
    return fft_c2r(x, dim=dims, normalization=norm_mode(norm, False), last_dim_size=last)


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D FFT of a Hermitian signal given by its one-sided half ``input`` (real output)."""
    _checked_input("hfftn", input)
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = resize(promote(input, require_complex=True), dims, shape)
    mode = norm_mode(norm, True)
    if len(dims) > 1:
        x = fft_c2c(x, dim=dims[:-1], normalization=mode, forward=True)
    return fft_c2r(conj(x), dim=dims[-1:], normalization=mode, last_dim_size=last)


def _in_two_dims(transform, name: str):
    """``transform`` (an n-D one) with ``dim=(-2, -1)`` by default, as torch's ``name``."""
    def two_dimensional(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
        _checked_input(name, input)
        if dim is None:  # (torch's dim here is int[1], not optional as the n-D forms')
            raise TypeError(f"fft_{name}(): argument 'dim' must be tuple of ints, not NoneType")
        return transform(input, s, dim, norm)
    two_dimensional.__name__ = two_dimensional.__qualname__ = name
    two_dimensional.__doc__ = f"``{transform.__name__}`` over the last two dims by default."
    return two_dimensional


fft2, ifft2 = _in_two_dims(fftn, "fft2"), _in_two_dims(ifftn, "ifft2")
rfft2, irfft2 = _in_two_dims(rfftn, "rfft2"), _in_two_dims(irfftn, "irfft2")
hfft2, ihfft2 = _in_two_dims(hfftn, "hfft2"), _in_two_dims(ihfftn, "ihfft2")
