"""torch's named unary ufunc tests (pytorch/pytorch test/test_unary_ufuncs.py, the tests written
out by hand, old and new file versions) and its complex tests (test/test_complex.py), re-run as
programs under torch 2.13 and gradkit: same values, dtypes, gradients, or the same error. Each
test names the torch tests it covers; the OpInfo-driven ones are in
test_unary_ufuncs_torch_expectations.py, the ledger in docs/torch_expectations.md ("Unary
ufuncs and complex").
"""
import math

import numpy as np
import pytest
from unary_ufunc_cases import OPS, assert_same_outcome, outcome

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan


def rng():
    """A fresh seeded generator: each test's data is the same whatever ran before it."""
    return np.random.default_rng(20261206)


def same(program, rtol=None, signed_zeros=True, where="", atol=0.0):
    """``program(lib)`` under gradkit and torch: the same outcome."""
    assert_same_outcome(outcome(gradkit, program), outcome(torch, program), where, rtol,
                        signed_zeros, atol)


def raises_same(program, message_part: str):
    """Both raise the same error, whose message contains ``message_part``."""
    expected = outcome(torch, program)
    assert expected[0] == "raises" and message_part in expected[2], expected
    assert outcome(gradkit, program) == expected


def t(lib, data, dtype="float64", **kwargs):
    return lib.tensor(np.asarray(data), dtype=getattr(lib, dtype), **kwargs)


def grads(fn, data, dtype="float64"):
    """A program: fn's value and gradient at ``data``."""
    def program(lib):
        x = t(lib, data, dtype, requires_grad=True)
        y = fn(lib, x)
        return y, lib.autograd.grad(y.sum(), x)[0]
    return program


# -- errors: test_neg_error_message, test_sign_complex_assert_raises, test_polygamma_neg,
#    test_mvlgamma_argcheck, test_signbit_complex, test_isposinf_isneginf_complex,
#    test_isfinite_type, test_isinf_type, test_frexp_assert_raises -------------------------

def test_error_messages():
    raises_same(lambda m: m.neg(m.tensor([False, True])), "Negation, the `-` operator")
    raises_same(lambda m: -m.tensor([False, True]), "Negation, the `-` operator")
    for dtype in ("complex64", "complex128"):
        raises_same(lambda m, d=dtype: m.sign(t(m, [4j], d)), "Please use torch.sgn instead")
        raises_same(lambda m, d=dtype: m.signbit(t(m, [-1j, -1 + 2j], d)),
                    "signbit is not implemented for complex tensors.")
        for name in ("isposinf", "isneginf"):
            raises_same(lambda m, d=dtype, n=name: getattr(m, n)(t(m, [complex(0, INF)], d)),
                        "does not support complex inputs")
    raises_same(lambda m: m.polygamma(-1, t(m, [1.0, 2.0])), "does not support negative n.")
    # torch 2.13 no longer checks mvlgamma's domain (the old test's message): inf and NaN there
    same(lambda m: m.mvlgamma(m.linspace(0.5, 10, 10), 3))
    for name in ("isfinite", "isinf", "isnan", "isposinf", "isneginf", "isreal", "signbit"):
        raises_same(lambda m, n=name: getattr(m, n)(1), "must be Tensor, not int")
    for dtype in ("bool", "uint8", "int8", "int16", "int32", "int64", "complex64", "complex128"):
        raises_same(lambda m, d=dtype: m.frexp(m.ones(3, 3, dtype=getattr(m, d))),
                    "torch.frexp() only supports floating-point dtypes")


# torch's parser names these differently (its alias, ``special_`` prefix, a composed Python
# function's AttributeError, an "invalid combination" message), or gradkit takes the number
# (square) or fails inside the function (clamp_min, clamp_max): docs, "Unary ufuncs"
_NUMBER_INPUT_DIFFERS = {
    "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "negative",
    "square", "nn.functional.tanhshrink", "nn.functional.selu", "nn.functional.relu6",
    "nn.functional.logsigmoid", "nn.functional.softsign", "clamp", "clamp_min", "clamp_max"} | {
    name for name, _ in OPS if name.startswith(("special.", "round_", "polygamma_"))}


def test_a_python_number_as_input():
    """torch.sin(1.5): ``sin(): argument 'input' (position 1) must be Tensor, not float``
    (test_isfinite_type, test_isinf_type, for every op whose name torch's parser shares)."""
    for name, fn in OPS:
        if name not in _NUMBER_INPUT_DIFFERS:
            for number in (1.5, 2, True, 1j):
                raises_same(lambda m, f=fn, v=number: f(m, v), "must be Tensor, not")


# -- test_float_domains, test_acosh_domain_float, test_atanh_domain_float -------------------

_DOMAINS = {"acos": (-1, 1), "asin": (-1, 1), "acosh": (1, None), "atanh": (-1, 1),
            "log": (0, None), "log2": (0, None), "log10": (0, None), "log1p": (-1, None),
            "sqrt": (0, None), "rsqrt": (0, None), "erfinv": (-1, 1), "logit": (0, 1),
            "special.ndtri": (0, 1)}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", list(_DOMAINS))
def test_outside_the_domain_is_nan(name, dtype):
    """Just outside an op's domain (by 1e-5 ... 100) the result is NaN, as torch's; at the
    edges of acosh and atanh, inf."""
    low, high = _DOMAINS[name]
    steps = (1e-5, 1e-3, 1e-1, 1, 2, 10, 20, 50, 100)
    data = ([low - e for e in steps] if low is not None else []) + \
        ([high + e for e in steps] if high is not None else []) + [low, high or 2.0, -INF, INF]

    def program(m):
        target = m
        for part in name.split("."):
            target = getattr(target, part)
        result = target(t(m, data, dtype))
        return result, result.isnan(), result.isinf()
    same(program)


# -- test_nan_to_num, test_nan_to_num_bfloat16 (in float32) --------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "uint8", "bool"])
def test_nan_to_num(dtype):
    data = rng().uniform(0, 100, (64, 64))
    if dtype.startswith("float"):
        for row, extremal in zip(rng().integers(0, 63, 3), (NAN, INF, -INF), strict=True):
            data[row, :] = extremal
    for transpose in (False, True):
        def x(m, transpose=transpose):
            value = t(m, data.astype(dtype))
            return value.T if transpose else value
        same(lambda m: m.nan_to_num(x(m)))
        same(lambda m: x(m).nan_to_num(nan=0.25, posinf=2.5))
        same(lambda m: x(m).nan_to_num(posinf=2.5, neginf=-7.5))
        same(lambda m: x(m).clone().nan_to_num_(nan=0.25, posinf=2.5, neginf=-7.5))
    if dtype == "float32":
        same(grads(lambda m, x: m.nan_to_num(x) * 3, data.astype(dtype), dtype))


# -- test_complex_edge_values, test_sqrt_complex_edge_values, test_log1p_complex, test_exp ----

def test_complex_edge_values():
    for dtype in ("complex64", "complex128"):
        same(lambda m, d=dtype: (m.sqrt(t(m, [-1e20j], d)), m.acos(t(m, [-1e20j], d))))
        big = -1e60 if dtype == "complex128" else -1e20
        same(lambda m, d=dtype, b=big: m.sqrt(t(m, [complex(b, -4988429.2)], d)))


_LOG1P_INPUTS = [0.2 + 0.3j, 1e-19 + 1e-18j, 1e-18 + 0.1j, 0.1 + 1e-18j, 0.5 + 0j, 0.5j,
                 2 + 1j, -1 + 2j, 2j, -2j]
_LOG1P_EXTREMES = {"complex128": [-1 + 1e250j, 1e250 + 1j, 1e250 + 1e250j, 1e-250 + 1e250j,
                                  1e-250 + 2e-250j, 1e250 + 1e-250j],
                   "complex64": [-1 + 1e30j, 1e30 + 1j, 1e30 + 1e30j, 1e-30 + 1e30j,
                                 1e-30 + 2e-30j, 1e30 + 1e-30j]}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_log1p_complex(dtype):
    """log1p of small and huge complex values: no NaN, torch's values, each alone and as one
    tensor (torch checks them against mpmath at rtol 1e-6)."""
    inputs = _LOG1P_INPUTS + _LOG1P_EXTREMES[dtype]
    for value in inputs:
        same(lambda m, v=value: m.log1p(t(m, v, dtype)), signed_zeros=False)
    same(lambda m: m.log1p(t(m, inputs, dtype)), signed_zeros=False)
    assert not gradkit.log1p(t(gradkit, inputs, dtype)).isnan().any()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_exp(dtype):
    """exp of multiples of pi (and of 1j pi, 1+1j pi for complex), then the complex extremes
    torch's test lists: inf + 0j, 0 + inf j, inf + inf j, inf + nan j, nan + inf j."""
    factors = (2, -2) + ((1j, 1 + 1j) if dtype.startswith("complex") else ())
    for factor in factors:
        same(lambda m, f=factor: m.exp(
            (m.tensor(f, dtype=getattr(m, dtype)) * m.arange(18) / 3 * math.pi).to(
                getattr(m, dtype))))
    if dtype.startswith("complex"):
        for value in (complex(INF, 0), complex(0, INF), complex(INF, INF), complex(INF, NAN),
                      complex(NAN, INF)):
            same(lambda m, v=value: m.exp(t(m, v, dtype)))


# -- test_digamma_special, test_digamma, test_mvlgamma, TestUnaryUfuncMathOps' polygamma and
#    test_polygamma (its gradcheck, on CPU) -----------------------------------------------

_EULER = 0.57721566490153286


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_digamma_special_values_and_poles(dtype):
    """The closed forms of torch's dataset (scipy's) and its poles: the same as torch's, and
    the closed forms themselves (digamma(1/4) = -pi/2 - 3 log 2 - euler ...)."""
    points = [0.0, 1, 0.5, 1 / 3, 1 / 4, 1 / 6, 1 / 8]
    closed = [-INF, -_EULER, -2 * math.log(2) - _EULER,
              -math.pi / (2 * math.sqrt(3)) - 3 * math.log(3) / 2 - _EULER,
              -math.pi / 2 - 3 * math.log(2) - _EULER,
              -math.pi * math.sqrt(3) / 2 - 2 * math.log(2) - 3 * math.log(3) / 2 - _EULER,
              -math.pi / 2 - 4 * math.log(2) - (math.pi + math.log(2 + math.sqrt(2))
                                                  - math.log(2 - math.sqrt(2))) / math.sqrt(2)
              - _EULER]
    same(lambda m: m.digamma(t(m, points, dtype)))
    got = gradkit.digamma(t(gradkit, points, dtype)).numpy()
    np.testing.assert_allclose(got[1:], closed[1:], rtol=1e-6 if dtype == "float32" else 1e-14)
    poles = [-0.999999994, -1.999999994, -2.0000000111, -100.99999994, 0.000000111,
             -1931.99999994, -0.000000111, 0, -0.0, -1, -2, -931]
    same(lambda m: m.digamma(t(m, poles, dtype)))
    same(grads(lambda m, x: m.digamma(x), poles[:7]), rtol=1e-9)


def test_mvlgamma_and_polygamma():
    for p in range(1, 5):
        data = rng().uniform(p, 10, 10)
        same(lambda m, p=p, d=data: m.mvlgamma(t(m, d, "float32"), p))
        same(grads(lambda m, x, p=p: m.special.multigammaln(x, p), data))
    gamma_inputs = np.concatenate([np.abs(rng().standard_normal(10)) + 1e-4,
                                   np.abs(rng().standard_normal(10)) + 1e6,
                                   np.linspace(-9.5, -0.5, 10), np.linspace(-9.5, -0.5, 10) - 0.49,
                                   np.linspace(-9.5, -0.5, 10) + 0.49])
    for n in range(6):
        same(lambda m, n=n: m.polygamma(n, t(m, gamma_inputs)), rtol=1e-9)
        same(lambda m, n=n: t(m, gamma_inputs).clone().polygamma_(n), rtol=1e-9)
        x = t(gradkit, rng().standard_normal((3, 3)), requires_grad=True)
        assert gradcheck(lambda v, n=n: v.polygamma(n), (x,))
    x = t(gradkit, [0.7, 1.9, 3.3], requires_grad=True)
    assert gradgradcheck(lambda v: v.polygamma(2), (x,))


# -- test_op_invert, test_bitwise_not --------------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool"])
def test_invert_and_bitwise_not(dtype):
    def x(m):
        return m.tensor([True, False]) if dtype == "bool" else m.arange(
            127, dtype=getattr(m, dtype))
    same(lambda m: (~x(m), x(m).bitwise_not(), m.bitwise_not(x(m)), x(m).bitwise_not_()))
    if dtype != "bool":  # torch's 0xffff - arange(127) in int8: -1 - x, in two's complement
        np.testing.assert_array_equal((~x(gradkit)).numpy(),
                                      (-1 - np.arange(127)).astype(dtype))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_invert_and_bitwise_not_of_floats_refused(dtype):
    """~x is the operator's TypeError; bitwise_not(x), x.bitwise_not_() the kernel's
    NotImplementedError."""
    raises_same(lambda m: ~m.zeros(10, dtype=getattr(m, dtype)),
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    for program in (lambda m: m.zeros(10, dtype=getattr(m, dtype)).bitwise_not(),
                    lambda m: m.zeros(10, dtype=getattr(m, dtype)).bitwise_not_()):
        raises_same(program, '"bitwise_not_cpu" not implemented for')


# -- test_abs_angle_complex_to_float, test_absolute, test_abs_big_number,
#    test_abs_signed_zero, test_abs_zero, test_sgn -----------------------------------------

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_abs_angle_complex_to_float(dtype):
    data = [complex(a, b) for a, b in rng().uniform(-100, 100, (60, 2))]
    for values in (data, []):
        same(lambda m, v=values: (m.abs(t(m, v, dtype)), m.angle(t(m, v, dtype)),
                                  t(m, v, dtype).absolute()))
    raises_same(lambda m: t(m, data, dtype).abs_(), "In-place abs is not supported for complex")
    raises_same(lambda m: t(m, data, dtype).absolute_(), "In-place abs is not supported")
    assert not hasattr(gradkit.Tensor, "angle_") and not hasattr(torch.Tensor, "angle_")
    same(lambda m: (m.sgn(t(m, data, dtype)).angle(), t(m, data, dtype).angle()), rtol=1e-6)
    same(lambda m: m.sgn(t(m, data, dtype)).abs(), rtol=1e-6)


def test_abs_of_integers_and_signed_zeros():
    same(lambda m: t(m, [2**31 + 1], "int64").abs())
    same(lambda m: t(m, [-2**63, -128, 5], "int64").abs())  # int min stays int min, as in C
    same(lambda m: t(m, [-128, 127], "int8").abs())
    for dtype in ("float32", "float64"):
        zeros = np.zeros(129)
        zeros[::2] = -0.0
        same(lambda m, d=dtype, z=zeros: (t(m, z, d).abs(), t(m, z, d).clone().abs_(),
                                          t(m, z, d).absolute()))
        same(grads(lambda m, x: x.abs(), [-0.0, 0.0, -2.0, 3.0]))


# -- test_sign, test_signbit_float, test_signbit_int_and_bool, test_isfinite_isinf_isnan*,
#    test_isposinf_isneginf_float, test_isposinf_isneginf_int_and_bool, test_isreal_* --------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "uint8", "int8", "int16",
                                   "int32", "int64", "bool"])
def test_sign_signbit_and_predicates(dtype):
    if dtype == "bool":
        data = [True, True, False, True]
    elif dtype.startswith("float"):
        info = np.finfo(dtype)
        data = [NAN, -12, 0, -0.0, 71, float(info.min), float(info.max), INF, -INF, -1, 1]
    else:
        info = np.iinfo(dtype)
        data = [v for v in (-12, 0, 71, -1, 1) if info.min <= v] + [info.min, info.max]
    same(lambda m: (m.sign(t(m, data, dtype)), t(m, data, dtype).clone().sign_(),
                    m.signbit(t(m, data, dtype))))
    same(lambda m: tuple(getattr(m, name)(t(m, data, dtype)) for name in
                         ("isfinite", "isinf", "isnan", "isposinf", "isneginf", "isreal")))


def test_predicates_of_complex_values():
    data = [complex(-INF, INF), complex(-INF, 0), complex(0, INF), complex(INF, NAN),
            complex(NAN, 0), complex(-1, 0), complex(0, 1), 1, 1 + 1j, 2 + 0j, 3j, 2 - 1j, 2 - 0j]
    for dtype in ("complex64", "complex128"):
        same(lambda m, d=dtype: tuple(getattr(m, name)(t(m, data, d))
                                      for name in ("isfinite", "isinf", "isnan", "isreal")))


# -- test_hardshrink, test_hardshrink_edge_cases, test_hardswish, test_hardsigmoid,
#    test_hardsigmoid_backward, test_silu, test_mish, test_threshold, test_sinc --------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hardshrink(dtype):
    data = [[1, 0.5], [0.3, 0.6]]
    same(lambda m: (t(m, data, dtype).hardshrink(0.3), t(m, data, dtype).hardshrink(0.5),
                    t(m, data, dtype).hardshrink(), t(m, data, dtype).t().hardshrink(0.3)))
    info = np.finfo(dtype)
    tiny, big = float(info.tiny), float(info.max)
    edges = [0.0, tiny, -tiny, 0.1, -0.1, 1.0, -1.0, big, -big, INF, -INF]
    for lambd in (0.0, tiny, 0.1, 1.0, big, INF):
        same(lambda m, lam=lambd: t(m, edges, dtype).hardshrink(lam))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hard_activations(dtype):
    """hardswish and hardsigmoid at torch's inputs, in place too; hardsigmoid's gradient at
    its kinks (-3, 3: 0, as torch's)."""
    data = [-1000, -4, -3, -2, 0, 2, 3, 4, 1000]
    same(lambda m: (m.nn.functional.hardswish(t(m, data, dtype)),
                    m.nn.functional.hardsigmoid(t(m, data, dtype)),
                    m.nn.functional.hardsigmoid(t(m, data, dtype).clone(), inplace=True)))
    same(lambda m: m.nn.functional.hardswish(x := t(m, data, dtype).clone(), inplace=True) or x)
    same(grads(lambda m, x: m.nn.functional.hardsigmoid(x), [-3.0, 3.0, -2.0, 2.0, -6.0, 6.0],
               dtype))
    same(grads(lambda m, x: m.nn.functional.hardswish(x), data, dtype))


@pytest.mark.parametrize("name", ["silu", "mish"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_silu_and_mish(name, dtype):
    data = np.concatenate([rng().standard_normal((5, 8)),
                           [[-1000, -1, -0.1, 0, 0.5, 1, 2, 1000]]]).astype(dtype)

    def program(m):
        fn = getattr(m.nn.functional, name)
        x = t(m, data, dtype)
        return (fn(x), fn(x.clone(), inplace=True), fn(x.transpose(0, 1)),
                fn(x.clone().transpose(0, 1), inplace=True))
    rtol = 1e-5 if dtype == "float32" else None  # mish's tanh(softplus(x)): a few ulps
    same(program, rtol=rtol)
    same(grads(lambda m, x: getattr(m.nn.functional, name)(x), data, dtype), rtol=rtol)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "float32", "float64"])
def test_threshold(dtype):
    signs = np.sign(rng().standard_normal(100))
    same(lambda m: m.threshold(t(m, signs, dtype), 0, 0))
    assert bool((gradkit.threshold(t(gradkit, signs, dtype), 0, 0) <= 0).any())


def test_sinc_gradient_at_zero_and_tiny():
    """gradcheck at 0, the smallest normal and 1 (the derivative at 0 is special-cased), and
    the gradient itself as torch's."""
    data = [0.0, float(np.finfo(np.float64).tiny), 1.0]
    assert gradcheck(gradkit.sinc, (t(gradkit, data, requires_grad=True),))
    same(grads(lambda m, x: m.sinc(x), data))


# -- test_frexp ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_frexp(dtype):
    data = np.concatenate([rng().uniform(-9, 9, 50), [0.0, -0.0, INF, -INF, NAN, 1e-40, 5e-324,
                                                    65504, 2**-24]]).astype(dtype)
    same(lambda m: m.frexp(t(m, data, dtype)))
    mantissa, exponent = gradkit.frexp(t(gradkit, data, dtype))
    finite = np.isfinite(data)
    np.testing.assert_array_equal(mantissa.numpy()[finite] * 2.0 ** exponent.numpy()[finite],
                                  data[finite])
    assert exponent.dtype == gradkit.int32


# -- test_igamma_common, test_igammac_common, test_igamma_edge_cases, test_igammac_edge_cases --

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_igamma_and_igammac(dtype):
    vec = np.exp(np.linspace(-4, 4, 500))[:, None]
    pairs = [(vec, vec.T), (vec, vec), (vec, 0.5 * vec), (vec, 2.0 * vec),
             (vec[::2], vec[::2]), (vec[::2], vec[:250]), (vec[:250], vec[::2])]
    rtol = {"float16": 2e-3, "float32": 1e-4, "float64": 1e-10}[dtype]  # float32's tails
    for a, x in pairs:
        same(lambda m, a=a, x=x: (m.igamma(t(m, a, dtype), t(m, x, dtype)),
                                  m.igammac(t(m, a, dtype), t(m, x, dtype))), rtol=rtol,
             atol=100 * float(np.finfo(dtype).tiny))  # results near tiny lose digits
    zeros, infs = [0.0] * 3, [INF] * 3
    zero_to_large, small_to_inf = [0.0, 1.0, 1e3], [1e-3, 1.0, INF]
    for a, x in ((zeros, small_to_inf), (small_to_inf, zeros), (infs, zero_to_large),
                 (zero_to_large, infs), (zeros, zeros), (infs, infs),
                 ([-v for v in small_to_inf], small_to_inf)):
        same(lambda m, a=a, x=x: (m.igamma(t(m, a, dtype), t(m, x, dtype)),
                                  m.igammac(t(m, a, dtype), t(m, x, dtype))))


# -- test_i0_range1/2/3, test_i0_special, test_special_i0_i1_vs_scipy,
#    test_special_ndtr_vs_scipy, test_special_log_ndtr_vs_scipy ------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_bessel_i_and_normal_cdf(dtype):
    info = np.finfo(dtype)
    extremes = [float(info.min), float(info.max), float(info.eps), float(info.tiny)]
    ranges = [13.25] + ([88.5] if dtype != "float16" else []) + \
        ([709.75] if dtype == "float64" else [])
    uniform = rng().uniform(0, 1, 1000)
    span = (-65000, 65000) if dtype == "float16" else (-1e7, 1e7)
    inputs = [[], [INF, -INF, NAN], extremes, np.linspace(*span, 10000)] + \
        [uniform * r for r in ranges] + [-uniform * r for r in ranges]
    names = ["i0", "special.i0e", "special.i1", "special.i1e", "special.ndtr",
             "special.log_ndtr"]
    for data in inputs:
        for name in names:
            def program(m, name=name, data=data):
                target = m
                for part in name.split("."):
                    target = getattr(target, part)
                return target(t(m, data, dtype))
            # ndtr is (1 + erf(x / sqrt 2)) / 2: an ulp of erf near -1 is all of a small
            # result (atol: the dtype's eps); torch's float16 i0e rounds each step to Half
            atol = float(info.eps) if name == "special.ndtr" else 0.0
            same(program, rtol={"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[dtype],
                 where=name, atol=atol)


# -- test_nonzero_empty -------------------------------------------------------------------

def test_nonzero_empty():
    same(lambda m: (m.nonzero(m.zeros(0, 2, 0, 5, 0)),) + m.nonzero(m.zeros(0, 2, 0, 5, 0),
                                                                       as_tuple=True))
    same(lambda m: (m.nonzero(m.tensor(0.5)),) + m.nonzero(m.tensor(0.5), as_tuple=True))
    same(lambda m: (m.nonzero(m.zeros(())),) + m.nonzero(m.zeros(()), as_tuple=True))


# -- TestUnaryUfuncMathOps: rad2deg, deg2rad, frac, trunc, polygamma 0-2, abs: reference,
#    non-contiguous, index, expand, size-1, large and in-place forms ---------------------------

def _reference_input():
    rows = [list(range(-5, 5)), [0] * 10, [x + 1e-6 for x in range(-5, 5)],
            [x + 1e10 for x in range(-5, 5)], [x - 1e10 for x in range(-5, 5)],
            list(rng().standard_normal(7)) + [INF, -INF, NAN],
            list(rng().standard_normal(10) * 1e6),
            [math.pi * (x / 2) for x in range(-5, 5)]]
    return np.array(rows)


@pytest.mark.parametrize("name", ["rad2deg", "deg2rad", "frac", "trunc", "abs"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int32", "int64",
                                   "uint8"])
def test_math_ops_of_the_old_test_class(name, dtype):
    data = _reference_input()
    if dtype[0] in "iu":
        data = rng().integers(0 if dtype == "uint8" else -5, 5, (8, 10))
    views = {"plain": lambda x: x, "non_contig": lambda x: x.repeat_interleave(2, 1)[:, ::2],
             "index": lambda x: x.reshape(2, 2, 20)[:, 1, ...],
             "expand": lambda x: x[:1].expand(3, -1), "size1": lambda x: x[:1, :5],
             "transposed": lambda x: x.T}
    for view in views.values():
        same(lambda m, v=view: (getattr(v(t(m, data, dtype)), name)(),
                                getattr(v(t(m, data, dtype)).clone(), name + "_")()))


# -- test_complex.py: test_to_list, test_dtype_inference, test_eq, test_ne (without out=) ------

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_tensor_behaviours(dtype):
    for lib in (gradkit, torch):
        assert lib.zeros((2, 2), dtype=getattr(lib, dtype)).tolist() == [[0j, 0j], [0j, 0j]]
    a = [-0.0610 - 2.1172j, 5.1576 + 5.4775j, complex(2.8871, NAN), -6.6545 - 3.7655j,
         -2.7036 - 1.4470j, 0.3712 + 7.989j, -0.0610 - 2.1172j, 5.1576 + 5.4775j,
         complex(NAN, -3.2650), -6.6545 - 3.7655j, -2.7036 - 1.4470j, 0.3712 + 7.989j]
    b = [-6.1278 - 8.5019j, 0.5886 + 8.8816j, complex(2.8871, NAN), 6.3505 + 2.2683j,
         0.3712 + 7.9659j, 0.3712 + 7.989j, -6.1278 - 2.1172j, 5.1576 + 8.8816j,
         complex(NAN, -3.2650), 6.3505 + 2.2683j, 0.3712 + 7.9659j, 0.3712 + 7.989j]
    for x, y in ((a[:1], b[:1]), (a[:1], [-6.1278 - 2.1172j]), (a[:1], [-0.0610 - 8.5019j]),
                 (a, b)):
        same(lambda m, x=x, y=y: (m.eq(t(m, x, dtype), t(m, y, dtype)),
                                  m.eq(t(m, x, dtype), t(m, x, dtype)),
                                  m.ne(t(m, x, dtype), t(m, y, dtype)),
                                  m.ne(t(m, x, dtype), t(m, x, dtype))))


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_complex_dtype_inference(default):
    """tensor([3., 3. + 5.j]) is complex64 under a float32 default, complex128 under float64."""
    def program(m):
        before = m.get_default_dtype()
        m.set_default_dtype(getattr(m, default))
        try:
            return m.tensor([3.0, 3.0 + 5.0j])
        finally:
            m.set_default_dtype(before)
    same(program)
    assert program(gradkit).dtype == (gradkit.complex128 if default == "float64"
                                      else gradkit.complex64)
