"""Products beyond matmul: the scaled sums addmm, addmv, baddbmm and addbmm
(``beta * input + alpha * product``), trace, tensordot and inner (kron: kron.py)."""
from __future__ import annotations

import math

import numpy as np

from gradkit.number_arguments import numbers_reader
from gradkit.ops._op import op
from gradkit.ops.half_scalar import HALF
from gradkit.ops.complex_products import all_finite, small_bmm, times_one
from gradkit.ops.conversion import fitted, real_if_cast_to_real
from gradkit.ops.linalg import dot, matmul
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.methods import tensor_method
from gradkit.ops.promotion import as_dtype
from gradkit.ops.reduction import sum
from gradkit.ops import scaled_sum_rules as rules
from gradkit.ops.scaled_sum_rules import scale
from gradkit.ops.expand_view import expand_refusal
from gradkit.ops.shape import (_normalize_dim, expand, flatten, permute, reshape, squeeze)
from gradkit.ops.triangular import diagonal_backward
from gradkit.ops.unary_helpers import (c_type_name, kernel_error, kernel_error_after_checks,
                                      scalar_type_name, tensor_type_name)
from gradkit.tensor_arguments import tensor_parameters


def _check_expandable(x, target) -> None:
    """torch's errors for an ``input`` array that does not expand to the product's shape."""
    refusal = expand_refusal(x.shape, target, tensor_type_name(x))
    if refusal is not None:
        raise RuntimeError(refusal)


def _same_dtype(message: str, *arrays) -> None:
    """``message`` formatted with the dtype names when the arrays' dtypes differ."""
    if len({a.dtype for a in arrays}) > 1:
        raise RuntimeError(message.format(*(scalar_type_name(a) for a in arrays),
                                          *(c_type_name(a) for a in arrays)))


def _ndim(array, ndim: int, message: str) -> None:
    if array.ndim != ndim:
        raise RuntimeError(message.format(array.ndim))


def _scaled_sum(xp, x, product, beta, alpha, kernel: str, empty: bool, by_one: bool = False):
    """beta * x + alpha * product in the product's dtype; beta == 0 ignores x (its NaN and
    inf too), as torch; an integer result truncates float scalars, a real one refuses complex.
    An ``empty`` product (nothing summed) is skipped, and so is the product at alpha == 0 in
    BLAS kernels (all but baddbmm's and complex addmv's): its NaN stays out, -alpha * 0 gives
    no -0.0. A complex x is multiplied even by beta == 1 (an inf part makes its partner NaN)
    where torch's kernel does: ``empty`` (its result.mul_(beta)) or ``by_one``."""
    dtype = product.dtype
    if dtype.kind == "b":
        if product.size and not empty:
            raise kernel_error_after_checks(kernel, product)
        _check_expandable(x, product.shape)
        return _bool_sum_of_nothing(xp, x, product.shape, beta, kernel)
    _check_expandable(x, product.shape)
    for value in (beta, alpha):
        if isinstance(value, complex) and dtype.kind != "c":
            raise RuntimeError(f"value cannot be converted to type {c_type_name(product)} "
                               "without overflow")
        if not empty and dtype != HALF:  # the kernel's checked conversion (half's: in float)
            fitted(value, dtype)
    if empty and product.size and kernel != "addmv_impl_cpu" and isinstance(beta, float) and \
            beta != 0:  # torch's result.mul_(beta) of nothing summed (of no element: no check)
        _check_scalar_fits(beta, dtype)
    if dtype.kind in "iu":
        beta, alpha = int(beta), int(alpha)
    by_one = (empty or by_one) and dtype.kind == "c"
    scaled_x = x if beta == 1 and not by_one else x * as_dtype(xp, beta, dtype)
    # (torch's complex gemv multiplies by a zero alpha: inf or NaN in M v gives NaN, seed 81291)
    skips = kernel != "baddbmm_cpu" and not (kernel == "addmv_impl_cpu" and dtype.kind == "c")
    if empty or (alpha == 0 and skips):
        out = xp.zeros(product.shape, dtype) if beta == 0 else scaled_x
        return xp.array(xp.broadcast_to(out, product.shape))
    out = product if alpha == 1 else product * as_dtype(xp, alpha, dtype)
    if beta == 0 and kernel == "addmv_impl_cpu" and dtype.kind == "f" and dtype != HALF:
        out = out + dtype.type(0)  # BLAS gemv zeroes y, then adds alpha * M v: no -0.0
    if beta == 0:
        return xp.array(xp.broadcast_to(out, product.shape))
    return out + scaled_x


def _bool_sum_of_nothing(xp, x, shape: tuple, beta, kernel: str):
    """A bool product with no element, or of nothing summed, runs no kernel in torch: its
    result is beta * x, which addmv fills as x where beta != 0 and the others' result.mul_(beta)
    refuses for a number beta (breadth-wide seed 735)."""
    if not all(shape) or beta == 0:
        return xp.zeros(shape, bool)
    if kernel != "addmv_impl_cpu" and not isinstance(beta, bool):
        kind = "Float" if isinstance(beta, float) else "Long"
        raise RuntimeError(f"result type {kind} can't be cast to the desired output type Bool")
    return xp.array(xp.broadcast_to(x, shape))


def _declare(name: str, product, vjp_a, vjp_b, vjp_x=rules.input_vjp):
    """A scaled-sum op: ``product(a, b)`` (gradkit ops), its input gradients from ``g`` and
    the two factors, each times conj(alpha); the input's gradient is g * conj(beta)."""
    def forward(xp, x, a, b, *, beta=1, alpha=1):
        _CHECKS[name](x, a, b)
        if name == "addbmm" and a.shape[0] == 0:  # no batch: torch sums nothing, in x's dtype
            shape = (a.shape[1], b.shape[2])
            if x.dtype.kind in "iub":  # its result.mul_(beta) checks the cast even of no element
                return _no_batch_integer_addbmm(xp, x, beta, shape)
            return _scaled_sum(xp, x, xp.zeros(shape, x.dtype), beta, alpha, _KERNELS[name], True)
        if name == "baddbmm" and a.dtype != b.dtype:
            return _mixed_baddbmm(xp, x, a, b, beta)
        if name == "addbmm" and x.dtype == HALF and a.shape[-1] and alpha != 0:
            return _addbmm_half(xp, x, a, b, beta, alpha)
        empty = a.shape[-1] == 0
        out = product(a, b)
        if name == "baddbmm" and alpha == 1 and a.dtype.kind == "c" and small_bmm(a, b) and \
                not all_finite(xp, a, b):  # torch's own loop multiplies by alpha = 1 + 0j
            out = times_one(xp, out)
        # torch's complex gemv of a matrix it reads by rows (not by columns) makes each
        # element beta * y + alpha * sum, beta = 1 + 0j included (by columns: y += ...); one
        # product per element of a C-ordered matrix is added as it is (torch 2.13, MKL)
        by_one = name == "addmv" and a.shape[1] and not (
            a.strides[0] == a.itemsize and a.strides[1] >= max(1, a.shape[0]) * a.itemsize
        ) and (a.shape[1] >= 2 or a.strides[1] != a.itemsize)
        return _scaled_sum(xp, x, out, beta, alpha, _KERNELS[name], empty, by_one)
    forward.__doc__ = f"beta * input + alpha * {_FORMULAS[name]} (torch.{name})."
    # each factor's rule reads the other factor and its own dtype only, so a factor is saved
    # only when the other needs a gradient, as torch's (writing it in place afterwards is then
    # no error: breadth seed 1306971)
    declared = op(name=name, save=("a", "b", "a.dtype", "b.dtype"), broadcast=True, method=True,
                  inplace=True)(forward)
    declared.defvjp(lambda g, a, b, a_dtype, b_dtype, beta, alpha: vjp_x(g, a_dtype, beta),
                    lambda g, a, b, a_dtype, b_dtype, beta, alpha: scale(
                        vjp_a(g, b, a_dtype), alpha.conjugate()),
                    lambda g, a, b, a_dtype, b_dtype, beta, alpha: scale(
                        vjp_b(g, a, b_dtype), alpha.conjugate()))
    declared.defjvp_all(lambda tangents, a, b, a_dtype, b_dtype, beta, alpha:
                        scaled_product_jvp(product, tangents, a, b, beta, alpha))
    return declared


def scaled_product_jvp(product, tangents, a, b, beta=1, alpha=1):
    """torch's formula ``beta x_t + alpha a_t @ b + alpha a @ b_t``, added in that order: a
    missing tangent of a factor is zeros (0 @ inf is NaN, as its mm's), x's is skipped."""
    tx, ta, tb = tangents
    ta, tb = (zeros_like(m) if t is None else t for m, t in ((a, ta), (b, tb)))
    out = scale(product(ta, b), alpha)
    out = out if tx is None else scale(tx, beta) + out
    return out + scale(product(a, tb), alpha)


def _check_addmm(x, a, b):
    # torch's addmm checks the dtypes before the ranks and sizes
    _same_dtype("self and mat2 must have the same dtype, but got {} and {}", x, b)
    _same_dtype("mat1 and mat2 must have the same dtype, but got {} and {}", a, b)
    _ndim(a, 2, "mat1 must be a matrix, got {}-D tensor")
    _ndim(b, 2, "mat2 must be a matrix, got {}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]}"
                           f" and {b.shape[0]}x{b.shape[1]})")


def _check_addmv(x, a, b):
    if a.ndim != 2 or b.ndim != 1 or x.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {x.ndim}, {a.ndim}, {b.ndim}")
    if a.shape[1] != b.shape[0] or x.size not in (1, a.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({x.size}), mat ({a.shape[0]}x{a.shape[1]}),"
                           f" vec ({b.shape[0]})")
    _same_dtype("addmv input tensors must have the same dtype, but got {}, {}, and {}", x, a, b)


def _size(array, dim: int) -> int:
    """array.size(dim) as torch reads it, with its IndexError for a missing dim."""
    if array.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return array.shape[_normalize_dim(dim, array.ndim)]


def _check_batches(x, a, b, name: str):
    # torch expands the input to the result's size (read from the batches) before it checks
    # the ranks
    target = [_size(array, dim) for array, dim in (
        ((a, 0), (a, 1), (b, 2)) if name == "baddbmm" else ((a, 1), (b, 2)))]
    _check_expandable(x, tuple(target))
    _ndim(a, 3, "batch1 must be a 3D tensor")
    _ndim(b, 3, "batch2 must be a 3D tensor")
    if name == "addbmm":
        if a.shape[0] != b.shape[0]:
            raise RuntimeError("batch1 and batch2 must have same number of batches, got "
                               f"{a.shape[0]} and {b.shape[0]}")
        if a.shape[2] != b.shape[1]:
            raise RuntimeError(f"Incompatible matrix sizes for bmm ({a.shape[1]}x{a.shape[2]} "
                               f"and {b.shape[1]}x{b.shape[2]})")
    elif a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")


def _check_baddbmm(x, a, b):
    _check_batches(x, a, b, "baddbmm")
    if x.dtype != a.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {c_type_name(x)}, batch1: "
                           f"{c_type_name(a)}, batch2: {c_type_name(b)}")
    if a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]:  # torch answers nothing summed first
        if a.dtype.kind == "b":  # its kernel is chosen by batch1's dtype before the check
            raise kernel_error_after_checks("baddbmm", a)
        _same_dtype("expected scalar type {} but found {}", a, b)


def _mixed_baddbmm(xp, x, a, b, beta):
    """torch's baddbmm of batches of two dtypes with nothing summed (its checks let no other
    through): the result, in batch2's dtype, is zeros at beta == 0, else beta * input cast."""
    shape = (a.shape[0], a.shape[1], b.shape[2])
    if beta == 0 or 0 in shape:
        return xp.zeros(shape, b.dtype)
    _check_scalar_fits(beta, b.dtype)
    cast = real_if_cast_to_real(xp.broadcast_to(x, shape), b.dtype).astype(b.dtype)
    return cast * as_dtype(xp, beta, b.dtype)


def _no_batch_integer_addbmm(xp, x, beta, shape):
    """torch's addbmm of no batch into an integer or bool input: zeros at beta == 0, else the
    input expanded, times beta in place (a wider beta refused even of no element: strided
    seed 1585288); no kernel runs, so a bool input is no error."""
    if beta == 0:
        return xp.zeros(shape, x.dtype)
    _check_scalar_fits(beta, x.dtype)
    out = xp.array(xp.broadcast_to(x, shape))
    return out if x.dtype.kind == "b" else out * x.dtype.type(int(beta))


def _check_scalar_fits(beta, dtype) -> None:
    """torch's refusal of an in-place ``mul_(beta)`` whose result type is wider than dtype."""
    if isinstance(beta, complex) and dtype.kind != "c":
        wider = np.result_type(dtype, np.complex64) if dtype.kind == "f" else np.complex64
    elif isinstance(beta, float) and dtype.kind in "iub":
        wider = np.float32
    elif type(beta) is int and dtype.kind == "b":
        wider = np.int64
    else:
        return
    raise RuntimeError(f"result type {scalar_type_name(np.zeros(0, wider))} can't be cast to "
                       f"the desired output type {scalar_type_name(np.zeros(0, dtype))}")


def _check_addbmm(x, a, b):
    _check_batches(x, a, b, "addbmm")
    if a.shape[0] == 0:  # torch compares no dtypes when there is no batch to multiply
        return
    _same_dtype("self and mat2 must have the same dtype, but got {} and {}", x, b)
    _same_dtype("mat1 and mat2 must have the same dtype, but got {} and {}", a, b)
    if a.dtype.kind == "b" and a.size and b.size:  # torch's addmm of each batch has no kernel
        raise kernel_error_after_checks(_KERNELS["addbmm"], a)


_CHECKS = {"addmm": _check_addmm, "addmv": _check_addmv, "baddbmm": _check_baddbmm,
           "addbmm": _check_addbmm}
_KERNELS = {"addmm": "addmm_impl_cpu_", "addmv": "addmv_impl_cpu", "baddbmm": "baddbmm_cpu",
            "addbmm": "addmm_impl_cpu_"}
_FORMULAS = {"addmm": "mat1 @ mat2", "addmv": "mat @ vec", "baddbmm": "batch1 @ batch2",
             "addbmm": "(batch1 @ batch2).sum(0)"}


def _matrix_product(a, b):
    return matmul(a, b)


def _batch_sum_product(a, b):
    # torch adds each batch's product into the result in its dtype (small integers wrap there)
    dtype = _array(a).dtype  # a is a Tensor in the jvp
    return sum(matmul(a, b), 0, dtype=None if dtype.kind in "fc" else dtype)


def _addbmm_half(xp, x, a, b, beta, alpha):
    """torch's float16 addbmm: one addmm_ per batch into the result, each computed in float32
    and rounded to float16 once (beta scales the input only in the first)."""
    out = xp.broadcast_to(x, (a.shape[1], b.shape[2]))
    for k in range(a.shape[0]):
        total = alpha * (a[k].astype(xp.float32) @ b[k].astype(xp.float32))
        scale = beta if k == 0 else 1
        if scale != 0:  # torch's beta == 0 leaves the input (its NaN too) out
            total = total + scale * out.astype(xp.float32)
        out = total.astype(HALF)
    return xp.array(out)


addmm = _declare("addmm", _matrix_product, rules.addmm_vjp_a, rules.addmm_vjp_b)
addmv = _declare("addmv", _matrix_product, rules.addmv_vjp_a, rules.addmm_vjp_b)
baddbmm = _declare("baddbmm", _matrix_product, rules.baddbmm_vjp_a, rules.baddbmm_vjp_b,
                   rules.baddbmm_vjp_x)
addbmm = _declare("addbmm", _batch_sum_product, rules.addbmm_vjp_a, rules.addbmm_vjp_b)
for _product in (addmm, addmv, baddbmm, addbmm):  # keyword-only Scalars: no position
    _product.numbers = numbers_reader(_product.name, "function" if _product in (
        addmm, baddbmm) else False, beta=None, alpha=None)  # (torch's out_dtype overloads)
addmm.input_keywords = ("input", "mat1", "mat2")  # torch's names, taken by keyword
addmv.input_keywords = ("input", "mat", "vec")
baddbmm.input_keywords = addbmm.input_keywords = ("input", "batch1", "batch2")


def _array(t):
    return getattr(t, "_data", t)


@op(save="x.shape", linear=True, method=True)
def trace(xp, x):
    """The sum of a matrix's diagonal (integers summed as int64)."""
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    if x.dtype.kind == "b":
        raise kernel_error("trace")(x)
    return xp.asarray(xp.trace(x, dtype=np.int64 if x.dtype.kind in "iu" else x.dtype))


trace.defvjp(lambda g, x_shape: diagonal_backward(expand(g, (min(x_shape),)), x_shape))
trace.defjvp(lambda t, x_shape: trace(t))


def _dim_list(dims, name: str) -> list:
    if isinstance(dims, int):
        raise TypeError(f"tensordot(): argument '{name}' (position 3) must be tuple of ints, "
                        "not int")
    return [int(d) for d in dims]


def tensordot(a, b, dims=2):
    """The sum of a * b over paired dims: the last ``dims`` of a with the first ``dims`` of b,
    or ``(dims_a, dims_b)`` lists; a size-1 dim pairs with any size (its partner is summed)."""
    if hasattr(dims, "tolist"):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))  # (torch's, negative)
    else:
        dims_a, dims_b = _dim_list(dims[0], "dims_self"), _dim_list(dims[1], "dims_other")
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if _array(a).dtype != _array(b).dtype:
        raise RuntimeError("both inputs should have same dtype")
    given = list(zip(dims_a, dims_b))  # torch's error names the dims as given
    dims_a = _distinct([_normalize_dim(d, a.ndim) for d in dims_a])
    dims_b = _distinct([_normalize_dim(d, b.ndim) for d in dims_b])
    for (da, db), (name_a, name_b) in zip(zip(dims_a, dims_b), given):
        # torch sums a size-1 dim's partner right away, in its dtype (two size-1 dims too: the
        # product saves that sum, not the operand)
        if b.shape[db] == 1:
            a = sum(a, da, keepdim=True, dtype=a.dtype)
        elif a.shape[da] == 1:
            b = sum(b, db, keepdim=True, dtype=b.dtype)
        elif a.shape[da] != b.shape[db]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[da]} in dim "
                f"{name_a} and second has size {b.shape[db]} in dim {name_b}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    size = math.prod(a.shape[d] for d in dims_a)
    rows, columns = math.prod(a.shape[d] for d in free_a), math.prod(b.shape[d] for d in free_b)
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    a, b = permute(a, free_a + dims_a), permute(b, dims_b + free_b)
    if rows == 1 == columns:  # one number: torch's dot where both lie flat, else mul and sum
        if _array(a).flags.c_contiguous and _array(b).flags.c_contiguous:
            return reshape(dot(flatten(a), flatten(b)), shape)
        return reshape(sum(squeeze(a) * squeeze(b), dtype=_array(a).dtype), shape)
    return reshape(matmul(reshape(a, (rows, size)), reshape(b, (size, columns))), shape)


@tensor_method()
@tensor_parameters("other")
def inner(input, other):
    """Inner product over the last dims: shape ``x.shape[:-1] + y.shape[:-1]`` (no conjugate)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def _distinct(dims: list) -> list:
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims
