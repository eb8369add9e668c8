"""The op table: one OpInfo per differentiable op, with the sample inputs it is checked on.

A sample is positional args + kwargs in which float/complex NumPy arrays become
differentiable float64/complex128 leaves, integer/bool arrays and ``Const`` arrays
become constant tensors, and anything else is passed as is. The same sample is
built with gradkit and with torch, so every walker (gradcheck, gradgradcheck,
torch comparison, jvp/vjp consistency) reads one table.

Shapes stay tiny: gradgradcheck differentiates numerically over every input
and grad-output element, and the whole table must run in a few minutes.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - torch's convention

_rng = np.random.default_rng(1234)


class Const(NamedTuple):
    """A float array passed as a constant (no gradient): targets, weights that torch won't grad."""
    array: np.ndarray


class Sample(NamedTuple):
    args: tuple
    kwargs: dict = {}
    name: str = ""


@dataclass
class OpInfo:
    name: str
    op: Callable
    samples: Callable[[], list]
    torch: Callable | None | str = "same"   # "same": torch.<name> (or torch.nn.functional.<name>)
    covers: tuple = ()                       # exported names this entry stands for (besides name)
    gradgrad: bool = True
    check_torch_grad: bool = True
    atol: float = 1e-5
    rtol: float = 1e-3
    extra: dict = field(default_factory=dict)


# -- sample helpers -----------------------------------------------------------------------------

def N(*shape):
    """Standard normal float64 values, kept away from 0 (kinks of abs/relu/sign live there)."""
    v = np.asarray(_rng.standard_normal(shape))
    return np.where(np.abs(v) < 0.1, v + np.sign(v + 1e-3) * 0.2, v)


def P(*shape, low=0.5):
    """Positive values in [low, low + 1)."""
    return np.asarray(low + _rng.random(shape))


def U(*shape):
    """Values inside (-0.8, 0.8) (domain of asin/acos, well-conditioned tan)."""
    return np.asarray(_rng.uniform(-0.8, 0.8, shape))


def Z(*shape):
    """Complex128 values."""
    return np.asarray(N(*shape) + 1j * N(*shape))


def Distinct(*shape):
    """A permutation of spread-out values: no ties for max/min/sort-like ops."""
    n = int(np.prod(shape)) if shape else 1
    return (_rng.permutation(n) * 0.37 - n * 0.15 + 0.05).reshape(shape)


def unary_samples(make=N, complex_=False):
    def samples():
        out = [Sample((np.asarray(make()),), name="0d"), Sample((make(4),), name="1d"),
               Sample((make(2, 3),), name="2d")]
        if complex_:
            out.append(Sample((Z(2, 2),), name="complex"))
        return out
    return samples


def binary_samples(make_x=N, make_y=N, complex_=False, scalar=True):
    def samples():
        out = [Sample((make_x(2, 3), make_y(2, 3)), name="same"),
               Sample((make_x(2, 3), make_y(3)), name="broadcast_row"),
               Sample((make_x(2, 1), make_y(1, 3)), name="broadcast_both"),
               Sample((make_x(), make_y(2)), name="0d_with_1d")]
        if scalar:
            out.append(Sample((make_x(2, 2), 1.5), name="python_scalar"))
        if complex_:
            out.append(Sample((Z(2, 2), Z(2)), name="complex"))
        return out
    return samples


def reduction_samples(make=N, complex_=False, keepdim=True, dims=(None, 0, 1, -1, (0, 1))):
    def samples():
        out = [Sample((make(),), name="0d")]
        for dim in dims:
            out.append(Sample((make(2, 3),), {"dim": dim} if dim is not None else {},
                              name=f"dim={dim}"))
            if keepdim and dim is not None:
                out.append(Sample((make(2, 3),), {"dim": dim, "keepdim": True},
                                  name=f"dim={dim},keepdim"))
        if complex_:
            out.append(Sample((Z(2, 2),), {"dim": 1} if dims[-1] is not None else {},
                              name="complex"))
        return out
    return samples


def dim_samples(make=N, complex_=False):
    """Ops that need a dim (softmax, cumsum, logsumexp)."""
    def samples():
        out = [Sample((make(4),), {"dim": 0}, name="1d"),
               Sample((make(2, 3),), {"dim": 1}, name="dim=1"),
               Sample((make(2, 3),), {"dim": -2}, name="dim=-2"),
               Sample((make(),), {"dim": 0}, name="0d")]
        if complex_:
            out.append(Sample((Z(2, 2),), {"dim": 1}, name="complex"))
        return out
    return samples


def S(*samples):
    """A fixed list of samples built lazily (so each test run draws the same values)."""
    return lambda: list(samples)


def I(values):  # noqa: E743 - reads like a type in the table
    return np.asarray(values, dtype=np.int64)


def B(values):
    return np.asarray(values, dtype=bool)


# -- wrappers for ops whose torch spelling differs ---------------------------------------------

def _seeded_dropout(x, p):
    gradkit.manual_seed(7)  # same mask on every call, so finite differences see one function
    return F.dropout(x, p)


def _max_values(lib):
    return lambda x, *a, **k: lib.max(x, *a, **k)


def _torch(path: str):
    """A torch function by dotted name, looked up when called (torch is optional)."""
    def call(*args, **kwargs):
        import torch
        target = torch
        for part in path.split("."):
            target = getattr(target, part)
        return target(*args, **kwargs)
    return call


def _in_both(make):
    """(gradkit version, torch version) of a function ``make(lib)`` written for either."""
    def torch_version(*args, **kwargs):
        import torch
        return make(torch)(*args, **kwargs)
    return make(gradkit), torch_version


def _svd_invariants(full_matrices):
    """S and U_k Vh_k: what a loss may depend on (each singular pair's sign/phase is free)."""
    def make(lib):
        def svd(a):
            u, s, vh = lib.linalg.svd(a, full_matrices=full_matrices)
            k = s.shape[-1]
            return s, u[..., :k] @ vh[..., :k, :]
        return svd
    return _in_both(make)


def _eigh_invariants(lib):
    def eigh(a):
        values, vectors = lib.linalg.eigh(a + a.mH)  # Hermitian, perturbed in both triangles
        return values, vectors * vectors.conj()  # free of each eigenvector's sign/phase
    return eigh


def _cholesky_of_gram(upper):
    def make(lib):
        def cholesky(a):
            identity = lib.eye(a.shape[-1], dtype=a.dtype, device=a.device)
            return lib.linalg.cholesky(a @ a.mH + identity, upper=upper)
        return cholesky
    return _in_both(make)


INF = float("inf")


def W(*shape):
    """Well-conditioned square matrices: N + 3 I."""
    return N(*shape) + 3 * np.eye(shape[-1])


def _index_put(lib, accumulate=False):
    """index_put at rows 1, 2 of column 0 (row 2 twice with ``accumulate``), as torch calls it."""
    def index_put(x, v):
        rows = [1, 2, 2] if accumulate else [1, 2]
        indices = (lib.tensor(rows), lib.tensor([0] * len(rows)))
        return lib.index_put(x, indices, v, accumulate=accumulate)
    return index_put


# -- the table ----------------------------------------------------------------------------------

G = gradkit

def _with_empty(samples, *extra):
    """Add samples on empty tensors (shape (0, 3)) to a sample generator."""
    return lambda: samples() + list(extra)


EMPTY = np.zeros((0, 3))

OPS: list[OpInfo] = [
    # elementwise, unary
    OpInfo("exp", G.exp, _with_empty(unary_samples(complex_=True), Sample((EMPTY,), name="empty"))),
    OpInfo("exp2", G.exp2, unary_samples()),
    OpInfo("log", G.log, unary_samples(P, complex_=True)),
    OpInfo("log2", G.log2, unary_samples(P)),
    OpInfo("log10", G.log10, unary_samples(P)),
    OpInfo("log1p", G.log1p, unary_samples(P)),
    OpInfo("expm1", G.expm1, unary_samples()),
    OpInfo("sqrt", G.sqrt, unary_samples(P, complex_=True)),
    OpInfo("rsqrt", G.rsqrt, unary_samples(P)),
    OpInfo("square", G.square, unary_samples(complex_=True)),
    OpInfo("reciprocal", G.reciprocal, unary_samples(complex_=True)),
    OpInfo("sin", G.sin, unary_samples(complex_=True)),
    OpInfo("cos", G.cos, unary_samples(complex_=True)),
    OpInfo("tan", G.tan, unary_samples(U, complex_=True)),
    OpInfo("sinh", G.sinh, unary_samples(complex_=True)),
    OpInfo("cosh", G.cosh, unary_samples(complex_=True)),
    OpInfo("tanh", G.tanh, unary_samples(complex_=True)),
    OpInfo("asin", G.asin, unary_samples(U), covers=("arcsin",)),
    OpInfo("acos", G.acos, unary_samples(U), covers=("arccos",)),
    OpInfo("atan", G.atan, unary_samples(), covers=("arctan",)),
    OpInfo("sigmoid", G.sigmoid, unary_samples()),
    OpInfo("logsigmoid", F.logsigmoid, unary_samples(lambda *s: 4 * N(*s))),
    OpInfo("relu", G.relu, unary_samples()),
    OpInfo("erf", G.erf, unary_samples()),
    OpInfo("silu", G.silu, unary_samples()),
    OpInfo("gelu", G.gelu, S(Sample((N(2, 3),)), Sample((N(2, 3),), {"approximate": "tanh"}),
                             Sample((N(),)))),
    OpInfo("softplus", G.softplus, S(Sample((N(2, 3),)),
                                     Sample((N(2, 3) * 10,), {"beta": 2.0, "threshold": 5.0}))),
    OpInfo("elu", G.elu, S(Sample((N(2, 3),)), Sample((N(3),), {"alpha": 0.5}))),
    OpInfo("leaky_relu", G.leaky_relu, S(Sample((N(2, 3),)),
                                         Sample((N(3),), {"negative_slope": 0.2}))),
    OpInfo("abs", G.abs, unary_samples(complex_=True), covers=("absolute",)),
    OpInfo("sgn", G.sgn, unary_samples(complex_=True)),
    OpInfo("sign", G.sign, unary_samples()),
    OpInfo("floor", G.floor, unary_samples(lambda *s: N(*s) + 0.5)),
    OpInfo("ceil", G.ceil, unary_samples(lambda *s: N(*s) + 0.5)),
    OpInfo("round", G.round, unary_samples(lambda *s: np.round(N(*s)) + 0.25)),
    OpInfo("trunc", G.trunc, unary_samples(lambda *s: N(*s) + 0.5)),
    OpInfo("neg", G.neg, unary_samples(complex_=True), covers=("negative",)),
    OpInfo("clamp", G.clamp, S(Sample((N(2, 3),), {"min": -0.5}), Sample((N(2, 3),), {"max": 0.5}),
                               Sample((N(2, 3),), {"min": -0.5, "max": 0.5}),
                               Sample((N(),), {"min": -0.3, "max": 0.3}),
                               Sample((N(2, 3),), {"min": N(3) - 0.5, "max": N(2, 1) + 1.5},
                                      name="tensor_bounds")), covers=("clip",)),
    OpInfo("conj", G.conj, unary_samples(complex_=True)),
    OpInfo("real", G.real, S(Sample((Z(2, 3),)), Sample((N(3),)))),
    OpInfo("imag", G.imag, S(Sample((Z(2, 3),)), Sample((Z(),)))),
    OpInfo("clone", G.clone, unary_samples(complex_=True)),
    # elementwise, binary (broadcasting)
    OpInfo("add", G.add, binary_samples(complex_=True)),
    OpInfo("add_alpha", lambda x, y: G.add(x, y, alpha=2.5), binary_samples(scalar=False),
           torch=lambda x, y: _torch("add")(x, y, alpha=2.5)),
    OpInfo("sub", G.sub, binary_samples(complex_=True), covers=("subtract",)),
    OpInfo("mul", G.mul, binary_samples(complex_=True), covers=("multiply",)),
    OpInfo("div", G.div, binary_samples(make_y=P, complex_=True),
           covers=("divide", "true_divide")),
    OpInfo("pow", G.pow, lambda: binary_samples(make_x=P, complex_=True)() + [
        Sample((2.5, N(3)), name="number_base"), Sample((1j, N(3)), name="imaginary_base"),
        Sample((-P(3), Z(3)), name="negative_real_base_complex_exponent")]),
    OpInfo("remainder", G.remainder, binary_samples(make_x=P, make_y=lambda *s: P(*s) + 0.5,
                                                    scalar=False)),
    OpInfo("maximum", G.maximum, binary_samples(scalar=False)),
    OpInfo("minimum", G.minimum, binary_samples(scalar=False)),
    OpInfo("where", G.where, S(Sample((B([[True, False, True], [False, True, True]]), N(2, 3),
                                       N(2, 3))),
                               Sample((B([True, False, True]), N(2, 3), N(1))),
                               Sample((B([[True], [False]]), N(2, 3), 0.5)),
                               Sample((B([True, False]), N(2), N()), name="0d_operand"))),
    # reductions
    OpInfo("sum", G.sum, _with_empty(reduction_samples(complex_=True),
                                     Sample((EMPTY,), name="empty"),
                                     Sample((EMPTY, 0), name="empty_dim0"),
                                     Sample((EMPTY, 1, True), name="empty_dim1"))),
    OpInfo("mean", G.mean, reduction_samples(complex_=True)),
    OpInfo("var", G.var, S(Sample((N(2, 3),)), Sample((N(2, 3),), {"dim": 1}),
                           Sample((N(2, 3),), {"dim": 0, "keepdim": True}),
                           Sample((N(2, 3),), {"dim": (0, 1), "correction": 0}),
                           Sample((N(4),), {"dim": -1, "unbiased": False}),
                           Sample((N(3),), {"correction": 2}, name="correction_2"))),
    OpInfo("std", G.std, S(Sample((N(2, 3),)), Sample((N(2, 3),), {"dim": 1, "keepdim": True}),
                           Sample((N(2, 3),), {"dim": 0, "correction": 0}))),
    OpInfo("var_mean", G.var_mean, S(Sample((N(2, 3),), {"dim": 1}))),
    OpInfo("std_mean", G.std_mean, S(Sample((N(2, 3),), {"dim": 0}))),
    OpInfo("prod", G.prod, S(Sample((N(2, 3),)), Sample((N(2, 3),), {"dim": 1}),
                             Sample((N(2, 3),), {"dim": 0, "keepdim": True}),
                             Sample((np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5]]),), {"dim": 1}),
                             Sample((N(),)), Sample((Z(3),), name="complex"))),
    OpInfo("amax", G.amax, _with_empty(reduction_samples(Distinct),
                                       Sample((EMPTY, 1), name="empty"))),
    OpInfo("amin", G.amin, reduction_samples(Distinct)),
    OpInfo("max", G.max, S(Sample((Distinct(2, 3),)), Sample((Distinct(2, 3), 1)),
                           Sample((Distinct(2, 3), 0, True)), Sample((Distinct(2, 3), -1)),
                           Sample((N(), 0), name="0d_dim"),
                           Sample((N(2, 3), N(2, 3)), name="binary"))),
    OpInfo("min", G.min, S(Sample((Distinct(2, 3),)), Sample((Distinct(2, 3), 1)),
                           Sample((Distinct(2, 3), 0, True)),
                           Sample((N(2, 3), N(3)), name="binary"))),
    OpInfo("logsumexp", G.logsumexp, S(Sample((N(2, 3),), {"dim": 1}),
                                       Sample((N(2, 3),), {"dim": (0, 1)}),
                                       Sample((N(2, 3),), {"dim": 0, "keepdim": True}),
                                       Sample((N(),), {"dim": 0}))),
    OpInfo("softmax", G.softmax, _with_empty(dim_samples(), Sample((EMPTY, 1), name="empty"))),
    OpInfo("log_softmax", G.log_softmax, dim_samples()),
    OpInfo("cumsum", G.cumsum, _with_empty(dim_samples(complex_=True),
                                           Sample((EMPTY, 0), name="empty"))),
    # products
    OpInfo("matmul", G.matmul, S(Sample((N(3), N(3)), name="1d@1d"),
                                 Sample((N(2, 3), N(3)), name="2d@1d"),
                                 Sample((N(3), N(3, 2)), name="1d@2d"),
                                 Sample((N(2, 3), N(3, 2)), name="2d@2d"),
                                 Sample((N(2, 1, 1, 2), N(3, 2, 2)), name="batched_broadcast"),
                                 Sample((Z(2, 2), Z(2, 2)), name="complex"),
                                 Sample((np.zeros((2, 0)), N(0, 3)), name="empty_inner"))),
    OpInfo("mm", G.mm, S(Sample((N(2, 3), N(3, 2))), Sample((Z(2, 2), Z(2, 1))))),
    OpInfo("bmm", G.bmm, S(Sample((N(2, 2, 3), N(2, 3, 1))),)),
    OpInfo("mv", G.mv, S(Sample((N(2, 3), N(3))),)),
    OpInfo("dot", G.dot, S(Sample((N(3), N(3))), Sample((Z(3), Z(3))))),
    OpInfo("vdot", G.vdot, S(Sample((Z(3), Z(3))),)),
    OpInfo("inner", G.inner, S(Sample((N(3), N(3))), Sample((N(2, 3), N(2, 3))),
                               Sample((N(2, 3), N(5, 4, 3)), name="all_leading_dims"),
                               Sample((Z(3, 1), Z(3, 1, 1)), name="complex_trailing_1"))),
    OpInfo("outer", G.outer, S(Sample((N(3), N(2))), Sample((Z(2), Z(2))))),
    OpInfo("einsum", G.einsum, S(
        Sample(("ij,jk->ik", N(2, 3), N(3, 2))),
        Sample(("ij,jk", N(2, 3), N(3, 2)), name="implicit"),
        Sample(("ii->i", N(3, 3)), name="diagonal"), Sample(("ii", N(3, 3)), name="trace"),
        Sample(("...ij,...jk->...ik", N(2, 2, 3), N(3, 2)), name="ellipsis"),
        Sample(("bij,bjk->bik", N(2, 2, 3), N(2, 3, 1)), name="batched"),
        Sample(("ij,kl->", N(2, 2), N(1, 2)), name="summed_away"),
        Sample(("iij,jk->ki", N(2, 2, 3), N(3, 2)), name="diagonal_contract"),
        Sample(("ij,ij->ij", N(1, 3), N(2, 3)), name="broadcast"),
        Sample(("i,j", Z(2), Z(3)), name="complex")), gradgrad=True),
    # shapes and views
    OpInfo("reshape", G.reshape, S(Sample((N(2, 3), (3, 2))), Sample((N(2, 3), (-1,))),
                                   Sample((N(), (1, 1))), Sample((Z(2, 2), (4,))))),
    OpInfo("view", G.view, S(Sample((N(2, 3), (6,))), Sample((N(2, 3), (3, -1)))),
           torch=lambda x, shape: x.view(shape)),
    OpInfo("flatten", G.flatten, S(Sample((N(2, 3, 1),)), Sample((N(2, 3, 2), 1)), Sample((N(),))),
           covers=("ravel",)),
    OpInfo("unflatten", G.unflatten, S(Sample((N(2, 6), 1, (2, 3))),)),
    OpInfo("squeeze", G.squeeze, S(Sample((N(2, 1, 3),)), Sample((N(2, 1, 3), 1)),
                                   Sample((N(2, 1, 3), 0)), Sample((N(1),)),
                                   Sample((N(), 0), name="0d"))),
    OpInfo("unsqueeze", G.unsqueeze, S(Sample((N(2, 3), 0)), Sample((N(2, 3), -1)),
                                       Sample((N(), 0)))),
    OpInfo("expand", G.expand, S(Sample((N(3, 1), (3, 2))), Sample((N(2), (3, 2))),
                                 Sample((N(), (2,))), Sample((N(1, 2), (-1, 2)))),
           torch=lambda x, sizes: x.expand(*sizes)),
    OpInfo("broadcast_to", G.broadcast_to, S(Sample((N(3, 1), (2, 3, 2))),)),
    OpInfo("broadcast_tensors", G.broadcast_tensors, S(Sample((N(3, 1), N(2))),)),
    OpInfo("transpose", G.transpose, S(Sample((N(2, 3), 0, 1)), Sample((N(2, 3, 1), -1, 0)),
                                       Sample((Z(2, 3), 1, 0))), covers=("swapaxes",)),
    OpInfo("t", G.t, S(Sample((N(2, 3),)), Sample((N(3),)))),
    OpInfo(".T", lambda x: x.T, S(Sample((N(2, 3),)), Sample((N(3),)), Sample((N(),)))),
    OpInfo("permute", G.permute, S(Sample((N(2, 3, 1), (2, 0, 1))), Sample((N(2, 3), (-1, 0))))),
    OpInfo("flip", G.flip, S(Sample((N(2, 3), (0,))), Sample((N(2, 3), (0, 1))),
                             Sample((N(), (0,)), name="0d"))),
    OpInfo("repeat", G.repeat, S(Sample((N(2), (2, 3))), Sample((N(2, 1), (1, 2)))),
           torch=lambda x, sizes: x.repeat(*sizes)),
    OpInfo("cat", G.cat, S(Sample(([N(2, 3), N(1, 3)],)), Sample(([N(2, 1), N(2, 2)], 1)),
                           Sample(([EMPTY, N(2, 3)],), name="empty"),
                           Sample(([N(2), N(3)], -1))), covers=("concat",)),
    OpInfo("stack", G.stack, S(Sample(([N(2), N(2)],)), Sample(([N(2, 3), N(2, 3)], 2)))),
    OpInfo("split", G.split, S(Sample((N(5, 2), 2)), Sample((N(2, 5), [1, 4], 1)))),
    OpInfo("chunk", G.chunk, S(Sample((N(5, 2), 2)), Sample((N(2, 3), 3, 1)))),
    OpInfo("unbind", G.unbind, S(Sample((N(2, 3),)), Sample((N(2, 3), 1)))),
    # indexing
    OpInfo("getitem_basic", G.getitem, S(Sample((N(3, 4), (1, slice(None, None, 2)))),
                                         Sample((N(3, 4), (Ellipsis, None, 1))),
                                         Sample((N(3, 4), 2))),
           torch=lambda x, key: x[key], covers=("getitem",)),
    OpInfo("getitem_advanced", lambda x, idx: x[idx], S(
        Sample((N(3, 4), I([0, 2, 0])), name="int_repeated"),
        Sample((N(3, 4), B([True, False, True])), name="bool_mask"),
        Sample((N(3, 4), (I([0, 1]), I([3, 3]))), name="pairs"))),
    OpInfo("index_put", _index_put(G), S(Sample((N(3, 2), N(2))), Sample((N(3, 2), N(1)))),
           torch=_in_both(_index_put)[1]),
    OpInfo("index_put_accumulate", _index_put(G, accumulate=True),
           S(Sample((N(3, 2), N(3))), Sample((N(3, 2), N(1)))),
           torch=_in_both(lambda lib: _index_put(lib, accumulate=True))[1]),
    OpInfo("index_select", G.index_select, S(Sample((N(3, 2), 0, I([2, 0, 2]))),
                                             Sample((N(3, 2), -1, I([1]))),
                                             Sample((N(3, 2), 0, I(1)), name="0d_index"))),
    OpInfo("gather", G.gather, S(Sample((N(3, 2), 0, I([[0, 1], [2, 2]]))),
                                 Sample((N(2, 3), 1, I([[0], [2]]))))),
    OpInfo("scatter_add", G.scatter_add, S(Sample((N(3, 2), 0, I([[0, 1], [0, 2]]), N(2, 2))),
                                           Sample((N(2, 3), 1, I([[2], [0]]), N(2, 1))))),
    # torch's own backward fails here (src grad gets index's shape); ours pads it with zeros
    OpInfo("scatter_add_src_larger_than_index", G.scatter_add,
           S(Sample((N(2, 3), 1, I([[2], [0]]), N(2, 2))),), torch=_torch("scatter_add"),
           check_torch_grad=False),
    OpInfo("scatter", G.scatter, S(Sample((N(3, 2), 0, I([[0, 1], [2, 0]]), N(2, 2))),)),
    OpInfo("masked_fill", G.masked_fill, S(
        Sample((N(2, 3), B([[True, False, True], [False, False, True]]), 0.5)),
        Sample((N(2, 3), B([True, False, False]), np.array(2.0)), name="tensor_value"))),
    OpInfo("pad", F.pad, S(Sample((N(2, 3), (1, 2))), Sample((N(1, 2, 3), (1, 0, 0, 1))),
                           Sample((N(2, 4), (-1, 1)), name="negative"),
                           Sample((N(1, 2, 3), (2, 1), "reflect")),
                           Sample((N(1, 2, 3), (2, 1), "replicate")),
                           Sample((N(1, 2, 3), (1, 2), "circular")),
                           Sample((N(2, 2), (1, 1), "constant", 0.5)))),
    # conversions
    OpInfo("astype", lambda x: G.astype(x, np.dtype(np.complex128)), S(Sample((N(3),)),),
           torch=lambda x: x.to(dtype=x.dtype.to_complex())),
    OpInfo("to_device", lambda x: G.to_device(x, "cpu"), S(Sample((N(3),)),),
           torch=lambda x: x.to("cpu")),
    OpInfo("copy_from", G.copy_from, S(Sample((N(2, 3), N(3))),), torch=None),
    OpInfo("fill", G.fill, S(Sample((N(2, 3), np.array(1.5))),), torch=None),
    OpInfo("zeros_like_op", G.zeros_like_op, S(Sample((N(2, 3),)),), torch=None),
    # nn.functional
    OpInfo("linear", F.linear, S(Sample((N(2, 3), N(2, 3), N(2)), name="addmm"),
                                 Sample((N(2, 3), N(2, 3)), name="mm"),
                                 Sample((N(2, 1, 3), N(2, 3), N(2)), name="3d"),
                                 Sample((N(3), N(2, 3), N(2)), name="1d"),
                                 Sample((Z(2, 2), Z(2, 2), Z(2)), name="complex"))),
    OpInfo("conv2d", F.conv2d, S(
        Sample((N(1, 2, 4, 4), N(2, 2, 2, 2), N(2))),
        Sample((N(1, 2, 4, 3), N(2, 1, 2, 2)), {"stride": 2, "padding": 1, "groups": 2}),
        Sample((N(1, 1, 5, 4), N(1, 1, 2, 2)), {"dilation": (2, 1), "padding": "same"}),
        Sample((N(1, 3, 3), N(1, 1, 2, 2)), name="unbatched"),
        Sample((Z(1, 1, 3, 3), Z(1, 1, 2, 2), Z(1)), name="complex"))),
    OpInfo("max_pool2d", F.max_pool2d, S(
        Sample((Distinct(1, 2, 4, 4), 2)),
        Sample((Distinct(1, 1, 5, 5), 3), {"stride": 2, "padding": 1, "ceil_mode": True}),
        Sample((Distinct(1, 4, 4), (2, 1)), {"dilation": (1, 2)}))),
    OpInfo("dropout", _seeded_dropout, S(Sample((N(2, 3), 0.5)), Sample((N(4), 0.0))),
           torch=None),
    OpInfo("layer_norm", F.layer_norm, S(
        Sample((N(2, 3), (3,), N(3), N(3))), Sample((N(2, 2, 2), (2, 2))),
        Sample((N(3, 2), [2], N(2)), {"eps": 1e-3}))),
    OpInfo("embedding", F.embedding, S(Sample((I([[0, 2], [2, 1]]), N(3, 2))),
                                       Sample((I(1), N(3, 2))))),
    OpInfo("embedding_padding_idx", lambda i, w: F.embedding(i, w, padding_idx=2),
           S(Sample((I([0, 2, 1]), N(3, 2))),),
           torch=lambda i, w: _torch("nn.functional.embedding")(i, w, padding_idx=2),
           extra={"nonsmooth": "the padding row is held at zero gradient on purpose"}),
    OpInfo("cross_entropy", F.cross_entropy, S(
        Sample((N(3, 4), I([1, 0, 3]))),
        Sample((N(3, 4), I([1, -100, 3]), Const(P(4))), {"reduction": "sum"}),
        Sample((N(2, 3, 2), I([[0, 2], [1, 1]])), {"label_smoothing": 0.2}),
        Sample((N(3, 4), I([1, 0, 2]), Const(P(4))),
               {"label_smoothing": 0.1, "reduction": "none"}),
        Sample((N(2, 3), Const(P(2, 3) / 3)), name="probabilities"),
        Sample((N(2, 3), P(2, 3) / 3), {"label_smoothing": 0.3}, name="probabilities_grad"),
        Sample((N(4), I(2)), name="unbatched"))),
    OpInfo("F.linear_cross_entropy", F.linear_cross_entropy, S(
        Sample((N(3, 4), N(5, 4), I([1, 0, 4]))),
        Sample((N(3, 4), N(5, 4), I([1, 4, -100])),
               {"linear_bias": N(5), "reduction": "sum", "label_smoothing": 0.1}),
        Sample((N(3, 4), N(5, 4), I([1, 2, 2])), {"weight": Const(P(5)), "ignore_index": 2})),
           torch=lambda *a, **k: _torch("nn.functional.linear_cross_entropy")(*a, **k)),
    OpInfo("nll_loss", F.nll_loss, S(
        Sample((N(3, 4), I([1, 0, 3]))),
        Sample((N(3, 4), I([1, 2, 2]), Const(P(4))), {"ignore_index": 2}),
        Sample((N(2, 3, 2), I([[0, 2], [1, 1]])), {"reduction": "none"}))),
    OpInfo("mse_loss", F.mse_loss, S(Sample((N(2, 3), N(2, 3))),
                                     Sample((N(3), N(3)), {"reduction": "sum"}),
                                     Sample((N(2), N(2)), {"reduction": "none"}))),
    OpInfo("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits, S(
        Sample((N(2, 3) * 3, P(2, 3, low=0.0))),
        Sample((N(2, 3), P(2, 3, low=0.0), Const(P(3))),
               {"pos_weight": Const(P(3)), "reduction": "sum"}),
        Sample((N(3), P(3, low=0.0)), {"reduction": "none"}))),
    OpInfo("F.relu", F.relu, unary_samples()),
    OpInfo("F.softmax", F.softmax, S(Sample((N(2, 3), 1)), Sample((N(2, 3), 0)))),
    OpInfo("F.log_softmax", F.log_softmax, S(Sample((N(2, 3), -1)),)),
    OpInfo("F.softmin", F.softmin, S(Sample((N(2, 3), 1)), Sample((N(2, 3),), {"dim": 0}))),
    OpInfo("F.normalize", F.normalize, S(
        Sample((N(2, 3),)), Sample((N(3, 2),), {"p": 1.0, "dim": 0}),
        Sample((N(2, 3),), {"p": 3.0, "dim": -1}), Sample((N(2, 3),), {"p": float("inf")}))),
]

# Rows added later draw from their own generator, so the rows above keep their sample values.
_table_rng, _rng = _rng, np.random.default_rng(2026)
OPS += [
    # slices, triangles, diagonals, sorting (gradkit/ops/slicing.py, triangular.py, sorting.py)
    OpInfo("narrow", G.narrow, S(Sample((N(3, 4), 1, 1, 2)), Sample((N(3, 4), 0, -2, 2)),
                                 Sample((N(3, 4), -1, 0, 0), name="empty"))),
    OpInfo("select", G.select, S(Sample((N(3, 4), 1, 2)), Sample((N(3, 4), 0, -1)),
                                 Sample((N(2, 3, 2), -1, 1)))),
    OpInfo("roll", G.roll, S(Sample((N(3, 4), 1)), Sample((N(3, 4), (1, -2), (0, 1))),
                             Sample((N(3, 4), 5, -1)), Sample((N(3, 4), -1), {"dims": 0}))),
    OpInfo("tril", G.tril, S(Sample((N(3, 3),)), Sample((N(2, 3, 4), 1)), Sample((N(3, 2), -1)),
                             Sample((Z(2, 2),), name="complex"))),
    OpInfo("triu", G.triu, S(Sample((N(3, 3),)), Sample((N(2, 3, 4), -1)), Sample((N(3, 2), 1)))),
    OpInfo("diag", G.diag, S(Sample((N(3),)), Sample((N(3), 1)), Sample((N(3, 4),)),
                             Sample((N(3, 4), -1)), Sample((Z(2, 2),), name="complex"))),
    OpInfo("diagonal", G.diagonal, S(Sample((N(3, 4),)), Sample((N(3, 4), 1)),
                                     Sample((N(2, 3, 4), -1, 0, 2)),
                                     Sample((N(2, 3, 4), 0, -1, 1)),
                                     Sample((N(2, 3), 5), name="empty"))),
    OpInfo("diag_embed", G.diag_embed, S(Sample((N(3),)), Sample((N(2, 3), 1)),
                                         Sample((N(2, 3), -1, 0, 2)))),
    OpInfo("sort", G.sort, S(Sample((Distinct(3, 4),)), Sample((Distinct(3, 4), 0, True)),
                             Sample((Distinct(4),), {"stable": True}), Sample((N(),)))),
    OpInfo("topk", G.topk, S(Sample((Distinct(3, 4), 2)), Sample((Distinct(3, 4), 3, 0, False)),
                             Sample((Distinct(5),), {"k": 5}), Sample((N(), 1)))),
    OpInfo("angle", G.angle, S(Sample((Z(2, 3),)), Sample((N(3),)))),
    # norms and linear algebra (gradkit/ops/linalg_norms.py, linalg_solvers.py, ...)
    OpInfo("linalg.vector_norm", G.linalg.vector_norm, S(
        Sample((N(2, 3),)), Sample((N(2, 3), 1, 1)), Sample((Distinct(2, 3), INF, 0, True)),
        Sample((Distinct(2, 3), -INF, 1)), Sample((N(2, 3), 3, (0, 1))), Sample((N(4), 0.5)),
        Sample((N(4), 1.5)), Sample((N(3), 0)), Sample((N(),), name="0d"),
        Sample((Z(2, 2),), name="complex"), Sample((Z(3), 3), name="complex_p3")),
           torch=_torch("linalg.vector_norm")),
    OpInfo("linalg.matrix_norm", G.linalg.matrix_norm, S(
        Sample((N(2, 3),)), Sample((N(3, 3), "nuc")), Sample((N(2, 3), 2)), Sample((N(3, 2), -2)),
        Sample((N(2, 3, 3), 1)), Sample((N(2, 3), -1), {"keepdim": True}),
        Sample((N(2, 3), INF)), Sample((N(3, 2, 2), -INF, (0, 2))),
        Sample((N(2, 2, 3), "fro", (2, 0), True)), Sample((N(2, 2, 3), "nuc", (0, 2), True)),
        Sample((Z(2, 2), "nuc"), name="complex")), torch=_torch("linalg.matrix_norm")),
    OpInfo("linalg.norm", G.linalg.norm, S(
        Sample((N(2, 3),)), Sample((N(4), 3)), Sample((N(2, 3), 1)), Sample((N(2, 3), "nuc")),
        Sample((N(2, 3), None, 1)), Sample((N(2, 2, 3), INF, (0, 1)))),
           torch=_torch("linalg.norm")),
    OpInfo("norm", G.norm, S(
        Sample((N(2, 3),)), Sample((N(2, 3), 1, 1)), Sample((N(2, 3), "fro", (0, 1))),
        Sample((N(3, 3), "nuc")), Sample((N(2, 3), 3), {"keepdim": True, "dim": 0}),
        Sample((N(2, 3), INF)), Sample((Z(2, 2),), name="complex"))),
    OpInfo("linalg.inv", G.linalg.inv, S(Sample((W(3, 3),)), Sample((W(2, 2, 2),)),
                                          Sample((Z(2, 2) + 3 * np.eye(2),), name="complex")),
           torch=_torch("linalg.inv"), covers=("inverse",)),
    OpInfo("linalg.det", G.linalg.det, S(Sample((W(3, 3),)), Sample((N(2, 2, 2),)),
                                          Sample((Z(2, 2),), name="complex")),
           torch=_torch("linalg.det"), covers=("det",)),
    OpInfo("linalg.slogdet", G.linalg.slogdet, S(
        Sample((W(3, 3),)), Sample((N(2, 2, 2),)), Sample((Z(2, 2),), name="complex")),
           torch=_torch("linalg.slogdet"), covers=("slogdet",)),
    OpInfo("linalg.solve", G.linalg.solve, S(
        Sample((W(3, 3), N(3, 2))), Sample((W(3, 3), N(3)), name="vector"),
        Sample((W(2, 3, 3), N(2, 3)), name="batch_of_vectors"),
        Sample((W(2, 3, 3), N(3, 1)), name="broadcast"),
        Sample((W(3, 3), N(2, 3)), {"left": False}, name="right"),
        Sample((Z(2, 2) + 3 * np.eye(2), Z(2)), name="complex")), torch=_torch("linalg.solve")),
    OpInfo("linalg.cholesky", _cholesky_of_gram(False)[0], S(
        Sample((N(3, 3),)), Sample((N(2, 2, 2),)), Sample((Z(2, 2),), name="complex")),
           torch=_cholesky_of_gram(False)[1]),
    OpInfo("linalg.cholesky_upper", _cholesky_of_gram(True)[0], S(Sample((N(3, 3),)),),
           torch=_cholesky_of_gram(True)[1]),
    OpInfo("linalg.qr", lambda a, *mode: tuple(G.linalg.qr(a, *mode)), S(
        Sample((N(3, 3),)), Sample((N(4, 2),)), Sample((N(2, 4),)), Sample((N(2, 3, 2),)),
        Sample((N(3, 3), "complete"), name="complete_square")),
           torch=lambda a, *mode: tuple(_torch("linalg.qr")(a, *mode))),
    OpInfo("linalg.svd", _svd_invariants(False)[0], S(
        Sample((N(3, 3),)), Sample((N(4, 2),)), Sample((N(2, 4),)), Sample((N(2, 3, 2),)),
        Sample((Z(3, 2),), name="complex")), torch=_svd_invariants(False)[1]),
    OpInfo("linalg.svd_full_matrices", _svd_invariants(True)[0], S(
        Sample((N(4, 2),)), Sample((N(2, 3),))), torch=_svd_invariants(True)[1]),
    OpInfo("linalg.svdvals", G.linalg.svdvals, S(Sample((N(3, 2),)), Sample((Z(2, 3),))),
           torch=_torch("linalg.svdvals")),
    OpInfo("linalg.eigh", _in_both(_eigh_invariants)[0], S(
        Sample((N(3, 3),)), Sample((N(2, 2, 2),)), Sample((Z(2, 2),), name="complex")),
           torch=_in_both(_eigh_invariants)[1]),
    OpInfo("linalg.eigvalsh", lambda a: G.linalg.eigvalsh(a + a.mH), S(Sample((N(3, 3),)),),
           torch=lambda a: _torch("linalg.eigvalsh")(a + a.mH)),
    # lane scans: scans and order statistics (gradkit/ops/scans.py, order_statistics.py)
    OpInfo("cumprod", G.cumprod, _with_empty(
        dim_samples(complex_=True),
        Sample((np.array([[2.0, 0.0, 3.0, 0.0, 1.5], [0.0, 1.2, -0.7, 2.0, 0.5]]),), {"dim": 1},
               name="zeros"),
        Sample((np.array([1.5, -2.0, 0.0, 0.8]),), {"dim": 0}, name="one_zero"),
        Sample((np.array([[0.0, 1.3], [0.7, 0.0]]),), {"dim": 0}, name="zero_first"),
        Sample((EMPTY, 0), name="empty"))),
    OpInfo("logcumsumexp", G.logcumsumexp, _with_empty(dim_samples(complex_=True),
                                                       Sample((EMPTY, 1), name="empty"))),
    OpInfo("cummax", G.cummax, S(Sample((Distinct(3, 4), 1)), Sample((Distinct(3, 4), 0)),
                                 Sample((Distinct(5), -1)), Sample((N(), 0), name="0d"),
                                 Sample((EMPTY, 0), name="empty"))),
    OpInfo("cummin", G.cummin, S(Sample((Distinct(3, 4), 1)), Sample((Distinct(2, 3), -2)),
                                 Sample((N(), -1), name="0d"))),
    OpInfo("kthvalue", G.kthvalue, S(Sample((Distinct(3, 4), 2)),
                                     Sample((Distinct(3, 4), 1, 0, True)), Sample((Distinct(5), 5)),
                                     Sample((Distinct(2, 3), 3, -1)),
                                     Sample((N(), 1), name="0d"))),
    OpInfo("median", G.median, S(Sample((Distinct(3, 4),)), Sample((Distinct(4),), name="even"),
                                 Sample((Distinct(3, 4), 1)), Sample((Distinct(3, 4), 0, True)),
                                 Sample((N(),), name="0d"), Sample((N(), 0), name="0d_dim"))),
    OpInfo("nanmedian", G.nanmedian, S(Sample((Distinct(3, 4),)), Sample((Distinct(3, 4), 1)),
                                       Sample((Distinct(2, 4), -1, True)),
                                       Sample((N(),), name="0d"))),
    OpInfo("mode", G.mode, S(Sample((Distinct(3, 4),)), Sample((Distinct(3, 4), 0, True)),
                             Sample((N(), 0), name="0d"))),
    OpInfo("msort", G.msort, S(Sample((Distinct(3, 4),)), Sample((Distinct(5),)),
                               Sample((N(),), name="0d"))),
    OpInfo("aminmax", G.aminmax, S(Sample((Distinct(2, 3),)), Sample((Distinct(2, 3),), {"dim": 1}),
                                   Sample((Distinct(2, 3),), {"dim": 0, "keepdim": True}),
                                   Sample((N(),), name="0d"))),
]
_rng = _table_rng

# lane index: masked/flat/indexed selection and writes, scatter_reduce, complex/polar
# (gradkit/ops/index_ops.py, scatter_reduce.py, complex_build.py, polar.py)
_table_rng, _rng = _rng, np.random.default_rng(2027)
_MASK = B([[True, False, True], [False, False, True]])
OPS += [
    OpInfo("masked_select", G.masked_select, S(
        Sample((N(2, 3), _MASK)), Sample((N(2, 3), B([True, False, True])), name="broadcast"),
        Sample((N(3), _MASK), name="mask_wider"), Sample((N(2, 3), B(False)), name="none"))),
    OpInfo("masked_scatter", G.masked_scatter, S(
        Sample((N(2, 3), _MASK, N(2, 2))), Sample((N(3), _MASK, N(4)), name="broadcast"),
        Sample((N(2, 3), B([False, True, True]), N(5)), name="mask_broadcast"))),
    OpInfo("take", G.take, S(Sample((N(2, 3), I([0, 5, -1, 5]))),
                             Sample((N(2, 3), I([[1], [4]])), name="2d"),
                             Sample((N(), I([0, 0])), name="0d"))),
    OpInfo("take_along_dim", G.take_along_dim, S(
        Sample((N(3, 4), I([[0], [2], [1]]), 1)), Sample((N(2, 3), I([0, 5, 5])), name="flat"),
        Sample((N(3, 4), I([[0], [2]]), 0), name="broadcast"),
        Sample((N(1, 3), I([[2], [0]]), -1), name="broadcast_input"))),
    OpInfo("index_add", G.index_add, S(
        Sample((N(3, 2), 0, I([0, 2, 0]), N(3, 2)), name="repeated"),
        Sample((N(3, 2), -1, I([1]), N(3, 1)), {"alpha": 2.5}, name="alpha"),
        Sample((N(), 0, I(0), N()), name="0d"))),
    OpInfo("index_copy", G.index_copy, S(Sample((N(3, 2), 0, I([2, 0]), N(2, 2))),
                                         Sample((N(2, 3), 1, I([1]), N(2, 1)))),
           extra={"unique_indices": "torch's result is undefined for repeated indices"}),
    OpInfo("index_fill", G.index_fill, S(
        Sample((N(3, 2), 1, I([1]), 0.5)),
        Sample((N(3, 2), 0, I([0, 2, 0]), np.array(1.5)), name="tensor_value_repeated"),
        Sample((N(3, 2), -2, I(1), np.array(-1.0)), name="0d_index"))),
    OpInfo("put", G.put, S(Sample((N(2, 3), I([0, 4]), N(2))),
                           Sample((N(2, 3), I([1, 1, -1]), N(3), True), name="accumulate"),
                           Sample((N(2, 3), I([[5], [2]]), N(1, 2)), name="shapes"))),
    OpInfo("scatter_reduce", G.scatter_reduce, S(
        *(Sample((Distinct(3, 2), 0, I([[0, 1], [0, 0], [2, 0]]), Distinct(3, 2) + 0.01, reduce),
                 {"include_self": include_self}, name=f"{reduce}_{include_self}")
          for reduce in ("sum", "prod", "mean", "amax", "amin")
          for include_self in (True, False)),
        Sample((N(2, 3), 1, I([[2], [0]]), N(2, 1), "prod"), name="dim1"))),
    OpInfo("complex", G.complex, S(Sample((N(2, 3), N(2, 3))),
                                   Sample((N(3), N(2, 3)), name="broadcast"))),
    OpInfo("polar", G.polar, S(Sample((P(2, 3), N(2, 3))), Sample((P(3), N(2, 1)),
                                                                    name="broadcast"))),
    # complex views (gradkit/ops/complex_views.py)
    OpInfo("view_as_real", G.view_as_real, S(Sample((Z(2, 3),)), Sample((Z(),), name="0-d"))),
    OpInfo("view_as_complex", G.view_as_complex, S(Sample((N(2, 3, 2),)),
                                                   Sample((N(2),), name="0-d"))),
]
_rng = _table_rng

# Exported names that are not differentiable, each with its reason (the coverage test reads it).
NON_DIFFERENTIABLE = {
    "F.one_hot": "integer result (an encoding of class indices)",
    **{name: "comparison: bool result" for name in ("eq", "ne", "lt", "le", "gt", "ge", "isclose")},
    **{name: "logic/bit op: bool or integer result" for name in (
        "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_not", "bitwise_and",
        "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "all",
        "any")},
    **{name: "predicate: bool result" for name in ("isnan", "isinf", "isfinite")},
    "argmax": "integer result", "argmin": "integer result", "argsort": "integer result",
    "count_nonzero": "integer result",
    "equal": "Python bool result (checked in tests/test_ops_scans.py)",
    "allclose": "Python bool result (forward checked in tests/test_torch_api_ops.py)",
    "floor_divide": "piecewise constant: backward refuses it (NotImplemented node), as torch",
    "zeros_like": "constant output", "ones_like": "constant output",
    "nonzero": "integer result", "argwhere": "integer result",
    "bucketize": "integer result", "searchsorted": "integer result",
    "histc": "counts: torch's has no gradient either",
    "bincount": "counts (sums of weights): torch's backward raises (tests/test_ops_shape2.py)",
    "unique": "torch has no derivative (its backward raises; tests/test_ops_index.py)",
    "setitem_": "in-place write; graph rebasing is tested in tests/test_inplace.py",
    "inplace": "the in-place mechanism itself (tests/test_inplace.py)",
    "op": "op declaration decorator, not an op", "dispatch": "op dispatch, not an op",
    "sum_to_shape": "broadcast-reduction helper, exercised by every broadcasting sample",
}


def op_by_name(name: str) -> OpInfo:
    return next(info for info in OPS if info.name == name)


# -- building a sample with gradkit or torch ----------------------------------------------------

class _Slot(NamedTuple):
    index: int


def _template(value, leaves: list, make_tensor):
    """Replace differentiable arrays by slots (filled with leaves at call time)."""
    if isinstance(value, Const):
        return make_tensor(value.array, False)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            leaves.append(make_tensor(value, True))
            return _Slot(len(leaves) - 1)
        return make_tensor(value, False)
    if isinstance(value, list):
        return [_template(v, leaves, make_tensor) for v in value]
    if isinstance(value, tuple):
        return tuple(_template(v, leaves, make_tensor) for v in value)
    if isinstance(value, dict):
        return {k: _template(v, leaves, make_tensor) for k, v in value.items()}
    return value


def _fill(value, tensors):
    if isinstance(value, _Slot):
        return tensors[value.index]
    if isinstance(value, list):
        return [_fill(v, tensors) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_fill(v, tensors) for v in value)
    if isinstance(value, dict):
        return {k: _fill(v, tensors) for k, v in value.items()}
    return value


def gradkit_tensor(array, requires_grad):
    return gradkit.tensor(array, requires_grad=requires_grad)


def torch_tensor(array, requires_grad):
    import torch
    return torch.tensor(array, requires_grad=requires_grad)


def torch_function(info: OpInfo):
    """The torch function an entry is compared with (None: no torch counterpart)."""
    import torch
    if info.torch != "same":
        return info.torch
    name = info.name.removeprefix("F.")
    if info.name.startswith("F.") or getattr(F, name, None) is info.op:
        return getattr(torch.nn.functional, name)
    if getattr(torch, name, None) is not None:
        return getattr(torch, name)
    if getattr(torch.nn.functional, name, None) is not None:  # F.silu wraps the op G.silu
        return getattr(torch.nn.functional, name)
    return info.op  # a lambda written with operators: the same code runs on torch tensors


def bind(function, sample: Sample, make_tensor):
    """(leaves, call): the sample's differentiable leaves and ``call(*leaves) -> outputs``."""
    leaves: list = []
    args = _template(sample.args, leaves, make_tensor)
    kwargs = _template(dict(sample.kwargs), leaves, make_tensor)

    def call(*tensors):
        return function(*_fill(args, tensors), **_fill(kwargs, tensors))
    return leaves, call


def flat_outputs(out) -> list:
    """Every tensor an op returned, in order (tuples, named tuples and lists flattened)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat_outputs(o)]
    return [out]


def differentiable_outputs(out) -> tuple:
    return tuple(o for o in flat_outputs(out) if o.dtype.is_floating_point or o.dtype.is_complex)


def samples_of(info: OpInfo) -> list:
    return info.samples()


def cases():
    """(id, OpInfo, Sample) for every sample of every entry: the tests' parameters."""
    return [(f"{info.name}-{sample.name or i}", info, sample)
            for info in OPS for i, sample in enumerate(samples_of(info))]

# lane elem: torch API breadth (gradkit/ops/binary_math.py, elementwise_special.py, products.py,
# rearrange.py), drawing from their own generator so the rows above keep their values
_table_rng, _rng = _rng, np.random.default_rng(1515)


def _away_from_integers(*shape):
    """Values whose truncation is constant nearby (frac, fmod's quotient)."""
    return np.asarray(np.round(N(*shape) * 3) + 0.25 + 0.5 * _rng.random(shape))


OPS += [
    OpInfo("atan2", G.atan2, binary_samples(scalar=False), covers=("arctan2",)),
    OpInfo("hypot", G.hypot, binary_samples(scalar=False)),
    OpInfo("xlogy", G.xlogy, lambda: binary_samples(make_y=P)() + [
        Sample((2.5, P(3)), name="number_x"),
        Sample((np.array([0.0, 1.5]), np.array([0.5, 2.0])), name="zero_x")]),
    OpInfo("logaddexp", G.logaddexp, binary_samples(complex_=True, scalar=False)),
    OpInfo("logaddexp2", G.logaddexp2, binary_samples(scalar=False)),
    OpInfo("fmod", G.fmod, lambda: binary_samples(
        make_x=_away_from_integers, make_y=lambda *s: P(*s) + 0.5, scalar=False)() + [
        Sample((_away_from_integers(2, 2), 1.5), name="python_scalar")]),
    OpInfo("lerp", G.lerp, S(Sample((N(2, 3), N(2, 3), 0.3), name="scalar_weight"),
                             Sample((N(2, 3), N(3), 0.75), name="scalar_weight_high"),
                             Sample((N(2, 3), N(2, 3), U(2, 3)), name="tensor_weight"),
                             Sample((N(2, 1), N(3), U(4, 1, 1)), name="broadcast"),
                             Sample((Z(2), Z(2), Z(2) * 0.3), name="complex"),
                             Sample((Z(2), Z(2), 0.6), name="complex_scalar_weight"))),
    OpInfo("addcmul", G.addcmul, S(Sample((N(2, 3), N(2, 3), N(2, 3))),
                                   Sample((N(3), N(2, 1), N(3)), {"value": -0.5}),
                                   Sample((N(), N(2), N(2)), {"value": 2}, name="0d_input"),
                                   Sample((Z(2), Z(2), Z(2)), {"value": 1j}, name="complex"))),
    OpInfo("addcdiv", G.addcdiv, S(Sample((N(2, 3), N(2, 3), P(2, 3))),
                                   Sample((N(3), N(2, 1), -P(3)), {"value": 0.5}),
                                   Sample((Z(2), Z(2), Z(2)), {"value": 2 - 1j}, name="complex"))),
    OpInfo("erfc", G.erfc, unary_samples()),
    OpInfo("erfinv", G.erfinv, unary_samples(U)),
    OpInfo("logit", G.logit, lambda: unary_samples(lambda *s: P(*s, low=0.05) * 0.85)() + [
        Sample((np.array([0.02, 0.5, 0.97]), 0.1), name="eps_clamps"),
        Sample((P(3, low=0.1) * 0.8, -0.5), name="negative_eps")]),
    OpInfo("sinc", G.sinc, unary_samples(complex_=True)),
    OpInfo("frac", G.frac, unary_samples(_away_from_integers)),
    OpInfo("nan_to_num", G.nan_to_num, S(
        Sample((N(2, 3),)), Sample((np.array([np.nan, np.inf, -np.inf, 1.5]),), name="special"),
        Sample((np.array([np.nan, np.inf, -np.inf, 1.5]), 1.0, 2.0, -2.0), name="replacements"))),
    OpInfo("trace", G.trace, S(Sample((N(3, 3),)), Sample((N(2, 4),)), Sample((Z(2, 2),)),
                               Sample((np.zeros((0, 2)),), name="empty"))),
    OpInfo("tensordot", G.tensordot, S(
        Sample((N(2, 3), N(3, 2), 1)), Sample((N(2, 3, 2), N(3, 2, 2))),
        Sample((N(2, 3), N(2, 2), 0), name="outer"),
        Sample((N(2, 3, 2), N(2, 3), ([0, 1], [0, 1])), name="lists"),
        Sample((N(2, 1), N(3, 2), ([1], [0])), name="size_1_partner"),
        Sample((Z(2, 2), Z(2, 2), ([1, 0], [0, 1])), name="complex"))),
    OpInfo("addmm", G.addmm, S(Sample((N(2, 4), N(2, 3), N(3, 4))),
                               Sample((N(4), N(2, 3), N(3, 4)), {"beta": 0.5, "alpha": 2}),
                               Sample((N(2, 1), N(2, 3), N(3, 4)), {"beta": 0}, name="beta_0"),
                               Sample((Z(2, 2), Z(2, 2), Z(2, 2)), {"alpha": 1j},
                                      name="complex"))),
    OpInfo("addmv", G.addmv, S(Sample((N(2), N(2, 3), N(3))),
                               Sample((N(1), N(2, 3), N(3)), {"beta": -1.5, "alpha": 0.5}),
                               Sample((Z(2), Z(2, 2), Z(2)), {"beta": 1j}, name="complex"))),
    OpInfo("baddbmm", G.baddbmm, S(Sample((N(2, 2, 4), N(2, 2, 3), N(2, 3, 4))),
                                   Sample((N(1, 4), N(2, 2, 3), N(2, 3, 4)),
                                          {"beta": 0.5, "alpha": -2}))),
    OpInfo("addbmm", G.addbmm, S(Sample((N(2, 4), N(3, 2, 3), N(3, 3, 4))),
                                 Sample((N(4), N(2, 2, 3), N(2, 3, 4)), {"beta": 2, "alpha": 0.5}),
                                 Sample((N(2, 4), N(0, 2, 3), N(0, 3, 4)), name="no_batches"))),
    OpInfo("kron", G.kron, S(Sample((N(2, 3), N(2, 2))), Sample((N(2, 3), N(2))),
                             Sample((N(), N(3)), name="0d"), Sample((Z(2), Z(2)), name="complex"))),
    OpInfo("linalg.cross", G.linalg.cross, S(
        Sample((N(2, 3), N(2, 3))), Sample((N(3, 2), N(3, 2)), {"dim": 0}),
        Sample((N(1, 3), N(2, 3)), name="broadcast"), Sample((Z(3), Z(3)), name="complex")),
           torch=_torch("linalg.cross")),
    OpInfo("cross", G.cross, S(Sample((N(3, 2), N(3, 2)), {"dim": 0}),
                               Sample((N(2, 3), N(2, 3)), {"dim": -1}))),
    OpInfo("meshgrid", lambda *t: G.meshgrid(*t, indexing="ij"), S(
        Sample((N(2), N(3))), Sample((N(2), N(), N(3)), name="0d")),
           torch=lambda *t: _torch("meshgrid")(*t, indexing="ij")),
    OpInfo("meshgrid_xy", lambda *t: G.meshgrid(*t, indexing="xy"), S(
        Sample((N(2), N(3), N(4))), Sample((N(3),), name="one")),
           torch=lambda *t: _torch("meshgrid")(*t, indexing="xy")),
    OpInfo("tile", G.tile, S(Sample((N(2, 3), (2,))), Sample((N(2, 3), (2, 1, 2))),
                             Sample((N(3), ()), name="no_dims"))),
    OpInfo("movedim", G.movedim, S(Sample((N(2, 3, 4), 0, 2)),
                                   Sample((N(2, 3, 4), (0, 1), (2, 0))),
                                   Sample((N(2, 3), -1, 0))), covers=("moveaxis",)),
    OpInfo("diff", G.diff, S(Sample((N(2, 4),)), Sample((N(3, 2),), {"n": 2, "dim": 0}),
                             Sample((N(2, 3),), {"prepend": N(2, 1), "append": N(2, 2)}),
                             Sample((N(3),), {"n": 5}, name="n_past_size"),
                             Sample((N(2, 3),), {"n": 0}, name="n_0"),
                             Sample((Z(3),), name="complex"))),
    OpInfo("rot90", G.rot90, S(Sample((N(2, 3),)), Sample((N(2, 3), 2)), Sample((N(2, 3), -1)),
                               Sample((N(2, 3, 2), 3, (2, 0))), Sample((N(2, 3), 4)),
                               Sample((Z(2, 2),), name="complex"))),
]
_rng = _table_rng

# lane shape2: torch API breadth, shape / combination / distance functions (gradkit/ops/
# stacking.py, view_scatter.py, patterns.py, distances.py, integrals.py, matrix_products.py,
# aliases.py), drawing from their own generator so the rows above keep their values
_table_rng, _rng = _rng, np.random.default_rng(2215)

OPS += [
    OpInfo("atleast_1d", G.atleast_1d, S(Sample((N(),)), Sample((N(2, 3),)),
                                         Sample(([N(), N(2)],), name="list"))),
    OpInfo("atleast_2d", G.atleast_2d, S(Sample((N(),)), Sample((N(3),)),
                                         Sample((N(2), N(1, 2)), name="several"))),
    OpInfo("atleast_3d", G.atleast_3d, S(Sample((N(),)), Sample((N(3),)), Sample((N(2, 3),)),
                                         Sample((N(2, 1, 2),)))),
    OpInfo("hstack", G.hstack, S(Sample(([N(2), N(), N(3)],)), Sample(([N(2, 1), N(2, 3)],)),
                                 Sample(([Z(2), N(1)],), name="complex"))),
    OpInfo("vstack", G.vstack, S(Sample(([N(3), N(2, 3)],)), Sample(([N(), N(1)],))),
           covers=("row_stack",)),
    OpInfo("dstack", G.dstack, S(Sample(([N(2), N(1, 2), N(1, 2, 2)],)))),
    OpInfo("column_stack", G.column_stack, S(Sample(([N(2), N(2, 3), N(2)],)),
                                             Sample(([N(), N(1, 2)],), name="0d"))),
    OpInfo("tensor_split", G.tensor_split, S(
        Sample((N(2, 5), 3, 1)), Sample((N(4), [1, -1, 9])),
        Sample((N(3, 2), I([2])), name="tensor_indices"))),
    OpInfo("hsplit", G.hsplit, S(Sample((N(2, 4), 2)), Sample((N(3), [1]), name="1d"))),
    OpInfo("vsplit", G.vsplit, S(Sample((N(4, 2), [1, 3])))),
    OpInfo("dsplit", G.dsplit, S(Sample((N(1, 2, 4), 2)))),
    OpInfo("flipud", G.flipud, S(Sample((N(3, 2),)), Sample((Z(3),), name="complex"))),
    OpInfo("fliplr", G.fliplr, S(Sample((N(2, 3, 2),)))),
    OpInfo("cartesian_prod", G.cartesian_prod, S(Sample((N(2), N(3))),
                                                 Sample((N(2), N(1), N(2)), name="three"))),
    OpInfo("combinations", G.combinations, S(
        Sample((N(4),)), Sample((N(4), 3)), Sample((N(3), 2, True), name="with_replacement"),
        Sample((Z(3),), name="complex"))),
    OpInfo("block_diag", G.block_diag, S(Sample((N(2, 3), N(), N(2))),
                                         Sample((N(0, 2), N(2, 1)), name="empty_block"),
                                         Sample((Z(1, 2), N(1)), name="complex"))),
    OpInfo("diagflat", G.diagflat, S(Sample((N(2, 2),)), Sample((N(3), -1)),
                                     Sample((N(), 1), name="0d"))),
    OpInfo("select_scatter", G.select_scatter, S(Sample((N(2, 3), N(2), 1, -1)))),
    OpInfo("slice_scatter", G.slice_scatter, S(
        Sample((N(2, 5), N(2, 3), 1, 0, None, 2)), Sample((N(3, 2), N(1, 2), 0, -1)))),
    OpInfo("diagonal_scatter", G.diagonal_scatter, S(
        Sample((N(3, 4), N(3))), Sample((N(3, 2, 4), N(2, 3), -1, 2, 0)),
        Sample((N(2, 3), N(2), 1), name="offset"), Sample((Z(2, 2), Z(2)), name="complex"))),
    OpInfo("narrow_copy", G.narrow_copy, S(Sample((N(2, 4), 1, -3, 2)),
                                           Sample((N(3, 2), 0, 1, 0), name="empty"))),
    OpInfo("repeat_interleave", G.repeat_interleave, S(
        Sample((N(2, 3), 2), {"dim": 0}), Sample((N(2, 2), 3), name="flat"),
        Sample((N(2, 3), I([1, 0, 3]), -1), name="tensor_repeats"),
        Sample((N(3, 2), I([2]), 0), name="one_count"))),
    OpInfo("vander", G.vander, S(Sample((N(3),)), Sample((N(3), 5)), Sample((N(4), 2, True))),
           check_torch_grad=False,  # torch's own backward fails (it writes over cumprod's input)
           extra={"why": "torch.vander(x).sum().backward() raises in torch 2.13"}),
    OpInfo("cdist", G.cdist, S(
        *[Sample((N(3, 2), N(4, 2), p), name=f"p={p}") for p in (0.5, 1, 1.5, 2, 3, INF)],
        Sample((N(3, 2), N(2, 2)), {"compute_mode": "use_mm_for_euclid_dist"}, name="mm"),
        Sample((N(2, 1, 3, 2), N(2, 2, 2)), name="batch_broadcast"),
        Sample((N(2, 2), N(2, 2), 0), name="p=0"))),
    OpInfo("dist", G.dist, S(
        *[Sample((N(2, 3), N(3), p), name=f"p={p}") for p in (0.5, 1, 2, 3, INF, -INF)],
        Sample((Z(2), Z(2)), name="complex"))),
    OpInfo("renorm", G.renorm, S(
        *[Sample((N(3, 4), p, 0, 1.5), name=f"p={p}") for p in (1, 2, 3.5)],
        Sample((N(2, 3, 2), 2, -1, 1.0), name="dim=-1"),
        Sample((N(2, 2) * 0.1, 2, 1, 100.0), name="below_max"),
        *[Sample((Z(2, 3), p, 0, 0.5), name=f"complex_p={p}") for p in (1, 2, 3)])),
    OpInfo("addr", G.addr, S(Sample((N(2, 3), N(2), N(3))),
                             Sample((N(3), N(2), N(3)), {"beta": 0.5, "alpha": -2}),
                             Sample((N(2, 1), N(2), N(3)), {"beta": 0}, name="beta_0"),
                             Sample((Z(1, 2), Z(1), Z(2)), {"alpha": 1j}, name="complex"))),
    OpInfo("chain_matmul", G.chain_matmul, S(Sample((N(2, 3),)), Sample((N(2, 3), N(3, 1))),
                                             Sample((N(2, 3), N(3, 4), N(4, 2))))),
    OpInfo("trapezoid", G.trapezoid, S(
        Sample((N(2, 4),)), Sample((N(3, 2),), {"dx": 0.5, "dim": 0}),
        Sample((N(2, 4), N(4)), name="x"), Sample((N(2, 3, 4), N(3, 4)), name="x_2d"),
        Sample((N(2, 1),), name="one_sample")), covers=("trapz",)),
    OpInfo("cumulative_trapezoid", G.cumulative_trapezoid, S(
        Sample((N(2, 4),)), Sample((N(3, 2),), {"dx": 3, "dim": 0}),
        Sample((N(2, 4), N(4)), name="x"))),
    OpInfo("adjoint", G.adjoint, S(Sample((N(2, 3),)), Sample((Z(2, 2, 3),), name="complex"))),
    OpInfo("swapdims", G.swapdims, S(Sample((N(2, 3), 0, 1)), Sample((N(2, 3, 2), -1, 0)))),
    OpInfo("expand_copy", G.expand_copy, S(Sample((N(1, 3), (2, 2, 3))),
                                           Sample((N(2, 1), (-1, 3)), name="keep"))),
    OpInfo("permute_copy", G.permute_copy, S(Sample((N(2, 3, 2), (2, 0, 1))),
                                             Sample((Z(2, 3), (1, 0)), name="complex"))),
]
_rng = _table_rng

# lane elem2: more torch breadth (gradkit/ops/binary_breadth.py, unary_breadth.py, gamma.py,
# statistics.py, linalg_solvers.logdet), drawing from their own generator
_table_rng, _rng = _rng, np.random.default_rng(3131)
_NAN = np.nan


def _fractional(*shape):
    """Values kept off the integers (the poles of the gamma family below 0)."""
    return np.asarray(np.round(N(*shape) * 2) + 0.3 + 0.4 * _rng.random(shape))


OPS += [
    OpInfo("copysign", G.copysign, binary_samples()),
    OpInfo("fmax", G.fmax, binary_samples(scalar=False)),
    OpInfo("fmin", G.fmin, binary_samples(scalar=False)),
    OpInfo("nextafter", G.nextafter, binary_samples(scalar=False)),
    OpInfo("ldexp", G.ldexp, S(Sample((N(2, 3), N(2, 3))), Sample((N(2, 3), I([1, 2, 0]))),
                               Sample((N(), N(3)), name="0d"),
                               Sample((Z(2), Z(2)), name="complex"))),
    OpInfo("float_power", G.float_power, S(
        Sample((P(2, 3), N(2, 3))), Sample((P(3), 2.0), name="number_exponent"),
        Sample((2.5, N(3)), name="number_base"), Sample((P(2, 1), I([1, 2])), name="int"),
        Sample((Z(2), Z(2)), name="complex"))),
    OpInfo("rsub", G.rsub, lambda: binary_samples(complex_=True)() + [
        Sample((N(2, 3), N(3)), {"alpha": 2.5}, name="alpha")]),
    OpInfo("deg2rad", G.deg2rad, unary_samples()),
    OpInfo("rad2deg", G.rad2deg, unary_samples()),
    OpInfo("positive", G.positive, unary_samples(complex_=True)),
    OpInfo("frexp", G.frexp, S(Sample((N(2, 3) * 10,)), Sample((N(),), name="0d"))),
    OpInfo("clamp_min", G.clamp_min, S(Sample((N(2, 3), -0.5)), Sample((N(), 0.3), name="0d"),
                                       Sample((N(2, 3), N(3)), name="tensor_bound"))),
    OpInfo("clamp_max", G.clamp_max, S(Sample((N(2, 3), 0.5)),
                                       Sample((N(2, 3), N(2, 1)), name="tensor_bound"))),
    OpInfo("lgamma", G.lgamma, lambda: unary_samples(P)() + [
        Sample((_fractional(2, 3),), name="negative")]),
    OpInfo("digamma", G.digamma, lambda: unary_samples(P)() + [
        Sample((_fractional(2, 3),), name="negative")]),
    OpInfo("polygamma", G.polygamma, S(
        Sample((0, P(3))), Sample((1, P(2, 3))), Sample((2, P(3) + 1)),
        Sample((3, _fractional(4)), name="n3_negative"))),
    OpInfo("mvlgamma", G.mvlgamma, S(Sample((P(2, 3) + 1, 1)), Sample((P(3) + 1.5, 3)))),
    OpInfo("i0", G.i0, lambda: unary_samples()() + [
        Sample((np.array([-9.5, 0.0, 8.5, 20.0]),), name="both_ranges")]),
    OpInfo("logdet", G.logdet, S(Sample((W(3, 3),)), Sample((W(2, 2, 2),), name="batched"),
                                 Sample((Z(2, 2) + 3 * np.eye(2),), name="complex"))),
    OpInfo("nansum", G.nansum, lambda: reduction_samples()() + [
        Sample((np.array([[1.5, _NAN, 2.0], [_NAN, 0.5, -1.0]]), 1), name="nan"),
        Sample((EMPTY, 0), name="empty")]),
    OpInfo("nanmean", G.nanmean, S(
        Sample((N(2, 3),)), Sample((N(2, 3), 1)), Sample((N(2, 3), 0, True)),
        Sample((np.array([[1.5, _NAN, 2.0], [_NAN, 0.5, -1.0]]), 1), name="nan"))),
    OpInfo("quantile", G.quantile, S(
        Sample((Distinct(2, 5), 0.3), {"dim": 1}), Sample((Distinct(2, 5), 0.4)),
        Sample((Distinct(3, 4), np.array([0.1, 0.7]), 0, True), name="q_tensor"),
        Sample((Distinct(4, 3), np.array(0.45)), {"dim": 0}, name="q_0d"),
        *(Sample((Distinct(2, 4), 0.3), {"dim": -1, "interpolation": mode}, name=mode)
          for mode in ("lower", "higher", "midpoint", "nearest")),
        Sample((N(), 0.5), {"dim": 0, "keepdim": True}, name="0d"))),
    OpInfo("nanquantile", G.nanquantile, S(
        Sample((np.array([[3.0, 1.0, _NAN, 2.5], [0.5, -1.0, 4.0, 2.0]]), 0.4), {"dim": 1}),
        Sample((Distinct(2, 4), np.array([0.2, 0.9])), {"interpolation": "midpoint"}))),
    OpInfo("cov", G.cov, S(
        Sample((N(3, 5),)), Sample((N(5),), name="1d"), Sample((N(2, 4),), {"correction": 0}),
        Sample((N(2, 4),), {"fweights": I([1, 2, 0, 3])}, name="fweights"),
        Sample((N(2, 4),), {"aweights": P(4), "fweights": I([2, 1, 1, 3])}, name="both_weights"),
        Sample((Z(2, 3),), name="complex"))),
    OpInfo("corrcoef", G.corrcoef, S(Sample((N(3, 5),)), Sample((N(4),), name="1d"),
                                     Sample((Z(2, 4),), name="complex"))),
]
_rng = _table_rng
NON_DIFFERENTIABLE.update({
    "gcd": "integer result", "lcm": "integer result",
    "heaviside": "torch has no derivative: backward refuses it (NotImplemented node)",
    **{name: "predicate: bool result" for name in (
        "signbit", "isneginf", "isposinf", "isreal", "isin")}})

# lane nnact: activations and losses of torch.nn.functional (gradkit/ops/activations_more.py,
# activations_gated.py, losses_more.py, losses_margin.py); samples keep clear of the kinks
# (test_nn_more.py checks them)
_table_rng, _rng = _rng, np.random.default_rng(2615)


def _in_place(name):
    """F.<name>_ on a copy of its input (a leaf cannot be written in place), in both libraries."""
    return _in_both(lambda lib: lambda x, *a, **k: getattr(lib.nn.functional, name)(x * 1.0, *a,
                                                                                   **k))


def _signs(*shape):
    return Const(np.where(_rng.random(shape) < 0.5, -1.0, 1.0))


def _away(low, high):
    """Standard normal values scaled by 3, kept 0.15 away from each kink in ``low``..``high``."""
    def make(*shape):
        v = 3 * N(*shape)
        for kink in (low, high):
            v = np.where(np.abs(v - kink) < 0.15, v + 0.3, v)
        return v
    return make


_ELU_ = _in_place("elu_")
_CELU_ = _in_place("celu_")
_SELU_ = _in_place("selu_")
_LEAKY_ = _in_place("leaky_relu_")
_HARDTANH_ = _in_place("hardtanh_")
_THRESHOLD_ = _in_place("threshold_")
_RRELU_ = _in_place("rrelu_")
_RELU_ = _in_place("relu_")
OPS += [
    OpInfo("F.elu", F.elu, S(Sample((N(2, 3),)), Sample((N(3), 0.5)))),
    OpInfo("F.leaky_relu", F.leaky_relu, S(Sample((N(2, 3),)), Sample((N(3), 0.2)))),
    OpInfo("F.elu_", _ELU_[0], S(Sample((N(2, 3), 0.7))), torch=_ELU_[1]),
    OpInfo("F.leaky_relu_", _LEAKY_[0], S(Sample((N(2, 3), 0.2))), torch=_LEAKY_[1]),
    OpInfo("F.relu_", _RELU_[0], S(Sample((N(2, 3),))), torch=_RELU_[1], covers=("relu_",)),
    OpInfo("F.celu", F.celu, S(Sample((N(2, 3),)), Sample((N(3), 2.0)), Sample((N(),)))),
    OpInfo("F.celu_", _CELU_[0], S(Sample((N(2, 3), 0.5))), torch=_CELU_[1], covers=("celu_",)),
    OpInfo("F.selu", F.selu, unary_samples()),
    OpInfo("F.selu_", _SELU_[0], S(Sample((N(2, 3),))), torch=_SELU_[1], covers=("selu_",)),
    OpInfo("F.hardtanh", F.hardtanh, S(Sample((_away(-1, 1)(2, 3),)),
                                       Sample((_away(-2, 0.5)(4),), {"min_val": -2,
                                                                   "max_val": 0.5}))),
    OpInfo("F.hardtanh_", _HARDTANH_[0], S(Sample((_away(-1, 1)(2, 3),))), torch=_HARDTANH_[1]),
    OpInfo("F.relu6", F.relu6, S(Sample((_away(0, 6)(2, 3),)), Sample((_away(0, 6)(),)))),
    OpInfo("F.hardsigmoid", F.hardsigmoid, S(Sample((_away(-3, 3)(2, 3),))), gradgrad=False),
    OpInfo("F.hardswish", F.hardswish, S(Sample((_away(-3, 3)(2, 3),)),
                                         Sample((_away(-3, 3)(5),)))),
    OpInfo("F.mish", F.mish, unary_samples(lambda *s: 3 * N(*s))),
    OpInfo("F.softsign", F.softsign, unary_samples()),
    OpInfo("F.tanhshrink", F.tanhshrink, unary_samples()),
    OpInfo("F.softshrink", F.softshrink, S(Sample((_away(-0.5, 0.5)(2, 3),)),
                                           Sample((_away(-1, 1)(4), 1.0)))),
    OpInfo("F.hardshrink", F.hardshrink, S(Sample((_away(-0.5, 0.5)(2, 3),)),
                                           Sample((_away(-1, 1)(4), 1.0)))),
    OpInfo("F.threshold", F.threshold, S(Sample((_away(0.1, 0.1)(2, 3), 0.1, 2.0)))),
    OpInfo("F.threshold_", _THRESHOLD_[0], S(Sample((_away(0.1, 0.1)(2, 3), 0.1, -2.0))),
           torch=_THRESHOLD_[1], covers=("threshold_",)),
    OpInfo("F.glu", F.glu, S(Sample((N(2, 4),)), Sample((N(4, 3), 0)), Sample((N(2, 2, 2), 1)))),
    OpInfo("F.prelu", F.prelu, S(Sample((N(2, 3), P(3) / 4)), Sample((N(2, 3, 2), P(1) / 4)),
                                 Sample((N(4), P(1) / 4)), Sample((N(), P(1) / 4)))),
    OpInfo("F.rrelu", F.rrelu, S(Sample((N(2, 3),)), Sample((N(4), 0.1, 0.3)))),
    OpInfo("F.rrelu_", _RRELU_[0], S(Sample((N(2, 3), 0.2, 0.4))), torch=_RRELU_[1],
           covers=("rrelu_",)),
    # losses
    OpInfo("F.l1_loss", F.l1_loss, S(
        Sample((N(2, 3), N(2, 3))), Sample((N(3), N(3)), {"reduction": "sum"}),
        Sample((N(2, 3), N(2, 3)), {"reduction": "none"}),
        Sample((N(2, 3), N(2, 3)), {"weight": Const(P(2, 3))}, name="weight"))),
    OpInfo("F.smooth_l1_loss", F.smooth_l1_loss, S(
        Sample((N(2, 3), N(2, 3))), Sample((N(3), N(3)), {"reduction": "sum", "beta": 0.5}),
        Sample((N(2, 3), N(2, 3)), {"reduction": "none", "beta": 2.0}),
        Sample((N(3), N(3)), {"beta": 0.0}, name="beta_0"))),
    OpInfo("F.huber_loss", F.huber_loss, S(
        Sample((N(2, 3), N(2, 3))), Sample((N(3), N(3)), {"reduction": "sum", "delta": 0.5}),
        Sample((N(2, 3), N(2, 3)), {"reduction": "none", "delta": 2.0}),
        Sample((N(2, 3), N(2, 3)), {"weight": Const(P(2, 3))}, name="weight"))),
    OpInfo("F.kl_div", F.kl_div, S(
        Sample((N(2, 3), Const(P(2, 3))), {"reduction": "batchmean"}),
        Sample((N(2, 3), P(2, 3)), {"reduction": "sum"}),
        Sample((N(2, 3), N(2, 3)), {"reduction": "none", "log_target": True}),
        Sample((N(3), N(3)), {"reduction": "batchmean", "log_target": True}))),
    OpInfo("F.binary_cross_entropy", F.binary_cross_entropy, S(
        Sample((P(2, 3, low=0.05) * 0.9, P(2, 3, low=0.0))),
        Sample((P(3, low=0.05) * 0.9, Const(P(3, low=0.0)), Const(P(3))), {"reduction": "sum"}),
        Sample((P(2, 3, low=0.05) * 0.9, P(2, 3, low=0.0)), {"weight": Const(P(3)),
                                                               "reduction": "none"}))),
    OpInfo("F.poisson_nll_loss", F.poisson_nll_loss, S(
        Sample((N(2, 3), P(2, 3) * 2)),
        Sample((P(2, 3), P(2, 3) * 2), {"log_input": False, "full": True, "reduction": "sum"}),
        Sample((N(3), P(3) * 3), {"full": True, "reduction": "none"}))),
    OpInfo("F.gaussian_nll_loss", F.gaussian_nll_loss, S(
        Sample((N(2, 3), N(2, 3), P(2, 3))), Sample((N(2, 3), N(2, 3), P(2)), {"full": True}),
        Sample((N(2, 3), N(2, 3), P(2, 1)), {"reduction": "none"}),
        Sample((N(3), N(3), 0.7), {"reduction": "sum"}, name="float_var"))),
    OpInfo("F.margin_ranking_loss", F.margin_ranking_loss, S(
        Sample((N(4), N(4), _signs(4))),
        Sample((N(2, 3), N(2, 3), _signs(2, 3)), {"margin": 0.3, "reduction": "none"}))),
    OpInfo("F.hinge_embedding_loss", F.hinge_embedding_loss, S(
        Sample((N(4) * 0.5, _signs(4))),
        Sample((N(2, 3), _signs(2, 3)), {"margin": 2.0, "reduction": "sum"}))),
    OpInfo("F.soft_margin_loss", F.soft_margin_loss, S(
        Sample((N(4), _signs(4))), Sample((N(2, 3), _signs(2, 3)), {"reduction": "none"}),
        Sample((N(2, 3), _signs(3)), {"reduction": "sum"}, name="broadcast"))),
    OpInfo("F.cosine_embedding_loss", F.cosine_embedding_loss, S(
        Sample((N(3, 4), N(3, 4), Const(np.array([1.0, -1.0, 1.0])))),
        Sample((N(4), N(4), Const(np.array(-1.0))), {"margin": -0.5, "reduction": "sum"}))),
    OpInfo("F.triplet_margin_loss", F.triplet_margin_loss, S(
        Sample((N(3, 4), N(3, 4), N(3, 4))),
        Sample((N(2, 3), N(2, 3), N(2, 3)), {"swap": True, "p": 1.0, "margin": 2.0,
                                             "reduction": "none"}))),
    OpInfo("F.multi_margin_loss", F.multi_margin_loss, S(
        Sample((N(3, 4), I([1, 0, 3]))),
        Sample((N(3, 4), I([2, 2, 0])), {"p": 2, "margin": 1.5, "weight": Const(P(4)),
                                         "reduction": "none"}),
        Sample((N(4), I(1)), {"reduction": "sum"}, name="unbatched")), gradgrad=False,
           extra={"no_forward_ad": "torch has none (test_nn_more.py checks the error)"}),
    OpInfo("F.multilabel_margin_loss", F.multilabel_margin_loss, S(
        Sample((N(2, 4), I([[1, 3, -1, 0], [0, 2, 3, -1]]))),
        Sample((N(2, 3), I([[2, -1, 1], [-1, 0, 0]])), {"reduction": "none"}),
        Sample((N(4), I([3, 1, -1, 2])), {"reduction": "sum"}, name="unbatched")),
           gradgrad=False,
           extra={"no_forward_ad": "torch has none (test_nn_more.py checks the error)"}),
    OpInfo("F.multilabel_soft_margin_loss", F.multilabel_soft_margin_loss, S(
        Sample((N(2, 3), Const(P(2, 3, low=0.0)))),
        Sample((N(2, 3), P(2, 3, low=0.0), Const(P(3))), {"reduction": "none"}))),
    OpInfo("F.cosine_similarity", F.cosine_similarity, S(
        Sample((N(3, 4), N(3, 4))), Sample((N(2, 3), N(3)), {"dim": -1}),
        Sample((N(2, 3), N(2, 3), 0), name="dim_0"))),
    OpInfo("F.pairwise_distance", F.pairwise_distance, S(
        Sample((N(3, 4), N(3, 4))), Sample((N(2, 3), N(3)), {"p": 1.0, "keepdim": True}),
        Sample((N(4), N(4)), {"p": 3.0}))),
]
_rng = _table_rng

# lane nnpool: pooling, normalization, convolution variants, attention, resampling
# (gradkit/ops/pooling.py, pooling_avg.py, conv_more.py, normalization.py, attention.py,
# interpolate.py), drawing from their own generator so the rows above keep their values
_table_rng, _rng = _rng, np.random.default_rng(1516)
_ATTEND = B([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
OPS += [
    OpInfo("conv1d", F.conv1d, S(
        Sample((N(1, 2, 5), N(3, 2, 2), N(3))),
        Sample((N(2, 4, 5), N(4, 2, 3)), {"stride": 2, "padding": 1, "groups": 2}),
        Sample((N(2, 5), N(2, 2, 2)), {"dilation": 2, "padding": "same"}, name="unbatched"),
        Sample((Z(1, 2, 4), Z(2, 2, 2), Z(2)), name="complex"))),
    OpInfo("conv3d", F.conv3d, S(
        Sample((N(1, 2, 3, 3, 2), N(2, 2, 2, 2, 1), N(2))),
        Sample((N(1, 1, 3, 3, 3), N(1, 1, 2, 2, 2)), {"stride": 2, "padding": 1}))),
    OpInfo("conv_transpose1d", F.conv_transpose1d, S(
        Sample((N(1, 2, 3), N(2, 3, 2), N(3))),
        Sample((N(1, 4, 3), N(4, 1, 3)),
               {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
        Sample((N(2, 3), N(2, 2, 2)), {"dilation": 2}, name="unbatched"),
        Sample((Z(1, 2, 3), Z(2, 2, 2)), {"stride": 2}, name="complex"))),
    OpInfo("conv_transpose2d", F.conv_transpose2d, S(
        Sample((N(1, 2, 2, 3), N(2, 2, 2, 2), N(2))),
        Sample((N(1, 2, 2, 2), N(2, 1, 3, 2)), {"stride": (2, 1), "padding": (1, 0),
                                                 "output_padding": (1, 0), "dilation": (1, 2)}))),
    OpInfo("avg_pool1d", F.avg_pool1d, S(
        Sample((N(1, 2, 5), 2)),
        Sample((N(2, 5), 3), {"stride": 2, "padding": 1, "ceil_mode": True,
                              "count_include_pad": False}, name="unbatched"))),
    OpInfo("avg_pool2d", F.avg_pool2d, S(
        Sample((N(1, 2, 4, 4), 2)),
        Sample((N(1, 1, 5, 4), 3), {"stride": 2, "padding": 1, "ceil_mode": True}),
        Sample((N(1, 1, 4, 5), (2, 3)), {"padding": 1, "count_include_pad": False}),
        Sample((N(1, 1, 4, 4), 2), {"divisor_override": 3}))),
    OpInfo("avg_pool3d", F.avg_pool3d, S(
        Sample((N(1, 1, 3, 3, 4), 2), {"stride": (1, 2, 2), "padding": (1, 0, 1),
                                       "ceil_mode": True, "count_include_pad": False}),)),
    OpInfo("max_pool1d", F.max_pool1d, S(
        Sample((Distinct(1, 2, 6), 2)),
        Sample((Distinct(2, 7), 3), {"stride": 2, "padding": 1, "ceil_mode": True},
               name="unbatched"),
        Sample((Distinct(1, 2, 7), 2), {"dilation": 2, "return_indices": True},
               name="indices"))),
    OpInfo("max_pool2d_indices", lambda x, k, **kw: F.max_pool2d(x, k, return_indices=True,
                                                                  **kw),
           S(Sample((Distinct(1, 2, 4, 5), 2), {"stride": 1, "padding": 1, "dilation": 2},
                    name="dilated_padded")),
           torch=lambda x, k, **kw: _torch("nn.functional.max_pool2d")(x, k, return_indices=True,
                                                                       **kw)),
    OpInfo("max_pool3d", F.max_pool3d, S(
        Sample((Distinct(1, 1, 3, 4, 4), 2)),
        Sample((Distinct(1, 2, 3, 4, 3), (2, 1, 2)),
               {"padding": (1, 0, 1), "dilation": (1, 2, 1), "return_indices": True}))),
    OpInfo("adaptive_avg_pool1d", F.adaptive_avg_pool1d, S(Sample((N(1, 2, 7), 3)),)),
    OpInfo("adaptive_avg_pool2d", F.adaptive_avg_pool2d, S(
        Sample((N(1, 2, 5, 4), (3, 2))), Sample((N(2, 5, 4), (2, None)), name="unbatched"))),
    OpInfo("adaptive_avg_pool3d", F.adaptive_avg_pool3d, S(Sample((N(1, 1, 3, 4, 5), (2, 3, 2))),)),
    OpInfo("adaptive_max_pool1d", F.adaptive_max_pool1d, S(
        Sample((Distinct(1, 2, 7), 3)), Sample((Distinct(2, 7), 4, True), name="indices"))),
    OpInfo("adaptive_max_pool2d", F.adaptive_max_pool2d, S(
        Sample((Distinct(1, 2, 5, 4), (3, 2))),
        Sample((Distinct(1, 5, 4), 2, True), name="unbatched_indices"))),
    OpInfo("lp_pool1d", F.lp_pool1d, S(Sample((N(1, 2, 6), 2, 2)),
                                       Sample((P(1, 2, 7), 3.0, 3, 2, True)))),
    OpInfo("lp_pool2d", F.lp_pool2d, S(Sample((N(1, 2, 4, 4), 2, 2)),
                                       Sample((P(1, 1, 5, 4), 1.5, (2, 3), 2)))),
    OpInfo("batch_norm", F.batch_norm, S(
        Sample((N(3, 2), Const(N(2)), Const(P(2)), N(2), N(2)), {"training": True}),
        Sample((N(2, 3, 2), Const(N(3)), Const(P(3))), {"training": False}, name="eval"),
        Sample((N(2, 2, 2, 2), None, None), {"training": True, "eps": 1e-3}, name="no_stats"))),
    OpInfo("instance_norm", F.instance_norm, S(
        Sample((N(2, 2, 3),)),
        Sample((N(1, 2, 2, 2), Const(N(2)), Const(P(2)), N(2), N(2)), name="stats_affine"))),
    OpInfo("group_norm", F.group_norm, S(Sample((N(2, 4, 2), 2, N(4), N(4))),
                                         Sample((N(1, 2, 3), 1)))),
    OpInfo("rms_norm", F.rms_norm, S(Sample((N(2, 3), (3,), N(3))),
                                     Sample((N(2, 2, 2), (2, 2)), {"eps": 1e-3}))),
    OpInfo("local_response_norm", F.local_response_norm, S(
        Sample((N(1, 3, 2), 2)),
        Sample((N(1, 4, 2, 2), 3), {"alpha": 0.1, "beta": 0.5, "k": 2.0}))),
    OpInfo("scaled_dot_product_attention", F.scaled_dot_product_attention, S(
        Sample((N(2, 3, 2), N(2, 4, 2), N(2, 4, 2))),
        Sample((N(1, 3, 2), N(1, 3, 2), N(1, 3, 2)), {"is_causal": True, "scale": 0.7},
               name="causal"),
        Sample((N(3, 2), N(4, 2), N(4, 2)), {"attn_mask": _ATTEND}, name="bool_mask"),
        Sample((N(3, 2), N(4, 2), N(4, 2)), {"attn_mask": N(3, 4)}, name="float_mask"))),
    OpInfo("pixel_shuffle", F.pixel_shuffle, S(Sample((N(1, 4, 2, 3), 2)),)),
    OpInfo("pixel_unshuffle", F.pixel_unshuffle, S(Sample((N(1, 1, 4, 2), 2)),)),
    OpInfo("unfold", F.unfold, S(
        Sample((N(1, 2, 3, 4), (2, 3)), {"padding": 1, "stride": (2, 1)}),
        Sample((N(2, 3, 3), 2), name="unbatched"))),
    OpInfo("fold", F.fold, S(
        Sample((N(1, 4, 6), (3, 4), 2)),
        Sample((N(1, 8, 4), (3, 5), 2), {"stride": (1, 3), "padding": (0, 0)}, name="strided"))),
    OpInfo("interpolate", F.interpolate, S(
        Sample((N(1, 2, 3), None, 2), name="nearest1d"),
        Sample((N(1, 1, 2, 3), (3, 5)), name="nearest2d"),
        Sample((N(1, 2, 4), 3, None, "linear"), name="linear"),
        Sample((N(1, 1, 3, 2), (4, 5), None, "bilinear", False), name="bilinear"),
        Sample((N(1, 1, 3, 2), None, 1.5, "bilinear", True), name="bilinear_corners"),
        Sample((N(1, 1, 2, 2, 3), None, 2, "trilinear", False), name="trilinear"))),
]
_rng = _table_rng

# lane linalg2: torch.linalg breadth (gradkit/ops/linalg_triangular_solve.py, linalg_lu.py,
# linalg_eig.py, linalg_pinv.py, linalg_ex.py, linalg_functions.py), drawing from their own
# generator so the rows above keep their values
_table_rng, _rng = _rng, np.random.default_rng(1516)


def _zw(*shape):
    """Well-conditioned complex square matrices: Z + 3 I."""
    return Z(*shape) + 3 * np.eye(shape[-1])


def _eig_invariants(lib):
    def eig(a):
        values, vectors = lib.linalg.eig(a)
        return values, vectors * vectors.conj()  # free of each eigenvector's phase
    return eig


def _through_lu_factor(lib, name, **options):
    """``lib.<name>`` applied to the LU factors of its first argument."""
    def call(a, *rest):
        target = lib.lu_unpack if name == "lu_unpack" else getattr(lib.linalg, name)
        return target(*lib.linalg.lu_factor(a), *rest, **options)
    return call


def _lu_pair(name, **options):
    return (_through_lu_factor(gradkit, name, **options),
            lambda *args: _through_lu_factor(__import__("torch"), name, **options)(*args))


def _factors(function):
    """(L, U) of a (P, L, U) result: P has no gradient (tests/test_ops_linalg2.py checks it)."""
    return lambda *args, **kwargs: tuple(function(*args, **kwargs))[1:]


def _first(function):
    return lambda *args, **kwargs: function(*args, **kwargs)[0]


def _hermitian_pinv(lib):
    return lambda a: lib.linalg.pinv(a + a.mH, hermitian=True)


def _cholesky_ex_of_gram(lib):
    def cholesky_ex(a):
        identity = lib.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        return lib.linalg.cholesky_ex(a @ a.mH + identity)
    return cholesky_ex


def _multi_dot(lib):
    return lambda *mats: lib.linalg.multi_dot(list(mats))


OPS += [
    OpInfo("linalg.solve_triangular", G.linalg.solve_triangular, S(
        Sample((W(3, 3), N(3, 2)), {"upper": True}),
        Sample((W(2, 3, 3), N(3, 1)), {"upper": False}, name="broadcast"),
        Sample((W(3, 3), N(2, 3)), {"upper": True, "left": False}, name="right"),
        Sample((N(3, 3), N(3, 2)), {"upper": False, "unitriangular": True}, name="unit"),
        Sample((_zw(2, 2), Z(2, 2)), {"upper": True}, name="complex")),
           torch=_torch("linalg.solve_triangular")),
    OpInfo("linalg.lu_factor", G.linalg.lu_factor, S(
        Sample((N(3, 3),)), Sample((N(2, 3, 2),), name="tall"), Sample((N(2, 3),), name="wide"),
        Sample((Z(2, 2),), name="complex")), torch=_torch("linalg.lu_factor")),
    OpInfo("linalg.lu_factor_ex", G.linalg.lu_factor_ex, S(Sample((N(2, 2, 2),)),),
           torch=_torch("linalg.lu_factor_ex")),
    OpInfo("linalg.lu", _factors(G.linalg.lu), S(
        Sample((N(3, 3),)), Sample((N(3, 2),), name="tall"), Sample((N(2, 2, 3),), name="wide"),
        Sample((Z(2, 2),), name="complex")), torch=_factors(_torch("linalg.lu"))),
    OpInfo("lu_unpack", _factors(_lu_pair("lu_unpack")[0]), S(Sample((N(3, 3),)),
                                                              Sample((N(2, 3),), name="wide")),
           torch=_factors(_lu_pair("lu_unpack")[1])),
    OpInfo("linalg.lu_solve", _lu_pair("lu_solve")[0], S(
        Sample((W(3, 3), N(3, 2))), Sample((W(2, 2, 2), N(2, 1)), name="batched"),
        Sample((_zw(2, 2), Z(2, 2)), name="complex")), torch=_lu_pair("lu_solve")[1]),
    OpInfo("linalg.lu_solve_adjoint_right", _lu_pair("lu_solve", adjoint=True, left=False)[0],
           S(Sample((W(3, 3), N(2, 3))),), torch=_lu_pair("lu_solve", adjoint=True, left=False)[1]),
    OpInfo("linalg.eig", _in_both(_eig_invariants)[0], S(
        Sample((N(3, 3),)), Sample((N(2, 2, 2),), name="batched"),
        Sample((Z(2, 2),), name="complex")), torch=_in_both(_eig_invariants)[1]),
    OpInfo("linalg.eigvals", G.linalg.eigvals, S(Sample((N(3, 3),)), Sample((Z(2, 2),))),
           torch=_torch("linalg.eigvals")),
    OpInfo("linalg.pinv", G.linalg.pinv, S(
        Sample((N(3, 2),)), Sample((N(2, 2, 3),), name="wide"), Sample((Z(2, 2),), name="complex"),
        Sample((N(3, 3),), {"rtol": 0.01, "atol": 0.001}, name="tolerances")),
           torch=_torch("linalg.pinv")),
    OpInfo("linalg.pinv_hermitian", _in_both(_hermitian_pinv)[0], S(Sample((N(3, 3),)),),
           torch=_in_both(_hermitian_pinv)[1]),
    OpInfo("linalg.lstsq", _first(G.linalg.lstsq), S(
        Sample((N(4, 2), N(4, 2))), Sample((N(2, 3, 2), N(2, 3)), name="vectors"),
        Sample((N(2, 3), N(2, 1)), name="wide"), Sample((Z(3, 2), Z(3, 1)), name="complex")),
           torch=_first(_torch("linalg.lstsq"))),
    OpInfo("linalg.matrix_exp", G.linalg.matrix_exp, S(
        Sample((N(3, 3),)), Sample((N(2, 2, 2),), name="batched"),
        Sample((Z(2, 2),), name="complex")), torch=_torch("linalg.matrix_exp")),
    OpInfo("linalg.matrix_power", G.linalg.matrix_power, S(
        Sample((N(3, 3), 3)), Sample((W(2, 2, 2), -2), name="negative"),
        Sample((N(2, 2), 1), name="one")), torch=_torch("linalg.matrix_power")),
    OpInfo("linalg.cond", G.linalg.cond, S(
        Sample((N(3, 3),)), Sample((N(3, 2),), name="rectangular"), Sample((W(3, 3), -2)),
        Sample((W(2, 3, 3), "nuc"), name="nuc"), Sample((Z(2, 2),), name="complex")),
           torch=_torch("linalg.cond")),
    # torch's backward refuses cond for these orders (it fills its inverse in place)
    OpInfo("linalg.cond_inverse_norms", G.linalg.cond, S(
        Sample((W(3, 3), 1)), Sample((W(3, 3), -INF)), Sample((W(2, 2, 2), "fro"))),
           torch=_torch("linalg.cond"), check_torch_grad=False),
    OpInfo("linalg.multi_dot", _multi_dot(G), S(
        Sample((N(3), N(3, 2), N(2, 4), N(4)), name="vectors"), Sample((N(2, 3), N(3, 2))),
        Sample((Z(2, 2), Z(2, 3), Z(3, 1)), name="complex")), torch=_in_both(_multi_dot)[1]),
    OpInfo("linalg.vecdot", G.linalg.vecdot, S(
        Sample((N(2, 3), N(3))), Sample((N(3, 2), N(3, 1)), {"dim": 0}),
        Sample((Z(2, 2), Z(2, 2)), name="complex")), torch=_torch("linalg.vecdot")),
    OpInfo("linalg.vander", G.linalg.vander, S(
        Sample((N(3),)), Sample((N(2, 3),), {"N": 4}), Sample((Z(2),), name="complex")),
           torch=_torch("linalg.vander")),
    OpInfo("linalg.tensorinv", G.linalg.tensorinv, S(
        Sample((W(6, 6).reshape(2, 3, 6),)), Sample((W(4, 4).reshape(4, 2, 2), 1), name="ind1")),
           torch=_torch("linalg.tensorinv")),
    OpInfo("linalg.tensorsolve", G.linalg.tensorsolve, S(
        Sample((W(6, 6).reshape(2, 3, 6), N(2, 3))),
        Sample((W(6, 6).reshape(2, 3, 6).transpose(2, 0, 1), N(2, 3)), {"dims": (0,)},
               name="dims")),
           torch=_torch("linalg.tensorsolve")),
    OpInfo("linalg.diagonal", G.linalg.diagonal, S(
        Sample((N(2, 3, 4),)), Sample((N(2, 3, 4),), {"offset": 1, "dim1": 0, "dim2": 2})),
           torch=_torch("linalg.diagonal")),
    OpInfo("linalg.matmul", G.linalg.matmul, S(Sample((N(2, 3), N(3))),),
           torch=_torch("linalg.matmul")),
    OpInfo("linalg.householder_product", G.linalg.householder_product, S(
        Sample((N(4, 3), N(2))), Sample((N(2, 3, 3), N(2, 3)), name="batched"),
        Sample((Z(3, 2), Z(2)), name="complex")), torch=_torch("linalg.householder_product")),
    OpInfo("orgqr", G.orgqr, S(Sample((N(4, 3), N(2))), Sample((Z(3, 2), Z(2)), name="complex")),
           torch=_torch("orgqr")),
    OpInfo("linalg.inv_ex", G.linalg.inv_ex, S(Sample((W(2, 3, 3),)),),
           torch=_torch("linalg.inv_ex")),
    OpInfo("linalg.cholesky_ex", _in_both(_cholesky_ex_of_gram)[0], S(Sample((N(2, 2, 2),)),),
           torch=_in_both(_cholesky_ex_of_gram)[1]),
    OpInfo("linalg.solve_ex", G.linalg.solve_ex, S(Sample((W(2, 3, 3), N(2, 3))),),
           torch=_torch("linalg.solve_ex")),
]
_rng = _table_rng

# lane fft: torch.fft's transforms (gradkit/ops/fft_primitives.py, fft_transforms.py,
# fft_helpers.py), drawing from their own generator so the rows above keep their values
_table_rng, _rng = _rng, np.random.default_rng(1515_15)


def _fft(name: str, *samples: Sample) -> OpInfo:
    """The row of gradkit.fft.<name>, compared with torch.fft.<name>."""
    return OpInfo(f"fft.{name}", getattr(G.fft, name), S(*samples), torch=_torch(f"fft.{name}"))


OPS += [
    _fft("fft", Sample((N(4),)),
         Sample((Z(2, 3),), {"n": 4, "norm": "ortho"}, name="complex_padded"),
         Sample((N(3, 2),), {"n": 2, "dim": 0, "norm": "forward"}, name="cropped")),
    _fft("ifft", Sample((Z(2, 3),)), Sample((N(3),), {"n": 5}, name="real_padded")),
    _fft("rfft", Sample((N(2, 4),)), Sample((N(5),), {"norm": "ortho"}, name="odd"),
         Sample((N(3, 2),), {"n": 5, "dim": 0, "norm": "forward"}, name="padded")),
    _fft("irfft", Sample((Z(2, 3),)), Sample((Z(3),), {"n": 5, "norm": "ortho"}, name="odd"),
         Sample((Z(4, 2),), {"n": 3, "dim": 0}, name="cropped"), Sample((N(3),), name="real")),
    _fft("hfft", Sample((Z(2, 3),)),
         Sample((Z(3),), {"n": 7, "norm": "forward"}, name="padded")),
    _fft("ihfft", Sample((N(2, 4),)),
         Sample((N(5),), {"n": 3, "norm": "ortho"}, name="cropped")),
    _fft("fftn", Sample((Z(2, 3),)),
         Sample((N(2, 3),), {"s": (3, 2), "norm": "ortho"}, name="real"),
         Sample((Z(2, 1, 2),), {"dim": (0, 2)}, name="dims")),
    _fft("ifftn", Sample((Z(2, 3),), {"s": (3,), "dim": (0,)}), Sample((N(2, 2),), name="real")),
    _fft("rfftn", Sample((N(2, 4),)),
         Sample((N(3, 2),), {"s": (2, 3), "norm": "forward"}, name="s")),
    _fft("ihfftn", Sample((N(2, 4),)),
         Sample((N(3, 3),), {"dim": 0, "norm": "ortho"}, name="one_dim")),
    _fft("irfftn", Sample((Z(2, 3),)),
         Sample((Z(3, 2),), {"s": (2, 3), "norm": "ortho"}, name="odd")),
    _fft("hfftn", Sample((Z(2, 3),)),
         Sample((Z(2, 2),), {"dim": 0, "norm": "forward"}, name="one_dim")),
    _fft("fft2", Sample((N(2, 3),))),
    _fft("ifft2", Sample((Z(2, 2),), {"norm": "ortho"})),
    _fft("rfft2", Sample((N(2, 3),))),
    _fft("irfft2", Sample((Z(2, 3),), {"s": (2, 3)})),
    _fft("hfft2", Sample((Z(2, 2),))),
    _fft("ihfft2", Sample((N(2, 3),))),
    _fft("fftshift", Sample((N(2, 3),)), Sample((Z(3),), {"dim": 0})),
    _fft("ifftshift", Sample((N(3, 2),), {"dim": (1,)})),
]
_rng = _table_rng

# lane rnn: nn.functional's bilinear, embedding_bag and multi_head_attention_forward (composed
# from other ops in gradkit/nn/functional_bags.py and functional_attention.py)
_table_rng, _rng = _rng, np.random.default_rng(1517)

def _seeded(function):
    """``function`` drawing the same mask on every call (a fixed seed first), so finite
    differences see one function; torch's masks differ, so these rows have no torch twin."""
    def run(*args, **kwargs):
        gradkit.manual_seed(7)
        return function(*args, **kwargs)
    return run


OPS += [
    OpInfo("dropout1d", _seeded(F.dropout1d), S(
        Sample((N(2, 3, 2), 0.5, True)), Sample((N(3, 2), 0.4, True), name="unbatched")),
           torch=None),
    OpInfo("dropout2d", _seeded(F.dropout2d), S(Sample((N(2, 3, 2, 2), 0.5, True)),),
           torch=None),
    OpInfo("dropout3d", _seeded(F.dropout3d), S(Sample((N(2, 3, 1, 2, 2), 0.5, True)),),
           torch=None),
    OpInfo("alpha_dropout", _seeded(F.alpha_dropout), S(Sample((N(2, 3), 0.5, True)),),
           torch=None),
    OpInfo("feature_alpha_dropout", _seeded(F.feature_alpha_dropout), S(
        Sample((N(2, 3, 2), 0.5, True)),), torch=None),
    OpInfo("bilinear", F.bilinear, S(
        Sample((N(2, 3), N(2, 4), N(5, 3, 4), N(5))),
        Sample((N(2, 2, 3), N(2, 2, 2), N(4, 3, 2)), name="no_bias_3d"))),
    OpInfo("embedding_bag", F.embedding_bag, S(
        Sample((I([1, 2, 4, 5, 4, 3]), N(6, 3), I([0, 2, 2, 5])), name="mean_empty_bag"),
        Sample((I([[1, 2, 4], [4, 3, 0]]), N(6, 3)), {"mode": "sum"}, name="sum_2d"),
        Sample((I([1, 2, 4, 5]), N(6, 3), I([0, 1])),
               {"mode": "sum", "per_sample_weights": N(4)}, name="per_sample_weights"),
        Sample((I([1, 2, 4, 5]), Distinct(6, 3), I([0, 1, 4])),
               {"mode": "max", "include_last_offset": True, "padding_idx": 2}, name="max")),
        extra={"no_forward_ad": "torch has none (test_found_twentyfourth_scanpool.py checks "
                                "the error)"}),
    OpInfo("channel_shuffle", F.channel_shuffle, S(
        Sample((N(2, 6, 2), 3)), Sample((N(1, 4, 2, 1), 2), name="4d"))),
    OpInfo("multi_head_attention_forward", F.multi_head_attention_forward, S(
        Sample((N(3, 2, 4), N(2, 2, 4), N(2, 2, 4), 4, 2, U(12, 4), N(12), None, None, False,
                0.0, U(4, 4), N(4)), {"training": False}),
        Sample((N(3, 4), N(2, 4), N(2, 4), 4, 1, U(12, 4), None, N(1, 1, 4), N(1, 1, 4), True,
                0.0, U(4, 4), None), {"average_attn_weights": False, "attn_mask": N(3, 2)},
               name="unbatched_bias_kv_zero_attn"))),
]
_rng = _table_rng
# lane special: torch.special's differentiable ops (the Bessel and Airy functions, which torch
# does not differentiate, are checked in tests/test_special.py)
# torch has no forward formula for zeta and the incomplete gamma functions (either input)
_NO_FORWARD_AD = {"no_forward_ad": "torch has none (test_found_twentythird_scanfwd.py checks "
                                   "the error)"}
_SPECIAL_TORCH = {name: _torch(f"special.{name}") for name in (
    "erfcx", "entr", "ndtr", "ndtri", "log_ndtr", "i0e", "i1", "i1e", "xlog1py", "zeta",
    "gammainc", "gammaincc")}
OPS += [
    OpInfo("special.erfcx", gradkit.special.erfcx, lambda: unary_samples()() + [
        Sample((np.array([-7.0, -0.3, 0.0, 12.0, 60.0]),), name="branches")],
           torch=_SPECIAL_TORCH["erfcx"]),
    OpInfo("special.entr", gradkit.special.entr, unary_samples(P), torch=_SPECIAL_TORCH["entr"]),
    OpInfo("special.ndtr", gradkit.special.ndtr, unary_samples(), torch=_SPECIAL_TORCH["ndtr"]),
    OpInfo("special.ndtri", gradkit.special.ndtri, lambda: unary_samples(
        lambda *s: P(*s, low=0.05) * 0.85)() + [
        Sample((np.array([1e-3, 0.1, 0.5, 0.95, 0.999]),), name="tails")],
           torch=_SPECIAL_TORCH["ndtri"]),
    OpInfo("special.log_ndtr", gradkit.special.log_ndtr, lambda: unary_samples()() + [
        Sample((np.array([-12.0, -1.5, 0.5, 6.0]),), name="tails")],
           torch=_SPECIAL_TORCH["log_ndtr"]),
    OpInfo("special.i0e", gradkit.special.i0e, lambda: unary_samples()() + [
        Sample((np.array([-9.5, -0.5, 8.5, 20.0]),), name="both_ranges")],
           torch=_SPECIAL_TORCH["i0e"]),
    OpInfo("special.i1", gradkit.special.i1, lambda: unary_samples()() + [
        Sample((np.array([-9.5, -0.5, 8.5, 20.0]),), name="both_ranges")],
           torch=_SPECIAL_TORCH["i1"]),
    OpInfo("special.i1e", gradkit.special.i1e, lambda: unary_samples()() + [
        Sample((np.array([-9.5, -0.5, 8.5, 20.0]),), name="both_ranges")],
           torch=_SPECIAL_TORCH["i1e"]),
    OpInfo("special.xlog1py", gradkit.special.xlog1py, lambda: binary_samples(make_y=P)() + [
        Sample((1.5, P(2, 2)), name="scalar_x")],
           torch=_SPECIAL_TORCH["xlog1py"]),
    # no derivative in x (torch's, too): x is a constant
    OpInfo("special.zeta", gradkit.special.zeta, S(
        Sample((Const(P(2, 3) + 1.5), P(2, 3))), Sample((Const(P(3) + 2), P(2, 1)),
                                                         name="broadcast"),
        Sample((3.0, P(4)), name="scalar_x")),
           torch=_SPECIAL_TORCH["zeta"], extra=_NO_FORWARD_AD),
    # no derivative in a (torch's, too): a is a constant; x on every branch of the kernel
    *(OpInfo(f"special.{name}", getattr(gradkit.special, name), S(
        Sample((Const(P(2, 3) + 1), P(2, 3))),
        Sample((Const(np.array([0.5, 3.0, 25.0, 250.0])), np.array([0.3, 4.0, 27.0, 255.0])),
               name="branches")), torch=_SPECIAL_TORCH[name], extra=_NO_FORWARD_AD)
      for name in ("gammainc", "gammaincc")),
]

# lane random: spatial transformers, unpooling, triplet loss with a distance function, and
# gumbel_softmax drawn from a reseeded generator (gradkit/ops/sampling_grid.py, unpooling.py,
# losses_margin.py, random_sampling.py), from their own generator so earlier rows keep values
_table_rng, _rng = _rng, np.random.default_rng(1717)


def _grid(*shape):
    """Sampling points in (-1.3, 1.3): inside the image and past its border."""
    return _rng.uniform(-1.3, 1.3, shape)


def _seeded_gumbel_softmax(logits, **kwargs):
    gradkit.manual_seed(11)  # the same noise on every call: finite differences see one function
    return F.gumbel_softmax(logits, **kwargs)


def _ctc_of_logits(lib):
    return lambda logits, *args, **kwargs: lib.nn.functional.ctc_loss(
        logits.log_softmax(2), *args, **kwargs)


_GRID_SAMPLES = [Sample((N(2, 2, 3, 4), _grid(2, 2, 3, 2)), {"align_corners": False})] + [
    Sample((N(1, 2, 3, 3), _grid(1, 3, 2, 2)),
           {"mode": mode, "padding_mode": padding, "align_corners": align},
           name=f"{mode}_{padding}_{align}")
    for mode in ("bilinear", "nearest") for padding in ("zeros", "border", "reflection")
    for align in (False, True)]
OPS += [
    OpInfo("F.affine_grid", F.affine_grid, S(
        Sample((N(2, 2, 3), (2, 1, 3, 4)), {"align_corners": False}),
        Sample((N(1, 2, 3), (1, 3, 2, 1)), {"align_corners": True}, name="unit_width"),
        Sample((N(2, 3, 4), (2, 1, 2, 3, 2)), {"align_corners": False}, name="3d"))),
    OpInfo("F.grid_sample", F.grid_sample, S(*_GRID_SAMPLES), extra={
        "no_forward_ad": "torch has none (test_found_twentyfourth_scanpool.py checks the error)"}),
    OpInfo("F.max_unpool2d", F.max_unpool2d, S(
        Sample((N(1, 2, 2, 2), I([[[[0, 3], [9, 14]], [[5, 2], [8, 15]]]]), 2)),
        Sample((N(2, 2, 2), I([[[1, 3], [8, 15]], [[0, 7], [12, 18]]]), 2),
               {"output_size": (4, 5)}, name="unbatched_sized"),
        Sample((N(1, 1, 2, 2), I([[[[0, 2], [6, 8]]]]), 3), {"stride": 2, "padding": 1},
               name="strided"))),
    OpInfo("F.max_unpool1d", F.max_unpool1d, S(
        Sample((N(1, 2, 3), I([[[0, 3, 5], [1, 2, 4]]]), 2)),
        Sample((N(2, 3), I([[1, 2, 5], [0, 3, 4]]), 2), {"output_size": [6]},
               name="unbatched"))),
    OpInfo("F.triplet_margin_with_distance_loss", F.triplet_margin_with_distance_loss, S(
        Sample((N(3, 4), N(3, 4), N(3, 4))),
        Sample((N(2, 3), N(2, 3), N(2, 3)), {"swap": True, "margin": 2.0, "reduction": "none"}),
        Sample((N(4), N(4), N(4)), {"reduction": "sum"}, name="1d"))),
    OpInfo("F.gumbel_softmax", _seeded_gumbel_softmax, S(
        Sample((N(3, 4),), {"tau": 0.7}), Sample((N(2, 3),), {"dim": 0}, name="dim0")),
           torch=None),  # hard=True is straight-through: not its own derivative (test_nn_sampling)
    # torch's ctc backward is the derivative w.r.t. the logits behind a log_softmax: checked so
    OpInfo("F.ctc_loss", _in_both(_ctc_of_logits)[0], S(
        Sample((N(5, 2, 4), I([[1, 2, 2], [3, 1, 0]]), I([5, 4]), I([3, 2]))),
        Sample((N(4, 3, 3), I([1, 2, 2, 1, 2]), I([4, 3, 4]), I([2, 1, 2])),
               {"reduction": "none", "blank": 0}, name="concatenated"),
        Sample((N(4, 2, 3), I([[1, 1, 1], [2, 1, 0]]), I([3, 4]), I([3, 2])),
               {"reduction": "sum", "zero_infinity": True}, name="zero_infinity")),
           torch=_in_both(_ctc_of_logits)[1], gradgrad=False,
           extra={"no_forward_ad": "torch has none (test_nn_sampling.py checks the error)"}),
]
_rng = _table_rng

# lane legacy: torch's top-level linear algebra (gradkit/ops/linalg_legacy.py,
# linalg_cholesky_solve.py, linalg_householder.py's geqrf/orgqr/ormqr), the deprecated norms
# and pdist, from their own generator so the rows above keep their values
_table_rng, _rng = _rng, np.random.default_rng(1918)


def _legacy_svd_invariants(some):
    """S and U_k V_k^H of torch.svd (each singular pair's sign/phase is free)."""
    def make(lib):
        def svd(a):
            u, s, v = lib.svd(a, some=some)
            k = s.shape[-1]
            return s, u[..., :k] @ v[..., :k].mH
        return svd
    return _in_both(make)


def _on_triangle(name, upper, **options):
    """``lib.<name>(*rest, factor)`` with only the factor's read triangle as input: torch's
    gradient treats the factor as full (its other triangle never reaches the value)."""
    def make(lib):
        def call(*args):
            *rest, factor = args
            factor = factor.triu() if upper else factor.tril()
            return getattr(lib, name)(*rest, factor, upper=upper, **options)
        return call
    return _in_both(make)


def _on_real_diagonal(name):
    """``lib.<name>(factor)`` of the lower triangle with its diagonal's imaginary part dropped:
    LAPACK's potri reads the diagonal as real, so the op is not differentiable along it (torch's
    own gradcheck fails there); the rest of a complex factor is."""
    def make(lib):
        def call(factor):
            diagonal = factor.diagonal(0, -2, -1)
            real = lib.diag_embed(diagonal.real.to(factor.dtype)) - lib.diag_embed(diagonal)
            return getattr(lib, name)(factor.tril() + real)
        return call
    return _in_both(make)


def _complex_factor(n):
    """A complex Cholesky factor: real positive diagonal (LAPACK's potri reads it as real)."""
    z = Z(n, n)
    z[np.arange(n), np.arange(n)] = 2 + P(n)
    return z


def _legacy_cholesky(upper):
    def make(lib):
        def cholesky(a):
            identity = lib.eye(a.shape[-1], dtype=a.dtype, device=a.device)
            return lib.cholesky(a @ a.mH + identity, upper=upper)
        return cholesky
    return _in_both(make)


def _legacy_lu(lib):
    return lambda a, **options: tuple(lib.lu(a, **options))


def _legacy_lu_solve(lib):
    return lambda b, a: lib.lu_solve(b, *lib.linalg.lu_factor(a))


def _tuple_of(lib, name):
    return lambda *args, **kwargs: tuple(getattr(lib, name)(*args, **kwargs))


OPS += [
    OpInfo("svd", _legacy_svd_invariants(True)[0], S(
        Sample((N(3, 2),)), Sample((N(2, 2, 3),), name="batched_wide"),
        Sample((Z(3, 2),), name="complex")), torch=_legacy_svd_invariants(True)[1]),
    OpInfo("svd_some_false", _legacy_svd_invariants(False)[0], S(
        Sample((N(4, 2),)), Sample((N(2, 3),), name="wide")),
           torch=_legacy_svd_invariants(False)[1]),
    # U and V are zeros without a graph (tests/test_legacy_linalg.py): S is the output here
    OpInfo("svd_no_uv", _in_both(lambda lib: lambda *a, **k: lib.svd(*a, **k)[1])[0], S(
        Sample((N(3, 2),), {"compute_uv": False}),
        Sample((N(2, 2, 3),), {"some": False, "compute_uv": False}, name="batched")),
           torch=_in_both(lambda lib: lambda *a, **k: lib.svd(*a, **k)[1])[1]),
    OpInfo("qr", _in_both(lambda lib: _tuple_of(lib, "qr"))[0], S(
        Sample((N(3, 2),)), Sample((N(3, 3), False), name="complete"),
        Sample((N(2, 2, 3),), name="wide"), Sample((Z(3, 2),), name="complex")),
           torch=_in_both(lambda lib: _tuple_of(lib, "qr"))[1]),
    OpInfo("cholesky", _legacy_cholesky(False)[0], S(
        Sample((N(3, 3),)), Sample((Z(2, 2, 2),), name="complex")),
           torch=_legacy_cholesky(False)[1]),
    OpInfo("cholesky_upper", _legacy_cholesky(True)[0], S(Sample((N(3, 3),)),),
           torch=_legacy_cholesky(True)[1]),
    OpInfo("cholesky_solve", _on_triangle("cholesky_solve", False)[0], S(
        Sample((N(3, 2), W(3, 3))), Sample((N(2, 3, 1), W(1, 3, 3)), name="broadcast"),
        Sample((Z(2, 2), _zw(2, 2)), name="complex")),
           torch=_on_triangle("cholesky_solve", False)[1]),
    OpInfo("cholesky_solve_upper", _on_triangle("cholesky_solve", True)[0], S(
        Sample((N(3, 2), W(3, 3))), Sample((Z(2, 1), _zw(2, 2)), name="complex")),
           torch=_on_triangle("cholesky_solve", True)[1]),
    OpInfo("cholesky_inverse", _on_triangle("cholesky_inverse", False)[0], S(
        Sample((W(3, 3),)), Sample((W(2, 2, 2),), name="batched")),
           torch=_on_triangle("cholesky_inverse", False)[1]),
    OpInfo("cholesky_inverse_complex", _on_real_diagonal("cholesky_inverse")[0], S(
        Sample((_complex_factor(2),)),), torch=_on_real_diagonal("cholesky_inverse")[1],
           covers=("cholesky_inverse",)),
    OpInfo("cholesky_inverse_upper", _on_triangle("cholesky_inverse", True)[0], S(
        Sample((W(3, 3),)),), torch=_on_triangle("cholesky_inverse", True)[1]),
    OpInfo("triangular_solve", _in_both(lambda lib: _tuple_of(lib, "triangular_solve"))[0], S(
        Sample((N(3, 2), W(3, 3))), Sample((N(3, 1), W(3, 3), False), name="lower"),
        Sample((N(2, 3, 2), W(3, 3)), {"transpose": True}, name="transpose_broadcast"),
        Sample((N(3, 2), N(3, 3)), {"upper": False, "unitriangular": True}, name="unit"),
        Sample((Z(2, 2), _zw(2, 2)), {"transpose": True}, name="complex")),
           torch=_in_both(lambda lib: _tuple_of(lib, "triangular_solve"))[1]),
    OpInfo("lu", _in_both(_legacy_lu)[0], S(
        Sample((N(3, 3),)), Sample((N(2, 3, 2),), {"get_infos": True}, name="infos")),
           torch=_in_both(_legacy_lu)[1]),
    OpInfo("lu_solve", _in_both(_legacy_lu_solve)[0], S(
        Sample((N(3, 2), W(3, 3))), Sample((Z(2, 1), _zw(2, 2)), name="complex")),
           torch=_in_both(_legacy_lu_solve)[1]),
    OpInfo("pinverse", G.pinverse, S(
        Sample((N(3, 2),)), Sample((N(2, 2, 3), 1e-3), name="rcond"),
        Sample((Z(2, 2),), name="complex"))),
    OpInfo("ormqr", G.ormqr, S(
        Sample((N(4, 3), N(3), N(4, 2))), Sample((N(4, 3), N(3), N(2, 4), False, True),
                                                 name="right_transposed"),
        Sample((N(2, 3, 3), N(2, 3), N(2, 3, 1)), {"transpose": True}, name="batched"),
        Sample((N(3, 4), N(3), N(3, 2)), name="wide"),
        Sample((Z(3, 2), Z(2), Z(3, 2)), {"transpose": True}, name="complex"))),
    OpInfo("nuclear_norm", G.nuclear_norm, S(
        Sample((N(3, 2),)), Sample((N(3, 2), True), name="keepdim"),
        Sample((N(2, 3, 2), (0, 2)), name="dim"), Sample((Z(2, 2),), name="complex"))),
    OpInfo("frobenius_norm", G.frobenius_norm, S(
        Sample((N(2, 3), (0, 1))), Sample((N(2, 3, 2), 1, True), name="one_dim_keepdim"),
        Sample((N(2, 3), ()), name="all"), Sample((Z(2, 2), (0, 1)), name="complex"))),
    OpInfo("pdist", G.pdist, S(
        Sample((N(4, 3),)), Sample((N(3, 2), 1.0), name="p1"), Sample((N(3, 2), 3.0), name="p3"),
        Sample((N(3, 2), 0.5), name="p0.5"), Sample((N(3, 2), INF), name="inf"),
        Sample((N(1, 2),), name="one_row")), covers=("F.pdist",)),
]
NON_DIFFERENTIABLE.update({
    "geqrf": "torch has no derivative: backward refuses it (tests/test_legacy_linalg.py)",
    **{name: "removed from torch: raises its error (tests/test_legacy_linalg.py)"
       for name in ("solve", "lstsq", "eig", "symeig", "matrix_rank")}})
_rng = _table_rng

# lane nsfunc: the 3-d variants of conv_transpose, adaptive max, lp and unpooling
_table_rng, _rng = _rng, np.random.default_rng(1517)
OPS += [
    OpInfo("conv_transpose3d", F.conv_transpose3d, S(
        Sample((N(1, 2, 2, 2, 1), N(2, 2, 2, 1, 2), N(2))),
        Sample((N(1, 2, 2, 1, 2), N(2, 1, 1, 2, 2)),
               {"stride": (2, 1, 2), "padding": (0, 1, 1), "output_padding": (1, 0, 1),
                "groups": 2, "dilation": (1, 2, 1)}),
        Sample((N(1, 2, 1, 2), N(1, 1, 2, 1, 2)), {"stride": 2}, name="unbatched"))),
    OpInfo("adaptive_max_pool3d", F.adaptive_max_pool3d, S(
        Sample((Distinct(1, 2, 3, 4, 3), (2, 3, 2))),
        Sample((Distinct(1, 3, 2, 4), (2, None, 3), True), name="unbatched_indices"))),
    OpInfo("lp_pool3d", F.lp_pool3d, S(
        Sample((N(1, 1, 2, 4, 4), 2, 2)),
        Sample((P(1, 2, 3, 3, 4), 1.5, (2, 1, 3), (1, 2, 1), True), name="ceil"))),
    OpInfo("F.max_unpool3d", F.max_unpool3d, S(
        Sample((N(1, 2, 1, 1, 2), I([[[[[0, 7]]], [[[5, 2]]]]]), 2)),
        Sample((N(2, 1, 2, 1), I([[[[3], [12]]], [[[8], [23]]]]), (1, 2, 3)),
               {"stride": (2, 2, 1), "output_size": (2, 4, 3)}, name="unbatched_sized"))),
]
_rng = _table_rng

# lane elem: the inverse hyperbolic functions; acosh's complex samples keep off its branch cut
# (real z < 1), where the numerical derivative jumps
_table_rng, _rng = _rng, np.random.default_rng(2613)


def _acosh_complex():
    return np.asarray(N(2, 2) + 1j * N(2, 2))


OPS += [
    OpInfo("asinh", G.asinh, S(*unary_samples(complex_=True)()), covers=("arcsinh",)),
    OpInfo("acosh", G.acosh, S(*unary_samples(lambda *s: P(*s, low=1.2))(),
                               Sample((_acosh_complex(),), name="complex")),
           covers=("arccosh",)),
    OpInfo("atanh", G.atanh, S(*unary_samples(U)(), Sample((Z(2, 2) * 0.5,), name="complex")),
           covers=("arctanh",)),
]
_rng = _table_rng

# lane elem: torch's older names of the incomplete gamma functions, and conj_physical
_table_rng, _rng = _rng, np.random.default_rng(2614)
OPS += [
    *(OpInfo(name, getattr(G, name), S(
        Sample((Const(P(2, 3) + 1), P(2, 3))),
        Sample((Const(np.array([0.5, 3.0, 25.0])), np.array([0.3, 4.0, 27.0])),
               name="branches")), extra=_NO_FORWARD_AD) for name in ("igamma", "igammac")),
    OpInfo("conj_physical", G.conj_physical, S(Sample((Z(2, 3),), name="complex"),
                                               Sample((N(3),), name="real"))),
]
_rng = _table_rng

# lane strides: as_strided (overlapping windows included), unfold, the *_copy functions and the
# unsafe splits (gradkit/ops/strided.py, strided_scatter.py, view_copies.py)
_table_rng, _rng = _rng, np.random.default_rng(1515_2)
OPS += [
    OpInfo("as_strided", G.as_strided, S(
        Sample((N(3, 4), (2, 3), (4, 1))), Sample((N(12), (3, 3), (1, 2), 1), name="offset"),
        Sample((N(2, 3), (3, 2), (1, 2)), name="overlap"),
        Sample((N(4), (2, 2), (0, 1)), name="zero_stride"),
        Sample((N(3), (0, 2), (1, 1)), name="empty"), Sample((Z(6), (2, 2), (2, 1)),
                                                            name="complex"))),
    OpInfo("as_strided_copy", G.as_strided_copy, S(
        Sample((N(3, 4), (2, 2), (1, 4), 1)), Sample((N(2, 3), (3, 2), (1, 2)), name="overlap"))),
    # torch's gradient for self is not the derivative (its OpInfo expects test_fn_grad to fail):
    # gradkit's is, and is compared with torch's for src only (tests/test_strides.py)
    OpInfo("as_strided_scatter", G.as_strided_scatter, S(
        Sample((N(2, 3), N(2), (2,), (2,), 1)), Sample((N(4, 4), N(2, 2), (2, 2), (1, 4), 5)),
        Sample((N(3), N(0), (0,), (1,)), name="empty")),
           check_torch_grad=False,
           extra={"why": "torch's as_strided_scatter gradient for self is wrong (torch 2.13)"}),
    OpInfo("unfold_copy", G.unfold_copy, S(
        Sample((N(3, 5), 1, 2, 1)), Sample((N(7), 0, 3, 2)), Sample((N(), 0, 1, 1), name="0d"),
        Sample((N(2, 3), -1, 0, 1), name="size_0"))),
    OpInfo("view_copy", G.view_copy, S(Sample((N(2, 6), (3, 4))), Sample((N(4), (-1, 2))))),
    OpInfo("t_copy", G.t_copy, S(Sample((N(2, 3),)), Sample((N(3),), name="1d"))),
    OpInfo("transpose_copy", G.transpose_copy, S(Sample((N(2, 3, 2), 0, -1)))),
    OpInfo("unsqueeze_copy", G.unsqueeze_copy, S(Sample((N(2, 3), 1)), Sample((N(2), -1)))),
    OpInfo("squeeze_copy", G.squeeze_copy, S(
        Sample((N(2, 1, 3),)), Sample((N(2, 1, 1), 1), name="dim"),
        Sample((N(1, 2, 1), (0, 2)), name="dims"))),
    OpInfo("select_copy", G.select_copy, S(Sample((N(2, 3), 1, -1)), Sample((N(3), 0, 2)))),
    OpInfo("slice_copy", G.slice_copy, S(
        Sample((N(3, 5), 1, 1, 4, 2)), Sample((N(4, 2),), name="defaults"),
        Sample((N(4, 2), -2, -3), name="negative"))),
    OpInfo("diagonal_copy", G.diagonal_copy, S(
        Sample((N(3, 4),)), Sample((N(2, 3, 4), 1, 1, 2), name="offset"))),
    OpInfo("alias_copy", G.alias_copy, S(Sample((N(2, 3),)), Sample((Z(2),), name="complex"))),
    OpInfo("unbind_copy", G.unbind_copy, S(Sample((N(2, 3),)), Sample((N(2, 3), 1)))),
    OpInfo("split_copy", G.split_copy, S(Sample((N(5, 2), 2)), Sample((N(2, 5), 3, 1)))),
    OpInfo("split_with_sizes_copy", G.split_with_sizes_copy, S(
        Sample((N(5, 2), [2, 3])), Sample((N(2, 5), [1, 0, 4], 1)))),
    OpInfo("view_as_real_copy", G.view_as_real_copy, S(Sample((Z(2, 3),)))),
    OpInfo("unsafe_split", G.unsafe_split, S(Sample((N(5, 2), 2)), Sample((N(2, 5), 3, 1)))),
    OpInfo("unsafe_chunk", G.unsafe_chunk, S(Sample((N(5, 2), 2)), Sample((N(2, 3), 3, 1)))),
    OpInfo("unsafe_split_with_sizes", G.unsafe_split_with_sizes, S(
        Sample((N(5, 2), [2, 3])), Sample((N(2, 5), [1, 4], 1)))),
]
NON_DIFFERENTIABLE["detach_copy"] = "a copy whose backward raises, as torch's (test_strides.py)"
NON_DIFFERENTIABLE["view_as_complex_copy"] = "refuses autograd, as torch's (test_strides.py)"
_rng = _table_rng

# lane signal: stft/istft (gradkit/ops/stft.py), drawing from their own generator so the rows
# above keep their values
_table_rng, _rng = _rng, np.random.default_rng(2718)
OPS += [
    OpInfo("stft", G.stft, S(
        Sample((N(12), 4), {"window": N(4), "return_complex": True}),
        Sample((N(2, 9), 4), {"hop_length": 3, "win_length": 3, "window": N(3),
                               "normalized": True, "return_complex": True}, name="batched"),
        Sample((N(10), 4), {"center": False, "onesided": False, "return_complex": False,
                            "window": N(4)}, name="two_sided_real_view"),
        Sample((Z(9), 4), {"pad_mode": "constant", "window": N(4)}, name="complex"),
        Sample((N(9), 4), {"center": False, "align_to_window": True, "win_length": 2,
                           "window": N(2), "return_complex": True}, name="aligned"))),
    OpInfo("istft", G.istft, S(
        Sample((Z(3, 5), 4), {"window": P(4)}),
        Sample((Z(2, 4, 3), 4), {"hop_length": 2, "window": P(4), "onesided": False,
                                 "return_complex": True, "length": 6}, name="two_sided"),
        Sample((Z(3, 4), 4), {"center": False, "normalized": True, "win_length": 3,
                              "hop_length": 1, "window": P(3), "length": 6}, name="short_window"),
        Sample((Z(3, 4), 4), {"center": False, "hop_length": 1, "window": P(4), "length": 9},
               name="padded"))),
    OpInfo("gradient", G.gradient, S(
        Sample((N(3, 4),)),
        Sample((N(3, 4),), {"spacing": [2.0, 0.5], "edge_order": 2}, name="edge_order_2"),
        Sample((N(2, 5),), {"spacing": 1.5, "dim": -1}, name="one_dim"),
        Sample((N(4, 3),), {"spacing": [np.cumsum(P(4)), np.cumsum(P(3))]},
               name="coordinates"),
        Sample((N(2, 4),), {"spacing": [np.cumsum(P(4))], "dim": [1], "edge_order": 2},
               name="coordinates_edge_order_2"),
        Sample((Z(3, 3),), {"dim": 0}, name="complex"))),
    OpInfo("index_reduce", G.index_reduce, S(*[
        Sample((N(3, 2), 0, I([0, 2, 0, 1]), N(4, 2), reduce), {"include_self": include_self},
               name=f"{reduce}_{include_self}")
        for reduce in ("prod", "mean", "amax", "amin") for include_self in (True, False)] + [
        Sample((N(2, 3), -1, I([2, 2]), N(2, 2), "mean"), name="last_dim"),
        Sample((N(), 0, I([0]), N(), "prod"), name="0-d")])),
]
_rng = _table_rng
NON_DIFFERENTIABLE.update({  # lane signal
    "histogram": "counts: torch's backward raises (NotImplemented node; "
                 "tests/test_signal_histograms.py)",
    "histogramdd": "counts: torch's backward raises (NotImplemented node; "
                   "tests/test_signal_histograms.py)",
    "unique_consecutive": "torch has no derivative (its backward raises; "
                          "tests/test_signal_data.py)",
})
# lane rnnfn: fractional max pooling (its windows fixed by _random_samples)
OPS += [
    OpInfo("fractional_max_pool2d", F.fractional_max_pool2d, S(
        Sample((Distinct(2, 2, 7, 6), 2), {"output_size": (3, 4),
                                           "_random_samples": Const(_rng.random((2, 2, 2)))}),
        Sample((Distinct(2, 5, 5), (2, 3)), {"output_ratio": (0.5, 0.5), "return_indices": True,
                                             "_random_samples": Const(_rng.random((1, 2, 2)))},
               name="unbatched_ratio_indices"))),
    OpInfo("fractional_max_pool3d", F.fractional_max_pool3d, S(
        Sample((Distinct(1, 2, 5, 6, 5), (2, 3, 2)),
               {"output_size": (3, 2, 3), "return_indices": True,
                "_random_samples": Const(_rng.random((1, 2, 3)))}),)),
]

# lane misc: torch's remaining top-level names (gradkit/ops/aliases.py, torch_helpers.py)
_table_rng, _rng = _rng, np.random.default_rng(1515_15)
OPS += [
    OpInfo("split_with_sizes", G.split_with_sizes, S(
        Sample((N(5, 2), [2, 3])), Sample((N(2, 5), (1, 0, 4), 1), name="dim_1_empty_piece"))),
    OpInfo("fix", G.fix, S(Sample((N(2, 3) * 3,)))),
    OpInfo("ger", G.ger, S(Sample((N(3), N(2))))),
]
_rng = _table_rng
_table_rng, _rng = _rng, np.random.default_rng(1515_16)
OPS += [  # lane misc
    OpInfo("norm_except_dim", G.norm_except_dim, S(
        Sample((N(3, 4),)), Sample((N(3, 4), 2, 1), name="last_dim"),
        Sample((N(2, 3, 4), 3, 1), name="middle_dim_p3"),
        Sample((N(2, 3), 2, -1), name="all_dims"), Sample((N(2, 3, 2), 1, -2), name="neg_dim"))),
]
_rng = _table_rng
_table_rng, _rng = _rng, np.random.default_rng(1515_17)
OPS += [  # lane misc: segment_reduce (composed: gradients of narrow, the reductions, stack)
    OpInfo("segment_reduce", G.segment_reduce, S(*[
        # an empty segment is NaN or +-inf for mean, max and min without initial: not there
        Sample((Distinct(6, 2), reduce), {"lengths": I(
            [2, 0, 3, 1] if initial is not None or reduce in ("sum", "prod") else [2, 3, 1]),
            "initial": initial}, name=f"{reduce}_{initial}")
        for reduce in ("sum", "mean", "max", "min", "prod") for initial in (None, 0.5)] + [
        Sample((N(5, 2), "sum"), {"offsets": I([0, 2, 5]), "axis": -2}, name="offsets_axis_-2"),
        Sample((N(4), "mean"), {"lengths": I([4])}, name="one_segment")]),
        extra={"no_forward_ad": "torch has none (max and min refuse as torch; sum, mean and "
                                "prod compose, so their tangents exist: docs/numerics.md)"}),
]
_rng = _table_rng

# lane nnlazy: nn.functional's other spellings (gradkit/nn/functional_aliases.py): the pools
# that always return their indices, the deprecated upsample* (their warning is checked in
# tests/test_nn_functional_aliases.py; silenced here)
_table_rng, _rng = _rng, np.random.default_rng(1515_21)


def _quiet(name):
    """F.<name> without its deprecation warning, in both libraries."""
    def make(lib):
        def call(*args, **kwargs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return getattr(lib.nn.functional, name)(*args, **kwargs)
        return call
    return _in_both(make)


def _deprecated_row(name, *samples):
    ours, theirs = _quiet(name)
    return OpInfo(name, ours, S(*samples), torch=theirs)


OPS += [
    OpInfo("max_pool1d_with_indices", F.max_pool1d_with_indices, S(
        Sample((Distinct(1, 2, 7), 3), {"stride": 2, "padding": 1}),
        Sample((Distinct(2, 6), 2, None, 0, 1, False, False), name="return_indices_false"))),
    OpInfo("max_pool2d_with_indices", F.max_pool2d_with_indices, S(
        Sample((Distinct(1, 2, 4, 5), 2), {"ceil_mode": True}),)),
    OpInfo("max_pool3d_with_indices", F.max_pool3d_with_indices, S(
        Sample((Distinct(1, 1, 3, 4, 4), (2, 1, 2)), {"dilation": (1, 2, 1)}),)),
    OpInfo("adaptive_max_pool1d_with_indices", F.adaptive_max_pool1d_with_indices, S(
        Sample((Distinct(1, 2, 7), 3)), Sample((Distinct(2, 5), 2, False), name="unbatched"))),
    OpInfo("adaptive_max_pool2d_with_indices", F.adaptive_max_pool2d_with_indices, S(
        Sample((Distinct(1, 2, 5, 4), (3, None))),)),
    OpInfo("adaptive_max_pool3d_with_indices", F.adaptive_max_pool3d_with_indices, S(
        Sample((Distinct(1, 2, 3, 4, 5), 2)),)),
    OpInfo("fractional_max_pool2d_with_indices", F.fractional_max_pool2d_with_indices, S(
        Sample((Distinct(1, 2, 7, 6), 2), {"output_size": (3, 4),
                                           "_random_samples": Const(_rng.random((1, 2, 2)))}),)),
    OpInfo("fractional_max_pool3d_with_indices", F.fractional_max_pool3d_with_indices, S(
        Sample((Distinct(1, 2, 5, 6, 5), 2), {"output_ratio": 0.5,
                                              "_random_samples": Const(_rng.random((1, 2, 3)))}),
    )),
    _deprecated_row("upsample", Sample((N(1, 2, 3), None, 2), name="nearest"),
                    Sample((N(1, 1, 3, 2), (4, 5), None, "bilinear", False), name="bilinear")),
    _deprecated_row("upsample_nearest", Sample((N(1, 1, 2, 3), (3, 5)))),
    _deprecated_row("upsample_bilinear", Sample((N(1, 1, 3, 2), None, 2))),
]
_rng = _table_rng
NON_DIFFERENTIABLE["F.native_channel_shuffle"] = (
    "torch has no derivative: backward refuses it (NotImplemented node)")

# lane getitem: div's rounding_mode (torch's div.Tensor_mode: zero gradients once rounded)
OPS += [
    OpInfo("div_rounding_mode", G.div, S(
        Sample((N(3, 4), P(3, 4)), {"rounding_mode": "trunc"}, name="trunc"),
        Sample((N(3, 4), P(4)), {"rounding_mode": "floor"}, name="floor"),
        Sample((N(2, 3), 2.5), {"rounding_mode": "floor"}, name="number"),
        Sample((N(2, 3), P(3)), {"rounding_mode": None}, name="true")), torch=_torch("div")),
]

# lane texp16: conv_tbc (torch's time-batch-channel 1-d convolution, one ConvTbcBackward0 node)
OPS += [
    OpInfo("conv_tbc", F.conv_tbc, S(
        Sample((N(5, 2, 3), N(3, 3, 4), N(4), 1)),
        Sample((N(6, 1, 2), N(2, 2, 3), N(3)), name="no pad"),
        Sample((N(6, 2, 2), N(2, 2, 1), N(1), -1), name="negative pad crops"))),
]
