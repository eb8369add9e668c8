"""Where torch's in-place overload of an op differs from the out-of-place one that gradkit's
``inplace`` runs: its checks in their own order, its node's own name."""
from __future__ import annotations

import numpy as np

from gradkit.autograd.graph import node_type
from gradkit.ops.promotion import PY_SCALARS, category, result_type
from gradkit.ops.unary_helpers import scalar_type_name


def in_place_checks(out_of_place, target, args, kwargs) -> None:
    """The op's ``check_in_place(target, *args, **kwargs)``, where it has one: the in-place
    kernel's checks, in an order the out-of-place forward does not have (masked_fill_)."""
    check = getattr(out_of_place, "check_in_place", None)
    if check is not None:
        check(target, *args, **kwargs)


def check_output(target, shape: tuple, dtype: np.dtype) -> None:
    """torch's checks of an in-place op's output ``target``, in their order: the broadcast
    ``shape`` of the result must be the output's own, then the result ``dtype`` must cast to
    the output's (canCast: never down a category, complex > floating > integer > bool; within
    one, any width or sign, so uint8 += int16 wraps)."""
    if shape != target.shape:
        try:
            ok = np.broadcast_shapes(shape, target.shape) == target.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
    if dtype != target.dtype and category(dtype) > category(target.dtype):
        raise RuntimeError(f"result type {scalar_type_name(np.empty(0, dtype))} can't be cast "
                           f"to the desired output type {scalar_type_name(target)}")


def check_output_before_kernel(out_of_place, target, operands) -> None:
    """The output checks torch makes before an elementwise kernel runs, for an in-place op whose
    out-of-place forward raised a kernel's "not implemented" error or a promotion error: a 0-d
    target of a vector is torch's shape error, ``int8_tensor.fmod_(c)`` with a complex ``c``
    its cast error."""
    if not getattr(out_of_place, "broadcast", False):
        return
    # a number promotes as the op's other operand only (lerp's number weight does not)
    operands = [v for i, v in enumerate(operands)
                if (i == 0 and type(v) in PY_SCALARS) or hasattr(v, "dtype")]
    try:
        shape = np.broadcast_shapes(target.shape, *(np.shape(v) for v in operands))
    except ValueError:  # the forward's own error stands
        return
    check_output(target, shape, target.dtype)
    if getattr(out_of_place, "bool_result", False):
        return
    try:
        dtype = result_type(target, *operands)
    except (RuntimeError, TypeError):
        return
    check_output(target, shape, dtype)


def name_in_place_node(out_of_place, node) -> None:
    """Give ``node`` the name of torch's in-place overload (the op's ``in_place_node_names``,
    out-of-place name -> in-place name: fill's FillBackward0/1 -> fill_'s 2/3)."""
    names = getattr(out_of_place, "in_place_node_names", None)
    if names is not None and node is not None:
        node.__class__ = node_type(names.get(type(node).__name__, type(node).__name__))
