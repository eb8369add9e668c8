"""Fused layer ops behind gradkit.nn.functional: linear, layer_norm, dropout (embedding has
its own file, ops/embedding.py)."""
from __future__ import annotations

import math

import numpy as np

from gradkit.number_arguments import number_argument
from gradkit.backend import get_array_module
from gradkit.creation import bernoulli_mask
from gradkit.ops._op import Op, op
from gradkit.ops.arithmetic import mul
from gradkit.ops.complex import conj
from gradkit.ops.conversion import astype
from gradkit.ops.products import scaled_product_jvp
from gradkit.ops.half_scalar import HALF
from gradkit.ops.elementwise import rsqrt
from gradkit.ops.inplace import inplace as write_inplace
from gradkit.ops.linalg import _zero_filled_jvp, matmul
from gradkit.ops.reduction import mean, sum
from gradkit.ops.shape import (
    _reshape_copy as reshape_copy, reshape, t, unsqueeze, view)
from gradkit.tensor_arguments import tensor_parameters
from gradkit.ops.variance import constant_along
from gradkit.ops.unary_helpers import (
    c_type_name, cpp_number, kernel_error, require_real_floating, scalar_type_name)


def _addmm(xp, x, a, b):
    return xp.matmul(a, b) + x


def _mm(xp, a, b):
    return xp.matmul(a, b)


# swapaxes: a method of arrays (a plain backward's, cheap) and of Tensors (create_graph)
def _grad_mat1(g, a, b):
    return matmul(g, conj(b).swapaxes(-1, -2))


def _grad_mat2(g, a, b):
    # mat2 is weight.t(): torch's mm backward of a column-major mat2 (a contiguous weight's)
    # computes the product transposed, so that the weight's gradient comes out contiguous
    return matmul(g.swapaxes(-1, -2), conj(a)).swapaxes(-1, -2)


# linear's addmm(bias, mat1, weight.t()) and mm(mat1, weight.t()): torch's nodes and input
# orders, without the general ops' scalars and checks (linear checked its operands already)
addmm = Op(_addmm, name="addmm", save=("a", "b"), broadcast=True, node_name="AddmmBackward0",
           batchable=True)
addmm.defvjp(lambda g, a, b: g,  # summed to the bias's shape by the engine (broadcast)
             _grad_mat1, _grad_mat2)
mm = Op(_mm, name="mm", save=("a", "b"), node_name="MmBackward0", batchable=True)
mm.defvjp(_grad_mat1, _grad_mat2)
# torch's formulas: a missing tangent of a factor is zeros (0 @ inf is NaN), the bias's is not
mm.defjvp_all(_zero_filled_jvp(matmul))
addmm.defjvp_all(lambda tangents, a, b: scaled_product_jvp(matmul, tangents, a, b))


def _matmul_by_t(input, weight):
    """torch's matmul(input, weight.t()): a batch of rows folded into one product (viewed back
    unsafely) when the input is contiguous or the weight needs a gradient; a 1-D input by a
    matrix unsqueezed into mm and squeezed back; a matrix by a matrix mm; else matmul's."""
    if input.ndim > 2 and (input.is_contiguous() or weight.requires_grad):
        lead = tuple(input.shape[:-1])
        rows = reshape(input, (math.prod(lead), input.shape[-1]))
        return reshape_copy(_matmul_by_t(rows, weight), shape=lead + tuple(weight.shape[:-1]))
    if weight.ndim == 1 or input.ndim > 2:
        return matmul(input, t(weight))
    if input.ndim == 1:
        return mm(unsqueeze(input, 0), t(weight)).squeeze_(0)
    return mm(input, t(weight))


def _refuse_bool_product(input, weight, bias) -> None:
    """torch's matmul kernels have no bool, but an empty product runs none (a 1-d dot does);
    its addmm then scales the bias by an integer beta, which bool cannot hold."""
    if input.ndim == weight.ndim == 1 or (input.numel() and weight.numel()):
        raise kernel_error("dot" if input.ndim == weight.ndim == 1 else "addmm_impl_cpu_")(
            input._data)
    if bias is not None and input.ndim == 2 and input.shape[0] * weight.shape[0]:
        raise RuntimeError("result type Long can't be cast to the desired output type Bool")


def _fused(input, bias) -> bool:
    """torch 2.13's linear takes its addmm path (whose dtype check refuses a bias of another
    dtype) for a 2-D input, or a contiguous one with a 1-D bias; else it computes matmul, then
    add_ of the bias (a contiguous 3-D input with a 0-D or 2-D bias too)."""
    return input.ndim == 2 or input.is_contiguous() and bias.ndim == 1


@tensor_parameters("input", "weight", "bias")
def linear(input, weight, bias=None):
    """y = input @ weight.T + bias (torch.nn.functional.linear).

    >>> linear(gradkit.randn(2, 3), gradkit.randn(4, 3), gradkit.zeros(4)).shape
    gradkit.Size([2, 4])
    """
    if not input.ndim or not weight.ndim:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if weight.ndim > 2:  # torch transposes the weight first
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D")
    if input.shape[-1] != weight.shape[-1]:
        rows = math.prod(input.shape[:-1]) if input.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
                           f"and {'x'.join(map(str, reversed(weight.shape)))})")
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{c_type_name(input._data)} != {c_type_name(weight._data)}")
    bias_data = getattr(bias, "_data", bias)
    if bias is not None and bias_data.dtype != weight._data.dtype:
        if _fused(input, bias):  # torch's addmm check
            raise RuntimeError("self and mat2 must have the same dtype, but got "
                               f"{scalar_type_name(bias_data)} and "
                               f"{scalar_type_name(weight._data)}")
        return _matmul_by_t(input, weight).add_(bias)  # the bias promoted into the result
    if input._data.dtype.kind == "b":
        _refuse_bool_product(input, weight, bias)
    if bias is not None and bias.ndim and bias.shape[-1] not in (1, weight.shape[0]):
        raise RuntimeError(f"The expanded size of the tensor ({weight.shape[0]}) must match the "
                           f"existing size ({bias.shape[-1]}) at non-singleton dimension "
                           f"{max(input.ndim - 1, 0)}.  Target sizes: "
                           f"{list(input.shape[:-1]) + [weight.shape[0]]}.  Tensor sizes: "
                           f"{list(bias.shape)}")
    if bias is None or not _fused(input, bias):  # torch's matmul, then add_ of the bias
        out = _matmul_by_t(input, weight)
        return out if bias is None else out.add_(bias)
    if weight.ndim == 1:
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    if input.ndim == 2:
        return addmm(bias, input, t(weight))
    # torch's _flatten_nd_linear: a contiguous input viewed as rows, the rows' result viewed back
    lead = tuple(input.shape[:-1])
    rows = reshape(input, (math.prod(lead), input.shape[-1]))
    return view(addmm(bias, rows, t(weight)), shape=lead + (weight.shape[0],))


# -- layer norm -----------------------------------------------------------------------------

@op(save=("x", "w", "b"), node_name="NativeLayerNormBackward0", contiguous=True)
def _layer_norm(xp, x, w, b, axes=(), eps=1e-5):
    dtype = x.dtype
    if dtype == xp.float16:  # torch's kernel works in float32 and rounds the result once
        x, w, b = (None if a is None else a.astype(xp.float32) for a in (x, w, b))
    constant, first = constant_along(xp, x, axes)  # torch's Welford mean is exact there
    mu = xp.where(constant, first, xp.mean(x, axis=axes, keepdims=True))
    centered = x - mu
    var = xp.mean(centered * centered, axis=axes, keepdims=True)
    out = centered / xp.sqrt(var + eps)
    if w is not None:
        out = out * w
    # torch's kernel adds a bias of 0 when none is given, which makes -0.0 0.0
    out = out + (0.0 if b is None else b)
    return out.astype(dtype, copy=False)


def _layer_norm_vjp(g, x, w, b, axes, eps):
    """Joint vjp: y = xhat * w + b, xhat = (x - mean) * rstd over ``axes`` (b is saved for
    torch's ``_saved_bias`` only)."""
    if _dtype_of(x) == HALF:
        return _layer_norm_vjp_half(g, x, w, axes, eps)
    lead = tuple(range(x.ndim - len(axes)))
    centered = x - mean(x, axes, True)
    rstd = rsqrt(mean(centered * centered, axes, True) + eps)
    xhat = centered * rstd
    g_xhat = g * w if w is not None else g
    g_x = rstd * (g_xhat - mean(g_xhat, axes, True) - xhat * mean(g_xhat * xhat, axes, True))
    g_w = _sum_leading(g * xhat, lead) if w is not None else None
    return g_x, g_w, _sum_leading(g, lead)


def _layer_norm_vjp_half(g, x, w, axes, eps):
    """torch's float16 backward: float32 arithmetic on the mean and rstd its forward saved
    (rounded to float16 with float16 parameters), in its kernel's form dx = rstd g w + b x + c
    (bit for bit)."""
    def wide(t):
        return astype(t, np.float32)

    def saved(t):  # float16 unless the parameters are float32 (torch's mixed-type kernel)
        return t if w is not None and _dtype_of(w) == np.float32 else wide(astype(t, HALF))
    lead = tuple(range(x.ndim - len(axes)))
    x32, g32 = wide(x), wide(g)
    centered = x32 - mean(x32, axes, True)
    mu = saved(mean(x32, axes, True))
    rstd = saved(rsqrt(mean(centered * centered, axes, True) + eps))
    gw = g32 * wide(w) if w is not None else g32
    scale = 1.0 / math.prod(x.shape[a] for a in axes)
    ds, db = sum(gw * x32, axes, True), sum(gw, axes, True)
    b = (db * mu - ds) * rstd * rstd * rstd * scale
    g_x = rstd * gw + b * x32 + (-b * mu - db * rstd * scale)
    g_w = None if w is None else astype(
        _sum_leading(g32 * ((x32 - mu) * rstd), lead), _dtype_of(w))
    return astype(g_x, HALF), g_w, astype(_sum_leading(g32, lead), _dtype_of(g))


def _dtype_of(t):
    """The NumPy dtype of a Tensor or of the array a rule sees without create_graph."""
    return getattr(t, "_data", t).dtype


def _sum_leading(t, lead):
    # sum over no dims reduces over all of them (torch's dim=() rule): none to sum is t itself
    return sum(t, lead) if lead else t


def _layer_norm_jvp(tangents, x, w, b, axes, eps):
    t_x, t_w, t_b = tangents
    centered = x - mean(x, axes, True)
    rstd = rsqrt(mean(centered * centered, axes, True) + eps)
    xhat = centered * rstd
    total = None
    if t_x is not None:
        t_xhat = rstd * (t_x - mean(t_x, axes, True) - xhat * mean(xhat * t_x, axes, True))
        total = t_xhat * w if w is not None else t_xhat
    for term in (xhat * t_w if t_w is not None else None, t_b):
        if term is not None:
            total = term if total is None else total + term
    return total


_layer_norm.defvjp_all(_layer_norm_vjp)
_layer_norm.defjvp_all(_layer_norm_jvp)
_layer_norm.every_edge = True  # torch's node has an edge per input: (None, 0) for no bias


def checked_normalized_shape(input, normalized_shape, params: dict, star: str) -> tuple:
    """``normalized_shape`` as a tuple after torch's checks (layer_norm's and rms_norm's): at
    least one dim, each of ``params`` (weight, bias) of that shape, then the input's trailing
    dims (``star``: how the message spells the leading ones)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, param in params.items():
        if param is not None and tuple(param.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(param.shape)} and normalized_shape = "
                               f"{list(shape)}")
    if input.ndim < len(shape) or tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[{star}{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    return shape


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalize over the trailing ``normalized_shape`` dims, then scale and shift.

    >>> layer_norm(gradkit.randn(2, 3), (3,)).shape
    gradkit.Size([2, 3])
    """
    eps = number_argument(eps, "layer_norm", "eps", 5, "float", optional=False)
    shape = checked_normalized_shape(input, normalized_shape, {"weight": weight, "bias": bias},
                                     "*, ")
    k = len(shape)
    require_real_floating("LayerNormKernelImpl", input._data)
    axes = tuple(range(input.ndim - k, input.ndim))
    return _layer_norm(input, weight, bias, axes=axes, eps=eps)


# -- dropout --------------------------------------------------------------------------------

def check_dropout_p(p) -> None:
    """torch's Python ValueError for a dropout p outside [0, 1], then its kernel's
    RuntimeError for what passes that check but not ``0 <= p <= 1`` (a NaN)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                           f"{cpp_number(p)}")


def check_dropout_dtype(data, alpha: bool = False) -> None:
    """torch's refusals of a random mask (0 < p < 1) for non-floating inputs: its float mask
    cannot be cast to an integer or bool result (alpha dropout's shift makes a bool Long),
    and no bernoulli kernel draws complex numbers."""
    if data.dtype.kind == "c":
        raise NotImplementedError(f'"bernoulli_scalar_cpu_" not implemented for '
                                  f"'{scalar_type_name(data)}'")
    if data.dtype.kind in "biu":
        name = "Long" if alpha and data.dtype.kind == "b" else scalar_type_name(data)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")


def in_layout_of(data, values):
    """``values`` (of ``data``'s shape) cast to its dtype, in its memory layout: torch draws
    the mask into empty_like(input), so the product keeps a permuted input's strides."""
    out = get_array_module(data).empty_like(data)
    out[...] = values
    return out


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training).

    >>> dropout(gradkit.ones(4), p=0.0).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    check_dropout_p(p)  # torch's Python check, then its parser's and its kernel's
    p = number_argument(p, "dropout_" if inplace else "dropout", "p", 2, "float")
    check_dropout_p(p)
    if not training or p == 0.0 or not input.numel():  # torch returns an empty input itself
        return input  # (a write into the result is one into it: strided seed 91360)
    data = input._data
    if p < 1.0:
        check_dropout_dtype(data)
    xp = get_array_module(data)
    keep = xp.asarray(bernoulli_mask(data.shape, p))
    scale = in_layout_of(data, keep * (1.0 / (1.0 - p)) if p < 1.0 else keep * 0.0)
    if inplace:
        return write_inplace(input, mul, scale)
    return input * scale
