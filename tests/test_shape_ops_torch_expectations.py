"""torch's test/test_shape_ops.py (TestShapeOps), re-run as programs under torch 2.13 and
gradkit: same values, dtypes, shapes, gradients, or the same error (type and message).

Each test names the torch test it covers. Out of scope (see docs/torch_expectations.md, "Shape
ops"): out=, quantized and bfloat16 inputs, torch.jit, torch.ops.aten, sparse dims, CUDA.
"""
import itertools
import warnings

import numpy as np
import pytest
from expectation_programs import DTYPES, INTEGRAL, made, same, sample, with_python_values
from test_torch_numerics import with_grads

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG_SEED = 20261206


def rng(offset: int = 0) -> np.random.Generator:
    return np.random.default_rng(RNG_SEED + offset)


# -- unbind, tolist ----------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, 2, 3, -1])
def test_unbind(dim):
    """test_unbind: torch.unbind and Tensor.unbind give the selects along dim (and their
    gradient puts each seed back in its slice)."""
    x = rng().random((2, 3, 4, 5))
    same(lambda m: (m.unbind(made(m, x, "float32"), dim), made(m, x, "float32").unbind(dim)))
    same(lambda m: [made(m, x, "float32").select(dim, i) for i in range(x.shape[dim])])
    seeds = rng(1).standard_normal(x.shape)
    same(with_grads(lambda m, a: sum((part * made(m, seed, "float64")).sum() for part, seed in
                                     zip(a.unbind(dim), np.moveaxis(seeds, dim, 0))), x),
         rtol=1e-12)


def test_tolist():
    """test_tolist (tensor half; torch.Storage(list) is not gradkit's constructor)."""
    with_python_values(lambda m: [m.tensor([]).tolist(), m.tensor([1.0, 2.0, 3.0]).tolist(),
                                  m.tensor([[1, 2], [3, 4]]).tolist()])
    with_python_values(lambda m: [
        m.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]).select(1, 1).tolist(),
        m.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]).select(1, 1).is_contiguous()])


# -- movedim / moveaxis ------------------------------------------------------------------------

MOVE = ["movedim", "moveaxis"]


@pytest.mark.parametrize("name", MOVE)
@pytest.mark.parametrize("dtype", ["int64", "float32", "complex128"])
@pytest.mark.parametrize("source,destination", [
    (5, 0), (0, 5), ((1, 0), (0,)), ((0, 0), (0, 1)), ((0, 1, 0), (0, 1, 2)), ((0, 1), (1, 1)),
    ((0, 1, 2), (1, 0, 1)), (-5, 0), ((0, 4), (1, 2))])
def test_movedim_invalid(name, dtype, source, destination):
    """test_movedim_invalid: out-of-range dims, size mismatch, repeated dims (messages)."""
    x = sample(rng(), (5, 6, 7, 8), dtype)
    same(lambda m: getattr(m, name)(made(m, x, dtype), source, destination))


def _move_cases(nd: int):
    """Every (source, destination) pair of single dims, both signs; every ordered selection of
    dims moved to the reversed positions (negative forms too); the empty and same moves."""
    cases = []
    for src, dst in itertools.permutations(range(nd), 2):
        cases += [(src, dst), (src - nd, dst), (src, dst - nd), (src - nd, dst - nd)]
    for r in range(1, nd + 1):
        for src in itertools.permutations(range(nd), r):
            dst = tuple(reversed(range(nd)))[:r]
            cases += [(src, dst), (tuple(d - nd for d in src), dst)]
    return cases + [((), ()), (tuple(range(min(nd, 2))), tuple(range(min(nd, 2))))]


@pytest.mark.parametrize("name", MOVE)
@pytest.mark.parametrize("dtype", ["int64", "float32", "complex128"])
@pytest.mark.parametrize("nd", range(5))
def test_movedim(name, dtype, nd):
    """test_movedim: the same result as torch (and NumPy's moveaxis) for every move."""
    x = sample(rng(nd), tuple(range(5, 5 + nd)), dtype)
    for source, destination in _move_cases(nd):
        expected = np.moveaxis(x, source, destination)
        got = getattr(gradkit, name)(made(gradkit, x, dtype), source, destination)
        np.testing.assert_array_equal(got.numpy(), expected.astype(got.numpy().dtype))
        same(lambda m, s=source, d=destination: getattr(m, name)(made(m, x, dtype), s, d))


@pytest.mark.parametrize("call", [lambda m: m.moveaxis(m.ones(2, 3, 4), (0,), 1),
                                  lambda m: m.ones(2, 3).movedim(0, [1])])
def test_movedim_takes_two_ints_or_two_lists(call):
    """One int and one list match neither of torch's signatures: its TypeError."""
    for m in (torch, gradkit):
        with pytest.raises(TypeError, match=r"^(movedim|moveaxis)\(\) received an invalid "
                                            "combination of arguments"):
            call(m)


def test_movedim_gradient():
    x = rng().standard_normal((2, 3, 4))
    seed = rng(1).standard_normal((4, 2, 3))
    same(with_grads(lambda m, a: m.movedim(a, (2, 0), (0, 1)), x, seed=seed))
    a = gradkit.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: gradkit.moveaxis(v, -1, 0), (a,))
    assert gradgradcheck(lambda v: gradkit.moveaxis(v, -1, 0), (a,))


# -- diag, diagonal, trace ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_diag(dtype):
    """test_diag (without its out= half)."""
    x = rng().random((20, 20))
    values = x >= 0.5 if dtype == "bool" else x
    same(lambda m: [m.diag(made(m, values, dtype), k) for k in (0, 3, -5, 19, 20, -25)])


def test_diagonal():
    """test_diagonal: torch.diagonal is torch.diag of a matrix."""
    x = rng().standard_normal((30, 30))
    same(lambda m: (m.diagonal(made(m, x, "float32")), m.diag(made(m, x, "float32")),
                    m.diagonal(made(m, x, "float32"), 17), m.diag(made(m, x, "float32"), 17)))


@pytest.mark.parametrize("args", [(2, 2, 3), (2,), (-2, 1, 2), (0, -2, -1)])
def test_diagonal_multidim(args):
    """test_diagonal_multidim: NumPy's diagonal, contiguous and permuted, with gradients."""
    x = rng().standard_normal((4, 5, 6, 7))
    got = gradkit.diagonal(made(gradkit, x, "float32"), *args)
    np.testing.assert_array_equal(got.numpy(), x.astype(np.float32).diagonal(*args))
    same(lambda m: m.diagonal(made(m, x, "float32"), *args))
    same(lambda m: m.diagonal(made(m, x, "float32").permute(1, 2, 3, 0), 0, -2, -1))
    same(with_grads(lambda m, a: m.diagonal(a, *args), x), rtol=1e-12)


@pytest.mark.parametrize("dtype", INTEGRAL + ["float32", "float64"])
@pytest.mark.parametrize("shape", [(10, 1), (1, 10), (30, 30), (8, 30), (30, 8)])
def test_trace(dtype, shape):
    """test_trace: the sum's dtype (integers in int64) and NumPy's value."""
    x = rng().integers(-9, 9, shape)
    if dtype == "uint8":
        x = np.abs(x)
    same(lambda m: made(m, x, dtype).trace(), rtol=1e-6)
    assert gradkit.trace(made(gradkit, x, dtype)).item() == pytest.approx(np.trace(x))


# -- clamp / clip ------------------------------------------------------------------------------

CLAMPS = {
    "clamp": lambda m, x, lo, hi: m.clamp(x, lo, hi),
    "Tensor.clamp": lambda m, x, lo, hi: x.clamp(lo, hi),
    "Tensor.clamp_": lambda m, x, lo, hi: x.clamp_(lo, hi),
    "clip": lambda m, x, lo, hi: m.clip(x, lo, hi),
    "Tensor.clip": lambda m, x, lo, hi: x.clip(lo, hi),
    "Tensor.clip_": lambda m, x, lo, hi: x.clip_(lo, hi),
}
BOUNDS = [(-10, 10), (-10, None), (None, 10)]


@pytest.mark.parametrize("name", sorted(CLAMPS))
@pytest.mark.parametrize("dtype", ["int64", "float32"])
@pytest.mark.parametrize("bounds", BOUNDS)
def test_clamp(name, dtype, bounds):
    """test_clamp: NumPy's clip values, in place too (without out=)."""
    x = rng().random(100) * 50 - 25
    same(lambda m: CLAMPS[name](m, made(m, x, dtype), *bounds))
    expected = np.clip(x.astype(np.float32 if dtype == "float32" else np.int64), *bounds)
    result = CLAMPS[name](gradkit, made(gradkit, x, dtype), *bounds).numpy()
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("name", sorted(CLAMPS))
@pytest.mark.parametrize("bounds", BOUNDS)
def test_clamp_propagates_nans(name, bounds):
    """test_clamp_propagates_nans."""
    x = rng().random(100) * 50 - 25
    x[rng(1).integers(0, 2, 100).astype(bool)] = np.nan
    same(lambda m: CLAMPS[name](m, made(m, x, "float32"), *bounds))
    result = CLAMPS[name](gradkit, made(gradkit, x, "float32"), *bounds).numpy()
    np.testing.assert_array_equal(np.isnan(result), np.isnan(x))


def test_clamp_scalar_nan_bounds():
    """test_clamp_scalar_nan_bounds: a NaN bound makes every value NaN."""
    same(lambda m: (m.clamp(m.ones(3), None, float("nan")), m.clamp(m.ones(3), float("nan"))))
    assert gradkit.clamp(gradkit.ones(3), float("nan"), None).isnan().all()


@pytest.mark.parametrize("call", [lambda m, x: x.clamp(), lambda m, x: x.clamp_(),
                                  lambda m, x: m.clamp(x), lambda m, x: m.clip(x),
                                  lambda m, x: x.clip_(None, None)])
def test_clamp_raises_arg_errors(call):
    """test_clamp_raises_arg_errors."""
    x = rng().standard_normal(10)
    same(lambda m: call(m, made(m, x, "float32")))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        call(gradkit, made(gradkit, x, "float32"))


def test_clamp_gradient():
    x = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])
    same(with_grads(lambda m, a: m.clamp(a, -1.0, 1.0), x))
    same(with_grads(lambda m, a, lo, hi: m.clamp(a, lo, hi), x, x * 0 - 1, x * 0 + 1))


# -- flip --------------------------------------------------------------------------------------

def _flip_inputs(m, dtype):
    """The inputs of test_flip: plain, non-contiguous, expanded, transposed, rectangular,
    channels-last images and their strided slices, empty and one-element tensors."""
    data = made(m, np.arange(1, 9).reshape(2, 2, 2), dtype)
    images = made(m, sample(rng(3), (2, 3, 8, 8), dtype), dtype)
    last = images.contiguous(memory_format=m.channels_last)
    return [data, made(m, np.arange(1, 17).reshape(2, 2, 4), dtype)[..., ::2],
            made(m, np.arange(1, 4).reshape(3, 1), dtype).expand(3, 2), data.transpose(0, 1),
            made(m, np.arange(1, 7).reshape(2, 3), dtype), images, last, last[..., ::2, :],
            last[..., ::2], made(m, np.zeros(0), dtype), made(m, sample(rng(4), (3, 0, 2), dtype),
                                                             dtype),
            made(m, np.array(5), dtype), made(m, np.array([5]), dtype)]


def _flip_dims(ndim: int):
    dims = [d for r in range(ndim + 1) for c in itertools.combinations(range(ndim), r)
            for d in itertools.permutations(c)]
    return dims + [tuple(d - ndim for d in c) for c in itertools.combinations(range(ndim), 2)] + \
        [d - ndim for d in range(ndim)] + list(range(ndim))


@pytest.mark.parametrize("dtype", DTYPES)
def test_flip(dtype):
    """test_flip: every dims tuple (permuted, wrapped), as dims= and as *dims, on every input
    (its quantized inputs are out of scope)."""
    count = len(_flip_inputs(gradkit, dtype))
    for i in range(count):
        ndim = _flip_inputs(gradkit, dtype)[i].ndim
        dims_list = _flip_dims(ndim) if ndim else [0, (), -1]
        same(lambda m, i=i, dims=dims_list: [_flip_inputs(m, dtype)[i].flip(d) for d in dims])
    same(lambda m: [m.flip(_flip_inputs(m, dtype)[0], dims=d)
                    for d in [(0,), [1, 2], (2, 0, 1)]])
    same(lambda m: _flip_inputs(m, dtype)[0].flip(0, 2))
    sizes = [list(gradkit.ones(2, 3, 4).flip(d).shape) for r in (1, 2)
             for d in itertools.combinations(range(3), r)]
    assert all(size == [2, 3, 4] for size in sizes)


@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_values_are_numpys(dtype):
    """test_flip_numpy: NumPy's flip for every combination of axes."""
    for ndim in (3, 4):
        x = sample(rng(ndim), tuple(range(5, 5 + ndim)), dtype)
        for r in range(1, ndim + 1):
            for axes in itertools.combinations(range(ndim), r):
                got = gradkit.flip(made(gradkit, x, dtype), dims=axes).numpy()
                np.testing.assert_array_equal(got, np.flip(x, axis=axes).astype(got.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("call", [lambda x: x.flip(0, 1, 1), lambda x: x.flip(),
                                  lambda x: x.flip(0, 1, 2, 3), lambda x: x.flip(3),
                                  lambda x: x.flip(-4), lambda x: x.flip((0, -3))])
def test_flip_errors(dtype, call):
    """test_flip_errors: a repeated dim, no dims, a dim out of range."""
    x = sample(rng(), (2, 2, 2), dtype)
    same(lambda m: call(made(m, x, dtype)))


def test_flip_gradient():
    x = rng().standard_normal((2, 3, 4))
    same(with_grads(lambda m, a: a.flip(0, 2), x, seed=rng(1).standard_normal((2, 3, 4))))
    a = gradkit.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: v.flip(1, -1), (a,)) and gradgradcheck(lambda v: v.flip(1), (a,))


@pytest.mark.parametrize("dtype", ["int64", "float64", "complex128"])
@pytest.mark.parametrize("name,ndims", [("fliplr", range(2, 5)), ("flipud", range(1, 5))])
def test_fliplr_flipud(dtype, name, ndims):
    """test_fliplr, test_flipud: NumPy's fliplr/flipud."""
    for nd in ndims:
        x = sample(rng(nd), tuple(range(5, 5 + nd)), dtype)
        same(lambda m, x=x: getattr(m, name)(made(m, x, dtype)))
        got = getattr(gradkit, name)(made(gradkit, x, dtype)).numpy()
        np.testing.assert_array_equal(got, getattr(np, name)(x))


@pytest.mark.parametrize("dtype", ["int64", "float64", "complex128"])
def test_fliplr_flipud_invalid(dtype):
    """test_fliplr_invalid, test_flipud_invalid: 'Input must be >= 2-d.' / '>= 1-d.'."""
    same(lambda m: m.fliplr(made(m, np.ones(42), dtype)))
    same(lambda m: m.fliplr(made(m, np.array(42), dtype)))
    same(lambda m: m.flipud(made(m, np.array(42), dtype)))
    with pytest.raises(RuntimeError, match=r"Input must be >= 2-d\."):
        gradkit.fliplr(gradkit.ones(3))
    with pytest.raises(RuntimeError, match=r"Input must be >= 1-d\."):
        gradkit.flipud(gradkit.tensor(4.0))


def test_fliplr_flipud_gradients():
    x = rng().standard_normal((3, 4))
    same(with_grads(lambda m, a: m.fliplr(a) * m.flipud(a), x), rtol=1e-12)


# -- rot90 -------------------------------------------------------------------------------------

def test_rot90():
    """test_rot90: k modulo 4, default arguments, reversed dims, more than 2-d."""
    same(lambda m: [m.arange(1, 5).view(2, 2).rot90(k, [0, 1]) for k in (0, 1, 2, 3, 5, -1, -5)])
    same(lambda m: (m.arange(1, 5).view(2, 2).rot90(), m.arange(1, 5).view(2, 2).rot90(1, [1, 0]),
                    m.arange(1, 9).view(2, 2, 2).rot90(1, [1, 2]),
                    m.arange(1, 9).view(2, 2, 2).rot90(1, [1, -1])))
    np.testing.assert_array_equal(gradkit.arange(1, 5).view(2, 2).rot90(1, [0, 1]).numpy(),
                                  [[2, 4], [1, 3]])


@pytest.mark.parametrize("shape,dims", [((2, 2), [0, -3]), ((2, 2), [0, 2]),
                                        ((2, 2, 2), [0, 3]), ((2, 2, 2), [1, 1]),
                                        ((2, 2, 2), [0, 1, 2]), ((2, 2, 2), [0]),
                                        ((2, 2, 2), [-1, 2]), ((3,), [0, 1])])
def test_rot90_errors(shape, dims):
    """test_rot90's errors: dims out of range, repeated, not two of them."""
    same(lambda m: m.ones(shape).rot90(1, dims))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("k", range(4))
def test_complex_rot90(dtype, k):
    """test_complex_rot90: NumPy's rot90, with the gradient of the float64 case."""
    x = sample(rng(k), (5, 6, 7), dtype)
    same(lambda m: m.rot90(made(m, x, dtype), k=k, dims=[0, 1]))
    np.testing.assert_array_equal(gradkit.rot90(made(gradkit, x, dtype), k, [0, 1]).numpy(),
                                  np.rot90(x, k, axes=(0, 1)).astype(dtype))
    same(with_grads(lambda m, a: m.rot90(a, k, [2, 0]), x.real), rtol=1e-12)


# -- nonzero -----------------------------------------------------------------------------------

def test_nonzero_no_warning():
    """test_nonzero_no_warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = gradkit.tensor(rng().standard_normal((2, 2)))
        gradkit.nonzero(x)
        x.nonzero()
    assert caught == []


@pytest.mark.parametrize("dtype", DTYPES[:9])
@pytest.mark.parametrize("shape", [(12,), (12, 1), (1, 12), (6, 2), (3, 2, 2), (5, 5, 5)])
def test_nonzero(dtype, shape):
    """test_nonzero: NumPy's nonzero as rows and as a tuple (without out=)."""
    x = rng().integers(0, 2, shape)
    same(lambda m: (m.nonzero(made(m, x, dtype)), made(m, x, dtype).nonzero(as_tuple=False),
                    m.nonzero(made(m, x, dtype), as_tuple=True),
                    made(m, x, dtype).nonzero(as_tuple=True)))
    np.testing.assert_array_equal(gradkit.nonzero(made(gradkit, x, dtype)).numpy(),
                                  np.stack(x.nonzero()).T)


def test_nonzero_of_0d_and_empty_tensors():
    """nonzero of a 0-d tensor is one row of no columns; as_tuple gives it one index."""
    same(lambda m: (m.tensor(3.0).nonzero(), m.tensor(0.0).nonzero(),
                    m.tensor(3.0).nonzero(as_tuple=True), m.tensor(0.0).nonzero(as_tuple=True),
                    m.zeros(0, 3).nonzero(), m.zeros(0, 3).nonzero(as_tuple=True)))


def test_nonzero_discontiguous():
    """test_nonzero_discontiguous (without its out= half)."""
    x = rng().integers(0, 2, (4, 4))
    same(lambda m: (m.zeros(4, 8)[:, ::2].copy_(made(m, x, "int64")).nonzero(),
                    made(m, x, "int64").nonzero()))


def test_nonzero_non_diff():
    """test_nonzero_non_diff."""
    x = gradkit.tensor(rng().standard_normal(10), requires_grad=True)
    assert not x.nonzero().requires_grad
    assert not any(i.requires_grad for i in x.nonzero(as_tuple=True))


# -- unfold ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_unfold_all_dtypes(dtype):
    """test_unfold_all_devices_and_dtypes."""
    same(lambda m: m.empty((0, 1, 3, 0), dtype=getattr(m, dtype)).unfold(2, 3, 2))
    assert gradkit.empty((0, 1, 3, 0), dtype=getattr(gradkit, dtype)).unfold(2, 3, 2).shape == \
        (0, 1, 1, 0, 3)


def test_unfold_scalars():
    """test_unfold_scalars: a 0-d tensor unfolds to shape [size]."""
    same(lambda m: (m.tensor(0.5).unfold(0, 0, 1), m.tensor(0.5).unfold(0, 0, 2),
                    m.tensor(0.5).unfold(0, 1, 1), m.tensor(0.5).unfold(-1, 1, 1)))


@pytest.mark.parametrize("args", [(0, -1, 1), (0, 1, -1), (0, 1, 0), (0, 8, 1), (1, 1, 1),
                                  (-2, 1, 1)])
def test_unfold_errors(args):
    """test_unfold_errors: 'size is -1 but must be >= 0', 'step is -1 but must be > 0'."""
    same(lambda m: m.arange(1.0, 8).unfold(*args))


@pytest.mark.parametrize("args", [(0, 2, 0), (0, 2, 1), (1, 2, 1)])
def test_unfold_scalar_errors(args):
    same(lambda m: m.tensor(0.5).unfold(*args))


def test_unfold_gradient():
    """Overlapping windows add their gradients (unfold_backward of torch)."""
    x = rng().standard_normal((7, 3))
    same(with_grads(lambda m, a: a.unfold(0, 3, 2), x, seed=rng(1).standard_normal((3, 3, 3))),
         rtol=1e-12)
    same(with_grads(lambda m, a: a.unfold(0, 3, 1) ** 2, x), rtol=1e-12)
    a = gradkit.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: v.unfold(0, 3, 1), (a,))
    assert gradgradcheck(lambda v: v.unfold(0, 3, 2) ** 2, (a,))


# -- beyond test_shape_ops.py: the shape ops its older versions and OpInfos cover --------------

X = np.arange(24.0).reshape(2, 3, 4)
MORE = {
    "roll": lambda m: (m.roll(m.tensor(X), 1), m.roll(m.tensor(X), (1, -2), (0, 2)),
                       m.roll(m.tensor(X), -7, 2), m.roll(m.tensor(X), 1, ()),
                       m.roll(m.tensor(X).transpose(0, 2), 2, 0), m.roll(m.zeros(0, 3), 1, 0),
                       m.roll(m.tensor(3.0), 1)),
    "roll_shifts_and_dims_differ": lambda m: m.roll(m.tensor(X), (1, 2), (0,)),
    "roll_two_shifts_no_dims": lambda m: m.roll(m.tensor(X), (1, 2)),
    "roll_no_shifts": lambda m: m.roll(m.tensor(X), ()),
    "roll_0d_with_dim": lambda m: m.roll(m.tensor(3.0), 1, 0),
    "roll_0d_dim_out_of_range": lambda m: m.roll(m.tensor(3.0), 1, 5),
    "roll_dim_out_of_range": lambda m: m.roll(m.tensor(X), 1, 3),
    "tril_triu": lambda m: [f(m.tensor(X), k) for f in (m.tril, m.triu) for k in (-5, -1, 0, 1, 5)]
    + [m.tril(m.ones(3, 3, dtype=m.bool)), m.triu(m.zeros(0, 3))],
    "tril_1d": lambda m: m.tril(m.ones(3)),
    "triu_0d": lambda m: m.triu(m.tensor(1.0)),
    "tril_triu_indices": lambda m: (m.tril_indices(3, 4, 1), m.triu_indices(4, 3, -1),
                                    m.tril_indices(0, 0)),
    "squeeze_dims": lambda m: [m.ones(1, 2, 1, 3).squeeze(d) for d in ((0, 2), (0, 1), (),
                                                                       [-1, -2], 0)],
    "squeeze_dim_twice": lambda m: m.ones(1, 2, 1, 3).squeeze((2, 2)),
    "squeeze_dim_twice_wrapped": lambda m: m.ones(1, 2).squeeze((0, -2)),
    "squeeze_0d": lambda m: (m.tensor(1.0).squeeze(0), m.tensor(1.0).squeeze((0,)),
                             m.tensor(1.0).squeeze(-1), m.tensor(1.0).squeeze(())),
    "squeeze_0d_dim_twice": lambda m: m.tensor(1.0).squeeze((0, 0)),
    "squeeze_0d_dim_out_of_range": lambda m: m.tensor(1.0).squeeze((0, 1)),
    "squeeze_dim_out_of_range": lambda m: m.ones(1, 2).squeeze((0, 5)),
    "unsqueeze": lambda m: [m.ones(2, 3).unsqueeze(d) for d in (-1, -3, 0, 2)],
    "unsqueeze_out_of_range": lambda m: m.ones(2).unsqueeze(3),
    "atleast_nd": lambda m: [f(v) for f in (m.atleast_1d, m.atleast_2d, m.atleast_3d)
                             for v in (m.tensor(1.0), m.ones(2), m.ones(2, 3), m.ones(2, 3, 4),
                                       m.ones(1, 2, 3, 4))],
    "atleast_nd_several": lambda m: (m.atleast_1d(m.tensor(1.0), m.ones(2)),
                                     m.atleast_2d([m.tensor(1.0), m.ones(2)]),
                                     m.atleast_3d((m.ones(2),))),
    "cat": lambda m: (m.cat([m.ones(2, 3), m.tensor([])]), m.cat([m.ones(2, 3), m.zeros(0, 3)]),
                      m.cat([m.ones(2, dtype=m.int32), m.ones(2, dtype=m.float16),
                             m.ones(1, dtype=m.bool)]),
                      m.cat([m.ones(2, 3), m.zeros(2, 3)], -1)),
    "cat_nothing": lambda m: m.cat([]),
    "cat_sizes_differ": lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]),
    "cat_0d": lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)]),
    "cat_0d_second": lambda m: m.cat([m.ones(2), m.tensor(1.0)]),
    "cat_0d_after_empty": lambda m: m.cat([m.tensor([]), m.tensor(1.0)]),
    "cat_dim_out_of_range": lambda m: m.cat([m.ones(2, 3), m.ones(2, 3)], 2),
    "cat_ndims_differ": lambda m: m.cat([m.ones(2, 3), m.ones(2)]),
    "cat_empty_of_other_size": lambda m: m.cat([m.ones(2, 3), m.zeros(0, 4)]),
    "stack": lambda m: [m.stack([m.ones(2, 3), m.zeros(2, 3)], d) for d in (0, 1, 2, -1, -3)]
    + [m.stack([m.tensor(1.0), m.tensor(2.0)]), m.hstack([m.ones(2), m.zeros(3)]),
       m.vstack([m.ones(2), m.zeros(2)]), m.dstack([m.ones(2), m.zeros(2)]),
       m.column_stack([m.ones(2), m.zeros(2, 2)]), m.row_stack([m.ones(2), m.zeros(2)])],
    "stack_sizes_differ": lambda m: m.stack([m.ones(2, 3), m.ones(3, 2)]),
    "stack_nothing": lambda m: m.stack([]),
    "stack_dim_out_of_range": lambda m: m.stack([m.ones(2, 3)], 3),
    "narrow": lambda m: [m.ones(4, 5).narrow(d, s, n) for d, s, n in ((0, 1, 2), (1, -2, 2),
                                                                      (-1, 0, 5), (0, 4, 0))],
    "narrow_past_the_end": lambda m: m.ones(4, 5).narrow(0, 2, 3),
    "narrow_start_out_of_range": lambda m: m.ones(4, 5).narrow(0, 5, 0),
    "narrow_negative_start_out_of_range": lambda m: m.ones(4, 5).narrow(0, -5, 1),
    "narrow_negative_length": lambda m: m.ones(4, 5).narrow(0, 1, -1),
    "narrow_0d": lambda m: m.tensor(1.0).narrow(0, 0, 1),
    "narrow_dim_out_of_range": lambda m: m.ones(4, 5).narrow(2, 0, 1),
    "diag_embed": lambda m: [m.diag_embed(m.tensor(X), o, a, b) for o, a, b in
                             ((0, -2, -1), (1, 0, 2), (-2, 1, 0), (0, 0, 3))],
    "diag_embed_same_dims": lambda m: m.diag_embed(m.tensor(X), 0, 1, 1),
    "diag_embed_dim_out_of_range": lambda m: m.diag_embed(m.tensor(X), 0, 1, 4),
    "diagonal_same_dims": lambda m: m.diagonal(m.tensor(X), 0, 1, 1),
    "diagonal_1d": lambda m: m.diagonal(m.ones(3)),
    "diag_3d": lambda m: m.diag(m.tensor(X)),
    "diag_0d": lambda m: m.diag(m.tensor(1.0)),
    "trace_3d": lambda m: m.trace(m.tensor(X)),
    "trace_dtypes": lambda m: [m.trace(m.ones(2, 2, dtype=getattr(m, d)))
                               for d in ("bool", "float16", "complex64")],
    "flip_0d_dim_out_of_range": lambda m: m.tensor(1.0).flip(1),
    "rot90_1d": lambda m: m.ones(3).rot90(),
    "rot90_reversed_dims": lambda m: m.arange(6.0).view(2, 3).rot90(2, (1, 0)),
    "unfold_dim_out_of_range": lambda m: m.ones(3, 4).unfold(2, 1, 1),
    "unfold_size_past_the_dim": lambda m: m.ones(3, 4).unfold(1, 5, 1),
    "unfold_negative_dim": lambda m: m.arange(12.0).view(3, 4).unfold(-1, 2, 1),
    "nonzero_static_argwhere": lambda m: (m.nonzero_static(m.tensor([0, 1, 2, 0]), size=3),
                                          m.argwhere(m.tensor([[0, 1], [2, 0]]))),
    "split_and_chunk": lambda m: (m.ones(5, 2).split([2, 3]), m.arange(7).tensor_split(3),
                                  m.arange(7).tensor_split([1, 5]),
                                  m.arange(7).tensor_split(m.tensor([2]))),
    "split_sizes_not_summing": lambda m: m.ones(5, 2).split([2, 2]),
    "chunk_0": lambda m: m.ones(5).chunk(0),
    "unbind_0d": lambda m: m.tensor(1.0).unbind(),
    "unbind_0d_negative_dim": lambda m: m.tensor(1.0).unbind(-1),
    "unbind_0d_dim_out_of_range": lambda m: m.tensor(1.0).unbind(5),
    "unbind_dim_out_of_range": lambda m: m.ones(2).unbind(1),
    "clamp_bounds": lambda m: (m.clamp(m.arange(6.0), m.full((6,), 2.0), m.tensor(4.0)),
                               m.clamp(m.arange(6.0), 4, 2), m.clamp(m.arange(6), 1.5, 3.5),
                               m.clamp(m.ones(3), m.tensor([float("nan"), 0.0, 2.0])),
                               m.clip(m.arange(4.0), min=m.tensor(2.0))),
    "clamp_bool": lambda m: m.clamp(m.ones(2, dtype=m.bool), 0, 1),
    "clamp_bound_wraps_into_uint8": lambda m: (
        m.tensor([1, 200], dtype=m.uint8).clamp(-1, 100),
        m.tensor([1, 200], dtype=m.uint8).clamp(min=-1),
        m.tensor([1, 200], dtype=m.uint8).clamp(max=-1)),
    "clamp_bound_beyond_uint8": lambda m: m.tensor([1, 200], dtype=m.uint8).clamp(-1, 300),
    "clamp_bound_beyond_uint8_below": lambda m: m.tensor([1], dtype=m.uint8).clamp(max=-300),
    "clamp_bound_beyond_int8": lambda m: m.tensor([1, 2], dtype=m.int8).clamp_min(1000),
    "clamp_in_place_bound_beyond_int8": lambda m: m.tensor([1], dtype=m.int8).clamp_(max=1000),
    "clamp_bound_beyond_float16": lambda m: m.ones(2, dtype=m.float16).clamp(min=-1e5, max=1),
    "clamp_bound_beyond_float32": lambda m: m.ones(2).clamp(max=1e300),
    "clamp_in_place_bound_beyond_float32": lambda m: m.ones(2).clamp_(max=1e300),
    "clamp_bounds_that_fit": lambda m: (
        m.ones(2).clamp(max=float("inf")), m.tensor([1, 2], dtype=m.int8).clamp(max=1000.5),
        m.ones(2, dtype=m.float16).clamp(max=float("nan")), m.ones(2).clamp_max(2**64 - 1),
        m.tensor([1, 2]).clamp(min=-2**63)),
    "clamp_int_beyond_uint64": lambda m: m.tensor([1, 2]).clamp(max=2**64),
    "clamp_int_below_int64": lambda m: m.ones(2).clamp_min(-2**63 - 1),
    "clamp_int_beyond_int64_for_int64": lambda m: m.tensor([1, 2]).clamp(max=2**64 - 1),
    "movedim_0d": lambda m: (m.movedim(m.tensor(1.0), 0, 0), m.movedim(m.tensor(1.0), -1, 0),
                             m.movedim(m.tensor(1.0), (), ()), m.movedim(m.tensor(1.0), (0,),
                                                                         (-1,))),
    "movedim_0d_dim_out_of_range": lambda m: m.movedim(m.tensor(1.0), 1, 0),
    "movedim_0d_destination_out_of_range": lambda m: m.movedim(m.tensor(1.0), 0, -2),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_shape_ops(name):
    """roll, tril/triu, squeeze/unsqueeze dims, atleast_Nd, cat/stack corners, narrow,
    diag_embed, split/chunk, unbind, clamp bounds: values or torch's error."""
    same(MORE[name])


@pytest.mark.parametrize("fn", [
    lambda m, a: m.roll(a, (1, -1), (0, 1)), lambda m, a: m.roll(a, 2),
    lambda m, a: m.tril(a, -1) + m.triu(a, 1), lambda m, a: m.diag_embed(a, 1),
    lambda m, a: a.narrow(1, 1, 2), lambda m, a: m.cat([a, a * 2], 1),
    lambda m, a: m.stack([a, a.sin()], 1), lambda m, a: m.atleast_3d(a),
    lambda m, a: a.squeeze((0, 1)), lambda m, a: m.trace(a)])
def test_more_shape_ops_gradients(fn):
    x = rng().standard_normal((3, 4))
    same(with_grads(fn, x), rtol=1e-12)
    a = gradkit.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: fn(gradkit, v), (a,))
    assert gradgradcheck(lambda v: fn(gradkit, v) ** 2, (a,))
