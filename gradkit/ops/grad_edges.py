"""Backward helpers of the nn.functional ops: an edge to x whose derivative is zero (torch's
``threshold_backward`` & co.), in-place variants under torch's in-place node names, and
torch's errors for derivatives it does not have (second order, forward AD)."""
from __future__ import annotations

from gradkit.ops import _dispatch
from gradkit.ops._op import Op, op
from gradkit.ops.inplace import inplace as write_inplace
from gradkit.ops.piecewise import zeros_like


def call_or_write(input, out_of_place, inplace: bool, *args):
    """``out_of_place(input, *args)``, written into ``input`` when ``inplace``."""
    return write_inplace(input, out_of_place, *args) if inplace else out_of_place(input, *args)


@op(save=("x", "factor"), elementwise=True)
def gradient_edge(xp, g, x, factor, node="ThresholdBackwardBackward0"):
    """g where ``factor`` (a bool array from x), else 0; or g * factor (a float array): the
    backward of an op whose slope does not depend on x smoothly (torch's hardtanh_backward,
    threshold_backward, rrelu_with_noise_backward). As torch's, it keeps an edge to x whose
    derivative is zero: a second backward reaches x and gives zeros."""
    if factor.dtype.kind == "b":
        return xp.where(factor, g, 0).astype(g.dtype, copy=False)
    return xp.asarray(g * factor)  # an array, not a NumPy scalar, for 0-d operands


gradient_edge.defvjp(lambda gg, x, factor, node: gradient_edge(gg, x, factor, node=node),
                      lambda gg, x, factor, node: zeros_like(x), None)


@gradient_edge.defjvp_all
def _gradient_edge_jvp(tangents, x, factor, node):
    """The mask applied to g's tangent. torch's threshold_backward formula is
    zeros_like(self_t) + threshold_backward(g_t): a dual x alone gives zeros, not no tangent,
    and a -0.0 of g_t turns +0.0 (hardtanh's and the shrinks' have no such term)."""
    t_g, t_x = tangents[:2]
    out = None if t_g is None else gradient_edge(t_g, x, factor, node=node)
    if node != "ThresholdBackwardBackward0":
        return out
    return (None if t_x is None else zeros_like(t_x)) if out is None else out + 0.0


gradient_edge.node_name_rule = lambda params, arrays: params["node"]


@op(save="x")
def reads_input(xp, g, x, _node="ReadsInputBackward0"):
    """g itself, as a node that reads x: torch's pooling and padding backwards take the input
    and differentiate as zeros_like(self) there, so with create_graph the gradient requires
    grad and a second derivative through it is 0 (NaN beside an inf; breadth seed 15309).
    ``_node``: the name of torch's node there, its first-order node's ``...BackwardBackward0``
    (``backward_of``)."""
    return g.copy()


reads_input.defvjp(lambda gg, x, _node: gg, lambda gg, x, _node: zeros_like(x))
reads_input.defjvp(lambda t, x, _node: t, lambda t, x, _node: zeros_like(t))
reads_input.node_name_rule = lambda params, arrays: params["_node"]


def sum_of_defined(*terms):
    """The sum of the terms that are not None (at least one is): torch's formulas drop the
    terms of an undefined tangent or gradient, where a 0 would make 0 * inf = NaN."""
    defined = [term for term in terms if term is not None]
    total = defined[0]
    for term in defined[1:]:
        total = total + term
    return total


def backward_of(node_name: str) -> str:
    """The name of torch's node of the backward of the node ``node_name``
    (``MaxPool2DWithIndicesBackward0`` -> ``MaxPool2DWithIndicesBackwardBackward0``)."""
    return node_name.replace("Backward0", "BackwardBackward0")


@op(save="x")
def input_edge(xp, x, _node="ReadsInputBackward0"):
    """A copy of x whose gradient is ``reads_input``'s (named ``_node``): for the ops composed
    of others (average pooling, reflection and replication padding) whose torch backward reads
    the input with a zero derivative."""
    return x.copy(order="K")  # in x's layout: a channels-last input stays one


input_edge.defvjp(lambda g, x, _node: reads_input(g, x, _node=_node))
input_edge.defjvp(lambda t, x, _node: t)


@op(save="x")
def kept_for_backward(xp, x):
    """A copy of x whose node saves x, as a fused torch kernel's node saves its input, so a
    write into x before backward is refused; its gradient passes through unchanged (for the
    normalizations composed of other ops; breadth seed 85905)."""
    return x.copy(order="K")


def _through_saved(g, x):
    """g itself; reading x unpacks the saved input, whose version the unpacking checks (a
    rule that does not read a saved value does not keep it)."""
    _ = x
    return g


kept_for_backward.defvjp(_through_saved)
kept_for_backward.defjvp(_through_saved)
kept_for_backward.batchable = True


def defmask_edge(op_, passes) -> None:
    """Derivative 1 where ``passes(x, **params)``, else 0, through ``gradient_edge``."""
    node = backward_of(op_.node_name)
    op_.defvjp(lambda g, x, **params: gradient_edge(g, x, passes(x, **params), node=node))
    op_.defjvp(lambda t, x, **params: gradient_edge(t, x, passes(x, **params), node=node))
    op_.batchable = True


def in_place_variant(op_, node_name: str, save="x", slope=None, refuse=None):
    """``op_`` under the node name of torch's in-place overload (``EluBackward1``). Torch's
    in-place kernels save their result: with ``save="result"``, ``slope(g, result, **params)``
    is the gradient of each input (a tuple) from it, torch's formula. ``refuse(**params)``:
    the message of torch's backward error for parameters its in-place formula cannot take."""
    variant = Op(op_.forward, name=op_.name, save=save, node_name=node_name, elementwise=True)
    vjps = op_.vjps if slope is None else slope
    jvps = op_.jvps if slope is None else slope  # elementwise: the same map on tangents
    if refuse is not None:
        def refusing(rule):
            def checked(g, *saved, **params):
                message = refuse(**params)
                if message:
                    raise RuntimeError(message)
                return rule(g, *saved, **params)
            return None if rule is None else checked
        vjps = tuple(refusing(rule) for rule in vjps)
    variant.defvjp(*vjps)
    variant.defjvp(*jvps)
    variant.batchable = True
    return variant


LEAKY_RELU_EXTRA = (" File an issue at https://github.com/pytorch/pytorch if you do require "
                    "supporting in-place leakRelu backward calculation with negative slope")


def negative_slope_message(name: str, extra: str = "") -> str:
    """torch's backward error for an in-place ``name`` run with a negative slope."""
    return (f"In-place {name} backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            f"slope, please call out-of-place version instead.{extra}")


def negative_slope_refusal(name: str, parameter: str, extra: str = ""):
    """torch's backward error for an in-place elu/leaky_relu with a negative ``parameter``."""
    def refuse(**params):
        if params[parameter] < 0:
            return negative_slope_message(name, extra)
        return None
    return refuse


def no_derivative(name: str):
    """A vjp (or jvp) rule for a backward torch cannot differentiate: its error, raised when
    reached."""
    def refuse(g, *saved, **params):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return refuse


def no_forward_ad(name: str, brief: bool = False):
    """A jvp rule for an op torch has no forward-mode formula for: torch's error (``brief``:
    its shorter text, of ops whose formula an overload lacks, remainder(Scalar, Tensor))."""
    def refuse(t, *saved, **params):
        if brief:
            raise NotImplementedError(f"Trying to use forward AD with {name} that does not "
                                      "support it.")
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/"
            "pytorch/issues/new?template=feature-request.yml so that we can prioritize its "
            "implementation or submit a PR adding the implementation to derivatives.yaml")
    return refuse


def has_tangents(inputs: tuple) -> bool:
    """Whether an input carries a tangent of forward AD's open level."""
    return _dispatch._forward_ad is not None and _dispatch._forward_ad.has_tangents(inputs)


def refuse_tangents(name: str, inputs: tuple) -> None:
    """torch's error for an op without a forward formula (a composite here) whose inputs carry
    tangents: raised once its forward has run, as torch's."""
    if has_tangents(inputs):
        no_forward_ad(name)(None)
