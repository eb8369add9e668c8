"""addr (``beta * input + alpha * outer(vec1, vec2)``, AddrBackward0) and chain_matmul (a
product of matrices, as torch's multi_dot: mm nodes under a view)."""
from __future__ import annotations

import warnings

import numpy as np

from gradkit._tensor import Tensor
from gradkit.number_arguments import numbers_reader
from gradkit.ops._op import op
from gradkit.ops.complex import conj
from gradkit.ops.conversion import clone
from gradkit.ops.linalg import matmul, outer
from gradkit.ops.linalg_functions import multi_dot
from gradkit.ops.conversion import fitted
from gradkit.ops.products import _check_expandable
from gradkit.ops.scaled_sum_rules import scale
from gradkit.ops.promotion import as_dtype, result_type
from gradkit.ops.shape import transpose
from gradkit.ops.unary_helpers import c_type_name
from gradkit.tensor_arguments import tensor_parameters


def _check_scalars(dtype, beta, alpha) -> None:
    """torch's rules for beta and alpha against the result's dtype."""
    for name, value in (("beta", beta), ("alpha", alpha)):
        if type(value) is bool:
            if dtype.kind == "b":
                continue
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if dtype.kind in "biu" and isinstance(value, (float, complex)):  # bool is integral
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               "floating point number.")
        if isinstance(value, complex) and dtype.kind != "c":
            raise RuntimeError("value cannot be converted to type "
                               f"{c_type_name(np.empty(0, dtype))} without "
                               "overflow")
        fitted(value, dtype)  # the kernel's checked conversion (1e300 into float32)


@op(save=("vec1", "vec2"), broadcast=True, method=True, inplace=True)
def addr(xp, x, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * the outer product of the 1-d vec1 and vec2 (input broadcast to
    its shape; beta == 0 ignores input, its NaN too)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    dtype = result_type(x, vec1, vec2)
    shape = (vec1.shape[0], vec2.shape[0])
    _check_expandable(x, shape)
    _check_scalars(dtype, beta, alpha)
    if dtype.kind == "b":  # torch's logical form: (beta and input) or (alpha and product)
        out = vec1[:, None] & vec2[None, :] & bool(alpha)
        return out | (x.astype(bool) & bool(beta)) if beta else xp.array(out)
    # torch's kernel: beta * input + alpha * vec1 * vec2, multiplied in that order even when
    # a factor is 1 (a complex infinity meets (1 + 0j) as in torch)
    out = (as_dtype(xp, alpha, dtype) * vec1.astype(dtype))[:, None] * vec2.astype(dtype)
    if beta == 0:
        return out
    return as_dtype(xp, beta, dtype) * x.astype(dtype) + out


addr.defvjp(lambda g, vec1, vec2, beta, alpha: scale(g, beta.conjugate()),
            lambda g, vec1, vec2, beta, alpha: scale(matmul(g, conj(vec2)), alpha.conjugate()),
            lambda g, vec1, vec2, beta, alpha: scale(matmul(transpose(g, 0, 1), conj(vec1)),
                                                      alpha.conjugate()))
addr.input_keywords = ("input", "vec1", "vec2")  # torch's names, taken by keyword
addr.numbers = numbers_reader("addr", beta=None, alpha=None)  # 0-d tensors: their numbers
addr.defjvp(lambda t, vec1, vec2, beta, alpha: scale(t, beta),
            lambda t, vec1, vec2, beta, alpha: scale(outer(t, vec2), alpha),
            lambda t, vec1, vec2, beta, alpha: scale(outer(vec1, t), alpha))


@tensor_parameters("matrices")
def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-d matrices, left to right (deprecated in torch, as here: use
    ``linalg.multi_dot``)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return clone(matrices[0])
    first = matrices[0]
    for i, m in enumerate(matrices[1:], 1):
        if m.dtype != first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {c_type_name(first)} and tensor {i} "
                               f"{c_type_name(m)}")
        before = matrices[i - 1]
        if before.shape[1] != m.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(before.shape)} and {list(m.shape)} cannot be multiplied")
    return multi_dot(matrices)  # torch's chain_matmul is multi_dot: its order, its zeros
