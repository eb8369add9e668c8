"""The expectations of torch's test/test_scatter_gather_ops.py (TestScatterGather), as programs
run in gradkit and in torch 2.13 and compared: values, dtypes, shapes, gradients, errors by type
and message. Each program names the torch test it covers; torch's random shapes and indices
are drawn here from a fixed NumPy generator so both libraries see the same data.
docs/torch_expectations.md lists what is out of scope and why."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.outcome import assert_like_torch  # noqa: E402

ALL_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
              "complex64", "complex128", "bool"]
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def _values(m, shape, dtype, seed=0):
    """Deterministic values of ``dtype`` (torch's make_tensor ranges: small, signed if it can)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        data = rng.integers(0, 2, shape).astype(bool)
    elif dtype in ("uint8",):
        data = rng.integers(0, 10, shape).astype(dtype)
    elif dtype.startswith("int"):
        data = rng.integers(-9, 10, shape).astype(dtype)
    elif dtype.startswith("complex"):
        data = (rng.uniform(-9, 9, shape) + 1j * rng.uniform(-9, 9, shape)).astype(dtype)
    else:
        data = rng.uniform(-9, 9, shape).astype(dtype)
    return m.tensor(data)


def _index(m, shape, dim, dim_size, unique=True, seed=1):
    """torch's _fill_indices: along ``dim`` each row holds distinct (or repeated) indices."""
    rng = np.random.default_rng(seed)
    moved = list(shape)
    rows = moved.pop(dim)
    picks = [rng.permutation(dim_size)[:rows] if unique else rng.integers(0, dim_size, rows)
             for _ in range(int(np.prod(moved)))]
    data = np.moveaxis(np.stack(picks, -1).reshape([rows] + moved), 0, dim)
    return m.tensor(data, dtype=m.int64)


def _case(dim, seed=0):
    """Shapes of torch's _test_scatter_base: base (m, n, o); index with few elements on dim."""
    rng = np.random.default_rng(seed + 10 * dim)
    base = [int(s) for s in rng.integers(5, 9, 3)]
    idx = list(base)
    idx[dim] = int(rng.integers(1, 5))
    src = [s + int(rng.integers(1, 3)) for s in idx]
    return base, idx, src


# -- gather ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather(dtype, dim):  # test_gather
    base, idx_shape, _ = _case(dim)

    def program(m):
        src = _values(m, base, dtype)
        return m.gather(src, dim, _index(m, idx_shape, dim, base[dim]))
    assert_like_torch(program)


def test_gather_of_max_indices():  # test_gather (second half)
    def program(m):
        src = _values(m, (3, 4, 5), "float32")
        expected, idx = src.max(2, True)
        return m.gather(src, 2, idx), expected
    assert_like_torch(program)


@pytest.mark.parametrize("dim", [0, 1])
def test_gather_layouts(dim):  # test_gather_large (smaller shapes), int8
    def program(m):
        src = _values(m, (40, 36), "int8")
        discontig = m.empty(40, 72, dtype=m.int8)[:, ::2].copy_(src)
        misaligned = m.empty(40 * 36 + 1, dtype=m.int8)[1:].view(40, 36).copy_(src)
        padded = m.empty(40, 40, dtype=m.int8)[:, :-4].copy_(src)
        ind0 = m.tensor(np.random.default_rng(3).integers(0, src.shape[dim], 25))
        ind_discontig0 = m.empty(50, dtype=m.int64)[::2].copy_(ind0)
        shape_ind, shape_out = [1, 1], list(src.shape)
        shape_ind[dim], shape_out[dim] = 25, 25
        ind = ind0.view(shape_ind).expand(shape_out)
        ind_discontig = ind_discontig0.view(shape_ind).expand(shape_out)
        pick = (lambda t, i: t[i]) if dim == 0 else (lambda t, i: t[:, i])
        return [m.gather(s, dim, i) for s in (src, discontig, misaligned, padded)
                for i in (ind, ind_discontig)] + [
            pick(src, ind0), pick(src, ind_discontig0), pick(src, ind0 - src.shape[dim]),
            pick(discontig, ind0), pick(misaligned, ind0), pick(padded, ind0)]
    assert_like_torch(program)


def test_gather_index_of_size_one_on_dim():  # test_gather_large (squashed-iterator case)
    def program(m):
        src = _values(m, (16, 2, 16), "int8")
        ind = m.tensor(np.random.default_rng(4).integers(0, 2, (16, 1)))
        return m.gather(src, 1, ind.view(16, 1, 1).expand(16, 1, 16))
    assert_like_torch(program)


def test_gather_bool():  # test_gather_bool
    assert_like_torch(lambda m: m.gather(m.tensor(((False, True), (True, True))), 1,
                                         m.tensor(((0, 0), (1, 0)))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gather_backward_with_empty_index_tensor(dtype):  # same name (sparse_grad=False)
    def program(m):
        x = m.ones(10, 5, dtype=getattr(m, dtype), requires_grad=True)
        out = m.gather(x, -1, m.zeros(3, 0, dtype=m.int64))
        out.sum().backward()
        return out, x.grad
    assert_like_torch(program)


def test_gather_expanded_index():  # test_gather_expanded_index
    def program(m):
        results = []
        table = m.arange(25).view(5, 5)
        idx = m.arange(5).view(5, 1)
        results += [m.gather(table, 0, idx), m.gather(table.to(m.float64), 0, idx)]
        for size in ([50, 17], [50, 1], [50, 8, 7], [50, 3, 4, 5]):
            src = _values(m, size, "float32")
            shape = [1] * len(size)
            shape[0] = 100
            idx = m.tensor(np.random.default_rng(5).integers(0, 50, shape))
            expanded = idx.expand([100] + size[1:])
            results += [m.gather(src, 0, expanded), m.gather(src, 0, expanded.contiguous())]
            # an index of size [1, ...] with stride 1 on a later dim (pytorch issue 129093)
            row = m.tensor(np.random.default_rng(6).integers(0, 50, size[1]))
            unsqueezed = row.unsqueeze(1).t()
            for d in range(3, len(size) + 1):
                unsqueezed = unsqueezed.unsqueeze(d - 1)
            unsqueezed = unsqueezed.expand([1] + size[1:])
            results += [m.gather(src, 0, unsqueezed), m.gather(src, 0, unsqueezed.contiguous())]
        return results
    assert_like_torch(program)


# -- scatter, scatter_add, scatter with reduce -------------------------------------------------

def _scatter_program(method, dtype, dim, reduce=None, scalar=False, unique=True, include_self=None):
    base, idx_shape, src_shape = _case(dim, seed=len(method) + (3 if reduce else 0))

    def program(m):
        dst = _values(m, base, dtype, seed=7)
        src = 0.625 if scalar else _values(m, src_shape, dtype, seed=8)
        index = _index(m, idx_shape, dim, base[dim], unique=unique)
        kwargs = {} if reduce is None else {"reduce": reduce}
        if include_self is not None:
            kwargs["include_self"] = include_self
        out = getattr(dst.clone(), method)(dim, index, src, **kwargs)
        empty = getattr(dst[:2, :2, 0].clone(), method)(0, m.tensor((), dtype=m.int64),
                                                        _values(m, (2, 2), dtype), **kwargs)
        return out, empty
    return program


@pytest.mark.parametrize("dtype", ["float16", "float32", "complex64"])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("scalar", [False, True])
def test_scatter_(dtype, dim, scalar):  # test_scatter_, test_scatter__scalar
    assert_like_torch(_scatter_program("scatter_", dtype, dim, scalar=scalar))


@pytest.mark.parametrize("dtype", ["float16", "float32", "complex64"])
@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("scalar", [False, True])
def test_scatter__reductions(dtype, reduce, scalar):  # test_scatter__reductions
    assert_like_torch(_scatter_program("scatter_", dtype, 1, reduce=reduce, scalar=scalar))


@pytest.mark.parametrize("dtype", ["float16", "float32", "complex64"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_scatter_add_(dtype, dim):  # test_scatter_add_
    assert_like_torch(_scatter_program("scatter_add_", dtype, dim))


def test_scatter_add_mult_index_base():  # test_scatter_add_mult_index_base
    def program(m):
        idx, src = m.zeros(30, 40, dtype=m.int64), m.ones(30, 40)
        return (m.zeros(30, 40).scatter_add_(0, idx, src)[0, :],
                m.zeros(30, 40).scatter_add_(1, idx, src)[:, 0])
    assert_like_torch(program)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, dtype, include_self):  # test_scatter_reduce_sum/prod/mean/amax/amin
    program = _scatter_program("scatter_reduce_", dtype, 1, reduce=reduce, unique=False,
                               include_self=include_self)
    # torch's own test: float16 within atol 0.04 / rtol 0.05 (accumulation order)
    assert_like_torch(program, rtol=0.05 if dtype == "float16" else 1e-6,
                      atol=0.04 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("reduce, src", [("amax", [1, float("nan"), -float("inf"), -float("inf"), 2,
                                                   float("inf")]),
                                          ("amin", [1, float("nan"), -2, -float("inf"),
                                                    float("inf"), float("inf")])])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_nan_inf(reduce, src, dtype, include_self):  # test_scatter_reduce_amax/amin
    def program(m):
        out = m.zeros(3, dtype=getattr(m, dtype))
        return out.scatter_reduce_(0, m.tensor([0, 0, 1, 1, 2, 2]),
                                   m.tensor(src, dtype=getattr(m, dtype)), reduce,
                                   include_self=include_self)
    assert_like_torch(program)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_scatter_expanded_index(dtype):  # test_scatter_expanded_index
    def program(m):
        results = []
        for size in ([50, 17], [50, 1], [50, 8, 7], [50, 3, 4, 5]):
            dst = _values(m, size, dtype)
            shape = [1] * len(size)
            shape[0] = 100
            idx = m.tensor(np.random.default_rng(9).integers(0, 50, shape))
            idx[(idx > 1) & (idx < 4)] = 0  # empty rows
            idx = idx.expand([100] + size[1:])
            src = _values(m, [100] + size[1:], dtype, seed=2)
            results += [dst.scatter_add(0, idx, src), dst.scatter_add(0, idx.contiguous(), src)]
            for reduce in REDUCTIONS:
                for include_self in (True, False):
                    results += [dst.scatter_reduce(0, i, src, reduce=reduce,
                                                   include_self=include_self)
                                for i in (idx, idx.contiguous())]
        return results
    tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    assert_like_torch(program, rtol=tol, atol=tol)


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add_broadcasted_index(dim):  # test_scatter_add_broadcasted_index_deterministic
    def program(m):
        inp = _values(m, (3, 4), "float32")
        src_shape = [3, 4]
        src_shape[dim] = 10
        idx = m.tensor(np.random.default_rng(11).integers(0, 3, 10)).unsqueeze(1 - dim)
        src = _values(m, src_shape, "float32")
        return inp.clone().scatter_add_(dim, idx.expand(src_shape), src)
    assert_like_torch(program, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["bool", "int64", "float64"])
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_argument_repeated_indices(dtype, reduce):  # scatter's older reduce=
    def program(m):
        dst = _values(m, (4, 3), dtype, seed=20)
        index = m.tensor([[0, 1, 0], [0, 1, 3], [2, 1, 0]])
        return (dst.scatter(0, index, _values(m, (3, 3), dtype, seed=21), reduce=reduce),
                dst.scatter(0, index, 2.5, reduce=reduce), m.scatter(dst, 1, index[:, :2], True,
                                                                     reduce=reduce))
    assert_like_torch(program)


def test_scatter_reduce_argument_has_no_derivative():  # derivatives.yaml: not implemented
    def program(m):
        x = m.zeros(3, requires_grad=True)
        out = x.scatter(0, m.tensor([0]), 2.0, reduce="add")
        return out.requires_grad, out.sum().backward()
    assert_like_torch(program)


def test_scatter_reduce_argument_warns_once_for_tensor_src():
    gradkit._user_frames._warned_once.clear()
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src is "
                                         "deprecated") as caught:
        for _ in range(2):
            gradkit.zeros(3).scatter(0, gradkit.tensor([0]), gradkit.ones(1), reduce="add")
    assert len(caught) == 1


# -- gradients ---------------------------------------------------------------------------------

@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients(reduce, include_self):  # the OpInfo gradient checks
    def program(m):
        dst = m.tensor(np.random.default_rng(12).uniform(0.5, 2, (4, 5)), requires_grad=True)
        src = m.tensor(np.random.default_rng(13).uniform(0.5, 2, (6, 5)), requires_grad=True)
        index = m.tensor(np.random.default_rng(14).integers(0, 4, (6, 5)))
        out = dst.scatter_reduce(0, index, src, reduce, include_self=include_self)
        grads = m.autograd.grad((out * out).sum(), (dst, src), create_graph=True)
        second = m.autograd.grad(sum(g.sum() for g in grads), (dst, src), allow_unused=True)
        return out, grads, second
    assert_like_torch(program, rtol=1e-12, atol=1e-12)
    dst = gradkit.tensor(np.random.default_rng(12).uniform(0.5, 2, (4, 5)), requires_grad=True)
    src = gradkit.tensor(np.random.default_rng(13).uniform(0.5, 2, (6, 5)), requires_grad=True)
    index = gradkit.tensor(np.random.default_rng(14).integers(0, 4, (6, 5)))

    def fn(a, b):
        return a.scatter_reduce(0, index, b, reduce, include_self=include_self)
    assert gradkit.autograd.gradcheck(fn, (dst, src))
    if reduce not in ("amax", "amin"):  # their gradient is piecewise constant in the ties
        assert gradkit.autograd.gradgradcheck(fn, (dst, src))


@pytest.mark.parametrize("method", ["gather", "scatter", "scatter_add"])
def test_gather_scatter_gradients(method):  # the OpInfo gradient checks
    def program(m):
        x = m.tensor(np.random.default_rng(15).standard_normal((4, 5)), requires_grad=True)
        src = m.tensor(np.random.default_rng(16).standard_normal((3, 5)), requires_grad=True)
        index = _index(m, (3, 5), 0, 4)
        out = x.gather(0, index) if method == "gather" else getattr(x, method)(0, index, src)
        inputs = (x,) if method == "gather" else (x, src)
        return out, m.autograd.grad((out * out).sum(), inputs)
    assert_like_torch(program, rtol=1e-12, atol=1e-12)


def test_inputs_by_keyword_are_inputs():  # torch's index=, src= and dim= keywords
    def program(m):
        x = m.tensor(np.random.default_rng(17).standard_normal((3, 4)), requires_grad=True)
        src = m.tensor(np.random.default_rng(18).standard_normal((2, 4)), requires_grad=True)
        index = m.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])
        outs = [x.scatter(0, index, src=src), x.scatter_add(dim=0, index=index, src=src),
                m.gather(x, 0, index=index), x.scatter_reduce(0, index=index, src=src,
                                                               reduce="sum")]
        return outs, m.autograd.grad(sum((o * o).sum() for o in outs), (x, src))
    assert_like_torch(program, rtol=1e-12, atol=1e-12)


# -- errors ------------------------------------------------------------------------------------

ERRORS = {
    "gather index out of range": lambda m: m.zeros(3, 4).gather(1, m.tensor([[4]])),
    "gather negative index": lambda m: m.zeros(3, 4).gather(1, m.tensor([[-1]])),
    "scatter index out of range": lambda m: m.zeros(3, 4).scatter(0, m.tensor([[3]]), 1.0),
    "scatter_add index out of range":
        lambda m: m.zeros(3, 4).scatter_add(1, m.tensor([[5]]), m.ones(1, 1)),
    "scatter_reduce index out of range":
        lambda m: m.zeros(3, 4).scatter_reduce(0, m.tensor([[7]]), m.ones(1, 1), "sum"),
    "gather int32 index": lambda m: m.zeros(3, 4).gather(1, m.tensor([[0]], dtype=m.int32)),
    "gather float index": lambda m: m.zeros(3, 4).gather(1, m.tensor([[0.0]])),
    "scatter int32 index": lambda m: m.zeros(3, 4).scatter(1, m.tensor([[0]], dtype=m.int32), 1.0),
    "scatter_add int16 index":
        lambda m: m.zeros(3, 4).scatter_add(1, m.tensor([[0]], dtype=m.int16), m.ones(1, 1)),
    "gather index of other ndim": lambda m: m.zeros(3, 4).gather(1, m.tensor([0])),
    "gather index too large": lambda m: m.zeros(3, 4).gather(1, m.zeros(4, 1, dtype=m.int64)),
    "scatter src of other dtype":
        lambda m: m.zeros(3, 4).scatter(1, m.tensor([[0]]), m.ones(1, 1, dtype=m.float64)),
    "scatter_add src of other dtype":
        lambda m: m.zeros(3, 4).scatter_add(1, m.tensor([[0]]), m.ones(1, 1, dtype=m.float64)),
    "scatter index larger than src":
        lambda m: m.zeros(3, 4).scatter(1, m.zeros(2, 2, dtype=m.int64), m.ones(1, 1)),
    "scatter_reduce unknown reduction":
        lambda m: m.zeros(3).scatter_reduce(0, m.tensor([0]), m.ones(1), "max"),
    "scatter unknown reduce": lambda m: m.zeros(3).scatter(0, m.tensor([0]), m.ones(1),
                                                           reduce="sum"),
    "gather dim out of range": lambda m: m.zeros(3, 4).gather(2, m.zeros(3, 4, dtype=m.int64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):  # index range, index dtype and shape checks of scatter/gather
    assert_like_torch(ERRORS[name])
