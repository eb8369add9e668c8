"""torch's top-level in-place functions (``torch.abs_(x)``, ``torch.clamp_(x, 0, 1)``): each
is the Tensor method of its name, ``x.abs_()``, so the in-place mechanism is the methods'."""
from __future__ import annotations

from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.int_arguments import function_form

# the names torch 2.13 has at top level (``hasattr(torch, name)``) whose method gradkit has
TOP_LEVEL_NAMES = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
    "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_",
    "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_",
    "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
    "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_")  # (relu_: ops.activations_inplace)


def _calling_method(name: str) -> Callable:
    def function(input, *args, **kwargs):  # noqa: A002 - torch's name
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        try:
            return getattr(input, name)(*args, **kwargs)
        except TypeError as error:  # the method's words, counting input as the function does
            raise function_form(error, (input,), method=True) from None
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``: the in-place op, written into ``input``."
    return function


FUNCTIONS = {name: _calling_method(name) for name in TOP_LEVEL_NAMES if hasattr(Tensor, name)}
