"""Channel-wise and alpha dropout (torch.nn.functional's dropout1d/2d/3d, alpha_dropout,
feature_alpha_dropout): a mask drawn from gradkit's generator multiplies the input, so the
gradient comes from the graph. The masks differ from torch's even under one seed."""
from __future__ import annotations

import math
import warnings

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.creation import bernoulli_mask
from gradkit.number_arguments import number_argument
from gradkit.ops.arithmetic import add, mul
from gradkit.ops.inplace import inplace as write_inplace
from gradkit.ops.layers import check_dropout_dtype, check_dropout_p, in_layout_of

_SELU_ALPHA = 1.7580993408473766  # torch's alpha of alpha dropout (SELU's -scale·alpha)


def _dropout_impl(input, p: float, training: bool, inplace: bool, feature: bool, alpha: bool):
    """torch's _dropout_impl: one draw per element, or per (sample, channel) with ``feature``;
    alpha keeps SELU's mean and variance. p is read first, as its kernel's parser reads it."""
    kernel = "feature_" * feature + "alpha_" * alpha + "dropout" + "_" * inplace
    p = number_argument(p, kernel, "p", 2, "float", optional=False)
    if p == 0.0 or not training or input.numel() == 0:
        return input
    data = input._data
    xp = get_array_module(data)
    if p == 1.0:  # torch's: times a zero, before its rank check of feature dropout
        zero = Tensor._make(xp.zeros((), dtype=data.dtype))
        return write_inplace(input, mul, zero) if inplace else mul(input, zero)
    check_dropout_dtype(data, alpha)
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    else:
        shape = tuple(input.shape)
    keep = xp.asarray(bernoulli_mask(shape, p), dtype=data.dtype)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA ** 2 * p + 1) * (1 - p))
        shift = Tensor._make(((keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p)
                             .astype(data.dtype))
        keep = keep * a
    else:
        shift = None
        keep = keep / (1.0 - p)
    scale = Tensor._make(in_layout_of(data, keep) if keep.shape == data.shape
                         else xp.asarray(keep, dtype=data.dtype))
    out = write_inplace(input, mul, scale) if inplace else mul(input, scale)
    if shift is None:
        return out
    return write_inplace(out, add, shift) if inplace else add(out, shift)


def _unbatched_as_one_sample(input, p: float, training: bool, inplace: bool, batched: bool):
    """torch's channel dropout of an input without its batch dim: a batch of one (unsqueezed,
    in place with ``inplace``), squeezed back (so the result is a view, not the input)."""
    if batched:
        return _dropout_impl(input, p, training, inplace, True, False)
    input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _dropout_impl(input, p, training, inplace, True, False)
    return result.squeeze_(0) if inplace else result.squeeze(0)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability p (while training)."""
    check_dropout_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched_as_one_sample(input, p, training, inplace, input.ndim == 3)


def _warn_rank(name: str, ndim: int, spatial: int) -> None:
    warnings.warn(f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will "
                  "result in an error in a future release. To retain the behavior and silence "
                  f"this warning, please use dropout instead. Note that {name} exists to provide "
                  f"channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
                  "dimension, and an optional batch dimension (i.e. "
                  f"{spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, H, W) inputs; a 3-D input is read as (N, C, L), as torch
    (with its warning)."""
    check_dropout_p(p)
    if input.ndim not in (3, 4):
        _warn_rank("dropout2d", input.ndim, 2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    check_dropout_p(p)
    if input.ndim not in (4, 5):
        _warn_rank("dropout3d", input.ndim, 3)
    return _unbatched_as_one_sample(input, p, training, inplace, input.ndim == 5)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for SELU networks: dropped elements take SELU's negative saturation and an
    affine map keeps mean 0 and variance 1."""
    check_dropout_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False,
                          inplace: bool = False):
    """alpha_dropout with one draw per (sample, channel)."""
    check_dropout_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)
