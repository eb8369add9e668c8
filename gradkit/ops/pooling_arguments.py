"""The arguments of the pooling functions, checked as torch checks them: the input's rank and
empty dims, kernel/stride/padding/dilation lengths and values (each error in torch's words and
order), the output sizes of fixed and adaptive windows."""
from __future__ import annotations

import math


from gradkit.int_arguments import int_list_argument
from gradkit.ops.shape import unsqueeze


def pool_input(input, d: int):
    """(input with a batch dim, whether one was added), refused as torch refuses its rank."""
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for "
                           "input")
    return (unsqueeze(input, 0), True) if input.ndim == d + 1 else (input, False)


def _check_non_empty(shape: tuple, d: int, name: str) -> None:
    """torch's pool{2,3}d_shape_check of the input as given: another rank or an empty dim
    other than the batch refused (torch prints the empty dim's length where its index is
    meant: always 0)."""
    if len(shape) in (d + 1, d + 2) and 0 not in shape[len(shape) - d - 1:]:
        return
    if d == 3:
        kernel = "max_pool3d_with_indices_out_cpu_template" if name.startswith("max") else name
        raise RuntimeError(f"{kernel}(): Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {list(shape)} and non-batch "
                           "dimension 0 has length zero!")
    raise RuntimeError(f"Expected {d + 1}D or {d + 2}D (batch mode) tensor with optional 0 dim "
                       f"batch size for input, but got:{list(shape)}")


_WORDS = {2: "two", 3: "three"}


# the positions of the pooling functions' int[] parameters in torch's signatures
POSITIONS = {"kernel_size": 2, "output_size": 2, "stride": 3, "padding": 4, "dilation": 5}


def read_ints(value, name: str, what: str) -> tuple:
    """A pooling argument as torch's parser reads an ``int[]``: an int (a NumPy integer too)
    as a 1-tuple, a sequence of ints as a tuple; a bool, float or None refused."""
    if type(value) is int:
        return (value,)
    value = int_list_argument(value, name, what, POSITIONS.get(what), single=True)
    return value if type(value) is tuple else (value,)


def ntuple(value, d: int, name: str, what: str = "kernel_size") -> tuple:
    """An int or a list of 1 or ``d`` ints as a ``d``-tuple (torch's pooling arguments)."""
    value = read_ints(value, name, what)
    if len(value) not in (1, d):
        raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of "
                           f"{_WORDS.get(d, d)} ints")
    return value * d if len(value) == 1 else value


def no_stride(stride) -> bool:
    """Whether ``stride`` is torch's "no stride" (None or an empty list: the kernel's); a
    NumPy integer compared with ``[]`` would give an empty array."""
    return stride is None or isinstance(stride, (list, tuple)) and not stride


def out_size(size, pad, span, stride, ceil_mode):
    """torch's pooling output size (a ceil_mode window must start inside input or left pad)."""
    out = (size + 2 * pad - span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _x(sizes) -> str:
    return "x".join(map(str, sizes))


# torch's wording of each argument's length check ("either" dropped by avg_pool3d)
_LENGTH_PHRASES = {"kernel_size": "must either be", "stride": "must either be omitted,",
                   "padding": "must either be", "dilation": "must be either"}


def _sized(value, d: int, name: str, what: str) -> tuple:
    """An int or 1 or ``d`` ints as a ``d``-tuple, refused as torch's pooling kernels do."""
    value = read_ints(value, name, what)
    if len(value) not in (1, d):
        phrase = _LENGTH_PHRASES[what]
        phrase = phrase.replace("either ", "") if name == "avg_pool3d" else phrase
        raise RuntimeError(f"{name}: {what} {phrase} a single int, or a tuple of "
                           f"{_WORDS.get(d, d)} ints")
    return value * d if len(value) == 1 else value


def _checked_out_size(size, kernel, pad, stride, dilation, ceil_mode) -> int:
    """torch's pooling_output_shape, with its checks of one dim's stride and padding."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    span = (kernel - 1) * dilation + 1
    if pad > (abs(span) // 2) * (1 if span >= 0 else -1):  # C's division: towards zero
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={kernel} and dilation={dilation}")
    return out_size(size, pad, span, stride, ceil_mode)


def _positive(what: str, prefix: str, values: tuple) -> None:
    """torch's "kernel size should be greater than zero, but got kH: 2 kW: 0" (and kT)."""
    if min(values) <= 0:
        axes = "THW"[3 - len(values):]
        listed = " ".join(f"{prefix}{axis}: {v}" for axis, v in zip(axes, values, strict=True))
        raise RuntimeError(f"{what} should be greater than zero, but got {listed}")


def pool_geometry(input, shape, kernel_size, stride, padding, dilation, ceil_mode, d, name,
                  smaller_than_kernel: bool = False):
    """(kernel, stride, pads, dilation, out sizes) of the batched ``input`` (``shape``: the
    input as given), checked as torch checks them, in its order: lengths, each dim's stride
    and padding (its pooling_output_shape), then its shape check: positive sizes, the input's
    rank and empty dims, the input against the kernel (``smaller_than_kernel``: avg_pool3d's),
    the padding against the kernel's half and the output's size."""
    kernel = _sized(kernel_size, d, name, "kernel_size")
    stride = kernel if no_stride(stride) else _sized(stride, d, name, "stride")
    pads, dilation = _sized(padding, d, name, "padding"), _sized(dilation, d, name, "dilation")
    sizes = tuple(input.shape[-d:])
    outs = tuple(_checked_out_size(*args, ceil_mode)
                 for args in zip(sizes, kernel, pads, stride, dilation, strict=True))
    _positive("kernel size", "k", kernel)
    _positive("stride", "d", stride)
    _positive("dilation", "dilation", dilation)
    _check_non_empty(tuple(shape), d, name)
    if smaller_than_kernel and any(s < k for s, k in zip(sizes, kernel, strict=True)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller "
                           f"than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    if any(k // 2 < p for k, p in zip(kernel, pads, strict=True)):
        head = "pad should be smaller than or equal to half of kernel size, but got "
        if d == 2:
            raise RuntimeError(f"{head}padW = {pads[1]}, padH = {pads[0]}, kW = {kernel[1]}, "
                               f"kH = {kernel[0]}")
        raise RuntimeError(f"{head}kT: {kernel[0]} kW: {kernel[2]} kH: {kernel[1]} padT: "
                           f"{pads[0]} padW: {pads[2]} padH: {pads[1]}")
    if min(outs) < 1:
        raise RuntimeError(f"Given input size: ({_x(input.shape[1:])}). Calculated output "
                           f"size: ({_x((input.shape[1],) + outs)}). Output size is too small")
    return kernel, stride, pads, dilation, outs


def one_int(value, function: str, what: str, parsed_by: str | None = None) -> tuple:
    """A 1-tuple from an int or a sequence of one, refused as torch's argument parser does
    (``parsed_by``: the function whose parser names a wrong kind, if not ``function``)."""
    value = read_ints(value, parsed_by or function, what)
    if len(value) != 1:
        raise RuntimeError(f"{function}() argument '{what}' should contain one int (got "
                           f"{len(value)})")
    return value


def adaptive_arguments(input, output_size, d: int, name: str, got: str) -> tuple:
    """(batched input, whether a batch dim was added, input sizes, output sizes) of an
    adaptive pooling of ``d`` dims, with torch's errors: its Python check of a sequence
    ``output_size`` against the input's rank, then the rank (``got`` ends that text) and the
    sequence's length (average pooling checks the length first)."""
    if not isinstance(output_size, int):  # (torch's Python reads its len(): a NumPy int fails)
        if input.ndim <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        output_size = tuple(output_size)
    wrong_length = isinstance(output_size, tuple) and len(output_size) != d
    if wrong_length and name.startswith("adaptive_avg"):
        raise RuntimeError(f"{name}: output_size must be {d}")
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, {got}"
                           f"{list(input.shape)}")
    if wrong_length:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {d}")
    batched, added = (unsqueeze(input, 0), True) if input.ndim == d + 1 else (input, False)
    sizes = tuple(batched.shape[2:])
    if isinstance(output_size, tuple) and len(output_size) == d:  # torch's Python fills None
        output_size = tuple(s if o is None else o for o, s in zip(output_size, sizes))
    outs = ntuple(output_size, d, name, "output_size")
    _check_output_size(tuple(input.shape[:-d]) + outs, d, name, input._data.dtype.itemsize)
    return batched, added, sizes, outs


def _check_output_size(shape: tuple, d: int, name: str, itemsize: int) -> None:
    """torch's refusals of an adaptive output size before it allocates: average pooling checks
    the sizes' signs and its element count, max pooling lets its allocation refuse them."""
    outs = shape[-d:]
    average = name.startswith("adaptive_avg")
    if average and min(outs) < 0:
        listed = ", ".join(map(str, outs[:2])) + "".join(f",{o}" for o in outs[2:])
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{listed}}}")
    for size in shape:
        if size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: "
                               f"{list(shape)}")
    if average and math.prod(shape) >= 2 ** 63:
        raise RuntimeError("numel: integer multiplication overflow")
    if math.prod(shape) * itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")


def check_non_empty(input, name: str) -> None:
    """torch's adaptive kernels' refusal of an empty dim other than the batch."""
    for dim in range(1, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {dim} being empty")
