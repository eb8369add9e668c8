"""Norms: ``linalg.vector_norm`` (one op with torch's derivatives), ``linalg.matrix_norm``,
``linalg.norm`` and ``torch.norm`` (compositions, as torch composes them), and the deprecated
``nuclear_norm`` and ``frobenius_norm``."""
from __future__ import annotations

import math
import warnings

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.int_arguments import int_parameters, ints_reader, invalid_combination, reads_as_int
from gradkit.numbers_hooks import chain
from gradkit.number_arguments import (number_parameters, numbers_reader, python_number,
                                      reads_as_number)
from gradkit.ops._op import op
from gradkit.ops.arithmetic import pow
from gradkit.ops.comparison import isnan
from gradkit.ops.complex import conj, real
from gradkit.ops.conversion import astype
from gradkit.ops.piecewise import _modulus, abs, sgn, where, zeros_like
from gradkit.ops.promotion import PY_SCALARS, promote_types
from gradkit.ops.keywords import numpy_keywords
from gradkit.ops.linalg_decompositions import svdvals
from gradkit.ops.methods import tensor_method
from gradkit.ops.reduction import axes, sum, unsqueeze_back
from gradkit.ops.extremes import amax, amin
from gradkit.ops.shape import _normalize_dim, permute, unsqueeze
from gradkit.ops.spaced_values import _GRAIN
from gradkit.ops.unary_helpers import cpp_number, scalar_type_name


def _refuse_complex_order(name: str, ord) -> None:  # noqa: A002 - torch's name
    if isinstance(ord, complex):  # (even one with no imaginary part)
        raise RuntimeError(f"{name}: Expected a non-complex scalar as the order of norm.")


@op(save=("x", "result"), contiguous=True)
def vector_norm(xp, x, ord=2, dim=None, keepdim=False, dtype=None):  # noqa: A002
    """The ``ord``-norm of x over ``dim`` (all dims by default), x seen as a vector."""
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        "str")
    if x.dtype.kind not in "fc":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {scalar_type_name(x)}")
    _refuse_complex_order("linalg.vector_norm", ord)
    if ord in (math.inf, -math.inf) or ord < 0:
        _refuse_empty_extreme(x, ord, dim)
    if dtype is not None:
        check_norm_dtype("linalg.vector_norm", x.dtype, dtype)
        x = x.astype(dtype)
    a = _modulus(xp, x)  # abs's |z|, which the extremes' backward compares with
    # torch: the norm of one element is its |x|, but a 0-d tensor's over a named dim is
    # reduced as any other (sqrt(x²) overflows for 1e300)
    lone_abs = x.ndim or dim is None or dim in ((), [])
    if a.dtype == np.float16:  # torch computes a half norm in float32, rounded once
        return _norm_of_abs(xp, a.astype(np.float32), ord, axes(dim, x.ndim), keepdim,
                            lone_abs).astype(np.float16)
    return _norm_of_abs(xp, a, ord, axes(dim, x.ndim), keepdim, lone_abs)


def _norm_of_abs(xp, a, ord, reduced: tuple, keepdim: bool, lone_abs: bool):  # noqa: A002
    if ord in (math.inf, -math.inf):
        extreme = xp.amax if ord > 0 else xp.amin
        return extreme(a, axis=reduced, keepdims=keepdim)
    if ord == 0:
        return xp.sum(a != 0, axis=reduced, keepdims=keepdim).astype(a.dtype)
    if ord == 1:
        return xp.sum(a, axis=reduced, keepdims=keepdim)
    if ord == 2:
        if lone_abs and all(a.shape[d] == 1 for d in reduced):  # no square to overflow
            return a if keepdim else xp.squeeze(a, axis=reduced)
        return xp.sqrt(xp.sum(a * a, axis=reduced, keepdims=keepdim))
    # torch's NormOps: |x|^p added one element after another in the dtype (NumPy's pairwise
    # sum rounds apart from it), then the sum to the power 1/p, 1/p in the dtype too. The
    # reduced dims are read in memory
    # order, as torch's TensorIterator reads them
    kept = tuple(d for d in range(a.ndim) if d not in reduced)
    in_memory = sorted(sorted(reduced), key=lambda d: -a.strides[d])  # (none negative)
    flat = xp.transpose(a, kept + tuple(in_memory)).reshape(
        [a.shape[d] for d in kept] + [math.prod(a.shape[d] for d in reduced)])
    if flat.shape[-1] == 1 and lone_abs:
        total = flat[..., 0]
    else:
        total = _pow(xp, _in_order(xp, _pow(xp, flat, ord)), a.dtype.type(1) / a.dtype.type(ord))
    if keepdim:
        total = total.reshape([1 if d in reduced else n for d, n in enumerate(a.shape)])
    return total


def _pow(xp, x, exponent):
    """C's pow of each element (torch's std::pow): an exponent array, as NumPy's power takes
    its square/sqrt shortcuts (apart from pow by an ulp now and then) for a scalar one."""
    return xp.power(x, xp.full_like(x, exponent))


def _in_order(xp, terms):
    """The sums of ``terms`` along its last dim, one term after another, as torch's
    binary_kernel_reduce: a single sum of 32768 terms or more (its GRAIN_SIZE) is split among
    its threads in equal chunks, each summed in order, then the chunks' sums in order."""
    n, threads = terms.shape[-1], backend.threads[0]
    if not n:
        return terms.sum(axis=-1)
    if terms.ndim > 1 or n < _GRAIN or threads == 1:
        return xp.cumsum(terms, axis=-1)[..., -1]
    chunk = -(-n // min(threads, -(-n // _GRAIN)))
    return xp.cumsum(xp.stack([xp.cumsum(terms[i:i + chunk])[-1]
                               for i in range(0, n, chunk)]))[-1]


def _type_name(dtype) -> str:
    return scalar_type_name(np.empty(0, np.dtype(getattr(dtype, "np", dtype))))


def check_norm_dtype(name: str, x_dtype: np.dtype, dtype) -> None:
    """torch's check_linalg_norm_dtype: ``dtype=`` is floating or complex as the input, and
    the input converts to it without narrowing."""
    wanted = np.dtype(getattr(dtype, "np", dtype))
    if wanted.kind not in "fc":
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{_type_name(wanted)}")
    kind = "complex" if x_dtype.kind == "c" else "real"
    if (wanted.kind == "c") != (x_dtype.kind == "c"):
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got "
                           f"{_type_name(wanted)}")
    if promote_types(x_dtype, wanted) != wanted:
        raise RuntimeError(f"{name}: the dtype of the input ({_type_name(x_dtype)}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({_type_name(wanted)})")


def _refuse_empty_extreme(x, ord, dim) -> None:  # noqa: A002
    """torch's errors for a max/min (or negative order) norm over an empty dim (it has no
    identity); the dims that are kept may be empty."""
    order = {math.inf: "inf", -math.inf: "-inf"}.get(ord, f"{ord:g}")
    name = f"linalg.vector_norm cannot compute the {order} norm on"
    if dim is None or dim == () or dim == [] or not x.ndim:
        if x.size == 0:
            raise RuntimeError(f"{name} an empty tensor because the operation does not have an "
                               "identity")
        return
    for d in (dim,) if isinstance(dim, int) else dim:
        if x.shape[_normalize_dim(d, x.ndim)] == 0:  # torch's text, its missing space too
            raise RuntimeError(f"{name} the dimension {d}because this dimension is empty and the "
                               "operation does not have an identity")


def _norm_grad(g, x, norm, ord, dim, keepdim):  # noqa: A002
    """The vjp of the norm for a gradient g in keepdim's shape (1 for the slope the jvp
    uses), in torch's norm_backward form: its divisions see a zero norm before the mask
    hides it, so a second derivative there is 0 * inf = NaN, as torch's (which, unlike
    NumPy, does not warn about those divisions); g and the norm are not expanded before
    they divide, so that NaN comes for an empty x too."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _norm_grad_terms(g, x, norm, ord, dim, keepdim)


def _norm_grad_terms(g, x, norm, ord, dim, keepdim):  # noqa: A002
    norm = unsqueeze_back(norm, tuple(x.shape), dim, keepdim)
    if ord == 1:
        return sgn(x) * g
    if ord in (math.inf, -math.inf):
        a = abs(x)
        hit = (a == norm) | isnan(a)  # the elements at the extreme (NaN propagates)
        return sgn(x) * (g / sum(hit, axes(dim, x.ndim), True) * where(hit, 1.0, 0.0))
    zero = norm == 0
    if ord == 2:
        return g * where(zero, 0.0, x / norm)
    if ord < 1:
        return sgn(x) * where(x == 0, 0.0, pow(abs(x), ord - 1)) * g * pow(norm, 1 - ord)
    scaled = sgn(x) * pow(abs(x), ord - 1) if ord < 2 else x * pow(abs(x), ord - 2)
    return scaled * where(zero, 0.0, g / pow(norm, ord - 1))


# the 0-"norm" counts: torch's backward gives no gradient at all (not zeros that a NaN
# upstream would turn into NaN), its jvp zeros
vector_norm.defvjp(lambda g, x, norm, ord, dim, keepdim, dtype: None if ord == 0 else
                   _norm_grad(unsqueeze_back(g, tuple(x.shape), dim, keepdim), x, norm, ord, dim,
                              keepdim))


def _norm_jvp(t, x, norm, ord, dim, keepdim, dtype):  # noqa: A002
    """The slope's inner product with t in torch's norm_jvp order: the elements' sum first, then
    its scale by the norm, masked where the norm is 0 after the product with t (a NaN or inf
    tangent there gives 0; the gradient of the tangent there is 0 / 0 = NaN, as torch's)."""
    if ord == 0:
        return zeros_like(norm)
    reduced = axes(dim, x.ndim)
    with np.errstate(divide="ignore", invalid="ignore"):
        if -math.inf < ord < 1:
            slope = where(x == 0, 0.0, pow(abs(x), ord - 1)) * real(conj(sgn(x)) * t)
            return sum(slope, reduced, keepdim) * pow(norm, 1 - ord)
        if 1 < ord < math.inf:
            power = pow(abs(x), ord - 2)  # below 2, torch zeros its inf at x = 0 first
            power = where(x == 0, 0.0, power) if ord < 2 else power  # times x t, not x times t:
            slope = sum(power * real(conj(x) * t), reduced, keepdim)  # 1e308 * 0 stays 0
            return where(norm == 0, 0.0, slope / pow(norm, ord - 1))
    if ord in (math.inf, -math.inf):  # torch's: sum(sgn(x) t * hit / hits), in norm's dtype
        extreme = unsqueeze_back(norm, tuple(x.shape), dim, keepdim)  # (1.0 / hits: float32)
        hit = astype((abs(x) == extreme) | isnan(x) & isnan(extreme), extreme.dtype)
        return sum(real(sgn(x) * conj(t)) * hit / sum(hit, reduced, True), reduced, keepdim)
    return sum(real(conj(_norm_grad(1.0, x, norm, ord, dim, keepdim)) * t), reduced, keepdim)


vector_norm.defjvp(_norm_jvp)
vector_norm.node_name = "LinalgVectorNormBackward0"
vector_norm.numbers = chain(numbers_reader("linalg_vector_norm", ord=2),
                            ints_reader("linalg_vector_norm", dim=(2, "int[1]?")))
vector_norm.name, vector_norm.profiler_name = "linalg_vector_norm", "gradkit::linalg_vector_norm"


def _matrix_dims(name, x, dim):
    if x.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(dims) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = (_normalize_dim(d, x.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dims[0]}, {dims[1]})")
    return d0, d1


def _max_or_zero(values, dim, keepdim):
    """The largest of these norms (all >= 0), 0 over an empty dim, as torch (amax raises):
    new zeros there, without a graph, as torch's."""
    if values.shape[dim] == 0:
        return sum(values, dim, keepdim).detach()
    return amax(values, dim, keepdim)


def _takes_norm(x, ord=None, dim=None, keepdim=False, *, dtype=None) -> bool:  # noqa: A002
    """Whether torch's signatures of linalg.norm take the arguments (a Number or str ord, an
    int or ints dim, a bool keepdim); matrix_norm's (``_takes_matrix_norm``) no None ord."""
    number = type(python_number(ord)) in PY_SCALARS or isinstance(ord, Tensor) and \
        reads_as_number(ord)
    dims = dim is None or reads_as_int(dim) or isinstance(dim, (tuple, list)) and all(
        reads_as_int(d) for d in dim)
    return (ord is None or number or isinstance(ord, str)) and dims and type(keepdim) is bool


def _takes_matrix_norm(x, ord="fro", *args, **kwargs) -> bool:  # noqa: A002
    return ord is not None and _takes_norm(x, ord, *args, **kwargs)


@numpy_keywords
@number_parameters("linalg_matrix_norm", True, signature=_takes_matrix_norm)
def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):  # noqa: A002
    """The ``ord`` norm ('fro', 'nuc', ±1, ±2, ±inf) of the matrices in dims ``dim`` of x."""
    name = "linalg.matrix_norm"
    _refuse_complex_order(name, ord)
    if ord not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):  # torch checks it first
        raise RuntimeError(f"{name}: Order {ord if isinstance(ord, str) else cpp_number(ord)} not "
                           "supported.")
    if x.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(x)}")
    if ord in ("nuc", 2, -2) and x.dtype.itemsize == 2:  # no half SVD in torch
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{scalar_type_name(x)}")
    d0, d1 = _matrix_dims(name, x, dim)
    if dtype is not None:
        check_norm_dtype(name, np.dtype(x.dtype.np), dtype)
    if ord == "fro":
        return vector_norm(x, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        if dtype is not None:
            x = astype(x, dtype=dtype)
        others = tuple(d for d in range(x.ndim) if d not in (d0, d1))
        values = svdvals(permute(x, others + (d0, d1)))
        out = sum(values, -1) if ord == "nuc" else \
            _max_or_zero(values, -1, False) if ord == 2 else amin(values, -1)
        for d in sorted((d0, d1)) if keepdim else ():
            out = unsqueeze(out, d)
        return out
    summed, extreme = (d0, d1) if ord in (1, -1) else (d1, d0)
    sums = vector_norm(x, 1, summed, keepdim, dtype=dtype)
    extreme -= 1 if summed < extreme and not keepdim else 0  # the summed dim is gone
    return _max_or_zero(sums, extreme, keepdim) if ord > 0 else amin(sums, extreme, keepdim)


@numpy_keywords
@number_parameters("linalg_norm", True, signature=_takes_norm)
def linalg_norm(x, ord=None, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """``linalg.norm``: a vector norm over one dim (or all of them), a matrix norm over two
    (or of a 2-D x when ``ord`` is given), as torch's two overloads choose."""
    if dim is not None:
        dim = (int(dim),) if reads_as_int(dim) else tuple(dim)  # (a 0-d int tensor too)
        if len(dim) not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
    elif ord is not None and x.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {x.ndim}D.")
    # a string order is always a matrix norm; ord=None is the 2-norm, a vector norm
    if isinstance(ord, str) or ord is not None and len(dim or range(x.ndim)) == 2:
        return matrix_norm(x, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(x, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)  # (torch: 2.)


@tensor_method()
@int_parameters("norm", True, dim=(2, "int[1]?"), keepdim=(3, "bool"))
def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):  # noqa: A002
    """``torch.norm`` (deprecated in torch for ``linalg.*_norm``, which it calls): a vector
    norm of order ``p`` over ``dim`` (all dims by default); ``p='fro'`` is the 2-norm,
    ``p='nuc'`` the nuclear norm of matrices. A Python function in torch: no ``axis=``."""
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        return matrix_norm(input, p, tuple(range(input.ndim)) if dim is None else dim, keepdim,
                           dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


def _warn_jit_only(name: str, replacement: str) -> None:
    # torch warns once per process (TORCH_WARN_ONCE); Python's filter once per calling line
    warnings.warn(f"at::{name} is deprecated and it is just left for JIT compatibility. It will "
                  f"be removed in a future PyTorch release. Please use `{replacement}` instead",
                  UserWarning, stacklevel=3)


_NO_DIM = object()  # nuclear_norm without a dim (its signature of keepdim alone)


def nuclear_norm(input, dim=_NO_DIM, keepdim: bool = False):  # noqa: A002 - torch's name
    """The nuclear norm (sum of singular values) of the matrices in dims ``dim`` (the last two
    by default): ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``, deprecated in torch.
    ``nuclear_norm(input, True)`` is torch's keepdim overload."""
    _warn_jit_only("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    if isinstance(dim, bool):
        dim, keepdim = _NO_DIM, dim
    if dim is None or type(keepdim) is not bool or dim is not _NO_DIM and not isinstance(
            dim, (int, np.integer, tuple, list)):  # (nor a float dim, an int keepdim)
        given = (input, dim) if keepdim is False else (input, dim, keepdim)
        raise invalid_combination("nuclear_norm", given, {})
    dim = None if dim is _NO_DIM else (dim, dim) if isinstance(dim, (int, np.integer)) else dim
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


@int_parameters("frobenius_norm", dim=(2, "int[1]"), keepdim=(3, "bool"))
def frobenius_norm(input, dim, keepdim: bool = False):  # noqa: A002 - torch's name
    """The 2-norm over dims ``dim`` (at most two; all dims for ``()``), deprecated in torch
    for ``linalg.vector_norm(input, 2, dim, keepdim)``."""
    _warn_jit_only("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    return vector_norm(input, 2, dims or None, keepdim)
