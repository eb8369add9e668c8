"""torch's summary-op tests in test/test_reductions.py: bincount, histc, histogram,
histogramdd, quantile/nanquantile, bucketize/searchsorted and complex logcumsumexp, each
program run under torch 2.13 and gradkit (values, dtypes, shapes, errors).
"""

import numpy as np
import pytest
from reduction_data import INF, NAN, PerTestGenerator, t
from test_torch_numerics import assert_same_as_torch, with_grads

import gradkit

torch = pytest.importorskip("torch")

RNG = PerTestGenerator(1206)


def i(m, values):
    return m.tensor(values)


# -- bincount --------------------------------------------------------------------------------

BINCOUNT_ERRORS = {
    "negative": lambda m: m.bincount(i(m, [1, -1])),
    "2-d": lambda m: m.bincount(i(m, [[1, 2], [3, 4]])),
    "float": lambda m: m.bincount(i(m, [1., 0.3])),
    "minlength": lambda m: m.bincount(i(m, [1, 3]), i(m, [.2, .2]), minlength=-1),
    "2-d weights": lambda m: m.bincount(i(m, [1, 0]), i(m, [[1., 0.3], [1., 0.3]])),
    "weights length": lambda m: m.bincount(i(m, [1, 0]), i(m, [1., 0.3, 0.5])),
}


@pytest.mark.parametrize("case", sorted(BINCOUNT_ERRORS))
def test_bincount_errors(case):
    """test_bincount's refusals (negative, 2-d or float input, minlength < 0, bad weights)."""
    assert_same_as_torch(BINCOUNT_ERRORS[case])


def test_bincount_values():
    """test_bincount: empty input with and without minlength, uint8 (no overflow at 255),
    minlength, float and int8 weights (float64 counts), non-contiguous inputs and weights."""
    assert_same_as_torch(lambda m: (m.bincount(m.tensor([], dtype=m.long)),
                                    m.bincount(m.tensor([], dtype=m.long), minlength=10)))
    assert_same_as_torch(lambda m: (t(m, [0, 3, 2, 1, 3], "uint8").bincount(),
                                    t(m, [0, 1, 2, 3, 255], "uint8").bincount(),
                                    t(m, [0, 1, 2, 3, 255], "int16").bincount()))
    assert_same_as_torch(lambda m: m.bincount(i(m, [1, 1, 1, 1]), minlength=5))
    counted = [0, 1, 1, 1, 4]
    assert_same_as_torch(lambda m: (m.bincount(i(m, counted), i(m, [.1, .2, .3, .4, .5])),
                                    m.bincount(i(m, counted), t(m, [1, 2, 3, 4, 5], "int8")),
                                    m.bincount(i(m, counted), t(m, [1, 2, 3, 4, 5], "float64"))))
    inputs = [[0, 0], [3, 1], [2, 1], [1, 1], [3, 4]]
    weights = [[.1, 1], [.2, 2], [.3, 3], [.4, 4], [.5, 5]]
    assert_same_as_torch(lambda m: (i(m, inputs)[:, 0].bincount(),
                                    i(m, inputs)[:, 1].bincount(i(m, weights)[:, 1]),
                                    i(m, inputs)[:, 1].contiguous().bincount(i(m, weights)[:, 1]),
                                    m.zeros((32, 2), dtype=m.int64)[:, 0].bincount(),
                                    m.ones((32, 2), dtype=m.int64)[:, 0].bincount(),
                                    m.ones(1000, dtype=m.int8).bincount()))
    assert_same_as_torch(lambda m: (m.bincount(t(m, [True, False, True], "bool")),
                                    m.bincount(i(m, [9999] * 3), t(m, [.5] * 3))))


# -- histc -----------------------------------------------------------------------------------

def test_histc():
    """test_histc: bins < 1, empty input, default min/max (the values' range), one repeated
    value, nothing inside, bin edges, double input, a 0-d input, inf and NaN with and without
    a range, min > max; and against NumPy's histogram through torch's own answers."""
    assert_same_as_torch(lambda m: m.histc(t(m, [1]), bins=-1))
    assert_same_as_torch(lambda m: m.histc(m.tensor([]), min=0, max=3))
    assert_same_as_torch(lambda m: (m.histc(t(m, [2, 5])), m.histc(m.ones(5), bins=5),
                                    m.histc(m.ones(5), bins=5, min=2, max=3),
                                    m.histc(t(m, [2, 4, 2, 2, 5, 4]), bins=5, min=1, max=5),
                                    m.histc(t(m, [1, 2, 1]), bins=4, min=0, max=3),
                                    m.histc(t(m, [1, 2, 1], "float64"), bins=4, min=0, max=3),
                                    m.histc(t(m, 0), bins=1, min=0, max=3)))
    assert_same_as_torch(lambda m: (m.histc(t(m, [INF]), bins=1, min=0, max=3),
                                    m.histc(t(m, [1., 2., INF]), bins=4, max=3),
                                    m.histc(t(m, [1., 2., NAN]), bins=4, max=3)))
    assert_same_as_torch(lambda m: m.histc(t(m, [NAN])))
    assert_same_as_torch(lambda m: m.histc(t(m, [1., 2., INF])))
    assert_same_as_torch(lambda m: m.histc(t(m, [1., 2., 3.]), bins=4, min=5, max=1))
    x = RNG.standard_normal(5000)
    assert_same_as_torch(lambda m: (m.histc(t(m, x)), m.histc(t(m, x[:301]), bins=10),
                                    m.histc(t(m, x[:201]), min=0.1, max=1),
                                    m.histc(t(m, x[:300]).reshape(3, 5, 20)),
                                    m.histc(t(m, x[:300]).reshape(100, 3)[:, 2]),
                                    m.histc(m.linspace(0, 0.99 - 5.0e-7, 101), bins=20, min=0,
                                            max=0.99)))


def test_histc_of_an_infinite_range_is_refused():
    """torch prints the widened edges of an all-inf input as [3.40282e+38, inf] (its aminmax
    starts from the largest finite float); gradkit prints [inf, inf]: both refuse the range."""
    for m in (torch, gradkit):
        for values in ([INF], [-INF], [-INF, INF]):
            with pytest.raises(RuntimeError, match=r"range of \[[\w,+\-\.\ ]+\] is not finite"):
                m.histc(t(m, values))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "float32", "float64",
                                   "float16"])
def test_histc_range_is_checked_before_the_dtype(dtype):
    """test_histc_min_max_errors, test_histc_min_max_corner_cases, test_histc_lowp (torch's CPU
    histc has no integer kernel)."""
    assert_same_as_torch(lambda m: m.histc(t(m, [1., 2., 3.], dtype), bins=4, min=5, max=1))
    assert_same_as_torch(lambda m: m.histc(t(m, [1., 2., 1.], dtype), bins=4, min=0, max=3))
    assert_same_as_torch(lambda m: m.histc(t(m, [1., 2., 1.], dtype), bins=4, min=5, max=5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_of_the_extreme_floats_counts_every_value(dtype):
    """test_histc_value_corner_cases: widening min == max by 1 is lost in rounding, so torch
    widens by a step of the dtype towards its limits (bins_edges_correction): the values land
    in the first or last bin, in both."""
    info = np.finfo(dtype)
    for value in (info.min, info.max):
        assert_same_as_torch(lambda m, value=value: m.histc(
            m.full((3,), float(value), dtype=getattr(m, dtype)), bins=4))


# -- histogram and histogramdd ---------------------------------------------------------------

HISTOGRAM_SHAPES = [(), (0,), (1,), (1, 5), (3, 5), (2, 3, 5)]


@pytest.mark.parametrize("shape", HISTOGRAM_SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [False, True])
def test_histogram(shape, weighted, density):
    """test_histogram: bin counts, a range (also of zero width), given edges, all values
    equal, the input equal to the edges; weights of the input's shape."""
    values = RNG.uniform(-9, 9, shape)
    weights = RNG.uniform(0, 9, shape)
    for bins in (1, 3, 7):
        edges = np.sort(RNG.uniform(-9, 9, bins + 1))

        def kwargs(m, weights=weights):
            return {"density": density, **({"weight": t(m, weights)} if weighted else {})}
        assert_same_as_torch(lambda m, b=bins: tuple(m.histogram(t(m, values), b, **kwargs(m))),
                             rtol=1e-5)
        for bounds in ((-3.0, 4.0), (2.0, 2.0)):
            assert_same_as_torch(lambda m, b=bins, r=bounds: tuple(
                m.histogram(t(m, values), b, range=r, **kwargs(m))), rtol=3e-5)
        assert_same_as_torch(lambda m, e=edges: tuple(m.histogram(t(m, values), t(m, e),
                                                                  **kwargs(m))), rtol=1e-5)
        assert_same_as_torch(lambda m, b=bins: tuple(m.histogram(m.full(shape, 1.5), b,
                                                                 **kwargs(m))), rtol=1e-5)
        edge_weights = RNG.uniform(0, 9, bins + 1)
        assert_same_as_torch(lambda m, e=edges, w=edge_weights: tuple(m.histogram(
            t(m, e), t(m, e), **kwargs(m, w))), rtol=1e-5)
    assert_same_as_torch(lambda m: tuple(m.histogram(t(m, values), 3, range=None, weight=None,
                                                     density=False)))


def test_histogram_takes_a_weight_of_any_shape_with_one_per_value():
    """torch reads the weights flat: as many as the values, in any shape."""
    values = RNG.uniform(0, 1, (2, 3))
    assert_same_as_torch(lambda m: tuple(m.histogram(t(m, values), 3, weight=m.ones(3, 2))))
    assert_same_as_torch(lambda m: tuple(m.histogram(m.ones(2, 2), 1, weight=m.ones(1))))


HISTOGRAM_ERRORS = {
    "int input": lambda m: m.histogram(t(m, 1, "int32"), 1),
    "bins dtype": lambda m: m.histogram(t(m, 1), t(m, [0., 1.], "float64")),
    "weight dtype": lambda m: m.histogram(t(m, 1), 1, weight=t(m, 1, "float64")),
    "weight dtype first": lambda m: m.histogram(m.ones(2, 2), 1, weight=t(m, [1], "float64")),
    "2-d bins": lambda m: m.histogram(m.ones(2, 2), m.ones(2, 2)),
    "empty bins": lambda m: m.histogram(m.ones(0), m.ones(0)),
    "one edge": lambda m: m.histogram(m.ones(3), m.ones(1)),
    "bins < 1": lambda m: m.histogram(t(m, 1), -1),
    "weight shape": lambda m: m.histogram(m.ones(2, 2), 1, weight=m.ones(1)),
    "min > max": lambda m: m.histogram(t(m, 1), 2, range=(1, 0)),
    "nan range": lambda m: m.histogram(t(m, [NAN]), 2),
}


@pytest.mark.parametrize("case", sorted(HISTOGRAM_ERRORS))
def test_histogram_errors(case):
    """test_histogram_error_handling."""
    assert_same_as_torch(HISTOGRAM_ERRORS[case])


def test_histogram_with_edges_takes_no_range():
    """test_histogram_error_handling: edges and a range match none of torch's overloads."""
    for m in (torch, gradkit):
        with pytest.raises(TypeError, match="received an invalid combination of arguments"):
            m.histogram(t(m, [0.5]), t(m, [0., 1.]), range=(0, 1))


@pytest.mark.parametrize("shape", [(1, 5), (3, 5), (1, 5, 1), (2, 3, 5), (7, 0, 3), (5, 0),
                                   (10, 2)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [False, True])
def test_histogramdd(shape, weighted, density):
    """test_histogramdd: one count, a count per dimension, ranges (also of zero width), given
    edges; a last dim of 0 gives a 0-d histogram (0, NaN with density) and no edges."""
    values = RNG.uniform(-9, 9, shape)
    weights = RNG.uniform(0, 9, shape[:-1])
    d = shape[-1]
    counts = [int(c) for c in RNG.integers(1, 5, d)]
    bounds = [float(b) for pair in (sorted(RNG.uniform(-9, 9, 2)) for _ in range(d))
              for b in pair]
    flat_bounds = [b for k in range(d) for b in (bounds[2 * k], bounds[2 * k])]
    edges = [np.sort(RNG.uniform(-9, 9, c + 1)) for c in counts]

    def run(m, bins, **extra):
        weight = {"weight": t(m, weights)} if weighted else {}
        hist, bin_edges = m.histogramdd(t(m, values), bins, density=density, **weight, **extra)
        return (hist, *bin_edges)
    assert_same_as_torch(lambda m: run(m, 3), rtol=1e-5)
    if d:
        assert_same_as_torch(lambda m: run(m, counts), rtol=1e-5)
        assert_same_as_torch(lambda m: run(m, counts, range=bounds), rtol=1e-5)
        assert_same_as_torch(lambda m: run(m, counts, range=flat_bounds), rtol=1e-5)
        assert_same_as_torch(lambda m: run(m, [t(m, e) for e in edges]), rtol=1e-5)


# -- quantile and nanquantile ----------------------------------------------------------------

QUANTILE_INPUTS = {"1-d": RNG.standard_normal(3), "2-d": RNG.standard_normal((4, 5)),
                   "3-d": RNG.standard_normal((2, 3, 4)), "0-d": np.array(0.75),
                   "nan": np.array([NAN]), "nan row": np.array([[NAN, NAN], [1, 2]]),
                   "mostly nan": np.array([[NAN, NAN], [NAN, 2]])}
QUANTILE_INPUTS["2-d"][0, 1] = QUANTILE_INPUTS["3-d"][1, 0, 2] = NAN


@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
@pytest.mark.parametrize("name", sorted(QUANTILE_INPUTS))
@pytest.mark.parametrize("q", [0.5, [0.0, 1.0], [0.1, 0.7, 0.3], []])
def test_quantile(op, name, q):
    """test_quantile: every interpolation, every dim and None, keepdim, NaN (propagated by
    quantile, skipped by nanquantile), q a number or a 1-d tensor."""
    x = QUANTILE_INPUTS[name]
    for interpolation in ("linear", "lower", "higher", "midpoint", "nearest"):
        for dim in [None, *range(x.ndim)]:
            for keepdim in (False, True):
                assert_same_as_torch(lambda m, a=interpolation, d=dim, k=keepdim: getattr(m, op)(
                    t(m, x, "float64"), q if isinstance(q, float) else t(m, q, "float64"),
                    dim=d, keepdim=k, interpolation=a))


@pytest.mark.parametrize("values,q,dim", [([1., 2, 3], 0.5, 0), ([1., 2, 3, 4], 0.5, 0),
                                          ([3., 1, 4, 2], 0.5, 0),
                                          ([1., 2, 3, 4], [0.25, 0.5, 0.75], 0),
                                          ([[1., 2], [2, 1]], 0., 0), ([[1., 2], [4, 3]], 1., 1),
                                          ([1, NAN, 2], 0.5, 0)])
def test_quantile_backward(values, q, dim):
    """test_quantile_backward."""
    for op in ("quantile", "nanquantile"):
        assert_same_as_torch(with_grads(lambda m, x, op=op: getattr(m, op)(
            x, m.tensor(q, dtype=m.float64), dim).sum(), np.array(values)))


QUANTILE_ERRORS = {
    "empty": ([], 0.5, (), {}), "2-d q": ([1.], [[1.]], (), {}), "int input": ([1], 0.5, (), {}),
    "q dtype": ([1.], [1], (), {}), "q < 0": ([1.], -1., (), {}), "q > 1": ([1.], 1.1, (), {}),
    "interpolation": ([1.], [1.], (None, False), {"interpolation": "random_mode"}),
    "q values": ([1.], [0.5, 1.1, -1], (), {}),
}


@pytest.mark.parametrize("case", sorted(QUANTILE_ERRORS))
def test_quantile_errors(case):
    """test_quantile_error."""
    values, q, args, kwargs = QUANTILE_ERRORS[case]
    assert_same_as_torch(lambda m: m.quantile(m.tensor(values), m.tensor(q) if isinstance(
        q, list) else q, *args, **kwargs))


# -- bucketize and searchsorted --------------------------------------------------------------

VALUES_3D = [[[1, 3, 5], [2, 4, 6]], [[1, 2, 3], [4, 5, 6]]]


def test_bucketize_and_searchsorted():
    """test_bucketization: right=, out_int32=, empty values, NaN (after everything), mixed
    dtypes and non-contiguous inputs, numbers as values, side=."""
    b = [1, 2, 3, 4, 5, 6]
    assert_same_as_torch(lambda m: (m.bucketize(i(m, VALUES_3D), i(m, b)),
                                    m.bucketize(i(m, VALUES_3D), i(m, b), right=True)))
    for dtype in ("float32", "float16"):
        edges = [0.9, 1, 2, 2, 3, 3, 4, 4.1, 9, 9]
        assert_same_as_torch(lambda m, d=dtype, e=edges: (
            m.searchsorted(t(m, e, d), t(m, np.arange(1, 10), d), out_int32=True),
            m.bucketize(t(m, np.arange(1, 10), d), t(m, e, d), out_int32=True)))
    assert_same_as_torch(lambda m: (m.searchsorted(i(m, b), m.tensor([[[]]], dtype=m.int64)),
                                    m.bucketize(m.tensor([[[]]], dtype=m.int64), i(m, b))))
    nans = [1.0, NAN, 2.0, NAN]
    assert_same_as_torch(lambda m: (
        m.searchsorted(t(m, [0., 1, 2, 3], "float64"), t(m, nans, "float64")),
        m.searchsorted(t(m, [0., 1, 2, 3], "float64"), t(m, nans, "float64"), right=True),
        m.searchsorted(t(m, [0., 1, 2, 3], "float64"), t(m, nans, "float64"), side="right")))
    assert_same_as_torch(lambda m: m.searchsorted(i(m, VALUES_3D).permute(2, 1, 0).double(),
                                                  i(m, VALUES_3D).permute(2, 1, 0).int()))
    assert_same_as_torch(lambda m: (m.searchsorted(t(m, [1.5, 2.5, 3.5]), 2),
                                    m.bucketize(i(m, 2), t(m, [1.5, 2.5, 3.5])),
                                    m.searchsorted(t(m, [1.5, 2.5, 3.5]), t(m, NAN)),
                                    m.bucketize(NAN, t(m, [1.5, 2.5, 3.5]), right=True)))


SEARCH_ERRORS = {
    "first dims": lambda m: m.searchsorted(i(m, [[1, 2, 3], [4, 5, 6]]), i(m, VALUES_3D)),
    "bucketize 2-d": lambda m: m.bucketize(i(m, VALUES_3D), i(m, [[1, 2, 3], [4, 5, 6]])),
    "number, 2-d": lambda m: m.searchsorted(i(m, [[1, 2, 3], [4, 5, 6]]), 1),
    "side": lambda m: m.searchsorted(i(m, [1, 2]), i(m, [1, 2]), side="bad"),
    "sorter size": lambda m: m.searchsorted(t(m, np.arange(9.)), i(m, [1, 2]),
                                            sorter=i(m, np.arange(8))),
    "sorter dtype": lambda m: m.searchsorted(t(m, np.arange(9.)), i(m, [1, 2]),
                                             sorter=t(m, np.arange(9))),
    "sorter int32": lambda m: m.searchsorted(t(m, np.arange(9.)), i(m, [1, 2]),
                                             sorter=t(m, np.arange(9), "int32")),
    "sorter above": lambda m: m.searchsorted(i(m, [1, 2, 3]), 2.5, sorter=i(m, [0, 1, 3])),
    "sorter below": lambda m: m.searchsorted(i(m, [1, 2, 3]), 2.5, sorter=i(m, [-1, 1, 2])),
}


@pytest.mark.parametrize("case", sorted(SEARCH_ERRORS))
def test_searchsorted_errors(case):
    """test_bucketization's refusals (out= and bfloat16 ones aside)."""
    assert_same_as_torch(SEARCH_ERRORS[case])


# -- logcumsumexp of complex numbers ---------------------------------------------------------

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_logcumsumexp_of_complex_numbers(dtype):
    """test_logcumsumexp_complex: random values, large ones, and the inf/NaN table."""
    x = RNG.standard_normal((5, 10)) + 1j * RNG.standard_normal((5, 10))
    assert_same_as_torch(lambda m: (m.logcumsumexp(t(m, x, dtype), 0),
                                    m.logcumsumexp(t(m, x, dtype), 1)), rtol=1e-4)
    assert_same_as_torch(lambda m: m.logcumsumexp(t(m, [1e3 + 0j, 1e-18 + 1e4j, 1e2 + 1e-8j],
                                                    dtype), 0), rtol=1e-4)
    specials = [[-INF + 4j, -INF + 1j, 1.2 + 2.1j, 1e10 + 1e20j, INF + 0j, INF + 1j, INF + 3j,
                 NAN + 2j],
                [complex(-INF, INF), complex(-INF, INF), -INF + 1j, 1.2 + 2.1j,
                 complex(2.4, INF)]]
    for row in specials:
        assert_same_as_torch(lambda m, r=row: m.logcumsumexp(t(m, r, dtype), 0), rtol=1e-4)
