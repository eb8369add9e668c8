"""torch's per-op reduction tests (test/test_reductions.py's legacy half): logsumexp, all/any,
max/min and their arg forms, median/nanmedian/mode, nansum/nanmean, count_nonzero, bincount,
histc, histogram(dd), quantile, searchsorted/bucketize, logcumsumexp; each program run under
torch 2.13 and gradkit, compared in values, dtypes, shapes and errors.
"""

import numpy as np
import pytest
from reduction_data import INF, NAN, PerTestGenerator, t
from test_torch_numerics import assert_same_as_torch, with_grads

import gradkit

torch = pytest.importorskip("torch")

RNG = PerTestGenerator(61206)


# -- logsumexp -------------------------------------------------------------------------------

LSE_ROWS = RNG.standard_normal((5, 4))
LSE_ROWS[1, :] = -INF


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_logsumexp_values_and_dims(dtype):
    """test_logsumexp (a row of -inf), test_logsumexp_dim, test_logsumexp_all_dims,
    test_logsumexp_dim_none_keepdim (all dims as a tuple), test_logsumexp_structured_kernel_meta,
    test_logsumexp_edge_cases_dim_none_complex."""
    x = LSE_ROWS + (0j if dtype.startswith("complex") else 0)
    assert_same_as_torch(lambda m: (m.logsumexp(t(m, x, dtype), 1),
                                    t(m, x, dtype).logsumexp(0, keepdim=True),
                                    m.logsumexp(t(m, x, dtype), (0, 1)),
                                    m.logsumexp(t(m, x, dtype), (0, 1), keepdim=True)), rtol=1e-5)
    cube = RNG.standard_normal((2, 3, 4))
    assert_same_as_torch(lambda m: (m.logsumexp(t(m, cube, dtype), (0, 1, 2), keepdim=True),
                                    m.logsumexp(t(m, cube, dtype), (2, 0))), rtol=1e-5)
    if dtype.startswith("complex"):
        assert_same_as_torch(lambda m: (m.logsumexp(t(m, [5.0 + 2j], dtype), 0),
                                        m.logsumexp(t(m, [1 + 1j, 2 + 2j], dtype), 0, True)))


def test_logsumexp_promotes_integers_and_has_edge_values():
    """test_logsumexp_integral_promotion, test_logsumexp_edge_cases_dim_none: an empty input
    gives -inf, all -inf gives -inf, all inf gives inf."""
    ints = RNG.integers(-100, 100, (5, 4))
    assert_same_as_torch(lambda m: (m.logsumexp(t(m, ints, "int64"), 1),
                                    m.logsumexp(t(m, [True, False], "bool"), 0)))
    assert_same_as_torch(lambda m: (m.logsumexp(t(m, []), 0), m.logsumexp(t(m, [5.0]), 0),
                                    m.logsumexp(m.full((2, 3), -INF), (0, 1)),
                                    m.logsumexp(m.full((2, 3), INF), (0, 1)),
                                    m.logsumexp(t(m, [INF, -INF]), 0),
                                    m.logsumexp(t(m, [NAN, INF]), 0)))
    assert_same_as_torch(lambda m: (m.logsumexp(m.zeros(2, 0, 4), 1),
                                    m.logsumexp(m.zeros(2, 0, 4), 2),
                                    m.logsumexp(m.zeros(2, 0, 4), -2, True)))
    assert gradkit.logsumexp(t(gradkit, [5.0]), 0).item() == 5.0


def test_logsumexp_needs_a_dim_in_torch_2_13():
    """The dim=None form of torch's newer tests (test_logsumexp_*_dim_none) is not in 2.13."""
    x = RNG.standard_normal((3, 4))
    assert_same_as_torch(lambda m: m.logsumexp(t(m, x), dim=None))
    assert_same_as_torch(lambda m: t(m, x).logsumexp(dim=None, keepdim=True))
    for m in (torch, gradkit):
        with pytest.raises(TypeError, match="logsumexp"):
            m.logsumexp(t(m, x))


def test_logsumexp_gradient_sums_to_one():
    """test_logsumexp_backward_dim_none / _intermediate_shapes (all dims as a tuple)."""
    x = RNG.standard_normal((2, 3, 4))
    assert_same_as_torch(with_grads(lambda m, v: m.logsumexp(v, (0, 1, 2)), x))
    assert_same_as_torch(with_grads(lambda m, v: m.logsumexp(v, (0, 1, 2), keepdim=True), x))
    assert_same_as_torch(with_grads(lambda m, v: m.logsumexp(v, 1), LSE_ROWS))
    leaf = gradkit.tensor(x, requires_grad=True)
    gradkit.logsumexp(leaf, (0, 1, 2)).backward()
    assert abs(leaf.grad.sum().item() - 1.0) < 1e-12


# -- all and any -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint8", "bool", "float32", "float16", "int64", "complex64"])
def test_all_and_any(dtype):
    """test_all_any, test_all_any_with_dim, test_all_any_empty, test_all_any_vs_numpy,
    test_reduction_empty_any_all: bool answers (uint8 for uint8), True/False over nothing."""
    for ndim in range(4):
        x = RNG.integers(0, 2, tuple(range(2, 2 + ndim)))
        for values in (x, np.zeros_like(x), np.ones_like(x)):
            assert_same_as_torch(lambda m, v=values: (
                m.all(t(m, v, dtype)), m.any(t(m, v, dtype)), m.all(t(m, v, dtype).T),
                m.any(t(m, v, dtype)[..., ::2])))
            for dim in range(ndim):
                for keepdim in (False, True):
                    assert_same_as_torch(lambda m, v=values, d=dim, k=keepdim: (
                        m.all(t(m, v, dtype), d, keepdim=k), m.any(t(m, v, dtype), d, k),
                        m.all(t(m, v, dtype).T, dim=d), m.any(t(m, v, dtype)[..., ::2], d)))
    empty = np.zeros((2, 0, 4))
    assert_same_as_torch(lambda m: (m.all(t(m, empty, dtype)), m.any(t(m, empty, dtype)),
                                    t(m, empty, dtype).any(1), t(m, empty, dtype).all(1, True),
                                    t(m, empty, dtype).any(2), t(m, empty, dtype).all(2, True)))


def test_all_and_any_of_nan_and_of_large_uint8():
    """test_all_issue117215 (any nonzero byte counts as true), NaN is nonzero."""
    assert_same_as_torch(lambda m: m.all(t(m, np.arange(256).reshape(16, 16) % 7, "uint8"), 0))
    assert_same_as_torch(lambda m: (m.all(t(m, [NAN, 1.0])), m.any(t(m, [NAN, 0.0]))))


def test_all_and_any_over_an_empty_dim_list_reduce_nothing():
    """torch 2.13's all/any read dim=() and dim=[] as no dim at all (sum reads them as all)."""
    x = RNG.integers(0, 2, (2, 3))
    assert_same_as_torch(lambda m: (m.all(t(m, x), ()), m.any(t(m, x), []),
                                    t(m, x, "uint8").all(dim=[], keepdim=True)))
    assert gradkit.any(t(gradkit, x), ()).shape == (2, 3)


# -- max, min, amax, amin, aminmax, argmax, argmin --------------------------------------------

@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "int32", "bool"])
def test_max_and_min(name, dtype):
    """test_max, test_min, test_amax, test_amin, test_aminmax (values, indices, a non-contiguous
    input, NaN picked with its index), test_max_with_inf / test_min_with_inf,
    test_max_elementwise / test_min_elementwise, test_dim_reduction."""
    a = "a" + name
    arg = "arg" + name
    x = RNG.standard_normal((10, 10, 10)) * (1 if dtype.startswith("float") else 1000)
    if dtype == "bool":
        x = x > 0
    for v in (x[:, 4], x[0]):
        assert_same_as_torch(lambda m, v=v: (getattr(m, name)(t(m, v, dtype)),
                                             getattr(m, a)(t(m, v, dtype), 1),
                                             *m.aminmax(t(m, v, dtype)),
                                             *getattr(m, name)(t(m, v, dtype).T, 0)))
        if dtype != "bool":
            assert_same_as_torch(lambda m, v=v: (getattr(m, arg)(t(m, v, dtype)),
                                                 getattr(m, arg)(t(m, v, dtype).T, 1, True)))
    if dtype.startswith("float"):
        for index in (0, 4, 9):
            row = RNG.standard_normal(10)
            row[index] = NAN
            assert_same_as_torch(lambda m, r=row: (*getattr(m, name)(t(m, r, dtype), 0),
                                                   getattr(m, name)(t(m, r, dtype)),
                                                   getattr(m, arg)(t(m, r, dtype)),
                                                   getattr(m, a)(t(m, r, dtype))))
        inf = [[-INF, -INF, INF, 3], [INF, INF, -INF, -1]]
        assert_same_as_torch(lambda m: (*getattr(m, name)(t(m, inf, dtype), 1),
                                        getattr(m, a)(t(m, inf, dtype), 1),
                                        getattr(m, name)(t(m, inf, dtype))))
        other = RNG.standard_normal((10, 10))
        assert_same_as_torch(lambda m: getattr(m, name)(t(m, x[0], dtype),
                                                        t(m, other, dtype)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8"])
def test_argmax_and_argmin(dtype):
    """test_argminmax_multiple (ties: the first; NaN: its index), test_dim_arg_reduction_scalar,
    test_argminmax_axis_with_dim_one, issue 41998's inputs."""
    for f in ("argmax", "argmin"):
        assert_same_as_torch(lambda m, f=f: (getattr(m, f)(m.ones(3, 3, dtype=getattr(m, dtype))),
                                             getattr(m, f)(m.ones(3, 3), 1)))
        for example in ([[1, 5], [2, 10], [3, 3]], [[1, 5], [2, 10], [0, 0]]):
            assert_same_as_torch(lambda m, f=f, e=example: (
                getattr(m, f)(t(m, e, dtype), 1), getattr(m, f)(t(m, e, dtype).T, 1),
                getattr(m, f)(t(m, e, dtype), dim=0, keepdim=True)))
        assert_same_as_torch(lambda m, f=f: (
            getattr(m, f)(t(m, 4.0, dtype)), getattr(m, f)(t(m, 4.0, dtype), dim=None),
            getattr(m, f)(t(m, 4.0, dtype), 0), getattr(m, f)(t(m, 4.0, dtype), 0, True)))
        assert_same_as_torch(lambda m, f=f: (getattr(m, f)(m.zeros(1, 7), 0),
                                             getattr(m, f)(m.zeros(1, 7), -2, True)))
        if dtype.startswith("float"):
            x = np.ones((3, 3))
            x[2, 2] = NAN
            assert_same_as_torch(lambda m, f=f, x=x: (getattr(m, f)(t(m, x, dtype)),
                                                      getattr(m, f)(t(m, x, dtype), 0)))


def test_extremes_of_empty_inputs():
    """test_tensor_compare_ops_empty, test_tensor_compare_ops_argmax_argmix_kthvalue_dim_empty:
    a reduction over a size-0 dim (or over everything of an empty x) is an IndexError or a
    RuntimeError naming the dim; other dims reduce to empty results."""
    for f in ("max", "min", "argmax", "argmin", "amax", "amin", "median", "nanmedian", "mode"):
        for dim, keepdim in ((2, False), (-1, True), (1, False)):
            assert_same_as_torch(lambda m, f=f, d=dim, k=keepdim: tuple(
                (lambda r: r if isinstance(r, tuple) else (r,))(
                    getattr(m, f)(m.zeros(2, 0, 4), d, k))))
    for f in ("max", "min", "argmax", "argmin", "median", "nanmedian"):
        assert_same_as_torch(lambda m, f=f: getattr(m, f)(m.zeros(2, 0, 4)))
    assert_same_as_torch(lambda m: tuple(m.kthvalue(m.zeros(2, 0, 4), 1, 2)))
    assert_same_as_torch(lambda m: tuple(m.kthvalue(m.zeros(2, 0, 4), 1, 1)))
    assert_same_as_torch(lambda m: tuple(m.aminmax(m.zeros(2, 0), dim=0)))
    assert_same_as_torch(lambda m: tuple(m.aminmax(m.zeros(2, 0), dim=1)))
    assert_same_as_torch(lambda m: tuple(m.aminmax(m.zeros(2, 0))))


def test_aminmax_of_a_0d_complex_tensor():
    """test_invalid_0dim_aminmax: torch's 0-d path has its own message."""
    for dtype in ("complex64", "complex128"):
        assert_same_as_torch(lambda m, d=dtype: tuple(m.aminmax(t(m, 1.0, d), dim=0)))
        assert_same_as_torch(lambda m, d=dtype: tuple(m.aminmax(t(m, [1.0], d), dim=0)))
    with pytest.raises(RuntimeError, match="aminmax not implemented for ComplexFloat"):
        gradkit.aminmax(t(gradkit, 1.0, "complex64"), dim=0)


def test_amin_amax_over_some_dims_equal_one_dim_at_a_time():
    """test_amin_amax_some_dims."""
    x = RNG.random((4, 6, 7, 5, 3))
    assert_same_as_torch(lambda m: (m.amin(t(m, x), (0, 2, 4)), m.amax(t(m, x), (1, 3), True),
                                    m.amin(m.amin(t(m, x), 4), 2)))


# -- median, nanmedian, mode -----------------------------------------------------------------

def test_median_corner_cases():
    """test_median_corner_cases: NaN, empty, [nan] with keepdim, NaN rows, strided inputs."""
    assert_same_as_torch(lambda m: (m.median(t(m, NAN)), m.nanmedian(t(m, NAN)),
                                    m.median(t(m, []))))
    assert_same_as_torch(lambda m: (*m.median(t(m, NAN), 0), *m.nanmedian(t(m, NAN), 0),
                                    *m.median(t(m, [NAN]), 0, True),
                                    *m.nanmedian(t(m, [NAN]), 0, True)))
    rows = [[NAN, NAN], [1, 2]]
    assert_same_as_torch(lambda m: (m.median(t(m, rows), 0).values,
                                    m.nanmedian(t(m, rows), 0).values,
                                    *m.median(t(m, rows), 1), *m.nanmedian(t(m, rows), 1)))
    assert_same_as_torch(lambda m: (
        m.arange(12)[::2].median(), m.arange(12)[::2].nanmedian(),
        m.arange(12).reshape(3, 4).T.median(), m.arange(12).reshape(3, 4)[::2, ::2].median(-1)[0],
        m.arange(12).reshape(2, 3, 2).T.nanmedian(),
        m.arange(12).reshape(2, 3, 2)[:, ::2, :].median(-1)[0]))


@pytest.mark.parametrize("shape", [(5,), (4,), (3, 6), (2, 3, 5), (1, 1, 1)])
def test_median_values_with_nan_and_integers(shape):
    """test_median_real_values, test_median_nan_values (median puts NaN first, nanmedian skips
    it; even counts take the lower middle; indices point at the value)."""
    x = RNG.random(shape)
    x[x < 0.2] = NAN
    ints = RNG.integers(-5, 5, shape)
    for f in ("median", "nanmedian"):
        assert_same_as_torch(lambda m, f=f: getattr(m, f)(t(m, x)))
        for dim in range(len(shape)):
            assert_same_as_torch(lambda m, f=f, d=dim: tuple(getattr(m, f)(t(m, x), d, True)))
            assert_same_as_torch(lambda m, f=f, d=dim: tuple(getattr(m, f)(t(m, ints, "int64"),
                                                                           d)))
    assert_same_as_torch(lambda m: m.median(t(m, ints, "int32")))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "int8", "uint8"])
def test_mode(dtype):
    """test_mode (the index of the last appearance), test_mode_boolean, NaN and 0-d inputs."""
    x = np.arange(1.0, 101).reshape(10, 10)
    x[:2] = 1
    x[:, :2] = 1
    assert_same_as_torch(lambda m: (*m.mode(t(m, x, dtype)), *m.mode(t(m, x, dtype), 0, False),
                                    *m.mode(t(m, x, dtype), keepdim=True)))
    ints = RNG.integers(0, 4, (3, 7))
    assert_same_as_torch(lambda m: (*m.mode(t(m, ints, dtype), 0), *m.mode(t(m, ints, dtype))))
    assert_same_as_torch(lambda m: (*m.mode(t(m, [NAN, NAN, 1.0, 1.0, 2.0])),
                                    *m.mode(t(m, 3.0))))


@pytest.mark.parametrize("shape", [(10, 10), (4, 2048)])
def test_mode_of_bools(shape):
    def program(m):
        a = m.zeros(shape, dtype=m.bool)
        a[:, (shape[1] - 1) // 2:] = True
        b = m.zeros(shape, dtype=m.bool)
        b[:, shape[1] // 2 + 1:] = True
        return (*a.mode(-1), *b.mode(-1))
    assert_same_as_torch(program)


# -- nansum, nanmean, count_nonzero ----------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "int8", "uint8"])
def test_nansum_and_nanmean(dtype):
    """test_nansum (NaN counted as 0, contiguous or not), test_nansum_vs_numpy (with extremal
    values, keepdim), test_nansum_complex."""
    scale = 50
    x = RNG.uniform(-scale, scale, (17, 17))
    if dtype.startswith("float"):
        x[x < 0.2 * scale] = NAN
        x[0, :3] = [INF, -INF, INF]
    else:
        x = np.abs(np.round(x))
    for kwargs in ({}, {"dim": 0}, {"dim": 1}, {"dim": (0, 1), "keepdim": True}):
        assert_same_as_torch(lambda m, k=kwargs: (m.nansum(t(m, x, dtype), **k),
                                                  m.nansum(t(m, x, dtype).T[::2], **k)),
                             rtol=1e-3)
        if dtype.startswith("float"):
            assert_same_as_torch(lambda m, k=kwargs: m.nanmean(t(m, x, dtype), **k), rtol=1e-3)
    assert_same_as_torch(lambda m: (m.nansum(t(m, [NAN, NAN])), m.nanmean(t(m, [NAN, NAN]))))
    assert_same_as_torch(lambda m: m.nansum(t(m, [1 + 1j], "complex64")))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool", "uint8", "complex64"])
def test_count_nonzero(dtype):
    """test_count_nonzero: int64 counts over any dims (NaN and inf count)."""
    for ndim in range(4):
        x = RNG.integers(0, 3, tuple(range(2, 2 + ndim)))
        assert_same_as_torch(lambda m, x=x: m.count_nonzero(t(m, x, dtype)))
        for dim in range(ndim):
            assert_same_as_torch(lambda m, x=x, d=dim: (m.count_nonzero(t(m, x, dtype), d),
                                                        m.count_nonzero(t(m, x, dtype), (d, 0))
                                                        if d else m.count_nonzero(t(m, x, dtype),
                                                                                  -1)))
    assert_same_as_torch(lambda m: (m.count_nonzero(t(m, [NAN, INF, 0.0, -INF])),
                                    m.count_nonzero(t(m, 0.0)), m.count_nonzero(t(m, 2.0), 0)))
