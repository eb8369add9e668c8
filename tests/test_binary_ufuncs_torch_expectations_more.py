"""torch's binary-ufunc tests of comparisons, logical and bitwise ops, shifts,
maximum/minimum/fmax/fmin, copysign, heaviside, and atan2, hypot, gcd, lcm, nextafter, ldexp,
lerp, logaddexp(2), xlogy/xlog1py, zeta and trapezoid (test/test_binary_ufuncs.py), re-run
under torch 2.13 and gradkit: same values, dtypes, gradients, or the same error.
"""
import itertools
import math
import operator

import numpy as np
import pytest
from test_binary_ufuncs_torch_expectations import (
    COMPLEX, FLOATS, INTS, RNG, assert_op_same, assert_same_as_torch, t, values)
from test_torch_numerics import with_grads

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

REAL = INTS + FLOATS
ALL = ("bool",) + REAL + COMPLEX
COMPARISONS = ["lt", "le", "gt", "ge", "eq", "ne", "logical_and", "logical_or", "logical_xor"]


def extremal(dtype, shape):
    """torch's _generate_input with extremal values: zeros, NaN and infinities sprinkled."""
    out = values(dtype, shape, 15, 99)
    if dtype in FLOATS + COMPLEX:
        out = out * RNG.integers(30, 100)
        for value in (0, math.nan, math.inf, -math.inf):
            out[RNG.standard_normal(shape) > 0.5] = value
    return out


@pytest.mark.parametrize("left,right", list(itertools.combinations_with_replacement(ALL, 2)))
def test_comparison_ops_type_promotion_and_broadcasting(left, right):
    """test_comparison_ops_type_promotion_and_broadcasting (no out=): every dtype pair, with
    broadcasting and extremal values; ordered comparisons of complex refused."""
    for size in ((1,), (10,), (10, 1), (4, 10), (12, 3)):
        a, b = extremal(left, size), extremal(right, (2,) + size)
        for name in COMPARISONS:
            assert_op_same(lambda m, x, y, name=name: getattr(m, name)(x, y), (a, left),
                           (b, right))


def test_comparison_ops_elementwise_and_bool_results():
    """test_comparison_ops, test_comparison_ops_must_take_bool_output,
    test_bool_tensor_comparison_ops, test_logical: the operators on random floats, bool
    tensors (with True, False and 0-d bool tensors) and integer tensors with numbers."""
    x, y = values("float32", (5, 5)), values("float32", (5, 5))
    ops = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge)
    assert_op_same(lambda m, a, b: tuple(op(a, b) for op in ops), (x, "float32"), (y, "float32"))
    a = np.array([1, 0, 1, 0, 1, 0], bool)
    b = np.array([1, 0, 1, 1, 1, 1], bool)
    assert_op_same(lambda m, p, q: tuple(op(p, q) for op in ops) + (
        p > False, p == m.tensor(True), p == m.tensor(0, dtype=m.bool), m.tensor(p.equal(q))),
        (a, "bool"), (b, "bool"))
    for dtype in REAL + ("bool",):
        data = [True, False, True, False] if dtype == "bool" else [1, 2, 3, 4]
        other = True if dtype == "bool" else 2
        assert_same_as_torch(lambda m, d=dtype, data=data, o=other: tuple(
            getattr(t(m, np.array(data), d), op)(o) for op in ("lt", "le", "ge", "gt", "eq", "ne")
        ) + tuple(getattr(t(m, np.array(data), d), op)(t(m, np.array([o]), d))
                  for op in ("lt", "le", "ge", "gt", "eq", "ne")))


def test_inplace_comparisons_and_overflowing_scalars():
    """test_inplace_comparison_ops_require_inputs_have_same_dtype and the scalar/0-d overflow
    tests (2021 versions; torch 2.13 casts instead of refusing): the same outcome as torch."""
    for name in ("lt_", "le_", "gt_", "ge_", "eq_", "ne_", "logical_xor_", "logical_and_",
                 "logical_or_"):
        assert_same_as_torch(lambda m, name=name: getattr(m.tensor([1], dtype=m.int32), name)(
            m.tensor([2], dtype=m.int64)))
    small = lambda m: m.tensor([1 << 5], dtype=m.uint8)  # noqa: E731
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
        assert_same_as_torch(lambda m, op=op: op(small(m), 1 << 20))
        assert_same_as_torch(lambda m, op=op: op(1 << 20, small(m)))
        assert_same_as_torch(lambda m, op=op: op(small(m), m.tensor(1 << 20, dtype=m.int32)))
        assert_same_as_torch(lambda m, op=op: op(m.tensor(1 << 40), m.tensor([1 << 30],
                                                                               dtype=m.int32)))


@pytest.mark.parametrize("left", ALL)
@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops(name, left):
    """test_logical_and/_or/_xor: every dtype pair, the result and the in-place form (self's
    dtype kept)."""
    for right in ALL:
        a, b = np.array([10, 0, 1, 0]), np.array([1, 0, 0, 10])
        assert_op_same(lambda m, x, y: (getattr(x, name)(y), getattr(x.clone(), name + "_")(y)),
                       (a, left), (b, right))


def test_logical_xor_with_nontrivial_alignment():
    """test_logical_xor_with_nontrivial_alignment (no out=): slices at odd offsets."""
    a, b = values("bool", (128,)), values("bool", (128,))
    assert_op_same(lambda m, x, y: tuple(m.logical_xor(x[i:100 + i], y[j:100 + j])
                                         for i in (1, 2, 4, 8, 15) for j in (1, 2, 4, 8, 15)),
                   (a, "bool"), (b, "bool"))


@pytest.mark.parametrize("dtype", INTS + ("bool",))
def test_bitwise_ops(dtype):
    """test_bitwise_ops: & | ^ and &= |= ^= on tensors, tensor and number, number and tensor."""
    ops = (operator.and_, operator.or_, operator.xor)
    inplace = (operator.iand, operator.ior, operator.ixor)
    for shape in ((5,), (15, 15), (100, 100)):
        a, b = values(dtype, shape), values(dtype, shape)
        scalar = values(dtype, ()).item()
        assert_op_same(lambda m, x, y: tuple(op(x, y) for op in ops) + tuple(
            op(x.clone(), y) for op in inplace), (a, dtype), (b, dtype))
        assert_op_same(lambda m, x, s: tuple(op(x, s) for op in ops) + tuple(
            op(s, x) for op in ops) + tuple(op(x.clone(), s) for op in inplace),
            (a, dtype), scalar)


@pytest.mark.parametrize("dtype", INTS)
def test_shifts(dtype):
    """test_signed_shift, test_shift_limits: -10 << 2, >> 1; shifts by the width and beyond
    and by negative counts (zeros left, the sign fill right), small and large tensors."""
    info = np.iinfo(dtype)
    inputs = [np.array([-1, 0, 1] if dtype != "uint8" else [0, 1, 2]),
              np.array([info.min, info.max]), values(dtype, (16, 16), info.min, info.max)]
    if dtype != "uint8":
        assert_same_as_torch(lambda m: (t(m, np.array([-10, 10]), dtype) << 2,
                                        t(m, np.array([-10, 10]), dtype) >> 1))
    shifts = list(range(-100, -1, 7)) + list(range(info.bits, 100, 7))
    for data in inputs:
        assert_same_as_torch(lambda m, data=data: tuple(
            op(t(m, data, dtype), s) for s in shifts for op in (operator.lshift,
                                                                operator.rshift)))


MIN_MAX = [("maximum", "max", "fmax"), ("minimum", "min", "fmin")]
MIN_MAX_OPS = ["maximum", "max", "fmax", "minimum", "min", "fmin"]


@pytest.mark.parametrize("left", REAL + ("bool",))
def test_maximum_minimum_type_promotion(left):
    """test_maximum_minimum_type_promotion: the result is result_type(a, b) for every pair."""
    for right in REAL + ("bool",):
        assert_op_same(lambda m, a, b: tuple(getattr(m, op)(a, b) for op in MIN_MAX_OPS),
                       (np.array([0, 1]), left), (np.array([1, 0]), right))


@pytest.mark.parametrize("dtype", REAL + ("bool",))
def test_maximum_minimum_values_nan_and_inf(dtype):
    """test_maximum_minimum_int_and_bool, _float, _float_nan_and_inf, test_min_max_binary_op_nan:
    random values, then NaN (maximum/minimum spread it, fmax/fmin skip it) and infinities."""
    a, b = values(dtype, (10,), -99, 99), values(dtype, (10,), -99, 99)
    assert_op_same(lambda m, x, y: tuple(getattr(m, op)(x, y) for op in MIN_MAX_OPS),
                   (a, dtype), (b, dtype), rtol=0)
    if dtype in FLOATS:
        inf, nan = math.inf, math.nan
        a = np.array([inf, -inf, nan, inf, nan, nan, 1, nan])
        b = np.array([-inf, inf, inf, nan, nan, 0, nan, -5])
        assert_op_same(lambda m, x, y: tuple(getattr(m, op)(x, y) for op in MIN_MAX_OPS),
                       (a, dtype), (b, dtype), rtol=0)


@pytest.mark.parametrize("real", ALL)
def test_maximum_minimum_complex(real):
    """test_maximum_minimum_complex: a complex operand on either side is refused."""
    for complex_dtype in COMPLEX:
        for op in MIN_MAX_OPS:
            for pair in (((np.ones(1), complex_dtype), (np.ones(1), real)),
                         ((np.ones(1), real), (np.ones(1), complex_dtype))):
                assert_op_same(lambda m, a, b, op=op: getattr(m, op)(a, b), *pair)


@pytest.mark.parametrize("left,right", [("float32", "float32"), ("float64", "float32"),
                                        ("float16", "float64"), ("float64", "float64")])
def test_maximum_and_minimum_subgradient(left, right):
    """test_maximum_and_minimum_subgradient: ties share the gradient; float64 gradcheck."""
    a, b = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 1.0])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        def program(m, name=name):
            x = t(m, a, left, requires_grad=True)
            y = t(m, b, right, requires_grad=True)
            getattr(m, name)(x, y).sum().backward()
            return x.grad, y.grad
        assert_same_as_torch(program)
    x, y = (gradkit.tensor(v, dtype=gradkit.float64, requires_grad=True)
            for v in (values("float64", (5,)), values("float64", (5,))))
    assert gradcheck(gradkit.maximum, (x, y)) and gradgradcheck(gradkit.minimum, (x, y))


def test_maximum_minimum_forward_ad_float32():
    """test_maximum_minimum_forward_ad_float32: the tangent of the winner."""
    x, y, tx, ty = (values("float32", (3,)) for _ in range(4))
    for name in ("maximum", "minimum"):
        def program(m, name=name):
            fw = m.autograd.forward_ad
            with fw.dual_level():
                out = getattr(m, name)(fw.make_dual(t(m, x, "float32"), t(m, tx, "float32")),
                                       fw.make_dual(t(m, y, "float32"), t(m, ty, "float32")))
                return fw.unpack_dual(out).tangent
        assert_same_as_torch(program)


@pytest.mark.parametrize("left", REAL + ("bool",))
def test_copysign(left):
    """test_copysign: every dtype pair, broadcasting both ways, and 0.0, -0.0, inf, -inf,
    NaN as magnitude and as sign (signs of zero compared)."""
    cases = [0.0, -0.0, math.inf, -math.inf, math.nan]
    for right in REAL + ("bool",):
        a, b = values(left, (10, 10)), values(right, (10, 10))
        assert_op_same(lambda m, x, y: (m.copysign(x, y), m.copysign(x[:, None], y),
                                        m.copysign(x, y[:, None])), (a, left), (b, right))
        if left in FLOATS:
            assert_op_same(lambda m, x, y: tuple(m.copysign(m.tensor([c], dtype=x.dtype), y)
                                                 for c in cases), (a, left), (b, right))
        if right in FLOATS:
            assert_op_same(lambda m, x, y: tuple(m.copysign(x, m.tensor([c], dtype=y.dtype))
                                                 for c in cases), (a, left), (b, right))


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float64", "float16"),
                                    ("float16", "float64")])
def test_copysign_subgradient(dtypes):
    """test_copysign_subgradient: gradients at 0.0 and -0.0 magnitudes and signs."""
    for magnitude, sign in (([0.0] * 3, [-1.0, 0.0, 1.0]), ([-0.0] * 3, [-1.0, 0.0, 1.0]),
                            ([-1.0, 0.0, 1.0], [0.0] * 3), ([-1.0, 0.0, 1.0], [-0.0] * 3)):
        def program(m, magnitude=magnitude, sign=sign):
            x = t(m, np.array(magnitude), dtypes[0], requires_grad=True)
            y = t(m, np.array(sign), dtypes[1], requires_grad=True)
            m.copysign(x, y).sum().backward()
            return x.grad, y.grad
        assert_same_as_torch(program)


@pytest.mark.parametrize("left", REAL + ("bool",))
def test_heaviside(left):
    """test_heaviside, test_heaviside_complex: values with zeros, same dtypes only (torch's
    message otherwise), the method and in-place forms; complex refused."""
    for right in REAL + ("bool",):
        x, v = values(left, (10,)), values(right, (10,))
        x[[0, 3, 7]] = 0
        assert_op_same(lambda m, a, b: (m.heaviside(a, b), a.heaviside(b),
                                        a.clone().heaviside_(b)), (x, left), (v, right))
    data = np.array([complex(0, -6), complex(-1, 3), complex(1, 1)])
    for program in (lambda m: m.heaviside(m.tensor(data), m.tensor(data).real),
                    lambda m: m.tensor(data).real.heaviside(m.tensor(data)),
                    lambda m: m.tensor(data).heaviside_(m.tensor(data))):
        assert_same_as_torch(program)


def test_hypot_atan2_and_edge_cases():
    """test_hypot, test_atan2, test_atan2_edgecases: broadcast and transposed operands, an
    int64 with a float, the quadrants and axes, float16 against float32's values."""
    for dtype in FLOATS:
        for a, b in (((10,), (10,)), ((3, 3, 3), (3, 3, 3)), ((10, 1), (1, 10))):
            x, y = values(dtype, a), values(dtype, b)
            assert_op_same(lambda m, p, q: (m.hypot(p, q), p.atan2(q)), (x, dtype), (y, dtype),
                           rtol=1e-3)
        assert_op_same(lambda m, p, q: m.hypot(p, q), (values("int64", (10,), 0, 99), "int64"),
                       (values(dtype, (10,)), dtype))
    quadrants = [(0, 0), (0, 1), (0, -1), (-1, 0), (1, 0), (-1, -1), (1, 1), (1, -1), (-1, 1)]
    for dtype in ("float32", "float64"):
        x, y = (np.array(v, float) for v in zip(*quadrants))
        assert_op_same(lambda m, p, q: m.atan2(q, p), (x, dtype), (y, dtype))
    assert_same_as_torch(with_grads(lambda m, a, b: m.hypot(a, b) + m.atan2(a, b),
                                    values("float64", (4,)), values("float64", (4,))))


@pytest.mark.parametrize("dtype", INTS)
def test_gcd_lcm(dtype):
    """test_gcd, test_lcm: gcd(0, 0), gcd(0, a), uint8 values above 127, random signs."""
    zeros = (np.array([0, 10, 0]), np.array([0, 0, 10]))
    assert_op_same(lambda m, a, b: (m.gcd(a, b), m.lcm(a, b)), (zeros[0], dtype),
                   (zeros[1], dtype))
    a, b = values(dtype, (1024,), -20, 20), values(dtype, (1024,), -20, 20)
    assert_op_same(lambda m, x, y: (m.gcd(x, y), m.lcm(x, y)), (a, dtype), (b, dtype))
    if dtype == "uint8":
        assert_op_same(lambda m, x, y: m.gcd(x, y), (np.array([190, 210]), dtype),
                       (np.array([190, 220]), dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_nextafter(dtype):
    """test_nextafter: towards +-inf from 0, equal operands, NaN either side, random pairs."""
    t1, t2 = np.array([0.0, 0.0, 10.0]), np.array([math.inf, -math.inf, 10.0])
    assert_op_same(lambda m, a, b: (m.nextafter(a, b), m.nextafter(b, a)), (t1, dtype),
                   (t2, dtype), rtol=0)
    assert_op_same(lambda m, a, b: m.nextafter(a, b), (np.array([0, math.nan]), dtype),
                   (np.array([math.nan, 0]), dtype))
    a, b = values(dtype, (100,)), values(dtype, (100,))
    assert_op_same(lambda m, x, y: m.nextafter(x, y), (a, dtype), (b, dtype), rtol=0)


def test_ldexp():
    """test_ldexp: random mantissas and int32 exponents (function, method, in place),
    infinities and NaN, float16 kept, and 1 * 2 ** 128 in float64."""
    mantissas = values("float32", (64,))
    exponents = values("int32", (64,), -31, 31)
    assert_op_same(lambda m, x, e: (m.ldexp(x, e), x.ldexp(e), x.clone().ldexp_(e)),
                   (mantissas, "float32"), (exponents, "int32"))
    assert_op_same(lambda m, x, e: m.ldexp(x, e),
                   (np.array([math.inf, -math.inf, math.inf, math.nan]), "float32"),
                   (values("int32", (4,), 0, 31), "int32"))
    assert_op_same(lambda m, x, e: m.ldexp(x, e), (values("float16", (64,)), "float16"),
                   (values("int64", (64,), -5, 5), "int64"))
    assert_same_as_torch(lambda m: m.ldexp(m.tensor([1.0], dtype=m.float64), m.tensor([128])))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_lerp(dtype):
    """test_lerp, test_lerp_tensor_type_promotion: every shape combination of (), (5,),
    (5, 5), tensor, number, 0-d and complex weights; a float32 weight with other dtypes."""
    shapes = [(), (5,), (5, 5)]
    for a, b, c in itertools.product(shapes, shapes, shapes):
        start, end, weight = values(dtype, a), values(dtype, b), values(dtype, c)
        weights = [(weight, dtype), 0.3, (values(dtype, ()), dtype)] + (
            [complex(0, 1), complex(0.4, 1.2)] if dtype in COMPLEX else [])
        for w in weights:
            assert_same_as_torch(lambda m, w=w, s=start, e=end: (
                m.lerp(t(m, s, dtype), t(m, e, dtype), t(m, *w) if isinstance(w, tuple) else w),
                t(m, s, dtype).lerp(t(m, e, dtype), t(m, *w) if isinstance(w, tuple) else w)),
                rtol=1e-5)
    start, end = values(dtype, (5, 5), 1, 99), values(dtype, (5, 5), 1, 99)
    weight = values("float32", (5, 5), 1, 99)
    assert_same_as_torch(lambda m: m.lerp(t(m, start, dtype), t(m, end, dtype),
                                          t(m, weight, "float32")))


def test_lerp_lowp_cpu():
    """test_lerp_lowp_cpu: float16 lerp with weights 70000 and 8 is float32's, rounded."""
    for shape in ((4,), (20,), (3, 10, 10)):
        for x, y, w in ((0.0, 0.1, 70000), (-30000.0, -20000.0, "tensor")):
            assert_same_as_torch(lambda m, s=shape, x=x, y=y, w=w: m.lerp(
                m.full(s, x, dtype=m.half), m.full(s, y, dtype=m.half),
                m.full(s, 8, dtype=m.half) if w == "tensor" else w))


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
def test_logaddexp_logaddexp2(dtype):
    """test_logaddexp, test_logaddexp2: random, slices, values * 10000, and the infinities
    and NaN (logaddexp2 has no complex kernel)."""
    a, b = values(dtype, (64, 2), -2, 2) - 0.5, values(dtype, (64, 2), -2, 2) - 0.5
    specials = (np.array([math.inf, -math.inf, math.inf, math.nan]),
                np.array([math.inf, -math.inf, -math.inf, math.nan]))
    for x, y in ((a, b), (a[:3], b[:3]), (a * 10000, b * 10000), specials):
        assert_op_same(lambda m, p, q: m.logaddexp(p, q), (x, dtype), (y, dtype), rtol=2e-3)
        assert_op_same(lambda m, p, q: m.logaddexp2(p, q), (x, dtype), (y, dtype), rtol=2e-3)


@pytest.mark.parametrize("left", REAL + ("bool",))
def test_xlogy_xlog1py(left):
    """test_xlogy_xlog1py, test_xlogy_xlog1py_scalar_type_promotion: dtype pairs, broadcast,
    3.14 as self, in place (integer self refused), the special values against zeros, and
    Python numbers not promoting a 0-d float32."""
    for right in REAL + ("bool",):
        x, y, z = values(left, (3, 4), 1, 99), values(right, (3, 4), 1, 99), values(right, (4,))
        for fn in (lambda m, a, b: m.xlogy(a, b), lambda m, a, b: m.special.xlog1py(a, b)):
            assert_op_same(lambda m, a, b, fn=fn: (fn(m, a, b), fn(m, a, b[0]), fn(m, 3.14, b)),
                           (x, left), (y, right), rtol=1e-3)
        assert_op_same(lambda m, a, b: (a.clone().xlogy_(b), a.clone().xlogy_(b[0])), (x, left),
                       (z, right), rtol=1e-3)
    special = np.array([-1.0, 0.0, 1.0, 2.0, math.inf, -math.inf, math.nan])
    assert_op_same(lambda m, zeros, s: (m.xlogy(zeros, s), m.special.xlog1py(zeros, s),
                                        m.xlogy(0, s), m.special.xlog1py(0, s),
                                        zeros.clone().xlogy_(s)),
                   (np.zeros(7), left), (special, "float32"))
    assert_same_as_torch(lambda m: tuple(fn(a, b) for fn in (m.xlogy, m.special.xlog1py)
                                         for a, b in ((m.tensor(0.5), 5), (m.tensor(0.5), 5.0),
                                                      (5, m.tensor(0.5)), (5.0, m.tensor(0.5)))))


def test_xlogy_xlog1py_gradients():
    """test_xlogy_xlog1py_gradients: x's gradient is 0 where x is 0 (y <= 0 too)."""
    assert_same_as_torch(with_grads(lambda m, x, y: m.special.xlogy(x, y), [0.0, 0.0],
                                    [-1.5, 0.0]))
    assert_same_as_torch(with_grads(lambda m, x, y: m.special.xlog1py(x, y), [0.0, 0.0],
                                    [-2.5, -1.0]))


@pytest.mark.parametrize("left", INTS + ("float32", "float64", "bool"))
def test_zeta(left):
    """test_zeta: dtype pairs with broadcasting either side and both, numbers for x or q."""
    for right in INTS + ("float32", "float64", "bool"):
        for a, b in (((2, 3, 4), (2, 3, 4)), ((2, 1, 4), (2, 3, 4)), ((2, 3, 4), (2, 1, 4)),
                     ((2, 3, 1), (2, 1, 4))):
            assert_op_same(lambda m, x, q: m.special.zeta(x, q), (values(left, a), left),
                           (values(right, b), right), rtol=1e-5)
    for number in np.linspace(-5, 5, num=10).tolist():
        q = values("float32" if left in INTS + ("bool",) else left, (2, 3, 4))
        assert_op_same(lambda m, x, y: (m.special.zeta(x, y), m.special.zeta(y, x)), number,
                       (q, "float32" if left in INTS + ("bool",) else left), rtol=1e-5)


def test_trapezoid_and_cumulative_trapezoid():
    """test_trapezoid, test_cumulative_trapezoid: dx and x forms over dims, empty inputs,
    and torch's errors (dim out of range, one x per sample, complex dx, both x and dx)."""
    for fn in ("trapezoid", "cumulative_trapezoid"):
        _check_trapezoid(fn)
    assert_same_as_torch(lambda m: m.cumulative_trapezoid(m.ones(2, 2), dx=complex(1, 1)))


def _check_trapezoid(fn):
    for sizes, dim, dx in (((2, 3, 4), 1, 1), ((10, 2), 0, 0.1), ((1, 10), 0, 2.3),
                           ((0, 2), 0, 1.0), ((0, 2), 1, 1.0), ((2, 3), 2, 1.0)):
        y = values("float32", sizes)
        assert_same_as_torch(lambda m, y=y, dim=dim, dx=dx: getattr(m, fn)(
            t(m, y, "float32"), dx=dx, dim=dim), rtol=1e-5)
    for sizes, dim, x in (((2, 3, 4), 1, [1.0, 2.0, 3.0]), ((1, 10), 0, [1.0]),
                          ((0, 2), 1, [1.0, 2.0]), ((2, 3, 4), -1, [1.0, 2.0, 3.0, 4.0]),
                          ((2, 3, 4), 0, [1.0, 2.0]), ((2, 3), 2, []),
                          ((2, 2, 4), -1, [[1.0, 2.0, 3.0, 4.0]] * 2),
                          ((2, 3), 1, [1.0, 2.0]), ((2, 3), 1, [1.0, 2.0, 3.0, 4.0])):
        y = values("float32", sizes)
        assert_same_as_torch(lambda m, y=y, dim=dim, x=x: getattr(m, fn)(
            t(m, y, "float32"), x=m.tensor(x), dim=dim), rtol=1e-5)
    # torch's test passes x by keyword; its message then lists the keywords in its own order
    assert_same_as_torch(lambda m: getattr(m, fn)(m.ones(3, 3), m.ones(3, 3), dx=3))
