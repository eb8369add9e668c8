"""tanh's and sigmoid's backward as ops of their own, as torch's ``tanh_backward`` and
``sigmoid_backward`` (nodes ``TanhBackwardBackward0``, ``SigmoidBackwardBackward0``, saving
``grad_output`` and ``output``) when a graph is recorded, so that a second derivative has
torch's nodes and formulas: ``-2 out g gg`` and ``g (1 - 2 out) gg`` for the output, the op
itself again for the incoming gradient. A plain backward computes the same kernel on arrays,
with no op call (tanh is on the hot path of every RNN)."""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.autograd.saved_names import declare_saved_names
from gradkit.ops._op import op
from gradkit.ops.activations import sigmoid
from gradkit.ops.complex import conj
from gradkit.ops.elementwise import tanh
from gradkit.ops.piecewise import first_term_materialized


def _is_real(array) -> bool:
    return array.dtype.kind != "c"


def tanh_kernel(g, out):
    """torch's tanh_backward kernel: g (1 - out²), conjugated for complex (torch fuses 1 - out²
    into one fma; NumPy rounds the square first: an ulp apart at times)."""
    slope = 1 - out * out
    return g * (slope if _is_real(slope) else slope.conj())


def sigmoid_kernel(g, out):
    """torch's sigmoid_backward kernel: g (1 - out) out in that order (conjugated for
    complex)."""
    if _is_real(out):
        return g * (1 - out) * out
    return g * ((1 - out) * out).conj()


@op(save=("g", "out"), broadcast=True, batchable=True, node_name="TanhBackwardBackward0")
def tanh_backward(xp, g, out):
    """The gradient of tanh's input from the gradient g of its output out."""
    return tanh_kernel(g, out)


@op(save=("g", "out"), broadcast=True, batchable=True, node_name="SigmoidBackwardBackward0")
def sigmoid_backward(xp, g, out):
    """The gradient of sigmoid's input from the gradient g of its output out."""
    return sigmoid_kernel(g, out)


for _op in (tanh_backward, sigmoid_backward):
    _op.torch_input_names = ("grad_output", "output")  # torch's _saved_ names
    declare_saved_names(_op)
# (the kernels are anti-holomorphic in out: its gradient and tangent take conj(gg), conj(t))
tanh_backward.defvjp(lambda gg, g, out: tanh_backward(gg, conj(out)),
                     lambda gg, g, out: conj(gg) * (-2 * conj(out) * g))
sigmoid_backward.defvjp(lambda gg, g, out: sigmoid_backward(gg, conj(out)),
                        lambda gg, g, out: conj(gg) * g * (-2 * conj(out) + 1))
# torch's forward formulas backward(t_g, out) + out's term: a missing t_g is materialized
tanh_backward.defjvp_all(first_term_materialized(
    lambda t, g, out: tanh_backward(t, out), lambda t, g, out: conj(t) * (-2 * conj(out) * g)))
sigmoid_backward.defjvp_all(first_term_materialized(
    lambda t, g, out: sigmoid_backward(t, out),
    lambda t, g, out: conj(t) * g * (-2 * conj(out) + 1)))


def _recorded_or_kernel(backward, kernel):
    """The vjp of tanh or sigmoid: the op where its inputs are tensors (a graph is being
    recorded), the kernel on arrays otherwise."""
    def vjp(g, out):
        if isinstance(g, Tensor) or isinstance(out, Tensor):
            return backward(g, out)
        return kernel(g, out)
    return vjp


for _forward, _backward, _kernel in ((tanh, tanh_backward, tanh_kernel),
                                     (sigmoid, sigmoid_backward, sigmoid_kernel)):
    _forward.defvjp(_recorded_or_kernel(_backward, _kernel))
    _forward.batchable = True  # g * f'(out) broadcasts over a leading batch dim
    # torch's auto_element_wise: the backward of conj(t), conjugated
    _forward.defjvp(lambda t, out, backward=_backward: conj(backward(conj(t), out)))
