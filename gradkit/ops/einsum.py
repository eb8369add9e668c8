"""Einstein summation, differentiable to any order.

The equation is first normalized to an explicit one with single letters only
(``...`` becomes unused capital letters, an implicit output is made explicit,
as torch does). ``einsum`` then computes it as torch does, with other ops
(diagonal, permute, sum, mul, bmm, view), so that its graph, views and saved
tensors are torch's. ``_einsum`` is one op over NumPy's einsum (conv's kernel):
the vjp of operand i is another einsum, the output gradient contracted with the
other operands (conjugated: einsum is multilinear) into operand i's letters;
letters that only operand i has are broadcast back, and a letter repeated within
operand i (a diagonal) is scattered back onto it.
"""
from __future__ import annotations

import functools
import math
import string

import numpy as np

from gradkit.ops._op import op
from gradkit.ops.arithmetic import mul
from gradkit.ops.complex import conj
from gradkit.ops.complex_products import all_finite, by_parts
from gradkit.ops.linalg import bmm
from gradkit.ops.promotion import as_dtype, promote_types
from gradkit.ops.reduction import sum as _sum
from gradkit.ops.shape import expand, permute, reshape, unsqueeze, view
from gradkit.ops.triangular import diagonal


def _walk_operands(lhs: str, count: int) -> None:
    """torch's left-to-right reading of the operands' subscripts: its errors, in its order
    (indices count the spaces)."""
    operand, found, i = 0, False, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if found:
                raise RuntimeError(f"einsum(): found '.' for operand {operand} for which an "
                                   "ellipsis was already found")
            if lhs[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for operand {operand} that is not part "
                                   "of any ellipsis")
            found, i = True, i + 2
        elif c == ",":
            operand, found = operand + 1, False
            if operand >= count:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
        elif c != " " and c not in string.ascii_letters:
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               "string, subscripts must be in [a-zA-Z]")
        i += 1
    if operand != count - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")


def _walk_output(lhs: str, rhs: str) -> None:
    """torch's reading of the output subscripts: one ``...`` at most, letters of the inputs,
    each once."""
    found, seen, i = False, set(), 0
    while i < len(rhs):
        c = rhs[i]
        if c == ".":
            if found:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if rhs[i:i + 3] != "...":
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            found, i = True, i + 2
        elif c != " ":
            if c not in string.ascii_letters:
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                   "must be in [a-zA-Z]")
            if c in seen or c not in lhs:
                raise RuntimeError(f"einsum(): output subscript {c} " + (
                    "appears more than once in the output" if c in seen else
                    "does not appear in the equation for any input operand"))
            seen.add(c)
        i += 1


def _parse(equation: str, ndims) -> tuple[list[str], str, str]:
    """Operand subscripts and output subscripts, explicit and without ``...``, and the letters
    that stand for the ``...`` dims."""
    lhs, arrow, rhs = equation.partition("->")
    _walk_operands(lhs, len(ndims))
    terms = lhs.replace(" ", "").split(",")
    used = set(lhs) - {".", ",", " "}
    spare = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in used]
    ellipsis_dims = 0
    for term, ndim in zip(terms, ndims, strict=True):
        if "..." in term:
            ellipsis_dims = max(ellipsis_dims, ndim - len(term.replace("...", "")))
    fill = "".join(spare[:ellipsis_dims])
    subscripts = []
    for term, ndim in zip(terms, ndims, strict=True):
        letters, has_ellipsis = len(term.replace("...", "")), "..." in term
        if has_ellipsis:
            term = term.replace("...", fill[len(fill) - (ndim - letters):] if ndim > letters
                                else "")
        if len(term) != ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) " +
                               (f"is more than the number of dimensions ({ndim}) for operand "
                                f"{len(subscripts)}" if has_ellipsis else
                                f"does not match the number of dimensions ({ndim}) for operand "
                                f"{len(subscripts)} and no ellipsis was given"))
        subscripts.append(term)
    if arrow:
        _walk_output(lhs, rhs)
        output = rhs.replace(" ", "").replace("...", fill)
    else:
        joined = "".join(subscripts)
        singles = sorted(c for c in set(joined) if joined.count(c) == 1 and c not in fill)
        output = fill + "".join(singles)
    return subscripts, output, fill


@op(save="inputs")
def _einsum(xp, *operands, equation):
    if len(operands) > 1:  # mixed dtypes meet in torch's mul: its promotion, not NumPy's
        dtype = functools.reduce(promote_types, [o.dtype for o in operands])
        operands = [as_dtype(xp, o, dtype) for o in operands]
        if len(operands) == 2 and operands[0].dtype.kind == "c" and not all_finite(xp, *operands):
            # torch's bmm of two operands sums C's products (NumPy's BLAS multiplies inf by 0)
            return by_parts(xp, functools.partial(xp.einsum, equation), *operands)
    with np.errstate(invalid="ignore", over="ignore"):  # silent (inf * 0), as torch's
        return xp.einsum(equation, *operands, optimize=len(operands) > 1)  # BLAS if it helps


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


def _subscript(n) -> str:
    """torch's letter for a sublist subscript: 0-25 are A-Z, 26-51 a-z, Ellipsis is ``...``."""
    if n is Ellipsis:
        return "..."
    if 0 <= n < 52:
        return string.ascii_letters[(n + 26) % 52]
    raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                     "[0, 52)")


def _sublist_equation(args: tuple) -> tuple[str, tuple]:
    """(equation, operands) of torch's ``einsum(op0, sub0, op1, sub1, ..., [out])``."""
    equation = ",".join("".join(map(_subscript, sub)) for sub in args[1::2])
    if len(args) % 2:
        return equation + "->" + "".join(map(_subscript, args[-1])), args[:-1:2]
    return equation, args[::2]


def einsum(equation: str, *operands):
    """Sum of products over the indices of ``equation``, as torch.einsum.

    Computed as torch computes it, so that the graph, the views and the saved tensors are
    torch's: each operand aligned to the output letters then the summed ones (diagonals,
    size-1 dims, a permute), then contracted with the next one, left to right (a letter only
    one of them has is summed first; the product is a ``mul``, or a ``bmm`` when letters are
    summed); with several operands the result is a view dropping the summed dims.

    >>> a, b = gradkit.randn(2, 3), gradkit.randn(3, 4)
    >>> gradkit.einsum("ij,jk->ik", a, b).shape
    gradkit.Size([2, 4])
    """
    if not operands:  # (torch checks the count first, in either form)
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if not isinstance(equation, str):  # torch's sublist format: operand, its subscripts, ...
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    subscripts, output, fill = _parse(equation, [o.ndim for o in operands])
    _check_sizes(operands, subscripts)
    # torch's order of the summed dims: the ``...`` ones, then the letters A-Z, a-z
    summed = [c for c in fill if c not in output] + sorted(
        set("".join(subscripts)) - set(output) - set(fill))
    letters = output + "".join(summed)
    aligned = [_aligned(o, term, letters) for o, term in zip(operands, subscripts, strict=True)]
    # per dim: how many operands not yet contracted have it with a size other than 1
    counts = [sum(o.shape[d] != 1 for o in aligned) for d in range(len(letters))]
    kept = len(output)
    while len(aligned) > 1:
        a, b = aligned.pop(0), aligned.pop(0)
        aligned.insert(0, _contract(a, b, counts, kept))
    result = aligned[0]
    if len(letters) == kept:
        return result
    if len(operands) > 1:  # the summed dims are size 1 by now: torch views them away
        return view(result, shape=tuple(result.shape[:kept]))
    return _sum(result, tuple(range(kept, len(letters))))


def _aligned(operand, term: str, letters: str):
    """``operand`` with one dim per letter of ``letters``, in that order: the diagonal of a
    repeated letter, a size-1 dim for a letter it lacks (torch's diagonal, unsqueeze,
    permute)."""
    own = ""
    for c in term:
        if c in own:  # torch: diagonal(0, first, this).movedim(-1, first)
            first = own.index(c)
            operand = diagonal(operand, 0, first, len(own))
            order = list(range(operand.ndim - 1))
            order.insert(first, operand.ndim - 1)
            operand = permute(operand, dims=tuple(order))
        else:
            own += c
    missing = "".join(c for c in letters if c not in own)
    for _ in missing:
        operand = unsqueeze(operand, dim=operand.ndim)
    order = own + missing
    return permute(operand, dims=tuple(order.index(c) for c in letters))


def _contract(a, b, counts: list, kept: int):
    """a and b (aligned) multiplied, summed over the dims no later operand has (kept as size
    1): a dim only one of them has is summed on its own first, as torch."""
    both, a_only, b_only = [], [], []
    for d in range(kept, a.ndim):
        if a.shape[d] != 1 and b.shape[d] != 1:
            counts[d] -= 1
            if counts[d] == 1:
                both.append(d)
                counts[d] = 0
        elif counts[d] == 1:
            if a.shape[d] != 1:
                a_only.append(d)
                counts[d] = 0
            elif b.shape[d] != 1:
                b_only.append(d)
                counts[d] = 0
    if a_only:
        a = _sum(a, tuple(a_only), True)
    if b_only:
        b = _sum(b, tuple(b_only), True)
    return _sum_product(a, b, both)


def _sum_product(left, right, summed: list):
    """torch's sumproduct_pair: ``(left * right)`` summed over ``summed`` (kept as size 1),
    as a bmm of (shared, left's own, summed) by (shared, summed, right's own) dims."""
    if not summed:
        return mul(left, right)
    shared, left_own, right_own = [], [], []
    for d in range(left.ndim):
        in_left, in_right = left.shape[d] != 1, right.shape[d] != 1
        if d in summed:
            if in_left and not in_right:
                left = _sum(left, (d,), True)
            elif in_right and not in_left:
                right = _sum(right, (d,), True)
        elif in_left and in_right:
            shared.append(d)
        elif in_left:
            left_own.append(d)
        else:
            right_own.append(d)
    if left_own and right_own and right_own[-1] < left_own[0]:
        # every dim of right's own comes before left's: torch multiplies right by left then, so
        # the product comes out in order; that decides the dtype of an empty product of mixed
        # dtypes and the text of the dtype error
        left, right, left_own, right_own = right, left, right_own, left_own

    def size(t, dims):
        return math.prod(t.shape[d] for d in dims)

    out_shape = tuple([left.shape[d] for d in shared + left_own] + [1] * len(summed)
                      + [right.shape[d] for d in right_own])
    left = reshape(permute(left, dims=tuple(shared + left_own + summed + right_own)),
                   (size(left, shared), size(left, left_own), size(left, summed)))
    right = reshape(permute(right, dims=tuple(shared + summed + right_own + left_own)),
                    (size(right, shared), size(right, summed), size(right, right_own)))
    order = shared + left_own + summed + right_own
    product = view(bmm(left, right), shape=out_shape)
    return permute(product, dims=tuple(order.index(d) for d in range(len(order))))


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
