"""The checks torch makes on what a custom Function's forward, backward and jvp return (split
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


PURE_VIEW_ARITY = ("Pure view custom Function can only have one input Tensor and one output "
                   "Tensor. Open an issue if you need to support more.")


RETURNED_INPUT_SAVED = (
    "An input that has been returned as-is as output is being saved for backward. This is not "
    "supported if you override setup_context. You should return and save a view of the input "
    "instead, e.g. with x.view_as(x) or setup ctx inside the forward function itself.")


def check_outputs(ctx, args: tuple, outputs: tuple, setup_context_style: bool) -> None:
    """torch's checks of what forward returned: a pure view Function (``ctx._is_pure_view``)
    has one tensor input and one output (always checked, as torch), kept as
    ``ctx._pure_view_of`` (else None); the dirty tensors' rules; with ``setup_context``, no
    input returned as-is (and not dirty) may be saved, for backward or for forward."""
    if setup_context_style:
        check_saved_returned_inputs(ctx, args, outputs)
    ctx._pure_view_of = None
    if getattr(ctx, "_is_pure_view", False):
        tensors = [a for a in args if isinstance(a, Tensor)]
        if len(tensors) != 1 or len(outputs) != 1:
            raise RuntimeError(PURE_VIEW_ARITY)
        ctx._pure_view_of = tensors[0]
    check_dirty(ctx, args, outputs)


def check_saved_returned_inputs(ctx, args: tuple, outputs: tuple) -> None:
    """torch's error for saving an input that forward returned as-is (setup_context style:
    the saved tensor and the output would be the same object, torch cannot tell them apart)."""
    inputs = {id(a) for a in args if isinstance(a, Tensor)} - {id(t) for t in ctx._dirty}
    returned = {id(o) for o in outputs if isinstance(o, Tensor) and id(o) in inputs}
    if returned and any(id(t) in returned for t in (*ctx._to_save, *ctx.saved_for_forward)):
        raise RuntimeError(RETURNED_INPUT_SAVED)


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


def check_function_tangents(ctx, args: tuple, raw_outputs: tuple, outputs: tuple, given: list,
                            versions: list, returned: tuple, base_of) -> None:
    """torch's checks on the tangents a custom Function's jvp returned (``returned``) for its
    inputs' tangents ``given`` (their versions before jvp: ``versions``): none for an output
    that is not differentiable; a dirty input's tangent changed in place and returned as-is;
    for an output that is a view of an input (or an input returned), a view of that input's
    tangent. ``base_of(t)``: the tensor whose tangent t's tangent is a view of."""
    dirty = {id(t) for t in ctx._dirty}
    non_differentiable = {id(t) for t in ctx._non_differentiable}
    positions = {id(a): j for j, a in enumerate(args) if isinstance(a, Tensor)}
    input_bases = {id(base_of(a)): j for j, a in enumerate(args) if isinstance(a, Tensor)}
    for i, (raw, out, tangent) in enumerate(zip(raw_outputs, outputs, returned)):
        if not isinstance(raw, Tensor) or id(raw) in non_differentiable \
                or raw._data.dtype.kind not in "fc":
            if tangent is not None:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the "
                                   "corresponding forward output is not a differentiable Tensor."
                                   "You should return None at that position instead.")
            continue
        if id(raw) in dirty:
            j = positions[id(raw)]
            if given[j] is not None:
                _check_dirty_tangent(tangent, given[j], versions[j])
        elif tangent is not None and getattr(out, "_view", None) is not None:
            j = input_bases.get(id(base_of(out)))
            if j is not None and given[j] is not None:
                _check_view_tangent(tangent, given[j])


def _check_dirty_tangent(tangent, given, version) -> None:
    if tangent is None or tangent._vc[0] == version:
        raise RuntimeError("An inplace custom Function is not modifying the forward mode "
                           "gradients inplace. If the forward is modifying an input inplace, "
                           "then the jvp function must modify the corresponding gradient "
                           "inplace.")
    if tangent is not given:
        raise RuntimeError("An inplace custom Function is not returning the forward mode "
                           "gradients as-is. If the forward is modifying an input inplace, then "
                           "the jvp function must modify the gradient inplace and return it "
                           "as-is.")


def _check_view_tangent(tangent, given) -> None:
    view = getattr(tangent, "_view", None)
    if view is None:
        raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) "
                           "but the jvp is not returning a view.")
    given_view = getattr(given, "_view", None)
    if given_view is not None:
        if given_view.base is not view.base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the same base as the given grad input.")
    elif given is not view.base:
        raise RuntimeError("A custom Function is returning a view but the jvp is not returning "
                           "a view of the given grad input.")


def check_tangent_size(tensor, tangent) -> None:
    """torch's refusal of a tangent whose shape is not its tensor's."""
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")


def checked_function_tangents(outputs, out) -> tuple:
    """torch's checks on what a Function's jvp returned: one tangent per output, each None or
    a floating Tensor of its output's size (no broadcasting)."""
    tangents = out if isinstance(out, tuple) else (out,)
    if len(tangents) != len(outputs):
        raise RuntimeError("Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outputs)} but got {len(tangents)})")
    for i, (output, tangent) in enumerate(zip(outputs, tangents, strict=True)):
        if tangent is None:
            continue
        if not isinstance(tangent, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(tangent).__name__}) for "
                               f"grad output {i}.")
        if isinstance(output, Tensor):
            check_tangent_size(output, tangent)
            if tangent._data.dtype.kind not in "fc":
                raise RuntimeError("Expected both tensor and its forward grad to be floating "
                                   "point or complex")
    return tangents
