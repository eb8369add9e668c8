"""Weight initialisation, in place and without recording a graph (torch.nn.init).

>>> w = gradkit.empty(3, 5)
>>> gradkit.nn.init.kaiming_uniform_(w, a=math.sqrt(5)).shape
gradkit.Size([3, 5])
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from gradkit import backend, linalg
from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.generator import rng_of as _rng_of  # private: nn.init lists only torch.nn.init names

_LINEAR_GAINS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                 "conv_transpose2d", "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (torch's table)."""
    if nonlinearity in _LINEAR_GAINS:
        return 1  # an int, as torch's
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field = int(np.prod(tensor.shape[2:])) if tensor.dim() > 2 else 1
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _write(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Copy host ``values`` into ``tensor`` (on its device), recording no graph."""
    values = backend.to_device(values.astype(tensor._data.dtype), tensor.device)
    with no_grad():
        tensor.copy_(Tensor._make(values))
    return tensor


def _fill_from(tensor: Tensor, sample, generator=None) -> Tensor:
    """Overwrite ``tensor`` with ``sample(rng, shape)`` drawn from ``generator`` (a
    gradkit.Generator; the default one when None), drawn on the host: the same numbers on
    every device for a seed."""
    return _write(tensor, np.asarray(sample(_rng_of(generator, "init"), tuple(tensor.shape))))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of U(a, b) (``tensor.uniform_``: torch's errors for a > b or an
    integer tensor)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std²) (``tensor.normal_``)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with N(mean, std²) samples restricted to [a, b], torch's way: normal draws
    redrawn while outside when most of the mass is inside, else uniform draws on [a, b] kept
    with probability pdf / peak (so a far or narrow interval still ends)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    rng = _rng_of(generator, "normal_")
    dtype = np.dtype(tensor._data.dtype)
    if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
        normal_(tensor, mean, std, generator)  # the first draw, and torch's dtype check
        low, high = dtype.type(a), dtype.type(b)  # bounds as the tensor holds them

        def redraw(count):
            return rng.normal(mean, std, count).astype(dtype)

        def keep(x):  # torch's rejection test, so a NaN draw (std NaN) is kept
            return ~((x < low) | (x > high))
    else:
        uniform_(tensor, a, b, generator)
        log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

        def redraw(count):
            return rng.uniform(a, b, count).astype(dtype)

        def keep(x):
            log_pdf = -0.5 * ((x.astype(np.float64) - mean) / std) ** 2 - log_peak
            return ~(np.log(rng.uniform(size=x.shape)) > log_pdf)  # (NaN kept, as torch)
    values = np.array(backend.to_device(tensor._data, backend.CPU)).reshape(-1)  # a copy
    pending = ~keep(values)
    if not pending.any():  # the first draw stands (one version bump, as torch)
        return tensor
    while pending.any():
        values[pending] = redraw(int(pending.sum()))
        pending[pending] = ~keep(values[pending])
    return _write(tensor, values.reshape(tuple(tensor.shape)))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val`` in place (no graph recorded)."""
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros in place."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones in place."""
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill_from(tensor, lambda rng, shape: np.eye(*shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std²) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _no_elements(tensor: Tensor) -> bool:
    """A zero-element tensor: kaiming's no-op, with torch's warning."""
    if 0 not in tensor.shape:
        return False
    warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
    return True


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: U(-b, b) with b = gain * sqrt(3 / fan)."""
    if _no_elements(tensor):
        return tensor
    fan = _fan(tensor, mode)  # before the gain: torch's order of errors
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: N(0, std²) with std = gain / sqrt(fan)."""
    if _no_elements(tensor):
        return tensor
    fan = _fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix, from the QR decomposition of a normal sample."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:  # nothing to fill (and no row count to divide by)
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():  # torch's steps, so its dtype errors (qr of float16, sign of complex)
        flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        q, r = linalg.qr(flat.t() if rows < cols else flat)
        q = q * r.diagonal().sign()  # make the decomposition unique
        q = q.t() if rows < cols else q
        return tensor.copy_(q.reshape(tensor.shape)).mul_(gain)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-d convolution weight with the Dirac delta: the convolution keeps
    as many input channels as it can (in each of ``groups`` groups of output channels)."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = tensor.shape[0] // groups

    def delta(rng, shape):
        values = np.zeros(shape)
        centre = tuple(n // 2 for n in shape[2:])
        for d in range(min(per_group, shape[1])):
            values[(np.arange(groups) * per_group + d, d) + centre] = 1.0
        return values
    return _fill_from(tensor, delta)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill a 2-d tensor with N(0, std²) samples, then zero ceil(sparsity * rows) randomly
    chosen entries of each column."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = math.ceil(sparsity * rows)

    def sample(rng, shape):
        values = rng.normal(0.0, std, shape)
        for column in range(cols):
            values[rng.permutation(rows)[:zeros], column] = 0.0
        return values
    return _fill_from(tensor, sample, generator)


def _deprecated(new: Callable) -> Callable:
    """torch's old spelling of the initializer ``new`` (without the trailing underscore): the
    same, with torch's FutureWarning."""
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    deprecated_init.__name__ = old
    deprecated_init.__doc__ = f"Deprecated in torch for ``{new.__name__}`` (same arguments)."
    return deprecated_init


# uniform, normal, constant, eye, dirac, xavier_uniform, xavier_normal, kaiming_uniform,
# kaiming_normal, orthogonal, sparse
for _new in (uniform_, normal_, constant_, eye_, dirac_, xavier_uniform_, xavier_normal_,
             kaiming_uniform_, kaiming_normal_, orthogonal_, sparse_):
    globals()[_new.__name__[:-1]] = _deprecated(_new)
del _new
