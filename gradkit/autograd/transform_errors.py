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
