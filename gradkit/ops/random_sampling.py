"""Random sampling: x.uniform_() & co., torch.bernoulli, normal, poisson, multinomial.

Every sample comes from a ``Generator`` (``generator=``, else the default one). As torch, a
sample recorded in a graph (a non-leaf written in place, or a mean/std/p tensor that requires
grad) gets a node named like torch's (``UniformBackward0``, ``NormalBackward3``) whose
gradient is zero for every input: torch's derivatives.yaml gives these ops zero derivatives
(the reparameterization ``mean + std * eps`` is the user's to write).
"""
from __future__ import annotations

import re

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.generator import check_draw_parameters, random_guard, rng_of
from gradkit.number_arguments import (number_argument, number_if_read, number_parameters,
                                      reads_as_number)
from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops._op import Op
from gradkit.ops.in_place_names import in_place_form
from gradkit.ops.inplace import inplace
from gradkit.ops.methods import tensor_method
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.multinomial_checks import checked_probabilities
from gradkit.ops.random_bounds import check_uniform_bounds, random_bounds
from gradkit.ops.unary_helpers import c_type_name, check_bound, cpp_number, scalar_type_name

_STD_BOUND = "normal expects std >= 0.0, but found std {}"


def _zeros(g, *inputs, **params):
    return zeros_like(g)


def _draw_one(xp, x, *, draw=None, node=""):
    """``draw(x)``: a sample parameterized by x (its shape and dtype, or its values)."""
    return xp.asarray(draw(x))


def _draw_two(xp, x, y, *, draw=None, node=""):
    """``draw(x, y)``: a sample parameterized by two tensors (normal's mean and std)."""
    return xp.asarray(draw(x, y))


def _sampler(name: str, forward) -> Op:
    """A sampling op named as torch's (the profiler shows ``gradkit::uniform``), recording
    the node its call names (torch's overloads: ``RandomBackward0/1/2``), zero derivatives."""
    sampler = Op(forward, name=name, broadcast=True)
    rules = (_zeros,) * (2 if forward is _draw_two else 1)
    sampler.defvjp(*rules)
    sampler.defjvp(*rules)
    sampler.node_name_rule = lambda params, arrays: params["node"]
    return sampler


_SAMPLERS = {(name, forward): _sampler(name, forward) for name, forward in (
    ("uniform", _draw_one), ("normal", _draw_one), ("normal", _draw_two),
    ("bernoulli", _draw_one), ("bernoulli", _draw_two), ("random", _draw_one),
    ("exponential", _draw_one), ("geometric", _draw_one), ("log_normal", _draw_one),
    ("cauchy", _draw_one), ("poisson", _draw_one))}


def _sampler_of(inputs: tuple, node: str) -> Op:
    """The sampler of torch's node name ``node`` for ``inputs``."""
    name = re.sub(r"(?<!^)(?=[A-Z])", "_", node.split("Backward")[0]).lower()
    return _SAMPLERS[name, _draw_two if len(inputs) == 2 else _draw_one]


def _sample(*inputs: Tensor, node: str, draw) -> Tensor:
    """``draw`` of ``inputs`` through the sampler of torch's node name ``node``."""
    return _sampler_of(inputs, node)(*inputs, draw=draw, node=node)


def _sample_in_place(*inputs: Tensor, node: str, draw) -> Tensor:
    """``_sample`` as an in-place call runs it: its events named as torch's (``uniform_``)."""
    return in_place_form(_sampler_of(inputs, node))(*inputs, draw=draw, node=node)


_sample.in_place = _sample_in_place


def _fill(tensor: Tensor, node: str, draw, *inputs: Tensor) -> Tensor:
    """Write ``draw(shape, dtype)`` into ``tensor`` (an in-place op recorded as ``node``), or
    with ``inputs`` (bernoulli_'s p), ``draw(tensor, *inputs)``."""
    if random_guard.inplace_draw is not None:  # under vmap: it may refuse or allow the write
        random_guard.inplace_draw(tensor)
    if inputs:
        return inplace(tensor, _sample, *inputs, node=node, draw=draw)
    return inplace(tensor, _sample, node=node, draw=lambda x: draw(x.shape, x.dtype))


def _as_dtype(values, dtype):
    """Real samples in ``dtype``; for a complex dtype ``values`` is a (real, imag) pair."""
    if np.dtype(dtype).kind == "c":
        real, imag = values
        return (real + 1j * imag).astype(dtype)
    return np.asarray(values).astype(dtype)


def _each_part(sample, dtype, shape):
    """One draw for a real dtype, two (real and imaginary parts) for a complex one."""
    if np.dtype(dtype).kind == "c":
        return sample(shape), sample(shape)
    return sample(shape)


def _require_floating(data, kernel: str, complex_ok: bool = True) -> None:
    if data.dtype.kind not in ("fc" if complex_ok else "f"):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(data)}\'')


def _require_continuous(data, distribution: str, name) -> None:
    if data.dtype.kind != "f":
        raise RuntimeError(f"{distribution} distribution is a continuous probability "
                           f"distribution. dtype must be a floating point but you specified "
                           f"{name(data)}")


@tensor_method("uniform_")
def uniform_(self: Tensor, from_: float = 0, to: float = 1, *, generator=None) -> Tensor:
    """Fill with samples uniform on [from_, to) (real and imaginary parts for complex)."""
    from_ = number_argument(from_, "uniform_", "from", 1, "float", optional=False)
    to = number_argument(to, "uniform_", "to", 2, "float", optional=False)
    _require_floating(self._data, "check_uniform_bounds")
    check_uniform_bounds(self._data, from_, to)
    rng = rng_of(generator, "uniform_")
    return _fill(self, "UniformBackward0", lambda shape, dtype: _as_dtype(
        _each_part(lambda s: rng.uniform(from_, to + 0.0, s), dtype, shape), dtype))


@tensor_method("normal_")
def normal_(self: Tensor, mean: float = 0, std: float = 1, *, generator=None) -> Tensor:
    """Fill with normal samples (for complex: each part with std / sqrt(2), as torch)."""
    mean = number_argument(mean, "normal_", "mean", 1, "float", optional=False)
    std = number_argument(std, "normal_", "std", 2, "float", optional=False)
    _require_floating(self._data, "normal_kernel_cpu")
    check_bound(std, _STD_BOUND)
    rng = rng_of(generator, "normal_")
    std = abs(std)  # a -0.0 (torch's zero spread) NumPy refuses as a negative scale
    part_std = std / np.sqrt(2) if self._data.dtype.kind == "c" else std
    return _fill(self, "NormalBackward0", lambda shape, dtype: _as_dtype(
        _each_part(lambda s: rng.normal(mean, part_std, s), dtype, shape), dtype))


@tensor_method("bernoulli_")
@number_parameters("bernoulli_", True, p="float|Tensor")
def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 (probability ``p``, a number or a tensor expanding to self) or 0."""
    rng = rng_of(generator, "bernoulli_")
    if isinstance(p, Tensor):
        check_draw_parameters(p)
        for kernel, data, fine in (("self_", self._data, "fbiu"), ("p_", p._data, "f")):
            if data.dtype.kind not in fine:
                raise NotImplementedError(f'"bernoulli_tensor_cpu_{kernel}" not implemented '
                                          f"for '{scalar_type_name(data)}'")
        _expandable(p._data.shape, self._data.shape)
        return _fill(self, "BernoulliBackward1",
                     lambda x, q: _bernoulli(rng, q, x.shape, x.dtype), p)
    if self._data.dtype.kind == "c":
        raise NotImplementedError(f'"bernoulli_scalar_cpu_" not implemented for '
                                  f"'{scalar_type_name(self._data)}'")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={cpp_number(p)}")
    return _fill(self, "BernoulliBackward2",
                 lambda shape, dtype: (rng.random(shape) < p).astype(dtype))


def _expandable(shape: tuple, target: tuple) -> None:
    """torch's expand error when ``shape`` does not expand to ``target``."""
    for i in range(1, len(shape) + 1):
        if i > len(target) or shape[-i] not in (1, target[-i]):
            existing = shape[-i]
            wanted = target[-i] if i <= len(target) else existing
            raise RuntimeError(
                f"The expanded size of the tensor ({wanted}) must match the existing size "
                f"({existing}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(shape)}")


def _bernoulli(rng, p, shape, dtype):
    p = backend.to_device(p, backend.CPU)
    if ((p < 0) | (p > 1) | np.isnan(p)).any():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    return (rng.random(shape) < np.broadcast_to(p, shape)).astype(dtype)


_TO_UNGIVEN = object()  # random_(from) reads [0, from); random_(from, None) [from, top]


@tensor_method("random_")
def random_(self: Tensor, from_: int | None = None, to: int | None = _TO_UNGIVEN, *,
            generator=None) -> Tensor:
    """Fill with integers uniform on [from_, to), [0, from_), [from_, the default range's top]
    (``to=None`` given) or the dtype's default range."""
    up_to_max = to is None and from_ is not None
    to = None if to is _TO_UNGIVEN else to
    if self._data.dtype.kind == "c":
        raise NotImplementedError(f'"random_kernel_cpu" not implemented for '
                                  f"'{scalar_type_name(self._data)}'")
    from_, to = (number_if_read(b, "int") for b in (from_, to))  # torch's int parameters
    for bound in (from_, to):
        if bound is not None and not isinstance(bound, (int, np.integer)):
            raise TypeError(f"random_(): argument 'from' must be int, not "
                            f"{type(bound).__name__}")
    low, high = random_bounds(self._data, from_, to, up_to_max)
    rng = rng_of(generator, "random_")
    node = f"RandomBackward{2 if from_ is None else 1 if to is None and not up_to_max else 0}"
    return _fill(self, node, lambda shape, dtype: rng.integers(low, high, shape).astype(dtype))


@tensor_method("exponential_")
def exponential_(self: Tensor, lambd: float = 1, *, generator=None) -> Tensor:
    """Fill with exponential samples of rate ``lambd``."""
    lambd = number_argument(lambd, "exponential_", "lambd", 1, "float", optional=False)
    _require_continuous(self._data, "Exponential", scalar_type_name)
    if not lambd > 0:
        raise RuntimeError("exponential_ expects lambda > 0.0, but found "
                           f"lambda={cpp_number(lambd)}")
    rng = rng_of(generator, "exponential_")
    return _fill(self, "ExponentialBackward0",
                 lambda shape, dtype: rng.exponential(1 / lambd, shape).astype(dtype))


@tensor_method("geometric_")
def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    # (a bool p prints as 1)
    p = float(number_argument(p, "geometric_", "p", 1, "float", optional=False))
    if self._data.dtype.kind not in "fiu":
        raise NotImplementedError(f'"geometric_cpu" not implemented for '
                                  f"'{scalar_type_name(self._data)}'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={cpp_number(p)}")
    rng = rng_of(generator, "geometric_")
    return _fill(self, "GeometricBackward0",
                 lambda shape, dtype: rng.geometric(p, shape).astype(dtype))


@tensor_method("log_normal_")
def log_normal_(self: Tensor, mean: float = 1, std: float = 2, *, generator=None) -> Tensor:
    """Fill with exp(N(mean, std)) samples."""
    mean = number_argument(mean, "log_normal_", "mean", 1, "float", optional=False)
    std = number_argument(std, "log_normal_", "std", 2, "float", optional=False)
    _require_floating(self._data, "log_normal_cpu", complex_ok=False)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={cpp_number(std)}")
    rng = rng_of(generator, "log_normal_")
    return _fill(self, "LogNormalBackward0",
                 lambda shape, dtype: rng.lognormal(mean, std, shape).astype(dtype))


@tensor_method("cauchy_")
def cauchy_(self: Tensor, median: float = 0, sigma: float = 1, *, generator=None) -> Tensor:
    """Fill with Cauchy samples centred on ``median`` with scale ``sigma``."""
    median = number_argument(median, "cauchy_", "median", 1, "float", optional=False)
    sigma = number_argument(sigma, "cauchy_", "sigma", 2, "float", optional=False)
    _require_continuous(self._data, "Cauchy", c_type_name)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={cpp_number(sigma)}")
    rng = rng_of(generator, "cauchy_")
    return _fill(self, "CauchyBackward0",
                 lambda shape, dtype: (median + sigma * rng.standard_cauchy(shape)).astype(dtype))


# -- out of place --------------------------------------------------------------------------

@tensor_method()
@number_parameters("bernoulli", True, p="float")
def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """1 with probability ``input`` (elementwise), else 0, in input's dtype; with ``p`` a
    number, 1 with probability p in input's shape and dtype (no graph: torch records a node
    whose backward is not implemented)."""
    check_draw_parameters(input)
    if p is not None:  # (a 0-d tensor p is read as the float p, as torch's parser)
        return bernoulli_(Tensor._make(input._data.copy()), number_if_read(p, "float"),
                          generator=generator)
    rng = rng_of(generator, "bernoulli")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for '
                                  f"'{scalar_type_name(input._data)}'")
    return _sample(input, node="BernoulliBackward0",
                   draw=lambda q: _bernoulli(rng, q, q.shape, q.dtype))


def _normal_signature(mean, std=1.0, size=None, **_) -> bool:
    """Whether torch's normal has a signature for the call: a size with two numbers (0-d
    tensors read as such), else a tensor mean or std."""
    tensors = (isinstance(v, Tensor) and not (size is not None and reads_as_number(v, "float"))
               for v in (mean, std))
    return any(tensors) != (size is not None)


@number_parameters("normal", True, _normal_signature, mean="float|Tensor", std="float|Tensor")
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Normal samples: ``normal(mean, std)`` with either or both tensors (broadcast; torch's
    zero gradients for them), or ``normal(mean, std, size)`` with two numbers."""
    rng = rng_of(generator, "normal")
    if size is not None:  # normal(float mean, float std, size): 0-d tensors read as numbers
        mean, std = (number_if_read(v, "float") for v in (mean, std))
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_is_tensor or std_is_tensor):
        check_bound(std, _STD_BOUND)
        out = Tensor._make(np.zeros(tuple(size), backend.to_numpy_dtype(
            dtype or backend.get_default_dtype())))
        out = normal_(out, mean, std, generator=generator)
        out = out.to(device) if device is not None else out
        return out._set_requires_grad(requires_grad) if requires_grad else out
    if std_is_tensor and std._data.dtype.kind == "c":
        raise RuntimeError("normal expects standard deviation to be non-complex")
    check_draw_parameters(*(v for v in (mean, std) if isinstance(v, Tensor)))
    if mean_is_tensor and std_is_tensor:
        _require_floating(mean._data, "normal_kernel_cpu")
        shape = _broadcast_shape(mean._data, std._data)
        return _sample(mean, std, node="NormalBackward3",
                        draw=lambda m, s: _normal(rng, m, s, shape, m.dtype))
    if mean_is_tensor:
        _require_floating(mean._data, "normal_kernel_cpu")
        check_bound(std, _STD_BOUND)
        return _sample(mean, node="NormalBackward1",
                       draw=lambda m: _normal(rng, m, std, m.shape, m.dtype))
    _require_floating(std._data, "normal_kernel_cpu")
    return _sample(std, node="NormalBackward2",
                   draw=lambda s: _normal(rng, mean, s, s.shape, s.dtype))


def _broadcast_shape(x, y) -> tuple:
    try:
        return np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise RuntimeError(_broadcast_message([x, y])) from None


def _normal(rng, mean, std, shape, dtype):
    mean, std = (backend.to_device(v, backend.CPU) if hasattr(v, "shape") else v
                 for v in (mean, std))
    if hasattr(std, "shape") and not (np.asarray(std) >= 0).all():  # NaN refused, as torch
        raise RuntimeError("normal expects all elements of std >= 0.0")
    return (mean + std * rng.standard_normal(shape)).astype(dtype)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with rates ``input`` (in input's floating dtype)."""
    rng = rng_of(generator, "poisson")
    check_draw_parameters(input)
    _require_floating(input._data, "poisson_cpu", complex_ok=False)
    rates = backend.to_device(input._data, backend.CPU)
    if not (rates >= 0).all():  # NaN refused, as torch
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _sample(input, node="PoissonBackward0",
                   draw=lambda r: np.asarray(_poisson(rng, rates), dtype=r.dtype))


_POISSON_MAX = 9.223372006484771e18  # NumPy's largest rate


def _poisson(rng, rates: np.ndarray) -> np.ndarray:
    """Poisson draws as torch's: a rate from 2**63 on (inf too) draws its int64 overflow,
    -2**63; up to it NumPy's largest rate stands in (the draws are about the rate)."""
    rates = rates.astype(np.float64)
    big = rates >= 2.0 ** 63
    draws = rng.poisson(np.where(big, 0.0, np.minimum(rates, _POISSON_MAX)))
    return np.where(big, -2.0 ** 63, draws)


@tensor_method()
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None) -> Tensor:
    """Indices drawn from the categories of each row, weighted by ``input`` (int64)."""
    rng = rng_of(generator, "multinomial")
    check_draw_parameters(input)
    data = input._data
    rows = checked_probabilities(data, num_samples, replacement)
    if replacement:
        cdf = np.cumsum(rows, -1)
        draws = rng.random((rows.shape[0], num_samples)) * cdf[:, -1:]
        picks = np.stack([np.searchsorted(c, d, side="right") for c, d in zip(cdf, draws)])
        picks = np.minimum(picks, rows.shape[-1] - 1)
    else:  # torch's way: the largest p / Exp(1) keys, the order they are drawn in
        keys = rows / rng.exponential(size=rows.shape)
        picks = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    picks = picks.reshape(data.shape[:-1] + (num_samples,)).astype(np.int64)
    return Tensor._make(backend.to_device(picks, input.device))
