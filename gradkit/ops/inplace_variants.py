"""In-place forms torch has beside the out-of-place ops: comparisons (``x.lt_(y)``: 0/1 in
x's dtype), logical ops, ``bitwise_not_``, ``cumsum_``, ``tril_``/``triu_`` and
``fill_diagonal_``; each goes through the one in-place mechanism (``ops/inplace.py``)."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.backend import to_numpy_dtype
from gradkit.int_arguments import bool_argument
from gradkit.ops._op import op
from gradkit.ops.comparison import (
    bitwise_not, eq, ge, gt, le, logical_and, logical_not, logical_or, logical_xor, lt, ne)
from gradkit.ops.conversion import fill
from gradkit.ops.indexing import getitem
from gradkit.ops.setitem import setitem_
from gradkit.ops.inplace import inplace
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.promotion import PY_SCALARS
from gradkit.ops.reduction import cumsum
from gradkit.ops.shape import view
from gradkit.ops.triangular import diagonal, tril, triu
from gradkit.ops.unary_helpers import c_type_name, kernel_error


def _recorded_comparison(comparison):
    """``x.eq_(y)``: the comparison, in x's dtype. Unlike the bool comparison, torch records it
    (``EqBackward0`` for a number y, ``EqBackward1`` for a tensor), with zero gradients."""
    def forward(xp, x, y):
        return xp.asarray(comparison.forward(xp, x, y)).astype(x.dtype)
    forward.__name__ = comparison.name
    declared = op(broadcast=True, elementwise=True)(forward)
    declared.bool_result = True  # what is cast into x (torch's cast check passes any x)
    declared.defvjp(lambda g: zeros_like(g), lambda g: zeros_like(g))
    declared.defjvp(lambda t: zeros_like(t), lambda t: zeros_like(t))
    base = declared.node_name.removesuffix("Backward0")
    declared.node_name_rule = lambda params, inputs: (
        f"{base}Backward{0 if type(inputs[1]) in PY_SCALARS else 1}")
    return declared


# x.eq_(y) and torch's other names for it (x.not_equal_(y) is x.ne_(y))
_IN_PLACE_NAMES = {eq: ("eq",), ne: ("ne", "not_equal"), lt: ("lt", "less"),
                   le: ("le", "less_equal"), gt: ("gt", "greater"), ge: ("ge", "greater_equal")}
for _comparison, _names in _IN_PLACE_NAMES.items():
    _recorded = _recorded_comparison(_comparison)
    for _name in _names:
        register(_recorded, _name, method=False, inplace=True)


def _unrecorded_in_place(name: str, logical):
    """``x.logical_and_(y)``: torch writes the 0/1 values without recording anything, so x keeps
    its history and its forward-mode tangent (gradients pass as if nothing was written)."""
    def method(self: Tensor, *args) -> Tensor:
        for other in args:  # torch's in-place forms take a tensor, not a number
            if not isinstance(other, Tensor):
                raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, not "
                                f"{type(other).__name__}")
        tangent = getattr(self, "_fw", None)
        with no_grad():
            inplace(self, logical, *args)
        if tangent is not None:
            self._fw = tangent
        return self
    method.__name__ = name + "_"
    method.__doc__ = (f"``{name}`` written into self (its dtype kept); not recorded by autograd, "
                      "as torch.")
    register(method, name + "_")
    return method


for _logical in (logical_and, logical_or, logical_xor, logical_not):
    _unrecorded_in_place(_logical.name, _logical)
register(tril, "tril", method=False, inplace=True)
register(triu, "triu", method=False, inplace=True)


@tensor_method()
def cumsum_(input: Tensor, *args, dtype=None, **kwargs) -> Tensor:  # noqa: A002 - torch's
    """``cumsum_(dim, *, dtype=None)``: the running sum along ``dim`` written into input;
    ``dtype`` must be input's own (torch's argument errors)."""
    if len(args) > 1:
        raise TypeError(f"cumsum_() takes 1 positional argument but {len(args)} were given")
    if not args and "dim" not in kwargs:
        raise TypeError('cumsum_() missing 1 required positional arguments: "dim"')
    dim = args[0] if args else kwargs.pop("dim")
    if kwargs:
        raise TypeError(f"cumsum_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    data = input._data
    if dtype is not None and to_numpy_dtype(dtype) != data.dtype:
        wanted = np.empty(0, to_numpy_dtype(dtype))
        raise RuntimeError(f"Bad in-place call: input tensor dtype {c_type_name(data)} and "
                           f"output tensor dtype {c_type_name(wanted)} should match")
    if data.dtype.kind == "b":  # the sum would be int64: torch has no bool kernel to write it
        if data.size:
            raise kernel_error("cumsum_out_cpu")(data)
        cumsum(input.detach(), dim=dim)  # its dim check; an empty tensor runs no kernel
        return input
    return inplace(input, cumsum, dim=dim)


@tensor_method()
def bitwise_not_(input: Tensor) -> Tensor:  # noqa: A002 - torch's name
    """``~input`` written into input (integer and bool tensors: never recorded)."""
    if input._data.dtype.kind not in "biu":  # torch's kernel error, not ``~``'s TypeError
        raise kernel_error("bitwise_not_cpu")(input._data)
    return inplace(input, bitwise_not)


@tensor_method()
def fill_diagonal_(input: Tensor, fill_value, wrap: bool = False) -> Tensor:  # noqa: A002
    """Write ``fill_value`` on the main diagonal of ``input`` (2-d, or n-d with all dims
    equal); ``wrap``: on a 2-d matrix taller than wide, continue every ``width + 1`` elements
    below it, as NumPy. Recorded as torch: a write into the diagonal's view (CopySlices)."""
    wrap = bool_argument(wrap, "fill_diagonal_", "wrap", 2)
    shape = input._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(size != shape[0] for size in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    main = input
    for _ in range(len(shape) - 1):
        main = diagonal(main, 0, 0, 1)
    inplace(main, fill, fill_value)
    height, width = shape[0], shape[-1]
    if wrap and len(shape) == 2 and height > width + 1:
        # torch continues the diagonal's stride through memory: flat positions that are
        # multiples of width + 1, from row width + 1 on
        step = width + 1
        start, stop = width * step, height * width
        if input._data.flags.c_contiguous:
            inplace(getitem(view(input, shape=(-1,)), slice(start, stop, step)), fill,
                    fill_value)
        else:  # the same elements (torch's strided walk is defined on contiguous memory)
            flat = range(start, stop, step)
            setitem_(input, ([f // width for f in flat], [f % width for f in flat]), fill_value)
    return input
