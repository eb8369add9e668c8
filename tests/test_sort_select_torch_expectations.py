"""torch's test/test_sort_and_select.py (TestSortAndSelect), re-run as programs under torch 2.13
and gradkit: same values, indices, dtypes, shapes, gradients, or the same error.

Each test names the torch test it covers. Out of scope (see docs/torch_expectations.md, "Sort
and select"): out=, quantized and bfloat16 inputs, CUDA-only paths and sizes.
"""
import itertools

import numpy as np
import pytest
from expectation_programs import INTEGRAL, made, same, sample
from test_torch_numerics import with_grads

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

FLOATS = ["float16", "float32", "float64"]
REAL = INTEGRAL + FLOATS


def rng(offset: int = 0) -> np.random.Generator:
    return np.random.default_rng(20261206 + offset)


def is_ordered(values: np.ndarray, descending: bool) -> bool:
    """torch's assertIsOrdered: NaNs last ascending, first descending."""
    a, b = values[..., :-1], values[..., 1:]
    return bool(np.all((a != a) | (a >= b)) if descending else np.all((b != b) | (a <= b)))


# -- sort, argsort, msort ----------------------------------------------------------------------

def same_values_read_at_indices(program, x: np.ndarray, dim: int = -1) -> None:
    """Ties: torch leaves the order of equal elements to the kernel (its tests read the input at
    the indices instead), so values are torch's and gradkit's indices read them."""
    same(lambda m: program(m)[0])
    values, indices = program(gradkit)
    np.testing.assert_array_equal(np.take_along_axis(x, indices.numpy(), dim), values.numpy())


@pytest.mark.parametrize("size", [4, 2049])
def test_sort(size):
    """test_sort (without out=): ascending and descending, duplicate keys, NaNs, argsort."""
    x = rng().random((4, size)).astype(np.float32)
    keys = np.floor(rng(1).random((4, size)) * 10).astype(np.float32)
    nans = x.copy()
    nans[1, 2] = nans[3, 0] = np.nan
    for data in (x, nans):
        same(lambda m, d=data: (m.sort(made(m, d, "float32")), m.argsort(made(m, d, "float32")),
                                made(m, d, "float32").argsort(),
                                m.sort(made(m, d, "float32"), 1, True),
                                m.argsort(made(m, d, "float32"), 1, True),
                                made(m, d, "float32").sort(descending=True)))
    for data, descending in itertools.product((x, keys, nans), (False, True)):
        same_values_read_at_indices(lambda m, d=data, up=descending:
                                    m.sort(made(m, d, "float32"), descending=up), data)
        values, indices = gradkit.sort(made(gradkit, data, "float32"), descending=descending)
        assert is_ordered(values.numpy(), descending)
        assert (gradkit.argsort(made(gradkit, data, "float32"), descending=descending) ==
                indices).all()
    same(lambda m: [m.sort(made(m, keys, "float32"), stable=True, descending=d)
                    for d in (False, True)])
    same(lambda m: (m.sort(m.tensor((50, 40, 30, 20, 10))), m.sort(m.tensor((10, 20, 30)), 0,
                                                                    True)))
    ties = np.array([1, 10, 2, 2, 3, 7, 7, 8, 9, 9] * 3)
    same(lambda m: (m.argsort(m.tensor(ties), stable=True), m.sort(m.tensor(ties), stable=True)))
    for stable in (False, None):
        same_values_read_at_indices(lambda m, s=stable: m.sort(m.tensor(ties), stable=s), ties)
        assert (gradkit.argsort(gradkit.tensor(ties), stable=bool(stable)) ==
                gradkit.sort(gradkit.tensor(ties), stable=stable).indices).all()


def test_sort_stable_none():
    """test_sort_stable_none."""
    same(lambda m: m.ones(10).sort(stable=None))


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("copies", [100, 1000, 10000])
def test_stable_sort(dtype, copies):
    """test_stable_sort: equal keys keep their order."""
    pattern = np.array([0, 1] * copies)
    same(lambda m: made(m, pattern, dtype).sort(stable=True))
    indices = made(gradkit, pattern, dtype).sort(stable=True).indices.numpy()
    np.testing.assert_array_equal(indices, np.r_[0:2 * copies:2, 1:2 * copies:2])


@pytest.mark.parametrize("shape", list(itertools.permutations((5, 7, 65))))
def test_sort_discontiguous(shape):
    """test_sort_discontiguous_slow (its last size 2049 cut to 65): permuted inputs sort as
    their contiguous copies, along every dim."""
    x = rng().standard_normal(shape).astype(np.float32)
    for perm in itertools.permutations(range(3)):
        same(lambda m, p=perm: [made(m, x, "float32").permute(p).sort(dim=d) for d in range(3)] +
             [made(m, x, "float32").permute(p).contiguous().sort(dim=d) for d in range(3)])


@pytest.mark.parametrize("dtype", INTEGRAL)
def test_sort_1d_parallel(dtype):
    """test_sort_1d_parallel: 100,000 small integers sorted stably."""
    x = rng().integers(0 if dtype == "uint8" else -128, 127, 100000)
    same(lambda m: m.sort(made(m, x, dtype), stable=True))


def _stable_samples(dtype: str):
    """test_stable_sort_against_numpy's samples: 0/1 strings, then small tensors with inf,
    -inf and NaN (the integer extremes for integers) written at random places."""
    if dtype in FLOATS:
        high, low, nan = np.inf, -np.inf, np.nan
    else:
        info = np.iinfo(dtype)
        high, low, nan = info.max, info.min, info.max
    for size in (1025, 10000, 100):
        yield np.array([0, 1] * size).astype(dtype), 0
    generator = rng()
    for sizes in [(1, 10), (10, 1), (10, 10), (10, 10, 10)]:
        size = min(sizes)
        x = (generator.standard_normal(sizes) * size).astype(dtype)
        yield x, 0
        for dim in range(len(sizes)):
            places = [generator.integers(0, size, size // 10) for _ in range(3)]
            fills = list(zip(places, (high, low, nan)))
            for r in (1, 2, 3):
                for subset in itertools.combinations(fills, r):
                    y = x.copy()
                    for where, value in subset:
                        np.moveaxis(y, dim, 0)[where] = value
                    yield y, dim


@pytest.mark.parametrize("dtype", REAL)
def test_stable_sort_against_numpy(dtype):
    """test_stable_sort_against_numpy: NumPy's stable argsort, and torch's."""
    for x, dim in _stable_samples(dtype):
        got = made(gradkit, x, dtype).sort(dim=dim, stable=True).indices.numpy()
        np.testing.assert_array_equal(got, np.argsort(x, axis=dim, kind="stable"))
        same(lambda m, x=x, dim=dim: made(m, x, dtype).sort(dim=dim, stable=True))


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("shape", [(), (0,), (20,), (1, 20), (30, 30), (10, 20, 30)])
def test_msort(dtype, shape):
    """test_msort (without out=): the sort along dim 0."""
    x = rng().integers(-9 if dtype != "uint8" else 0, 9, shape)
    same(lambda m: m.msort(made(m, x, dtype)))
    if shape:
        np.testing.assert_array_equal(gradkit.msort(made(gradkit, x, dtype)).numpy(),
                                      np.sort(x, axis=0))


def test_sort_expanded_tensor():
    """test_sort_expanded_tensor: expanded inputs sort as their contiguous copies."""
    same(lambda m: m.sort(m.scalar_tensor(True).expand([1, 1, 1]), stable=True, dim=1,
                          descending=True))
    x = rng().standard_normal((4, 1, 10)).astype(np.float32)
    same(lambda m: (m.sort(made(m, x, "float32").expand([4, 8, 10]), stable=True, dim=1,
                           descending=True),
                    m.sort(made(m, x, "float32").expand([4, 8, 10]).contiguous(), stable=True,
                           dim=1, descending=True)))


@pytest.mark.parametrize("dtype", ["bool", "int64", "float64", "float16"])
def test_sort_of_0d_empty_and_bool_tensors(dtype):
    """A 0-d tensor sorts to itself with index 0; empty dims sort to empty results; bools
    sort False first; dim out of range is torch's IndexError."""
    x = sample(rng(), (3, 4), dtype)
    same(lambda m: (made(m, np.array(x.flat[0]), dtype).sort(),
                    made(m, np.array(x.flat[0]), dtype).sort(dim=-1, descending=True),
                    made(m, np.array(x.flat[0]), dtype).argsort(),
                    made(m, x[:0], dtype).sort(0), made(m, x[:, :0], dtype).sort(),
                    made(m, x, dtype).sort(stable=True),
                    made(m, x, dtype).sort(dim=0, descending=True, stable=True)))
    same(lambda m: made(m, x, dtype).sort(2))
    same(lambda m: made(m, np.array(x.flat[0]), dtype).sort(1))


def test_sort_and_argsort_gradients():
    x = rng().standard_normal((3, 5))
    seed = rng(1).standard_normal((3, 5))
    same(with_grads(lambda m, a: m.sort(a, 0, descending=True).values, x, seed=seed))
    same(with_grads(lambda m, a: m.msort(a) * m.sort(a, stable=True).values, x), rtol=1e-12)
    a = gradkit.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: v.sort(1).values, (a,))
    assert gradgradcheck(lambda v: v.sort(0, True).values ** 2, (a,))
    assert not gradkit.argsort(a).requires_grad


# -- topk --------------------------------------------------------------------------------------

@pytest.mark.parametrize("transpose", [None, (0, 1), (2, 0)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(transpose, largest):
    """test_topk: the first k of the sort, for every dim, k and transposed input; the large
    k on the long dim."""
    x = rng().random((13, 29, 17)).astype(np.float32)
    view = (lambda v: v) if transpose is None else (lambda v: v.transpose(*transpose))
    for dim, k in itertools.product(range(3), (1, 5, 13)):
        same(lambda m, d=dim, k=k: (view(made(m, x, "float32")).topk(k, d, largest, True),
                                    view(made(m, x, "float32")).sort(d, largest)))
    wide = rng(1).standard_normal((2, 10000)).astype(np.float32)
    same(lambda m: m.topk(made(m, wide, "float32"), 2000, 1, largest))


def test_topk_arguments():
    """test_topk_arguments: True is not taken as dim 1."""
    same(lambda m: m.ones(10, 2, 10).topk(4, True))
    with pytest.raises(TypeError):
        gradkit.ones(10, 2, 10).topk(4, True)


@pytest.mark.parametrize("dtype", INTEGRAL)
@pytest.mark.parametrize("size", [10, 4096, 8192])
def test_topk_integral(dtype, size):
    """test_topk_integral: the top half is the sort's last half reversed; indices read it."""
    info = np.iinfo(dtype)
    x = rng().integers(info.min, info.max, size, dtype=np.int64)
    values = gradkit.topk(made(gradkit, x, dtype), size // 2).values
    np.testing.assert_array_equal(values.numpy(), np.sort(x)[-(size // 2):][::-1])
    same_values_read_at_indices(lambda m: m.topk(made(m, x, dtype), size // 2), x)


@pytest.mark.parametrize("size", [10, 4096, 8192])
def test_topk_lower_precision(size):
    """test_topk_lower_precision (float16; bfloat16 out of scope)."""
    x = rng().standard_normal(size).astype(np.float16)
    same_values_read_at_indices(lambda m: m.topk(made(m, x, "float16"), size // 2), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_topk_nonfinite(dtype):
    """test_topk_nonfinite: NaN is the largest, then inf."""
    x = np.array([np.nan, np.inf, 1e4, 0, -1e4, -np.inf])
    same(lambda m: (made(m, x, dtype).topk(4), made(m, x, dtype).topk(4, largest=False),
                    made(m, x, dtype).topk(6, sorted=True)))
    np.testing.assert_array_equal(made(gradkit, x, dtype).topk(4).indices.numpy(), [0, 1, 2, 3])


@pytest.mark.parametrize("size", [128, 8192])
def test_topk_4d(size):
    """test_topk_4d."""
    def program(m):
        x = m.ones(2, size, 2, 2)
        x[:, 1, :, :] *= 2.0
        x[:, 10, :, :] *= 1.5
        return m.topk(x, k=2, dim=1)
    same(program)
    values, indices = program(gradkit)
    assert (indices[:, 0] == 1).all() and (indices[:, 1] == 10).all()


@pytest.mark.parametrize("dtype", REAL)
def test_topk_zero(dtype):
    """test_topk_zero: k=0 gives empty results of the right size."""
    x = sample(rng(), (2, 2), dtype)
    same(lambda m: m.topk(made(m, x, dtype), k=0, largest=False))
    assert gradkit.topk(made(gradkit, x, dtype), k=0).values.shape == (2, 0)


@pytest.mark.parametrize("call", [lambda x: x.topk(4), lambda x: x.topk(-1),
                                  lambda x: x.topk(1, dim=2), lambda x: x[0, 0].topk(2),
                                  lambda x: x[0, 0].topk(1), lambda x: x[:, :0].topk(1),
                                  lambda x: x[:, :0].topk(0), lambda x: x.topk(3, 0, sorted=False)])
def test_topk_k_out_of_range_and_0d(call):
    """k larger than the dim, negative k, a bad dim, a 0-d input: torch's errors or values."""
    x = rng().standard_normal((3, 3))
    same(lambda m: call(made(m, x, "float32")))


def test_topk_noncontiguous():
    """test_topk_noncontiguous_gpu's program on the CPU: strided input, contiguous answer."""
    x = rng().standard_normal(20000).astype(np.float32)
    same(lambda m: [made(m, x, "float32")[::2].topk(k) for k in (5, 2000)] +
         [made(m, x, "float32")[::2].contiguous().topk(k) for k in (5, 2000)])


def test_topk_gradient():
    x = rng().standard_normal((4, 6))
    seed = rng(1).standard_normal((4, 3))
    same(with_grads(lambda m, a: m.topk(a, 3).values, x, seed=seed))
    same(with_grads(lambda m, a: m.topk(a, 2, 0, largest=False).values ** 2, x))
    a = gradkit.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: v.topk(3).values, (a,))
    assert gradgradcheck(lambda v: v.topk(2, 0).values ** 2, (a,))


# -- kthvalue ----------------------------------------------------------------------------------

def test_kthvalue():
    """test_kthvalue (without out=): the k-th of the sort, other dims, non-contiguous inputs,
    repeated values, NaNs (sorted last)."""
    x = rng().random((20, 20, 20))
    same(lambda m: [m.kthvalue(made(m, x, "float64"), k, keepdim=False) for k in (1, 7, 20)] +
         [m.sort(made(m, x, "float64"))])
    same(lambda m: (m.kthvalue(made(m, x, "float64"), 4, 0), m.sort(made(m, x, "float64"), 0)))
    same(lambda m: (m.kthvalue(made(m, x, "float64").narrow(1, 0, 1), 5),
                    m.kthvalue(made(m, x, "float64").narrow(1, 0, 1).contiguous(), 5)))
    same(lambda m: made(m, np.array([0, -1, 1, -2, 2]), "float64")[::2].kthvalue(2))
    same(lambda m: [made(m, np.array([3.0, 5, 4, 1, 1, 5]), "float64").kthvalue(k)
                    for k in (2, 3, 6)])
    nans = x.copy()
    nans[np.arange(20), :, rng(1).integers(0, 20, 20)] = np.nan
    same(lambda m: [m.kthvalue(made(m, nans, "float64"), k) for k in (9, 1, 20, 19)])
    values = gradkit.kthvalue(made(gradkit, nans, "float64"), 19).values.numpy()
    np.testing.assert_array_equal(values, np.sort(nans)[..., 18])


def test_kthvalue_scalar():
    """test_kthvalue_scalar: a 0-d tensor and its 1-element twin."""
    same(lambda m: (m.tensor(2.0).kthvalue(1), m.tensor([2.0]).kthvalue(1),
                    m.tensor(2.0).kthvalue(1, 0, True)))


@pytest.mark.parametrize("call", [lambda x: x.kthvalue(0), lambda x: x.kthvalue(5),
                                  lambda x: x.kthvalue(1, 2), lambda x: x[:, :0].kthvalue(1),
                                  lambda x: x[0, 0].kthvalue(2), lambda x: x.kthvalue(-1)])
def test_kthvalue_errors(call):
    """k out of range (the selected dim's size in torch's words), a bad dim."""
    same(lambda m: call(made(m, rng().standard_normal((3, 4)), "float32")))


def test_kthvalue_gradient():
    x = rng().standard_normal((3, 5))
    same(with_grads(lambda m, a: m.kthvalue(a, 2, 1, keepdim=True).values, x))
    a = gradkit.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: v.kthvalue(3, 0).values, (a,))
    assert gradgradcheck(lambda v: v.kthvalue(2).values ** 2, (a,))


# -- unique, unique_consecutive ----------------------------------------------------------------

UNIQUE_X = np.array([[[1.0, 1.0], [0.0, 1.0], [2.0, 1.0], [0.0, 1.0]],
                     [[1.0, 1.0], [0.0, 1.0], [2.0, 1.0], [0.0, 1.0]]])
CONSECUTIVE_Y = np.array([[0, 1], [0, 1], [0, 1], [1, 2], [1, 2], [3, 4], [0, 1], [0, 1],
                          [3, 4], [1, 2]])
NAN_X = np.array([np.nan, 0, 0, np.nan, np.nan, 1])
FOUR_D = np.array([[[[1, 0, 1, 0, 1, 1], [0, 1, 1, 0, 1, 1]],
                    [[0, 1, 1, 0, 0, 1], [0, 0, 0, 1, 0, 0]]],
                   [[[0, 1, 0, 1, 1, 1], [0, 1, 1, 0, 1, 1]],
                    [[0, 0, 1, 1, 0, 1], [1, 1, 0, 0, 0, 0]]]])
FLAGS = list(itertools.product((False, True), repeat=2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "float16"])
def test_unique_dim(dtype):
    """test_unique_dim: unique slices along each dim with inverse and counts, empty and
    ill-formed empty inputs, NaN (never equal), unique_consecutive along a dim, NumPy's order
    for a 4-d tensor."""
    assert not hasattr(gradkit, "unique_dim")
    for dim, (inverse, counts) in itertools.product((0, 1, 2, -1), FLAGS):
        same(lambda m, d=dim, i=inverse, c=counts: m.unique(
            made(m, UNIQUE_X, dtype), return_inverse=i, return_counts=c, dim=d))
    same(lambda m: m.unique(m.empty(5, 0, dtype=getattr(m, dtype)), return_inverse=True,
                            return_counts=True, dim=1))
    same(lambda m: m.unique(m.empty(5, 0, 0, dtype=getattr(m, dtype)), return_inverse=True,
                            return_counts=True, dim=1))
    same(lambda m: m.unique(m.empty(5, 0, 5, dtype=getattr(m, dtype)), return_inverse=True,
                            return_counts=True, dim=2))
    same(lambda m: m.unique_consecutive(made(m, CONSECUTIVE_Y, dtype), return_inverse=True,
                                        return_counts=True, dim=0))
    if dtype.startswith("float"):
        same(lambda m: (m.unique(made(m, NAN_X, dtype), return_inverse=True, return_counts=True,
                                 dim=0),
                        m.unique_consecutive(made(m, NAN_X, dtype), return_inverse=True,
                                             return_counts=True, dim=0)))
    for d in range(4):
        same(lambda m, d=d: m.unique(made(m, FOUR_D, dtype), dim=d))
        np.testing.assert_array_equal(gradkit.unique(made(gradkit, FOUR_D, dtype), dim=d).numpy(),
                                      np.unique(FOUR_D.astype(dtype), axis=d))


UNIQUE_CALLS = {
    "sorted": lambda m, x, **k: m.unique(x, sorted=True, **k),
    "method sorted": lambda m, x, **k: x.unique(sorted=True, **k),
    "consecutive": lambda m, x, **k: m.unique_consecutive(x, **k),
    "method consecutive": lambda m, x, **k: x.unique_consecutive(**k),
}
UNIQUE_DTYPES = INTEGRAL + FLOATS + ["bool"]


def _unique_input(dtype: str, consecutive: bool) -> np.ndarray:
    if dtype == "bool":
        return np.array([1, 0, 0, 0, 1, 1, 0, 0, 0] if consecutive else [1, 0, 0, 0, 1, 0, 1, 0])
    return np.array([1, 2, 2, 2, 5, 5, 2, 2, 3] if consecutive else [1, 2, 3, 2, 8, 5, 2, 3])


@pytest.mark.parametrize("dtype", UNIQUE_DTYPES)
@pytest.mark.parametrize("name", sorted(UNIQUE_CALLS))
def test_unique_and_unique_consecutive(dtype, name):
    """test_unique (sorted), test_unique_consecutive: each flag pair, a strided input, the same
    elements viewed with more dims, a 0-d tensor and a (0, 0, 3) one."""
    call = UNIQUE_CALLS[name]
    x = _unique_input(dtype, "consecutive" in name)
    shape = (3, 3) if "consecutive" in name else (2, 2, 2)

    def strided(m):
        return m.empty(2 * len(x), dtype=getattr(m, dtype))[::2].copy_(made(m, x, dtype))
    for inverse, counts in FLAGS:
        same(lambda m, i=inverse, c=counts: (call(m, made(m, x, dtype), return_inverse=i,
                                                  return_counts=c),
                                             call(m, strided(m), return_inverse=i,
                                                  return_counts=c)))
    same(lambda m: call(m, made(m, x, dtype).view(shape), return_inverse=True,
                        return_counts=True))
    same(lambda m: (call(m, made(m, np.array(0), dtype), return_inverse=True, return_counts=True),
                    call(m, m.zeros((0, 0, 3), dtype=getattr(m, dtype)), return_inverse=True,
                         return_counts=True)))


@pytest.mark.parametrize("dtype", UNIQUE_DTYPES)
def test_unique_unsorted(dtype):
    """test_unique (sorted=False): the same set of values, inverse and counts read them (the
    order is the kernel's; torch's CPU one sorts anyway)."""
    x = _unique_input(dtype, False)
    for inverse, counts in FLAGS:
        same(lambda m, i=inverse, c=counts: m.unique(made(m, x, dtype), sorted=False,
                                                     return_inverse=i, return_counts=c))
    values, inverse, counts = gradkit.unique(made(gradkit, x, dtype), sorted=False,
                                             return_inverse=True, return_counts=True)
    assert sorted(values.tolist()) == sorted(set(x.astype(dtype).tolist()))
    assert [values.tolist()[j] for j in inverse.tolist()] == x.astype(dtype).tolist()
    assert counts.tolist() == [x.astype(dtype).tolist().count(v) for v in values.tolist()]


@pytest.mark.parametrize("call", [
    lambda m, x: m.unique(x, dim=3), lambda m, x: m.unique_consecutive(x, dim=-4),
    lambda m, x: m.unique(x.to(m.complex64)), lambda m, x: m.unique(x.to(m.complex64), dim=0),
    lambda m, x: m.unique_consecutive(x.to(m.complex64)), lambda m, x: m.unique(x[0, 0, 0], dim=0),
    lambda m, x: m.unique(x, return_inverse=True, dim=None)])
def test_unique_errors_and_corners(call):
    """A dim out of range, complex inputs, a 0-d tensor with a dim, dim=None."""
    same(lambda m: call(m, made(m, UNIQUE_X, "float32")))


def test_unique_values_require_grad_as_torch():
    """unique's values require grad as torch's do (their backward raises: no derivative)."""
    def program(m):
        x = made(m, UNIQUE_X, "float64").requires_grad_()
        return [r.requires_grad for r in (m.unique(x), m.unique(x, dim=0),
                                          m.unique_consecutive(x))]
    assert program(gradkit) == program(torch)


# -- isin --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTEGRAL + ["float32", "float64"])
def test_isin(dtype):
    """test_isin: NumPy's isin over multi-dim, 0-d, empty and Python-number operands; NumPy's
    in1d cases with and without assume_unique and invert."""
    a = np.arange(24).reshape(2, 3, 4)
    b = np.array([[10, 20, 30], [0, 1, 3], [11, 22, 33]])
    zero_d, empty = np.array(3), np.array([])
    for first, second in [(a, b), (zero_d, b), (a, zero_d), (zero_d, zero_d), (empty, b),
                          (a, empty), (empty, empty)]:
        same(lambda m, p=first, q=second: m.isin(made(m, p, dtype), made(m, q, dtype)))
        got = gradkit.isin(made(gradkit, first, dtype), made(gradkit, second, dtype)).numpy()
        np.testing.assert_array_equal(got, np.isin(first, second))
    same(lambda m: (m.isin(made(m, a, dtype), 6), m.isin(5, made(m, b, dtype))))
    cases = [([5, 7, 1, 2], [2, 4, 3, 1, 5], True), ([8, 7, 1, 2], [2, 4, 3, 1, 5], True),
             ([4, 7, 1, 8], [2, 4, 3, 1, 5], True),
             ([5, 4, 5, 3, 4, 4, 3, 4, 3, 5, 2, 1, 5, 5], [2, 3, 4], False),
             ([5, 4, 5, 3, 4, 4, 3, 4, 3, 5, 2, 1, 5, 5], [2, 3, 4, 5, 5, 4], False),
             ([5, 7, 1, 2], [2, 4, 3, 1, 5], False), ([5, 7, 1, 1, 2], [2, 4, 3, 3, 1, 5], False),
             ([5, 5], [2, 2], False)]
    for (first, second, unique), mult, invert in itertools.product(cases, (1, 10), (0, 1)):
        same(lambda m, p=first, q=second * mult, u=unique, i=bool(invert): m.isin(
            made(m, np.array(p), dtype), made(m, np.array(q), dtype), assume_unique=u, invert=i))
    for unique, invert in FLAGS:
        same(lambda m, u=unique, i=invert: m.isin(made(m, np.arange(6).reshape(2, 3), dtype),
                                                  made(m, np.arange(3, 30), dtype),
                                                  assume_unique=u, invert=i))


def test_isin_different_dtypes():
    """test_isin_different_dtypes: any two real dtypes."""
    dtypes = INTEGRAL + ["float32", "float64"]
    for first, second, mult, unique in itertools.product(dtypes, dtypes, (1, 10), (False, True)):
        same(lambda m, p=first, q=second, k=mult, u=unique: m.isin(
            made(m, np.array([1, 2, 3]), p), made(m, np.array([3, 4, 5] * k), q),
            assume_unique=u))


@pytest.mark.parametrize("call", [lambda m: m.isin(m.ones(2, dtype=m.complex64), m.ones(2)),
                                  lambda m: m.isin(m.ones(2), m.ones(2, dtype=m.complex64)),
                                  lambda m: m.isin(1, 2), lambda m: m.isin(m.ones(2) > 0, True),
                                  lambda m: m.isin(m.tensor([1.0, float("nan")]), float("nan")),
                                  lambda m: m.isin(m.tensor([1.0, float("nan")]),
                                                   m.tensor([float("nan"), 1.0]))])
def test_isin_errors_and_corners(call):
    """Complex operands, two numbers, bool elements, NaN (never in anything)."""
    same(call)


@pytest.mark.parametrize("dtype", INTEGRAL)
def test_sort_overflow(dtype):
    """test_sort_overflow: 32,768 values with the dtype's maximum sort to two unique values."""
    x = np.full(32768, 0 if dtype == "uint8" else -1)
    x[:100] = np.iinfo(dtype).max
    same(lambda m: made(m, x, dtype).sort().values.unique())
    assert gradkit.unique(made(gradkit, x, dtype).sort().values).shape == (2,)


@pytest.mark.parametrize("dim,kernel", [(None, "_unique2"), (1, "unique_dim")])
def test_unique_backward_raises_naming_torchs_kernel(dim, kernel):
    def program(m):
        x = made(m, UNIQUE_X, "float64").requires_grad_()
        y = m.unique(x, dim=dim)
        name = type(y.grad_fn).__name__
        y.sum().backward()
        return name
    for m in (torch, gradkit):
        with pytest.raises(NotImplementedError, match=f"the derivative for '{kernel}' is not"):
            program(m)
    assert type(gradkit.unique(made(gradkit, UNIQUE_X, "float64").requires_grad_(),
                               dim=dim).grad_fn).__name__ == \
        type(torch.unique(made(torch, UNIQUE_X, "float64").requires_grad_(),
                          dim=dim).grad_fn).__name__


@pytest.mark.parametrize("rows", [3, 16, 40, 200])
def test_unique_dim_keeps_nan_slices_apart_in_torchs_order(rows):
    """NaN never equals NaN along a dim either; the slices come in torch's order (its
    std::sort, with a comparator that finds NaN neither less nor greater)."""
    for seed in range(40):
        x = rng(seed).integers(0, 3, (rows, 2)).astype(float)
        x[rng(seed + 100).random((rows, 2)) < 0.3] = np.nan
        same(lambda m, x=x: m.unique(made(m, x, "float64"), dim=0, return_inverse=True,
                                     return_counts=True))


# -- beyond test_sort_and_select.py: dtypes, refusals and the select ops beside them ----------

M = np.array([[3.0, 1, 2, 1], [0, -1, 5, 5]])
MORE = {
    "sort_bool": lambda m: m.sort(m.tensor([True, False, True, False]), stable=True),
    "argsort_bool": lambda m: m.argsort(m.tensor([True, False, True]), stable=True),
    "sort_complex": lambda m: m.sort(m.ones(2, dtype=m.complex64)),
    "argsort_complex": lambda m: m.argsort(m.ones(2, dtype=m.complex64)),
    "msort_complex": lambda m: m.msort(m.ones(2, dtype=m.complex64)),
    "topk_complex": lambda m: m.topk(m.ones(2, dtype=m.complex64), 1),
    "kthvalue_complex": lambda m: m.kthvalue(m.ones(2, dtype=m.complex64), 1),
    "topk_bool": lambda m: m.topk(m.ones(2, dtype=m.bool), 1),
    "kthvalue_bool": lambda m: m.kthvalue(m.ones(2, dtype=m.bool), 1),
    "kthvalue_dtypes": lambda m: (m.kthvalue(m.tensor(M, dtype=m.float16), 2, 1, True),
                                  m.kthvalue(m.tensor(M, dtype=m.int32), 2, 0),
                                  m.kthvalue(m.tensor(np.abs(M), dtype=m.uint8), 1)),
    "sort_dim_out_of_range": lambda m: m.sort(m.tensor(M), 2),
    "sort_stable_descending_nan_and_zeros": lambda m: (
        m.argsort(m.tensor([1, 1, 0, 1]), descending=True, stable=True),
        m.sort(m.tensor([1.0, np.nan, 1, np.nan, -0.0, 0.0]), descending=True, stable=True),
        m.sort(m.tensor([0.0, -0.0, 0.0, -0.0]), stable=True)),
    "topk_0d": lambda m: (m.topk(m.tensor(2.0), 1), m.topk(m.tensor(2.0), 0)),
    "topk_0d_k_2": lambda m: m.topk(m.tensor(2.0), 2),
    "topk_uint8_smallest": lambda m: m.topk(m.tensor([3, 1, 2], dtype=m.uint8), 2, largest=False),
    "topk_float_k_method": lambda m: m.tensor(M).topk(1.5),
    "topk_unsorted": lambda m: m.topk(m.tensor([1.0, 5, 3, 4, 2]), 3, sorted=False),
    "msort_0d": lambda m: m.msort(m.tensor(3.0)),
    "searchsorted": lambda m: (
        m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([0.0, 3, 6])),
        m.searchsorted(m.tensor([1.0, 3, 5]), 3.0, right=True),
        m.searchsorted(m.tensor([[1.0, 3], [2, 4]]), m.tensor([[2.0], [3.0]]), side="right")),
    "searchsorted_bad_side": lambda m: m.searchsorted(m.tensor([1.0, 3]), m.tensor([0.0]),
                                                      side="middle"),
    "searchsorted_side_against_right": lambda m: m.searchsorted(
        m.tensor([1.0, 3]), m.tensor([0.0]), right=False, side="right"),
    "searchsorted_leading_dims_differ": lambda m: m.searchsorted(m.tensor([[1.0, 3, 5]]),
                                                                 m.tensor([[0.0], [1.0]])),
    "median_nanmedian_mode_ties": lambda m: (
        m.median(m.tensor(M), 1), m.median(m.tensor([4.0, 1, 3, 2])),
        m.nanmedian(m.tensor([[1.0, np.nan, 1, 2]]), 1), m.mode(m.tensor([[1, 2, 2, 1, 3]]), 1),
        m.mode(m.tensor([[1.0, 2.0, 2.0, 1.0], [3.0, 3.0, 1.0, 1.0]]))),
    "unique_corners": lambda m: (
        m.unique_consecutive(m.tensor([[True, False], [True, False], [False, True]]), dim=0,
                             return_counts=True),
        m.unique(m.tensor([3, 1, 3, 2]), True, True, True),
        m.unique_consecutive(m.tensor([]), return_inverse=True, return_counts=True),
        m.unique(m.tensor(5), return_inverse=True),
        m.unique(m.tensor([[1, 1], [2, 2], [1, 1]], dtype=m.int8), dim=1, return_inverse=True,
                 return_counts=True)),
    "isin_dtypes": lambda m: (
        m.isin(m.tensor([True, False]), m.tensor([True])),
        m.isin(m.tensor([1, 2]), m.tensor([1.5, 2.0])), m.isin(m.tensor([1.5, 2.0]), 2),
        m.isin(2, m.tensor([1.5, 2.0])),
        m.isin(m.tensor([1.0, 2.0], dtype=m.float16), m.tensor([2.0], dtype=m.float16)),
        m.isin(m.tensor([255], dtype=m.uint8), -1)),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_sort_and_select(name):
    """Complex and bool refusals, dtypes, 0-d inputs, signed zeros and NaN under a stable
    descending sort, searchsorted's sides, median/mode ties, unique and isin corners."""
    same(MORE[name])


@pytest.mark.parametrize("call", [lambda m, x: x.sort(0, stable=True),
                                  lambda m, x: x.sort(0, stable=None),
                                  lambda m, x: x.argsort(0, stable=False),
                                  lambda m, x: m.sort(x, 0, True, stable=True),
                                  lambda m, x: m.argsort(x, -1, stable=True)])
def test_stable_takes_dim_and_descending_by_keyword_only(call):
    """torch's sort/argsort overload with ``stable=`` has no positional dim: a TypeError (its
    first line compared: torch's method form lists its signatures or counts arguments)."""
    x = rng().standard_normal(4)
    first_lines = []
    for m in (torch, gradkit):
        with pytest.raises(TypeError) as caught:
            call(m, made(m, x, "float32"))
        first_lines.append(str(caught.value).split("\n")[0].replace("got (Tensor, ", "got ("))
    expected, got = first_lines
    assert got.startswith(("sort() received an invalid combination of arguments - got (",
                           "argsort() received an invalid combination of arguments - got ("))
    if "takes from" not in expected:  # torch's method form with two positional arguments
        assert got == expected


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("size", [17, 40, 1000])
def test_unique_inverse_of_nans_follows_torchs_sort(dtype, size):
    """Each NaN is its own value: which one the inverse names follows torch's sort (the same
    for float16 as for float32)."""
    x = rng(size).integers(0, 4, size).astype(float)
    x[rng(size + 1).random(size) < 0.3] = np.nan
    same(lambda m: m.unique(made(m, x, dtype), return_inverse=True, return_counts=True))
