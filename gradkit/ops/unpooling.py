"""max_unpool1d/2d/3d: the partial inverse of max pooling (values put back at their indices)."""
from __future__ import annotations

import math

from gradkit._tensor import Tensor
from gradkit.memory_format import lay_out, suggested_order
from gradkit.ops._op import op
from gradkit.ops.indexing import gather
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.shape import reshape, squeeze, unsqueeze
from gradkit.ops.unary_helpers import require_real_floating, scalar_type_name


_SIZE_NAMES = {2: "two elements (height, width)", 3: "three elements (depth, height, width)"}


def _check_unpool(x, indices, output_size: tuple, d: int) -> None:
    """torch's checks of max_unpooling2d / 3d, in its order (2-d checks the unpooled size's
    length before the input's rank, 3-d after: a kernel_size of another length gives one)."""
    int64_text = "elements in indices should be type int64" + (
        f" but got: {scalar_type_name(indices)}" if d == 2 else "")
    rank = (x.ndim not in (d + 1, d + 2), f"Input to max_unpooling{d}d should be a {d + 1}d or "
                                          f"{d + 2}d Tensor, but got a tensor with {x.ndim} "
                                          "dimensions.")
    length = (len(output_size) != d, f"There should be exactly {_SIZE_NAMES[d]} in output_size, "
                                     f"but got {len(output_size)} elements.")
    refusals = (
        (indices.dtype.name != "int64", int64_text),
        *((length, rank) if d == 2 else (rank, length)),
        (indices.shape != x.shape, "Expected shape of indices to be same as that of the input "
                                   f"tensor ({list(x.shape)}) but got indices tensor with "
                                   f"shape: {list(indices.shape)}"))
    for refused, message in refusals:
        if refused:
            raise RuntimeError(message)
    if x.size:  # torch's kernel (max_unpool1d's too) is not reached for an empty input
        require_real_floating(f"max_unpool{d}d", x)
    outside = (indices < 0) | (indices >= math.prod(output_size))
    if outside.any():
        raise RuntimeError(f"Found an invalid max index: {int(indices[outside][0])} (output "
                           f"volumes are of size {'x'.join(map(str, output_size))})")


@op(save=("indices", "x.shape"), node_name="MaxUnpool2DBackward0")
def max_unpool_op(xp, x, indices, *, output_size=(1, 1), dims=2):
    """Zeros of (..., *output_size) with each x put at its flat ``indices`` in its plane (or
    volume: ``dims``, as many trailing dims as ``output_size`` has)."""
    _check_unpool(x, indices, output_size, dims)
    d = dims
    rows = x.reshape(-1, math.prod(x.shape[-d:]))
    out = xp.zeros((rows.shape[0], math.prod(output_size)), dtype=x.dtype)
    out[xp.arange(rows.shape[0])[:, None], indices.reshape(rows.shape)] = rows
    out = out.reshape(x.shape[:-d] + tuple(output_size))
    # torch's 2-d kernel allocates its output in the input's suggested memory format
    order = suggested_order(x) if d == 2 else None
    return out if order is None else lay_out(xp, out, order)


max_unpool_op.node_name_rule = (
    lambda params, datas: f"MaxUnpool{params['dims']}DBackward0")


def _unpool_grad(g, indices, x_shape, output_size, dims):
    """torch's max_unpooling backward: the gradient read back at the indices."""
    d = dims
    lead = tuple(x_shape[:-d])
    plane = (math.prod(g.shape[-d:]),)  # not -1: a batch may be empty
    picked = gather(reshape(g, lead + plane), -1,
                    reshape(indices, lead + (math.prod(x_shape[-d:]),)))
    grad = reshape(picked, tuple(x_shape))
    # torch's max_pool_double_backward answers an empty input with a fresh empty tensor: no
    # graph, so a double backward never reaches the ops before the unpooling
    return zeros_like(grad) if not math.prod(x_shape) else grad


max_unpool_op.defvjp(_unpool_grad, None)
max_unpool_op.defjvp(lambda t, indices, x_shape, output_size, dims:
                     max_unpool_op(t, indices, output_size=output_size, dims=dims), None)


def _as_tuple(value, d: int) -> tuple:
    return (value,) * d if isinstance(value, int) else tuple(value)


def _unpool_output_size(input, kernel: tuple, stride: tuple, padding: tuple,
                        output_size) -> tuple:
    """torch's _unpool_output_size: the default size, or a checked ``output_size``."""
    d = len(kernel)
    default = [(input.shape[-d + i] - 1) * stride[i] + kernel[i] - 2 * padding[i]
               for i in range(d)]
    if output_size is None:
        size = default
    else:
        if len(output_size) == d + 2:  # (torch's message shows the slice, of the given type)
            output_size = output_size[2:]
        size = list(output_size)
        if len(size) != d:
            raise ValueError(f"output_size should be a sequence containing {d} or {d + 2} "
                             f"elements, but it has a length of '{len(size)}'")
        for i in range(d):
            low, high = default[i] - stride[i], default[i] + stride[i]
            if not low < size[i] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {i} must be '
                                 f"between {low} and {high})")
    for i, n in enumerate(size):
        if n < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{i}]={n}")
    return tuple(size)


def _unpooled_size(input, kernel_size, stride, padding, output_size, d: int) -> tuple:
    """The output size of a ``d``-dim unpooling (stride defaults to kernel_size)."""
    kernel = _as_tuple(kernel_size, d)
    stride = kernel if stride is None else _as_tuple(stride, d)
    return _unpool_output_size(input, kernel, stride, _as_tuple(padding, d), output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Put each value of ``input`` back at its ``indices`` (from max_pool2d's return_indices)
    in a zero plane of the unpooled size."""
    size = _unpooled_size(input, kernel_size, stride, padding, output_size, 2)
    return max_unpool_op(input, indices, output_size=size, dims=2)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """max_unpool2d over one spatial dim (torch's way: through a trailing unit dim)."""
    size = _unpooled_size(input, kernel_size, stride, padding, output_size, 1)
    return squeeze(max_unpool_op(unsqueeze(input, -1), unsqueeze(indices, -1),
                                 output_size=size + (1,), dims=2), -1)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Put each value of ``input`` back at its ``indices`` (from max_pool3d's return_indices)
    in a zero volume of the unpooled size."""
    size = _unpooled_size(input, kernel_size, stride, padding, output_size, 3)
    return max_unpool_op(input, indices, output_size=size, dims=3)
