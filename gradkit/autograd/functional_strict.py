"""The strict-mode checks of autograd.functional, with torch's messages (split from
functional.py): outputs and gradients that do not depend on the inputs are errors."""
from __future__ import annotations

from gradkit.creation import zeros_like


_REQUIRES_GRAD_MESSAGES = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs "
               "must be computed in a differentiable manner from the input when running in "
               "strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should ensure "
               "that your function is thrice differentiable and that the hessian depends on the "
               "inputs.",
}

_INDEPENDENT_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward mode "
                         "AD.",
}


def check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, v in enumerate(values):
        if v is None:  # as torch: an unreachable input, whatever the stage
            raise RuntimeError(_INDEPENDENT_MESSAGES["back"].format(i=i))
        if not v.requires_grad:
            raise RuntimeError(_REQUIRES_GRAD_MESSAGES[kind].format(i=i))


def fill_in_zeros(grads: tuple, refs: tuple, strict: bool, stage: str,
                   create_graph: bool = False) -> tuple:
    """None gradients become zeros (or, in strict mode, an error naming the input); strict
    with create_graph also refuses a gradient without graph (its derivative would be zero)."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs, strict=False)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT_MESSAGES[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(f"The {'hessian' if 'double' in stage else 'jacobian'} of the "
                               f"user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def check_jacobian_entry(g, i, j, strict, create_graph) -> None:
    if not strict:
        return
    if g is None:
        raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                           f"{j}. This is not allowed in strict mode.")
    if create_graph and not g.requires_grad:
        raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                           f"{j}. This is not allowed in strict mode when create_graph=True.")
