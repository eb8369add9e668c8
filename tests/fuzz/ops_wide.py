"""The wide op table, part 1: public elementwise functions no other table draws (tan, cosh, the
arc* aliases, exp2, log10, fix, ...), their in-place variants (Tensor methods and
nn.functional's ``relu_`` family), binary ones (arctan2, heaviside, gcd / lcm, isin, igamma,
the comparison aliases) and their in-place forms.

An in-place step may first squash its input into (0, 1) with ``sigmoid_`` (``prep``), so
domain-restricted functions (log_, sqrt_, logit_, arccos_) see valid values as often as not;
integer-only functions (gcd, lcm, bincount) read ``round(4 x)`` as int64 and add the result
to ``x``, so a program goes on differentiating through it.
"""
from __future__ import annotations

from .ops_breadth import _SCALARS
from .ops_core import OpSpec


def _ints(lib, t):
    """``round(4 t)`` as int64 (the real part of a complex ``t``), detached."""
    t = t.detach()
    return (t.real if t.is_complex() else t).mul(4).round().to(lib.int64)


UNARY = {
    "tan": lambda lib, x: lib.tan(x),
    "cosh": lambda lib, x: x.cosh(),
    "arccos": lambda lib, x: lib.arccos(x),
    "arcsin": lambda lib, x: x.arcsin(),
    "arctan": lambda lib, x: lib.arctan(x),
    "exp2": lambda lib, x: lib.exp2(x),
    "special_exp2": lambda lib, x: lib.special.exp2(x),
    "log10": lambda lib, x: lib.log10(x),
    "fix": lambda lib, x: lib.fix(x * 2.5),
    "negative": lambda lib, x: lib.negative(x),
    "isreal": lambda lib, x: x * lib.isreal(x),
    "clip": lambda lib, x: lib.clip(x, -0.5, 0.25),
    "clip_min": lambda lib, x: x.clip(min=0.1),
}

# in-place unary ops: Tensor methods, called with no argument
INPLACE_METHODS = ("sin_", "cos_", "tan_", "cosh_", "sinh_", "sqrt_", "rsqrt_", "reciprocal_",
                   "log_", "log1p_", "log2_", "log10_", "exp2_", "expm1_", "erf_", "erfc_",
                   "i0_", "frac_", "floor_", "ceil_", "round_", "trunc_", "fix_", "square_",
                   "sinc_", "logit_", "nan_to_num_", "relu_", "negative_", "deg2rad_",
                   "rad2deg_", "arccos_", "arcsin_", "arctan_")

# in-place unary ops with arguments, and nn.functional's in-place activations
INPLACE_CALLS = {
    "clamp_min_": lambda lib, x, s: x.clamp_min_(s),
    "clamp_max_": lambda lib, x, s: x.clamp_max_(s),
    "clip_": lambda lib, x, s: x.clip_(-abs(s), abs(s) + 0.25),
    "round_decimals_": lambda lib, x, s: x.round_(decimals=1),
    "logit_eps_": lambda lib, x, s: x.logit_(0.2),
    "nan_to_num_given_": lambda lib, x, s: x.nan_to_num_(0.5, 2.0, -3.0),
    "torch_relu_": lambda lib, x, s: lib.relu_(x),
    "f_relu_": lambda lib, x, s: lib.nn.functional.relu_(x),
    "celu_": lambda lib, x, s: lib.nn.functional.celu_(x, 0.5),
    "selu_": lambda lib, x, s: lib.nn.functional.selu_(x),
    "rrelu_eval_": lambda lib, x, s: lib.nn.functional.rrelu_(x, 0.1, 0.3, training=False),
    "threshold_": lambda lib, x, s: lib.nn.functional.threshold_(x, 0.1, s),
    "torch_selu_": lambda lib, x, s: lib.selu_(x),
    "torch_celu_": lambda lib, x, s: lib.celu_(x),
}


def _inplace_unary(lib, x, name, prep, s):
    if prep:
        x.sigmoid_()
    if name in INPLACE_CALLS:
        return INPLACE_CALLS[name](lib, x, s)
    return getattr(x, name)()


def _inplace_params(draw, shapes):
    return {"name": draw.choice(INPLACE_METHODS + tuple(INPLACE_CALLS)),
            "prep": draw.boolean(), "s": draw.choice(_SCALARS)}


BINARY = {
    "arctan2": lambda lib, x, y: lib.arctan2(x, y),
    "heaviside": lambda lib, x, y: lib.heaviside(x, y),
    "heaviside_self": lambda lib, x, y: x.heaviside(y.to(x.dtype)) * x,
    "gcd": lambda lib, x, y: x + lib.gcd(_ints(lib, x), _ints(lib, y)),
    "lcm": lambda lib, x, y: x + _ints(lib, x).lcm(_ints(lib, y)),
    "gcd_": lambda lib, x, y: x + _ints(lib, x).gcd_(_ints(lib, y)),
    "lcm_": lambda lib, x, y: x + lib.lcm_(_ints(lib, x), _ints(lib, y)),
    "isin": lambda lib, x, y: x * lib.isin(_ints(lib, x), _ints(lib, y)),
    "isin_invert": lambda lib, x, y: x * lib.isin(x.detach().round(), y.detach().round(),
                                                  invert=True),
    "isin_scalar": lambda lib, x, y: x * lib.isin(_ints(lib, x), 2),
    "true_divide": lambda lib, x, y: lib.true_divide(x, y),
    "true_divide_scalar": lambda lib, x, y: x.true_divide(2.5),
    "greater": lambda lib, x, y: x * lib.greater(x, y),
    "less_equal": lambda lib, x, y: x * x.less_equal(y),
    "greater_scalar": lambda lib, x, y: x * lib.greater(x, 0.25),
    "igamma": lambda lib, x, y: lib.igamma(x.abs() + 0.5, y.abs() + 0.5),
    "igammac": lambda lib, x, y: lib.igammac(x.detach().abs() + 0.5, y.abs() + 0.5),
    "special_gammaincc": lambda lib, x, y: lib.special.gammaincc(x, y),
    "ldexp": lambda lib, x, y: lib.ldexp(x, _ints(lib, y)),
}

# in-place binary ops on x itself (x's dtype must hold the result, as torch checks)
INPLACE_BINARY = {
    "xlogy_": lambda lib, x, y: x.xlogy_(y),
    "xlogy_scalar_": lambda lib, x, y: x.xlogy_(2.5),
    "arctan2_": lambda lib, x, y: x.arctan2_(y),
    "heaviside_": lambda lib, x, y: x.heaviside_(y),
    "ldexp_": lambda lib, x, y: x.ldexp_(_ints(lib, y)),
    "igamma_": lambda lib, x, y: x.igamma_(y),
    "igammac_": lambda lib, x, y: x.igammac_(y),
    "true_divide_": lambda lib, x, y: x.true_divide_(y),
    "greater_": lambda lib, x, y: x.greater_(y),
    "less_equal_": lambda lib, x, y: x.less_equal_(y),
    "gcd_int_": lambda lib, x, y: x.gcd_(y),
    "lcm_int_": lambda lib, x, y: x.lcm_(y),
    "clip_tensor_": lambda lib, x, y: x.clip_(y, None),
    "clamp_min_tensor_": lambda lib, x, y: x.clamp_min_(y),
    "clamp_max_tensor_": lambda lib, x, y: x.clamp_max_(y),
}


def _into(lib, x, y, target, name, prep, s):
    """An in-place op of the tables above written into a clone of x, or into a slice or a
    transposed view of one (a leaf that requires grad refuses writes): the clone is the
    result, so the gradient goes back through the write into its view."""
    base = x.clone()
    dest = base if not base.dim() or target == "clone" else \
        base[..., ::2] if target == "slice" else base.transpose(0, -1)
    if name in INPLACE_BINARY:
        INPLACE_BINARY[name](lib, dest, y)
    else:
        _inplace_unary(lib, dest, name, prep, s)
    return base


def _into_params(draw, shapes):
    names = INPLACE_METHODS + tuple(INPLACE_CALLS) + tuple(INPLACE_BINARY)
    return {"target": draw.choice(("clone", "slice", "transpose")), "name": draw.choice(names),
            "prep": draw.boolean(), "s": draw.choice(_SCALARS)}


def _table(table):
    return lambda draw, shapes: {"name": draw.choice(tuple(table))}


WIDE_ELEM_OPS: dict[str, OpSpec] = {
    "w_unary": OpSpec(1, lambda lib, x, name: UNARY[name](lib, x), _table(UNARY)),
    "w_unary_": OpSpec(1, _inplace_unary, _inplace_params, inplace=True),
    "w_binary": OpSpec(2, lambda lib, x, y, name: BINARY[name](lib, x, y), _table(BINARY)),
    "w_binary_": OpSpec(2, lambda lib, x, y, name: INPLACE_BINARY[name](lib, x, y),
                        _table(INPLACE_BINARY), inplace=True),
    "w_into": OpSpec(2, _into, _into_params),
}
