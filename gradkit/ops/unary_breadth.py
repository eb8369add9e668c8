"""More elementwise ops of one input: deg2rad, rad2deg, frexp, positive, the one-sided clamps
clamp_min/clamp_max, and the predicates signbit, isneginf, isposinf, isreal and isin."""
from __future__ import annotations

import math

import numpy as np

from gradkit import return_types
from gradkit._tensor import Tensor
from gradkit.autograd.saved_names import declare_saved_names
from gradkit.memory_format import preserved_copy
from gradkit.int_arguments import invalid_combination
from gradkit.number_arguments import python_number, reads_as_number
from gradkit.ops._op import op
from gradkit.ops.clamp import clamped_by_numbers, clamped_by_tensors
from gradkit.ops.elementwise import exp2
from gradkit.ops.in_place_names import in_place_form
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.piecewise import defmask, where
from gradkit.ops.promotion import PY_SCALARS, as_dtype, category, result_type
from gradkit.ops.unary import unary
from gradkit.ops.unary_helpers import (
    CLAMP_COMPLEX, c_type_name, fixed_error, half_in_float, kernel_error, require_tensors,
    scalar_type_name)
from gradkit.ops.result_layout import empty_like_layout

_DEGREES = 180.0 / math.pi


def _angle_conversion(name: str, factor: float, node_name: str):
    def forward(xp, x):
        return x * as_dtype(xp, factor, x.dtype)
    forward.__name__ = name
    forward.__doc__ = f"x times {factor!r} elementwise (integers in the default float dtype)."
    declared = unary(save=(), floating=True, method=True, inplace=True, node_name=node_name,
                     complex_error=fixed_error(
                         RuntimeError, f"{name} is not supported for complex tensors."))(
        half_in_float(forward))  # float16 times the factor in float32, as torch's
    declared.defvjp(lambda g: g * factor)
    declared.defjvp(lambda t: t * factor)
    declared.batchable = True
    return declared


deg2rad = _angle_conversion("deg2rad", 1 / _DEGREES, "Deg2RadBackward0")
rad2deg = _angle_conversion("rad2deg", _DEGREES, "Rad2DegBackward0")

frexp_result = return_types.frexp


@op(save="result1", outputs=2, differentiable_outputs=(0,), name="frexp")
@empty_like_layout  # (torch's frexp: empty_like(x) for both)
def _frexp(xp, x):
    if x.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = xp.frexp(x)
    return mantissa, exponent.astype(np.int32)


# torch: grad / exponent.exp2(); the exponent has no tangent
_frexp.defvjp(lambda g, exponent: g / exp2(exponent))
_frexp.defjvp_all(lambda tangents, exponent: (tangents[0] / exp2(exponent), None))
_frexp.torch_result_names = ("mantissa", "exponent")  # node._saved_exponent, as torch's
declare_saved_names(_frexp)


@tensor_method()
def frexp(input: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002 - torch's name
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1
    (0, inf and NaN are their own mantissa, with exponent 0); the exponent is int32."""
    return frexp_result(*_frexp(input))


@tensor_method()
def positive(input: Tensor) -> Tensor:  # noqa: A002 - torch's name
    """``+input``: the tensor itself (torch refuses bool tensors)."""
    require_tensors("positive", input)
    if input.dtype.np.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _bound_op(name: str, lower: bool, node: str):
    """clamp_min (``lower``) or clamp_max with a number: clamp's forward, torch's node name."""

    def forward(xp, x, bound=None):
        return clamped_by_numbers(xp, x, *((bound, None) if lower else (None, bound)),
                                  f"{name}_scalar_cpu")
    forward.__name__ = name
    declared = unary(save="x", node_name=f"{node}Backward0")(forward)
    defmask(declared, (lambda x, bound: x >= bound) if lower else (lambda x, bound: x <= bound))
    return declared


def _tensor_bound_op(name: str, lower: bool, node: str):
    """clamp_min (``lower``) or clamp_max with a tensor bound; the bound gets the gradient
    where x lies beyond it (torch's formulas)."""
    def forward(xp, x, bound):  # torch's maximum/minimum kernels: bools too
        return clamped_by_tensors(xp, x, *((bound, None) if lower else (None, bound)))
    forward.__name__ = name
    declared = op(save=("x", "bound"), broadcast=True, batchable=True,
                  node_name=f"{node}Backward1")(forward)
    # torch: x's where x >= min (x <= max), the bound's where x < min (x > max); NaN: neither
    inside = (lambda x, b: x >= b) if lower else (lambda x, b: x <= b)
    beyond = (lambda x, b: x < b) if lower else (lambda x, b: x > b)
    declared.defvjp(lambda g, x, b: where(inside(x, b), g, 0.0),
                    lambda g, x, b: where(beyond(x, b), g, 0.0))

    def jvp(tangents, x, b):  # torch's where(x >= min, t_x, t_min): a NaN side takes t_min
        t_x, t_bound = (0.0 if t is None else t for t in tangents)
        return where(inside(x, b), t_x, t_bound)
    declared.defjvp_all(jvp)
    return declared


_BOUNDS = {(name, lower): (_bound_op(name, lower, node), _tensor_bound_op(name, lower, node))
           for name, lower, node in (("clamp_min", True, "ClampMin"),
                                     ("clamp_max", False, "ClampMax"))}


def _one_sided(name: str, lower: bool, input, bound, form=None):
    """clamp_min/clamp_max by a number or a tensor bound; ``form``: the op's form to run (its
    in_place_form for clamp_min_/clamp_max_), default the op itself."""
    bound = python_number(bound)
    if bound is None or not (type(bound) in PY_SCALARS or hasattr(bound, "_data")):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(Tensor, {type(bound).__name__}), but expected one of:")
    numbers, tensors = _BOUNDS[name, lower] if form is None else map(form, _BOUNDS[name, lower])
    if type(bound) in PY_SCALARS:
        if isinstance(bound, complex) or input.is_complex():
            raise CLAMP_COMPLEX(None)
        return numbers(input, bound)
    dtype = result_type(input._data, bound._data)
    if dtype.kind == "c":  # torch's tensor bounds are maximum/minimum kernels
        raise kernel_error("maximum_cpu" if lower else "minimum_cpu")(np.empty(0, dtype))
    return tensors(input, bound)


def _method_lists_no_input(function):
    function.lists_input_in_function_form = True  # x.clamp_min(None): "got (NoneType)"
    return function


@tensor_method()
@_method_lists_no_input
def clamp_min(input: Tensor, min: Tensor | float) -> Tensor:  # noqa: A002
    """``clamp(input, min=min)``: the bound a number or a broadcasting tensor."""
    return _one_sided("clamp_min", True, input, min)


@tensor_method()
@_method_lists_no_input
def clamp_max(input: Tensor, max: Tensor | float) -> Tensor:  # noqa: A002
    """``clamp(input, max=max)``: the bound a number or a broadcasting tensor."""
    return _one_sided("clamp_max", False, input, max)


def _in_place(one_sided, name: str, lower: bool):
    """x.clamp_min_(b) / x.clamp_max_(b) (``name``: its bound's keyword, min or max): torch's
    structured kernel of a number bound names the target's C type when the result cannot be
    written into it ("... output type long int"), the maximum/minimum kernel of a tensor bound
    its ScalarType (``inplace``'s own message)."""
    def checked(input, *args, **kwargs):  # noqa: A002
        if kwargs.keys() - {name} or len(args) + len(kwargs) != 1:
            raise invalid_combination(f"{one_sided.__name__}_", args, kwargs)
        bound = args[0] if args else kwargs[name]
        result = _one_sided(one_sided.__name__, lower, input, bound, in_place_form)
        if type(bound) in PY_SCALARS and \
                category(result._data.dtype) > category(input._data.dtype):
            raise RuntimeError(f"result type {scalar_type_name(result._data)} can't be cast to "
                               f"the desired output type {c_type_name(input._data)}")
        return result
    return checked


for _function, _bound, _lower in ((clamp_min, "min", True), (clamp_max, "max", False)):
    register(_in_place(_function, _bound, _lower), _function.__name__, False, inplace=True)


@op(method=True)
def signbit(xp, x):
    """True where the sign bit is set (-0.0, negative numbers, NaN with the bit)."""
    require_tensors("signbit", x)
    if x.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    return xp.signbit(x) if x.dtype.kind != "b" else xp.zeros(x.shape, bool)


def _infinity_test(name: str, sign: float):
    def forward(xp, x):
        require_tensors(name, x)
        if x.dtype.kind == "c":
            raise RuntimeError(f"{name} does not support complex inputs.")
        if x.dtype.kind != "f":
            return xp.zeros(x.shape, bool)
        return x == sign * math.inf
    forward.__name__ = name
    forward.__doc__ = f"True where x is {'-' if sign < 0 else '+'}inf."
    return op(method=True)(forward)


isneginf = _infinity_test("isneginf", -1.0)
isposinf = _infinity_test("isposinf", 1.0)


@op(method=True)
def isreal(xp, x):
    """True where x has no imaginary part (everywhere for real dtypes)."""
    require_tensors("isreal", x)
    if x.dtype.kind == "c":
        return x.imag == 0
    out = preserved_copy(xp, x, bool)  # torch's ones_like(x): laid out as x
    out[...] = True
    return out


@op()
def _isin(xp, elements, test_elements, assume_unique=False, invert=False):
    for operand in (elements, test_elements):  # each tensor's own dtype, elements first
        if type(operand) is bool or getattr(operand, "dtype", np.dtype(float)).kind in "bc":
            raise RuntimeError("Unsupported input type encountered for isin(): " + (
                "Bool" if type(operand) is bool else scalar_type_name(operand)))
    dtype = result_type(elements, test_elements)
    elements = as_dtype(xp, elements, dtype)
    tests = as_dtype(xp, test_elements, dtype).ravel()
    found = xp.isin(elements, tests, assume_unique=assume_unique)
    return ~found if invert else found


# torch's three signatures: (parameter names, whether each takes a tensor or a number)
_ISIN_SIGNATURES = ((("elements", "test_elements"), (True, True)),
                    (("element", "test_elements"), (False, True)),
                    (("elements", "test_element"), (True, False)))


def _isin_operand(value, tensor: bool) -> bool:
    if isinstance(value, Tensor):  # a 0-d one reads as a Number too
        return tensor or reads_as_number(value)
    return not tensor and (type(value) in PY_SCALARS or isinstance(value, (np.number, np.bool_)))


def _isin_bind(args: tuple, keywords: dict) -> tuple | None:
    """(elements, test_elements) of the signature the arguments match, None if none does."""
    for names, tensors in _ISIN_SIGNATURES:
        if len(args) > 2 or any(name in keywords for name in names[:len(args)]) or \
                set(keywords) - set(names):
            continue
        bound = dict(zip(names, args)) | keywords
        if len(bound) == 2 and all(map(_isin_operand, (bound[n] for n in names), tensors)):
            return tuple(python_number(bound[n]) for n in names)
    return None


def isin(*args, **kwargs) -> Tensor:
    """``isin(elements, test_elements, *, assume_unique=False, invert=False)``: True where an
    element of ``elements`` is in ``test_elements``, compared in their promoted dtype. Either
    may be a number (torch's ``element=``/``test_element=`` spellings), not both; ``invert``
    gives the complement."""
    options = {k: kwargs[k] for k in ("assume_unique", "invert") if k in kwargs}
    operands = {k: v for k, v in kwargs.items() if k not in options}
    bound = _isin_bind(args, operands)
    if bound is None or any(type(v) is not bool for v in options.values()):
        listing = "".join(
            f" * ({'Tensor' if tensors[0] else 'Number'} {names[0]}, "
            f"{'Tensor' if tensors[1] else 'Number'} {names[1]}, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)\n" for names, tensors in _ISIN_SIGNATURES)
        raise TypeError(f"{invalid_combination('isin', args, kwargs)}\n{listing}")
    return _isin(*bound, **options)
