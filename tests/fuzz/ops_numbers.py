"""Breadth ops for the number arguments (lane fuzzm): ``div``'s ``rounding_mode`` (tensor,
number and 0-d tensor divisors, in place too), and a number parameter given a tensor, which
torch's parser reads as its number only when 0-d and not requiring grad (an integer one for
an int parameter), its TypeError otherwise; one of a complex dtype is read as its real part
by a float parameter.
"""
from __future__ import annotations

from .ops_core import OpSpec

_MODES = (None, "trunc", "floor")
_DIVISORS = (2, -0.5, 0, 3.0, -2)


def _div_params(draw, shapes):
    return {"mode": draw.choice(_MODES), "form": draw.choice(("tensor", "number", "0d")),
            "s": draw.choice(_DIVISORS)}


def _divisor(lib, y, form, s):
    """The divisor: the other tensor, a Python number or that number as a 0-d tensor."""
    return y if form == "tensor" else s if form == "number" else lib.tensor(s)


def _div(lib, x, y, mode, form, s):
    return lib.div(x, _divisor(lib, y, form, s), rounding_mode=mode)


def _div_(lib, x, y, mode, form, s):
    return x.div_(_divisor(lib, y, form, s), rounding_mode=mode)


def _nnf(lib):
    return lib.nn.functional


# a number parameter of each kind (Number, float, int), given ``t``
_NUMBER_CALLS = {
    "add_alpha": lambda lib, x, t: lib.add(x, x, alpha=t),
    "leaky_relu": lambda lib, x, t: _nnf(lib).leaky_relu(x, t),
    "elu": lambda lib, x, t: _nnf(lib).elu(x, alpha=t),
    "softplus": lambda lib, x, t: _nnf(lib).softplus(x, beta=t),
    "hardtanh": lambda lib, x, t: _nnf(lib).hardtanh(x, -3.0, t),
    "threshold": lambda lib, x, t: _nnf(lib).threshold(x, t, 0.5),
    "addcmul": lambda lib, x, t: lib.addcmul(x, x, x, value=t),
    "full_like": lambda lib, x, t: lib.full_like(x, t) * x,
    "pad": lambda lib, x, t: _nnf(lib).pad(x, (1, 1), value=t),
    "nan_to_num": lambda lib, x, t: lib.nan_to_num(x, t, 1e3, -1e3),
    "logit": lambda lib, x, t: lib.logit(x.real.sigmoid(), t * 0.1),
    "layer_norm": lambda lib, x, t: _nnf(lib).layer_norm(x, x.shape[-1:], eps=t),
    "huber": lambda lib, x, t: _nnf(lib).huber_loss(x, x * 0.5, delta=t),
    "std": lambda lib, x, t: x.std(correction=t),
    "renorm": lambda lib, x, t: x.reshape(1, -1).renorm(2, 0, t),
    "polygamma": lambda lib, x, t: lib.polygamma(t, x.real.abs() + 1),
    "isclose": lambda lib, x, t: lib.isclose(x, x * 1.001, rtol=t) * x,
}
# how the number is given: plain 0-d tensors, one made from the graph (requires grad where
# its source does: torch's TypeError), one detached from it, a one-element vector
_GIVEN = ("0d", "0d_int", "0d_complex", "graph", "detached", "vector")


def _number_params(draw, shapes):
    return {"call": draw.choice(tuple(_NUMBER_CALLS)), "given": draw.choice(_GIVEN),
            "v": draw.choice((0.5, 2, 1.5, -1.0))}


def _given(lib, y, given, v):
    if given == "0d":
        return lib.tensor(float(v))
    if given == "0d_int":
        return lib.tensor(int(v))
    if given == "0d_complex":
        return lib.tensor(complex(v))
    if given == "vector":
        return lib.tensor([float(v)])
    from_graph = y.real.sum() * 0 + v
    return from_graph.detach() if given == "detached" else from_graph


def _number_arg(lib, x, y, call, given, v):
    return _NUMBER_CALLS[call](lib, x, _given(lib, y, given, v))


NUMBER_OPS: dict[str, OpSpec] = {
    "num_div": OpSpec(2, _div, _div_params),
    "num_div_": OpSpec(2, _div_, _div_params, inplace=True),
    "num_param": OpSpec(2, _number_arg, _number_params),
}
