"""The expectations of torch's test/test_torch.py, second half, from test_add to test_trapz:
programs run in gradkit and in torch 2.13 and compared (values, dtypes, shapes, errors by type
and first message line). See test_torch_py_expectations_part2.py for the first programs and
docs/torch_expectations.md for the tests out of scope."""
import copy
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.outcome import assert_same_outcome, outcome  # noqa: E402
from torch_expectations.programs import Programs, normal, tried, uniform  # noqa: E402
from test_torch_py_expectations_part2 import ALL_DTYPES, MATH_DTYPES  # noqa: E402

program = Programs()


@program(rtol=1e-6)
def add_contiguity_types_and_alpha(m):  # test_add
    m1 = m.tensor(normal(10, 10), dtype=m.float32)
    v1 = m.tensor(normal(10, seed=1), dtype=m.float32)
    res = m1.clone()
    res[:, 3].add_(2)
    res[3].add_(2)
    one = m.tensor(1, dtype=m.uint8)
    b1 = m.tensor([True, False, False, True, False, False])
    b2 = m.tensor([True, True, False, False, False, True])
    i1, i2 = m.tensor([1], dtype=m.int8), m.tensor([2], dtype=m.int8)
    return (m.add(m1[4], v1), m.add(m1[:, 4], v1), res, m1 + 3, 3 + m1, m1 + m.tensor(3),
            m.add(one, 1), (m1 + m1.t()).is_contiguous(), m.tensor([1.0]) + m.tensor([]),
            b1 + b2, m.add(m.zeros(2, 3, dtype=m.bool), m.zeros(2, 3, dtype=m.bool), alpha=0),
            tried(lambda: m.add(i1, i2, alpha=True)), tried(lambda: m.add(i1, i2, alpha=1.0)))


@program()
def sub_typing_errors(m):  # test_sub_typing, test_sub
    b1 = m.tensor([True, False, False, True, False, False])
    b2 = m.tensor([True, True, False, False, False, True])
    i1, i2 = m.tensor([1], dtype=m.int8), m.tensor([2], dtype=m.int8)
    got = [tried(lambda: b1 - b2), tried(lambda: 1 - b1), tried(lambda: b2 - 1),
           tried(lambda: m.sub(i1, i2, alpha=True)), tried(lambda: m.sub(i1, i2, alpha=1.0))]
    for name in ALL_DTYPES:
        dt = getattr(m, name)
        got.append(tried(lambda dt=dt: m.tensor([2.34, 4.44], dtype=dt) -
                         m.tensor([1.23, 2.33], dtype=dt)))
    return got


@program(rtol=1e-6)
def mul_bool_and_columns(m):  # test_mul, test_mul_intertype_scalar
    m1 = m.tensor(normal(10, 10), dtype=m.float32)
    res = m1.clone()
    res[:, 3].mul_(2)
    got = [res, m.tensor([True, False, False, True]) * m.tensor([True, False, True, False])]
    for dt in (m.float32, m.float64):
        x = m.tensor(1.5, dtype=dt)
        y = m.tensor(3, dtype=m.int32)

        def imul(y=y, x=x):
            y *= x
        got += [x * y, y * x, tried(imul)]
        x *= y
        got.append(x)
    return got


@program(rtol=1e-6)
def cumsum_cumprod_bool(m):  # test_cumsum, test_cumprod
    a = m.tensor([[True, False, True], [False, False, False], [True, True, True]])
    x = m.tensor(uniform(20, 20), dtype=m.float32)
    return [m.cumsum(x, 1), m.cumprod(x, 1)] + [f(t, d) for f in (m.cumsum, m.cumprod)
                                                for t in (a, a.byte()) for d in (0, 1)]


@program(rtol=1e-5, atol=1e-7)
def std_var_mean(m):  # test_std_mean, test_std_mean_all_dims, test_std_mean_some_dims,
    # test_var_mean, test_var_mean_all_dims, test_var_mean_some_dims
    x = m.tensor(uniform(10, 5, 4), dtype=m.float32)
    got = []
    for unbiased in (False, True):
        got += [m.std_mean(x, unbiased=unbiased), m.var_mean(x, unbiased=unbiased)]
        for dim in (0, 1, 2, (0, 2), (1, 2), (0, 1, 2)):
            for keepdim in (False, True):
                got += [m.std_mean(x, dim=dim, unbiased=unbiased, keepdim=keepdim),
                        m.var_mean(x, dim=dim, unbiased=unbiased, keepdim=keepdim),
                        x.std(dim=dim, unbiased=unbiased, keepdim=keepdim)]
    return got


@program()
def histc_values_and_errors(m):  # test_histc
    f = lambda *v, dt=m.float32: m.tensor(list(v), dtype=dt)  # noqa: E731
    inf, nan = float("inf"), float("nan")
    x = m.tensor(normal(301), dtype=m.float32)
    return (tried(lambda: m.histc(f(1), bins=-1)), m.histc(f(2, 5)), m.histc(m.ones(5), bins=5),
            m.histc(m.ones(5), bins=5, min=2, max=3), m.histc(f(2, 4, 2, 2, 5, 4), 5, 1, 5),
            m.histc(f(1, 2, 1), bins=4, min=0, max=3),
            m.histc(f(1, 2, 1, dt=m.float64), bins=4, min=0, max=3),
            m.histc(m.tensor(0.0), bins=1, min=0, max=3), tried(lambda: m.histc(f(inf))),
            tried(lambda: m.histc(f(1, 2, inf))), m.histc(f(inf), bins=1, min=0, max=3),
            m.histc(f(1, 2, inf), bins=4, max=3), tried(lambda: m.histc(f(nan))),
            tried(lambda: m.histc(f(1, 2, 3), bins=4, min=5, max=1)), m.histc(x, bins=10),
            m.histc(x, min=0.1, max=1), m.histc(m.tensor(normal(30, 3), dtype=m.float32)[:, 2]),
            m.histc(m.tensor(normal(1, 5, 1, 2), dtype=m.float32).expand(3, 5, 7, 2)),
            tried(lambda: m.histc(f(-inf, dt=m.float64))), tried(lambda: m.histc(f(inf, inf, inf))),
            tried(lambda: m.histc(f(inf, dt=m.float16))), m.histc(f(1e30), bins=3),
            m.histc(f(-1e300, dt=m.float64), bins=3))


@program()
def bool_comparisons_and_writes(m):  # test_bool_tensor_comparison_ops,
    # test_bool_tensor_value_change
    a = m.tensor([True, False, True, False, True, False])
    b = m.tensor([True, False, True, True, True, True])
    x = m.tensor([True, False])
    x[0] = False
    x[1] = True
    return (a == b, a != b, a < b, a > b, a >= b, a <= b, a > False, a == m.tensor(True),
            a == m.tensor(0, dtype=m.bool), a.equal(b), x)


@program()
def unfold_empty_and_scalars(m):  # test_unfold_all_devices_and_dtypes, test_unfold_scalars
    got = []
    for name in ALL_DTYPES:
        dt = getattr(m, name)
        got.append(tried(lambda dt=dt: m.randint(5, (0, 1, 3, 0), dtype=dt).unfold(2, 3, 2).shape))
        got += [tried(lambda dt=dt: m.randint(300, (2,), dtype=dt).dtype),
                tried(lambda dt=dt: m.randint(-1, 2, (2,), dtype=dt).dtype)]
    x = m.tensor(0.5)
    return got + [x.unfold(0, 0, 1), x.unfold(0, 0, 2), x.unfold(0, 1, 1)]


@program()
def all_dtypes_copy_resize_view_fill_clone_cat(m):  # test_copy_all_dtypes_and_devices,
    # test_resize_all_dtypes_and_devices, test_resize_as_all_dtypes_and_devices,
    # test_view_all_dtypes_and_devices, test_fill_all_dtypes_and_devices,
    # test_clone_all_dtypes_and_devices, test_cat_all_dtypes_and_devices
    got = []
    for name in ALL_DTYPES:
        dt = getattr(m, name)
        x = m.tensor([1, 2, 3, 4], dtype=dt)
        y = copy.copy(x)
        y.fill_(1)
        r = m.tensor([[1, 2], [3, 4], [5, 6]], dtype=dt)
        r.resize_((2, 2))
        ra = m.tensor([[1, 2], [3, 4], [5, 6]], dtype=dt)
        ra.resize_as_(m.tensor([[1, 2, 3], [4, 5, 6]], dtype=dt))
        got += [x, r, ra.shape, m.tensor([[1, 2], [3, 4], [5, 6]], dtype=dt).view(6).shape,
                m.tensor((1, 1), dtype=dt).clone(), m.cat((r, r), 0), m.cat((r, r), 1)]
        bound = 100 if dt in (m.uint8, m.int8) else 2000
        for t in (m.tensor((10, 10), dtype=dt), m.empty(100, dtype=dt)):
            got += [t.fill_(n).clone() for n in range(-bound, bound, bound // 10)]
    return got


@program()
def tensor_factories_empty(m):  # test_tensor_factories_empty, test_zeros_like, test_ones_like
    got = []
    for shape in ((5, 0, 1), (0,), (0, 0, 1, 0, 2, 0, 0)):
        for name in ALL_DTYPES:
            dt = getattr(m, name)
            z = m.zeros(shape, dtype=dt)
            got += [z, m.zeros_like(z), m.full(shape, 3, dtype=dt), m.full_like(z, 3),
                    m.ones(shape, dtype=dt), m.ones_like(z), m.flatten(z, 1), m.split(z, 0, dim=0),
                    m.empty(shape, dtype=dt).shape, m.empty_like(z).shape,
                    m.empty_strided(shape, (0,) * len(shape), dtype=dt).shape,
                    tried(lambda dt=dt, shape=shape: m.randint(6, shape, dtype=dt).shape),
                    tried(lambda z=z: m.randint_like(z, 6).shape),
                    tried(lambda dt=dt, shape=shape: m.rand(shape, dtype=dt).shape),
                    tried(lambda dt=dt, shape=shape: m.randn(shape, dtype=dt).shape),
                    tried(lambda z=z: m.randn_like(z).shape)]
    return got + [m.arange(0), m.eye(0), m.eye(0, 0), m.eye(5, 0), m.eye(0, 5),
                  m.linspace(1, 1, 0), m.logspace(1, 1, 0), m.randperm(0), m.bartlett_window(0),
                  m.bartlett_window(0, periodic=False), m.hamming_window(0), m.hann_window(0),
                  m.tensor([[[]]]), m.as_tensor([[[]]])]


@program()
def eye_over_dtypes(m):  # test_eye
    got = []
    for name in ALL_DTYPES:
        for n, k in ((3, 5), (7, 3), (5, 5)):
            naive = m.zeros(n, k, dtype=getattr(m, name))
            naive.diagonal(dim1=-2, dim2=-1).fill_(1)
            got += [m.eye(n, k, dtype=getattr(m, name)), naive]
    return got


@program(rtol=1e-6)
def addcmul_addcdiv_over_dtypes(m):  # test_addcmul, test_addcdiv
    got = []
    for name in MATH_DTYPES:
        dt = getattr(m, name)
        if dt.is_floating_point:
            a, b, c = (m.tensor(uniform(2, 2, seed=s) + 0.5, dtype=dt) for s in (0, 1, 2))
            value = 0.1
        else:
            low = 1 if dt == m.uint8 else -5
            a, b, c = (m.tensor(np.random.default_rng(s).integers(low, 5, (2, 2)), dtype=dt)
                       for s in (0, 1, 2))
            c = c + (c == 0).to(dt)
            value = 3
        got += [m.addcmul(a, b, c, value=value), tried(lambda a=a, b=b, c=c: m.addcmul(a, 2, b, c)),
                tried(lambda a=a, b=b, c=c: m.addcdiv(a, b, c, value=0.5)),
                tried(lambda a=a, b=b, c=c: m.addcdiv(a, 0.5, b, c))]
    return got


@program()
def empty_tensor_props_and_narrow(m):  # test_empty_tensor_props, test_narrow_empty
    got = []
    for size in ((0,), (0, 3), (5, 0), (5, 0, 3, 0, 2), (0, 3, 0, 2), (0, 5, 0, 2, 0)):
        x = m.empty(size)
        got += [x.shape, x.is_contiguous(), x.stride()]
    x = m.zeros(2, 3, 4)
    return got + [x.narrow(d, x.size(d), 0).shape for d in range(3)]


@program(rtol=1e-9)
def tensordot_dims(m):  # test_tensordot
    a = m.arange(60.0).reshape(3, 4, 5)
    b = m.arange(24.0).reshape(4, 3, 2)
    c, d = m.tensor(normal(2, 3, 4, 5)), m.tensor(normal(4, 5, 6, 7))
    return m.tensordot(a, b, dims=([1, 0], [0, 1])), m.tensordot(c, d, dims=2), m.tensordot(c, d)


@program(rtol=1e-6)
def linspace_cases(m):  # test_linspace
    return (m.linspace(0.25, 0.75, 137), tried(lambda: m.linspace(0, 1, -1)), m.linspace(0, 1, 1),
            m.linspace(2, 0, 3))


@program()
def logical_comparisons_over_dtypes(m):  # test_logical
    got = []
    for name in ALL_DTYPES[1:]:
        x = m.tensor([1, 2, 3, 4], dtype=getattr(m, name))
        b = m.tensor([2], dtype=getattr(m, name))
        for op in ("lt", "le", "ge", "gt", "eq", "ne"):
            got += [tried(lambda x=x, op=op: getattr(x, op)(2)),
                    tried(lambda x=x, op=op, b=b: getattr(x, op)(b))]
    x = m.tensor([True, False, True, False])
    return got + [x.lt(True), x.le(True), x.ge(True), x.gt(True), x.eq(True), x.ne(True)]


@program()
def index_copy_fill_select(m):  # test_index_copy, test_index_fill, test_index_select
    dest = m.tensor(normal(20, 4, 5), dtype=m.float32)
    src = m.tensor(normal(3, 4, 5, seed=1), dtype=m.float32)
    idx = m.tensor([7, 0, 13])
    d1 = m.tensor(normal(20), dtype=m.float32)
    got = [dest.clone().index_copy_(0, idx, src), d1.index_copy_(0, idx, src[:, 0, 0]),
           m.zeros(2, 2, dtype=m.bool).index_copy_(0, m.tensor([0, 1]), m.ones(2, 2, dtype=m.bool)),
           tried(lambda: m.zeros(3, 5).index_copy_(dim=1, index=m.tensor([3]), source=m.zeros(3)))]
    for name in ALL_DTYPES:
        x = m.tensor([[1, 2], [4, 5]], dtype=getattr(m, name))
        got.append(tried(lambda x=x: x.index_fill_(1, m.tensor([0]), 0)))
    s = m.tensor(normal(3, 4, 5), dtype=m.float32)
    sel = m.index_select(s, 0, m.tensor([2, 1, 0, 1, 2]))
    return got + [sel, sel.shape, m.index_select(m.tensor([False, True, False, False]), 0,
                                                 m.tensor([1]))]


@program()
def take_put_empty_and_scatter(m):  # test_take_empty, test_put_empty, test_scatter_bool,
    # test_scatter_add_bool, test_scatter_to_large_input, test_scatter_add_to_large_input
    got = []
    for shape in ((0,), (0, 1, 2, 0), (1, 2, 3)):
        for ishape in ((0,), (0, 1, 2, 0)):
            inp = m.ones(shape)
            ind = m.empty(ishape, dtype=m.int64)
            got.append(m.take(inp, ind))
            for acc in (False, True):
                got.append(inp.clone().put_(ind, m.ones(ishape), accumulate=acc))
    one = m.ones(2, 2)
    index = m.tensor([[1], [2]])
    x = m.ones(2, 3, dtype=m.bool)
    y = m.ones(2, 5, dtype=m.bool)
    return got + [m.zeros(4, 4).scatter_(0, index, one), m.zeros(4, 4).scatter_add_(0, index, one),
                  m.zeros(3, 3, dtype=m.bool).scatter_(0, m.tensor([[0, 1, 2], [0, 1, 2]]), x),
                  m.zeros(3, 5, dtype=m.bool).scatter_add_(
                      0, m.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), y)]


@program()
def masked_ops_bool(m):  # test_masked_scatter_bool_tensor, test_masked_fill_bool_tensor
    src = m.tensor([True, True, True])
    dst = m.tensor([False, False, False])
    dst.masked_scatter_(m.tensor([False, True, False]), src)
    after = dst.masked_scatter(m.tensor([True, False, True]), src)
    fill = m.tensor([True, False, True])
    fill.masked_fill_(m.tensor([False, True, False]), True)
    return dst, after, fill, fill.masked_fill(m.tensor([False, True, False]), False)


def masked_select_uint8(m):  # test_masked_select (the mask of uint8 and its warning)
    got = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in ALL_DTYPES:
            src = m.tensor(list(range(10)), dtype=getattr(m, name))
            for mask_dt in (m.uint8, m.bool):
                mask = m.tensor([1, 0, 0, 1, 1, 0, 1, 0, 0, 1], dtype=mask_dt)
                got.append(tried(lambda src=src, mask=mask: src.masked_select(mask)))
    return got, [str(w.message).replace("gradkit", "torch") for w in caught]


def test_masked_select_uint8_as_torch():  # test_masked_select
    assert_same_outcome(outcome(masked_select_uint8, gradkit),
                        outcome(masked_select_uint8, torch))


@program()
def tensor_shape_empty(m):  # test_tensor_shape_empty
    x = m.zeros((0, 1, 3, 0))
    return (m.flatten(x, 0, 3), m.flatten(x, 0, 2), m.flatten(x, 1, 2), m.unsqueeze(x, 1),
            m.squeeze(x, 1), m.squeeze(x), m.transpose(x, 1, 3), m.zeros(5, 0).t(),
            m.select(x, 2, 2), x.repeat(9, 7, 5, 2, 3), x.permute(2, 3, 0, 1),
            m.diagonal(m.zeros(5, 0)), m.diagonal(m.zeros(0, 5)),
            m.diagonal(m.zeros(5, 0), offset=1),
            m.diagonal(m.zeros(0, 5), offset=1), m.diagonal(m.zeros(3, 4, 5, 6), offset=45252),
            m.diagonal(m.zeros(3, 4, 5, 6), offset=-45252), m.diagflat(m.tensor([])),
            m.diagflat(m.tensor([]), offset=1), m.diagflat(m.tensor([[]])),
            m.diagflat(m.tensor([[]]), offset=1), m.stack((x, x, x, x)), m.chunk(x, 1, dim=0),
            m.chunk(x, 3, dim=0), m.chunk(x, 3, dim=2), m.split(x, (0, 1, 2), dim=2),
            tried(lambda: m.split(x, 0, dim=1)), m.split(x, 1, dim=0), m.split(x, 0, dim=0))


@program()
def dim_function_empty(m):  # test_dim_function_empty
    shape = (0, 1, 2, 0)
    x = m.zeros(shape)
    F = m.nn.functional
    e = lambda s: m.empty(s, dtype=m.int64)  # noqa: E731
    y = m.tensor(normal(2, 3, 4), dtype=m.float32)
    c = x.clone()
    i0, i01 = m.tensor([], dtype=m.int64), m.tensor([0, 1])
    return (x.size(3), x.size(2), x.stride(0), x.stride(2), F.glu(x, 0), F.glu(x, 2),
            F.softmax(x, 0), F.softmax(x, 3), F.log_softmax(x, 2), m.cumsum(x, 0), m.cumprod(x, 2),
            x.flip(0), x.flip(2), x.roll(0, 1).roll(0, -1), x.roll(1, x.size(1)), x.roll(1),
            x.roll((1, 1), (3, 1)), x.unbind(0), x.unbind(2),
            m.cross(m.zeros(0, 1, 3, 0), m.zeros(0, 1, 3, 0), dim=2),
            m.renorm(x, 1, 0, 5), m.renorm(x, 1, 2, 5), m.sort(x, dim=0), m.sort(x, dim=2),
            m.topk(x, 0, dim=0), m.topk(x, 1, dim=2), m.topk(y, 0), m.gather(x, 0, e(shape)),
            m.gather(x, 2, e(shape)), m.gather(x, 2, e((0, 1, 3, 0))),
            m.gather(x, 2, e((0, 1, 0, 0))),
            m.gather(y, 0, e((0, 3, 4))), x.clone().scatter_(0, e(shape), x),
            x.clone().scatter_add_(2, e(shape), x), y.clone().scatter_(2, e((2, 3, 0)), y),
            y.clone().scatter_add_(2, e((2, 3, 0)), y), c.index_fill_(0, i0, -1),
            c.index_fill_(2, i01, -1), c.index_copy_(2, i01, m.zeros(0, 1, 2, 0)),
            c.index_add_(2, i0, m.zeros(0, 1, 0, 0)), y.clone().index_fill_(0, i0, -1),
            y.clone().index_copy_(0, i0, m.zeros(0, 3, 4)),
            y.clone().index_add_(0, i0, m.zeros(0, 3, 4)),
            x.index_select(0, i0), x.index_select(2, i0), x.index_select(2, i01),
            y.index_select(0, i0), m.zeros(0, 1, 2).index_select(0, i0))


@program()
def nonzero_over_types(m):  # test_nonzero, test_nonzero_non_diff
    got = []
    shapes = ((12,), (12, 1), (1, 12), (6, 2), (3, 2, 2), (5, 5, 5))
    for name in ("uint8", "int8", "int16", "int32", "float32", "float64", "int64", "bool"):
        for k, shape in enumerate(shapes):
            t = m.tensor(np.random.default_rng(k).integers(0, 2, shape), dtype=getattr(m, name))
            got += [m.nonzero(t), t.nonzero(), m.nonzero(t, as_tuple=True),
                    t.nonzero(as_tuple=True), m.where(t)]
    x = m.tensor(normal(10), requires_grad=True)
    return got + [x.nonzero().requires_grad]


@program(rtol=1e-5, atol=1e-6)
def pdist_norms(m):  # test_pdist_norm
    got = []
    for shape in ((4, 5), (3, 2), (2, 1)):
        for p in (0, 1, 2, 3, 1.5, 2.5, float("inf")):
            for dt in (m.float32, m.float64):
                x = m.tensor(normal(*shape), dtype=dt)
                got += [m.pdist(x, p=p), m.pdist(x.t().contiguous().t(), p=p),
                        m.pdist(x.clone().transpose_(-2, -1), p=p)]
    return got + [m.pdist(m.tensor(normal(1000, 2)), p=2)]


@program(rtol=2e-7)  # float32: NumPy's arctan2, an ulp from torch's (numerics.md)
def atan2_values_and_edges(m):  # test_atan2, test_atan2_edgecases
    a, b = m.tensor(uniform(5, 5)), m.tensor(uniform(5, 5, seed=1))
    pairs = [(0, 0), (0, 1), (0, -1), (-1, 0), (1, 0), (-1, -1), (1, 1), (1, -1), (-1, 1)]
    return [a.atan2(b)] + [
        m.atan2(m.tensor([float(y)], dtype=dt), m.tensor([float(x)], dtype=dt))
                           for dt in (m.float32, m.float64) for x, y in pairs]


@program(rtol=1e-6, atol=1e-6)
def trapz_dx_x_and_errors(m):  # test_trapz
    t = lambda *s: m.tensor(normal(*s), dtype=m.float32)  # noqa: E731
    return (m.trapz(t(2, 3, 4), dx=1, dim=1), m.trapz(t(10, 2), dx=0.1, dim=0),
            m.trapz(t(1, 10), dx=2.3, dim=0), m.trapz(t(0, 2), dx=1.0, dim=0),
            m.trapz(t(0, 2), dx=1.0, dim=1),
            m.trapz(t(2, 3, 4), x=m.tensor([1.0, 2.0, 3.0]), dim=1),
            m.trapz(t(10, 2), x=m.tensor([2.0, 3, 4, 7, 11, 14, 22, 26, 26.1, 30.3]), dim=0),
            m.trapz(t(1, 10), x=m.tensor([1.0]), dim=0), m.trapz(t(0, 2), x=m.tensor([]), dim=0),
            m.trapz(t(0, 2), x=m.tensor([1.0, 2.0]), dim=1),
            tried(lambda: m.trapz(t(2, 3), x=m.tensor([]), dim=2)),
            tried(lambda: m.trapz(t(2, 3), dx=1.0, dim=2)),
            tried(lambda: m.trapz(t(2, 3), x=m.tensor([1.0, 2.0]), dim=1)))


@pytest.mark.parametrize("name", program.names())
def test_program_as_torch(name):
    program.check(name)
