"""torch.func's jacrev, jacfwd and hessian.

The Jacobian of each output leaf ``o`` with respect to each input leaf ``x`` has shape
``o.shape + x.shape``; results nest as torch's: output structure outside, then a tuple over
``argnums`` (when it is a tuple), then each argument's own structure. Both ``jacrev`` and
``jacfwd`` compute it in reverse mode, one batched backward pass over all output leaves
(``is_grads_batched``, as torch's vmapped vjp), so they give the same numbers; they differ in
their arguments and error messages, as torch's do.

>>> from gradkit.func import jacrev
>>> jacrev(lambda x: x ** 2)(gradkit.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.creation import eye, zeros
from gradkit.func._levels import (
    Stripper, checked_argnums, differentiating, fresh_tree, fresh_writable_tree, guarded_call,
    split_aux, tensor_leaves, vjps)
from gradkit.func.pytree import tree_flatten, tree_unflatten
from gradkit.func.vmap import check_randomness, random_refused

def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """``func`` -> the function giving its Jacobian (and aux) by reverse mode.

    ``chunk_size`` is accepted (checked as torch does); every output leaf takes one batched
    backward pass however it is set.
    """
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian_function(func, argnums, has_aux, "jacrev", "vjp(f, *primals)")


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """``func`` -> the function giving its Jacobian (and aux), as ``torch.func.jacfwd``.

    gradkit computes it in reverse mode too (same values); with ``randomness='error'`` (the
    default) random draws in ``func`` raise, as under torch's (vmapped) jacfwd.
    """
    check_randomness(randomness)
    refusing = functools.partial(random_refused, randomness)  # torch's jacfwd runs under vmap
    return _jacobian_function(func, argnums, has_aux, "jacfwd", "jvp(f, primals, tangents)",
                              refusing)


def hessian(func: Callable, argnums=0) -> Callable:
    """``func`` (scalar) -> its Hessian function: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> hessian(lambda x: (x ** 3).sum())(gradkit.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


def _jacobian_function(func, argnums, has_aux: bool, name: str, where: str,
                       random_mode=contextlib.nullcontext):
    """jacrev or jacfwd (``name``); ``where`` names the product in torch's messages."""
    @functools.wraps(func)
    def wrapper(*args):
        positions, is_tuple = checked_argnums(argnums, len(args))
        _check_real(tree_flatten(args)[0], name, "inputs")
        with differentiating():
            args = list(args)
            leaves, specs, write_backs = [], [], []
            for position in positions:
                if name == "jacfwd":  # forward mode: func may write into its inputs
                    _check_floating(args[position])
                    args[position], arg_leaves, write_back = fresh_writable_tree(args[position])
                    write_backs.append(write_back)
                else:
                    args[position], arg_leaves = fresh_tree(args[position])
                leaves.append(arg_leaves)
                specs.append(tree_flatten(args[position])[1])
            with random_mode():
                output = guarded_call(func, args, reverse=name == "jacrev")
            output, aux = split_aux(output, has_aux, where)
            out_leaves, out_spec = tensor_leaves(output, where)
            _check_real(out_leaves, name, "outputs")
            flat = [x for arg_leaves in leaves for x in arg_leaves]
            # forward mode's blocks are tangents of the outputs: the output's dtype
            blocks = _blocks(out_leaves, flat, forward=name == "jacfwd")
        for write_back in write_backs:
            write_back()
        strip = Stripper(flat)
        per_output = []
        for out_blocks in blocks:
            out_blocks = iter([strip(b) for b in out_blocks])
            per_arg = tuple(tree_unflatten([next(out_blocks) for _ in arg_leaves], spec)
                            for arg_leaves, spec in zip(leaves, specs, strict=True))
            per_output.append(per_arg if is_tuple else per_arg[0])
        jacobian = tree_unflatten(per_output, out_spec)
        return (jacobian, strip.tree(aux)) if has_aux else jacobian
    return wrapper


def _check_real(leaves: list, name: str, what: str) -> None:
    """torch.func's Jacobians refuse complex inputs and outputs."""
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor) and leaf.is_complex():
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def _check_floating(arg) -> None:
    for leaf in tree_flatten(arg)[0]:
        if isinstance(leaf, Tensor) and not (leaf.is_floating_point() or leaf.is_complex()):
            raise ValueError(f"Expected primal to be floating point or complex, but got: "
                             f"{leaf.dtype}")


def _blocks(outs: list, inputs: list, forward: bool) -> list:
    """Per output, d out / d x for every input x, each of shape out.shape + x.shape (in
    out's dtype if ``forward``, else x's): one batched backward pass over the outputs' rows
    together, as torch's vmapped vjp (so a backward error is the one torch's pass meets
    first: fwd seed 8625)."""
    sizes = [o.numel() if o.requires_grad else 0 for o in outs]
    total, starts = sum(sizes), [sum(sizes[:k]) for k in range(len(sizes))]
    grads = [None] * len(inputs)
    if total:
        reached = [k for k, n in enumerate(sizes) if n]
        seeds = [_rows(eye(total, dtype=outs[k].dtype, device=outs[k].device), starts[k],
                       sizes[k], -1).reshape(total, *outs[k].shape) for k in reached]
        grads = vjps([outs[k] for k in reached], inputs, seeds, is_grads_batched=True)
    blocks = []
    for out, n, start in zip(outs, sizes, starts, strict=True):
        rows = [zeros(out.numel(), *x.shape, dtype=x.dtype, device=x.device)
                if g is None or not n else _rows(g, start, n, 0) for g, x in
                zip(grads, inputs, strict=True)]
        shaped = [r.reshape(tuple(out.shape) + tuple(x.shape))  # () for a scalar of a scalar
                  for r, x in zip(rows, inputs, strict=True)]
        blocks.append([b.to(out.dtype) for b in shaped] if forward else shaped)
    return blocks


def _rows(t: Tensor, start: int, n: int, dim: int) -> Tensor:
    """``n`` entries of ``t`` from ``start`` along ``dim``; ``t`` itself where that is all."""
    return t if start == 0 and n == t.shape[dim] else t.narrow(dim, start, n)
