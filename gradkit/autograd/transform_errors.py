"""What torch refuses inside a function that a functorch transform (``gradkit.func``) runs.

``grad_mode.state.transforms`` counts the transforms running a function on this thread; the
autograd entry points below raise torch's errors while it is not zero.
"""
from __future__ import annotations

from gradkit.autograd.grad_mode import state

REQUIRES_GRAD = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using "
    "torch.autograd.functional.* APIs) inside of a function being transformed by a functorch "
    "transform. This is unsupported, please attempt to use the functorch transforms (e.g. grad, "
    "vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function being "
    "transformed instead.")
RETAIN_GRAD = (
    "You are attempting to call Tensor.retain_grad() inside of a function being transformed by a "
    "functorch transform. This is unsupported, please attempt to use the functorch transforms "
    "(e.g. grad, vjp, jacrev, jacfwd, hessian) or call retain_grad() outside of a function being "
    "transformed instead.")
BACKWARD = (
    "backward() called inside a functorch transform. This is not supported, please use "
    "functorch.grad or functorch.vjp instead or call backward() outside of functorch transforms.")
NO_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")


CAPTURED_DETACH = (
    "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call "
    "in-place operation (aten::detach_) that would mutate a captured Tensor. This is not "
    "supported; please rewrite the function being transformed to explicitly accept the mutated "
    "Tensor(s) as inputs.")


def refuse_captured_detach(tensor) -> None:
    """``detach_()`` of a tensor a grad transform's function captured: torch's error (a write
    changes the version, which the transform checks afterwards; detach_() changes none)."""
    if id(tensor) in state.captured:
        raise RuntimeError(CAPTURED_DETACH)


def refuse_in_transform(message: str) -> None:
    """Raise ``message`` when a gradkit.func transform is running a function."""
    if state.transforms:
        raise RuntimeError(message)


def check_function_class(cls) -> None:
    """Inside a transform, a user's custom Function must use ``setup_context`` (gradkit's own
    internal Functions are exempt: torch implements those as built-in nodes)."""
    if state.transforms and not cls._setup_context_style \
            and not cls.__module__.startswith("gradkit."):
        raise RuntimeError(NO_SETUP_CONTEXT)


def node_class(cls) -> type:
    """The type of a custom Function's node: ``<Name>Backward``, and under a transform torch's
    ``<Name>GeneratedBackward`` (torch runs the Function through a generated one there)."""
    if not state.transforms:
        return cls._backward_cls
    generated = cls.__dict__.get("_generated_backward_cls")
    if generated is None:
        name = cls.__name__ + "GeneratedBackward"
        generated = type(name, (cls._backward_cls,), {
            "__slots__": (), "__qualname__": name, "name": lambda self: name})
        cls._generated_backward_cls = generated
    return generated
