"""The unary elementwise ops of torch's test_unary_ufuncs.py (its ``unary_ufuncs`` OpInfos and
TestUnaryUfuncMathOps) as programs ``fn(lib, x)``, the values torch's generators feed them, and
a comparison of two results that knows floating point: used by
tests/test_unary_ufuncs_torch_expectations*.py.
"""
import itertools
import math

import numpy as np

import gradkit

try:
    import torch
except ImportError:  # the test files skip themselves
    torch = None

PI = math.pi
# torch's _float_vals, _large_float_vals and _float_extremals, with the edges of the formats
SMALL = [0.0, -0.0, -0.001, 0.001, -0.25, 0.25, -1.0, 1.0, -PI / 2, PI / 2, -PI + 1e-5,
         PI - 1e-5, -PI, PI, -PI - 1e-5, PI + 1e-5, 1e-30, -1e-30, 1e-40, 5e-324]
LARGE = [-501.0, 501.0, -1001.2, 1001.2, -13437.7, 13437.7, -4988429.2, 4988429.2, -1e20, 1e20,
         1e38, -1e38, 3e38, 1e300]
EXTREMAL = [math.inf, -math.inf, math.nan]
# torch's _int_vals and _large_int_vals, with the int64 values abs(int min) is about
INTS = [0, -1, 1, -55, 55, -127, 127, -128, 128, -1113, 1113, -10701, 10701, 2**31 + 1, -2**62]
# complex values: every pair of these parts (torch's generator pairs all its float values)
PARTS = [0.0, -0.0, -0.001, 0.25, -1.0, 1.0, PI / 2, -PI, 501.0, -1e20, 1e20] + EXTREMAL
DTYPES = ["float64", "float32", "float16", "complex128", "complex64", "int64", "int32",
          "int16", "int8", "uint8", "bool"]
RTOL = {"float64": 1e-11, "float32": 2e-6, "float16": 1e-5}


def values(dtype: str, floats=None) -> list:
    """The interesting values of ``dtype`` (``floats``: a float set instead of all of them)."""
    if dtype.startswith("complex"):
        parts = PARTS if floats is None else floats
        return [complex(a, b) for a, b in itertools.product(parts, parts)]
    if dtype.startswith("float"):
        return SMALL + LARGE + EXTREMAL if floats is None else floats
    if dtype == "bool":
        return [True, False]
    info = np.iinfo(dtype)
    return [v for v in INTS + [int(info.min), int(info.max)] if info.min <= v <= info.max]


def make(lib, data, dtype: str):
    """A tensor of ``lib`` from ``data``, cast as NumPy casts (3e38 is inf in float16)."""
    array = np.asarray(np.array(data, dtype=np.complex128 if dtype.startswith("complex")
                                else None), dtype=dtype)
    return lib.tensor(array)


def outcome(lib, program, *args):
    """("raises", type name, message) or ("ok", [(dtype name, array), ...]) of one run."""
    try:
        result = program(lib, *args)
    except Exception as e:  # noqa: BLE001 - the error is the outcome under test
        return ("raises", type(e).__name__, str(e))
    results = result if isinstance(result, (tuple, list)) else (result,)
    return ("ok", [(str(r.dtype).split(".")[-1], _host(r)) for r in results])


def _host(t):
    if isinstance(t, gradkit.Tensor):
        return np.asarray(t.detach().numpy())
    return t.detach().resolve_conj().numpy(force=True)


def _close(got, expected, rtol, scale, signed_zeros=True, atol=0.0):
    """Elementwise: equal (NaN with NaN, the sign of an exact zero included unless not
    ``signed_zeros``) or within rtol of ``scale`` (the value's modulus, so a part of a complex
    value is judged by the whole)."""
    with np.errstate(all="ignore"):
        if not signed_zeros:
            got, expected = got + 0.0, expected + 0.0  # -0.0 + 0.0 is +0.0
        # and one step of the subnormals (float16's are 6e-8 apart: a 1e-3 rtol is not one)
        step = np.finfo(got.dtype).smallest_subnormal
        near = np.abs(got - expected) <= rtol * scale + step + atol
        same = (got == expected) & (np.signbit(got) == np.signbit(expected))
        both_nan = np.isnan(got) & np.isnan(expected)
        nonzero_near = near & ((expected != 0) | (got != 0))
    return same | both_nan | nonzero_near


def assert_same_outcome(got, expected, where="", rtol=None, signed_zeros=True,
                        atol=0.0) -> None:
    """Two outcomes agree: the same error, or the same dtypes, shapes and values."""
    assert got[0] == expected[0], f"{where}: torch {expected[:3]}, gradkit {got[:3]}"
    if expected[0] == "raises":
        assert got[1:] == expected[1:], f"{where}: torch {expected}, gradkit {got}"
        return
    assert len(got[1]) == len(expected[1]), where
    for (dtype, value), (t_dtype, t_value) in zip(got[1], expected[1], strict=True):
        assert dtype == t_dtype, f"{where}: dtype {dtype}, torch's {t_dtype}"
        assert value.shape == t_value.shape, f"{where}: shape {value.shape} != {t_value.shape}"
        if value.dtype.kind not in "fc":
            np.testing.assert_array_equal(value, t_value, err_msg=where)
            continue
        tol = rtol if rtol is not None else RTOL[value.real.dtype.name]
        scale = np.abs(t_value).astype(np.float64)
        parts = (np.real, np.imag) if value.dtype.kind == "c" else (lambda a: a,)
        for part in parts:
            ok = _close(part(value), part(t_value), tol, scale, signed_zeros, atol)
            bad = np.flatnonzero(~ok)
            assert not bad.size, (f"{where}: {bad.size} differ, first at {bad[0]}: gradkit "
                                  f"{value.flat[bad[0]]!r}, torch {t_value.flat[bad[0]]!r}")


def one_by_one(fn):
    """``fn`` applied to each element on its own (torch's scalar loop): see SIMD_DEPENDENT."""
    def program(lib, x, *args):
        if x.numel() == 0:
            return fn(lib, x, *args)
        flat = x.reshape(-1)
        return lib.cat([fn(lib, flat[i:i + 1], *args) for i in range(x.numel())]).reshape(x.shape)
    return program


def _f(path: str, **kwargs):
    """The program ``lib.<path>(x, **kwargs)``."""
    def program(lib, x):
        target = lib
        for name in path.split("."):
            target = getattr(target, name)
        return target(x, **kwargs)
    return program


_NAMES = """abs absolute acos arccos acosh arccosh angle asin arcsin asinh arcsinh atan arctan
atanh arctanh bitwise_not ceil conj_physical cos cosh deg2rad rad2deg digamma erf erfc erfinv
exp exp2 expm1 fix floor frac i0 lgamma log log10 log1p log2 logit nan_to_num neg negative
positive reciprocal round sin sinc sinh sign sgn signbit sqrt square tan tanh trunc rsqrt sigmoid
isfinite isinf isnan isposinf isneginf isreal relu
special.i0e special.i1 special.i1e special.entr special.ndtri special.ndtr special.log_ndtr
special.erfcx special.airy_ai special.bessel_j0 special.bessel_j1 special.bessel_y0
special.bessel_y1 special.modified_bessel_i0 special.modified_bessel_i1
special.modified_bessel_k0 special.modified_bessel_k1 special.scaled_modified_bessel_k0
special.scaled_modified_bessel_k1 special.spherical_bessel_j0 special.expit special.exp2
special.expm1 special.log1p special.sinc special.digamma special.psi special.gammaln
special.i0 special.erfinv special.logit special.erf special.erfc
nn.functional.tanhshrink nn.functional.hardshrink nn.functional.softshrink
nn.functional.hardtanh nn.functional.elu nn.functional.mish nn.functional.silu
nn.functional.celu nn.functional.selu nn.functional.relu6 nn.functional.hardswish
nn.functional.hardsigmoid nn.functional.gelu nn.functional.logsigmoid nn.functional.softsign
nn.functional.softplus nn.functional.leaky_relu""".split()
# (id, program): the OpInfo unary ufuncs and their keyword variants
OPS = [(name, _f(name)) for name in _NAMES] + [
    ("round_decimals_2", _f("round", decimals=2)), ("round_decimals_-1", _f("round", decimals=-1)),
    ("round_decimals_0", _f("round", decimals=0)), ("round_decimals_3", _f("round", decimals=3)),
    ("logit_eps_1e-6", _f("logit", eps=1e-6)), ("logit_eps_0.3", _f("logit", eps=0.3)),
    ("nan_to_num_args", _f("nan_to_num", nan=1.5, posinf=2.0, neginf=-3.0)),
    ("gelu_tanh", _f("nn.functional.gelu", approximate="tanh")),
    ("hardshrink_0.3", _f("nn.functional.hardshrink", lambd=0.3)),
    ("softshrink_1", _f("nn.functional.softshrink", lambd=1.0)),
    ("hardtanh_0_2", _f("nn.functional.hardtanh", min_val=0.0, max_val=2.0)),
    ("elu_alpha", _f("nn.functional.elu", alpha=0.5)),
    ("celu_alpha", _f("nn.functional.celu", alpha=2.0)),
    ("leaky_relu_0.2", _f("nn.functional.leaky_relu", negative_slope=0.2)),
    ("softplus_beta", _f("nn.functional.softplus", beta=2.0, threshold=5.0)),
    ("threshold", _f("nn.functional.threshold", threshold=0.5, value=-2.0)),
    ("clamp", _f("clamp", min=-1.5, max=2.0)), ("clamp_min", _f("clamp_min", min=0.5)),
    ("clamp_max", _f("clamp_max", max=0.5)),
] + [(f"polygamma_{n}", lambda lib, x, n=n: lib.polygamma(n, x)) for n in range(4)] + [
    (f"mvlgamma_{p}", lambda lib, x, p=p: lib.mvlgamma(x, p)) for p in (1, 2)]

# torch's SIMD loop (contiguous runs of a few vectors) and its scalar loop disagree for these;
# gradkit follows the scalar loop, which torch takes for one element. The SIMD loop's
# differences: neg(0j) = +0 - 0j (0 - z), sgn(-0 + 1j) = -0 + 1j and sgn(inf j) = 0 + NaN j,
# square without a fused multiply-add, softshrink's +0.0 inside [-lambd, lambd], and gelu's
# float32 erf polynomial (4e-5 off near -3, NaN at inf).
SIMD_DEPENDENT = {"neg", "negative", "sgn", "square", "nn.functional.softshrink", "softshrink_1",
                  "nn.functional.gelu"}
# values where torch and gradkit knowingly differ (docs/torch_expectations.md, "Unary ufuncs
# and complex"): log1p of the smallest subnormals (torch's is 0 at 5e-324, NumPy's exact)
KNOWN = {"log1p": [5e-324], "special.log1p": [5e-324]}


def program_for(name: str, fn, lib):
    """The program as run under ``lib``: torch's scalar loop for the SIMD_DEPENDENT ops."""
    return one_by_one(fn) if lib is torch and name in SIMD_DEPENDENT else fn
