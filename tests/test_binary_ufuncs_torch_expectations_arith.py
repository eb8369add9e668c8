"""torch's binary-ufunc tests of arithmetic (test/test_binary_ufuncs.py): add/sub/mul, the
division family (rounding modes, floor_divide, remainder/fmod, division by zero), pow and
float_power, Python numbers on either side and the in-place operators, re-run under torch 2.13
and gradkit: same values, dtypes, gradients, or the same error (type and message).

The generic OpInfo tests are in test_binary_ufuncs_torch_expectations.py, comparisons, bitwise
and the other binary ops in test_binary_ufuncs_torch_expectations_more.py.
"""
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
SPECIAL = [1.0, -1.0, 0.0, -0.0, 0.1, -0.1, math.pi, -math.pi, math.inf, -math.inf, math.nan]


def full_range(dtype, shape):
    """Values over the whole range of an integer dtype, or +-1000 for floats."""
    if dtype in INTS:
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    return values(dtype, shape, -1000, 1000)


@pytest.mark.parametrize("dtype", REAL)
def test_div_rounding_modes(dtype):
    """test_div_rounding_modes, test_div_rounding_numpy: true, floor and trunc division over
    the whole range (no zero divisor), contiguous and every other element."""
    a, b = full_range(dtype, (200,)), full_range(dtype, (200,))
    b[b == 0] = 1
    for mode in (None, "floor", "trunc"):
        def program(m, mode=mode):
            x, y = t(m, a, dtype), t(m, b, dtype)
            return m.div(x, y, rounding_mode=mode), m.div(x[::2], y[::2], rounding_mode=mode)
        assert_same_as_torch(program, rtol=1e-3 if dtype == "float16" else 1e-6)
    assert_same_as_torch(lambda m: m.floor_divide(t(m, a, dtype), t(m, b, dtype)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_floor_div_extremal(dtype):
    """test_floor_div_extremal: finfo.max * 0.7 floor-divided by 0.5, -0.5, 0.0."""
    big = float(np.finfo(dtype).max) * 0.7
    for denominator in (0.5, -0.5, 0.0):
        for shape in ((), (32,)):
            assert_same_as_torch(lambda m, d=denominator, s=shape: m.div(
                m.full(s, big, dtype=getattr(m, dtype)), m.full(s, d, dtype=getattr(m, dtype)),
                rounding_mode="floor"))


@pytest.mark.parametrize("dtype", FLOATS)
def test_div_rounding_nonfinite(dtype):
    """test_div_rounding_nonfinite, test_divide_by_zero_rounding: every pair of special
    values, the three rounding modes, strided operands, and division by 0 and a zero tensor."""
    numerator = np.array(SPECIAL)[None, :]
    denominator = np.array([v for v in SPECIAL if v != 0])[:, None]
    for mode in (None, "floor", "trunc"):
        def program(m, mode=mode):
            a, b = t(m, numerator, dtype), t(m, denominator, dtype)
            strided_a = m.zeros(2, 22, dtype=a.dtype)[::2, ::2]
            strided_a.copy_(a)
            by_zero = t(m, np.array(SPECIAL), dtype)
            return (m.div(a, b, rounding_mode=mode), m.div(strided_a, b, rounding_mode=mode),
                    m.div(by_zero, 0, rounding_mode=mode),
                    m.div(by_zero, m.zeros_like(by_zero), rounding_mode=mode))
        assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_by_zero(dtype):
    """test_floor_divide_zero, test_fmod_remainder_by_zero_integral: CPU's ZeroDivisionError
    (floor_divide, // and rounding division; remainder, fmod), true division is a float."""
    a, zero = np.array([0, 1, 5], dtype), np.array([0, 1, 0], dtype)
    for fn in (lambda m, x, y: x // y, lambda m, x, y: m.floor_divide(x, y),
               lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
               lambda m, x, y: m.div(x, y, rounding_mode="floor"),
               lambda m, x, y: m.remainder(x, y), lambda m, x, y: m.fmod(x, y),
               lambda m, x, y: x % 0, lambda m, x, y: m.fmod(x, 0), lambda m, x, y: x / y):
        assert_op_same(fn, (a, dtype), (zero, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_fmod_remainder_by_zero_float(dtype):
    """test_fmod_remainder_by_zero_float: NaN everywhere, by 0.0 and by a zero tensor."""
    x = values(dtype, (10, 10))
    for fn in (lambda m, a, b: m.fmod(a, 0.0), lambda m, a, b: m.remainder(a, 0.0),
               lambda m, a, b: m.fmod(a, m.zeros_like(a)),
               lambda m, a, b: m.remainder(a, m.zeros_like(a))):
        assert_op_same(fn, (x, dtype), None)


@pytest.mark.parametrize("dtype", REAL)
def test_fmod_remainder(dtype):
    """test_fmod_remainder: mods 3, 2.3, a tensor, its transpose and a float tensor; dividend
    and its transpose; in place (or its cast error); remainder of a number by a tensor."""
    x, mod = values(dtype, (10, 10)), values(dtype, (10, 10), nonzero=True)
    mod_float = values("float32", (10, 10), nonzero=True)
    mods = [3, 2.3, (mod, dtype), "transposed", (mod_float, "float32")]
    for fn in (lambda m, a, b: m.fmod(a, b), lambda m, a, b: m.remainder(a, b),
               lambda m, a, b: a.clone().fmod_(b), lambda m, a, b: a.clone().remainder_(b)):
        for divisor in mods:
            for dividend in (lambda a: a, lambda a: a.t()):
                def program(m, fn=fn, divisor=divisor, dividend=dividend):
                    b = t(m, mod, dtype).t() if divisor == "transposed" else (
                        t(m, *divisor) if isinstance(divisor, tuple) else divisor)
                    return fn(m, dividend(t(m, x, dtype)), b)
                assert_same_as_torch(program, rtol=1e-3)
    for number in (5, 3.14):
        assert_op_same(lambda m, a, b: m.remainder(a, b), number, (mod, dtype), rtol=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_remainder_fmod_large_dividend(dtype):
    """test_remainder_fmod_large_dividend: +-1e9 by +-pi, remainder has the divisor's sign."""
    a, b = np.array([1e9, 1e9, -1e9, -1e9]), np.array([math.pi, -math.pi] * 2)

    def program(m):
        return m.remainder(t(m, a, dtype), t(m, b, dtype)), m.fmod(t(m, a, dtype), t(m, b, dtype))
    assert_same_as_torch(program)
    remainder, fmod = (r.numpy() for r in program(gradkit))
    assert np.all(np.sign(remainder) == np.sign(b)) and np.all(np.sign(fmod) == np.sign(a))
    assert np.all(np.abs(remainder) < np.abs(b)) and np.all(np.abs(fmod) < np.abs(b))


def test_remainder_overflow():
    """test_remainder_overflow: int64 remainder by a divisor near 2 ** 49, both signs."""
    q = 392486996410368
    assert_same_as_torch(lambda m: tuple(
        op(m.tensor(23500), d) for op in (operator.mod, lambda x, d: (-x) % d) for d in (q, -q)))


@pytest.mark.parametrize("dtype", REAL + COMPLEX + ("bool",))
def test_muldiv_scalar(dtype):
    """test_muldiv_scalar, test_rdiv, test_floor_divide_scalar/_tensor: x * s, s * x, x / s,
    s / x, 30 / x, x // 3 and x // arange against the same with a full tensor of s."""
    x, s = values(dtype, (10, 3), nonzero=True), values(dtype, (), nonzero=True).item()
    assert_same_as_torch(lambda m: tuple(
        fn(t(m, x, dtype), s) for fn in (operator.mul, lambda a, b: b * a, operator.truediv,
                                         lambda a, b: b / a, lambda a, b: 30 / a)), rtol=1e-3)
    if dtype not in COMPLEX + ("bool",):
        assert_same_as_torch(lambda m: (t(m, x, dtype) // 3, t(m, x, dtype) // m.arange(
            1, 4, dtype=getattr(m, dtype))))


def test_complex_div_underflow_overflow():
    """test_complex_div_underflow_overflow: no overflow or underflow in the intermediate
    products of complex division (near finfo.max / 2 and finfo.tiny)."""
    for dtype in COMPLEX:
        info = np.finfo(np.float32 if dtype == "complex64" else np.float64)
        low, high, tiny = float(info.min) / 2, float(info.max) / 2, float(info.tiny)
        numerator = [complex(low, low), complex(high, high), complex(tiny, tiny),
                     complex(tiny, 0.0), 0j]
        denominator = [complex(low, low), complex(high, high), complex(tiny, tiny),
                       complex(0.0, tiny), complex(tiny, tiny)]
        assert_op_same(lambda m, a, b: a / b, (np.array(numerator), dtype),
                       (np.array(denominator), dtype))


def test_python_numbers_div_floordiv_and_arithmetic():
    """test_div_and_floordiv_vs_python, test_binary_ops_with_scalars,
    test_idiv_and_ifloordiv_vs_python (without TorchScript): 0-d tensors and Python numbers
    in every combination, the reflected and in-place forms, int and half-int values."""
    pairs = [(f(a), f(b)) for a in range(-6, 6) for b in range(-6, 6)
             for f in (lambda v: v * 0.5, math.floor) if f(b) != 0]
    ops = (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
           "true_divide", "floor_divide", "div")

    def program(m):
        out = []
        for a, b in pairs:
            a_t, b_t = m.tensor(a), m.tensor(b)
            for fn in ops:
                run = (lambda x, y, fn=fn: getattr(m, fn)(x, y)) if isinstance(fn, str) else fn
                out += [run(a_t, b_t), run(a_t, b), run(a, b_t)]
            for inplace in (operator.itruediv, operator.ifloordiv):
                out.append(_inplace_outcome(m, inplace, a_t, b_t))
                out.append(_inplace_outcome(m, inplace, a_t, b))
            out.append(a_t.clone().floor_divide_(b_t))
        return tuple(m.as_tensor(o) for o in out)
    assert_same_as_torch(program)


def _inplace_outcome(m, inplace, x, y):
    """``x op= y`` on a clone, or a tensor of -1 where it raises (an integer /= ...)."""
    try:
        return inplace(x.clone(), y)
    except RuntimeError as e:
        assert "can't be cast to the desired output type" in str(e)
        return m.tensor(-1.0)


def test_inplace_division_and_dunders_keep_the_tensor():
    """test_inplace_division, test_inplace_dunders: x op= y is the same tensor, same memory."""
    for m in (gradkit, torch):
        x = m.tensor([0.5, 2.0])
        identity, pointer = id(x), x.data_ptr()
        for update in (operator.iadd, operator.isub, operator.imul, operator.itruediv,
                       operator.ipow, operator.ifloordiv, operator.imod):
            x = update(x, 1)
        assert id(x) == identity and x.data_ptr() == pointer
    assert_same_as_torch(lambda m: _all_inplace_dunders(m.tensor([0.5, 2.0])))


def _all_inplace_dunders(x):
    for update in (operator.iadd, operator.isub, operator.imul, operator.itruediv,
                   operator.ipow, operator.ifloordiv, operator.imod):
        x = update(x, 1)
    return x


def test_add_sub_mul_alpha_and_errors():
    """test_add, test_sub, test_sub_typing, test_csub, test_mul: slices in place, alpha of
    every kind, bool tensors, and torch's messages for mismatched alpha and bool subtraction."""
    m1, v1 = values("float32", (10, 10)), values("float32", (10,))
    c1, c2 = np.array([2 + 3j, 4 + 5j]), np.array([4 + 5j, 2 + 3j])
    flags = (np.array([1, 0, 0, 1, 0, 0], bool), np.array([1, 1, 0, 0, 0, 1], bool))
    programs = [
        lambda m: (m.add(t(m, m1, "float32")[4], t(m, v1, "float32")),
                   m.add(t(m, m1, "float32")[:, 4], t(m, v1, "float32"))),
        lambda m: _column_update(m, t(m, m1, "float32"), lambda c: c.add_(2)),
        lambda m: _column_update(m, t(m, m1, "float32"), lambda c: c.mul_(2)),
        lambda m: _column_update(m, t(m, m1, "float32"), lambda c: c.div_(2)),
        lambda m: _column_update(m, t(m, m1, "float32"), lambda c: c.true_divide_(2)),
        lambda m: (t(m, m1, "float32") + 3, 3 + t(m, m1, "float32"),
                   t(m, m1, "float32") + t(m, m1, "float32").t(), m.add(t(m, m1, "float32"),
                   t(m, v1, "float32"), alpha=-1), t(m, m1, "float32").sub_(123.5)),
        lambda m: (m.tensor([1.0]) + m.tensor([]), m.add(m.tensor(1, dtype=m.uint8), 1)),
        lambda m: (t(m, flags[0], "bool") + t(m, flags[1], "bool"),
                   t(m, flags[0], "bool") * t(m, flags[1], "bool"),
                   m.add(m.zeros(2, 3, dtype=m.bool), m.zeros(2, 3, dtype=m.bool), alpha=0)),
        lambda m: tuple(m.add(t(m, c1, "complex64"), t(m, c2, "complex64"), alpha=alpha)
                        for alpha in (0.1, complex(0.1, 0.2), 2)),
    ]
    for program in programs:
        assert_same_as_torch(program)
    for op in ("add", "sub"):
        for alpha in (True, 1.0):
            assert_same_as_torch(lambda m, op=op, alpha=alpha: getattr(m, op)(
                m.tensor([1], dtype=m.int8), m.tensor([2], dtype=m.int8), alpha=alpha))
        for dtype in ("float32", "float64"):
            assert_same_as_torch(lambda m, op=op, dtype=dtype: getattr(m, op)(
                t(m, [3.0, 4.0], dtype), t(m, [4.0, 3.0], dtype), alpha=complex(0.1, 0.2)))
    for program in (lambda m: t(m, flags[0], "bool") - t(m, flags[1], "bool"),
                    lambda m: 1 - t(m, flags[0], "bool"), lambda m: t(m, flags[1], "bool") - 1,
                    lambda m: m.sub(t(m, flags[0], "bool"), t(m, flags[1], "bool"))):
        assert_same_as_torch(program)


def _column_update(m, matrix, update):
    update(matrix[:, 3])
    update(matrix[3])
    return matrix


@pytest.mark.parametrize("dtype", REAL + COMPLEX + ("bool",))
def test_sub_all_dtypes(dtype):
    """test_sub: [2.34, 4.44] - [1.23, 2.33] (ints as [2, 4] - [1, 2]); bool refused."""
    a, b = ([2, 4], [1, 2]) if dtype in INTS + ("bool",) else ([2.34, 4.44], [1.23, 2.33])
    assert_op_same(operator.sub, (np.array(a), dtype), (np.array(b), dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mul_intertype_scalar(dtype):
    """test_mul_intertype_scalar: 1.5 * int32 3 both ways; int32 *= float refuses."""
    def program(m):
        x, y = t(m, 1.5, dtype), m.tensor(3, dtype=m.int32)
        x *= y
        return x * y, y * x, x
    assert_same_as_torch(program)
    assert_same_as_torch(lambda m: m.tensor(3, dtype=m.int32).mul_(t(m, 1.5, dtype)))


def test_addcmul_scalars_as_floats():
    """test_addcmul_scalars_as_floats: a 0-d tensor value binds to the number argument; with
    requires_grad it is refused."""
    assert_same_as_torch(lambda m: m.tensor(3.0).addcmul(m.tensor(3.0), m.tensor(3.0),
                                                          value=m.tensor(2.0)))
    assert_same_as_torch(lambda m: m.tensor(3.0).addcmul(
        m.tensor(3.0), m.tensor(3.0), value=m.tensor(2.0, requires_grad=True)))


def test_divmul_scalar_half():
    """test_divmul_scalar: float16 100 / 1e5 and 1e-5 * 1e5 computed in float32 and rounded."""
    assert_same_as_torch(lambda m: (m.tensor(100.0, dtype=m.half).div(1e5),
                                    m.tensor(1e-5, dtype=m.half).mul(1e5),
                                    1e5 * m.tensor(1e-5, dtype=m.half)))


def test_add_with_tail_and_strided_cops():
    """test_add_with_tail, test_cdiv, test_cremainder, test_cmul, test_cpow: lengths past a
    vector multiple, and a strided view read as a matrix (as_strided)."""
    for tail in (1, 63, 67, 130):
        a, b = values("float32", (4096 + tail,)), values("float32", (4096 + tail,))
        assert_op_same(operator.add, (a, "float32"), (b, "float32"))
    m1, m2 = values("float32", (10, 10, 10)), values("float32", (100, 100))
    for fn in (operator.truediv, operator.mod, operator.mul, lambda a, b: a ** b):
        def program(m, fn=fn):
            sm1, sm2 = t(m, m1, "float32")[:, 4], t(m, m2, "float32")[:, 4]
            return fn(sm1, sm2.as_strided((10, 10), (sm2.stride(0) * 10, sm2.stride(0))))
        assert_same_as_torch(program)


POW_EXPONENTS = [-2.8, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 4, 3.3, True, False]
COMPLEX_EXPONENTS = [-2.5j, -1.0j, 0j, 1.0j, 2.5j, 1.0 + 1.0j, -1.0 - 1.5j, 3.3j]


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_pow(dtype):
    """test_pow: tensor ** number (negative int exponents of integers refused), number **
    tensor and its dtype (__rpow__), contiguous and strided, complex exponents (float16's
    ComplexHalf refusal aside: gradkit has no complex32, see the ledger)."""
    if dtype in INTS:
        m1 = values(dtype, (20, 20), 1, 3 if dtype in ("int8", "uint8") else 9)
    else:
        m1 = values(dtype, (20, 20), 0, 1) + 0.5
    exponents = POW_EXPONENTS + (COMPLEX_EXPONENTS if dtype != "float16" else [])
    for number in exponents:
        assert_same_as_torch(lambda m, n=number: (
            m.pow(t(m, m1, dtype)[4], n), m.pow(t(m, m1, dtype)[:, 4], n)), rtol=1e-3)
        if dtype not in INTS or not isinstance(number, int) or number >= 0:
            assert_same_as_torch(lambda m, n=number: n ** t(m, m1, dtype)[4], rtol=1e-3)
    assert_same_as_torch(lambda m: (m.pow(3, t(m, m1, dtype)[4]), m.pow(3, t(m, m1, dtype)[:, 4])),
                         rtol=1e-3)


def _pow_program(base, exponent):
    """torch's _test_pow: pow, method, in place (or its cast error) and pow_ on a clone."""
    def program(m):
        b, e = (t(m, *v) if isinstance(v, tuple) else v for v in (base, exponent))
        out = [m.pow(b, e)]
        if isinstance(base, tuple):
            out.append(b.pow(e))
            out.append(b.clone().pow_(e))
        return tuple(out)
    return program


def _pow_operands(dtype, shape, low, high, exp_low):
    return values(dtype, shape, low, high), values(dtype, shape, exp_low, high)


@pytest.mark.parametrize("dtype,low,high", [
    ("int8", -2, 2), ("uint8", 0, 3), ("int16", -5, 5), ("int64", -10, 10), ("int32", -10, 10),
    ("float16", 0.0, 5.0), ("float32", 0.0, 10.0), ("float64", 0.0, 10.0),
    ("float32", -10.0, 10.0), ("float64", -10.0, 10.0)])
def test_int_and_float_pow(dtype, low, high):
    """test_int_and_float_pow: tensor ** number and ** tensor over torch's shapes, broadcast
    and strided (integers take exponents >= 0), and the in-place forms."""
    cases = [((4, 4), 0, (4, 1)), ((3, 1), 4, (3, 1)), ((2,), 4, (1,)), ((1,), 2, ()),
             ((51, 51), 4, (51,)), ((5, 5, 5), 5, (5,)), ((), 2, ())]
    for base_shape, exp_scalar, exp_shape in cases:
        base = values(dtype, base_shape, low, high)
        exponent = values(dtype, exp_shape, 0 if dtype in INTS else low, high)
        for program in (_pow_program((base, dtype), exp_scalar),
                        _pow_program((base, dtype), (exponent, dtype))):
            assert_same_as_torch(program, rtol=1e-3)
        strided = np.repeat(base[..., None], 2, -1) if base.ndim else base
        assert_same_as_torch(lambda m, s=strided, e=exponent: m.pow(
            t(m, s, dtype)[..., 0] if s.ndim else t(m, s, dtype), t(m, e, dtype)), rtol=1e-3)


def test_pow_neg_ints_and_floats_of_integers():
    """test_int_tensor_pow_neg_ints, test_long_tensor_pow_floats,
    test_pow_scalar_type_promotion (no out=): torch's refusal of negative int powers (pow,
    pow_), int64 to float powers, and 2 ** uint8 computed in uint8."""
    ints = np.array([-2 ** 31, -3, -2, -1, 0, 1, 2, 3, 2 ** 31 - 1])
    for power in (-2 ** 31, -3, -2, -1):
        assert_same_as_torch(_pow_program((ints, "int32"), power))
    for power in (0.0, 1 / 3, 1 / 2, 1.0, 3 / 2, 2.0):
        assert_same_as_torch(_pow_program((np.array([0, 1, 23, 4567]), "int64"), power))
    assert_same_as_torch(lambda m: (m.pow(2, m.tensor(17, dtype=m.uint8)),
                                    m.pow(2, m.tensor([17], dtype=m.uint8)),
                                    m.pow(2, m.tensor([17]))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_scalar_pow_float_tensor(dtype):
    """test_float_scalar_pow_float_tensor: negative, fractional and zero bases to tensors."""
    floats = [2.0, -3 / 2, -1.0, -1 / 2, -1 / 3, 0.0, 1 / 3, 1 / 2, 1.0, 3 / 2, 2.0]
    tensors = [np.array(floats)] + [values(dtype, s, 0, 9) for s in [(1,), (2, 2), (2, 1),
                                                                     (2, 2, 2)]]
    for base in floats:
        for exponent in tensors:
            assert_same_as_torch(_pow_program(base, (exponent, dtype)))


@pytest.mark.parametrize("dtype", REAL[:-3] + ("float32", "float64") + COMPLEX)
def test_complex_scalar_pow_tensor(dtype):
    """test_complex_scalar_pow_tensor: complex bases to tensors with zeros, strided too."""
    exponent = values(dtype, (100,), -2, 2)
    exponent[[0, 10, 20]] = 0
    for base in (0.5j, 1.0 + 1.0j, -1.5j, 2.2 - 1.6j, 1 + 0j):
        assert_same_as_torch(lambda m, b=base: (m.pow(b, t(m, exponent, dtype)),
                                                m.pow(b, t(m, exponent, dtype)[::2])), 1e-5)


def test_tensor_pow_tensor():
    """test_tensor_pow_tensor: every rotation of [0..3] (integers) and of 11 floats."""
    ints, floats = [0, 1, 2, 3], [-3.0, -2.0, -1.0, -1 / 2, -1 / 3, 0.0, 1 / 3, 1 / 2, 1.0,
                                  2.0, 3.0]
    for data, dtypes in ((ints, INTS), (floats, FLOATS)):
        for dtype in dtypes:
            for i in range(len(data)):
                rotated = data[-i:] + data[:-i]
                assert_same_as_torch(_pow_program((np.array(data), dtype),
                                                  (np.array(rotated), dtype)), rtol=1e-3)


def test_pow_inplace_resizing_exception():
    """test_pow_inplace_resizing_exception, test_pow_scalar_overloads_mem_overlap: pow_ that
    would resize self, and pow_ into an expanded tensor, refuse."""
    for base_shape, exp_shape in (((), (3,)), ((2,), (2, 1)), ((2, 1), (2, 2)),
                                  ((2, 2), (2, 1, 1))):
        base, exponent = values("float64", base_shape, 0, 9), values("float64", exp_shape, 0, 9)
        assert_op_same(lambda m, b, e: b.pow_(e), (base, "float64"), (exponent, "float64"))
    assert_same_as_torch(lambda m: m.tensor([0.5], dtype=m.float64).expand(3, 3).pow_(42))


def test_pow_scalar_base_gradients():
    """test_pow_scalar_base, test_rpow: gradcheck of 2 ** a; 2 ** m equals pow(2, m)."""
    a = gradkit.arange(1, 13, dtype=gradkit.float64).view(3, 4).requires_grad_()
    assert gradcheck(lambda a: gradkit.pow(2, a), (a,))
    assert gradgradcheck(lambda a: gradkit.pow(2, a), (a,))
    x = values("float32", (10, 10))
    assert_same_as_torch(lambda m: (m.pow(2, t(m, x, "float32")), 2 ** t(m, x, "float32"),
                                    2 ** t(m, x[0, 0], "float32")))
    assert_same_as_torch(with_grads(lambda m, a: 2 ** a, values("float64", (3, 4))))


@pytest.mark.parametrize("base_dtype", ["int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("exp_dtype", ["int64", "float32", "float64", "complex128"])
def test_float_power(base_dtype, exp_dtype):
    """test_float_power, test_float_power_exceptions: always float64 or complex128, in place
    only when self already is ("operation's result requires dtype ...")."""
    base, exponent = values(base_dtype, (30,), 1, 99), values(exp_dtype, (30,), -2, 2)
    exponent[[0, 4, 6]] = 0
    scalars = [-2.8, -2, -1, -0.5, 0.5, 1, 2] + ([-2.5j, 1.0 + 1.0j, 3.3j] if
                                                   exp_dtype in COMPLEX else [])
    assert_op_same(lambda m, b, e: (m.float_power(b, e), b.float_power(e)), (base, base_dtype),
                   (exponent, exp_dtype))
    assert_op_same(lambda m, b, e: b.clone().float_power_(e), (base, base_dtype),
                   (exponent, exp_dtype))
    for number in scalars:
        assert_op_same(lambda m, b, e: (m.float_power(b, e), m.float_power(e, b)),
                       (base, base_dtype), number)
        assert_op_same(lambda m, b, e: b.clone().float_power_(e), (base, base_dtype), number)


def test_float_power_integer_and_complex_bases():
    """test_float_power_exceptions: integer bases with -0.25, complex bases with 2.0."""
    assert_same_as_torch(lambda m: m.float_power(m.tensor([-2, -1, 0, 1, 2]), -0.25))
    assert_same_as_torch(lambda m: m.tensor([-2, -1, 0, 1, 2]).float_power_(-0.25))
    bases = np.array([-1.0j, 0j, 1.0j, 1.0 + 1.0j, -1.0 - 1.5j])
    assert_same_as_torch(lambda m: m.float_power(m.tensor(bases), 2.0))
    assert_same_as_torch(lambda m: m.tensor(bases).float_power_(2.0))
