"""kron, the Kronecker product, and the layout torch's gives it (and refuses)."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.memory_format import iterator_order, lay_out
from gradkit.ops.index_layout import _broadcast_strides, _view_strides
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import VIEW_REFUSAL, _reshape_copy, _reshapes_in_place
from gradkit.tensor_arguments import tensor_parameters


@tensor_method()
@tensor_parameters("other")
def kron(input, other):
    """The Kronecker product: every element of a times the whole of b, as blocks."""
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not hasattr(value, "shape"):
            raise TypeError(f"kron(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    ndim = max(input.ndim, other.ndim)
    shape_a = (1,) * (ndim - input.ndim) + tuple(input.shape)
    shape_b = (1,) * (ndim - other.ndim) + tuple(other.shape)
    # torch's _unsafe_view throughout: neither the reshaped inputs mul saves nor the result
    # are views, so input later write into input or other does not spoil the saved values' versions
    operands = (_unsafe_view(input, tuple(v for n in shape_a for v in (n, 1))),
                _unsafe_view(other, tuple(v for n in shape_b for v in (1, n))))
    blocks = operands[0] * operands[1]
    shape = tuple(n * m for n, m in zip(shape_a, shape_b))
    if type(blocks._data) is np.ndarray:
        blocks._data = _kron_layout([o._data for o in operands], blocks._data)
        if not _reshapes_in_place(blocks._data, shape):
            raise RuntimeError(VIEW_REFUSAL)
    return _unsafe_view(blocks, shape)


def _unsafe_view(x: Tensor, shape: tuple) -> Tensor:
    """torch's _unsafe_view of x as ``shape``, with c10's computeStride strides: NumPy's
    reshape gives a size-1 dim other strides, and torch's mul orders dims by them."""
    out = _reshape_copy(x, shape=shape)
    data, before = out._data, x._data
    if type(data) is np.ndarray and type(before) is np.ndarray and data.shape == shape:
        strides = _view_strides(before.shape, before.strides, shape, before.itemsize)
        out._data = np.lib.stride_tricks.as_strided(data, shape, strides,
                                                    writeable=data.flags.writeable)
    return out


def _kron_layout(operands, blocks):
    """The product ``blocks`` of kron's ``operands`` laid out as torch's mul lays it out:
    TensorIterator sorts the dims by the operands' strides, a size-1 dim's too (gradkit's mul
    keeps C order where NumPy counts the inputs contiguous); of some layouts (one operand
    transposed) no view then merges the block dims (torch's RuntimeError)."""
    return lay_out(np, blocks, iterator_order(
        blocks.shape, [_broadcast_strides(a, blocks.shape) for a in operands]))
