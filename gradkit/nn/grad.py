"""torch.nn.grad: a convolution's input and weight gradients as functions of their own.

``conv2d_input(input_size, weight, grad_output, ...)`` is what backward computes for the input
of ``F.conv2d(input, weight, ...)`` given ``grad_output``; ``conv2d_weight(input, weight_size,
grad_output, ...)`` the weight's. Each runs the convolution on a zero operand of the given size
and asks autograd for the vector-Jacobian product, so the results are exactly backward's (and
differentiable again when ``weight``/``input`` or ``grad_output`` require grad).

>>> x, w = gradkit.randn(1, 1, 5), gradkit.randn(1, 1, 3)
>>> gradkit.nn.grad.conv1d_input(x.shape, w, gradkit.ones(1, 1, 3)).shape
gradkit.Size([1, 1, 5])
"""
from __future__ import annotations

from gradkit import creation
from gradkit._tensor import Tensor
from gradkit.autograd.api import grad
from gradkit.autograd.grad_mode import enable_grad
from gradkit.ops.conv import conv2d
from gradkit.ops.conv_more import conv1d, conv3d

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _vjp(convolution, input, weight, grad_output, wrt: int, options) -> Tensor:  # noqa: A002
    """d(convolution(input, weight) · grad_output) / d(operand ``wrt``): the other operand is
    a zero leaf of the given size in grad_output's dtype (as torch's new_empty(1).expand)."""
    operands = [input, weight]
    operands[wrt] = creation.zeros(tuple(operands[wrt]), dtype=grad_output.dtype,
                                   requires_grad=True)
    with enable_grad():
        out = convolution(*operands, None, *options)
        keep = out.requires_grad and any(t.requires_grad for t in (*operands, grad_output)
                                         if t is not operands[wrt])
        return grad(out, operands[wrt], grad_output, create_graph=keep)[0]


def _input_gradient(convolution, name: str):
    def gradient(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                 dilation=1, groups: int = 1) -> Tensor:
        return _vjp(convolution, input_size, weight, grad_output, 0,
                    (stride, padding, dilation, groups))
    gradient.__name__ = gradient.__qualname__ = f"{name}_input"
    gradient.__doc__ = f"The gradient of {name} with respect to its input, of ``input_size``."
    return gradient


def _weight_gradient(convolution, name: str):
    def gradient(input: Tensor, weight_size, grad_output: Tensor, stride=1,  # noqa: A002
                 padding=0, dilation=1, groups: int = 1) -> Tensor:
        return _vjp(convolution, input, weight_size, grad_output, 1,
                    (stride, padding, dilation, groups))
    gradient.__name__ = gradient.__qualname__ = f"{name}_weight"
    gradient.__doc__ = f"The gradient of {name} with respect to its weight, of ``weight_size``."
    return gradient


conv1d_input, conv1d_weight = _input_gradient(conv1d, "conv1d"), _weight_gradient(conv1d, "conv1d")
conv2d_input, conv2d_weight = _input_gradient(conv2d, "conv2d"), _weight_gradient(conv2d, "conv2d")
conv3d_input, conv3d_weight = _input_gradient(conv3d, "conv3d"), _weight_gradient(conv3d, "conv3d")
