"""Differences found in the twenty-fourth session (scans and fuzzer seeds), each program run in
gradkit and in torch 2.13 (skipped without torch)."""
import math

import numpy as np
import pytest

import gradkit
from fuzz.known import diff_program
from fuzz.programs import RandomDrawer, generate

torch = pytest.importorskip("torch")


def _bits(array) -> list:
    """Each value exactly, a NaN as 'nan' and a zero with its sign."""
    return ["nan" if math.isnan(v) else repr(float(v)) for v in np.asarray(array).ravel()]


# c, a, b of c + a * b where rounding the product and the sum apart (or Dekker's split
# emulation rounding its correction to nearest) gives another last bit than one fma
_FMA_CASES = {
    "float64": [
        (1e-300, 1e200, 2.5), (-1e-300, 1e200, 2.5), (1.0, 1e30, 2.5), (1.0, 4.25e307, 1.5),
        (5e-324, 4.25e307, 0.75), (-5e-324, -1e305, -2.5), (1e-300, 1.7e308, 0.0),
        (-0.0, 1e-160, 3e-160), (1e-320, 1e-160, 3e-160), (-1.1070724447745073e-232,
                                                              7.040827154127051e-308, 0.3),
        (0.0, 5e-324, 0.5), (-1.5e308, 1e308, 2.5), (math.inf, 1e308, 2.5), (math.nan, 1.0, 2.0)],
    "float32": [
        (1e-30, 1e30, 2.5), (-1e-30, 1e30, 1.5), (1.0, 1e30, 2.5), (1e-45, 53639.9609375, 1.5),
        (1e-30, 40.0, 0.3), (-3.0, 1e30, 0.75), (3e38, 3e38, 0.75), (-0.0, 1e-40, 1e-40)],
}


def _fused_results(lib, dtype: str) -> list:
    c, a, b = (lib.tensor(list(column), dtype=getattr(lib, dtype))
               for column in zip(*_FMA_CASES[dtype]))
    return _bits(np.concatenate([
        lib.addcmul(c, a, b).numpy(), lib.addcmul(c, a, b, value=-1.0).numpy(),
        lib.add(c, a, alpha=2.5).numpy(), lib.lerp(c, a, 0.3).numpy(), lib.lerp(c, a, 0.7).numpy(),
        lib.lerp(c, a, b).numpy()]))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fused_multiply_add_rounds_once_as_torchs(dtype):
    """A scan of addcmul with tie-prone factors (2.5, 1.5, 0.75 times numbers of few bits)
    differed from torch at 15 % of the values in float32 and float64: c + a * b where a * b is
    exactly halfway between two floats and c, far smaller, breaks the tie. The float64
    emulation rounded its correction to nearest (c lost), the float32 one the float64 sum
    (c lost again); both now round that step to odd (Boldo and Melquiond). Also: a factor past
    2**996 (Dekker's split overflowed, the sum came unfused), and products under 2**-968
    (subnormal: the split's low part underflows; quantile of [-0.0, 1e-310] at 0.3 was
    3.0000000000003e-311, torch's 3e-311)."""
    assert _fused_results(gradkit, dtype) == _fused_results(torch, dtype)


def test_quantile_between_subnormals_is_torchs():
    def run(lib):
        x = lib.tensor([-0.0, 1e-310, 2e-310, 0.0], dtype=lib.float64)
        return _bits(lib.quantile(x, lib.tensor([0.1, 0.3, 0.5, 0.9], dtype=lib.float64)).numpy())
    assert run(gradkit) == run(torch)


def _extremes_of_all(lib, dtype: str, rows: list) -> list:
    out = []
    for row in rows:
        x = lib.tensor(row, dtype=getattr(lib, dtype))
        out += _bits(np.array([lib.min(x).item(), lib.max(-x).item(),
                               *(v.item() for v in lib.aminmax(x))]))
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_max_min_of_all_keep_torchs_tied_zero(dtype):
    """A scan of sort-like ops at ties: min() of [1e-310, -0.0, 0.0, 1e-310, -0.0] is 0.0 in
    torch and was -0.0 here (the last tied zero). torch's all-element kernel reduces in vector
    lanes (4 doubles, 8 floats, 16 halves folded in two), a later value keeping a tie in its
    lane, then the lanes one after another or by shuffles; beyond 32768 values its threads'
    chunks, the first chunk holding a zero winning."""
    rng = np.random.default_rng(7)
    rows = [list(rng.choice([0.0, -0.0, 1.0], n)) for n in (*range(1, 40), 64, 100, 257)
            for _ in range(4)]
    many = np.ones(70000)
    many[[5000, 40000]] = [0.0, -0.0]
    assert _extremes_of_all(gradkit, dtype, rows + [many]) == \
        _extremes_of_all(torch, dtype, rows + [many])


@pytest.mark.parametrize("seed, cls, known_as", [
    (2257043, "strided_breadth", "a step that turns a rounding difference of its input into "
                                 "another number"),
    (2259464, "strided_breadth", "a step that turns a rounding difference of its input into "
                                 "another number"),
    (2276920, "breadth", "an infinite norm weight: torch's fused kernels' inf/NaN"),
    (2293417, "breadth", "a LAPACK routine of a matrix singular to its precision: its "
                         "factors are rounding noise"),
    (457405, "wide", "float32 lgamma inside an incomplete gamma's derivative (an integer a)")])
def test_documented_differences_are_known(seed, cls, known_as):
    """atan2(v, v) of an inverse FFT's zero bins (exactly 0 here, -2.8e-17 in torch) is 0 or
    -3 pi / 4: the angle of rounding noise. atanh of a float32 layer_norm of two values,
    1 - 5e-6, an ulp from torch's: its derivative 1 / (1 - x²) moves by 1 %. instance_norm
    with a weight of -inf: torch's fused backward multiplies it by rounding noise (±inf),
    gradkit's composite one by an exact 0 (NaN). lu_factor of a float32 60 x 60 outer product
    (rank 1): past its first pivot the factors are cancelled entries' rounding noise.
    gammaincc of an integer tensor's |a| + 0.5 (float32): its derivative's float32 lgamma,
    glibc's an ulp off, moves a float64 gradient by 2e-9."""
    problems, known = diff_program(generate(RandomDrawer(seed), cls))
    assert problems and known == known_as


def _spaced(lib, name: str, dtype: str, start: float, end: float, steps: int):
    try:
        values = getattr(lib, name)(start, end, steps, dtype=getattr(lib, dtype))
    except RuntimeError as error:
        return "raises", str(error)
    return _bits(values.numpy().real) + _bits(values.numpy().imag)


@pytest.mark.parametrize("name, dtype, start, end, steps", [
    ("logspace", "float16", 0.0, -0.02, 37), ("logspace", "float16", -0.02, 0.02, 37),
    ("logspace", "float16", 0.0, -0.02, 100), ("linspace", "float16", 1e10, 0.0, 1),
    ("linspace", "float16", -1e300, 2.0, 1), ("linspace", "float16", 1e10, 0.0, 2),
    ("logspace", "complex64", 0.0, -2e298, 2), ("logspace", "complex64", 2e298, 0.0, 3),
    ("logspace", "complex64", 2e298, 0.0, 1), ("linspace", "complex64", 0.0, -2e298, 2)])
def test_spaced_values_at_their_edges_are_torchs(name, dtype, start, end, steps):
    """A scan of linspace/logspace over ends, lengths and dtypes: float16 logspace's double
    powers go into c10::Half through float (rounded twice: 0.97998 was 0.97949 here); one
    float16 value of linspace is a fill, which takes 1e10 as inf (refused here); complex64
    logspace checks its ends' conversion as torch's (2e298 computed NaN here)."""
    assert _spaced(gradkit, name, dtype, start, end, steps) == \
        _spaced(torch, name, dtype, start, end, steps)


@pytest.mark.parametrize("source", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("how", ["to", "copy_", "byte", "tensor", "as_tensor"])
def test_floats_into_uint8_wrap_through_int64(source, how):
    """A scan of conversions between every dtype pair: c10 casts a float to uint8 through
    int64, so -2147483649.0 is 255 and 2 ** 31 + 5 is 5 (NumPy's cast goes through int32 and
    gave 0 past its range); NaN and values past int64 are 0 in both."""
    def run(lib):
        values = [-2.0 ** 31 - 1, -2.0 ** 31, 2.0 ** 31 + 5, 2.0 ** 32 + 7, -2.0 ** 32 - 7,
                  2.0 ** 40 + 3, 2.0 ** 63, -300.0, 255.9, math.nan, math.inf]
        x = lib.tensor(values, dtype=lib.float64).to(getattr(lib, source))
        if how in ("tensor", "as_tensor"):  # of a NumPy array
            return getattr(lib, how)(x.numpy(), dtype=lib.uint8).tolist()
        if how == "copy_":
            return lib.zeros(len(values), dtype=lib.uint8).copy_(x).tolist()
        return (x.byte() if how == "byte" else x.to(lib.uint8)).tolist()
    assert run(gradkit) == run(torch)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape, dim", [((3,), None), ((5, 2), 1), ((2, 1), None)])
def test_complex_mean_divides_as_torch(dtype, shape, dim):
    """A scan of reductions with dtype=: a complex mean is torch's sum / n, a complex quotient
    whose Smith form multiplies by 1 / n rounded in the dtype; NumPy's mean divides each
    part by n (complex64 float16 mean 41834.699 here, 41834.703 in torch). Values whose sums
    agree on both sides, so only the division is compared."""
    rng = np.random.default_rng(11)
    parts = [rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 30, shape) for _ in "ri"]
    values = parts[0] + 1j * parts[1]

    def run(lib):
        mean = lib.mean(lib.tensor(values, dtype=getattr(lib, dtype)), dim).numpy()
        return _bits(np.atleast_1d(mean).view(np.float32 if dtype == "complex64" else np.float64))
    assert run(gradkit) == run(torch)


def test_complex_mean_of_float16_is_torchs():
    def run(lib):
        x = lib.tensor([65504.0, 60000.0, 0.1], dtype=lib.float16)
        return _bits(np.atleast_1d(lib.mean(x, dtype=lib.complex64).numpy()).view(np.float32))
    assert run(gradkit) == run(torch)


def _outcome(call):
    try:
        return "ok", call().tolist()
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return type(error).__name__, str(error)


@pytest.mark.parametrize("data", [2 ** 63, [2 ** 63, 2 ** 63], 2 ** 64, -2 ** 63 - 1, [1, 2 ** 64],
                                  [[1], [2 ** 64]], [1.5, 2 ** 64], [2 ** 64, 1.5],
                                  [True, 2 ** 64], [1j, 2 ** 64], 2 ** 1100, [2 ** 1100, 1.0],
                                  2 ** 63 - 1])
def test_tensor_of_ints_past_int64_is_torchs(data):
    """A scan of scalars in every position: tensor(2 ** 63) was -2 ** 63 here (NumPy infers
    uint64, then cast to int64), torch refuses ("Overflow when unpacking long long"); beside a
    float or complex number such an int is converted (2 ** 1100: Python's OverflowError)."""
    assert _outcome(lambda: gradkit.tensor(data)) == _outcome(lambda: torch.tensor(data))


@pytest.mark.parametrize("program", [
    lambda m: m.where(m.tensor([True, False]), m.tensor([1.0, 2.0]), 1e40),
    lambda m: m.where(m.tensor([True, False]), -1e39, m.tensor([1, 2])),
    lambda m: m.where(m.tensor([True, False]), 1e40, 1.0),
    lambda m: m.where(m.tensor([True, False]), m.tensor([1.0, 2.0], dtype=m.float16), 1e10),
    lambda m: m.tensor([1.0, 0.0], dtype=m.float16) ** 70000,
    lambda m: m.pow(m.tensor([1.0, 0.0], dtype=m.float16), -1e40),
    lambda m: m.tensor([1.0, 0.0], dtype=m.float16) ** 65504,
    lambda m: m.tensor([1.0, 0.0], dtype=m.float16) ** math.inf,
    lambda m: m.tensor([1.0, 0.0]) ** 1e40,
    lambda m: m.lerp(m.tensor([1j, 0j]), m.tensor([2j, 1j]), 1e40),
    lambda m: m.lerp(m.tensor([1j, 0j]), m.tensor([2j, 1j]), 1e40j),
    lambda m: m.lerp(m.tensor([1.0, 0.0]), m.tensor([2.0, 1.0]), 1e40),
    lambda m: m.float_power(m.tensor([1, 0, 3]), 2 ** 64),
    lambda m: m.float_power(2 ** 64, m.tensor([1, 0, 3])),
    lambda m: m.float_power(m.tensor([1, 0, 3]), 2 ** 64 - 1)])
def test_numbers_past_the_range_of_where_and_pow_are_torchs(program):
    """where converts a number into a float32 result checked (1e40 refused; float16 takes
    it as inf), pow reads a float16 tensor's number exponent as c10::Half, checked, lerp a
    complex64 weight as c10::complex<float>, checked; float_power parses an int past uint64
    as torch's Scalar does (Python's OverflowError)."""
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("value", [1 + 2j, 0j, 2.5 + 0j])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int64"])
def test_complex_number_written_into_a_real_tensor_is_torchs(value, dtype):
    def run(m):
        x = m.tensor([1, 0, 3], dtype=getattr(m, dtype))
        x[1] = value
        return x
    assert _outcome(lambda: run(gradkit)) == _outcome(lambda: run(torch))


_POW_VALUES = [0.0, -0.0, 0.5, -2.0, 2.0, 1.0, math.inf, -math.inf, math.nan]
_COMPLEX_POW_VALUES = [0j, complex(-0.0, -0.0), 0.5 + 0j, 1j, complex(2, -0.0),
                       complex(math.inf, 1)]


def _pow_derivatives(lib, dtype: str, form: str) -> list:
    values = _COMPLEX_POW_VALUES if dtype == "complex128" else _POW_VALUES
    cast = getattr(lib, dtype)
    out = []
    for b in values:  # one element at a time: torch's scalar loops, not its vector ones
        for e in values:
            for v in ([1.0, -1.0, -0.0] if dtype == "float64" else [1 + 0j, complex(-1, -0.0)]):
                x, t = lib.tensor([b], dtype=cast), lib.tensor([v], dtype=cast)
                y = lib.tensor([e], dtype=cast, requires_grad=form == "reverse")
                if form == "reverse":  # the exponent's and a number base's gradients
                    grads = [lib.autograd.grad(base ** y, y, t)[0] for base in (x, 0.0)]
                else:  # only the exponent dual, under a tensor or a number base
                    fa = lib.autograd.forward_ad
                    with fa.dual_level():
                        grads = [fa.unpack_dual(base ** fa.make_dual(y, t)).tangent
                                 for base in (x, 0.0)]
                for g in grads:
                    out += _bits(np.atleast_1d(g.numpy()).view(np.float64))
    return out


@pytest.mark.parametrize("dtype, form", [("float64", "forward"), ("complex128", "forward"),
                                         ("complex128", "reverse")])
def test_pow_exponent_derivatives_sign_zeros_as_torch(dtype, form):
    """A scan of pow's tangents with only the exponent dual: torch adds a tensor base's
    (zero) term to the exponent's, so a -0.0 tangent is +0.0 there; and its masked zero
    (x = 0, y >= 0) is 0 + 0j, not conjugated as the rest (gradkit conjugated it: -0.0
    imaginary parts in complex gradients and tangents)."""
    assert _pow_derivatives(gradkit, dtype, form) == _pow_derivatives(torch, dtype, form)


@pytest.mark.parametrize("value", [0.0, -0.0, 0.5, 1.0, -2.0, math.nan])
@pytest.mark.parametrize("tangent", [1.0, -0.0])
def test_forward_over_reverse_of_threshold_is_torchs(value, tangent):
    """A scan of forward-over-reverse through activations: threshold's backward has torch's
    forward formula zeros_like(self_t) + threshold_backward(g_t): with x dual alone its
    gradient's tangent is zeros (gradkit gave none, as for a constant)."""
    def run(lib):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(lib.tensor([value], dtype=lib.float64, requires_grad=True),
                             lib.tensor([tangent], dtype=lib.float64))
            y = lib.nn.functional.threshold(x, 0.5, -1.0)
            g, = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
            t = fa.unpack_dual(g).tangent
            return None if t is None else _bits(t.detach().numpy())
    assert run(gradkit) == run(torch)
