"""Einstein summation, differentiable to any order.

The equation is first normalized to an explicit one with single letters only
(``...`` becomes unused capital letters, an implicit output is made explicit,
as torch does). The vjp of operand i is another einsum: the output gradient
contracted with the other operands (conjugated: einsum is multilinear) into
operand i's letters; letters that only operand i has are broadcast back, and a
letter repeated within operand i (a diagonal) is scattered back onto it.
"""
from __future__ import annotations

import functools
import string

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.complex import conj
from gradkit.ops.conversion import astype
from gradkit.ops.reduction import sum as _sum
from gradkit.ops.shape import expand, reshape
from gradkit.ops.promotion import as_dtype, promote_types
from gradkit.ops.unary_helpers import kernel_error, scalar_type_name


def _parse(equation: str, ndims) -> tuple[list[str], str]:
    """Operand subscripts and output subscripts, explicit and without ``...``."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(ndims) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    used = set(equation) - {".", ",", "-", ">"}
    for letter in used:
        if letter not in string.ascii_letters:
            raise RuntimeError(f"einsum(): invalid subscript given at index "
                               f"{equation.index(letter)} in the equation string, subscripts "
                               "must be in [a-zA-Z]")
    spare = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in used]
    ellipsis_dims = 0
    for term, ndim in zip(terms, ndims, strict=True):
        if "..." in term:
            ellipsis_dims = max(ellipsis_dims, ndim - len(term.replace("...", "")))
    fill = "".join(spare[:ellipsis_dims])
    subscripts = []
    for term, ndim in zip(terms, ndims, strict=True):
        letters = len(term.replace("...", ""))
        if "..." in term:
            term = term.replace("...", fill[len(fill) - (ndim - letters):] if ndim > letters
                                else "")
        if len(term) != ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)})"
                               f" does not match the number of dimensions ({ndim}) for operand "
                               f"{len(subscripts)}" + ("" if "..." in lhs else
                                                       " and no ellipsis was given"))
        subscripts.append(term)
    if arrow:
        output = rhs.replace("...", fill)
        for letter in output:
            if output.count(letter) > 1:
                raise RuntimeError(f"einsum(): output subscript {letter} appears more than once "
                                   "in the output")
            if not any(letter in s for s in subscripts):
                raise RuntimeError(f"einsum(): output subscript {letter} does not appear in the "
                                   "equation for any input operand")
    else:
        joined = "".join(subscripts)
        singles = sorted(c for c in set(joined) if joined.count(c) == 1 and c not in fill)
        output = fill + "".join(singles)
    return subscripts, output


@op(save="inputs")
def _einsum(xp, *operands, equation):
    if len(operands) > 1:  # mixed dtypes meet in torch's mul: its promotion, not NumPy's
        dtype = functools.reduce(promote_types, [o.dtype for o in operands])
        operands = [as_dtype(xp, o, dtype) for o in operands]
    return xp.einsum(equation, *operands, optimize=len(operands) > 1)  # BLAS when it helps


_einsum.name = "einsum"
_einsum.profiler_name = "gradkit::einsum"
_einsum.node_name = "EinsumBackward0"


def _operand_grad(g, operands, i, subscripts, output):
    """vjp for operand i: contract g with the other operands into operand i's letters."""
    mine = subscripts[i]
    shape = tuple(operands[i].shape)
    unique = "".join(dict.fromkeys(mine))
    others = [s for j, s in enumerate(subscripts) if j != i]
    available = set(output).union(*others)
    present = "".join(c for c in unique if c in available)
    terms = [output] + others
    args = [g] + [conj(o) for j, o in enumerate(operands) if j != i]
    grad = _einsum(*args, equation=",".join(terms) + "->" + present)
    size = {c: shape[mine.index(c)] for c in unique}
    squash = tuple(k for k, c in enumerate(present) if size[c] == 1 and grad.shape[k] != 1)
    if squash:  # operand i was broadcast along a size-1 dim
        grad = _sum(grad, squash, True)
    if any(grad.shape[k] == 1 and size[c] != 1 for k, c in enumerate(present)):
        grad = expand(grad, tuple(size[c] for c in present))  # another operand was broadcast
    if present != unique:  # letters only operand i has: summed in forward, broadcast back
        grad = reshape(grad, tuple(size[c] if c in present else 1 for c in unique))
        grad = expand(grad, tuple(size[c] for c in unique))
    if unique != mine:
        grad = _diagonal_embed(grad, shape=shape, subscripts=mine, unique=unique)
    return grad


@op(linear=True)
def _diagonal_embed(xp, g, shape=None, subscripts="", unique=""):
    """Zeros of ``shape`` whose diagonal (``subscripts`` -> ``unique``) holds g."""
    out = xp.zeros(shape, dtype=g.dtype)
    grids = xp.indices(g.shape, sparse=True)
    out[tuple(grids[unique.index(c)] for c in subscripts)] = g
    return out


_diagonal_embed.defvjp(lambda g, shape, subscripts, unique:
                       _einsum(g, equation=f"{subscripts}->{unique}"))
_diagonal_embed.defjvp(lambda t, shape, subscripts, unique:
                       _diagonal_embed(t, shape=shape, subscripts=subscripts, unique=unique))


def _einsum_vjp(g, operands, equation):
    lhs, output = equation.split("->")
    subscripts = lhs.split(",")
    return tuple(_operand_grad(g, operands, i, subscripts, output)
                 for i in range(len(operands)))


def _einsum_jvp(tangents, operands, equation):
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        args = list(operands)
        args[i] = t
        term = _einsum(*args, equation=equation)
        total = term if total is None else total + term
    return total


_einsum.defvjp_all(_einsum_vjp)
_einsum.defjvp_all(_einsum_jvp)


def einsum(equation: str, *operands):
    """Sum of products over the indices of ``equation``, as torch.einsum.

    >>> a, b = gradkit.randn(2, 3), gradkit.randn(3, 4)
    >>> gradkit.einsum("ij,jk->ik", a, b).shape
    gradkit.Size([2, 4])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    subscripts, output = _parse(equation, [o.ndim for o in operands])
    _check_sizes(operands, subscripts)
    operands, subscripts = _sum_integer_letters(operands, subscripts, output)
    _check_contraction_dtypes(operands, subscripts, output)
    return _einsum(*operands, equation=",".join(subscripts) + "->" + output)


def _sum_integer_letters(operands, subscripts, output):
    """torch first sums each operand over the letters only it has (or that the others have
    with size 1), with torch.sum: integers and bools are then summed in int64 (a bool count,
    not a logical or)."""
    operands, subscripts = list(operands), list(subscripts)
    for i, (o, term) in enumerate(zip(operands, subscripts, strict=True)):
        if _data(o).dtype.kind not in "biu":
            continue
        everywhere = output + "".join(t for j, t in enumerate(subscripts) if j != i)
        sized = output + "".join(c for j, t in enumerate(subscripts) if j != i
                                 for c, n in zip(t, _data(operands[j]).shape) if n != 1)
        kept = "".join(c for c, n in dict(zip(term, _data(o).shape)).items()
                       if c in sized or (c in everywhere and n == 1))
        if set(kept) != set(term):  # some letter is summed away (a diagonal alone is not)
            operands[i] = _einsum(astype(o, dtype=_INT64), equation=f"{term}->{kept}")
            subscripts[i] = kept
    return operands, subscripts


_INT64 = np.dtype(np.int64)


def _check_contraction_dtypes(operands, subscripts, output):
    """torch contracts operands with bmm: one dtype for all, and none for bool; a letter of
    size 1 in all operands but one is summed before (no bmm, no check)."""
    shared = [c for c in set("".join(subscripts)) - set(output)
              if sum(c in term and _data(o).shape[term.index(c)] != 1
                     for o, term in zip(operands, subscripts)) > 1]
    if not shared:
        return
    first = _data(operands[0])
    if first.dtype.kind == "b":  # bmm's kernel is chosen by its first operand's dtype
        raise kernel_error("bmm")(first)
    for o in operands[1:]:
        if _data(o).dtype != first.dtype:
            raise RuntimeError(f"expected scalar type {scalar_type_name(first)} but found "
                               f"{scalar_type_name(_data(o))}")


def _data(o):
    return getattr(o, "_data", o)


def _check_sizes(operands, subscripts):
    sizes = {}
    for k, (o, term) in enumerate(zip(operands, subscripts, strict=True)):
        for d, c in enumerate(term):
            n = o.shape[d]
            first = term.index(c)
            if first < d and n != o.shape[first]:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but "
                                   f"the sizes don't match, {n} != {o.shape[first]}")
            seen = sizes.get(c, 1)
            if n != 1 and seen != 1 and n != seen:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which "
                                   f"does not broadcast with previously seen size {seen}")
            sizes[c] = max(n, seen) if n != 1 else seen
