"""The elementwise transforms (exp, power, sigmoid, softplus, tanh, abs, affine) and softmax,
in torch's formulas."""
from __future__ import annotations

import math

from gradkit import ops
from gradkit._tensor import Tensor
from gradkit.creation import full_like
from gradkit.creation_more import broadcast_shapes
from gradkit.distributions import constraints
from gradkit.distributions.transform_base import Transform
from gradkit.distributions.utils import broadcast_all, is_number, lazy_property
from gradkit.dtype_info import finfo
from gradkit.nn.functional import softplus

__all__ = ["AbsTransform", "AffineTransform", "ExpTransform", "PowerTransform",
           "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "TanhTransform"]


class _Stateless(Transform):
    """A transform without parameters: all instances of the class are equal."""

    def __eq__(self, other) -> bool:
        return isinstance(other, type(self))

    __hash__ = Transform.__hash__


class _IncreasingOnReals(_Stateless):
    """A parameterless increasing bijection from the real line (exp, sigmoid, softplus, tanh)."""
    domain = constraints.real
    bijective = True
    sign = +1


class ExpTransform(_IncreasingOnReals):
    """y = exp(x)."""
    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class SigmoidTransform(_IncreasingOnReals):
    """y = sigmoid(x), clipped into [tiny, 1 - eps] so that the inverse stays finite."""
    codomain = constraints.unit_interval

    def _call(self, x):
        info = finfo(x.dtype)
        return ops.sigmoid(x).clamp(min=info.tiny, max=1.0 - info.eps)

    def _inverse(self, y):
        info = finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class SoftplusTransform(_IncreasingOnReals):
    """y = log(1 + exp(x))."""
    codomain = constraints.positive

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)


class TanhTransform(_IncreasingOnReals):
    """y = tanh(x)."""
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return ops.atanh(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # log(1 - tanh(x)²) written stably, as torch
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(_Stateless):
    """y = |x| (not bijective; the inverse gives the nonnegative root)."""
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class SoftmaxTransform(_Stateless):
    """y = softmax(x) along the last dim (not bijective; the inverse is log)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


def _same(a, b) -> bool:
    if is_number(a) and is_number(b):
        return a == b
    return bool((a == b).all().item())


class PowerTransform(Transform):
    """y = x ** exponent on the positive half line."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent, = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other) -> bool:
        return isinstance(other, PowerTransform) and _same(self.exponent, other.exponent)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(self.exponent.shape))

    inverse_shape = forward_shape


class AffineTransform(Transform):
    """y = loc + scale * x, its event the ``event_dim`` rightmost dims."""
    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    codomain = domain

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other) -> bool:
        return (isinstance(other, AffineTransform) and _same(self.loc, other.loc)
                and _same(self.scale, other.scale))

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if is_number(self.scale):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shape = tuple(x.shape)
        if is_number(self.scale):
            result = full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.view(tuple(result.shape[:-self.event_dim]) + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape
