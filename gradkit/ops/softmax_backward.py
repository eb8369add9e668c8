"""softmax's and log_softmax's backward as ops of their own, as torch's
``_softmax_backward_data`` and ``_log_softmax_backward_data`` (nodes
``SoftmaxBackwardDataBackward0``, ``LogSoftmaxBackwardDataBackward0``): their values are
torch's kernels, ``out * (g - sum(g * out))`` and ``g - exp(out) * sum(g)``, and their own
formulas give torch's second derivatives: ``softmax_double_backward``'s ``g * gg - sum(out *
g) * gg - g * sum(out * gg)`` and ``-sum(g) * exp(out) * gg`` for the output, the op itself
again (``gg - sum(gg * exp(out))`` for log_softmax's) for the incoming gradient. (The
composites' derivatives, ``gg * (g - sum(g * out)) - g * sum(gg * out)`` and ``-(gg * sum(g))
* exp(out)``, round otherwise: entries torch's formula keeps equal come an ulp apart, which
attention over equal keys amplifies, nn_new seed 334183.)

Their tangents, and logsumexp's, are torch's ``logsumexp_jvp`` of the input x, which forward
mode reads beside what backward saves."""
from __future__ import annotations

from gradkit.autograd.batching import batch_dim
from gradkit.autograd.saved_names import declare_saved_names
from gradkit.ops._op import op
from gradkit.ops.complex import real
from gradkit.ops.elementwise import exp
from gradkit.ops.extremes import amax
from gradkit.ops.reduction import log_softmax, logsumexp, softmax, sum


def _sum_along(a, out, dim: int):
    """sum(a, dim, keepdim=True); a 0-d out has no dim to sum."""
    return sum(a, dim, True) if out.ndim else a


def _kernel_sum(xp, a, out, dim: int):
    """_sum_along as torch's kernels add: along the last dim from the first element (a sum
    of -0s is -0: its gradient under a 0 upstream is +0), along another from +0 (NumPy's)."""
    total = _sum_along(a, out, dim)
    if out.ndim and dim % a.ndim == a.ndim - 1 and not total.all():
        total = xp.where(xp.all((a == 0) & xp.signbit(a), axis=dim, keepdims=True), -0.0, total)
    return total


@op(save=("g", "out"), broadcast=True, node_name="SoftmaxBackwardDataBackward0")
def softmax_backward_data(xp, g, out, *, dim):
    """torch's _softmax_backward_data(g, out, dim): the gradient of softmax's input from the
    gradient g of its output out (g may lead with a batch dim that out lacks)."""
    return out * (g - _kernel_sum(xp, g * out, out, dim))


def _double_backward(gg, g, out, dim):
    return g * gg - _sum_along(out * g, out, dim) * gg - g * _sum_along(out * gg, out, dim)


def _double_tangent(t, g, out, dim):
    return t * (g - _sum_along(g * out, out, dim)) - out * _sum_along(g * t, out, dim)



@op(save=("g", "out"), broadcast=True, node_name="LogSoftmaxBackwardDataBackward0")
def log_softmax_backward_data(xp, g, out, *, dim):
    """torch's _log_softmax_backward_data(g, out, dim): the gradient of log_softmax's input
    from the gradient g of its output out."""
    return g - exp(out) * _kernel_sum(xp, g, out, dim)


for _op in (softmax_backward_data, log_softmax_backward_data):
    _op.torch_input_names = ("grad_output", "output")  # torch's _saved_ names
    declare_saved_names(_op)
softmax_backward_data.defvjp(
    lambda gg, g, out, dim: softmax_backward_data(gg, out, dim=dim),
    lambda gg, g, out, dim: _double_backward(gg, g, out, dim))
softmax_backward_data.defjvp(
    lambda t, g, out, dim: softmax_backward_data(t, out, dim=dim),
    lambda t, g, out, dim: _double_tangent(t, g, out, dim))
softmax.defvjp(lambda g, out, dim, dtype: softmax_backward_data(g, out, dim=batch_dim(dim)))
log_softmax_backward_data.defvjp(
    lambda gg, g, out, dim: gg - _sum_along(gg * exp(out), out, dim),
    lambda gg, g, out, dim: -_sum_along(g, out, dim) * exp(out) * gg)
log_softmax_backward_data.defjvp(
    lambda t, g, out, dim: log_softmax_backward_data(t, out, dim=dim),
    lambda t, g, out, dim: -_sum_along(g, out, dim) * exp(out) * t)
log_softmax.defvjp(lambda g, out, dim, dtype:
                   log_softmax_backward_data(g, out, dim=batch_dim(dim)))


def _logsumexp_tangent(t, x, dim, keepdim: bool):
    """torch's logsumexp_jvp: sum(e * t) / sum(e), e = exp(x - max) shifted by the largest
    real part. A constant tangent passes through exactly: log_softmax's 1 - sum(softmax)
    was an ulp off, and a tangent of 1e308 overflows (inf) as torch's does."""
    e = exp(x - amax(real(x) if x.is_complex() else x, dim, True)) if x.numel() else exp(x)
    return sum(e * t, dim, keepdim) / sum(e, dim, keepdim)


for _op in (softmax, log_softmax):  # forward mode reads the input x too (backward: out only)
    _op.jvp_save_spec = tuple(map(_op._parse_save, ("x", "result")))
logsumexp.defjvp(lambda t, x, out, dim, keepdim: _logsumexp_tangent(t, x, dim, keepdim))
softmax.defjvp(lambda t, x, out, dim, dtype:
               out * (t - _logsumexp_tangent(t, x.to(out.dtype), dim, True)))  # (dtype=: x's)
log_softmax.defjvp(lambda t, x, out, dim, dtype:
                   t - _logsumexp_tangent(t, x.to(out.dtype), dim, True))
