"""The checks torch makes on what a custom Function's forward and backward return (split
from function.py)."""
from __future__ import annotations

import warnings

from gradkit._tensor import Tensor


def check_grads(node, grads: tuple) -> tuple:
    """torch's checks on what a custom backward returned (shapes are checked by the engine)."""
    expected = len(node._next)
    if len(grads) > expected and all(g is None for g in grads[expected:]):
        grads = grads[:expected]  # trailing Nones are allowed, as in torch
    if len(grads) != expected:
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {expected}, got {len(grads)})")
    for i, g in enumerate(grads):
        if g is None:
            continue
        if not isinstance(g, Tensor):
            raise RuntimeError(f"function {node.name()} returned a gradient of type "
                               f"{type(g).__name__} at position {i}; expected a Tensor or None")
        if node.input_meta[i] is None:
            raise RuntimeError(f"function {node.name()} returned a gradient different than None "
                               f"at position {i + 1}, but the corresponding forward input was "
                               "not a Variable")
        if g._data.dtype.kind == "c" and node.input_meta[i][1].kind != "c":
            raise RuntimeError(f"function {node.name()} returned a complex gradient at index {i} "
                               f"for a real input of dtype {node.input_meta[i][1]}")
    return grads


def check_dirty(ctx, args: tuple, outputs: tuple) -> None:
    """torch's rules for ``ctx.mark_dirty``: dirty tensors are inputs, returned as outputs."""
    if not ctx._dirty:
        return
    output_ids = {id(o) for o in outputs}
    if any(id(t) not in output_ids for t in ctx._dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all be "
                           "outputs of the Function.")
    input_ids = {id(a) for a in args}
    not_inputs = [t for t in ctx._dirty if id(t) not in input_ids]
    if any(getattr(t, "_view", None) is not None for t in not_inputs):  # torch: an error for views
        raise RuntimeError("ctx.mark_dirty() received a tensor that was not an input. Only input "
                           "Tensors that have been mutated should be passed to ctx.mark_dirty().")
    if not_inputs:
        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                      "Tensors that have been mutated should be passed to ctx.mark_dirty().",
                      UserWarning, stacklevel=4)


DIRTY_VIEW_OF_SEVERAL = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one "
    "doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do "
    "this change.")
