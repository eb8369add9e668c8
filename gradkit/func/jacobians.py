"""torch.func's jacrev, jacfwd and hessian.

The Jacobian of each output leaf ``o`` with respect to each input leaf ``x`` has shape
``o.shape + x.shape``; results nest as torch's: output structure outside, then a tuple over
``argnums`` (when it is a tuple), then each argument's own structure. ``jacrev`` computes it
in reverse mode, one batched backward pass over all output leaves (``is_grads_batched``, as
torch's vmapped vjp); ``jacfwd`` in forward mode, one ``jvp`` per input element (torch vmaps
its jvp over the same basis tangents), so each gives what torch's gives.

>>> from gradkit.func import jacrev
>>> jacrev(lambda x: x ** 2)(gradkit.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""
from __future__ import annotations

import functools
import types
from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.creation import eye, zeros
from gradkit.func._levels import (
    Stripper, checked_argnums, differentiating, fresh_tree, guarded_call,
    split_aux, tensor_leaves, vjps, writing_back)
from gradkit.func.pytree import tree_flatten, tree_unflatten
from gradkit.func.transforms import jvp
from gradkit.func.vmap import check_randomness, random_refused
from gradkit.generator import default_generator
from gradkit.ops.joining import stack

def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """``func`` -> the function giving its Jacobian (and aux) by reverse mode.

    ``chunk_size`` is accepted (checked as torch does); every output leaf takes one batched
    backward pass however it is set.
    """
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacrev_function(func, argnums, has_aux)


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """``func`` -> the function giving its Jacobian (and aux), as ``torch.func.jacfwd``.

    Forward mode, one ``jvp`` per input element; with ``randomness='error'`` (the default)
    random draws in ``func`` raise, as under torch's (vmapped) jacfwd, with 'same' every call
    draws the same values.
    """
    check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args):
        positions, is_tuple = checked_argnums(argnums, len(args))
        _check_real(tree_flatten(args)[0], "jacfwd", "inputs")
        trees = [args[p] for p in positions]
        for tree in trees:
            _check_floating(tree)
        inputs, spec = tree_flatten(trees)
        for x in inputs:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")

        out_spec, blocks, aux = _forward_blocks(func, args, positions, inputs, has_aux,
                                                randomness)
        jacobian = _nested(blocks, spec, out_spec, is_tuple)
        return (jacobian, aux) if has_aux else jacobian
    return wrapper


def _call_at(func, call, *xs):
    """``func`` called with ``call.args``, the leaves ``xs`` at ``call.positions``."""
    args = list(call.args)
    for position, tree in zip(call.positions, tree_unflatten(list(xs), call.spec), strict=True):
        args[position] = tree
    return func(*args)


def _forward_blocks(func, args: tuple, positions: tuple, inputs: list, has_aux: bool,
                    randomness: str) -> tuple:
    """jacfwd's Jacobian by forward mode: one ``jvp`` per element of the ``inputs`` (the
    argnums' leaves) gives a column of every block (torch vmaps its jvp over these basis
    tangents). Each call gets copies of the tensor arguments, so that func's writes into
    them happen once, as under torch's one vmapped call: the last call's land in the
    caller's tensors. Returns the spec of func's output, the blocks per output leaf, aux."""
    sizes = [x.numel() for x in inputs]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    flat_args, args_spec = tree_flatten(args)
    state = default_generator.get_state() if randomness == "same" else None
    columns = []
    for j in range(max(sum(sizes), 1)):  # (one call without a column where there is none)
        tangents = [zeros(x.shape, dtype=x.dtype, device=x.device) for x in inputs]
        for t, start, n in zip(tangents, starts, sizes, strict=True):
            if start <= j < start + n:
                t.view(-1)[j - start] = 1.0
        with differentiating():  # (ordinary tensors, as jvp's, inside inference_mode too)
            copies = [x.clone() if isinstance(x, Tensor) else x for x in flat_args]
            write_back = writing_back([(x, c) for x, c in zip(flat_args, copies, strict=True)
                                       if c is not x])
        call = types.SimpleNamespace(args=tree_unflatten(copies, args_spec),
                                     positions=positions, spec=tree_flatten(
                                         [args[p] for p in positions])[1])
        primals = tree_flatten([call.args[p] for p in positions])[0]
        # the other arguments out of sight of jvp's captured-write check, which looks into
        # closures (torch lets func write them)
        at = functools.partial(_call_at, func, call)
        if state is not None:
            default_generator.set_state(state)
        with random_refused(randomness):
            output, tangent, *aux = jvp(at, tuple(primals), tuple(tangents), has_aux=has_aux)
        out_leaves, out_spec = tree_flatten(output)
        _check_real(out_leaves, "jacfwd", "outputs")
        columns.append(tree_flatten(tangent)[0] if sum(sizes) else [])
    write_back()
    blocks = [[_block([c[k] for c in columns[start:start + n]], out, x)
               for x, start, n in zip(inputs, starts, sizes, strict=True)]
              for k, out in enumerate(out_leaves)]
    return out_spec, blocks, aux[0] if has_aux else None


def _block(columns: list, out: Tensor, x: Tensor) -> Tensor:
    """d out / d x (shape out.shape + x.shape, out's dtype) from its columns."""
    shape = tuple(out.shape) + tuple(x.shape)
    if not columns:
        return zeros(shape, dtype=out.dtype, device=out.device)
    return stack(columns, dim=-1).reshape(shape)


def hessian(func: Callable, argnums=0) -> Callable:
    """``func`` (scalar) -> its Hessian function: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> hessian(lambda x: (x ** 3).sum())(gradkit.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


def _jacrev_function(func, argnums, has_aux: bool) -> Callable:
    """jacrev: the Jacobian by one batched backward pass at fresh inputs."""
    where = "vjp(f, *primals)"

    @functools.wraps(func)
    def wrapper(*args):
        positions, is_tuple = checked_argnums(argnums, len(args))
        _check_real(tree_flatten(args)[0], "jacrev", "inputs")
        with differentiating():
            args = list(args)
            for position in positions:
                args[position] = fresh_tree(args[position])[0]
            flat, spec = tree_flatten([args[p] for p in positions])
            output, aux = split_aux(guarded_call(func, args), has_aux, where)
            out_leaves, out_spec = tensor_leaves(output, where)
            _check_real(out_leaves, "jacrev", "outputs")
            blocks = _blocks(out_leaves, flat)
        strip = Stripper(flat)
        jacobian = _nested(
            [[strip(b) for b in out_blocks] for out_blocks in blocks], spec, out_spec, is_tuple)
        return (jacobian, strip.tree(aux)) if has_aux else jacobian
    return wrapper


def _nested(blocks: list, spec, out_spec, is_tuple: bool):
    """The blocks (per output leaf, per input leaf) as torch nests them: output structure
    outside, then a tuple over argnums (when it is a tuple), then each argument's."""
    per_output = []
    for out_blocks in blocks:
        per_arg = tree_unflatten(out_blocks, spec)
        per_output.append(tuple(per_arg) if is_tuple else per_arg[0])
    return tree_unflatten(per_output, out_spec)


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


def _blocks(outs: list, inputs: list) -> list:
    """Per output, d out / d x for every input x, each of shape out.shape + x.shape (in x's
    dtype): one batched backward pass over the outputs' rows
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
        blocks.append(shaped)
    return blocks


def _rows(t: Tensor, start: int, n: int, dim: int) -> Tensor:
    """``n`` entries of ``t`` from ``start`` along ``dim``; ``t`` itself where that is all."""
    return t if start == 0 and n == t.shape[dim] else t.narrow(dim, start, n)
