"""torch's NativeBatchNormBackward0 and NativeGroupNormBackward0 nodes, and what they keep
beside their input and weight (``node._saved_<name>``): eps and the sizes (readable after
backward), the running statistics and the forward's mean and 1 / std (``result1``,
``result2``; freed by backward). gradkit's backward is the composite's own graph, so the
statistics are computed when read, from the saved input: recording costs nothing more."""
from __future__ import annotations

import math

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.memory_format import suggested_format
from gradkit.ops.one_node import one_node


_SAVED = {"input": 0, "weight": 1}  # the inputs torch's nodes save


def _statistics(x: Tensor, rows: tuple, eps: float, part: int) -> Tensor:
    """The mean (``part`` 0) or 1 / std (1) of ``x`` read as ``rows`` (one row per value),
    in x's dtype (float16's computed in float32, as torch's kernels do)."""
    data = x._data
    xp = get_array_module(data)
    wide = data.reshape(rows).astype(np.promote_types(data.dtype, np.float32))
    value = wide.mean(-1) if part == 0 else 1 / xp.sqrt(wide.var(-1) + eps)
    return Tensor._make(value.astype(data.dtype))


def batch_norm_node(normalized, inputs: tuple, running_mean, running_var, training: bool,
                    eps: float) -> Tensor:
    """``normalized(input, weight, bias)`` as torch's NativeBatchNormBackward0 node."""
    channels = inputs[0].shape[1]

    def statistics(part: int):
        if not training:  # torch's kernel returns empty statistics in evaluation
            return lambda inputs: inputs[0].new_empty((0,))
        return lambda inputs: _statistics(
            inputs[0].detach().transpose(0, 1), (channels, -1), eps, part)
    return one_node("NativeBatchNormBackward0", normalized, inputs, _SAVED,
                    {"eps": eps, "training": training},
                    {"running_mean": running_mean, "running_var": running_var,
                     "result1": statistics(0), "result2": statistics(1)})


def group_norm_node(normalized, inputs: tuple, groups: int, eps: float) -> Tensor:
    """``normalized(input, weight, bias)`` as torch's NativeGroupNormBackward0 node."""
    # ATen's group_norm hands native_group_norm its input laid out as suggested, a copy
    # where it is not: the node saves that copy, which an in-place write of the input leaves
    # alone (wide seed 194183: the real part of a complex tensor, then logical_xor_ of it)
    inputs = (inputs[0].contiguous(memory_format=suggested_format(inputs[0]._data)), *inputs[1:])
    n, c, *sizes = inputs[0].shape
    rows = (n, groups, c // groups * math.prod(sizes))  # (spelled out: no -1 for 0 samples)
    return one_node("NativeGroupNormBackward0", normalized, inputs, _SAVED,
                    {"N": n, "C": c, "HxW": math.prod(sizes), "group": groups, "eps": eps},
                    {f"result{part + 1}": lambda saved, part=part: _statistics(
                        saved[0].detach(), rows, eps, part) for part in (0, 1)})
