"""torch's own binary-ufunc tests (test/test_binary_ufuncs.py, TestBinaryUfuncs): the generic
OpInfo tests, re-run as programs under torch 2.13 and gradkit over the dtype grid: same values,
dtypes, signs of zero, gradients, or the same error (type and message).

The per-op tests are in test_binary_ufuncs_torch_expectations_ops.py. Out of scope (see
docs/torch_expectations.md, "Binary ufuncs"): CUDA, out=, bfloat16/complex32, torch.jit.
"""
import operator

import numpy as np
import pytest
from reduction_data import PerTestGenerator
from test_torch_numerics import _outcome, with_grads
from test_torch_numerics import assert_same_as_torch as _assert_same_values

import gradkit

torch = pytest.importorskip("torch")

RNG = PerTestGenerator(20261206)
INTS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
DTYPES = ("bool",) + INTS + FLOATS + COMPLEX


def assert_same_as_torch(program, rtol=1e-6, atol=0.0):
    """test_torch_numerics' comparison; an argument-parser TypeError is torch's first line
    (gradkit leaves out the list of signatures that follows)."""
    expected, got = _outcome(program, torch), _outcome(program, gradkit)
    if expected[0] == "raises" and "but expected one of" in expected[2]:
        assert got[:2] == expected[:2], f"torch: {expected}, gradkit: {got}"
        rest = expected[2][len(got[2]):]
        assert expected[2].startswith(got[2]) and (
            rest.startswith(", but expected one of") or got[2].endswith("expected one of:")
            and rest.startswith("\n * (") or got[2] == expected[2]), (expected, got)
        return
    if expected[0] == "ok":  # complex parts: within rtol of the largest magnitude (torch's
        for _, value in expected[1]:  # complex mul and pow round each part differently)
            finite = np.abs(value[np.isfinite(value)])
            if value.dtype.kind == "c" and finite.size:
                atol = max(atol, rtol * finite.max())
    _assert_same_values(program, rtol=rtol, atol=atol)


def values(dtype, shape, low=-9, high=9, nonzero=False):
    """NumPy data in ``dtype`` (torch's make_tensor ranges), shared by both libraries."""
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if dtype in INTS:
        low = max(low, 0) if dtype == "uint8" else low
        out = RNG.integers(low, high + 1, shape)
        if nonzero:
            out[out == 0] = 1
        return out.astype(dtype)
    out = np.asarray(RNG.uniform(low, high, shape))
    if dtype in COMPLEX:
        out = np.asarray(out + 1j * RNG.uniform(low, high, shape))
    if nonzero:
        out[out == 0] = 1
    return out.astype(dtype)


def complex_of(real, imag):
    """real + 1j * imag without NumPy's 0 * inf = NaN in the product."""
    out = np.empty(np.shape(real), np.complex128)
    out.real, out.imag = real, imag
    return out


def t(m, array, dtype, **kwargs):
    """A tensor of library ``m`` of ``array`` in the dtype named."""
    return m.tensor(array, dtype=getattr(m, dtype), **kwargs)


def unsigned_zero(result):
    """maximum/minimum of 0.0 and -0.0: torch's zero depends on its vector chunks (the first
    operand's in a scalar tail, the second's in a full vector), so the sign is not compared."""
    return result + 0 if result.is_floating_point() else result


def _function(name):
    """``m.name(a, b)``; a ``special.`` prefix reads the special namespace."""
    def call(m, a, b):
        namespace = m.special if name.startswith("special.") else m
        return getattr(namespace, name.split(".")[-1])(a, b)
    return call


# (rhs domain: "any" / "nonzero" (integer divisors) / "shift" (0..bits) / "positive",
#  differentiable) -> the ops m.name(a, b) of that kind
_PLAIN = {
    ("any", True): "sub mul div true_divide float_power atan2 hypot copysign logaddexp "
                   "logaddexp2 xlogy special.xlog1py fmax fmin",
    ("nonzero", True): "remainder fmod", ("positive", True): "pow",
    ("nonzero", False): "floor_divide", ("shift", False): "bitwise_left_shift bitwise_right_shift",
    ("any", False): "nextafter heaviside gcd lcm bitwise_and bitwise_or bitwise_xor eq ne lt le "
                    "gt ge logical_and logical_or logical_xor",
    ("positive", False): "igamma igammac special.zeta",
}
# name -> (program of (m, lhs, rhs), rhs domain, differentiable)
OPS = {name.split(".")[-1]: (_function(name), domain, grads)
       for (domain, grads), names in _PLAIN.items() for name in names.split()}
OPS.update({
    "add": (lambda m, a, b: m.add(a, b, alpha=2), "any", True),
    "div_trunc": (lambda m, a, b: m.div(a, b, rounding_mode="trunc"), "nonzero", False),
    "div_floor": (lambda m, a, b: m.div(a, b, rounding_mode="floor"), "nonzero", False),
    "maximum": (lambda m, a, b: unsigned_zero(m.maximum(a, b)), "any", True),
    "minimum": (lambda m, a, b: unsigned_zero(m.minimum(a, b)), "any", True),
})
DIFFERENTIABLE = [name for name, (_, _, grads) in OPS.items() if grads]


def rhs_values(name, dtype, shape, low=-9, high=9):
    domain = OPS[name][1]
    if domain == "shift":
        return values(dtype, shape, 0, 8 * np.dtype(dtype).itemsize if dtype != "bool" else 1)
    if domain == "positive" and dtype in INTS + FLOATS:
        return values(dtype, shape, 0, high)
    return values(dtype, shape, low, high, nonzero=domain == "nonzero" and dtype in INTS)


def rtol_for(dtype, name=""):
    """Last-bit room: float16 ops that torch computes in float32 round once more; integer
    inputs compute in float32; complex64 products differ by torch's FMA order, and complex64
    powers lose log|result| bits in both libraries (NumPy's and torch's differ there)."""
    if dtype == "complex64" and name in ("pow", "float_power"):
        return 1e-4
    return {"float16": 2e-3, "complex64": 1e-5, "float64": 1e-12, "complex128": 1e-12}.get(
        dtype, 1e-6)


def operand(m, spec):
    """A tensor of ``(array, dtype)``, or a Python number as it is."""
    return t(m, *spec) if isinstance(spec, tuple) else spec


def assert_op_same(fn, lhs, rhs, rtol=1e-6, atol=0.0):
    """``fn(m, lhs, rhs)`` gives the same under both libraries (operands as ``operand``)."""
    assert_same_as_torch(lambda m: fn(m, operand(m, lhs), operand(m, rhs)), rtol, atol)


def check(name, lhs, rhs, dtype):
    assert_op_same(OPS[name][0], (lhs, dtype), (rhs, dtype), rtol_for(dtype, name), 1e-300)


GRID = [(name, dtype) for name in OPS for dtype in DTYPES]


@pytest.mark.parametrize("name,dtype", GRID)
def test_reference_numerics(name, dtype):
    """test_reference_numerics (every dtype: torch's refusals are compared too)."""
    check(name, values(dtype, (5, 7)), rhs_values(name, dtype, (5, 7)), dtype)


@pytest.mark.parametrize("name,dtype", [(n, d) for n, d in GRID if d != "bool"])
def test_reference_numerics_small_values(name, dtype):
    """test_reference_numerics_small_values: every pair of small values."""
    small = {"float": [0.0, -0.0, 1e-4, -1e-4, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0],
             "int": [0, 1, -1, 2, -2, 3, -3]}
    base = small["int" if dtype in INTS else "float"]
    if dtype == "uint8":
        base = [v for v in base if v >= 0]
    lhs, rhs = np.repeat(base, len(base)), np.tile(base, len(base))
    if OPS[name][1] == "nonzero" and dtype in INTS:
        lhs, rhs = lhs[rhs != 0], rhs[rhs != 0]
    if OPS[name][1] == "shift":
        rhs = np.abs(rhs)
    if dtype in COMPLEX:
        lhs, rhs = lhs + 1j * rhs[::-1], rhs - 0.5j * lhs
    check(name, np.asarray(lhs).astype(dtype), np.asarray(rhs).astype(dtype), dtype)


LARGE = {"int16": [-501, 501, -1001, 1001, -13437, 13437],
         "int32": [-501, 501, -1001, 1001, -13437, 13437, -4988429, 4988429],
         "int64": [-501, 501, -1001, 1001, -13437, 13437, -4988429, 4988429, -2 ** 40, 2 ** 40],
         "float16": [-501.0, 501.0, -1001.2, 1001.2, -13437.7, 13437.7],
         "float32": [-501.0, 501.0, -1001.2, 1001.2, -13437.7, 13437.7, -4988429.2, 4988429.2,
                     -1e20, 1e20],
         "float64": [-501.0, 501.0, -1001.2, 1001.2, -13437.7, 13437.7, -4988429.2, 4988429.2,
                     -1e20, 1e20, -1e200, 1e200]}


@pytest.mark.parametrize("name,dtype", [(n, d) for n, d in GRID if d in LARGE or (
    d in COMPLEX and (n, d) != ("pow", "complex64"))])  # overflows, phase is noise
def test_reference_numerics_large_values(name, dtype):
    """test_reference_numerics_large_values: every pair of large values (complex: up to 5e6;
    beyond, a power's overflowing phase is rounding noise in both libraries)."""
    base = LARGE["float32" if dtype in COMPLEX else dtype][:8 if dtype in COMPLEX else None]
    lhs, rhs = np.repeat(base, len(base)), np.tile(base, len(base))
    if OPS[name][1] == "shift":
        rhs = np.abs(rhs) % 70
    if dtype in COMPLEX:
        lhs, rhs = lhs + 1j * rhs[::-1], rhs - 1j * lhs
    check(name, np.asarray(lhs).astype(dtype), np.asarray(rhs).astype(dtype), dtype)


@pytest.mark.parametrize("name,dtype", [(n, d) for n, d in GRID if d in FLOATS + COMPLEX])
def test_reference_numerics_extremal_values(name, dtype):
    """test_reference_numerics_extremal_values: every pair of 0, -0, +-1, +-inf, nan."""
    base = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]
    lhs, rhs = np.repeat(base, len(base)), np.tile(base, len(base))
    if dtype in COMPLEX:  # real and imaginary parts of each pair, both ways round
        lhs, rhs = complex_of(lhs, rhs), complex_of(rhs, np.roll(lhs, 3))
    check(name, np.asarray(lhs).astype(dtype), np.asarray(rhs).astype(dtype), dtype)


BROADCAST_SHAPES = [((1,), ()), ((2,), ()), ((1,), (2,)), ((2, 1), (2,)), ((1, 2), (2,)),
                    ((3, 2), (2,)), ((1, 3, 2), (3, 2)), ((3, 1, 2), (3, 2)),
                    ((2, 3, 2), ()), ((3, 1, 2), (1, 3, 2)), ((0,), (1,)), ((5, 0), (0,)),
                    ((0, 7, 0, 6, 5, 0, 1), (1, 1, 5, 1, 7)), ((), (5, 0, 6)), ((), ())]


@pytest.mark.parametrize("dtype", ["int64", "float32"])
@pytest.mark.parametrize("name", OPS)
def test_broadcasting(name, dtype):
    """test_broadcasting (new and old), test_add_broadcast_empty: shapes and values."""
    for lhs_shape, rhs_shape in BROADCAST_SHAPES:
        for a, b in ((lhs_shape, rhs_shape), (rhs_shape, lhs_shape)):
            check(name, values(dtype, a), rhs_values(name, dtype, b), dtype)


@pytest.mark.parametrize("name", OPS)
def test_not_broadcastable(name):
    """test_not_broadcastable, test_add_broadcast_empty's refusals: the same RuntimeError."""
    for a, b in (((2,), (3,)), ((3, 1), (2, 1)), ((1, 3, 2), (3,)), ((3, 1, 2), (2, 1, 2)),
                 ((5, 0), (0, 5)), ((7, 0), (2, 1))):
        check(name, values("float32", a), rhs_values(name, "float32", b), "float32")


@pytest.mark.parametrize("dtype", ["int64", "float32", "complex64"])
@pytest.mark.parametrize("name", OPS)
def test_scalar_support(name, dtype):
    """test_scalar_support, test_broadcast_python_scalar: Python numbers on either side, 0-d
    tensors of other dtypes (type promotion with wrapped numbers and 0-d tensors)."""
    fn = OPS[name][0]
    lhs = values(dtype, (2, 3))
    numbers = [3, -2, True, 2.5, -0.5, 1.5 - 2j]
    for number in numbers:
        rtol = rtol_for("complex64" if type(number) is complex else dtype, name)
        assert_op_same(fn, (lhs, dtype), number, rtol)
        assert_op_same(fn, number, (lhs, dtype), rtol)
    for zero_dim in ("bool", "int32", "float64", "complex128"):
        scalar = values(zero_dim, ())
        rtol = rtol_for("complex64" if zero_dim == "complex128" else dtype, name)
        assert_op_same(fn, (lhs, dtype), (scalar, zero_dim), rtol)
        assert_op_same(fn, (scalar, zero_dim), (lhs, dtype), rtol)


LAYOUTS = {  # program of (m, tensor) -> a non-contiguous (or size-1 strided) tensor
    "every_other": lambda m, x: x.reshape(-1)[::2],
    "transposed": lambda m, x: x.T,
    "last_of_pair": lambda m, x: m.stack([x, x], dim=-1)[..., 0],
    "index": lambda m, x: x.reshape(2, 2, 1, -1)[:, 1, ...],
    "expand": lambda m, x: x[:1].expand(3, -1),
    "size1": lambda m, x: x[:1, : x.shape[1] // 2],
    "large_dim": lambda m, x: x.reshape(2, 3, 1, 2, 1, 1, 2, 1, -1)[:1],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", OPS)
def test_non_contiguous(name, layout):
    """test_contig_vs_every_other, test_contig_vs_transposed, test_non_contig,
    test_non_contig_index, test_non_contig_expand, test_contig_size1,
    test_contig_size1_large_dim: views of every kind give the contiguous values."""
    fn, dtype = OPS[name][0], "float32" if name not in ("gcd", "lcm") else "int64"
    if name.startswith("bitwise"):
        dtype = "int32"
    lhs, rhs = values(dtype, (8, 6)), rhs_values(name, dtype, (8, 6))
    view = LAYOUTS[layout]
    assert_same_as_torch(lambda m: fn(m, view(m, t(m, lhs, dtype)), view(m, t(m, rhs, dtype))))

    def contiguous_twin(m):  # the view's values, copied contiguous, give the same answer
        a, b = view(m, t(m, lhs, dtype)), view(m, t(m, rhs, dtype))
        return fn(m, a, b), fn(m, a.contiguous(), b.contiguous())
    got, same = contiguous_twin(gradkit)
    np.testing.assert_array_equal(got.numpy(), same.numpy())


@pytest.mark.parametrize("name", ["add", "mul", "atan2", "remainder", "maximum", "xlogy"])
def test_batch_vs_slicing(name):
    """test_batch_vs_slicing: the op of a batch is the stack of the op of its rows."""
    fn = OPS[name][0]
    lhs, rhs = values("float32", (32, 64)), rhs_values(name, "float32", (32, 64))

    def program(m):
        a, b = t(m, lhs, "float32"), t(m, rhs, "float32")
        return fn(m, a, b), m.stack([fn(m, a[i], b[i]) for i in range(32)])
    assert_same_as_torch(program)
    got, rows = program(gradkit)
    np.testing.assert_array_equal(got.numpy(), rows.numpy())


PROMOTION_PAIRS = [("int16", "int32"), ("int32", "int64"), ("float32", "float64"),
                   ("complex64", "complex128"), ("int64", "float32"), ("float64", "complex64"),
                   ("uint8", "int8"), ("bool", "uint8"), ("bool", "float16")]


@pytest.mark.parametrize("name", OPS)
def test_type_promotion(name):
    """test_type_promotion (without out=): dtype pairs, Python numbers, 0-d tensors, and the
    default dtype for int-to-float ops; two Python numbers where torch takes them."""
    fn = OPS[name][0]
    for left, right in PROMOTION_PAIRS:
        lhs, rhs = values(left, (5,)), rhs_values(name, right, (5,))
        assert_op_same(fn, (lhs, left), (rhs, right), rtol=1e-3)
    lhs = values("int64", (5,))
    for default in ("float32", "float64"):
        assert_same_as_torch(under_default_dtype(default, lambda m: (
            fn(m, t(m, lhs, "int64"), 1.0), fn(m, t(m, lhs, "int16"), t(m, lhs, "int32")))))
    for a, b in ((1, 2.0), (1.0, 2.0), (3, 2)):
        assert_op_same(fn, a, b)


def under_default_dtype(default, program):
    """``program`` run with the default dtype ``default`` (restored after)."""
    def run(m):
        previous = m.get_default_dtype()
        m.set_default_dtype(getattr(m, default))
        try:
            return program(m)
        finally:
            m.set_default_dtype(previous)
    return run


UNKNOWN = object()
DUNDERS = ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__add__", "__radd__",
           "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
           "__matmul__", "__rmatmul__", "__truediv__", "__rtruediv__", "__itruediv__",
           "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__",
           "__pow__", "__rpow__", "__ipow__", "__lshift__", "__rlshift__", "__ilshift__",
           "__rshift__", "__rrshift__", "__irshift__", "__and__", "__rand__", "__iand__",
           "__xor__", "__rxor__", "__ixor__", "__or__", "__ror__", "__ior__"]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32",
                                   "int64", "uint8"])
@pytest.mark.parametrize("dunder", DUNDERS)
def test_dunder_not_implemented(dunder, dtype):
    """test___op___not_implemented: an unknown operand type gives NotImplemented."""
    for m in (gradkit, torch):
        tensor = m.empty((), dtype=getattr(m, dtype))
        assert getattr(tensor, dunder)(UNKNOWN) is NotImplemented, (m.__name__, dunder)


@pytest.mark.parametrize("op", [operator.lt, operator.add, operator.truediv, operator.and_])
def test_unknown_operand_type_error(op):
    """Python's TypeError once both sides say NotImplemented."""
    def program(m):
        return op(m.ones(2, dtype=m.int64), UNKNOWN)
    with pytest.raises(TypeError) as expected:
        program(torch)
    with pytest.raises(TypeError) as got:
        program(gradkit)
    assert str(got.value) == str(expected.value)


INPLACE_OVERLAP = ["add_", "mul_", "sub_", "div_", "pow_", "fmod_", "atan2_", "hypot_",
                   "igamma_", "igammac_", "nextafter_", "le_", "lt_", "ge_", "gt_", "eq_",
                   "ne_", "logical_and_", "logical_or_", "logical_xor_"]


@pytest.mark.parametrize("method", INPLACE_OVERLAP)
def test_binary_op_internal_mem_overlap(method):
    """test_binary_op_mem_overlap (in-place part): writing into an expanded tensor refuses."""
    other = np.abs(values("float64", (3, 3))) + 0.5

    def program(m):
        target = m.tensor([0.75], dtype=m.float64).expand(3, 3)
        return getattr(target, method)(m.tensor(other))
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_match_torch(name):
    """Gradients of every differentiable op at torch's sample points (float64), with
    broadcasting: the same values as torch's backward."""
    fn = OPS[name][0]
    lhs, rhs = values("float64", (3, 4)), rhs_values(name, "float64", (4,))
    if name in ("pow", "xlogy", "float_power"):
        lhs = np.abs(lhs) + 0.5
    assert_same_as_torch(with_grads(fn, lhs, rhs, seed=values("float64", (3, 4))), rtol=1e-10)


INPLACE = [name for name in OPS if hasattr(torch.Tensor, name + "_")]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_broadcast_and_cast_errors(name):
    """test_pow_inplace_resizing_exception for every in-place op, and the in-place casts
    ("result type Float can't be cast to the desired output type Long"): self's shape and
    dtype stay, or torch's error (shape first), for each self/other dtype pair."""
    method = name + "_"
    for self_shape, other_shape in (((2,), (3, 2)), ((), (3,)), ((2, 1), (2, 2)), ((3, 2), (2,))):
        a, b = values("float32", self_shape), rhs_values(name, "float32", other_shape)
        assert_op_same(lambda m, x, y: getattr(x, method)(y), (a, "float32"), (b, "float32"))
    for left in ("bool", "int64", "float32", "complex64"):
        for right in ("bool", "int64", "float32", "complex64"):
            a, b = values(left, (3,)), rhs_values(name, right, (3,))
            assert_op_same(lambda m, x, y: getattr(x, method)(y), (a, left), (b, right),
                           rtol_for("complex64" if "complex" in left + right else left, name))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_double_backward_matches_torch(name):
    """Second derivatives of every differentiable op (float64, broadcasting): the gradient of
    a weighted sum of the first gradients, as torch's double backward gives it."""
    fn = OPS[name][0]
    lhs, rhs = values("float64", (3, 4)), rhs_values(name, "float64", (4,))
    if name in ("pow", "xlogy", "float_power"):
        lhs = np.abs(lhs) + 0.5
    seed, weights = values("float64", (3, 4)), (values("float64", (3, 4)), values("float64", (4,)))

    def program(m):
        x, y = (m.tensor(v, requires_grad=True) for v in (lhs, rhs))
        grads = m.autograd.grad(fn(m, x, y), (x, y), m.tensor(seed), create_graph=True)
        total = sum((g * m.tensor(w)).sum() for g, w in zip(grads, weights) if g.requires_grad)
        if not isinstance(total, m.Tensor):  # the first gradients are constants
            return grads
        second = m.autograd.grad(total, (x, y), allow_unused=True)
        return grads + tuple(m.zeros_like(v) if s is None else s for v, s in zip((x, y), second))
    assert_same_as_torch(program, rtol=1e-10)
