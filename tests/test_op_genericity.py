"""Every op runs through the array module of its inputs: no numpy-only code in forwards or rules.

Two tables are walked: the shared op table (tests/op_db.py) and SAMPLES below, which adds
device stories (in-place on views, setitem, device moves, nn.functional, index tensors on the
device). Each sample runs twice: on CPU tensors and on "cuda" tensors backed by ``strict_xp``
(a CuPy stand-in that refuses numpy-only functions, methods and mixing in host arrays).
Forward values, first gradients (plain backward: rules on arrays) and second gradients
(``create_graph=True``: rules on Tensors) must agree, and everything computed must stay on the
device. A coverage test fails for an op that no sample reaches.
"""
import sys

import numpy as np
import pytest

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - torch's spelling
import op_db
import strict_xp
from fuzz.ops_breadth import NO_GRAD_SPECIAL, POLYNOMIALS
from gradkit.autograd import observers
from gradkit.ops._op import Op
from gradkit.ops.einsum import _einsum
from gradkit.ops.in_place_names import in_place_name

F64 = gradkit.float64


def R(*shape, low=None):
    """A float64 leaf (values in [low, low + 1) when low is given, else standard normal)."""
    data = np.random.standard_normal(shape) if low is None else low + np.random.random(shape)
    return gradkit.tensor(data, dtype=F64, requires_grad=True)


def C(*shape):
    data = np.random.standard_normal(shape) + 1j * np.random.standard_normal(shape)
    return gradkit.tensor(data, dtype=gradkit.complex128, requires_grad=True)


def I(values):  # noqa: E743 - reads like a type in the table
    return gradkit.tensor(values, dtype=gradkit.int64)


def M(values):
    return gradkit.tensor(values, dtype=gradkit.bool)


def _inplace_on_copy(method, *args):
    def fn(x, *rest):
        y = x * 1.0
        getattr(y, method)(*rest, *args)
        return y
    return fn


def _inplace_on_view(x):
    y = x * 1.0
    y[1].mul_(3.0)
    return y


def _setitem(x, v):
    y = x * 1.0
    y[1:, I([0, 2])] = v
    return y


G = gradkit
def _identity(a):
    return gradkit.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _well_conditioned(a):
    return a + 3 * _identity(a)


SAMPLES = {
    # elementwise
    **{name: (getattr(G, name), lambda: (R(2, 3),)) for name in (
        "abs", "atan", "ceil", "cos", "cosh", "erf", "exp", "exp2", "expm1", "floor", "gelu",
        "neg", "relu", "round", "sgn", "sigmoid", "sign", "silu", "sin", "sinh", "softplus",
        "square", "tan", "tanh", "trunc", "clone", "isnan", "isinf", "isfinite")},
    **{name: (getattr(G, name), lambda: (R(2, 3, low=0.5),)) for name in (
        "log", "log1p", "log2", "log10", "reciprocal", "rsqrt", "sqrt")},
    **{name: (getattr(G, name), lambda: (R(2, 3, low=-0.5),)) for name in ("acos", "asin")},
    "elu": (lambda x: G.ops.elu(x, 0.7), lambda: (R(2, 3),)),
    "leaky_relu": (lambda x: G.ops.leaky_relu(x, 0.1), lambda: (R(2, 3),)),
    "gelu_tanh": (lambda x: G.gelu(x, approximate="tanh"), lambda: (R(2, 3),)),
    "clamp": (lambda x: G.clamp(x, -0.5, 0.5), lambda: (R(2, 3),)),
    "clamp_tensor": (lambda x, lo: G.clamp(x, min=lo), lambda: (R(2, 3), R(3))),
    "clamp_tensors": (lambda x, lo, hi: G.clamp(x, lo, hi), lambda: (R(2, 3), R(3), R(2, 1))),
    # binary, broadcasting
    **{name: (getattr(G, name), lambda: (R(2, 3), R(3))) for name in (
        "add", "sub", "mul", "div", "maximum", "minimum", "remainder", "eq", "ne", "lt", "le",
        "gt", "ge", "isclose")},
    "add_alpha": (lambda x, y: G.add(x, y, alpha=2.5), lambda: (R(2, 3), R(2, 1))),
    "sub_scalar": (lambda x: 3.0 - x, lambda: (R(2, 3),)),
    "pow": (G.pow, lambda: (R(2, 3, low=0.5), R(3))),
    "pow_scalar": (lambda x: x ** 3, lambda: (R(2, 3),)),
    # forward only: its backward refuses, as torch's
    "floor_divide": (G.floor_divide, lambda: (R(2, 3).detach(), R(3, low=1.0).detach())),
    "int_true_divide": (lambda a, b: a / b, lambda: (I([1, 2, 3]), I([2, 2, 2]))),
    "where": (lambda c, x, y: G.where(c, x, y), lambda: (M([True, False, True]), R(2, 3), R(3))),
    **{name: (getattr(G, name), lambda: (M([True, False]), M([True, True]))) for name in (
        "logical_and", "logical_or", "logical_xor")},
    "logical_not": (G.logical_not, lambda: (M([True, False]),)),
    "bitwise_not": (G.bitwise_not, lambda: (I([1, -2, 3]),)),
    **{name: (getattr(G, name), lambda: (I([3, 6, -2]), I([5]))) for name in (
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")},
    "int_pow_negative": (lambda a, b: a ** b, lambda: (I([2, 1, -1]), I([-1, -2, -3]))),
    "number_pow": (lambda x: 2.0 ** x + 1j ** x, lambda: (R(2, 3),)),
    "complex_zero_pow": (lambda z, w: (z * 0) ** w, lambda: (C(3), C(3))),
    # complex
    "conj_real_imag": (lambda z: G.real(z) * 2 + G.imag(z.conj()), lambda: (C(2, 3),)),
    "complex_mul": (lambda z, w: (z * w).abs(), lambda: (C(3), C(3))),
    # reductions
    "sum": (lambda x: x.sum(), lambda: (R(2, 3),)),
    "sum_dim": (lambda x: x.sum((0, 2), keepdim=True), lambda: (R(2, 3, 4),)),
    "mean": (lambda x: x.mean(1), lambda: (R(2, 3),)),
    "var": (lambda x: x.var(0), lambda: (R(4, 3),)),
    "std": (lambda x: x.std(), lambda: (R(4, 3),)),
    "var_mean": (lambda x: G.var_mean(x, 1), lambda: (R(2, 5),)),
    "std_mean": (lambda x: G.std_mean(x, 0), lambda: (R(4, 3),)),
    "prod": (lambda x: x.prod(1), lambda: (R(2, 3),)),
    "prod_all": (lambda x: x.prod(), lambda: (R(2, 3),)),
    "amax": (lambda x: x.amax(1), lambda: (R(2, 3),)),
    "amin": (lambda x: x.amin(), lambda: (R(2, 3),)),
    "max_dim": (lambda x: x.max(1), lambda: (R(2, 3),)),
    "min_dim": (lambda x: x.min(0, keepdim=True), lambda: (R(2, 3),)),
    "max": (lambda x: x.max(), lambda: (R(2, 3),)),
    "min": (lambda x: x.min(), lambda: (R(2, 3),)),
    "max_binary": (lambda x, y: G.max(x, y), lambda: (R(2, 3), R(3))),
    "argmax": (lambda x: x.argmax(1), lambda: (R(2, 3),)),
    "argmin": (lambda x: x.argmin(), lambda: (R(2, 3),)),
    "logsumexp": (lambda x: x.logsumexp(1), lambda: (R(2, 3),)),
    "softmax": (lambda x: x.softmax(1), lambda: (R(2, 3),)),
    "log_softmax": (lambda x: x.log_softmax(0), lambda: (R(2, 3),)),
    "cumsum": (lambda x: x.cumsum(1), lambda: (R(2, 3),)),
    "cumprod_logcumsumexp": (lambda x: (x.cumprod(1), x.logcumsumexp(0)), lambda: (R(2, 3),)),
    "cumprod_zeros": (lambda x: x.cumprod(1), lambda: (gradkit.tensor(
        [[2.0, 0.0, 3.0], [0.5, 1.5, 0.0]], dtype=F64, requires_grad=True),)),
    "cummax_cummin": (lambda x: (x.cummax(1).values, x.cummin(0).values), lambda: (R(2, 3),)),
    "order_statistics": (lambda x: (x.kthvalue(2, 1).values, x.mode(0).values, x.median(),
                                    x.median(1).values, x.nanmedian(), x.nanmedian(0).values,
                                    *x.aminmax(dim=1), x.count_nonzero(0)), lambda: (R(2, 3),)),
    "all_any": (lambda m: (m.all(), m.any(0)), lambda: (M([[True, False], [True, True]]),)),
    # linear algebra
    "matmul": (G.matmul, lambda: (R(2, 3, 4), R(4, 2))),
    "matmul_vec": (G.matmul, lambda: (R(4), R(2, 4, 3))),
    "mm": (G.mm, lambda: (R(2, 3), R(3, 4))),
    "bmm": (G.bmm, lambda: (R(2, 2, 3), R(2, 3, 4))),
    "mv": (G.mv, lambda: (R(2, 3), R(3))),
    "dot": (G.dot, lambda: (R(3), R(3))),
    "vdot": (G.vdot, lambda: (C(3), C(3))),
    "inner": (G.inner, lambda: (R(2, 3), R(4, 3))),
    "outer": (G.outer, lambda: (R(3), R(2))),
    "einsum": (lambda a, b: G.einsum("bij,jk->bik", a, b), lambda: (R(2, 3, 4), R(4, 2))),
    "einsum_trace": (lambda a: G.einsum("ii", a), lambda: (R(3, 3),)),
    # conv's one-op einsum kernel, with a repeated letter (its vjp scatters onto a diagonal)
    "einsum_kernel_diagonal": (lambda a, b: _einsum(a, b, equation="iij,jk->ki"),
                               lambda: (R(2, 2, 3), R(3, 2))),
    "norms": (lambda x: (x.norm(), G.linalg.vector_norm(x, 3, 1), x.norm(float("inf")),
                         G.linalg.matrix_norm(x, "nuc")), lambda: (R(3, 3),)),
    "inv_det_slogdet": (lambda a: (G.linalg.inv(_well_conditioned(a)), G.det(_well_conditioned(a)),
                                   G.slogdet(_well_conditioned(a)).logabsdet), lambda: (R(3, 3),)),
    "det_singular": (lambda a, m: G.linalg.det(a * m), lambda: (R(3, 3), M([[True], [True],
                                                                            [False]]))),
    "solve": (lambda a, b: G.linalg.solve(_well_conditioned(a), b), lambda: (R(3, 3), R(3, 2))),
    "cholesky": (lambda a: G.linalg.cholesky(a @ a.mT + _identity(a)), lambda: (R(3, 3),)),
    "decompositions": (lambda a: (G.linalg.qr(a).R, G.linalg.svdvals(a),
                                  G.linalg.eigh(a + a.mT).eigenvalues), lambda: (R(3, 3),)),
    # triangles, diagonals, slices, sorting
    "tril_triu": (lambda x: G.tril(x, 1) + G.triu(x, -1), lambda: (R(3, 3),)),
    "diagonal": (lambda x: x.diagonal(1) * 2, lambda: (R(3, 4),)),
    "diag": (lambda v, m: (G.diag(v, 1), G.diag(m), G.diag_embed(m, -1)),
             lambda: (R(3), R(3, 3))),
    "narrow_select_roll": (lambda x: x.narrow(1, 1, 2).roll(1, 0) + x.select(1, 0).unsqueeze(1),
                           lambda: (R(3, 4),)),
    "sort_topk": (lambda x: (x.sort(1, descending=True).values, x.topk(2, 0).values,
                             x.argsort(0)), lambda: (R(3, 4),)),
    "angle": (lambda z, x: (G.angle(z), G.angle(x)), lambda: (C(3), R(3))),
    "alias": (lambda x: gradkit.Tensor(x) * 2, lambda: (R(2, 3),)),
    "einsum_int_sum": (lambda a: G.einsum("ij->j", a), lambda: (I([[1, 2], [3, 4]]),)),
    # shapes
    "reshape": (lambda x: x.reshape(3, -1), lambda: (R(2, 3),)),
    "view": (lambda x: x.view(6), lambda: (R(2, 3),)),
    "permute": (lambda x: x.permute(2, 0, 1), lambda: (R(2, 3, 4),)),
    "transpose": (lambda x: x.transpose(0, 1), lambda: (R(2, 3),)),
    "t": (lambda x: x.t(), lambda: (R(2, 3),)),
    "T": (lambda x: x.T, lambda: (R(2, 3),)),
    "expand": (lambda x: x.expand(4, 2, 3), lambda: (R(2, 1),)),
    "broadcast_tensors": (lambda x, y: G.broadcast_tensors(x, y), lambda: (R(2, 1), R(3))),
    "squeeze": (lambda x: x.squeeze(1), lambda: (R(2, 1, 3),)),
    "squeeze_all": (lambda x: x.squeeze(), lambda: (R(2, 1, 3),)),
    "unsqueeze": (lambda x: x.unsqueeze(-1), lambda: (R(2, 3),)),
    "flatten": (lambda x: x.flatten(1), lambda: (R(2, 3, 4),)),
    "unflatten": (lambda x: x.unflatten(1, (2, 2)), lambda: (R(3, 4),)),
    "ravel": (lambda x: x.ravel(), lambda: (R(2, 3),)),
    "cat": (lambda x, y: G.cat([x, y], 1), lambda: (R(2, 3), R(2, 2))),
    "stack": (lambda x, y: G.stack([x, y], 0), lambda: (R(2, 3), R(2, 3))),
    "split": (lambda x: x.split([1, 2], 1), lambda: (R(2, 3),)),
    "chunk": (lambda x: x.chunk(2, 0), lambda: (R(4, 3),)),
    "unbind": (lambda x: x.unbind(1), lambda: (R(2, 3),)),
    "flip": (lambda x: x.flip(0, 1), lambda: (R(2, 3),)),
    "repeat": (lambda x: x.repeat(2, 1, 2), lambda: (R(2, 3),)),
    "swapaxes": (lambda x: x.swapaxes(0, 2), lambda: (R(2, 3, 4),)),
    # indexing
    "getitem_basic": (lambda x: x[1:, ::2, None], lambda: (R(3, 4),)),
    "getitem_int_tensor": (lambda x: x[I([2, 0, 2])], lambda: (R(3, 4),)),
    "getitem_mask": (lambda x: x[x > 0], lambda: (R(3, 4),)),
    "getitem_mixed": (lambda x: x[I([0, 2]), 1:], lambda: (R(3, 4),)),
    "getitem_device_index": (lambda x, i: x[:, i], lambda: (R(3, 4), I([3, 0, 3]))),
    "gather": (lambda x, i: x.gather(1, i), lambda: (R(2, 3), I([[0, 0], [2, 1]]))),
    "index_select": (lambda x, i: x.index_select(0, i), lambda: (R(2, 3), I([1, 1, 0]))),
    "masked_fill": (lambda x, m: x.masked_fill(m, -1.0), lambda: (R(2, 3), M([True, False, True]))),
    "scatter": (lambda x, i, s: x.scatter(1, i, s),
                lambda: (R(2, 3), I([[0, 2], [1, 0]]), R(2, 2))),
    "scatter_add": (lambda x, i, s: x.scatter_add(0, i, s),
                    lambda: (R(2, 3), I([[0, 1, 0], [0, 0, 1]]), R(2, 3))),
    "pad": (lambda x: G.ops.pad(x, (1, 2)), lambda: (R(2, 3),)),
    "pad_reflect": (lambda x: G.ops.pad(x, (1, 1), mode="reflect"), lambda: (R(2, 4),)),
    "index_put": (lambda x, v: G.ops.indexing.index_put_key(x, v, key=(slice(1, None),)),
                  lambda: (R(3, 2), R(2))),
    "setitem": (_setitem, lambda: (R(3, 4), R(2, 2))),
    # index ops (gradkit/ops/index_ops.py, scatter_reduce.py, searching.py, complex_build.py)
    "masked_select": (lambda x: x.masked_select(x > 0), lambda: (R(2, 3),)),
    "masked_scatter": (lambda x, m, s: x.masked_scatter(m, s),
                       lambda: (R(2, 3), M([True, False, True]), R(5))),
    "take_put": (lambda x, i, j, s: x.take(i) * x.put(j, s, accumulate=True).sum(),
                 lambda: (R(2, 3), I([4, 0, 4]), I([1, -1]), R(2))),
    "index_add_copy_fill": (lambda x, i, j, s, v: x.index_add(1, i, s, alpha=2)
                            + x.index_copy(1, j, s[:, :2]) + x.index_fill(0, j[1:], v),
                            lambda: (R(2, 3), I([2, 0, 2]), I([2, 0]), R(2, 3), R())),
    "scatter_reduce": (lambda x, i, s: sum(x.scatter_reduce(1, i, s, reduce,
                                                            include_self=reduce != "mean")
                                           for reduce in ("sum", "prod", "mean", "amax", "amin")),
                       lambda: (R(2, 3), I([[0, 0], [2, 0]]), R(2, 2))),
    "finding_counting": (lambda x, b, u: x * (x.nonzero().sum() + G.bucketize(x, b).sum()
                                              + G.histc(x.detach(), 4).sum()
                                              + G.searchsorted(b, x).sum()
                                              + G.unique(u, return_counts=True)[1].sum()),
                         lambda: (R(2, 3), I([0, 1]) * 0.5, I([3, 1, 3]))),
    "complex_polar": (lambda r, i: G.complex(r, i) * G.polar(r.abs() + 0.5, i),
                      lambda: (R(2, 3), R(2, 3))),
    # conversions and in-place
    "astype": (lambda x: x.to(gradkit.float32).to(F64), lambda: (R(2, 3),)),
    "to_device": (lambda x: x.cpu() * 2, lambda: (R(2, 3),)),
    "mul_": (_inplace_on_copy("mul_", 2.0), lambda: (R(2, 3),)),
    "add_tensor_": (_inplace_on_copy("add_"), lambda: (R(2, 3), R(3))),
    "zero_": (_inplace_on_copy("zero_"), lambda: (R(2, 3),)),
    "fill_": (_inplace_on_copy("fill_", 0.5), lambda: (R(2, 3),)),
    "copy_": (_inplace_on_copy("copy_"), lambda: (R(2, 3), R(3))),
    "inplace_on_view": (_inplace_on_view, lambda: (R(2, 3),)),
    "astype_forward": (lambda x: x.detach().to(gradkit.float32), lambda: (R(2, 3),)),
    "zeros_ones_like": (lambda x: G.ops.zeros_like(x) + G.ops.ones_like(x) * x, lambda: (R(2, 3),)),
    # torch.nn.functional
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
               lambda: (R(1, 2, 5, 5), R(3, 2, 3, 3), R(3))),
    "linear": (F.linear, lambda: (R(4, 3), R(2, 3), R(2))),
    "linear_no_bias": (F.linear, lambda: (R(4, 3), R(2, 3))),
    "linear_3d": (F.linear, lambda: (R(2, 4, 3), R(2, 3), R(2))),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (3,), w, b), lambda: (R(2, 3), R(3), R(3))),
    "embedding": (lambda i, w: F.embedding(i, w), lambda: (I([[0, 2], [2, 1]]), R(3, 4))),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), lambda: (R(1, 2, 4, 4),)),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2), lambda: (R(1, 2, 4, 4),)),  # its input edge
    "group_norm": (lambda x: F.group_norm(x, 2), lambda: (R(2, 4, 3),)),  # its saved input
    "logsigmoid": (F.logsigmoid, lambda: (R(2, 3),)),
    "dropout": (lambda x: F.dropout(x, 0.5), lambda: (R(4, 5),)),
    "cross_entropy": (F.cross_entropy, lambda: (R(4, 3), I([0, 2, 1, 2]))),
    "nll_loss": (lambda x, t: F.nll_loss(x.log_softmax(1), t), lambda: (R(4, 3), I([0, 2, 1, 2]))),
    "mse_loss": (F.mse_loss, lambda: (R(4, 3), R(4, 3))),
    "bce_with_logits": (F.binary_cross_entropy_with_logits, lambda: (R(4, 3), R(4, 3, low=0.0))),
    "normalize": (F.normalize, lambda: (R(4, 3),)),
    "normalize_inf": (lambda x: F.normalize(x, p=float("inf"), dim=0), lambda: (R(4, 3),)),
    # lane h-api: torch 2.13's fused head loss (linear, then cross_entropy), K-dimensional too
    "linear_cross_entropy": (lambda x, w, t, b: F.linear_cross_entropy(
        x, w, t, linear_bias=b, label_smoothing=0.1),
        lambda: (R(4, 3), R(3, 3), I([0, 2, 1, 2]), R(3))),
    "linear_cross_entropy_k": (lambda x, w, t: F.linear_cross_entropy(x, w, t, reduction="none"),
                               lambda: (R(4, 3), R(3, 2, 3), I([[0, 1], [2, 2], [1, 0], [2, 1]]))),
}

# lane elem: torch API breadth (gradkit/ops/binary_math.py, elementwise_special.py, products.py,
# rearrange.py)
SAMPLES.update({
    "binary_math": (lambda x, y: (
        G.atan2(x, y), G.hypot(x, y), G.xlogy(x, y.abs() + 0.5), G.logaddexp(x, y),
        G.logaddexp2(x, y), G.fmod(x, y + 3.0), G.lerp(x, y, 0.7), G.lerp(x, y, y.sigmoid()),
        G.addcmul(x, x, y, value=0.5), G.addcdiv(x, x, y.abs() + 1.0, value=-2)),
        lambda: (R(2, 3), R(3))),
    "logaddexp_complex": (G.logaddexp, lambda: (C(3), C(3))),
    "special_unary": (lambda x: (
        G.erfc(x), G.erfinv(x.tanh()), G.logit(x.sigmoid()), G.logit(x, eps=0.2), G.sinc(x),
        G.frac(x * 2.5), G.nan_to_num(x.log())), lambda: (R(2, 3),)),
    "sinc_complex": (G.sinc, lambda: (C(3),)),
    "products": (lambda m, v, b: (
        G.addmm(v[:2], m, m.mT, beta=0.5), G.addmv(v[:3], m.mT, v[:2], alpha=2),
        G.baddbmm(b[:, :, :1], b, b.mT, alpha=-1), G.addbmm(m[0], b, b.mT),
        G.trace(m), G.tensordot(b, m, ([0], [0])), G.kron(m, v[:2]),
        G.linalg.cross(m[:, :3], v[None, :3]), G.cross(b[0], b[1], dim=0)),
        lambda: (R(2, 3), R(3), R(2, 3, 3))),
    "cross_complex": (lambda z, w: G.linalg.cross(z, w), lambda: (C(2, 3), C(2, 3))),
    # lane linalg2: LU, eig (CuPy has no eig: on the host), pinv, lstsq, matrix_exp,
    # householder_product, the _ex forms (with a failing matrix: LAPACK's leftovers)
    "linalg_lu": (lambda a, b: (
        G.linalg.lu(a).U, G.linalg.lu_factor_ex(a).LU, G.lu_unpack(*G.linalg.lu_factor(a)).L,
        G.linalg.lu_solve(*G.linalg.lu_factor(_well_conditioned(a)), b, adjoint=True),
        G.linalg.solve_triangular(_well_conditioned(a), b, upper=True)),
        lambda: (R(3, 3), R(3, 2))),
    "linalg_eig": (lambda a: (G.linalg.eigvals(a), G.linalg.eigvals(a.detach()),
                              (lambda w, v: (w, v * v.conj()))(*G.linalg.eig(a))),
                   lambda: (R(3, 3),)),
    "linalg_pinv_lstsq_exp": (lambda a, b: (
        G.linalg.pinv(a), G.linalg.pinv(a + a.mT, hermitian=True), G.linalg.lstsq(a, b).solution,
        G.linalg.matrix_exp(a), G.linalg.householder_product(a, b[:2, 0])),
        lambda: (R(3, 3), R(3, 2))),
    "linalg_ex": (lambda a, b, m: (
        G.linalg.inv_ex(a * m).inverse, G.linalg.solve_ex((a * m).detach(), b.detach()).result,
        G.linalg.cholesky_ex(a @ a.mT * m + _identity(a) * m).L),
        lambda: (R(2, 3, 3), R(2, 3), M([[[True]], [[False]]]))),
    "rearrange": (lambda x, v: (
        G.meshgrid(v, v[:2], indexing="xy"), G.tile(x, (2, 1, 1)), x.movedim(0, 1),
        G.diff(x, 2, 0, prepend=x[:1]), G.rot90(x, -1, (1, 0))), lambda: (R(3, 3), R(3))),
})

# lane shape2: shape / combination / distance functions (gradkit/ops/stacking.py,
# view_scatter.py, patterns.py, distances.py, integrals.py, matrix_products.py)
SAMPLES.update({
    "shape2_joins": (lambda x, v: (
        G.hstack([v, v[:1]]), G.vstack([x, v]), G.dstack([x, x]), G.column_stack([v, x.mT]),
        G.tensor_split(x, 2, 1), G.hsplit(x, [1]), G.flipud(x), G.fliplr(x),
        G.cartesian_prod(v, v[:2]), G.combinations(v, 2, True), G.block_diag(x, v[0], v),
        G.diagflat(v, 1), G.repeat_interleave(x, 2, 0),
        G.repeat_interleave(x, I([1, 0, 2]), 1), G.vander(v, 4)), lambda: (R(3, 3), R(3))),
    "shape2_scatters": (lambda x, v: (
        G.select_scatter(x, v, 0, 1), G.slice_scatter(x, x[:, :1], 1, 2),
        G.diagonal_scatter(x, v[:2], 1), G.narrow_copy(x, 1, 1, 2), G.adjoint(x),
        G.expand_copy(v, (2, 3)), G.permute_copy(x, (1, 0)),
        G.swapdims(x, 0, 1)), lambda: (R(3, 3), R(3))),
    "shape2_distances": (lambda x, y, v: (
        G.cdist(x, y), G.cdist(x, y, 1.5), G.cdist(x, y, float("inf")), G.cdist(x, y, 0.5),
        G.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), G.dist(x, y[:1], 3),
        G.renorm(x, 2, 0, 1.0), G.addr(x[:, :2], v, v[:2], beta=0.5),
        G.chain_matmul(x, y.mT, y), G.trapezoid(x), G.trapezoid(x, v[:2]),
        G.cumulative_trapezoid(x, dx=2), G.cumulative_trapezoid(x, v[:2], dim=-1),
        G.bincount(I([0, 2, 2]).to(v.device), v.detach()),
        G.bincount(I([1, 1]).to(v.device), minlength=3)),
        lambda: (R(3, 2), R(4, 2), R(3))),
})

# lane elem2: more torch breadth (gradkit/ops/binary_breadth.py, unary_breadth.py, gamma.py,
# statistics.py, logdet)
SAMPLES.update({
    "breadth2_binary": (lambda x, y, i, j: (
        G.copysign(x, y), G.copysign(x, -1.0), G.fmax(x, y), G.fmin(x, y), G.nextafter(x, y),
        G.ldexp(x, y), G.ldexp(x, i), G.rsub(x, y, alpha=2), G.rsub(x, 2.5),
        G.float_power(x.abs() + 0.5, y), G.clamp_min(x, y), G.clamp_max(x, 0.3),
        x * (G.heaviside(x.detach(), y.detach()) + G.signbit(x) + G.isneginf(x) + G.isposinf(x)
             + G.isreal(x) + G.isin(x, y) + G.gcd(i, j) + G.lcm(i, j))),
        lambda: (R(2, 3), R(3), I([1, -2, 0]), I([4, 6, 9]))),
    "breadth2_gamma": (lambda x: (
        G.lgamma(x), G.digamma(x), G.polygamma(1, x), G.polygamma(3, x), G.mvlgamma(x + 1, 2),
        G.i0(x), G.i0(x - 9.0), G.deg2rad(x), G.rad2deg(x), G.frexp(x).mantissa),
        lambda: (R(2, 3, low=0.5),)),
    "breadth2_statistics": (lambda x, q: (
        G.nansum(x, 1), G.nanmean(x), G.quantile(x, q, dim=1), G.nanquantile(x, 0.3),
        G.quantile(x, 0.6, interpolation="midpoint"), G.cov(x), G.corrcoef(x),
        G.logdet(x[:, :2] @ x[:, :2].mT)), lambda: (R(2, 4), R(2, low=0.0))),
})

# lane nnact: activations and losses (gradkit/ops/activations_more.py, activations_gated.py,
# losses_more.py, losses_margin.py, grad_edges.py)
SAMPLES.update({
    "activations_more": (lambda x, w: (
        F.celu(x, 0.5), F.selu(x), F.hardtanh(x, -0.5, 0.5), F.relu6(x * 4), F.hardswish(x * 3),
        F.mish(x), F.softshrink(x, 0.3), F.hardshrink(x, 0.3), F.threshold(x, 0.1, -1.0),
        F.glu(x, 0), F.prelu(x, w), F.rrelu(x, training=True), F.rrelu(x), x.clamp_min(0.2),
        G.clamp_min(x, w), F.elu_(x * 1.0), F.celu_(x * 1.0), F.leaky_relu_(x * 1.0),
        F.threshold_(x * 1.0, 0, 1), F.rrelu_(x * 1.0)), lambda: (R(2, 3), R(3))),
    "losses_more": (lambda x, y, p: (
        F.l1_loss(x, y), F.smooth_l1_loss(x, y, beta=0.5), F.huber_loss(x, y, reduction="none"),
        F.kl_div(x, p, reduction="batchmean"), F.binary_cross_entropy(p * 0.8, p.flip(0) * 0.8),
        F.poisson_nll_loss(x, p, full=True), F.gaussian_nll_loss(x, y, p),
        F.margin_ranking_loss(x, y, y.sign().detach()), F.hinge_embedding_loss(x, y.sign()),
        F.soft_margin_loss(x, y.sign().detach()), F.cosine_embedding_loss(
            x, y, G.tensor([1.0, -1.0], device=x.device)), F.triplet_margin_loss(x, y, p),
        F.multilabel_soft_margin_loss(x, p), F.cosine_similarity(x, y), F.pairwise_distance(x, y)),
        lambda: (R(2, 3), R(2, 3), R(2, 3, low=0.1))),
})
# samples whose gradient torch (and gradkit) cannot differentiate again
FIRST_ORDER_ONLY = {"no_second_derivative"}
SAMPLES["no_second_derivative"] = (lambda x: (
    F.hardsigmoid(x * 3), F.multi_margin_loss(x, G.tensor([0, 2], device=x.device), p=2),
    F.multilabel_margin_loss(x, G.tensor([[0, 2, -1], [1, -1, 0]], device=x.device))),
    lambda: (R(2, 3),))

# complex views (gradkit/ops/complex_views.py), and a write into a view of a base laid out
# in Fortran order, whose CopySlices lays its gradient buffers out as the base (relayout)
def _write_into_transposed_base(x):
    base = x.t() * 1.0  # an elementwise result keeps its input's (transposed) layout
    view = base[0]
    view.mul_(2.0)
    return base


def _grad_through_a_view_write(x):
    """A gradient through CopySlices whose seed depends on x: differentiating it again
    differentiates the base's part of CopySlices' backward (zero_view_region)."""
    base = x * 1.0
    base[0].mul_(2.0)
    (grad,) = G.autograd.grad(base, x, grad_outputs=x * x, create_graph=True)
    return grad


SAMPLES.update({
    "complex_views": (lambda x: (
        G.view_as_real(x * (1 + 1j)), G.view_as_complex(G.stack([x, -x], -1)),
        G.view_as_complex(G.view_as_real(x * 1j)).reshape(-1),
        _write_into_transposed_base(x), _grad_through_a_view_write(x)), lambda: (R(2, 3),)),
})

# lane fft: the three FFT primitives, through cupy.fft (n and s crop and pad on the device)
SAMPLES.update({
    "fft": (lambda x, z: (
        G.fft.rfft(x, n=5), G.fft.ihfft(x, norm="ortho"), G.fft.fft(z, n=2, dim=0),
        G.fft.irfft(z, norm="forward"), G.fft.hfftn(z), G.fft.fftshift(G.fft.ifft2(z))),
        lambda: (R(3, 4), C(3, 3))),
})
# lane special: gradkit.special (the functions torch does not differentiate enter as
# x + f(x.detach()), their values compared all the same)
# the no-grad special functions and the polynomials, as the fuzzer draws them
SAMPLES.update({
    "special_functions": (lambda x, y: (
        G.special.erfcx(x * 8 - 4), G.special.entr(x), G.special.ndtr(x), G.special.ndtri(x),
        G.special.log_ndtr(x * 20 - 15), G.special.i0e(x * 12 - 6), G.special.i1(x * 12 - 6),
        G.special.i1e(x * 12 - 6), G.special.xlog1py(x, y), G.special.xlog1py(2.0, y),
        G.special.zeta(3.5, y), G.special.zeta(x.detach() + 1.5, y),
        G.special.gammainc(y.detach() * 30, x * 30), G.special.gammaincc(y.detach(), x * 3)),
        lambda: (R(2, 3, low=0.05) * 0.9, R(2, 3, low=0.2))),
    "special_no_grad": (lambda x: [x + getattr(G.special, name)(x.detach() * 6 - 2)
                                   for name in NO_GRAD_SPECIAL], lambda: (R(2, 3, low=0.0),)),
    "special_polynomials": (lambda x, n: [x + getattr(G.special, name)(x.detach(), degree)
                                          for name in POLYNOMIALS for degree in (n, 9, 3)],
                            lambda: (R(2, 3, low=-0.5) * 1.6, I([[0, 2, 5], [7, 12, 1]]))),
})
# random sampling (gradkit/ops/random_sampling.py): the same seed draws the same values on both
# devices; a sample recorded in a graph has zero gradients. ctc_loss's backward refuses a second
# derivative, as torch's
SAMPLES.update({
    "random_sampling": (lambda x: (
        (x * 1).uniform_(), (x * 1).normal_(), (x * 1).bernoulli_(x.detach().sigmoid()),
        G.normal(x, x.abs() + 0.1), G.poisson(x.abs()), G.bernoulli(x.sigmoid()),
        G.multinomial(x.detach().abs().reshape(-1), 3).double()), lambda: (R(2, 3),)),
    "spatial_transformer_unpool": (lambda theta, x: (
        F.grid_sample(x, F.affine_grid(theta, (1, 2, 3, 2), align_corners=False),
                      align_corners=False),
        F.max_unpool2d(x, G.tensor([[[[0, 3], [9, 14]], [[5, 2], [8, 15]]]], device=x.device),
                       2)),
        lambda: (R(1, 2, 3), R(1, 2, 2, 2))),
    "ctc_loss": (lambda x: F.ctc_loss(x.log_softmax(2), G.tensor([[1, 2], [2, 2]],
                                                                 device=x.device), (4, 3), (2, 2)),
                 lambda: (R(4, 2, 3),)),
})
# lane signal: index_reduce, histogramdd, unique_consecutive
SAMPLES.update({
    "index_reduce": (lambda x, s: x.index_reduce(0, G.tensor([0, 2, 0], device=x.device), s,
                                                "prod"), lambda: (R(3, 2), R(3, 2))),
    "histogramdd_unique_consecutive": (lambda x: (
        G.histogramdd(x.detach(), bins=[2, 3]).hist,
        G.unique_consecutive(x.detach().round(), dim=0)), lambda: (R(4, 2),)),
})
# lane misc: binomial draws on the device (torch has no derivative for it)
SAMPLES["binomial"] = (lambda p: G.binomial(G.full_like(p.detach(), 5.0), p.detach().sigmoid()),
                       lambda: (R(2, 3),))
# ormqr's own node saving its product (torch's OrmqrBackward0)
SAMPLES["ormqr"] = (lambda a, tau, c: G.ormqr(a, tau, c), lambda: (R(3, 2), R(2), R(3, 2)))
# lane elem: the inverse hyperbolic functions and conj_physical
SAMPLES.update({
    "asinh_atanh": (lambda x: (G.asinh(x), G.atanh(x * 0.5)), lambda: (R(2, 3, low=-0.5),)),
    "acosh": (G.acosh, lambda: (R(2, 3, low=1.5),)),
    "conj_physical": (G.conj_physical, lambda: (C(2, 3),)),
})
FIRST_ORDER_ONLY.add("ctc_loss")
# lane strides: as_strided (of tensors that are no views: strict_xp's arrays keep no base),
# overlapping, so that its backward divides by counts), its scatter and copy, unfold and the
# *_copy functions; detach_copy records a refusing node
SAMPLES.update({
    "strided": (lambda x: (
        x.as_strided((3, 2), (1, 1), 1), (x * 1).as_strided((2, 2), (0, 1)).exp(),
        G.as_strided_copy(x, (2, 2), (1, 2)), G.as_strided_scatter(x * 1, x[0, :2], (2,), (3,)),
        x.unfold(1, 2, 1), G.unfold_copy(x, 0, 1, 1), G.t_copy(x), G.split_copy(x, 2, 1)[0],
        G.unsafe_chunk(x, 2, 1)[1], G.detach_copy(x.detach()), (x * 1).as_strided_((2,), (2,))),
        lambda: (R(2, 3),)),
})

# lane legacy: torch's older linalg names (gradkit/ops/linalg_legacy.py, linalg_cholesky_solve.py,
# linalg_householder.py's geqrf, whose outputs have no derivative: reached on a constant)
SAMPLES["linalg_legacy"] = (lambda a, b: (
    G.cholesky_solve(b, _well_conditioned(a).tril()),
    G.cholesky_inverse(_well_conditioned(a).triu(), upper=True),
    G.ormqr(*G.geqrf(a.detach()), b), G.pdist(b, 3.0), G.svd(a).V,
    G.triangular_solve(b, _well_conditioned(a)).solution,
    G.cholesky(a @ a.mT + _identity(a), upper=True)), lambda: (R(3, 3), R(3, 2)))
# ldl: no derivative (as torch), so reached on constants, first order only
SAMPLES["linalg_ldl"] = (lambda a, b: (
    b + G.linalg.ldl_solve(*G.linalg.ldl_factor(a.detach() + a.detach().mT), b.detach()),),
    lambda: (R(3, 3), R(3, 2)))
FIRST_ORDER_ONLY.add("linalg_ldl")
# attention below 4 dims: torch's math backend and its _safe_softmax (ops/attention.py)
SAMPLES["safe_softmax"] = (lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
                           lambda: (R(2, 3), R(4, 3), R(4, 3)))
# the 4-D (flash) path: causal, with a query row of NaN scores (log of a negative)
SAMPLES["flash_causal"] = (lambda q, k, v: F.scaled_dot_product_attention(
    G.cat([q[..., :1, :], q[..., 1:2, :] + (q[..., 1:2, :].detach().abs() + 1).neg().log(),
           q[..., 2:, :]], -2), k, v,
    is_causal=True), lambda: (R(1, 1, 3, 2), R(1, 1, 3, 2), R(1, 1, 3, 2)))
# lane texp12: unique along a dim, slices with NaN (torch's std::sort replayed) and without
SAMPLES["unique_dim"] = (lambda x: (
    G.unique(x.detach().round(), dim=0, return_inverse=True, return_counts=True),
    G.unique(G.where(x.detach() > 0, x.detach().round(), float("nan")), dim=1,
             return_inverse=True)), lambda: (R(4, 3),))

# lane h-nnB: batch statistics whose node has no derivative, the running ones updated in place
# (copies: both devices' runs share the sample's tensors)
def _updated_stats(x, mean, var):
    return G.batch_norm_update_stats(x.detach(), mean, var, 0.1) + (mean, var)


SAMPLES["batch_norm_update_stats"] = (
    lambda x, mean, var: _updated_stats(x, mean.clone(), var.clone()),
    lambda: (R(4, 3, 2), R(3).detach(), R(3).detach().abs()))

# Ops that no sample reaches directly, and why.
NOT_SAMPLED = {
    "gradkit::no_double_backward": "its backward only raises, as torch's Error node "
                                   "(scatter_reduce prod, 2+ zeros: tests/test_ops_index.py)",
    "gradkit::subtracts_a_bool": "a pass-through whose backward only raises, as torch's "
                                 "smooth_l1 double backward of a bool operand "
                                 "(tests/test_torch_fuzz_found_more.py)",
    "gradkit::refuse_empty_grad_output": "a pass-through of an empty adaptive pooling output "
                                         "whose backward only raises, as torch's "
                                         "(tests/test_pooling_torch_expectations*.py)",
}
# Samples that fail on the CPU as well: bugs of the op, not of its genericity (reported; drop
# the entry once the op is fixed and the sample XPASSes).
# lane fuzzwide: segment_reduce's max / min node (SegmentReduceBackward0)
SAMPLES["segment_reduce"] = (lambda x: (
    G.segment_reduce(x, "max", lengths=G.tensor([2, 1], device=x.device)),
    G.segment_reduce(x, "min", lengths=G.tensor([1, 2], device=x.device))),
    lambda: (R(3, 2),))
KNOWN_BUGS = {
}


def _outputs(value):
    if isinstance(value, gradkit.Tensor):
        return [value]
    return [v for item in value for v in _outputs(item)]


def _to_device(t, device):
    if not isinstance(t, gradkit.Tensor):
        return t
    moved = t.detach().to(device)
    return moved.requires_grad_() if t.requires_grad else moved


def _run(fn, inputs, device, second_order=True):
    """Forward, vjp and vjp-of-vjp (unless ``second_order`` is False: torch has none) of ``fn``
    on ``device``; results as host arrays."""
    gradkit.manual_seed(0)  # the same dropout masks on both devices
    args = [_to_device(t, device) for t in inputs]
    leaves = [a for a in args if isinstance(a, gradkit.Tensor) and a.requires_grad]
    outs = _outputs(fn(*args))
    results = [o.detach().resolve_conj().cpu().numpy() for o in outs]
    for o in outs:
        expected = "cpu" if device == "cpu" or fn is SAMPLES["to_device"][0] else device
        assert o.device == expected, f"output on {o.device}, expected {expected}"
    diff = [o for o in outs if o.requires_grad]
    if not diff or not leaves:
        return results
    rng = np.random.default_rng(1)
    cotangents = [gradkit.tensor(rng.standard_normal(o.shape) if not o.is_complex() else
                                 rng.standard_normal(o.shape) + 1j, dtype=o.dtype,
                                 device=o.device) for o in diff]
    # a plain backward runs the rules on raw arrays, create_graph=True on Tensors: check both
    plain = gradkit.autograd.grad(diff, leaves, cotangents, retain_graph=True, allow_unused=True)
    results += [g.resolve_conj().cpu().numpy() for g in plain if g is not None]
    grads = gradkit.autograd.grad(diff, leaves, cotangents, create_graph=True, allow_unused=True)
    present = [(g, leaf) for g, leaf in zip(grads, leaves, strict=True) if g is not None]
    for g, leaf in present:
        assert g.device == leaf.device, f"gradient on {g.device}, its leaf on {leaf.device}"
        results.append(g.detach().resolve_conj().cpu().numpy())
    second = [g for g, _ in present if g.requires_grad]
    if second and second_order:
        weights = [gradkit.tensor(rng.standard_normal(g.shape), dtype=g.dtype.to_real(),
                                  device=g.device) for g in second]
        total = sum(((g * w).abs() if g.is_complex() else g * w).sum()
                    for g, w in zip(second, weights, strict=True))
        grads2 = gradkit.autograd.grad(total, leaves, allow_unused=True)
        results += [g.resolve_conj().cpu().numpy() for g in grads2 if g is not None]
    return results


@pytest.fixture
def cupy(monkeypatch):
    return strict_xp.install(monkeypatch)


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_BUGS[name]))
    if name in KNOWN_BUGS else name for name in sorted(SAMPLES)])
def test_op_runs_through_its_inputs_array_module(cupy, name):
    fn, make = SAMPLES[name]
    inputs = make()
    on_cpu = _run(fn, inputs, "cpu", second_order=name not in FIRST_ORDER_ONLY)
    on_gpu = _run(fn, inputs, "cuda:0", second_order=name not in FIRST_ORDER_ONLY)
    assert len(on_gpu) == len(on_cpu)
    for cpu, gpu in zip(on_cpu, on_gpu, strict=True):
        assert cpu.dtype == gpu.dtype
        np.testing.assert_allclose(gpu, cpu, rtol=1e-12, atol=1e-12)


# entries of tests/op_db.py that move data between devices by design (covered by SAMPLES)
_DEVICE_MOVES = {"to_device"}


@pytest.mark.parametrize("case", [c for c in op_db.cases() if c[1].name not in _DEVICE_MOVES],
                         ids=lambda case: case[0])
def test_op_table_runs_through_its_inputs_array_module(cupy, case):
    """The shared op table (tests/op_db.py), every sample on the CPU and on the stand-in GPU."""
    compare_cpu_and_gpu(case, tolerance=1e-12)


def compare_cpu_and_gpu(case, tolerance: float) -> None:
    """Run an op-table case on "cpu" and "cuda:0": forward and derivatives must agree."""
    _, info, sample = case
    results = {}
    for device in ("cpu", "cuda:0"):
        gradkit.manual_seed(0)
        leaves, call = op_db.bind(info.op, sample, lambda a, grad, d=device: gradkit.tensor(
            a, device=d, requires_grad=grad))
        results[device] = _run(call, leaves, device, second_order=info.gradgrad)
    for cpu, gpu in zip(results["cpu"], results["cuda:0"], strict=True):
        assert cpu.dtype == gpu.dtype
        np.testing.assert_allclose(gpu, cpu, rtol=tolerance, atol=tolerance)


class _OpRecorder(observers.Observer):
    def __init__(self):
        self.names = set()

    def op_enter(self, name, inputs):
        self.names.add(name)


def _all_ops():
    found = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("gradkit.ops.") and module is not None:
            for value in vars(module).values():
                if isinstance(value, Op):
                    found[value.profiler_name] = value
    return found


def test_every_op_has_a_genericity_sample(cupy):
    recorder = _OpRecorder()
    observers.attach(recorder)
    try:
        for name, (fn, make) in SAMPLES.items():
            if name not in KNOWN_BUGS:
                _run(fn, make(), "cuda:0", second_order=name not in FIRST_ORDER_ONLY)
    finally:
        observers.detach(recorder)
    missing = sorted(name for name, op in _all_ops().items() if name not in NOT_SAMPLED and
                     name not in recorder.names and in_place_name(op) not in recorder.names)
    assert not missing, f"ops without a sample in tests/test_op_genericity.py: {missing}"


def test_strict_namespace_rejects_numpy_only_code(cupy):
    """The stand-in really is strict: each way numpy-only code could slip through fails."""
    a = cupy.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(AttributeError, match="module 'cupy' has no attribute 'errstate'"):
        cupy.errstate  # noqa: B018
    with pytest.raises(TypeError, match=r"numpy.sum\(\) on a GPU array is numpy-only"):
        np.sum(a)
    with pytest.raises(TypeError):
        np.exp(a)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    with pytest.raises(TypeError, match="mixing a NumPy array of shape"):
        a + np.ones(3)
    with pytest.raises(TypeError):
        np.ones(3) * a
    with pytest.raises(AttributeError, match="cupy.ndarray has no attribute 'itemset'"):
        a.itemset  # noqa: B018
    with pytest.raises(AttributeError, match="cupy.add.reduceat does not exist"):
        cupy.add.reduceat  # noqa: B018
    with pytest.raises(ValueError, match="arrays on devices 0 and 1"):
        with cupy.cuda.Device(1):
            b = cupy.asarray(np.ones(3))
        cupy.add(a[0], b)
    assert isinstance(a.sum(), strict_xp.StrictArray) and a.sum().ndim == 0
    assert float(cupy.exp(a).sum()) == pytest.approx(np.exp(np.arange(6.0)).sum())
