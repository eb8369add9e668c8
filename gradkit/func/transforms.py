"""torch.func's grad, grad_and_value, vjp, jvp and linearize, on gradkit's autograd.

>>> from gradkit.func import grad
>>> grad(lambda x: (x ** 3).sum())(gradkit.tensor([1.0, 2.0]))
tensor([ 3., 12.])

Transforms nest (``grad(grad(f))``, ``vmap(grad(f))``) because every one differentiates at
fresh inputs with a graph (see _levels.py). ``jvp`` runs forward mode, as torch's: func on
dual tensors at a fresh dual level. gradkit has one level at a time, so a ``jvp`` inside an
open level (jvp of jvp) uses the double-vjp trick (J v is the gradient of the linear map
u -> <J^T u, v>) under the enclosing level's tangents.
"""
from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.autograd import forward_ad
from gradkit.creation import zeros_like
from gradkit.func._levels import (
    Stripper, checked_argnums, differentiating, fresh_tree, fresh_writable_tree, guarded_call,
    or_zeros, ordinary, split_aux, tensor_leaves, vjps, writing_back)
from gradkit.func.pytree import tree_flatten, tree_unflatten, treespec_pprint


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func`` -> a function returning ``(gradient, value)`` (``(gradient, (value, aux))``
    with ``has_aux``); the gradient has the structure of the ``argnums`` arguments."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        positions, is_tuple = checked_argnums(argnums, len(args))
        with differentiating():
            args = list(args)
            leaves = []
            for position in positions:
                args[position], arg_leaves = fresh_tree(args[position])
                leaves.append(arg_leaves)
            output = guarded_call(func, args, kwargs)
            output, aux = split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe "
                                   "you wanted to use the vjp or jacrev APIs instead?")
            flat = [x for arg_leaves in leaves for x in arg_leaves]
            grads = or_zeros(vjps([output], flat, [None]), flat)
        strip = Stripper(flat)
        grads = iter([strip(g) for g in grads])
        per_arg = tuple(tree_unflatten([next(grads) for _ in arg_leaves],
                                       tree_flatten(args[p])[1])
                        for p, arg_leaves in zip(positions, leaves, strict=True))
        gradient = per_arg if is_tuple else per_arg[0]
        value = strip(output)
        return (gradient, (value, strip.tree(aux))) if has_aux else (gradient, value)
    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func`` (returning a scalar) -> its gradient function, as ``torch.func.grad``.

    >>> grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(gradkit.ones(2), gradkit.ones(2) * 3)
    (tensor([3., 3.]), tensor([1., 1.]))
    """
    with_value = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = with_value(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient
    return wrapper


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)`` (and aux): ``vjp_fn(cotangents)`` gives the gradients of
    ``<func(*primals), cotangents>`` for every primal, as a tuple.

    >>> out, vjp_fn = vjp(gradkit.sin, gradkit.zeros(2))
    >>> vjp_fn(gradkit.tensor([1.0, 2.0]))
    (tensor([1., 2.]),)
    """
    with differentiating():
        fresh_primals, leaves = fresh_tree(primals)
        output, aux = split_aux(guarded_call(func, fresh_primals), has_aux, "vjp(f, *primals)")
        out_leaves, out_spec = tensor_leaves(output, "vjp(f, *primals)")
    primal_spec = tree_flatten(primals)[1]

    def vjp_fn(*cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        """The gradients of ``<output, cotangents>`` for the primals (a tuple)."""
        cotangents = cotangents[0] if len(cotangents) == 1 else cotangents
        seeds, spec = tree_flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function. cotangents: "
                               f"{treespec_pprint(spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        grads = or_zeros(vjps(out_leaves, leaves, seeds, retain_graph=retain_graph,
                              create_graph=create_graph), leaves)
        strip_now = Stripper(leaves)  # grad mode now decides, as in torch
        return tree_unflatten([strip_now(g) for g in grads], primal_spec)

    strip = Stripper(leaves)
    result = (strip.tree(output), vjp_fn)
    return result + (strip.tree(aux),) if has_aux else result


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J tangents)`` (and aux), both with the structure of func's output.

    >>> jvp(lambda x: x ** 2, (gradkit.tensor([1.0, 2.0]),), (gradkit.ones(2),))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    where = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    primal_leaves, primal_spec = tree_flatten(primals)
    tangent_leaves, tangent_spec = tree_flatten(tangents)
    if primal_spec != tangent_spec:
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {primal_spec} and tangents "
                           f"with structure {tangent_spec}")
    if not primal_leaves:
        raise RuntimeError(f"{where}: Expected primals to contain at least one Tensor.")
    for name, leaves in (("primals", primal_leaves), ("tangents", tangent_leaves)):
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f"{where}: Expected {name} to only contain Tensors, got "
                                   f"{type(leaf)}")
    for p, t in zip(primal_leaves, tangent_leaves, strict=True):
        _check_tangent(p, t)
    if forward_ad.level_open():  # inside a dual level (jvp of jvp): one level at a time
        if not _held.levels:  # torch's jvp enters a dual level: a user's is one too many
            raise RuntimeError("Nested forward mode AD is not supported at the moment")
        return _jvp_by_double_vjp(func, primals, tangent_leaves, strict, has_aux, where)
    with differentiating(), _dual_level():
        copies = [ordinary(p).clone() for p in primal_leaves]  # func may write into them
        write_back = writing_back(list(zip(primal_leaves, copies, strict=True)))
        duals = [forward_ad.make_dual(c, ordinary(t))
                 for c, t in zip(copies, tangent_leaves, strict=True)]
        output = guarded_call(func, tree_unflatten(duals, primal_spec), reverse=False)
        output, aux = split_aux(output, has_aux, where)
        out_leaves, out_spec = tensor_leaves(output, where)
        forward = [forward_ad.unpack_dual(o).tangent for o in out_leaves]
        if strict and None in forward:
            raise RuntimeError(_INDEPENDENT)
    write_back()
    forward = or_zeros(forward, out_leaves)
    strip = Stripper([])
    output, aux = _untangled(strip.tree(output)), _untangled(strip.tree(aux))
    result = (output, tree_unflatten([strip(f) for f in forward], out_spec))
    return result + (aux,) if has_aux else result


def _untangled(tree):
    """``tree`` with its tensors' tangents of jvp's exited level dropped (as torch's unwrapped
    results, they are plain tensors to a later dual level)."""
    for leaf in tree_flatten(tree)[0]:
        if isinstance(leaf, Tensor):
            leaf._fw = None
    return tree


class _Held(threading.local):
    levels = 0  # dual levels jvp has open (one, or none)


_held = _Held()


@contextlib.contextmanager
def _dual_level():
    """A dual level of jvp's own."""
    with forward_ad.dual_level():
        _held.levels += 1
        try:
            yield
        finally:
            _held.levels -= 1


def _jvp_by_double_vjp(func, primals, tangent_leaves, strict, has_aux, where) -> tuple:
    """jvp where a dual level is open: u -> J^T u is linear in u, its vjp with the tangents
    is J tangents (reverse mode twice, so it nests under the open level's tangents)."""
    with differentiating():
        fresh_primals, leaves, write_back = fresh_writable_tree(primals)
        output, aux = split_aux(guarded_call(func, fresh_primals, reverse=False), has_aux, where)
        out_leaves, out_spec = tensor_leaves(output, where)
        if strict:
            _check_dependent(out_leaves, leaves)
        probes = [zeros_like(o.detach(), requires_grad=True) for o in out_leaves]
        back = vjps(out_leaves, leaves, probes)
        pairs = [(b, ordinary(t)) for b, t in zip(back, tangent_leaves, strict=True)
                 if b is not None]
        forward = or_zeros(vjps([b for b, _ in pairs], probes, [t for _, t in pairs])
                           if pairs else [None] * len(probes), out_leaves)
    write_back()
    strip = Stripper(leaves + probes)
    result = (strip.tree(output), tree_unflatten([strip(f) for f in forward], out_spec))
    return result + (strip.tree(aux),) if has_aux else result


_INDEPENDENT = ("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                "inputs. This is not allowed with strict=True.")


def _check_dependent(outputs: list, inputs: list) -> None:
    """jvp's ``strict=True``: every output must be reached from the inputs."""
    for out in outputs:
        if not out.requires_grad or all(g is None for g in vjps(
                [out], inputs, [zeros_like(out.detach())], create_graph=False)):
            raise RuntimeError(_INDEPENDENT)


def _check_tangent(primal, tangent) -> None:
    if not (primal.is_floating_point() or primal.is_complex()):
        raise ValueError("Expected primal to be floating point or complex, but got: "
                         f"{primal.dtype}")
    if tangent.shape != primal.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(primal.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")


def linearize(func: Callable, *primals) -> tuple:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is ``jvp(func, primals, tangents)[1]``.

    >>> out, jvp_fn = linearize(gradkit.sin, gradkit.zeros(2))
    >>> jvp_fn(gradkit.ones(2))
    tensor([1., 1.])
    """
    output = func(*primals)
    primal_leaves, primal_spec = tree_flatten(primals)

    def jvp_fn(*tangents):
        """J tangents at the primals, with the output's structure."""
        leaves, spec = tree_flatten(tangents)
        if spec != primal_spec:
            raise RuntimeError(f"Expected the tangents {spec} to have the same argspec as the "
                               f"primals {primal_spec}")
        for i, (p, t) in enumerate(zip(primal_leaves, leaves, strict=True)):
            if not (isinstance(t, Tensor) and isinstance(p, Tensor)):
                continue
            for what in ("shape", "dtype", "device"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(f"tangent:{i} with {what} {getattr(t, what)} in flattened "
                                       f"pytree doesn't match the {what} {getattr(p, what)} of "
                                       "the corresponding primal.")
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn
