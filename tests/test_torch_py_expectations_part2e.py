"""torch's test/test_torch.py ``tensor_op_tests`` (TestTensorDeviceOps: each tensor method and
its in-place variant, compared between the CPU and a device), run here on the CPU under gradkit
and under torch 2.13 and compared: the result, the tensor after the call and the arguments,
for the dtypes torch's table lists (values, dtypes, shapes, errors)."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.outcome import assert_same_outcome, outcome  # noqa: E402

TYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"]
FLOATS = TYPES[:3]
FLOATS_NO_HALF = TYPES[1:3]
SIGNED = TYPES[:7]
SIGNED_NO_HALF = TYPES[1:7]


def make(m, shape, dtype, seed=0, kind="any"):
    """torch's _make_tensor: random integers 0..9 for integer dtypes, normal floats; ``kind``
    "nonzero" clamps away from 0, "oneish" to [0.99, 1.01] (1 for integers), "ones" fills 1."""
    dt = getattr(m, dtype)
    floating = dtype in FLOATS
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) if floating else rng.integers(0, 10, shape)
    if kind == "ones":
        values = np.ones(shape)
    t = m.tensor(values, dtype=dt)
    if kind == "nonzero":
        return t.clamp(min=2 ** -8 if floating else 1)
    if kind == "oneish":
        return t.clamp(min=0.99 if floating else 1, max=1.01)
    return t


def number(floating, integer, dtype):
    return floating if dtype in FLOATS else integer


S, M = 5, 50
small_3d = lambda m, d, s=0: make(m, (S, S, S), d, s)  # noqa: E731
small_2d = lambda m, d, s=0: make(m, (S, S), d, s)  # noqa: E731
medium_2d = lambda m, d, s=0: make(m, (M, M), d, s)  # noqa: E731
medium_1d = lambda m, d, s=0: make(m, (M,), d, s)  # noqa: E731


def unique_3d(m, d, s=0):
    return m.tensor(np.random.default_rng(s).permutation(S ** 3) + 1, dtype=getattr(m, d)).view(
        S, S, S)


def shaped(*shape):
    return lambda m, d, s=0: make(m, shape, d, s)


# (method, subtest, tensor, args, dtypes, in-place variant too): torch's table, CPU dtypes
OPS = [
    ("add", "", small_3d, lambda m, d: [number(3.14, 3, d)], TYPES, True),
    ("add", "tensor", small_3d, lambda m, d: [small_3d(m, d, 1)], TYPES, True),
    ("sub", "", small_3d, lambda m, d: [number(3.14, 3, d)], TYPES, True),
    ("sub", "tensor", small_3d, lambda m, d: [small_3d(m, d, 1)], TYPES, True),
    ("mul", "", small_3d, lambda m, d: [number(3.14, 3, d)], TYPES, True),
    ("mul", "tensor", small_3d, lambda m, d: [small_3d(m, d, 1)], TYPES, True),
    ("mul", "scalar", lambda m, d, s=0: make(m, (1,), d).squeeze(),
     lambda m, d: [make(m, (1,), "int32", 1).squeeze()], TYPES, True),
    ("div", "", small_3d, lambda m, d: [number(3.14, 3, d)], TYPES, True),
    ("div", "tensor", small_3d, lambda m, d: [make(m, (S, S, S), d, 1, "nonzero")], TYPES, True),
    ("pow", "", small_3d, lambda m, d: [number(3.14, 3, d)], FLOATS, True),
    ("pow", "1", small_3d, lambda m, d: [number(1.0, 1, d)], TYPES, True),
    ("pow", "2", small_3d, lambda m, d: [number(2.0, 2, d)], TYPES, True),
    ("pow", "3", small_3d, lambda m, d: [number(3.0, 3, d)], TYPES, True),
    ("pow", "-1", small_3d, lambda m, d: [number(-1.0, -1, d)], FLOATS, True),
    ("pow", "-2", small_3d, lambda m, d: [number(-2.0, -2, d)], FLOATS_NO_HALF, False),
    ("pow", "tensor", small_3d, lambda m, d: [small_3d(m, d, 1).abs()], FLOATS, True),
    ("addbmm", "", small_2d, lambda m, d: [small_3d(m, d, 1), small_3d(m, d, 2)], FLOATS, True),
    ("baddbmm", "", small_3d, lambda m, d: [small_3d(m, d, 1), small_3d(m, d, 2)], FLOATS, True),
    ("bmm", "", small_3d, lambda m, d: [small_3d(m, d, 1)], FLOATS_NO_HALF, False),
    ("addcdiv", "", small_2d, lambda m, d: [small_2d(m, d, 1), make(m, (S, S), d, 2, "nonzero")],
     TYPES, True),
    ("addcmul", "", small_3d, lambda m, d: [small_3d(m, d, 1), small_3d(m, d, 2)], TYPES, True),
    ("addmm", "", medium_2d, lambda m, d: [medium_2d(m, d, 1), medium_2d(m, d, 2)], FLOATS, True),
    ("addmv", "", medium_1d, lambda m, d: [medium_2d(m, d, 1), medium_1d(m, d, 2)], FLOATS, True),
    ("addr", "", medium_2d, lambda m, d: [medium_1d(m, d, 1), medium_1d(m, d, 2)], FLOATS, True),
    ("atan2", "", medium_2d, lambda m, d: [medium_2d(m, d, 1)], FLOATS, True),
    ("fmod", "value", small_3d, lambda m, d: [3], TYPES, True),
    ("fmod", "tensor", small_3d, lambda m, d: [make(m, (S, S, S), d, 1, "nonzero")], TYPES, True),
    ("chunk", "", medium_2d, lambda m, d: [4], TYPES, False),
    ("chunk", "dim", medium_2d, lambda m, d: [4, 1], TYPES, False),
    ("chunk", "neg_dim", medium_2d, lambda m, d: [4, -2], TYPES, False),
    ("clamp", "neg", medium_2d, lambda m, d: [-1, 5], SIGNED, True),
    ("clamp", "pos", medium_2d, lambda m, d: [1, 5], ["uint8"], True),
    ("clone", "", medium_2d, lambda m, d: [], TYPES, False),
    ("contiguous", "", medium_2d, lambda m, d: [], TYPES, False),
    ("cross", "", shaped(M, 3, M), lambda m, d: [make(m, (M, 3, M), d, 1)], TYPES, False),
    ("cumprod", "", small_3d, lambda m, d: [1], TYPES, False),
    ("cumprod", "neg_dim", small_3d, lambda m, d: [-1], TYPES, False),
    ("cumsum", "", small_3d, lambda m, d: [1], TYPES, False),
    ("cumsum", "neg_dim", small_3d, lambda m, d: [-1], TYPES, False),
    ("dim", "", small_3d, lambda m, d: [], TYPES, False),
    ("dist", "", small_2d, lambda m, d: [small_2d(m, d, 1)], FLOATS, False),
    ("dist", "3_norm", small_2d, lambda m, d: [small_2d(m, d, 1), 3], FLOATS, False),
    ("dist", "2_5_norm", small_2d, lambda m, d: [small_2d(m, d, 1), 2.5], FLOATS, False),
    ("dot", "", medium_1d, lambda m, d: [medium_1d(m, d, 1)], FLOATS, False),
    ("element_size", "", medium_1d, lambda m, d: [], FLOATS_NO_HALF, False),
    ("eq", "", lambda m, d, s=0: make(m, (S, S, S), d, kind="ones"),
     lambda m, d: [small_3d(m, d, 1)], TYPES, True),
    ("eq", "equal", lambda m, d, s=0: make(m, (S, S, S), d, kind="ones"),
     lambda m, d: [make(m, (S, S, S), d, kind="ones")], TYPES, True),
    ("ne", "", lambda m, d, s=0: make(m, (S, S, S), d, kind="ones"),
     lambda m, d: [small_3d(m, d, 1)], TYPES, True),
    ("equal", "", lambda m, d, s=0: make(m, (S, S, S), d, kind="ones"),
     lambda m, d: [small_3d(m, d, 1)], TYPES, False),
    ("equal", "equal", lambda m, d, s=0: make(m, (S, S, S), d, kind="ones"),
     lambda m, d: [make(m, (S, S, S), d, kind="ones")], TYPES, False),
    ("expand", "", shaped(M, 1, M), lambda m, d: [M, 4, M], TYPES, False),
    ("expand_as", "", shaped(M, 1, M), lambda m, d: [make(m, (M, 4, M), d, 1)], TYPES, False),
    ("fill_", "", medium_2d, lambda m, d: [number(3.14, 3, d)], TYPES, False),
    ("ge", "", medium_2d, lambda m, d: [medium_2d(m, d, 1)], TYPES, True),
    ("le", "", medium_2d, lambda m, d: [medium_2d(m, d, 1)], TYPES, True),
    ("gt", "", medium_2d, lambda m, d: [medium_2d(m, d, 1)], TYPES, True),
    ("lt", "", medium_2d, lambda m, d: [medium_2d(m, d, 1)], TYPES, True),
    ("is_contiguous", "", medium_2d, lambda m, d: [], TYPES, False),
    ("is_same_size", "negative", medium_2d, lambda m, d: [small_3d(m, d, 1)], TYPES, False),
    ("is_same_size", "positive", medium_2d, lambda m, d: [medium_2d(m, d, 1)], TYPES, False),
    ("is_set_to", "", medium_2d, lambda m, d: [medium_2d(m, d, 1)], TYPES, False),
    ("kthvalue", "", unique_3d, lambda m, d: [3], TYPES, False),
    ("kthvalue", "dim", unique_3d, lambda m, d: [3, 1], TYPES, False),
    ("kthvalue", "neg_dim", unique_3d, lambda m, d: [3, -1], TYPES, False),
    ("lerp", "", small_3d, lambda m, d: [small_3d(m, d, 1), 0.3], FLOATS_NO_HALF, True),
    ("max", "", small_3d, lambda m, d: [], TYPES, False),
    ("max", "dim", unique_3d, lambda m, d: [1], TYPES, False),
    ("max", "neg_dim", unique_3d, lambda m, d: [-1], TYPES, False),
    ("max", "elementwise", medium_2d, lambda m, d: [medium_2d(m, d, 1)], TYPES, False),
    ("min", "", small_3d, lambda m, d: [], TYPES, False),
    ("min", "dim", unique_3d, lambda m, d: [1], TYPES, False),
    ("min", "neg_dim", unique_3d, lambda m, d: [-1], TYPES, False),
    ("min", "elementwise", medium_2d, lambda m, d: [medium_2d(m, d, 1)], TYPES, False),
    ("mean", "", small_3d, lambda m, d: [], FLOATS, False),
    ("mean", "neg_dim", small_3d, lambda m, d: [-1], FLOATS, False),
    ("mean", "dim", small_3d, lambda m, d: [1], FLOATS, False),
    ("mode", "", small_3d, lambda m, d: [], TYPES, False),
    ("mode", "dim", small_3d, lambda m, d: [1], TYPES, False),
    ("mode", "neg_dim", small_3d, lambda m, d: [-1], TYPES, False),
    ("mvlgamma", "2d_p=1", lambda m, d, s=0: small_2d(m, d).clamp(0.1, 10), lambda m, d: [1],
     FLOATS_NO_HALF, True),
    ("mvlgamma", "2d_p=2", lambda m, d, s=0: small_2d(m, d).clamp(0.6, 10), lambda m, d: [2],
     FLOATS_NO_HALF, True),
    ("remainder", "value", small_3d, lambda m, d: [3], SIGNED, True),
    ("remainder", "negative_value", small_3d, lambda m, d: [-3], SIGNED, True),
    ("remainder", "tensor", small_3d, lambda m, d: [make(m, (S, S, S), d, 1, "nonzero")], SIGNED,
     True),
    ("remainder", "negative_tensor", small_3d,
     lambda m, d: [0 - make(m, (S, S, S), d, 1, "nonzero")], SIGNED, True),
    ("std", "", small_3d, lambda m, d: [], FLOATS, False),
    ("std", "dim", small_3d, lambda m, d: [1], FLOATS, False),
    ("var", "neg_dim", small_3d, lambda m, d: [-1], FLOATS, False),
    ("ndimension", "", small_3d, lambda m, d: [], TYPES, False),
    ("nelement", "", small_3d, lambda m, d: [], TYPES, False),
    ("numel", "", small_3d, lambda m, d: [], TYPES, False),
    ("narrow", "", small_3d, lambda m, d: [1, 3, 2], TYPES, False),
    ("narrow", "neg_dim", small_3d, lambda m, d: [-1, 3, 2], TYPES, False),
    ("nonzero", "", small_3d, lambda m, d: [], TYPES, False),
    ("norm", "", small_3d, lambda m, d: [], FLOATS, False),
    ("norm", "3_norm", small_3d, lambda m, d: [3], FLOATS, False),
    ("norm", "3_norm_dim", small_3d, lambda m, d: [3, 0], FLOATS, False),
    ("norm", "3_norm_neg_dim", small_3d, lambda m, d: [3, -2], FLOATS, False),
    ("new_ones", "", small_3d, lambda m, d: [1, 2, 3, 4, 5], TYPES, False),
    ("permute", "", shaped(1, 2, 3, 4), lambda m, d: [2, 1, 3, 0], TYPES, False),
    ("put_", "", shaped(2, 5, 3),
     lambda m, d: [m.tensor([[0], [-2]]), m.tensor([[3], [4]], dtype=getattr(m, d))], TYPES, False),
    ("put_", "empty", shaped(2, 3),
     lambda m, d: [m.tensor([], dtype=m.int64), m.tensor([], dtype=getattr(m, d))], TYPES, False),
    ("put_", "accumulate", shaped(2, 2),
     lambda m, d: [m.tensor([[1], [-3]]), m.tensor([[1], [2]], dtype=getattr(m, d)), True],
     TYPES, False),
    ("prod", "", lambda m, d, s=0: make(m, (S, S), d, kind="oneish"), lambda m, d: [], TYPES,
     False),
    ("prod", "dim", small_3d, lambda m, d: [1], TYPES, False),
    ("sum", "", small_2d, lambda m, d: [], TYPES, False),
    ("sum", "neg_dim", small_3d, lambda m, d: [-1], TYPES, False),
    ("renorm", "2_norm", small_3d, lambda m, d: [2, 1, 1], FLOATS, True),
    ("renorm", "2_norm_neg_dim", small_3d, lambda m, d: [2, -1, 1], FLOATS, True),
    ("renorm", "1_5_norm", small_3d, lambda m, d: [1.5, 1, 1], FLOATS, True),
    ("repeat", "", small_2d, lambda m, d: [2, 2, 2], TYPES, False),
    ("size", "", shaped(1, 2, 3, 4), lambda m, d: [], TYPES, False),
    ("size", "neg_dim", shaped(1, 2, 3, 4), lambda m, d: [-2], TYPES, False),
    ("sort", "", unique_3d, lambda m, d: [], TYPES, False),
    ("sort", "dim_descending", unique_3d, lambda m, d: [1, True], TYPES, False),
    ("split", "", small_3d, lambda m, d: [2], TYPES, False),
    ("split", "neg_dim", small_3d, lambda m, d: [2, -3], TYPES, False),
    ("squeeze", "", shaped(1, 2, 1, 4), lambda m, d: [], TYPES, True),
    ("squeeze", "neg_dim", shaped(1, 2, 1, 4), lambda m, d: [-2], TYPES, True),
    ("t", "", shaped(1, 2), lambda m, d: [], TYPES, True),
    ("take", "", shaped(3, 4), lambda m, d: [m.tensor([[0], [-2]])], TYPES, False),
    ("transpose", "neg_dim", shaped(1, 2, 3, 4), lambda m, d: [-1, -2], TYPES, True),
    ("tolist", "", small_3d, lambda m, d: [], TYPES, False),
    ("topk", "dim_sort", unique_3d, lambda m, d: [2, 1, False, True], TYPES, False),
    ("topk", "dim_desc_sort", unique_3d, lambda m, d: [2, 1, True, True], TYPES, False),
    ("trace", "", medium_2d, lambda m, d: [], TYPES, False),
    ("tril", "positive", medium_2d, lambda m, d: [2], TYPES, True),
    ("triu", "negative", medium_2d, lambda m, d: [-2], TYPES, True),
    ("unsqueeze", "neg_dim", shaped(2, 3, 4), lambda m, d: [-2], TYPES, True),
    ("view", "contiguous", small_3d, lambda m, d: [25, 5], TYPES, False),
    ("view_as", "", small_3d, lambda m, d: [make(m, (25, 5), d, 1)], TYPES, False),
    ("zero_", "", small_3d, lambda m, d: [], TYPES, False),
    ("new_zeros", "", small_3d, lambda m, d: [1, 2, 3, 4], TYPES, False),
    ("flip", "d02", small_3d, lambda m, d: [0, 2], TYPES, False),
    ("flip", "neg_d", small_3d, lambda m, d: [-1], TYPES, False),
    ("rot90", "k1_d01", small_2d, lambda m, d: [1, [0, 1]], TYPES, False),
    ("rot90", "k1_neg_d", small_3d, lambda m, d: [1, [1, -1]], TYPES, False),
    ("rot90", "default", small_3d, lambda m, d: [], TYPES, False),
    ("rsqrt", "", lambda m, d, s=0: small_3d(m, d) + 1, lambda m, d: [], FLOATS_NO_HALF, True),
    ("sinh", "", lambda m, d, s=0: small_3d(m, d).clamp(-1, 1), lambda m, d: [], FLOATS, True),
    ("tan", "", lambda m, d, s=0: small_3d(m, d).clamp(-1, 1), lambda m, d: [], FLOATS, True),
    ("__lshift__", "", lambda m, d, s=0: m.pow(2, m.arange(1, 5)).to(getattr(m, d)),
     lambda m, d: [2], SIGNED_NO_HALF, False),
    ("__rshift__", "", lambda m, d, s=0: m.pow(2, m.arange(3, 7)).to(getattr(m, d)),
     lambda m, d: [2], SIGNED_NO_HALF, False),
    ("qr", "skinny", shaped(3, 4), lambda m, d: [], FLOATS_NO_HALF, False),
    ("geqrf", "", shaped(20, 20), lambda m, d: [], FLOATS_NO_HALF, False),
    ("svd", "tall_some", shaped(20, 5), lambda m, d: [True], FLOATS_NO_HALF, False),
] + [(name, "", small_3d, lambda m, d: [], FLOATS, True)
     for name in ("log", "log10", "log1p", "log2", "sigmoid", "sin", "sqrt", "tanh", "acos",
                  "asin", "atan", "cos", "cosh", "erf", "erfc", "exp", "expm1", "reciprocal",
                  "floor", "frac", "neg", "round", "trunc", "ceil", "lgamma", "digamma")] + [
    ("abs", "", small_3d, lambda m, d: [], TYPES, True),
    ("sign", "", small_3d, lambda m, d: [], TYPES, True)]

# the results whose sign or order NumPy's LAPACK chooses otherwise than torch's: compared by
# what the factorization rebuilds instead
_FACTORIZATIONS = {"qr": lambda m, r: r[0] @ r[1], "svd": lambda m, r: r[0] @ m.diag(r[1]) @ r[2].T,
                   "geqrf": lambda m, r: r[0].triu()}


def _case(method, build, args, dtype, factorize):
    def run(m):
        t = build(m, dtype)
        arguments = args(m, dtype)
        result = getattr(t, method)(*arguments)
        if factorize is not None:
            result = factorize(m, result)
        return result, t, arguments
    return run


CASES = [(f"{name}_{sub or 'plain'}{'_' if inplace else ''}-{dtype}",
          name + ("_" if inplace else ""), build, args, dtype)
         for name, sub, build, args, dtypes, has_inplace in OPS for dtype in dtypes
         for inplace in ((False, True) if has_inplace else (False,))]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_tensor_op_as_torch(case):  # TestTensorDeviceOps, on the CPU
    _, method, build, args, dtype = case
    tolerance = 2e-3 if dtype == "float16" else 1e-5
    run = _case(method, build, args, dtype, _FACTORIZATIONS.get(method))
    assert_same_outcome(outcome(run, gradkit), outcome(run, torch), tolerance, tolerance)
