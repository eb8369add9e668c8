"""The second torch-breadth batch (copysign ... corrcoef: gradkit/ops/binary_breadth.py,
unary_breadth.py, gamma.py, statistics.py, logdet) against torch on the same programs: edge
values (NaN, inf, -0.0, poles, ties), dtype promotion with Python numbers, integers and bools,
0-d and 0-size inputs, in-place forms (methods and torch's top-level ``abs_`` & co.), node
names, warnings and errors (type and message). Values and gradients on ordinary inputs,
gradcheck and gradgradcheck are the op table's (tests/op_db.py)."""
import math
import warnings

import numpy as np
import pytest

import gradkit
from gradkit._inplace_functions import TOP_LEVEL_NAMES
from test_ops_elem import _cases, _t  # the first batch's program helpers
from test_torch_numerics import assert_same_as_torch, with_grads

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _second_derivative(fn, values):
    """(f, f', f'') of fn at values: double backward through the op's derivative."""
    def program(m):
        x = _t(m, values).requires_grad_()
        out = fn(m, x)
        (first,) = m.autograd.grad(out.sum(), x, create_graph=True)
        (second,) = m.autograd.grad(first.sum(), x)
        return out, first, second
    return program


SIGNED = [1.5, -2.0, 0.0, -0.0, INF, -INF, NAN]
POLES = [0.0, -0.0, -1.0, -2.0, -2.5, 1.0, 2.0, 1e-8, INF, -INF, NAN, 30.0, 1e20]

EDGE_VALUES = [
    ("copysign_zeros_and_nan", with_grads(lambda m, x, y: m.copysign(x, y), SIGNED,
                                          [-1.0, 1.0, -0.0, 0.0, -1.0, 1.0, -1.0])),
    ("copysign_number", with_grads(lambda m, x: m.copysign(x, -0.0), SIGNED)),
    ("fmax_nan_and_ties", with_grads(lambda m, x, y: m.fmax(x, y), [1.0, 2.0, NAN, NAN, 0.0, -0.0],
                                     [1.0, NAN, 3.0, NAN, -0.0, 0.0])),
    ("fmin_nan_and_ties", with_grads(lambda m, x, y: m.fmin(x, y), [1.0, 2.0, NAN, NAN, 0.0, -0.0],
                                     [1.0, NAN, 3.0, NAN, -0.0, 0.0])),
    ("nextafter_edges", with_grads(lambda m, x, y: m.nextafter(x, y), [0.0, 1.0, INF, NAN, -0.0],
                                   [1.0, 1.0, 0.0, 1.0, -1.0])),
    ("ldexp_edges", with_grads(lambda m, x, y: m.ldexp(x, y), [1.5, -2.0, 0.0, INF, NAN],
                               [1024.5, -1074.0, 3.0, -1.0, 1.0])),
    ("ldexp_integer_exponent_is_c_ldexp", lambda m: (
        m.ldexp(_t(m, [0.5, 1e-300, 3.0, -0.0]), _t(m, [1024, 700, -1080, 5], "int64")),
        m.ldexp(_t(m, [1e-45, 3.0], "float32"), _t(m, [200, -200], "int32")),
        m.ldexp(_t(m, [3.0, 1.0], "float16"), _t(m, [226, 3], "uint8")))),
    ("ldexp_negative_integer_exponent_gradient", lambda m: with_grads(
        lambda m, x: m.ldexp(x, _t(m, [-2, 0, 3], "int64")), [1.5, 2.0, -3.0])(m)),
    ("float_power_edges", with_grads(lambda m, x, y: m.float_power(x, y), [0.0, -2.0, 0.0, INF],
                                     [0.0, 0.5, -1.0, -1.0])),
    ("float_power_complex_special_values", lambda m: tuple(  # fuzz breadth seed 492
        m.float_power(_t(m, [complex(0, INF), complex(-INF, 1), complex(NAN, 0), 4j], "complex64"),
                      e) for e in (0.5, 2, -1, 0.5 + 0j, 1.5 - 1j))),
    ("deg2rad_rad2deg", with_grads(lambda m, x: (m.deg2rad(x) + m.rad2deg(x)), SIGNED)),
    ("frexp_edges", lambda m: m.frexp(_t(m, [0.0, -0.0, INF, -INF, NAN, 1e-310, -3.0]))),
    ("frexp_gradient", with_grads(lambda m, x: m.frexp(x).mantissa, [3.0, -0.1, 1e-310, 0.0])),
    ("signbit_predicates", lambda m: tuple(f(_t(m, SIGNED)) for f in (
        m.signbit, m.isneginf, m.isposinf, m.isreal))),
    ("clamp_min_max_nan", with_grads(lambda m, x: m.clamp_min(x, 0.5) + m.clamp_max(x, -0.5),
                                     SIGNED)),
    ("clamp_min_tensor_bound", with_grads(lambda m, x, b: m.clamp_min(x, b), [1.0, 2.0, NAN, 0.0],
                                          [1.0, 3.0, 0.0, NAN])),
    ("clamp_max_tensor_bound", with_grads(lambda m, x, b: m.clamp_max(x, b), [1.0, 2.0, NAN, 0.0],
                                          [1.0, 3.0, 0.0, NAN])),
    ("lgamma_poles", with_grads(lambda m, x: m.lgamma(x), POLES)),
    ("digamma_poles", with_grads(lambda m, x: m.digamma(x), POLES)),
    ("trigamma_poles", lambda m: m.polygamma(1, _t(m, POLES))),
    ("polygamma_poles", lambda m: tuple(m.polygamma(n, _t(m, POLES)) for n in (2, 3, 6))),
    ("lgamma_second_derivative", _second_derivative(lambda m, x: m.lgamma(x), [0.5, -1.5, 3.0])),
    ("mvlgamma_small", with_grads(lambda m, x: m.mvlgamma(x, 3), [0.5, 1.0, 1.2, 4.0])),
    ("i0_edges", with_grads(lambda m, x: m.i0(x), [0.0, -0.0, 1e-8, -8.0, 8.0, 30.5, -100.0,
                                                   INF, NAN])),
    ("i0_second_derivative", _second_derivative(lambda m, x: m.i0(x), [0.0, -1.5, 12.0])),
    ("isin_nan_and_zeros", lambda m: (
        m.isin(_t(m, [NAN, 0.0, -0.0, 1.0]), _t(m, [NAN, 0.0])),
        m.isin(_t(m, [1, 2, 3], "int64"), 2, invert=True),
        m.isin(3, _t(m, [1, 3], "int64")),
        m.isin(_t(m, [[1, 2], [3, 4]], "int64"), _t(m, [[4, 1]], "int64"), assume_unique=True))),
    ("nansum_nanmean_all_nan", with_grads(lambda m, x: (m.nansum(x, 1) + m.nanmean(x, 1)),
                                          [[NAN, NAN], [1.0, NAN]])),
    ("quantile_ties_gradient", with_grads(lambda m, x: m.quantile(x, 0.5),
                                          [1.0, 2.0, 2.0, 2.0, 5.0])),
    ("quantile_nan_row", with_grads(lambda m, x: m.quantile(x, 0.4, dim=1),
                                    [[3.0, NAN, 1.0], [2.0, 1.0, 0.5]])),
    ("nanquantile_all_nan_row", with_grads(lambda m, x: m.nanquantile(x, 0.5, dim=1),
                                           [[NAN, NAN], [1.0, 2.0]])),
    ("quantile_q_gradient", with_grads(lambda m, x, q: m.quantile(x, q, dim=0),
                                       [[3.0, 1.0], [0.0, 5.0], [1.5, 2.0]], [0.3, 0.75])),
    ("quantile_interpolations_on_ties", lambda m: tuple(
        m.quantile(_t(m, [[0.0, 1.0, 1.0, 3.0]]), _t(m, [0.0, 0.25, 0.5, 5 / 6, 1.0]), dim=1,
                   interpolation=mode) for mode in ("linear", "lower", "higher", "midpoint",
                                                     "nearest"))),
    ("quantile_float32_ranks", lambda m: m.quantile(_t(m, np.arange(7.0), "float32"),
                                                    _t(m, [0.1, 1 / 3, 0.9], "float32"))),
    ("cov_one_observation", lambda m: (m.cov(_t(m, [[1.0], [2.0]])),
                                       m.cov(_t(m, [[1.0], [2.0]]), correction=0))),
    ("corrcoef_constant_rows", with_grads(lambda m, x: m.corrcoef(x), [[1.0, 1.0, 1.0],
                                                                       [1.0, 2.0, 4.0]])),
    ("corrcoef_one_variable", with_grads(lambda m, x: m.corrcoef(x), [1.0, 1.0, 1.0])),
    ("logdet_negative_determinant", with_grads(lambda m, x: m.logdet(x), [
        [[0.0, 1.0], [1.0, 0.0]], [[2.0, 1.0], [1.0, 3.0]]])),
    ("logdet_singular_value", lambda m: m.logdet(_t(m, [[1.0, 2.0], [2.0, 4.0]]))),
]


@pytest.mark.filterwarnings("ignore:cov.. degrees of freedom")
@_cases(EDGE_VALUES)
def test_edge_values_and_gradients_match_torch(program):
    assert_same_as_torch(program, rtol=1e-10)


PROMOTION = [
    ("copysign_integers_bools_numbers", lambda m: (
        m.copysign(_t(m, [3, -4], "int64"), _t(m, [-1, 1], "int64")),
        m.copysign(_t(m, [True, False], "bool"), _t(m, [True, True], "bool")),
        m.copysign(_t(m, [3, 4], "int64"), -2.5), m.copysign(_t(m, [1.0], "float32"), _t(m, -1.0)),
        m.copysign(_t(m, [1.0], "float32"), _t(m, [-1.0])))),
    ("fmax_fmin_integers_bools", lambda m: (
        m.fmax(_t(m, [3, -4], "int64"), _t(m, [True, False], "bool")),
        m.fmin(_t(m, [True, False], "bool"), _t(m, [True, True], "bool")),
        m.fmax(_t(m, [1.0, 2.0], "float32"), _t(m, [3, 0], "int32")),
        m.fmin(_t(m, [1.0], "float32"), _t(m, 0.5)))),
    ("heaviside_dtypes", lambda m: (
        m.heaviside(_t(m, [-1, 0, 2], "int64"), _t(m, [7, 7, 7], "int64")),
        m.heaviside(_t(m, [True, False], "bool"), _t(m, [False, True], "bool")),
        m.heaviside(_t(m, [-1.5, 0.0, -0.0, NAN, 2.0], "float32"), _t(m, 0.5, "float32")))),
    ("nextafter_float32_and_0d", lambda m: (
        m.nextafter(_t(m, [1.0, 0.0], "float32"), _t(m, [2.0, -1.0], "float32")),
        m.nextafter(_t(m, [1.0], "float32"), _t(m, 2.0)),
        m.nextafter(_t(m, [1.0], "float32"), _t(m, [0, 2], "int64")))),
    ("ldexp_dtypes", lambda m: (
        m.ldexp(_t(m, [1, 2], "int64"), _t(m, [1, 2], "int64")),
        m.ldexp(_t(m, [1.0, 2.0], "float16"), _t(m, [3, 1], "int64")),
        m.ldexp(_t(m, [1.0], "float32"), _t(m, 2.0)),
        m.ldexp(_t(m, 1.0, "float32"), _t(m, [2.0, 3.0])),
        m.ldexp(_t(m, [True], "bool"), _t(m, [True], "bool")))),
    ("float_power_dtypes", lambda m: (
        m.float_power(_t(m, [2, 3], "int64"), 2), m.float_power(_t(m, [2.0], "float32"), 0.5),
        m.float_power(2, _t(m, [1.5], "float32")), m.float_power(_t(m, [True], "bool"), 3),
        m.float_power(_t(m, [4 + 0j], "complex64"), _t(m, [0], "int64")))),
    ("rsub_dtypes", lambda m: (
        m.rsub(_t(m, [1, 2], "int64"), 2.5), m.rsub(_t(m, [1, 2], "int64"), 3, alpha=2),
        m.rsub(_t(m, [1.0], "float32"), _t(m, [5, 6], "int64")),
        m.rsub(_t(m, [1.5], "float32"), 1j))),
    ("deg2rad_rad2deg_dtypes", lambda m: tuple(f(_t(m, v, d)) for f in (m.deg2rad, m.rad2deg)
                                               for v, d in (([3, -4], "int64"), ([True], "bool"),
                                                            ([1.0, -0.0], "float16")))),
    ("gamma_family_integers_and_bools", lambda m: tuple(f(_t(m, v, d)) for f in (
        m.lgamma, m.digamma, m.i0, lambda x: m.polygamma(2, x))
        for v, d in (([3, 4], "int64"), ([True, True], "bool"), ([1.5, 2.5], "float16")))
        + (m.mvlgamma(_t(m, [3, 4], "int64"), 2), m.mvlgamma(_t(m, [1.5, 2.5], "float16"), 2))),
    ("gamma_family_float32", lambda m: tuple(f(_t(m, POLES + [0.3, -3.7], "float32")) for f in (
        m.lgamma, m.digamma, lambda x: m.polygamma(1, x), lambda x: m.polygamma(2, x)))),
    ("clamp_min_max_promotion", lambda m: (
        m.clamp_min(_t(m, [1, 5], "int64"), 2.5), m.clamp_max(_t(m, [1, 5], "int64"), 3),
        m.clamp_min(_t(m, [True, False], "bool"), 0),
        m.clamp_max(_t(m, [1, 5], "int64"), _t(m, [1.5, 2.0], "float32")))),
    ("isin_promotion", lambda m: (
        m.isin(_t(m, [1, 2], "uint8"), _t(m, [258], "int64")),
        m.isin(_t(m, [1, 2], "int64"), _t(m, [1.5, 2.0])))),
    ("nansum_integers_and_dtype", lambda m: (
        m.nansum(_t(m, [1, 2], "int32")), m.nansum(_t(m, [True, True], "bool")),
        m.nansum(_t(m, [1.0, NAN], "float32"), dtype=m.float64))),
    ("cov_integers_and_weights", lambda m: (
        m.cov(_t(m, [[1, 2, 4], [3, 1, 0]], "int64")),
        m.cov(_t(m, [[1.0, 2.0, 4.0]], "float32"), fweights=_t(m, [1, 2, 1], "int32"),
              aweights=_t(m, [0.5, 1.0, 2.0], "float32")),
        m.corrcoef(_t(m, [[1, 2, 4], [3, 1, 0]], "int64")))),
]


@_cases(PROMOTION)
def test_dtype_promotion_matches_torch(program):
    assert_same_as_torch(program)


EMPTY = np.zeros((0, 3))

SMALL_SHAPES = [
    ("binary_0d", with_grads(lambda m, x, y: (m.copysign(x, y) + m.fmax(x, y) + m.fmin(x, y)
                                              + m.nextafter(x, y) + m.ldexp(x, y)
                                              + m.rsub(x, y)), 1.5, -2.0)),
    ("binary_0_size", lambda m: tuple(f(_t(m, EMPTY), _t(m, EMPTY[:, :1])) for f in (
        m.copysign, m.fmax, m.fmin, m.nextafter, m.ldexp, m.float_power, m.rsub, m.heaviside))),
    ("unary_0_size", lambda m: tuple(f(_t(m, EMPTY)) for f in (
        m.deg2rad, m.rad2deg, m.signbit, m.isneginf, m.isposinf, m.isreal, m.positive, m.lgamma,
        m.digamma, m.i0, lambda x: m.polygamma(3, x), lambda x: m.mvlgamma(x, 2),
        lambda x: m.clamp_min(x, 0.0), lambda x: m.frexp(x).mantissa, m.nansum, m.nanmean))),
    ("unary_0d", lambda m: tuple(f(_t(m, 0.25)) for f in (
        m.deg2rad, m.signbit, m.lgamma, m.digamma, m.i0, lambda x: m.polygamma(2, x),
        lambda x: m.clamp_max(x, 0.0), lambda x: m.frexp(x).exponent, m.nansum, m.nanmean,
        lambda x: m.quantile(x, 0.5), m.cov, m.corrcoef))),
    ("integer_0_size", lambda m: (m.gcd(_t(m, EMPTY, "int64"), _t(m, [3], "int64")),
                                  m.isin(_t(m, EMPTY), _t(m, [1.0])))),
    ("empty_integer_division_by_zero", lambda m: tuple(  # fuzz breadth seed 4171
        f(m.zeros(0, dtype=m.int64), d) for f in (m.fmod, m.remainder, m.floor_divide)
        for d in (0, m.zeros(1, dtype=m.int64)))),
    ("reductions_0_size", lambda m: (
        m.nansum(_t(m, EMPTY), 0), m.nanmean(_t(m, EMPTY), 1), m.nanmean(_t(m, EMPTY)),
        m.cov(_t(m, np.zeros((2, 0)))), m.logdet(_t(m, np.zeros((0, 2, 2)))))),
    ("quantile_keepdim_shapes", lambda m: (
        m.quantile(_t(m, np.arange(24.0).reshape(2, 3, 4)), 0.3, dim=1, keepdim=True),
        m.quantile(_t(m, np.arange(24.0).reshape(2, 3, 4)), _t(m, [0.2, 0.6]), dim=1,
                   keepdim=True),
        m.nanquantile(_t(m, np.arange(24.0).reshape(2, 3, 4)), _t(m, [0.2, 0.6]), keepdim=True),
        m.quantile(_t(m, 3.0), 0.5, dim=0, keepdim=True), m.quantile(_t(m, 3.0), _t(m, [0.5])))),
]


@pytest.mark.filterwarnings("ignore:cov.. degrees of freedom")
@_cases(SMALL_SHAPES)
def test_0d_and_0_size_inputs_match_torch(program):
    assert_same_as_torch(program)


def _inplace(name, *args, dtype="float64", top_level=False, **kwargs):
    def program(m):
        x = _t(m, [[0.25, 0.5], [0.75, 0.125]] if dtype != "int64" else [[4, 6], [9, -2]], dtype)
        values = (a(m) if callable(a) else a for a in args)
        same = getattr(m, name)(x, *values, **kwargs) if top_level else getattr(x, name)(
            *values, **kwargs)
        assert same is x
        return x
    return program


def _matrix(m):
    return _t(m, [[1.0, -2.0], [3.0, -1.0]])


def _integers(m):
    return _t(m, [[6, 4], [3, 5]], "int64")


INPLACE = [
    ("copysign_", _inplace("copysign_", _matrix)), ("ldexp_", _inplace("ldexp_", _matrix)),
    ("nextafter_", _inplace("nextafter_", _matrix)),
    ("heaviside_", _inplace("heaviside_", _matrix)),
    ("gcd_", _inplace("gcd_", _integers, dtype="int64")),
    ("lcm_", _inplace("lcm_", _integers, dtype="int64")),
    ("float_power_float64", _inplace("float_power_", 2)),
    ("float_power_float32_refused", _inplace("float_power_", 2, dtype="float32")),
    ("float_power_complex_exponent_refused", _inplace("float_power_", 1j)),
    ("deg2rad_", _inplace("deg2rad_")), ("rad2deg_", _inplace("rad2deg_")),
    ("clamp_min_", _inplace("clamp_min_", 0.3)), ("clamp_max_", _inplace("clamp_max_", _matrix)),
    ("lgamma_", _inplace("lgamma_")), ("digamma_", _inplace("digamma_")),
    ("polygamma_", _inplace("polygamma_", 2)), ("mvlgamma_", _inplace("mvlgamma_", 1)),
    ("i0_", _inplace("i0_")),
    ("new_in_place_methods", lambda m: tuple(getattr(_matrix(m), name)() for name in (
        "acos_", "arcsin_", "arctan_", "cosh_", "erf_", "exp2_", "expm1_", "log10_", "log1p_",
        "log2_", "negative_", "rsqrt_", "sinh_", "tan_", "trunc_"))),
    ("clip_", _inplace("clip_", -0.3, 0.3)),
    ("sgn_sign_", lambda m: (_matrix(m).sgn_(), _matrix(m).sign_(), _integers(m).sign_(),
                             _t(m, [True, False], "bool").sign_(),
                             _t(m, [3 + 4j, 0j], "complex128").sgn_())),
    ("sign_complex_refused", lambda m: _t(m, [1j], "complex64").sign_()),
    ("top_level_functions", lambda m: tuple(
        getattr(m, name)(_t(m, [[0.25, 0.5], [0.75, 0.125]]), *args) for name, args in (
            ("abs_", ()), ("exp_", ()), ("clamp_", (0.3, 0.6)), ("square_", ()),
            ("clamp_min_", (0.3,)), ("deg2rad_", ()), ("i0_", ()), ("xlogy_", (2.0,)),
            ("fill_", (1.5,)), ("arccos_", ()), ("logit_", (0.1,)), ("sigmoid_", ())))),
    ("top_level_ldexp_", _inplace("ldexp_", _matrix, top_level=True)),
    ("top_level_gcd_", _inplace("gcd_", _integers, dtype="int64", top_level=True)),
    ("methods", lambda m: (_matrix(m).copysign(-1.0), _matrix(m).fmax(_matrix(m)),
                           _matrix(m).signbit(), _matrix(m).isposinf(), _matrix(m).isreal(),
                           _matrix(m).positive(), _matrix(m).float_power(2),
                           _matrix(m).quantile(0.5), _matrix(m).nansum(1), _matrix(m).cov(),
                           _matrix(m).logdet(), _matrix(m).frexp().mantissa,
                           _matrix(m).arccos(), _matrix(m).negative())),
]


@_cases(INPLACE)
def test_in_place_forms_and_methods_match_torch(program):
    assert_same_as_torch(program)


def test_top_level_in_place_functions_are_torchs():
    assert [n for n in TOP_LEVEL_NAMES if not hasattr(torch, n)] == []
    assert [n for n in TOP_LEVEL_NAMES if not hasattr(gradkit, n)] == []
    with pytest.raises(TypeError, match=r"^abs_\(\): argument 'input' \(position 1\) must be "
                                        "Tensor, not float"):
        gradkit.abs_(1.5)


def _f32(m, *shape):
    return m.ones(*shape)


ERRORS = [
    # Tensor-only operands
    ("fmax_number", lambda m: m.fmax(_f32(m, 2), 2.5)),
    ("fmin_number_first", lambda m: m.fmin(2.5, _f32(m, 2))),
    ("heaviside_number", lambda m: m.heaviside(_f32(m, 2), 0.5)),
    ("nextafter_number", lambda m: m.nextafter(_f32(m, 2), 1)),
    ("ldexp_number", lambda m: m.ldexp(_f32(m, 2), 2)),
    ("gcd_number", lambda m: m.gcd(_t(m, [2], "int64"), 4)),
    ("lcm_number_first", lambda m: m.lcm(4, _t(m, [2], "int64"))),
    # kernels a dtype lacks
    ("copysign_complex", lambda m: m.copysign(_t(m, [1j], "complex64"), _t(m, [1j], "complex64"))),
    ("fmax_complex", lambda m: m.fmax(_t(m, [1j], "complex64"), _t(m, [1j], "complex64"))),
    ("fmin_complex", lambda m: m.fmin(_t(m, [1j], "complex128"), _f32(m, 1))),
    ("heaviside_complex", lambda m: m.heaviside(_t(m, [1j], "complex64"),
                                                _t(m, [1j], "complex64"))),
    ("heaviside_dtypes", lambda m: m.heaviside(_f32(m, 2), _t(m, [1.0, 2.0]))),
    ("nextafter_integers", lambda m: m.nextafter(_t(m, [1], "int64"), _t(m, [1], "int64"))),
    ("nextafter_bools", lambda m: m.nextafter(_t(m, [True], "bool"), _t(m, [True], "bool"))),
    ("nextafter_complex", lambda m: m.nextafter(_t(m, [1j], "complex64"),
                                                _t(m, [1j], "complex64"))),
    ("ldexp_float_and_bool", lambda m: m.ldexp(_f32(m, 2), _t(m, [True, False], "bool"))),
    ("gcd_floats", lambda m: m.gcd(_f32(m, 1), _f32(m, 1))),
    ("gcd_bools", lambda m: m.gcd(_t(m, [True], "bool"), _t(m, [True], "bool"))),
    ("lcm_float64", lambda m: m.lcm(_t(m, [1.0]), _t(m, [1], "int64"))),
    ("rsub_bools", lambda m: m.rsub(_t(m, [True], "bool"), _t(m, [True], "bool"))),
    ("rsub_bool_and_float", lambda m: m.rsub(_t(m, [True], "bool"), _f32(m, 1))),
    ("deg2rad_complex", lambda m: m.deg2rad(_t(m, [1j], "complex64"))),
    ("rad2deg_complex", lambda m: m.rad2deg(_t(m, [1j], "complex128"))),
    ("signbit_complex", lambda m: m.signbit(_t(m, [1j], "complex64"))),
    ("isneginf_complex", lambda m: m.isneginf(_t(m, [1j], "complex64"))),
    ("isposinf_complex", lambda m: m.isposinf(_t(m, [1j], "complex64"))),
    ("positive_bool", lambda m: m.positive(_t(m, [True], "bool"))),
    ("frexp_integers", lambda m: m.frexp(_t(m, [1], "int64"))),
    ("frexp_complex", lambda m: m.frexp(_t(m, [1j], "complex64"))),
    ("clamp_min_complex", lambda m: m.clamp_min(_t(m, [1j], "complex64"), 0.0)),
    ("clamp_max_complex_tensor", lambda m: m.clamp_max(_t(m, [1j], "complex64"),
                                                       _t(m, [1j], "complex64"))),
    ("clamp_min_complex_bound", lambda m: m.clamp_min(_f32(m, 1), _t(m, [1j], "complex64"))),
    ("clamp_min_complex_number", lambda m: m.clamp_min(_f32(m, 1), 0.5j)),
    ("isin_complex", lambda m: m.isin(_t(m, [1j], "complex64"), _t(m, [1j], "complex64"))),
    ("isin_bools", lambda m: m.isin(_t(m, [True], "bool"), _t(m, [True], "bool"))),
    ("lgamma_complex", lambda m: m.lgamma(_t(m, [1j], "complex64"))),
    ("digamma_complex", lambda m: m.digamma(_t(m, [1j], "complex64"))),
    ("polygamma_complex", lambda m: tuple(m.polygamma(n, _t(m, [1j], "complex64"))
                                          for n in (0, 1, 2))),
    ("polygamma_trigamma_complex", lambda m: m.polygamma(1, _t(m, [1j], "complex128"))),
    ("polygamma_order_2_complex", lambda m: m.polygamma(2, _t(m, [1j], "complex128"))),
    ("polygamma_negative", lambda m: m.polygamma(-1, _f32(m, 2))),
    ("mvlgamma_p_0", lambda m: m.mvlgamma(_f32(m, 2), 0)),
    ("mvlgamma_complex", lambda m: m.mvlgamma(_t(m, [1j], "complex64"), 1)),
    ("mvlgamma_bools", lambda m: m.mvlgamma(_t(m, [True], "bool"), 1)),
    ("i0_complex", lambda m: m.i0(_t(m, [1j], "complex64"))),
    ("ldexp_real_x_complex_other_backward", lambda m: m.ldexp(
        _t(m, [1.5]).requires_grad_(), _t(m, [1 + 1j], "complex128")).abs().sum().backward()),
    ("ldexp_complex_x_real_other_backward", lambda m: m.ldexp(
        _t(m, [1 + 1j], "complex128"), _t(m, [0.5]).requires_grad_()).abs().sum().backward()),
    ("heaviside_backward", lambda m: m.heaviside(
        _t(m, [1.0, 0.0]).requires_grad_(), _t(m, [0.5, 0.5])).sum().backward()),
    # reductions
    ("nansum_complex", lambda m: m.nansum(_t(m, [1j], "complex64"))),
    ("nanmean_integers", lambda m: m.nanmean(_t(m, [1, 2], "int64"))),
    ("nanmean_complex", lambda m: m.nanmean(_t(m, [1j], "complex64"))),
    ("quantile_q_above_1", lambda m: m.quantile(_f32(m, 3), 1.5)),
    ("quantile_q_negative", lambda m: m.quantile(_f32(m, 3), -0.1)),
    ("quantile_q_tensor_range", lambda m: m.quantile(_f32(m, 3), _t(m, [0.5, 1.5], "float32"))),
    ("quantile_q_2d", lambda m: m.quantile(_f32(m, 3), _t(m, [[0.5]], "float32"))),
    ("quantile_integers", lambda m: m.quantile(_t(m, [1, 2], "int64"), 0.5)),
    ("quantile_float16", lambda m: m.quantile(_t(m, [1.0], "float16"), 0.5)),
    ("quantile_q_dtype", lambda m: m.quantile(_f32(m, 3), _t(m, [0.5]))),
    ("quantile_empty", lambda m: m.quantile(_f32(m, 0), 0.5)),
    ("quantile_interpolation", lambda m: m.quantile(_f32(m, 3), 0.5, interpolation="foo")),
    ("quantile_dim_range", lambda m: m.quantile(_f32(m, 2, 3), 0.5, dim=3)),
    ("nanquantile_q_above_1", lambda m: m.nanquantile(_f32(m, 3), 2.0)),
    ("cov_3d", lambda m: m.cov(_f32(m, 2, 2, 2))),
    ("cov_bools", lambda m: m.cov(_t(m, [True, False], "bool"))),
    ("cov_fweights_2d", lambda m: m.cov(_f32(m, 2, 3), fweights=_t(m, [[1, 1, 1]], "int64"))),
    ("cov_fweights_float", lambda m: m.cov(_f32(m, 2, 3), fweights=_f32(m, 3))),
    ("cov_fweights_numel", lambda m: m.cov(_f32(m, 2, 3), fweights=_t(m, [1, 1], "int64"))),
    ("cov_fweights_negative", lambda m: m.cov(_f32(m, 2, 3), fweights=_t(m, [1, -1, 1],
                                                                          "int64"))),
    ("cov_aweights_2d", lambda m: m.cov(_f32(m, 2, 3), aweights=_f32(m, 1, 3))),
    ("cov_aweights_integers", lambda m: m.cov(_f32(m, 2, 3), aweights=_t(m, [1, 1, 1], "int64"))),
    ("cov_aweights_numel", lambda m: m.cov(_f32(m, 2, 3), aweights=_f32(m, 4))),
    ("cov_aweights_negative", lambda m: m.cov(_f32(m, 2, 3), aweights=-_f32(m, 3))),
    ("cov_weights_sum_to_zero", lambda m: m.cov(_f32(m, 2, 3), fweights=_t(m, [0, 0, 0],
                                                                           "int64"))),
    ("corrcoef_3d", lambda m: m.corrcoef(_f32(m, 2, 2, 2))),
    ("logdet_integers", lambda m: m.logdet(_t(m, [[1, 2], [3, 4]], "int64"))),
    ("logdet_float16", lambda m: m.logdet(_t(m, [[1.0, 2.0], [3.0, 4.0]], "float16"))),
    ("isin_bool_test_elements", lambda m: m.isin(_f32(m, 2), _t(m, [True], "bool"))),
    ("isin_complex_first", lambda m: m.isin(_t(m, [1j], "complex64"), _t(m, [1j], "complex128"))),
    ("isin_bool_with_number", lambda m: m.isin(_t(m, [True], "bool"), 3)),
    ("clamp_min__bool", lambda m: _t(m, [True, False], "bool").clamp_min_(0)),
    ("clamp_max__integer_float_bound", lambda m: _t(m, [1, 5], "int64").clamp_max_(1.5)),
]


@_cases(ERRORS)
def test_errors_match_torch(program):
    assert_same_as_torch(program)


@pytest.mark.parametrize("lib", [gradkit, torch], ids=["gradkit", "torch"])
def test_errors_whose_text_names_arguments(lib):
    """torch's messages here go on with its argument parser's signatures: the part both share
    is checked."""
    for call, got in ((lambda: lib.copysign(2, lib.ones(2)), r"\(int, Tensor\)"),
                      (lambda: lib.rsub(2, lib.ones(2)), r"\(int, Tensor\)"),
                      (lambda: lib.isin(2, 3), r"\(int, int\)"),
                      (lambda: lib.float_power(2, 3), r"\(int, int\)"),
                      (lambda: lib.clamp_min(lib.ones(2), None), r"\(Tensor, NoneType\)")):
        with pytest.raises(TypeError, match=r"^\w+\(\) received an invalid combination of "
                                            r"arguments - got " + got):
            call()


NODE_NAMES = [
    ("copysign", lambda m, x: m.copysign(x, x), "CopysignBackward0"),
    ("copysign_number", lambda m, x: m.copysign(x, 2.0), "CopysignBackward1"),
    ("fmax", lambda m, x: m.fmax(x, x), "FmaxBackward0"),
    ("fmin", lambda m, x: m.fmin(x, x), "FminBackward0"),
    ("heaviside", lambda m, x: m.heaviside(x, x), "NotImplemented"),
    ("nextafter", lambda m, x: m.nextafter(x, x), "NextafterBackward0"),
    ("ldexp", lambda m, x: m.ldexp(x, x), "LdexpBackward0"),
    ("float_power", lambda m, x: m.float_power(x, x), "PowBackward1"),
    ("float_power_number", lambda m, x: m.float_power(x, 2), "PowBackward0"),
    ("rsub", lambda m, x: m.rsub(x, x), "RsubBackward0"),
    ("rsub_number", lambda m, x: m.rsub(x, 2.0), "RsubBackward1"),
    ("deg2rad", lambda m, x: m.deg2rad(x), "Deg2RadBackward0"),
    ("rad2deg", lambda m, x: m.rad2deg(x), "Rad2DegBackward0"),
    ("frexp", lambda m, x: m.frexp(x).mantissa, "FrexpBackward0"),
    ("clamp_min", lambda m, x: m.clamp_min(x, 0.5), "ClampMinBackward0"),
    ("clamp_min_tensor", lambda m, x: m.clamp_min(x, x), "ClampMinBackward1"),
    ("clamp_max", lambda m, x: m.clamp_max(x, 0.5), "ClampMaxBackward0"),
    ("clamp_max_tensor", lambda m, x: m.clamp_max(x, x), "ClampMaxBackward1"),
    ("lgamma", lambda m, x: m.lgamma(x), "LgammaBackward0"),
    ("digamma", lambda m, x: m.digamma(x), "DigammaBackward0"),
    ("polygamma", lambda m, x: m.polygamma(2, x), "PolygammaBackward0"),
    ("mvlgamma", lambda m, x: m.mvlgamma(x, 2), "MvlgammaBackward0"),
    ("i0", lambda m, x: m.i0(x), "I0Backward0"),
    ("nansum", lambda m, x: m.nansum(x), "NansumBackward0"),
    ("nanmean", lambda m, x: m.nanmean(x), "DivBackward0"),
]


@pytest.mark.parametrize("name,function,expected", NODE_NAMES, ids=[n[0] for n in NODE_NAMES])
def test_node_names_are_torchs(name, function, expected):
    for lib in (torch, gradkit):
        x = lib.tensor([1.5, 2.5], dtype=lib.float64, requires_grad=True)
        assert type(function(lib, x).grad_fn).__name__ == expected, lib.__name__


def test_positive_is_the_tensor_itself():
    for lib in (torch, gradkit):
        x = lib.ones(2, requires_grad=True)
        assert lib.positive(x) is x and x.positive() is x


def test_frexp_returns_torchs_named_tuple():
    mantissa, exponent = gradkit.frexp(gradkit.tensor([3.0]))
    result = gradkit.frexp(gradkit.tensor([3.0]))
    assert result.mantissa.tolist() == mantissa.tolist() == [0.75]
    assert result.exponent.tolist() == exponent.tolist() == [2]
    assert not exponent.requires_grad


@pytest.mark.parametrize("lib", [gradkit, torch], ids=["gradkit", "torch"])
def test_cov_warns_where_degrees_of_freedom_run_out(lib):
    with pytest.warns(UserWarning, match=r"^cov\(\): degrees of freedom is <= 0. Correction "
                                         "should be strictly less than the number of "
                                         "observations."):
        out = lib.cov(lib.tensor([[1.0, 2.0]]), correction=2)
    assert math.isinf(out.item())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lib.cov(lib.tensor([[1.0, 2.0, 4.0]]))


def test_float64_lgamma_from_3_up_is_torchs_to_the_bit():
    """torch's float64 lgamma (SLEEF's) is correctly rounded nearly always; C's is an ulp off
    for a quarter of the doubles, which a difference of two huge lgammas shows (a Kumaraswamy
    variance of lgammas of 4.8e17, 0 in torch and 88 from C's: breadth seed 24382)."""
    x = np.exp(np.random.default_rng(24382).uniform(np.log(3.0), np.log(1e18), 5000))
    x = np.concatenate([x, [3.0, 16.0, 4.809946360104157e+17, 1.7e308]])
    ours = gradkit.lgamma(gradkit.tensor(x)).numpy()
    theirs = torch.lgamma(torch.tensor(x)).numpy()
    assert (ours == theirs).mean() > 0.998
    np.testing.assert_array_less(np.abs(ours - theirs), np.spacing(np.abs(theirs)) * 1.5)

    def kumaraswamy_variance(m):
        a = m.tensor(4.158050527525407e-18, dtype=m.float64, requires_grad=True)
        variance = m.distributions.Kumaraswamy(a, m.tensor(88.01503973285418,
                                                           dtype=m.float64)).variance
        return variance, m.lgamma(1 + 2 / a)
    assert_same_as_torch(kumaraswamy_variance, rtol=0)
