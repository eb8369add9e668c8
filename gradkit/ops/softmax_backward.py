"""softmax's backward as an op of its own, as torch's ``_softmax_backward_data`` (its node
``SoftmaxBackwardDataBackward0``): its value is torch's kernel, ``out * (g - sum(g * out))``,
and its own formulas give torch's second derivatives: ``softmax_double_backward``'s
``g * gg - sum(out * g) * gg - g * sum(out * gg)`` for the output and the op itself again for
the incoming gradient. (The composite's derivative, ``gg * (g - sum(g * out)) - g * sum(gg *
out)``, rounds otherwise: entries torch's formula keeps equal come an ulp apart, which
attention over equal keys amplifies, nn_new seed 334183.)"""
from __future__ import annotations

from gradkit.autograd.batching import batch_dim
from gradkit.autograd.saved_names import declare_saved_names
from gradkit.ops._op import op
from gradkit.ops.reduction import softmax, sum


def _sum_along(a, out, dim: int):
    """sum(a, dim, keepdim=True); a 0-d out has no dim to sum."""
    return sum(a, dim, True) if out.ndim else a


@op(save=("g", "out"), broadcast=True, node_name="SoftmaxBackwardDataBackward0")
def softmax_backward_data(xp, g, out, *, dim):
    """torch's _softmax_backward_data(g, out, dim): the gradient of softmax's input from the
    gradient g of its output out (g may lead with a batch dim that out lacks)."""
    return out * (g - _sum_along(g * out, out, dim))


def _double_backward(gg, g, out, dim):
    return g * gg - _sum_along(out * g, out, dim) * gg - g * _sum_along(out * gg, out, dim)


def _double_tangent(t, g, out, dim):
    return t * (g - _sum_along(g * out, out, dim)) - out * _sum_along(g * t, out, dim)


softmax_backward_data.torch_input_names = ("grad_output", "output")  # torch's _saved_ names
declare_saved_names(softmax_backward_data)
softmax_backward_data.defvjp(
    lambda gg, g, out, dim: softmax_backward_data(gg, out, dim=dim),
    lambda gg, g, out, dim: _double_backward(gg, g, out, dim))
softmax_backward_data.defjvp(
    lambda t, g, out, dim: softmax_backward_data(t, out, dim=dim),
    lambda t, g, out, dim: _double_tangent(t, g, out, dim))
softmax.defvjp(lambda g, out, dim, dtype: softmax_backward_data(g, out, dim=batch_dim(dim)))
