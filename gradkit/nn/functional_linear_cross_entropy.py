"""``F.linear_cross_entropy`` and its ``LinearCrossEntropyOptions`` (torch 2.13): cross entropy of
``linear(input, linear_weight)``, with a K-dimensional loss when the weight has more dims.

torch's ``options=LinearCrossEntropyOptions(...)`` selects a chunked kernel that saves memory
on large vocabularies; gradkit validates the options (and warns where torch would ignore them)
but always computes torch's reference path, so its gradients, ``retain_graph`` and double
backward work with options too (docs/torch_expectations.md, h-api).
"""
from __future__ import annotations

import dataclasses
import math
import warnings

from gradkit._tensor import Tensor
from gradkit import backend
from gradkit.backend import float16, float32, float64, int64
from gradkit.ops.layers import linear
from gradkit.ops.losses import cross_entropy

# (bfloat16 where ml_dtypes gives it)
_ACC_DTYPES = tuple(d for d in (float16, getattr(backend, "bfloat16", None), float32, float64)
                    if d is not None)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """torch's options for its chunked ``linear_cross_entropy`` (validated as torch validates
    them; gradkit computes the reference path whatever they say).

    >>> LinearCrossEntropyOptions(batch_chunk_size=64).acc_policy
    'auto'
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (
                isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                "pick automatically.")


def _check_shapes(input: Tensor, linear_weight: Tensor, linear_bias) -> tuple:
    """(batch shape, classes, out_features) of the call, with torch's RuntimeErrors."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    return batches, classes, out_features


def _warn_ignored(options, reduction, label_smoothing, target, out_features, linear_bias):
    """torch's warning where its chunked path cannot take the call (it falls back)."""
    if options is None or not (out_features or reduction not in {"mean", "sum", "none"} or
                               label_smoothing != 0.0 or target.dtype != int64):
        return
    bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
    warnings.warn(
        "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
        "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). "
        f"Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
        f"target.dtype={target.dtype}, out_features={out_features}, tracing=False, "
        f"linear_bias.shape={bias_shape}.", stacklevel=3)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; a weight of
    shape (C, d1, ..., dK, in_features) gives a K-dimensional loss.

    >>> linear_cross_entropy(gradkit.zeros(2, 3), gradkit.zeros(4, 3), gradkit.tensor([0, 1]))
    tensor(1.3863)
    """
    batches, classes, out_features = _check_shapes(input, linear_weight, linear_bias)
    logits_shape = (*batches, classes, *out_features)
    # probabilities: a target shaped as the logits (cross_entropy's own test)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    _warn_ignored(options, reduction, label_smoothing, target, out_features, linear_bias)
    if out_features:  # linear takes a 2-d weight: the K dims ride along the classes
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape((rows, input.shape[-1]))
        linear_bias = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


__all__ = ["LinearCrossEntropyOptions", "linear_cross_entropy"]
