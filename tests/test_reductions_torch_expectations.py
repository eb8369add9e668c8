"""torch's own reduction tests (test/test_reductions.py, TestReductions), re-run as programs
under torch 2.13 and gradkit: same values, dtypes, shapes, gradients, or the same error.

Each block names the torch tests it covers. Data comes from seeded NumPy generators outside
the programs, so both libraries see the same numbers. Out of scope (see
docs/torch_expectations.md, "Reductions"): CUDA, out=, bfloat16, torch.masked, torch.jit,
tensors of more than 64 dims (NumPy's limit is 64), and the undefined corners listed there.
"""
import warnings
from functools import partial

import numpy as np
import pytest
from reduction_data import INF, NAN, PerTestGenerator, t
from test_torch_numerics import assert_same_as_torch, with_grads

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = PerTestGenerator(20261206)


def outs(result):
    """A reduction's answer as a tuple of tensors (named tuples and pairs flattened)."""
    return tuple(result) if isinstance(result, tuple) else (result,)


def without_welford_mean(name, result):
    """var_mean/std_mean's var or std alone: torch's mean there is a Welford update, NaN once
    an inf meets a later finite value (gradkit's is the plain mean; see the ledger)."""
    return outs(result)[:1] if name in ("var_mean", "std_mean") else outs(result)


# -- the ReductionOpInfo tests: dims, keepdim, identity, NaN policy, dtypes, empty slices ------

MULTI_DIM = {  # ops that take a dim list
    "sum": lambda m, x, **k: m.sum(x, **k), "mean": lambda m, x, **k: m.mean(x, **k),
    "nansum": lambda m, x, **k: m.nansum(x, **k), "nanmean": lambda m, x, **k: m.nanmean(x, **k),
    "var": lambda m, x, **k: m.var(x, **k), "std": lambda m, x, **k: m.std(x, **k),
    "var_mean": lambda m, x, **k: m.var_mean(x, **k),
    "std_mean": lambda m, x, **k: m.std_mean(x, **k),
    "amax": lambda m, x, **k: m.amax(x, **k), "amin": lambda m, x, **k: m.amin(x, **k),
    "norm": lambda m, x, **k: m.norm(x, **k),
    "vector_norm": lambda m, x, **k: m.linalg.vector_norm(x, **k),
    "all": lambda m, x, **k: m.all(x, **k), "any": lambda m, x, **k: m.any(x, **k),
    "logsumexp": lambda m, x, **k: m.logsumexp(x, **k),
}
SINGLE_DIM = {  # ops that take one int dim
    "prod": lambda m, x, **k: m.prod(x, **k), "max": lambda m, x, **k: m.max(x, **k),
    "min": lambda m, x, **k: m.min(x, **k), "argmax": lambda m, x, **k: m.argmax(x, **k),
    "argmin": lambda m, x, **k: m.argmin(x, **k), "median": lambda m, x, **k: m.median(x, **k),
    "nanmedian": lambda m, x, **k: m.nanmedian(x, **k), "mode": lambda m, x, **k: m.mode(x, **k),
    "aminmax": lambda m, x, **k: m.aminmax(x, **k),
}
ALL_OPS = {**MULTI_DIM, **SINGLE_DIM}
NEEDS_DIM = {"logsumexp", "max", "min", "median", "nanmedian", "mode", "prod"}  # for keepdim
# torch's overloads take keepdim only beside a dim for these (gradkit also takes it alone)
KEEPDIM_NEEDS_DIM = NEEDS_DIM | {"sum", "mean"}


def _dim_cases(name):
    cases = [(0, {"dim": 0}), (1, {"dim": 0}), (2, {"dim": -1}), (3, {"dim": 1})]
    if name not in NEEDS_DIM:  # no dim and dim=None reduce everything
        cases += [(n, {}) for n in range(3)] + [(n, {"dim": None}) for n in range(3)]
    if name in MULTI_DIM:
        cases += [(1, {"dim": [0]}), (3, {"dim": [0, 2]}), (4, {"dim": [3, 0, 2]}),
                  (0, {"dim": []}), (2, {"dim": []}), (2, {"dim": ()})]
    kept = [(n, {**kw, "keepdim": True}) for n, kw in cases
            if kw.get("dim") is not None or name not in KEEPDIM_NEEDS_DIM]
    return cases + kept


@pytest.mark.parametrize("name,ndim,kwargs", [(name, ndim, kw) for name in ALL_OPS
                                              for ndim, kw in _dim_cases(name)])
def test_dim_and_keepdim_match_torch(name, ndim, kwargs):
    """test_dim_default/_none/_single/_empty/_multi/_multi_unsorted (and their _keepdim)."""
    x = RNG.standard_normal(tuple(range(2, 2 + ndim)))
    assert_same_as_torch(lambda m: outs(ALL_OPS[name](m, t(m, x), **kwargs)), rtol=1e-5)


@pytest.mark.parametrize("name", sorted(MULTI_DIM))
@pytest.mark.parametrize("dim", [(0, 1, 1, 2), (0, -3), (2, 1, 1, 2)])
def test_a_dim_given_twice_is_refused(name, dim):
    """test_dim_multi_duplicate, test_repeated_dim: the first dim seen twice is named."""
    x = RNG.standard_normal((3, 3, 3))
    assert_same_as_torch(lambda m: outs(MULTI_DIM[name](m, t(m, x), dim=dim)))
    if name != "norm":  # torch.norm takes 4 dims for a matrix norm, refused first
        with pytest.raises(RuntimeError, match="appears multiple times in the list of dims"):
            MULTI_DIM[name](gradkit, t(gradkit, x), dim=dim)


def test_a_dim_given_twice_on_a_0d_tensor_and_count_nonzero():
    assert_same_as_torch(lambda m: m.sum(t(m, 1.0), (0, -1)))
    assert_same_as_torch(lambda m: m.count_nonzero(t(m, np.ones((2, 3))), (1, -1)))


@pytest.mark.parametrize("name", ["argmax", "argmin", "median", "nanmedian", "mode", "cumsum",
                                  "cumprod", "logcumsumexp", "softmax", "log_softmax", "max",
                                  "min", "kthvalue"])
@pytest.mark.parametrize("dim", [(0, 2), 1.5])
def test_a_single_dim_op_refuses_a_dim_list(name, dim):
    """test_dim_multi_unsupported: TypeError (torch also names the function; max and min,
    whose overloads include a tensor, say 'invalid combination of arguments')."""
    x = RNG.standard_normal((3, 4, 5))
    call = (lambda m: m.kthvalue(t(m, x), 1, dim)) if name == "kthvalue" else \
        (lambda m: getattr(m, name)(t(m, x), dim=dim))
    pattern = "invalid combination" if name in ("max", "min") else \
        rf"argument 'dim' (\(position \d\) )?must be int, not {type(dim).__name__}"
    for m in (torch, gradkit):
        with pytest.raises(TypeError, match=pattern):
            call(m)


def test_prod_refuses_a_dim_list():
    x = RNG.standard_normal((3, 4))
    for m in (torch, gradkit):
        with pytest.raises(TypeError, match="prod"):
            m.prod(t(m, x), dim=(0, 1))


@pytest.mark.parametrize("name", sorted(ALL_OPS))
@pytest.mark.parametrize("dim", [2, -3])
def test_a_dim_out_of_bounds_is_an_index_error(name, dim):
    """test_dim_offbounds."""
    x = RNG.standard_normal((2, 3))
    assert_same_as_torch(lambda m: outs(ALL_OPS[name](m, t(m, x), dim=dim)))


@pytest.mark.parametrize("name,identity", [("sum", 0.0), ("prod", 1.0), ("nansum", 0.0),
                                           ("amax", -INF), ("amin", INF), ("all", 1.0),
                                           ("any", 0.0), ("norm", 0.0), ("logsumexp", -INF)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_identity_changes_nothing(name, identity, dtype):
    """test_identity."""
    x = RNG.uniform(-2, 2, 10)
    x[1::2] = identity
    op = ALL_OPS.get(name) or MULTI_DIM[name]
    assert_same_as_torch(lambda m: (op(m, t(m, x, dtype), dim=0), op(m, t(m, x[::2], dtype),
                                                                        dim=0)), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(ALL_OPS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_nan_propagates_or_is_omitted_as_torch(name, dtype):
    """test_nan_policy_propagate / test_nan_policy_omit (nan* ops skip the NaNs)."""
    x = RNG.uniform(-1, 1, 10).astype(np.float32)
    x[1::2] = NAN
    op = ALL_OPS[name]
    kwargs = {"dim": 0} if name in NEEDS_DIM else {}
    assert_same_as_torch(lambda m: without_welford_mean(name, op(m, t(m, x, dtype), **kwargs)),
                         rtol=1e-3)


@pytest.mark.parametrize("name", sorted(ALL_OPS))
@pytest.mark.parametrize("dtype", ["float16", "float64", "int64", "int32", "int16", "int8",
                                   "uint8", "bool", "complex64", "complex128"])
def test_result_dtype_matches_torch(name, dtype):
    """test_result_dtype, test_dim_reduction (ints sum and prod in int64; mean and var refuse
    them; argmax gives int64; all/any give bool, uint8 for uint8)."""
    x = RNG.integers(0, 2 if dtype in ("bool", "uint8") else 4, 5)
    kwargs = {"dim": 0} if name in NEEDS_DIM else {}
    assert_same_as_torch(lambda m: outs(ALL_OPS[name](m, t(m, x, dtype), **kwargs)), rtol=1e-3)
    assert_same_as_torch(lambda m: outs(ALL_OPS[name](m, t(m, x, dtype), dim=0)), rtol=1e-3)


@pytest.mark.parametrize("name", sorted(ALL_OPS))
@pytest.mark.parametrize("dim", [0, [0, 2], 1, [1, 2], None])
def test_empty_slices_give_the_identity_nan_or_an_error(name, dim):
    """test_empty_tensor_empty_slice / _nonempty_slice, test_tensor_compare_ops_empty,
    test_tensor_reduce_ops_empty, test_tensor_compare_ops_argmax_argmix_kthvalue_dim_empty."""
    if name in SINGLE_DIM and isinstance(dim, list) or dim is None and name == "logsumexp":
        return
    kwargs = {} if dim is None else {"dim": dim}
    assert_same_as_torch(lambda m: outs(ALL_OPS[name](m, m.zeros(0, 2, 3), **kwargs)))
    if dim is not None:
        assert_same_as_torch(lambda m: outs(ALL_OPS[name](m, m.zeros(2, 0, 3), keepdim=True,
                                                          **kwargs)))


@pytest.mark.parametrize("name", sorted(ALL_OPS))
@pytest.mark.parametrize("layout", ["innermost", "outermost", "all", "transposed", "expanded"])
def test_noncontiguous_inputs_reduce_as_contiguous_ones(name, layout):
    """test_noncontiguous_*: (median/nanmedian of an expanded tensor: see the next test)."""
    x = RNG.uniform(-1, 1, (5, 5, 5))
    view, kwargs = {
        "innermost": (lambda v: v[0, :, ::2], {"dim": 1}),
        "outermost": (lambda v: v[0, ::2, :], {"dim": 0}),
        "all": (lambda v: v[::2, ::3, 1:-1:2], {"dim": 0}),
        "transposed": (lambda v: v[0].T, {"dim": 1}),
        "expanded": (lambda v: v[0, :2, :3].unsqueeze(1).expand(-1, 5, -1), {"dim": 1}),
    }[layout]
    if layout == "expanded" and name in ("median", "nanmedian"):
        return
    assert_same_as_torch(lambda m: outs(ALL_OPS[name](m, view(t(m, x, "float64")), **kwargs)))


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_of_an_expanded_tensor_is_each_repeated_value(name):
    """torch 2.13's CPU median reads past a 0-stride dim (its values are garbage); gradkit
    gives the repeated value itself, the answer of the same tensor made contiguous."""
    x = RNG.standard_normal((2, 3))
    for m in (torch, gradkit):
        expanded = t(m, x).unsqueeze(1).expand(-1, 5, -1)
        reference = getattr(expanded.contiguous(), name)(1)
        np.testing.assert_array_equal(reference.values.numpy(), x.astype(np.float32))
    got = getattr(t(gradkit, x).unsqueeze(1).expand(-1, 5, -1), name)(1)
    np.testing.assert_array_equal(got.values.numpy(), x.astype(np.float32))


@pytest.mark.parametrize("name", sorted(ALL_OPS))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_reference_inputs_small_duplicate_and_extremal(name, dtype):
    """test_ref_scalar_input, test_ref_small_input, test_ref_duplicate_values,
    test_ref_extremal_values (NaN, inf, -inf, 0, 1 at one place)."""
    x = RNG.uniform(-2, 2, (5, 3, 4, 2))
    x[x == 0] = 1
    if dtype in ("int64", "bool"):
        x = np.round(x)
    dims = [0, 1, 3] + ([[0, 2], [1, 3]] if name in MULTI_DIM else [])
    op = ALL_OPS[name]
    assert_same_as_torch(lambda m: outs(op(m, t(m, 1.5, dtype), **(
        {"dim": 0} if name in NEEDS_DIM else {}))), rtol=1e-5)
    for dim in dims:
        assert_same_as_torch(lambda m, dim=dim: outs(op(m, t(m, x, dtype), dim=dim)), rtol=1e-5)
    square = np.round(RNG.uniform(-2, 2, (4, 4))) if dtype in ("int64", "bool") else \
        RNG.uniform(-2, 2, (4, 4))
    square[::2, ::2] = square[1::2, 1::2]
    for dim in (0, 1):
        assert_same_as_torch(lambda m, dim=dim: outs(op(m, t(m, square, dtype), dim=dim)),
                             rtol=1e-5)
    if dtype == "float32":
        for extremal in (0.0, 1.0, NAN, INF, -INF):
            row = RNG.uniform(-2, 2, 5)
            row[2] = extremal
            assert_same_as_torch(lambda m, row=row: without_welford_mean(
                name, op(m, t(m, row), dim=0)), rtol=1e-5)


# -- var and std ----------------------------------------------------------------------------

VAR_OPS = ["var", "std", "var_mean", "std_mean"]


@pytest.mark.parametrize("name", VAR_OPS)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_var_and_std_with_every_correction(name, dtype):
    """test_var_correction_vs_numpy, test_std_correction_vs_numpy, test_std_mean_correction,
    test_var_mean_correction (a correction above the count gives inf/NaN, negative ones too)."""
    x = RNG.standard_normal((20, 20)) + (1j * RNG.standard_normal((20, 20))
                                         if dtype == "complex128" else 0)
    for dim in (None, 0, 1):
        for correction in (None, 0, 10, 30, -100):
            for keepdim in (False, True):
                assert_same_as_torch(lambda m, dim=dim, c=correction, k=keepdim: outs(
                    getattr(m, name)(t(m, x, dtype), dim=dim, correction=c, keepdim=k)))


@pytest.mark.parametrize("name", VAR_OPS)
def test_var_and_std_unbiased_and_stability(name):
    """test_var_unbiased, test_var_stability, test_var_stability2, test_var_mean*,
    test_std_mean*, test_var_vs_numpy, test_std_vs_numpy."""
    x = RNG.standard_normal((4, 6, 7))
    for unbiased in (True, False):  # float32: torch's Welford and NumPy's two passes round apart
        for args in ((), (1, unbiased, True), ((0, 2), unbiased)):
            assert_same_as_torch(lambda m, a=args, u=unbiased: outs(
                getattr(m, name)(t(m, x), *a) if a else getattr(m, name)(t(m, x), unbiased=u)),
                rtol=2e-5)
    assert_same_as_torch(lambda m: outs(getattr(m, name)(t(m, [2281.5, 2281.25]))))
    assert_same_as_torch(lambda m: outs(getattr(m, name)(t(m, [[2281.5], [2281.25]]), 0)))
    assert_same_as_torch(lambda m: outs(getattr(m, name)(t(m, [1.0, 2.0, 3.0]))))
    assert_same_as_torch(lambda m: outs(getattr(m, name)(t(m, [1, 2], "int64"))))
    assert_same_as_torch(lambda m: outs(getattr(m, name)(m.zeros(2, 0, 4), 1)))
    # closed forms from torch's test: var([1, 2]) is 0.5 unbiased, 0.25 biased
    var = gradkit.var(t(gradkit, [1.0, 2.0]))
    assert var.item() == 0.5 and gradkit.var(t(gradkit, [1.0, 2.0]), unbiased=False).item() == 0.25


@pytest.mark.parametrize("name", VAR_OPS)
def test_too_few_degrees_of_freedom_warn(name):
    """test_warn_invalid_degrees_of_freedom (torch's message adds where it was raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(gradkit, name)(gradkit.ones(10, 20), dim=-1, correction=20)
    assert any("degrees of freedom is <= 0" in str(w.message) for w in caught)
    assert_same_as_torch(lambda m: outs(getattr(m, name)(m.ones(10, 20), dim=-1, correction=20)))


# -- sum, prod, mean: dtype=, integer upcast, overflow --------------------------------------

@pytest.mark.parametrize("name", ["sum", "prod", "nansum", "cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "bool", "float16",
                                   "float32", "float64", "complex64"])
def test_integer_upcast_and_dtype_argument(name, dtype):
    """test_sum/prod/cumsum/cumprod_integer_upcast, test_nansum_out_dtype: ints accumulate in
    int64; dtype= casts first (bool has no scan kernel; a float nansum no complex one)."""
    x = np.full((3, 4), 2)
    for out_dtype in (None, "int32", "int16", "float32", "float64", "complex64", "uint8", "bool"):
        kwargs = {} if out_dtype is None else {"dtype": out_dtype}

        def program(m, kwargs=kwargs):
            k = {key: getattr(m, v) for key, v in kwargs.items()}
            f = getattr(m, name)
            if name.startswith("cum"):
                return f(t(m, x, dtype), 0, **k)
            return f(t(m, x, dtype), **k), f(t(m, x, dtype), 0, **k)
        assert_same_as_torch(program)


@pytest.mark.parametrize("name", ["mean", "nanmean"])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float16", "float32", "complex64"])
def test_mean_dtype_argument(name, dtype):
    """test_mean_int_with_optdtype, test_nanmean_integral_types: an integer dtype= is refused
    first; integer inputs need a floating dtype=, nanmean refuses them outright."""
    x = np.arange(12).reshape(3, 4)
    for out_dtype in (None, "float32", "float64", "complex64", "int64"):
        kwargs = {} if out_dtype is None else {"dtype": out_dtype}
        assert_same_as_torch(lambda m, kw=kwargs: getattr(m, name)(
            t(m, x, dtype), **{k: getattr(m, v) for k, v in kw.items()}))
        assert_same_as_torch(lambda m, kw=kwargs: getattr(m, name)(
            t(m, x, dtype), 1, **{k: getattr(m, v) for k, v in kw.items()}))
    assert_same_as_torch(lambda m: getattr(m, name)(t(m, np.zeros(0), dtype)))


def test_sum_and_prod_small_ints_bools_and_named_args():
    """test_sum_dim_reduction_uint8_overflow, test_prod_bool, test_accreal_type,
    test_numpy_named_args (axis=, keepdims=), test_sum_all, test_all_any_with_dim."""
    example = np.array([[255, 2, 1], [5, 3, 6]])
    assert_same_as_torch(lambda m: (t(m, example, "uint8").sum(dtype=m.uint8),
                                    t(m, example, "uint8").sum(0, dtype=m.uint8),
                                    t(m, example, "uint8").sum(1, dtype=m.uint8)))
    for values in ([True, True], [True, False], [False, False], [], [False] * 256):
        assert_same_as_torch(lambda m, v=values: (m.prod(t(m, v, "bool"), dtype=m.bool),
                                                  m.prod(t(m, v, "bool"))))
    for dtype in ("float64", "float32", "int64", "int32", "int16", "int8", "uint8"):
        expected = type(torch.ones(2, 3, dtype=getattr(torch, dtype)).sum().item())
        assert type(gradkit.ones(2, 3, dtype=getattr(gradkit, dtype)).sum().item()) is expected
    x = RNG.standard_normal((4, 5, 6))
    assert_same_as_torch(lambda m: (t(m, x).sum(axis=(0, 2), keepdims=True),
                                    t(m, x).mean(axis=1, keepdims=True)))
    assert_same_as_torch(lambda m: (t(m, [True, False, True], "bool").sum(),
                                    t(m, x, "float64").permute(2, 0, 1).sum(dim=(-1, -2))))
    grid = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 1], [1, 1, 1]])
    assert_same_as_torch(lambda m: (t(m, grid, "uint8").prod(0).byte(),
                                    t(m, grid, "uint8").all(0),
                                    t(m, grid, "uint8").sum(1, keepdim=True).clamp(0, 1).byte(),
                                    t(m, grid, "uint8").any(1, keepdim=True)))


NAMED_TENSORS = {
    "sum(input=)": lambda m, a, b: m.sum(input=a), "sum(a=)": lambda m, a, b: m.sum(a=a),
    "sum(x=, axis=)": lambda m, a, b: m.sum(x=a, axis=0),
    "mean(input=, keepdims=)": lambda m, a, b: m.mean(input=a, dim=0, keepdims=True),
    "add(x1=, x2=)": lambda m, a, b: m.add(x1=a, x2=b),
    "add(input=, other=)": lambda m, a, b: m.add(input=a, other=b),
    "mul(a, x2=)": lambda m, a, b: m.mul(a, x2=b), "a.add(x2=)": lambda m, a, b: a.add(x2=b),
    "exp(x=)": lambda m, a, b: m.exp(x=a), "var(input=)": lambda m, a, b: m.var(input=a),
    "amax(input=)": lambda m, a, b: m.amax(input=a, dim=1),
    "median(input=)": lambda m, a, b: m.median(input=a),
    "logsumexp(input=)": lambda m, a, b: m.logsumexp(input=a, dim=1),
}


@pytest.mark.parametrize("case", sorted(NAMED_TENSORS))
def test_tensors_given_by_keyword(case):
    """test_numpy_named_args: torch's parser takes the tensors by keyword too, as input/other
    or NumPy's x1/x2 (also x and a for the input)."""
    x, y = RNG.standard_normal((2, 3, 4))
    assert_same_as_torch(lambda m: NAMED_TENSORS[case](m, t(m, x), t(m, y)))


@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod"])
def test_a_reduction_dtype_gives_gradients_in_the_input_dtype(name):
    """test_reduce_dtype: float32 in, float64 out: the gradient is float32."""
    x = RNG.standard_normal((3, 3))

    def program(m):
        leaf = t(m, x, requires_grad=True)
        out = getattr(m, name)(leaf, 0, dtype=m.float64)
        grads = m.autograd.grad(out, leaf, m.ones_like(out))
        if name.startswith("cum"):
            return (out, *grads)
        whole = getattr(m, name)(leaf, dtype=m.float64)
        return (out, *grads, whole, *m.autograd.grad(whole, leaf))
    assert_same_as_torch(program)


# -- gradients -------------------------------------------------------------------------------

GRADIENT_PROGRAMS = {
    "sum dims": lambda m, x: m.sum(x, dim=(0, 1)),
    "mean keepdim": lambda m, x: x.mean(1, keepdim=True),
    "prod": lambda m, x: x.prod(1), "prod all": lambda m, x: x.prod(),
    "var": lambda m, x: x.var(0), "std correction": lambda m, x: x.std(1, correction=0),
    "var_mean": lambda m, x: m.stack(list(m.var_mean(x, 1))),
    "std_mean": lambda m, x: m.stack(list(m.std_mean(x, 0))),
    "logsumexp dims": lambda m, x: m.logsumexp(x, dim=(0, 1)),
    "logsumexp keepdim": lambda m, x: m.logsumexp(x, 1, keepdim=True),
    "amax": lambda m, x: x.amax(1), "amin dims": lambda m, x: x.amin((1, 0)),
    "max dim": lambda m, x: x.max(1).values, "max": lambda m, x: x.max(),
    "median": lambda m, x: x.median(), "median dim": lambda m, x: x.median(0).values,
    "nanmedian": lambda m, x: x.nanmedian(1).values, "mode": lambda m, x: x.mode(1).values,
    "norm": lambda m, x: x.norm(dim=1), "nansum": lambda m, x: x.nansum(0),
    "nanmean": lambda m, x: x.nanmean(1), "aminmax": lambda m, x: m.stack(m.aminmax(x, dim=1)),
    "kthvalue": lambda m, x: x.kthvalue(2, 1).values,
    "quantile": lambda m, x: m.quantile(x, t(m, [0.25, 0.5], "float64"), dim=1),
    "nanquantile": lambda m, x: m.nanquantile(x, 0.3, dim=0),
    "logcumsumexp": lambda m, x: x.logcumsumexp(1), "cummax": lambda m, x: x.cummax(1).values,
}
GRADIENT_INPUTS = {
    "random": RNG.standard_normal((3, 4)),
    "ties": np.array([[1.0, 1.0, 2.0, 2.0], [0.0, 3.0, 3.0, -1.0], [5.0, 5.0, 5.0, 5.0]]),
    "zeros": np.array([[0.0, 1.0, 2.0, 0.0], [0.0, 3.0, 3.0, -1.0], [5.0, 0.0, 5.0, 5.0]]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_PROGRAMS))
@pytest.mark.parametrize("inputs", sorted(GRADIENT_INPUTS))
def test_gradients_match_torch_at_ties_and_zeros(name, inputs):
    """test_logsumexp_backward_dim_none / _intermediate_shapes, test_quantile_backward, and
    the subgradients at ties (shared or picked as torch) and at zeros (prod)."""
    assert_same_as_torch(with_grads(GRADIENT_PROGRAMS[name], GRADIENT_INPUTS[inputs]))


@pytest.mark.parametrize("name", ["sum dims", "prod", "prod all", "std_mean", "var_mean",
                                  "logsumexp dims", "nanmean", "quantile", "norm"])
def test_gradients_check_to_second_order(name):
    x = gradkit.tensor(GRADIENT_INPUTS["random"] + 3.0, requires_grad=True)
    program = partial(GRADIENT_PROGRAMS[name], gradkit)
    assert gradcheck(program, (x,))
    assert gradgradcheck(program, (x,))


def test_quantile_backward_closed_forms():
    """test_quantile_backward's expected gradients (closed forms, NaN handled per op)."""
    cases = [([1., 2, 3], 0.5, [0, 1, 0]), ([1., 2, 3, 4], 0.5, [0, 0.5, 0.5, 0]),
             ([3., 1, 4, 2], 0.5, [0.5, 0, 0, 0.5]),
             ([1., 2, 3, 4], [0.25, 0.5, 0.75], [0.25, 1.25, 1.25, 0.25])]
    for values, q, expected in cases:
        for op in (gradkit.quantile, gradkit.nanquantile):
            x = gradkit.tensor(values, requires_grad=True)
            op(x, gradkit.tensor(q), 0).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), expected)
    for op, expected in ((gradkit.quantile, [0, 1, 0]), (gradkit.nanquantile, [0.5, 0, 0.5])):
        x = gradkit.tensor([1, NAN, 2], requires_grad=True)
        op(x, gradkit.tensor(0.5), 0).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), expected)


# -- larger inputs and float16 ---------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3, 3, 3, 3, 2, 2, 3, 2, 3, 2, 3, 3), (1, 32770)])
def test_sums_of_many_zeros_and_ones_are_exact(shape):
    """test_sum_parallel: along every dim and over everything."""
    x = np.round(RNG.random(shape))
    for dim in [*range(len(shape)), None]:
        assert_same_as_torch(lambda m, d=dim: t(m, x, "float64").sum(d) if d is not None
                             else t(m, x, "float64").sum(), rtol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16", "complex64"])
def test_reductions_along_dims_of_larger_inputs(dtype):
    """test_sum_dim, test_mean_dim, test_std_dim, test_var_dim, test_logsumexp_dim (torch's
    shapes, its largest ones smaller here), contiguous, strided and sliced."""
    x = RNG.uniform(-100, 100, (50, 50, 50))
    if dtype.startswith("int"):
        x = np.round(x)
    names = ["sum"] + ([] if dtype.startswith("int") else ["mean"]) + \
        ([] if dtype.startswith(("int", "complex")) else ["std", "var", "logsumexp"])
    for name in names:
        for dim in (0, 1, 2, (1, 2), (1, -1), (0, 2), (0, 2, 1)):
            assert_same_as_torch(lambda m, d=dim, n=name: (
                getattr(t(m, x, dtype), n)(d), getattr(t(m, x, dtype)[:, ::2, 1:], n)(d)),
                rtol=1e-5, atol=1e-3)
        for unbiased in (False, True):
            if name in ("std", "var"):
                assert_same_as_torch(lambda m, n=name, u=unbiased: getattr(
                    t(m, x[:, :, :20], dtype), n)(2, unbiased=u), rtol=1e-5)


def test_float16_reductions_accumulate_in_float32():
    """test_sum_noncontig_lowp, test_prod_lowp, test_histc_lowp, test_nansum_vs_numpy (half):
    torch adds up half values in float32 and rounds the result once."""
    x = RNG.uniform(-50, 50, (17, 17))
    def program(m):
        half = t(m, x, "float16")
        return (half.sum(0), half.T.sum(1), half[::2, ::2].sum(), half.nansum(0), half.cumsum(0),
                t(m, x).sum(0, dtype=m.float16), half.mean(0), half.var(0), half.std(1),
                *m.var_mean(half, 0), *m.std_mean(half), (half / 40).cumprod(0), half.norm(dim=0),
                m.linalg.vector_norm(half, 3, 1), half.norm(p=1), half.logcumsumexp(0),
                half.mean(0, dtype=m.float16), half.softmax(1), half.log_softmax(0))
    assert_same_as_torch(program)
    ones = np.ones((10, 50, 30, 30))
    assert_same_as_torch(lambda m: (t(m, ones, "float16")[::2, ::2, ::2, ::2].permute(3, 1, 0, 2)
                                    .sum((0, 2)),))


LARGE_OPS = ["sum", "mean", "nansum", "var", "std", "amax", "amin", "argmax", "argmin", "norm",
             "logsumexp", "prod", "all", "any", "count_nonzero"]


@pytest.mark.parametrize("shape,dim", [((2 ** 20,), 0), ((32, 2 ** 16), 1)])
def test_reference_large_inputs(shape, dim):
    """test_ref_large_input_1D / _2D: float64 values in [-1, 1] without zeros."""
    x = RNG.uniform(-1, 1, shape)
    x[x == 0] = 0.5
    for name in LARGE_OPS:
        assert_same_as_torch(lambda m, n=name: getattr(m, n)(t(m, x, "float64"), dim),
                             rtol=1e-9, atol=1e-12)
