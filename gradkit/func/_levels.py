"""What every gradkit.func transform shares: fresh inputs to differentiate at, and results
freed of the graph that leads only to them.

A transform differentiates ``func`` at *fresh* inputs: a new leaf for an input without a
graph, a view for one with a graph (so an enclosing transform, or ``backward`` outside, still
reaches it). The graph is always built (``create_graph``), and a result keeps it only if it
reaches a leaf other than this call's fresh ones: a captured parameter, or an input of an
enclosing transform. That is how torch.func's levels behave, with plain reverse mode.
"""
from __future__ import annotations

import contextlib

from gradkit._tensor import Tensor
from gradkit.autograd.functional import _autograd_grad
from gradkit.autograd.graph import AccumulateGrad
from gradkit.autograd.grad_mode import inference_mode, is_grad_enabled, no_grad
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.saved_hooks import disable_saved_tensors_hooks
from gradkit.creation import zeros_like
from gradkit.func.captured import captured_tensors
from gradkit.func.pytree import tree_flatten, tree_unflatten

_NO_SAVED_HOOKS = ("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. "
                   "Please open an issue with your use case.")
_CAPTURED_WRITE = ("During a grad (vjp, jvp, grad, etc) transform, the function provided attempted "
                   "to call in-place operation that would mutate a captured Tensor. This is not "
                   "supported; please rewrite the function being transformed to explicitly accept "
                   "the mutated Tensor(s) as inputs. (gradkit sees the write when the function "
                   "returns, so unlike torch it has already happened.)")


def checked_argnums(argnums, n_args: int) -> tuple[tuple[int, ...], bool]:
    """``argnums`` as non-negative positions, and whether it was a tuple (torch's errors)."""
    is_tuple = isinstance(argnums, tuple)
    if not is_tuple and not isinstance(argnums, int):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    positions = argnums if is_tuple else (argnums,)
    if not positions:
        raise RuntimeError("argnums must be non-empty")
    for position in positions:
        if not isinstance(position, int):
            raise RuntimeError(f"argnum must be int, got: {type(position)}")
        if not -n_args <= position < n_args:
            raise RuntimeError(f"Got argnum={position}, but only {n_args} positional inputs")
    positions = tuple(p % n_args for p in positions)
    if len(set(positions)) != len(positions):
        raise RuntimeError(f"argnums elements must be unique, got {positions}")
    return positions, is_tuple


def guarded_call(func, args: tuple, kwargs: dict | None = None, reverse: bool = True):
    """``func(*args, **kwargs)`` as a transform runs it: one transform level deeper (what
    transform_errors.py refuses there), without saved tensor hooks in reverse mode (torch's
    grad, vjp and jacrev do not support them), and raising torch's error if ``func`` wrote in
    place into a tensor it captured (a write the transform could not see through)."""
    watched = [(t, t._version) for t in captured_tensors(func) if not t.is_inference()]
    hooks = disable_saved_tensors_hooks(_NO_SAVED_HOOKS) if reverse else contextlib.nullcontext()
    outer = grad_state.captured
    grad_state.captured = outer | {id(t) for t, _ in watched}  # detach_() checks these
    try:
        with hooks, transform_level():
            output = func(*args, **(kwargs or {}))
    finally:
        grad_state.captured = outer
    if any(t._version != version for t, version in watched):
        raise RuntimeError(_CAPTURED_WRITE)
    return output


@contextlib.contextmanager
def transform_level():
    """A transform runs a function inside (``grad_mode.state.transforms`` counts them)."""
    grad_state.transforms += 1
    try:
        yield
    finally:
        grad_state.transforms -= 1


def fresh(x) -> Tensor:
    """An input to differentiate ``func`` at (torch's errors for what cannot be one)."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    x = ordinary(x)
    return x.view_as(x) if x.requires_grad else undetached_tangent(
        x.detach()._set_requires_grad(True), x)


def undetached_tangent(detached: Tensor, x: Tensor) -> Tensor:
    """``detached`` (``x.detach()``) with ``x``'s forward-mode tangent: a reverse transform
    detaches from its own level only, an enclosing jvp's tangent goes on (torch's levels)."""
    detached._fw = getattr(x, "_fw", None)
    return detached


def ordinary(x: Tensor) -> Tensor:
    """``x``, or an ordinary copy of an inference tensor (torch's transforms accept them; a
    graph may not save one), made where :func:`differentiating` has turned the mode off."""
    return x.clone() if x.is_inference() else x


def differentiating() -> inference_mode:
    """Grad mode on and inference mode off, where a transform runs ``func``: torch's grad
    transforms work (and make ordinary tensors) inside ``inference_mode()`` too."""
    return inference_mode(False)


def fresh_tree(tree) -> tuple:
    """``tree`` with fresh tensors, and its fresh leaves in order."""
    leaves, spec = tree_flatten(tree)
    leaves = [fresh(x) for x in leaves]
    for x in leaves:  # a view of an input with a graph: a leaf to torch's level
        if getattr(x, "_view", None) is not None:
            x._view.transform_leaf = True
    return tree_unflatten(leaves, spec), leaves


def fresh_writable_tree(tree) -> tuple:
    """:func:`fresh_tree` for the forward-mode transforms (jvp, jacfwd), whose inputs torch
    lets ``func`` write in place (they are dual tensors): ``func`` gets a copy of each new
    leaf. Returns the tree for ``func``, the leaves to differentiate at, and ``write_back()``,
    which copies what ``func`` wrote into the caller's tensors, as torch's writes land there."""
    originals, spec = tree_flatten(tree)
    leaves = [fresh(x) for x in originals]
    # a view of a copy, as torch's dual tensors are views (detach_() is refused)
    given = [x.clone().view_as(x) if x.is_leaf else x for x in leaves]
    copied = [(o, x) for o, x, leaf in zip(originals, given, leaves, strict=True) if x is not leaf]
    return tree_unflatten(given, spec), leaves, writing_back(copied)


def writing_back(copied: list):
    """``write_back()`` for ``(original, copy)`` pairs: copies what ``func`` wrote into a
    copy (its version moved) into the caller's tensor, as torch's writes land there."""
    copied = [(original, x, x._version) for original, x in copied]

    def write_back() -> None:
        with no_grad():
            for original, x, version in copied:
                if x._version != version:
                    original.copy_(x)
    return write_back


def vjps(outputs, inputs, cotangents, is_grads_batched: bool = False, retain_graph: bool = True,
         create_graph: bool | None = None) -> list:
    """``sum_i cotangent_i^T d output_i / d input`` for every input (None where unreached);
    with a graph while grad mode is on (unless told), so that transforms nest."""
    create_graph = is_grad_enabled() if create_graph is None else create_graph
    return list(_autograd_grad(tuple(outputs), tuple(inputs), tuple(cotangents),
                               create_graph=create_graph, retain_graph=retain_graph,
                               is_grads_batched=is_grads_batched))


def or_zeros(grads, inputs) -> list:
    """``grads`` with zeros for the inputs no output reached."""
    return [g if g is not None else zeros_like(x.detach())
            for g, x in zip(grads, inputs, strict=True)]


class Stripper:
    """Detaches results whose graph reaches only this call's fresh leaves (all results, when
    made where grad mode is off: build it outside the transform's ``differentiating()``)."""

    def __init__(self, fresh_leaves) -> None:
        self.fresh_ids = {id(t) for t in fresh_leaves}
        self.keep_any = is_grad_enabled()

    def __call__(self, value):
        if isinstance(value, Tensor) and value.requires_grad and not (
                self.keep_any and self._reaches_outer(value)):
            fw = getattr(value, "_fw", None)  # an enclosing jvp's tangent, stripped too
            value = value.detach()
            if fw is not None and fw[0].open:
                value._fw = (fw[0], self(fw[1]))
        return value

    def tree(self, tree):
        """``tree`` with every tensor leaf stripped."""
        leaves, spec = tree_flatten(tree)
        return tree_unflatten([self(x) for x in leaves], spec)

    def _reaches_outer(self, t: Tensor) -> bool:
        if t.grad_fn is None:
            return id(t) not in self.fresh_ids
        stack, seen = [t.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if type(node) is AccumulateGrad:
                if id(node.variable) not in self.fresh_ids:
                    return True
                continue
            stack.extend(node._next)
        return False


def split_aux(output, has_aux: bool, where: str):
    """(output, aux) of ``func``'s result; aux must hold only tensors."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    for leaf in tree_flatten(output[1])[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return output


def tensor_leaves(output, where: str) -> tuple[list, object]:
    """The leaves of func's output and its spec (each leaf must be a Tensor)."""
    leaves, spec = tree_flatten(output)
    if not leaves or (len(leaves) == 1 and leaves[0] is None):
        raise RuntimeError(f"{where}: Expected f to be a function that has non-empty output "
                           f"(got output = {leaves})")
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(leaf)}")
    return leaves, spec
