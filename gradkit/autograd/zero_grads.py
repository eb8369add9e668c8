"""Gradients known to be zero: torch's "efficient zero tensors".

torch's backward of ``sgn`` for real inputs returns a zero tensor that many backward formulas
(those made of mul, div, add and views: ``MulBackward0``, ``ExpBackward0``, ...) pass on as
zero without computing, so in a double backward through ``abs`` a NaN or inf they would have
multiplied it by stays out. gradkit marks such a gradient (``KnownZero``, an ndarray holding
zeros): a node named in ``PASSES_KNOWN_ZERO`` that receives one passes known zeros on without
running its formula (plain zeros to an input it broadcast: torch's ``sum_to_size``
materializes the zero tensor). Other nodes, hooks, leaves and ``autograd.grad``'s results get
plain zeros, as torch's other kernels materialize it. A known zero adds nothing to a sum.
"""
from __future__ import annotations

import numpy as np


class KnownZero(np.ndarray):
    """Zeros standing for a gradient known to be zero. Computing with it gives plain arrays:
    only the engine passes the mark on."""

    def __array_wrap__(self, array, context=None, return_scalar=False):
        array = array.view(np.ndarray)
        return array[()] if return_scalar else array


class Undefined(KnownZero):
    """The zeros a multi-output node gets for an output no gradient reached: torch's undefined
    gradient, whose terms its formulas skip (see ``is_undefined``). Not a known zero."""


def is_undefined(g) -> bool:
    """Whether no gradient reached this output of a multi-output node. NumPy gradients carry
    the mark; for other array modules, zeros that carry no graph count as undefined."""
    data = getattr(g, "_data", g)
    if type(data) is Undefined:
        return True
    if isinstance(data, np.ndarray) or isinstance(data, (int, float, complex)):
        return False
    return not getattr(g, "requires_grad", False) and not data.any()


# torch's backward nodes whose formula keeps an efficient zero tensor zero (checked on torch
# 2.13: ``sgn(f(x))`` at x = inf gives a zero tensor, not NaN, through each of these)
PASSES_KNOWN_ZERO = frozenset({
    "AbsBackward0", "AddBackward0", "AddBackward1", "AddcmulBackward0", "AmaxBackward0",
    "AminBackward0",
    "AsinBackward0", "Atan2Backward0", "AtanBackward0", "CatBackward0", "CloneBackward0",
    "ConjBackward0", "CosBackward0", "CoshBackward0", "DiagEmbedBackward0",
    "DivBackward1", "DotBackward0", "ErfBackward0", "Exp2Backward0",
    "ExpBackward0", "Expm1Backward0", "FmodBackward0", "HypotBackward0", "LerpBackward0",
    "LinalgVectorNormBackward0", "Log1PBackward0", "Log2Backward0", "LogBackward0",
    "LogsumexpBackward0", "MulBackward0", "MulBackward1", "PermuteBackward0", "PowBackward0",
    "PowBackward2", "ProdBackward0", "RemainderBackward0", "ReshapeAliasBackward0",
    "RsqrtBackward0", "SgnBackward0", "SinBackward0", "SinhBackward0", "SqrtBackward0",
    "SqueezeBackward0", "SqueezeBackward1", "StackBackward0", "SubBackward1",
    "SumBackward0", "SumBackward1", "TBackward0", "TanBackward0", "TransposeBackward0",
    "UnsqueezeBackward0", "VarBackward0", "ViewAsRealBackward0", "ViewBackward0",
    # and these (fuzz seed 1384749, torch 2.13)
    "AcosBackward0", "AcoshBackward0", "AsinhBackward0", "AtanhBackward0", "DigammaBackward0",
    "ErfcBackward0", "ErfinvBackward0", "LgammaBackward0", "Log10Backward0",
    "ProdBackward1",  # prod along a dim, as the full one (fuzz seed 5250399)
    # and these (breadth seed 1099941, a probe of 120 functions at inf, NaN, 0 and 1e200)
    "Deg2RadBackward0", "FracBackward0", "I0Backward0", "LogaddexpBackward0",
    "Logaddexp2Backward0", "MvlgammaBackward0", "NanToNumBackward0", "NansumBackward0",
    "PolygammaBackward0", "Rad2DegBackward0", "SpecialEntrBackward0", "SpecialErfcxBackward0",
    "SpecialI0EBackward0", "SpecialI1Backward0", "SpecialNdtriBackward0",
    "SpecialXlog1PyBackward1", "ViewAsComplexBackward0",
    "XlogyBackward1", "LdexpBackward0",  # Backward1: x is a number (Backward2, y a number, runs)
})

# nodes whose formula keeps the zero tensor for some inputs only, per input: "known" (passed
# on), "zeros" (a where() in the formula gives plain zeros: nothing multiplied, no NaN) or
# None (the formula runs on plain zeros, as on any gradient)
KNOWN_ZERO_BY_INPUT = {
    "DivBackward0": ("known", None),      # the divisor's -g * x / y**2: y's 0 gives NaN
    "MvBackward0": ("known", None),       # the matrix's g.ger(v); the vector's m^T.mv(g) runs
    "PowBackward1": ("zeros", "known"),   # the base's where(y == 0, 0, g * y * x ** (y - 1))
    "XlogyBackward0": (None, "known"),    # x's g * xlogy(x != 0, y)
    "SpecialXlog1PyBackward0": (None, "known"),  # as xlogy's
    "CopysignBackward0": ("known", None),  # y's zeros_like (plain zeros)
    "DistBackward0": ("known", "zeros"),  # y's -norm_backward(...): a neg materializes
    "CumprodBackward0": ("zeros",),       # (g * result)'s zero tensor, cumsum materializes
    "SincBackward0": ("zeros",),          # where(x == 0, 0, g * ...)
    "SubBackward0": ("known", None),      # other's -g (a neg: plain zeros), as rsub's self
    "RsubBackward0": (None, "known"),     # (RsubBackward1, number - x, has only -g)
    # the written tensor's zeros_like (materialized), src's grad.to(...) (strided 360948:
    # v.copy_(v) of v = x * x at a NaN x: the plain zeros meet x in MulBackward0, NaN)
    "CopyBackwards": ("zeros", "known"),
}


def _folded_matrix_vector(node) -> tuple | None:
    """matmul of a batched matrix and a vector: torch folds it into one ``mv``, whose
    matrix gradient keeps the zero tensor (other batched products: an ``mm``, which does not)."""
    x, y = (None if meta is None else len(meta[0]) for meta in node.input_meta)
    return ("known", None) if x is not None and x >= 3 and y == 1 else None


def _division_with_mode(node) -> tuple | None:
    """div(x, y, rounding_mode=None) is DivBackward0's formula (breadth seed 1406905); a
    rounded quotient's zeros_like gradients are plain zeros, as torch's (checked on 2.13)."""
    return ("known", None) if node.params.get("rounding_mode") is None else None


def _reduction_by_count(node) -> tuple | None:
    """scatter_reduce's and index_reduce's amax, amin and mean divide the gradient by a count
    (0 where nothing reached: 0 / 0 of plain zeros, a zero tensor kept by torch's division);
    self's is masked_fill'ed into plain zeros without include_self (signal seed 338703)."""
    if node.params.get("reduce") not in ("amax", "amin", "mean"):
        return None
    return ("known" if node.params.get("include_self", True) else "zeros", None, None, "known")


# nodes whose KNOWN_ZERO_BY_INPUT modes depend on their inputs' shapes or their parameters:
# (node) -> modes
KNOWN_ZERO_BY_NODE = {"MatmulBackward0": _folded_matrix_vector,
                      "DivBackward2": _division_with_mode,
                      "IndexReduceBackward0": _reduction_by_count,
                      "ScatterReduceBackward0": _reduction_by_count}


def is_known_zero(g) -> bool:
    return type(g) is KnownZero or type(getattr(g, "_data", None)) is KnownZero


def without_known_zeros(tangents) -> tuple[list, bool]:
    """The tangents with the known-zero ones dropped (None: a rule's term of one is zero, not
    zero times the rule's factor, inf * 0 = NaN), and whether only known zeros were given."""
    known = [t is not None and is_known_zero(t) for t in tangents]
    if not any(known):
        return tangents, False
    kept = [None if k else t for k, t in zip(known, tangents, strict=True)]
    return kept, all(t is None for t in kept)


def marked(g):
    """``g`` (zeros: an array or a Tensor without history) marked as known zero."""
    data = getattr(g, "_data", g)
    if type(data) is not np.ndarray:  # other array modules (CuPy) are not marked
        return g
    if data is g:
        return data.view(KnownZero)
    g._data = data.view(KnownZero)
    return g


def plain(g):
    """``g`` without the mark: zeros anyone may write into."""
    if type(g) is KnownZero:
        return g.view(np.ndarray)
    if type(getattr(g, "_data", None)) is KnownZero:
        return type(g)._make(g._data.view(np.ndarray))
    return g


def known_zeros_like(g, shape, dtype, known: bool = True):
    """Zeros of ``shape`` and ``dtype``, of g's kind (array or Tensor), known zero or not."""
    zeros = np.zeros(shape, dtype)
    if known:
        zeros = zeros.view(KnownZero)
    return zeros if getattr(g, "_data", None) is None else type(g)._make(zeros)


def known_zeros_for(g, node, broadcast: bool, edges: tuple, batch: tuple) -> tuple:
    """What a node that keeps torch's zero tensors zero passes on for one: known zeros, plain
    ones for an input it broadcast (torch's ``sum_to_size`` materializes them; the inputs'
    common shape, not g's: dist reduces it); ``batch``: the batch dims every gradient has
    first in a batched backward."""
    common = np.broadcast_shapes(*(tuple(meta[0]) for meta in node.input_meta
                                   if meta is not None)) if broadcast else None
    return tuple(None if child is None else known_zeros_like(
        g, batch + tuple(meta[0]), meta[1], known=not broadcast or tuple(meta[0]) == common)
        for child, meta in zip(edges, node.input_meta))


def known_zeros_by_input(computed, g, node, broadcast: bool, modes: tuple, edges: tuple,
                         batch: tuple) -> tuple:
    """``computed`` (the formula run on plain zeros) where an input's mode is None, known
    zeros where it is "known", plain zeros where it is "zeros"."""
    zeros = known_zeros_for(g, node, broadcast, edges, batch)
    return tuple(r if mode is None else z if mode == "known" or z is None else plain(z)
                 for r, z, mode in zip(computed, zeros, modes))
