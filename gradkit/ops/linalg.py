"""Matrix products: matmul (with NumPy/torch broadcasting and 1-D promotion) and friends."""
from __future__ import annotations

import math

import numpy as np

from gradkit.autograd.batching import batch_shape
from gradkit.ops._dispatch_general import _broadcast_message
from gradkit.ops import complex_products
from gradkit.ops._op import op, sum_to_shape
from gradkit.ops.arithmetic import mul
from gradkit.ops.complex import conj
from gradkit.ops.methods import tensor_method
from gradkit.ops.piecewise import zeros_like
from gradkit.ops.shape import reshape, t, transpose, unsqueeze
from gradkit.ops.unary_helpers import (c_type_name, kernel_error, kernel_error_after_checks,
                                      scalar_type_name)
from gradkit.tensor_arguments import tensor_parameters


# each gradient reads the other operand and both shapes, so a node keeps x only when y needs a
# gradient (and y only when x does), as torch's MmBackward0 saves self and mat2
@op(save=("x", "y", "x.shape", "y.shape"), batchable=True, method=True)
def matmul(xp, x, y):
    """Matrix product with NumPy's rules (1-D operands, batched leading dims)."""
    if x.ndim == 2 == y.ndim and x.shape[1] == y.shape[0] > 1 and x.dtype == y.dtype and \
            x.dtype.kind == "f":  # real matrices (an RNN's every product): no check below applies
        return xp.matmul(x, y)
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{x.ndim}D and {y.ndim}D")
    if x.ndim == y.ndim == 1:
        _dot_check(x, y)
    k_x = x.shape[-1]
    k_y = y.shape[-2] if y.ndim > 1 else y.shape[0]
    if x.ndim > 2 or y.ndim > 2:
        _check_batched(x, y, k_x, k_y)
    elif k_x != k_y:
        left = "x".join(map(str, x.shape if x.ndim == 2 else (1,) + x.shape))
        right = "x".join(map(str, y.shape if y.ndim == 2 else y.shape + (1,)))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({left} and {right})")
    if x.dtype != y.dtype:
        empty = _empty_batched_product(x, y)
        if empty is not None:
            return xp.zeros(empty, dtype=y.dtype)
        raise _mixed_dtypes(x, y)
    # torch has no bool kernel (named by the shapes) but answers empty products before it
    if x.dtype.kind == "b" and ((x.size and y.size) or x.ndim == y.ndim == 1):
        kernel = "dot" if x.ndim == y.ndim == 1 else _BOOL_KERNELS[_matmul_path(x, y)]
        raise kernel_error_after_checks(kernel, x)
    if x.dtype.kind == "c" and not complex_products.all_finite(xp, x, y):
        return complex_products.matmul(xp, x, y, _matmul_path(x, y))  # inf * 0 where torch's is
    if k_x == 1 and x.ndim == y.ndim == 2 and x.shape[0] > 1 and y.shape[1] > 1 \
            and x.dtype.kind in "fc":
        # torch's gemm keeps each single product's sign (-0.0); NumPy's BLAS adds it to +0.0.
        # Its small complex gemm multiplies x by 1 + 0j first, which decides the zero parts
        if x.dtype.kind == "c":
            x = complex_products.times_one(xp, x)
        with np.errstate(invalid="ignore", over="ignore"):  # silent, as matmul is
            return x * y
    if x.dtype.kind == "f" and x.dtype.itemsize >= 4 and x.ndim >= 2 and y.ndim >= 2 and \
            k_x and complex_products.small_bmm(x, y) and _matmul_path(x, y) == "bmm":
        product = _small_bmm(xp, x, y)
    elif x.dtype.kind == "c" and x.ndim >= 2 and y.ndim >= 2 and k_x > 1:
        # torch's gemm sums into +0.0, so an exact zero part is +0.0; NumPy's small complex
        # products leave -0.0 where every term is -0.0 (adding 0 changes nothing else)
        product = xp.matmul(x, y) + 0
    else:
        product = xp.matmul(x, y)
    # (NumPy lays a batched product of column-major operands out by columns; torch's is C)
    return xp.ascontiguousarray(product) if product.ndim > 2 else product


def _small_bmm(xp, x, y):
    """torch's own bmm loop (under 400 multiply-adds a matrix): each entry adds its products
    in order to 0, each rounded (NumPy's BLAS fuses them: products of equal rows that cancel
    in torch leave their rounding error here, nn_new seed 334183)."""
    with np.errstate(invalid="ignore", over="ignore"):  # silent, as matmul is
        products = x[..., :, :, None] * y[..., None, :, :]
        return xp.cumsum(products, axis=-2)[..., -1, :] + 0  # (from +0.0, as torch's sum)


def _check_batched(x, y, k_x: int, k_y: int) -> None:
    """torch's errors for a product with batch dims, as its matmul computes it: a batched x
    times a matrix or vector is folded into one mm/mv; otherwise the batch dims broadcast
    first, then one bmm over their product (with no operand requiring grad: torch folds a
    vector or matrix times a batch then, which changes only the message)."""
    if y.ndim <= 2:
        if k_x != k_y:
            rows = math.prod(x.shape[:-1])
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k_x}), vec "
                               f"({k_y})" if y.ndim == 1 else "mat1 and mat2 shapes cannot be "
                               f"multiplied ({rows}x{k_x} and {k_y}x{y.shape[1]})")
        return
    batches = (x.shape[:-2], y.shape[:-2])
    try:
        count = math.prod(np.broadcast_shapes(*batches))
    except ValueError:
        raise RuntimeError(_broadcast_message([np.broadcast_to(0, b) for b in batches])) \
            from None
    if k_x != k_y:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{count}, {k_x}] but got: [{count}, {k_y}].")


def _empty_batched_product(x, y) -> tuple | None:
    """The result's shape where torch's matmul of two batches reaches bmm with nothing to sum
    (an empty result, or an empty sum: zeros), which bmm answers before its dtype check, in
    mat2's dtype; else None. Left to the dtype error: a batch and a matrix or vector, or a
    batch of ones (torch folds them into mm, which checks, when one requires grad), a bool
    mat2 (torch's autograd refuses a bool result of an input requiring grad) and a floating
    self of a complex mat2 (its backward refuses the complex gradient): the op does not know
    which input requires grad. An integer or bool self never does (signal seed 337116), and
    a matrix times a batch reaches bmm unless the matrix requires grad (strided_breadth seed
    1981562: a bool matrix times an empty batch)."""
    matrix_to_bmm = x.ndim == 2 and y.ndim >= 3 and x.dtype.kind in "biu"
    if not matrix_to_bmm and (x.ndim < 3 or y.ndim < 3 or math.prod(x.shape[:-2]) == 1 or
                              math.prod(y.shape[:-2]) == 1 or y.dtype.kind == "b" or (
                                  y.dtype.kind == "c" and x.dtype.kind in "fV")):
        return None
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    if math.prod(batch) * x.shape[-2] * x.shape[-1] * y.shape[-1]:
        return None
    return batch + (x.shape[-2], y.shape[-1])


def _mixed_dtypes(x, y) -> RuntimeError:
    """torch's refusal of two dtypes in the words of the kernel its matmul reaches: mm for a
    matrix product, addmv for a matrix (or folded batch) times a vector, else bmm's."""
    path = _matmul_path(x, y)
    if path == "mm":
        return RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                            f"{c_type_name(x)} != {c_type_name(y)}")
    if path in ("mv", "vm"):  # (the result, in the vector's dtype; the matrix; the vector)
        matrix, vector = (x, y) if path == "mv" else (y, x)
        names = [scalar_type_name(a) for a in (vector, matrix, vector)]
        return RuntimeError("addmv input tensors must have the same dtype, but got "
                            f"{names[0]}, {names[1]}, and {names[2]}")
    if x.dtype.kind == "b":  # bmm's kernel is chosen by batch1's dtype first
        return kernel_error("bmm")(x)
    return RuntimeError(f"expected scalar type {scalar_type_name(x)} but found "
                        f"{scalar_type_name(y)}")


def _matmul_path(x, y) -> str:
    """The kernel torch's matmul calls (without an operand requiring grad): mm, mv, "vm" (a
    vector times a batch folded into one matrix) or bmm. A batch times a matrix or vector is
    folded into one matrix when its leading dims are laid out contiguously (a view otherwise)."""
    if x.ndim <= 2 and y.ndim <= 2:
        return "mv" if y.ndim == 1 else "mm"
    larger = x if x.ndim >= y.ndim else y.swapaxes(-1, -2)  # (a device array too)
    other = y.ndim if x.ndim >= y.ndim else x.ndim
    folds = other <= 2 and x.ndim != 2 and (larger.size == 0 or all(
        larger.strides[i] == larger.strides[i + 1] * larger.shape[i + 1]
        for i in range(larger.ndim - 2)))
    if not folds:
        return "bmm"
    if x.ndim >= y.ndim:
        return "mv" if y.ndim == 1 else "mm"
    return "vm"  # (a matrix times a batch is never folded)


_BOOL_KERNELS = {"mm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu", "vm": "addmv_impl_cpu",
                 "bmm": "bmm"}  # the CPU kernels (without a bool one) of matmul's paths


def _as_matrix_grad(g, x_ndim: int, y_ndim: int):
    """g shaped as the product of the operands promoted to matrices (1-D ones, as matmul
    promotes them)."""
    if x_ndim == 1 and y_ndim == 1:
        return reshape(g, batch_shape() + (1, 1))
    g = unsqueeze(g, -2) if x_ndim == 1 else g
    return unsqueeze(g, -1) if y_ndim == 1 else g


def _plain_matrices(g, other) -> bool:
    """Whether a plain backward's rule may run as one product of raw real 2-D arrays: no
    batch dimension, no conj, no promotion, no reshape (an RNN's every step takes this)."""
    return type(g) is np.ndarray and type(other) is np.ndarray and g.ndim == 2 == other.ndim \
        and g.dtype == other.dtype and g.dtype.kind == "f"


def _last_two_swapped(a):
    """A matrix's ``t()`` (torch's mm backward records TBackward0), else a transpose of the
    last two dims."""
    return t(a) if a.ndim == 2 and not batch_shape() else transpose(a, -1, -2)


def _matmul_vjp_x(g, x, y, x_shape, y_shape):
    if _plain_matrices(g, y) and len(x_shape) == 2:  # what the general lines compute
        return matmul.forward(np, g, y.T)
    if len(y_shape) == 1:  # torch's dot and mv (a batched matrix folded into one): grad *
        # conj(vec), elementwise products (grad.ger(vec.conj()) for mv), not a product's
        # kernel, whose tangent would count a missing one as zeros (0 * NaN: fwd 538602)
        return _reshape_if_needed(mul(_as_matrix_grad(g, len(x_shape), 1), conj(y)), x_shape)
    g2 = _as_matrix_grad(g, len(x_shape), len(y_shape))
    y2 = y if len(y_shape) > 1 else unsqueeze(y, -1)
    gx = matmul(g2, conj(_last_two_swapped(y2)))
    x2_shape = x_shape if len(x_shape) > 1 else (1, *x_shape)
    return _reshape_if_needed(sum_to_shape(gx, x2_shape), x_shape)


def _matmul_vjp_y(g, x, y, x_shape, y_shape):
    if _plain_matrices(g, x) and len(y_shape) == 2:
        return matmul.forward(np, x.T, g)
    if len(y_shape) == 1 and len(x_shape) <= 2:  # torch's dot: grad * conj(self); mv's:
        # self.conj().t().mv(grad), a gemv
        g2 = _as_matrix_grad(g, len(x_shape), 1)
        gy = mul(g2, conj(x)) if len(x_shape) == 1 else matmul(conj(transpose(x, 0, 1)), g2)
        return _reshape_if_needed(gy, y_shape)
    if len(y_shape) == 2 and len(x_shape) > 2 and not batch_shape():  # torch's folded mm:
        # one product of x's rows (its kernel's rules at inf, not a sum of bmm's)
        rows, k = math.prod(x_shape[:-1]), x_shape[-1]
        return matmul(conj(t(reshape(x, (rows, k)))), reshape(g, (rows, y_shape[1])))
    g2 = _as_matrix_grad(g, len(x_shape), len(y_shape))
    x2 = x if len(x_shape) > 1 else unsqueeze(x, 0)
    gy = matmul(conj(_last_two_swapped(x2)), g2)
    y2_shape = y_shape if len(y_shape) > 1 else (*y_shape, 1)
    return _reshape_if_needed(sum_to_shape(gy, y2_shape), y_shape)


def _reshape_if_needed(g, shape):
    """Undo the 1-D promotion; a matrix gradient stays a fresh array (``.grad`` can own it)."""
    shape = batch_shape() + shape
    return g if tuple(g.shape) == shape else reshape(g, shape)


def _torch_saves_views(saved) -> tuple:
    """Which of matmul's saved (x, y, x.shape, y.shape) torch saves as a view: x of a 1-D x
    times a matrix (unsqueezed), of a 2-D x times a batch (transposed), any batched operand
    (reshaped or transposed); a 1-D or 2-D operand of dot, mv, mm or a fold is saved itself."""
    if saved[2] is None or saved[3] is None:
        return True, True, False, False
    x_ndim, y_ndim = len(saved[2]), len(saved[3])
    x_view = (x_ndim == 1 and y_ndim == 2) or x_ndim >= 3 or (x_ndim == 2 and y_ndim >= 3)
    return x_view, y_ndim >= 3, False, False


matmul.torch_saves_views = _torch_saves_views
matmul.defvjp(_matmul_vjp_x, _matmul_vjp_y)


def _zero_filled_jvp(product):
    """The jvp of a matrix product as torch's formula ``x_t @ y + x @ y_t``: a missing
    tangent counts as zeros (so 0 @ inf is NaN, as in torch), but for a dot of two vectors,
    whose formula skips it."""
    def rule(tangents, x, y, *meta):
        tx, ty = tangents[0], tangents[1]
        if x.dim() > 1 or y.dim() > 1:
            tx, ty = (zeros_like(a) if t is None else t for a, t in ((x, tx), (y, ty)))
        terms = ([product(tx, y)] if tx is not None else []) + \
            ([product(x, ty)] if ty is not None else [])
        return terms[0] if len(terms) == 1 else terms[0] + terms[1]
    return rule


matmul.defjvp_all(_zero_filled_jvp(matmul))


@tensor_method()
@tensor_parameters("mat2")
def mm(input, mat2):
    """Matrix product of two 2-D tensors."""
    _check_ndim(input, 2, "self must be a matrix")
    _check_ndim(mat2, 2, "mat2 must be a matrix")
    return matmul(input, mat2)


def _check_ndim(t, ndim: int, expected: str) -> None:
    """torch's error for an operand of the wrong rank (mm's and bmm's name no rank; addmm's
    "..., got 1-D tensor" is its own)."""
    if t.ndim != ndim:
        raise RuntimeError(expected)


MIXED_COMPLEX_GRAD = (
    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be "
    "true, but got false.  (Could this error message be improved?  If so, please report an "
    "enhancement request to PyTorch.)")


# torch's bmm is an op of its own: BmmBackward0 saves self and mat2 themselves (no view, so a
# leaf detached since comes back without history), where a batched matmul saves views.
# broadcast: a batched vjp rule (is_grads_batched) multiplies a batched gradient by an
# unbatched operand, and a second backward through that product sums the batch back
@op(save=("x", "y", "x.dtype"), batchable=True, broadcast=True)
def _bmm(xp, x, y):
    if x.dtype != y.dtype:  # an empty product (bmm refused the others): zeros, mat2's dtype
        return xp.zeros(x.shape[:-1] + y.shape[-1:], dtype=y.dtype)
    return matmul.forward(xp, x, y)


def _bmm_vjp_x(g, x, y, x_dtype):
    gx = _bmm(g, conj(transpose(y, -1, -2)))
    if getattr(gx, "_data", gx).dtype.kind == "c" and x_dtype.kind != "c":
        # only an empty product of a real self and a complex mat2 gets here; torch's engine
        # refuses the complex gradient of a real input (no op of its takes the real part)
        raise RuntimeError(MIXED_COMPLEX_GRAD)
    return gx


_bmm.defvjp(_bmm_vjp_x, lambda g, x, y, x_dtype: _bmm(conj(transpose(x, -1, -2)), g))
_bmm.defjvp_all(_zero_filled_jvp(_bmm))


@tensor_method()
@tensor_parameters("mat2")
def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors with the same batch size."""
    _check_ndim(input, 3, "batch1 must be a 3D tensor")
    _check_ndim(mat2, 3, "batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
            f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    x_data, y_data = getattr(input, "_data", input), getattr(mat2, "_data", mat2)
    if x_data.dtype.kind == "b" and x_data.size and y_data.size:  # torch's kernel check first
        raise kernel_error("bmm")(x_data)
    if x_data.dtype != y_data.dtype:
        if not (x_data.size and y_data.size):  # torch answers an empty product first, as mat2,
            return _bmm(input, mat2)  # and saves both operands as they are (a write bumps
            # their version)
        raise RuntimeError(f"expected scalar type {scalar_type_name(x_data)} but found "
                           f"{scalar_type_name(y_data)}")
    return _bmm(input, mat2)


@tensor_method()
@tensor_parameters("vec")
def mv(input, vec):
    """Matrix-vector product of a 2-D x and a 1-D v."""
    if input.ndim == 0:  # torch reads input's size(0) first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.ndim != 2 or vec.ndim != 1:  # addmv's message: the result (1-D), matrix, vector
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:  # torch's addmv words it (input: the result's size)
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    return matmul(input, vec)


@tensor_method()
@tensor_parameters("tensor")
def dot(input, tensor):
    """Inner product of two 1-D tensors (no conjugation, as torch.dot)."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    _dot_check(input, tensor)
    return matmul(input, tensor)


def _dot_check(x, y) -> None:
    """torch's checks of two vectors (dot, vdot, matmul of two 1-D): dtypes, then sizes."""
    if x.dtype != y.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(x)} and {scalar_type_name(y)}")
    if x.shape[0] != y.shape[0]:
        n, m = x.shape[0], y.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have "
                           f"the same number of elements, but got {n} and {m} elements "
                           "respectively")


@op(name="vdot", save=("x", "y"), batchable=True)
def _vdot(xp, x, y):
    return matmul.forward(xp, xp.conj(x) if x.dtype.kind == "c" else x, y)


# torch's VdotBackward0: grad.conj() * other and grad * self, elementwise (the zero parts'
# signs of conj(grad * conj(other)) differ)
_vdot.defvjp(lambda g, x, y: mul(conj(unsqueeze(g, -1)), y),
             lambda g, x, y: mul(unsqueeze(g, -1), x))
_vdot.defjvp(lambda t, x, y: _vdot(t, y), lambda t, x, y: _vdot(x, t))


@tensor_parameters("other")
def vdot(input, other):
    """Dot product of two 1-D tensors, conjugating the first."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _dot_check(input, other)
    return _vdot(input, other)


@tensor_method()
@tensor_parameters("vec2")
def outer(input, vec2):
    """Outer product of two 1-D tensors."""
    for name, vector in (("self", input), ("vec2", vec2)):  # torch's check names its arguments
        if vector.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {vector.ndim}-D")
    return reshape(input, (input.shape[0], 1)) * vec2  # torch's: vec2 saved itself, input a view


ger = outer
