"""max_unpool1d/2d: the partial inverse of max pooling (values put back at their indices)."""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.ops._op import op
from gradkit.ops.indexing import gather
from gradkit.ops.shape import reshape, squeeze, unsqueeze
from gradkit.ops.unary_helpers import require_real_floating, scalar_type_name


def _check_unpool(x, indices, output_size) -> None:
    """torch's checks of max_unpooling2d, in its order."""
    refusals = (
        (indices.dtype.name != "int64", "elements in indices should be type int64 but got: "
                                        f"{scalar_type_name(indices)}"),
        (x.ndim not in (3, 4), "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                               f"tensor with {x.ndim} dimensions."),
        (indices.shape != x.shape, "Expected shape of indices to be same as that of the input "
                                   f"tensor ({list(x.shape)}) but got indices tensor with "
                                   f"shape: {list(indices.shape)}"))
    for refused, message in refusals:
        if refused:
            raise RuntimeError(message)
    if x.size:  # torch's kernel (max_unpool1d's too) is not reached for an empty input
        require_real_floating("max_unpool2d", x)
    outside = (indices < 0) | (indices >= output_size[0] * output_size[1])
    if outside.any():
        raise RuntimeError(f"Found an invalid max index: {int(indices[outside][0])} (output "
                           f"volumes are of size {output_size[0]}x{output_size[1]})")


@op(save=("indices", "x.shape"), node_name="MaxUnpool2DBackward0")
def max_unpool2d_op(xp, x, indices, *, output_size=(1, 1)):
    """Zeros of (..., *output_size) with each x put at its flat ``indices`` in its plane."""
    _check_unpool(x, indices, output_size)
    rows = x.reshape(-1, x.shape[-2] * x.shape[-1])
    out = xp.zeros((rows.shape[0], output_size[0] * output_size[1]), dtype=x.dtype)
    out[xp.arange(rows.shape[0])[:, None], indices.reshape(rows.shape)] = rows
    return out.reshape(x.shape[:-2] + tuple(output_size))


def _unpool_grad(g, indices, x_shape, output_size):
    """torch's max_unpooling backward: the gradient read back at the indices."""
    lead = tuple(x_shape[:-2])
    plane = (g.shape[-2] * g.shape[-1],)  # not -1: a batch may be empty
    picked = gather(reshape(g, lead + plane), -1,
                    reshape(indices, lead + (x_shape[-2] * x_shape[-1],)))
    return reshape(picked, tuple(x_shape))


max_unpool2d_op.defvjp(_unpool_grad, None)
max_unpool2d_op.defjvp(lambda t, indices, x_shape, output_size:
                       max_unpool2d_op(t, indices, output_size=output_size), None)


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
        size = list(output_size)
        if len(size) == d + 2:
            size = size[2:]
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


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Put each value of ``input`` back at its ``indices`` (from max_pool2d's return_indices)
    in a zero plane of the unpooled size."""
    kernel = _as_tuple(kernel_size, 2)
    stride = kernel if stride is None else _as_tuple(stride, 2)
    size = _unpool_output_size(input, kernel, stride, _as_tuple(padding, 2), output_size)
    return max_unpool2d_op(input, indices, output_size=size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """max_unpool2d over one spatial dim (torch's way: through a trailing unit dim)."""
    kernel = _as_tuple(kernel_size, 1)
    stride = kernel if stride is None else _as_tuple(stride, 1)
    size = _unpool_output_size(input, kernel, stride, _as_tuple(padding, 1), output_size)
    return squeeze(max_unpool2d_op(unsqueeze(input, -1), unsqueeze(indices, -1),
                                   output_size=size + (1,)), -1)
