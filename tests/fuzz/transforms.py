"""The fwd class's runs: a program's op chain under forward-mode AD or a torch.func transform.

A program of the ``fwd`` class names a ``transform``; its leaves that "require grad" are the
differentiated inputs (the others are constants the chain reads), created without
requires_grad. The chain is the program's steps as a function of those inputs, returning its
float and complex slots (and every slot as aux, so values stay per env slot as elsewhere):

- ``dual``: the leaves made dual (``forward_ad.make_dual``) in a ``dual_level``; the values
  and the tangent of every slot (in-place steps and views of duals included);
- ``jvp`` / ``vjp`` / ``grad`` / ``jacrev`` / ``jacfwd`` / ``hessian``: ``gradkit.func``'s
  transform of the chain (``grad`` and ``hessian`` of a weighted sum of its outputs);
- ``vmap``: the chain over a leading batch dim of the differentiated leaves (the others are
  not batched: ``in_dims=None``);
- ``jvp_of_grad``: forward over reverse, ``jvp(grad(weighted sum))``.

``Result.grads`` holds the tangents / gradients / Jacobian blocks, flattened in order.
"""
from __future__ import annotations

import warnings

import numpy as np

from .runner import (TORCH_INTERNAL_ERRORS, Result, TorchInternalError, _numpy, _weighted_sum,
                     _weights, error_family, leaf_tensors)

TRANSFORMS = ("dual", "jvp", "vjp", "grad", "jacrev", "jacfwd", "hessian", "vmap",
              "jvp_of_grad")


def _inputs(lib, program, nudge: float) -> list:
    """The leaves, none requiring grad; under vmap the differentiated ones with a batch of
    2 or 3 in front."""
    leaves = [leaf._replace(requires_grad=False) for leaf in program.leaves]
    if program.transform == "vmap":
        batch = 2 + program.seed % 2
        leaves = [leaf._replace(shape=(batch, *leaf.shape)) if drawn.requires_grad else leaf
                  for leaf, drawn in zip(leaves, program.leaves)]
    return leaf_tensors(lib, tuple(leaves), program.seed, nudge)


def _chain(lib, program, env: list, phase: list) -> list:
    """Run the steps on ``env`` (the leaves); every slot's tensor, in order."""
    from .programs import OPS
    env = list(env)
    for k, step in enumerate(program.steps):
        phase[0] = f"step {k} ({step.op})"
        spec = OPS[step.op]
        args = [env[i] for i in step.inputs]
        out = spec.fn(lib, *args, **step.params)
        env.append(args[0] if spec.inplace or spec.same else out)
    phase[0] = "transform"
    return env


def _inexact(t) -> bool:
    return t.is_floating_point() or t.is_complex()


def _weight_tensors(lib, tensors: list, seed: int) -> list:
    """Seeded weights shaped like ``tensors`` (from their shapes and dtypes only)."""
    like = [np.empty(tuple(t.shape), str(t.dtype).split(".")[-1]) for t in tensors]
    return [lib.tensor(w) for w in _weights(like, seed)]


def _flat(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [leaf for part in tree for leaf in _flat(part)]
    return [tree]


def _numpys(tensors) -> list:
    return [None if t is None else _numpy(t) for t in _flat(tensors)]


def _dual(lib, program, inputs: list, phase: list) -> tuple:
    fwad = lib.autograd.forward_ad
    tangents = _weight_tensors(lib, inputs, program.seed + 3)
    with fwad.dual_level():
        env = [fwad.make_dual(x, t) if leaf.requires_grad else x
               for x, t, leaf in zip(inputs, tangents, program.leaves)]
        env = _chain(lib, program, env, phase)
        unpacked = [fwad.unpack_dual(t) for t in env]
        return _numpys([u.primal for u in unpacked]), _numpys([u.tangent for u in unpacked])


def _transformed(lib, program, inputs: list, phase: list) -> tuple:
    """(values per slot, derivatives) of the chain under ``program.transform``."""
    func, kind = lib.func, program.transform
    wrt = [i for i, leaf in enumerate(program.leaves) if leaf.requires_grad]
    primals = [inputs[i] for i in wrt]
    argnums = tuple(range(len(primals)))

    def chain(*xs):
        env = list(inputs)
        for i, x in zip(wrt, xs):
            env[i] = x
        env = _chain(lib, program, env, phase)
        return tuple(t for t in env if _inexact(t)), tuple(env)

    def loss(*xs):
        outputs, slots = chain(*xs)
        return _weighted_sum(lib, outputs, _weight_tensors(lib, outputs, program.seed)), slots

    tangents = tuple(_weight_tensors(lib, primals, program.seed + 3))
    if kind == "vmap":
        slots = func.vmap(lambda *xs: chain(*xs)[1], in_dims=tuple(
            0 if leaf.requires_grad else None for leaf in program.leaves))(*inputs)
        return _numpys(slots), []
    if kind == "jvp":
        _, derivatives, slots = func.jvp(chain, tuple(primals), tangents, has_aux=True)
    elif kind == "vjp":
        outputs, pullback, slots = func.vjp(chain, *primals, has_aux=True)
        derivatives = pullback(tuple(_weight_tensors(lib, outputs, program.seed)))
    elif kind == "grad":
        derivatives, slots = func.grad(loss, argnums=argnums, has_aux=True)(*primals)
    elif kind in ("jacrev", "jacfwd"):
        derivatives, slots = getattr(func, kind)(chain, argnums=argnums, has_aux=True)(
            *primals)
    elif kind == "hessian":
        return [], _numpys(func.hessian(lambda *xs: loss(*xs)[0], argnums=argnums)(*primals))
    else:  # jvp_of_grad: forward over reverse
        gradient = func.grad(loss, argnums=argnums, has_aux=True)
        _, derivatives, slots = func.jvp(gradient, tuple(primals), tangents, has_aux=True)
    return _numpys(slots), _numpys(derivatives)


def run_transform(program, lib, nudge: float = 0.0) -> Result:
    """``runner.run`` for a program with a ``transform``: its values per slot and its
    derivatives (``grads``), or the phase that raised."""
    phase = ["forward"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            inputs = _inputs(lib, program, nudge)
            run = _dual if program.transform == "dual" else _transformed
            values, derivatives = run(lib, program, inputs, phase)
        except Exception as e:  # noqa: BLE001 - the error itself is what is compared
            if any(text in str(e) for text in TORCH_INTERNAL_ERRORS):
                raise TorchInternalError(str(e)) from e
            return Result((phase[0], error_family(e), type(e).__name__), [], [], [], [], [],
                          str(e))
    return Result(None, values, [], [], derivatives, [])
