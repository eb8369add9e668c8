"""The gamma family and Bessel functions as ops: lgamma, digamma, polygamma, mvlgamma, i0
(and the i1 of its derivative), with torch's derivative chain lgamma' = digamma,
digamma' = polygamma(1, .), polygamma(n, .)' = polygamma(n + 1, .), i0' = i1."""
from __future__ import annotations

import math

import numpy as np

from gradkit.number_arguments import number_argument, numbers_reader
from gradkit._tensor import Tensor
from gradkit.backend import get_default_dtype
from gradkit.ops.methods import register
from gradkit.ops.piecewise import where
from gradkit.ops.bessel import modified_bessel_i0_array
from gradkit.ops.special_gamma import (
    digamma_array, lgamma_array, polygamma_array, trigamma_array)
from gradkit.ops.special_series import i1_array
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import kernel_error, refuse_half

_LOG_PI = math.log(math.pi)


@unary(floating=True, method=True, inplace=True, complex_error=kernel_error("lgamma_vml_cpu"))
def lgamma(xp, x):
    """log|gamma(x)| elementwise (inf at 0 and the negative integers)."""
    return lgamma_array(xp, x)


@unary(floating=True, method=True, inplace=True, complex_error=kernel_error("digamma"))
def digamma(xp, x):
    """psi(x), the derivative of lgamma (-+inf at +-0, NaN at negative integers)."""
    return digamma_array(xp, x)


_KERNELS = {0: "digamma", 1: "trigamma"}


def _check_order(n) -> None:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


@unary(floating=True, name="polygamma")
def _polygamma(xp, x, n=None):
    if n is None:  # (the method's n is required)
        raise TypeError('polygamma() missing 1 required positional arguments: "n"')
    if x.dtype.kind == "c":
        raise kernel_error(_KERNELS.get(n, "polygamma"))(x)
    _check_order(n)
    if n == 0:
        return digamma_array(xp, x)
    if n == 1:
        return trigamma_array(xp, x)
    return polygamma_array(xp, n, x)


lgamma.defderivative(lambda x: digamma(x))
digamma.defderivative(lambda x: _polygamma(x, 1))
_polygamma.defderivative(lambda x, n: _polygamma(x, n + 1))
# x.polygamma(n) and x.polygamma_(n): self first; torch.polygamma(n, input) below
_polygamma.numbers = numbers_reader("polygamma", n=(1, "int"))  # (the method's n)
register(_polygamma, "polygamma", True, inplace=True)


def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002 - torch's names
    """The n-th derivative of digamma at ``input`` (n = 0 is digamma)."""
    n = number_argument(n, "polygamma", "n", 1, "int")
    _check_order(n)
    return _polygamma(input, n)


@unary(method=True, inplace=True, contiguous=True)  # torch sums a stacked dim: C order
def mvlgamma(xp, x, p=None):
    """The multivariate log-gamma of dimension p: sum_j lgamma(x + (1 - j) / 2) over
    j = 1..p, plus p (p - 1) / 4 log(pi)."""
    if p is None:  # (torch requires p; a None given is refused by its reader)
        raise TypeError('mvlgamma() missing 1 required positional arguments: "p"')
    if x.dtype.kind == "c":
        raise kernel_error("arange_cpu")(x)
    if x.dtype.kind == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if x.dtype.kind in "iu":
        x = x.astype(get_default_dtype().np)
    shifts = np.arange(-p * 0.5 + 0.5, 0.5, 0.5)  # torch's order of the terms
    total = sum(lgamma_array(xp, x + x.dtype.type(s)) for s in shifts)
    return (total + x.dtype.type(p * (p - 1) / 4 * _LOG_PI)).astype(x.dtype)


def _mvlgamma_derivative(x, p=1):
    return sum(digamma(x + float(s)) for s in np.arange(-p * 0.5 + 0.5, 0.5, 0.5))


mvlgamma.defderivative(_mvlgamma_derivative)
mvlgamma.numbers = numbers_reader("mvlgamma", p=(2, "int"))


@unary(floating=True, method=True, inplace=True, complex_error=kernel_error("i0_vml_cpu"))
def i0(xp, x):
    """The modified Bessel function of the first kind, order 0."""
    return modified_bessel_i0_array(xp, x)  # torch's calc_i0 is the same Chebyshev series


@unary(save=("x", "result"), floating=True, name="special_i1",
       complex_error=kernel_error("i1_cpu"))
def i1(xp, x):
    """The modified Bessel function of the first kind, order 1 (torch.special.i1)."""
    return i1_array(xp, x)


i0.defderivative(lambda x: i1(x))


def _i1_derivative(x, out):
    """torch's i1_backward: i0(x) - i1(x) / x, its limit 1/2 where |x| <= eps (x replaced by
    eps there, so that the unused branch stays finite). No Half kernel."""
    refuse_half(x, "i1_backward")
    eps = float(np.finfo(x.dtype).eps)
    not_tiny = abs(x) > eps
    safe = where(not_tiny, x, eps)
    return where(not_tiny, i0(safe) - out * (1 / safe), 0.5)  # torch: times the reciprocal


i1.defderivative(_i1_derivative)
