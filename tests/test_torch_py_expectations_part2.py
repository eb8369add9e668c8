"""The expectations of torch's test/test_torch.py, second half (TestTorchDeviceType from
test_contiguous to test_cat_big, the generated NotImplemented tests, the device-free parts of
TestDevicePrecision), as programs run in gradkit and in torch 2.13 and compared: values,
dtypes, shapes, errors by type and first message line. Each program names the torch test it
covers; docs/torch_expectations.md lists the ones out of scope and why. The programs of the
tests from test_add on are in test_torch_py_expectations_part2b.py."""
import numpy as np
import pytest


torch = pytest.importorskip("torch")
from torch_expectations.programs import Programs, normal, tried, uniform  # noqa: E402

program = Programs()


def consec(m, *shape, start=1, dtype=None):
    numel = int(np.prod(shape))
    return m.arange(start, start + numel, dtype=dtype or m.float32).reshape(shape)


ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
              "float64", "complex64", "complex128"]
MATH_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


# -- test_contiguous, test_index, test_advancedindex ---------------------------------------------

@program()
def contiguous_with_size_one_stride(m):  # test_contiguous
    x = m.tensor(normal(1, 16, 5, 5), dtype=m.float32)
    stride = list(x.stride())
    stride[0] = 20
    x.set_(x.storage(), 0, x.size(), stride)
    return x.is_contiguous(), x.stride()


@program()
def index_consec_and_steps(m):  # test_index (the keys not in test_indexing.py's copy)
    r = consec(m, 5, 5, 5)
    idx = m.tensor([2, 4])
    lst = [list(range(i, i + 10)) for i in range(0, 100, 10)]
    t = m.tensor(lst, dtype=m.float64)
    slices = [(slice(1, 9, 4), slice(2, 7, 3)), (slice(0, 10, 7),),
              (slice(3, 4, 1), slice(0, 10, 2))]
    return ([r[idx], r[m.tensor([], dtype=m.int64)].shape, r[2, None].shape,
             r[None, 2:5, None, None].shape, r[2, 1:1, 2]] + [t[k] for k in slices] +
            [tried(lambda: r[1:9:0]), tried(lambda: r[1:9:-1]), tried(lambda: r[0.0:2.0]),
             tried(lambda: r[0.0, :, 0.0]), tried(lambda: r[::1.5]), tried(lambda: r[1:"a"]),
             tried(lambda: r[m.tensor(1.5):3]), r[m.tensor(1):3].shape])


@program()
def advancedindex_set_views(m):  # test_advancedindex (set_ views of a storage)
    ref = m.arange(0.0, 24).view(3, 8)
    strided = m.tensor((), dtype=m.float32)
    strided.set_(ref.storage(), 1, size=m.Size([2, 4]), stride=[8, 2])
    got = [strided[[0, 1], [0]], strided[[1], [0, 1, 1, 0, 3]],
           strided[[[0, 1], [1, 0]], [1, 2]], strided[[[0, 0], [1, 1]], [[0, 1], [1, 2]]]]
    small = m.tensor((), dtype=m.float32)
    small.set_(ref.storage(), 10, size=m.Size([2, 2]), stride=[7, 1])
    small[[0, 1], [1, 0]] = m.tensor([-1.0, 2.0])
    small[[[0], [1]], [[0, 1], [0, 1]]] += 100
    base = m.arange(1.0, 11)
    odd = m.tensor(())
    odd.set_(base.storage(), storage_offset=0, size=m.Size([4]), stride=[2])
    transposed = m.tensor([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]).t_()
    transposed[[0, 1, 2], [0]] = m.tensor([-1, 2, -4])
    return got + [small, ref, odd[[[2, 1], [0, 3]]], transposed, transposed[[[0, 0], [1, 3]],
                                                                          [[0, 1], [1, 2]]]]


@program()
def advancedindex_half(m):  # test_advancedindex (float16: index and set)
    x = consec(m, 10).to(m.float16)
    got = [x[[0]], x[[2, 3, 4]], x[m.tensor([0, 2, 4])]]
    x[[0]] = -2
    x[(2, 3, 4), ] = 3
    x[m.tensor([0, 2, 4])] = m.tensor([5, 4, 3], dtype=m.float16)
    return got + [x, tried(lambda: x[10]), tried(lambda: x[[-11]]),
                  tried(lambda: x[m.tensor([10])])]


@program()
def advancedindex_big(m):  # test_advancedindex_big
    reference = m.arange(0, 123344, dtype=m.int32)
    return reference[[0, 123, 44488, 68807, 123343], ]


# -- test_kthvalue, lu_solve, test_dim_reduction ---------------------------------------------------

@program()
def kthvalue_values_and_nan(m):  # test_kthvalue
    x = m.tensor(uniform(10, 10, 10))
    y = x.narrow(1, 0, 1)
    with_nan = x.clone()
    cols = m.tensor(np.random.default_rng(3).integers(0, 10, 10))
    with_nan[m.arange(10), :, cols] = float("nan")
    rep = m.tensor((3.0, 5, 4, 1, 1, 5), dtype=m.float64)
    return (m.kthvalue(x, 4, keepdim=False), m.kthvalue(x, 7, 0), m.kthvalue(y, 3),
            m.kthvalue(y.contiguous(), 3), m.kthvalue(rep, 3)[0], m.kthvalue(rep, 2)[0],
            [m.kthvalue(with_nan, k) for k in (1, 10, 9, 4)], x.sort())


@program(rtol=1e-9, atol=1e-12)
def lu_solve_batched_and_broadcast(m):  # test_lu_solve, test_lu_solve_batched,
    # test_lu_solve_batched_broadcasting, test_lu_solve_batched_non_contiguous
    a = m.tensor(normal(3, 5, 5) + 5 * np.eye(5))
    b = m.tensor(normal(3, 5, 4, seed=1))
    lu, piv = m.linalg.lu_factor(a)
    x = m.lu_solve(b, lu, piv)
    a_nc, b_nc = a.permute(0, 2, 1), m.tensor(normal(4, 5, 3, seed=2)).permute(2, 1, 0)
    lu_nc, piv_nc = m.linalg.lu_factor(a_nc)
    a_bc = m.tensor(normal(2, 1, 3, 4, 4, seed=3) + 4 * np.eye(4))
    lu_bc, piv_bc = m.linalg.lu_factor(a_bc)
    b_bc = m.tensor(normal(4, 6, seed=4))
    lu0, piv0 = m.linalg.lu_factor(m.zeros(3, 0, 0, dtype=m.float64))
    return (x, (a @ x - b).abs().max() < 1e-12, [m.lu_solve(b[i], lu[i], piv[i]) for i in range(3)],
            m.lu_solve(b_nc, lu_nc, piv_nc), m.lu_solve(b_bc, lu_bc, piv_bc),
            m.zeros(3, 0, 3, dtype=m.float64).lu_solve(lu0, piv0).shape)


@program(rtol=1e-8, atol=1e-10)
def solves_over_many_batches(m):  # test_lu_solve_batched_many_batches,
    # test_triangular_solve_batched_many_batches (2048 batches, not torch's 65536 and more)
    a = m.tensor(normal(2048, 5, 5) + 5 * np.eye(5))
    lu, piv = m.linalg.lu_factor(a)
    b = m.tensor(normal(2048, 5, 10, seed=1))
    x = m.lu_solve(b, lu, piv)
    tri = m.triu(m.tensor(normal(32, 64, 5, 5, seed=2) + 3 * np.eye(5)))
    y, _ = m.triangular_solve(m.tensor(normal(5, 1, seed=3)), tri, transpose=True)
    z, _ = m.triangular_solve(m.tensor(normal(64, 32, 3, 1, seed=4)), tri[0, 0, :3, :3])
    return x, (a @ x - b).abs().max() < 1e-10, y, z


@program()
def dim_reduction_over_dtypes(m):  # test_dim_reduction (results, keepdim, errors of mean)
    example = [[-1, 2, 1], [5, 3, 6]]
    got = []
    for dt in (m.float64, m.float32, m.int64, m.int32, m.int16):
        x = m.tensor(example, dtype=dt)
        got += [x.sum().item(), x.sum(0), x.sum(1), x.prod(), x.prod(0), x.prod(1), x.max(),
                x.max(0), x.max(1), x.min(), x.min(0), x.min(1), x.argmax(), x.argmax(dim=None),
                x.argmax(dim=0), x.argmax(dim=1), x.argmax(dim=0, keepdim=True),
                x[:, :2].argmax(), x.argmin(), x.argmin(dim=1, keepdim=True), x[:, :2].argmin(),
                tried(x.mean), tried(lambda x=x: x.mean(0)), tried(lambda x=x: x.mean((0, 1)))]
    return got


@program(rtol=1e-6, atol=1e-7)
def dim_reduction_keepdim(m):  # test_dim_reduction (keepdim and singleton dims, 10 reductions)
    norm2 = lambda t, dim, keepdim=False: m.norm(t, 2, dim, keepdim)  # noqa: E731
    fns = [m.mean, m.median, m.mode, norm2, m.prod, m.std, m.sum, m.var, m.max, m.min]
    got = []
    for fn in fns:
        def one(*args, fn=fn, **kwargs):
            result = fn(*args, **kwargs)
            return result if isinstance(result, m.Tensor) else result[0]

        for shape, dim in (((3, 4, 5), 1), ((3, 1, 5), 1), ((1,), 0)):
            x = m.tensor(normal(*shape), dtype=m.float32)
            got += [one(x, dim), one(x, dim, keepdim=True)]
    return got


@program(rtol=3e-7)  # float32 pow: torch's vectorised powf differs in the last bits
def remainder_overflow_and_rpow(m):  # test_remainder_overflow, test_rpow
    x = m.tensor(23500, dtype=m.int64)
    q = 392486996410368
    t = m.tensor(normal(10, 10), dtype=m.float32)
    s = m.tensor(normal(1), dtype=m.float32).squeeze()
    return x % q, -x % q, x % -q, -x % -q, m.pow(2, t), 2 ** t, m.pow(2, s), 2 ** s


@program()
def removed_linalg_functions(m):  # test_symeig, test_lstsq, test_eig, test_multinomial_alias
    # (removed from torch: the same refusal, or no such private function)
    a = m.eye(3, dtype=m.float64)
    return (tried(lambda: m.symeig(a, eigenvectors=True)), tried(lambda: a.symeig()),
            tried(lambda: m.lstsq(a, a)), tried(lambda: m.eig(a, True)),
            tried(lambda: m.solve(a, a)), tried(lambda: m.matrix_rank(a)),
            hasattr(m, "_multinomial_alias_setup"))


@program(rtol=1e-8, atol=1e-10)
def svd_some_and_compute_uv(m):  # test_svd, test_svd_no_singularvectors
    got = []
    for dims in ((3, 3), (5, 3, 3), (7, 3), (5, 7, 3), (3, 7), (5, 3, 7)):
        x = m.tensor(normal(*dims))
        for some in (True, False):
            u, s, v = m.svd(x, some=some)
            k = min(dims[-2:])
            rebuilt = u[..., :k] @ s.diag_embed() @ v[..., :k].transpose(-2, -1)
            got += [u.shape, s, v.shape, (rebuilt - x).abs().max() < 1e-12]
            u0, s0, v0 = m.svd(x, some=some, compute_uv=False)
            got += [u0, s0, v0]
        t = x.transpose(-2, -1)
        got.append(m.svd(t)[1])
    return got


@program(rtol=1e-6, atol=1e-6)
def lerp_broadcast_and_weights(m):  # test_lerp
    shapes = [(), (5,), (5, 5), (5, 5, 5)]
    got = []
    for i, sa in enumerate(shapes):
        for j, sb in enumerate(shapes):
            start = m.tensor(normal(*sa, seed=i), dtype=m.float32)
            end = m.tensor(normal(*sb, seed=10 + j), dtype=m.float32)
            for weight in (m.tensor(normal(*sa, seed=20 + i), dtype=m.float32), 0.375):
                got += [m.lerp(start, end, weight), start.lerp(end, weight)]
    return got


@program()
def diagflat_offsets(m):  # test_diagflat
    x = m.tensor(normal(100), dtype=m.float32)
    y = m.tensor(normal(2, 3, 4), dtype=m.float32)
    return (m.diagflat(x), m.diagflat(x, 17), m.diagflat(y), m.diagflat(y.transpose(2, 0)),
            y.transpose(2, 0).is_contiguous())


@program(rtol=1e-5, atol=1e-6)
def norm_full_dim_and_matrix(m):  # test_norm
    x = m.tensor(normal(25), dtype=m.float32)
    xx = m.tensor(normal(25, 25), dtype=m.float32)
    inf = float("inf")
    ps = [0, 1, 2, 3, 4, inf, -inf]
    return ([x.norm(p) for p in ps] + [xx.norm(p, 1) for p in ps] +
            [xx.norm("fro"), xx.norm("nuc"), 2 * m.norm(m.ones(10000)), m.norm(m.ones(40000))])


@program(rtol=1e-9, atol=1e-12)
def nuclear_norm_axes(m):  # test_nuclear_norm_axes_small_brute_force
    got = []
    for shape, axes in (((2, 1), (0, 1)), ((1, 2), (1, 0)), ((2, 3, 2), (0, 2)),
                        ((2, 1, 3, 2), (3, 1)), ((4, 6), (1, 0))):
        x = m.tensor(normal(*shape))
        every_7th = tuple(slice(None, None, 7) for _ in shape)
        strided = m.tensor(normal(*[7 * s for s in shape]))[every_7th]
        for t in (x, x.transpose(-1, -2), strided):
            ans = m.norm(t, "nuc", dim=axes)
            got += [ans, ans.is_contiguous()]
    return got


@program()
def nuclear_norm_exceptions(m):  # test_nuclear_norm_exceptions
    got = []
    for lst in ([], [1], [1, 2]):
        for axes in ((), (0,), (0, 1)):
            x = m.tensor(lst, dtype=m.float64)
            got.append(tried(lambda x=x, axes=axes: m.norm(x, "nuc", axes)))
    x = m.tensor([[0, 1, 2], [3, 4, 5]], dtype=m.float64)
    return got + [tried(lambda: m.norm(x, "nuc", (0, 0))), tried(lambda: m.norm(x, "nuc", (0, 2)))]


@program(rtol=1e-6, atol=1e-7)
def dist_as_norm(m):  # test_dist
    inf = float("inf")
    pairs = [(m.tensor(normal(5), dtype=m.float32), m.tensor(normal(5, seed=1), dtype=m.float32)),
             (m.zeros(3), m.tensor([0.0, 1.0, 0.0]))]
    return [[m.dist(x, y, p), m.norm(x - y, p)]
            for x, y in pairs for p in (0, 1, 2, 3, 4, inf, -inf)]


@program(rtol=1e-9, atol=1e-12)
def geqrf_and_qr(m):  # test_geqrf, test_qr
    a = m.tensor(normal(5, 5))
    got = [m.geqrf(a)]
    for dims in ((3, 5), (5, 5), (5, 3), (7, 5, 3), (7, 5, 3, 5)):
        x = m.tensor(normal(*dims))
        for some in (True, False):
            q, r = m.qr(x, some=some)
            got += [q, r, (q @ r - x).abs().max() < 1e-12]
    return got


@program(rtol=1e-9, atol=1e-12)
def triangular_solve_batched_broadcast(m):  # test_triangular_solve, test_triangular_solve_batched,
    # test_triangular_solve_batched_broadcasting
    got = []
    for upper in (True, False):
        for unit in (True, False):
            for transpose in (True, False):
                a = (m.triu if upper else m.tril)(m.tensor(normal(2, 1, 3, 4, 4) + 3 * np.eye(4)))
                if unit:
                    a.diagonal(dim1=-2, dim2=-1).fill_(1.0)
                for b_shape in ((2, 1, 3, 4, 6), (4, 6)):
                    b = m.tensor(normal(*b_shape, seed=1))
                    got.append(m.triangular_solve(b, a, upper=upper, unitriangular=unit,
                                                  transpose=transpose))
                got.append(m.triangular_solve(m.tensor(normal(2, 1, 3, 4, 2, seed=2)), a[0, 0, 0],
                                              upper, transpose, unit)[0])
    return got


@program()
def randperm_and_random_neg_values(m):  # test_randperm, test_random_neg_values
    got = [m.randperm(100).dtype, m.randperm(10000).dtype, m.randperm(0).shape,
           m.randperm(0, dtype=m.float32).dtype]
    for dt in (m.int64, m.float16, m.float32):
        r = m.randperm(100, dtype=dt)
        got += [r.dtype, r.sort()[0]]
    for dt in (m.float64, m.float32, m.int64, m.int32, m.int16):
        r = m.ones(100, 100, dtype=dt).random_(-10, -1)
        got += [r.max().item() <= -2, r.min().item() >= -10, r.dtype]
    return got


@program()
def triu_tril_shapes_dtypes(m):  # test_triu_tril
    got = []
    shapes = [(3, 3), (5, 3, 3), (7, 3), (3, 7), (3, 0), (0, 3, 3), (3, 3, 0, 0), (3, 1),
              (5, 1, 3), (1, 3, 3, 3)]
    for shape in shapes:
        for dt in (m.bool, m.uint8, m.int32, m.float16, m.float64, m.complex64):
            x = m.empty(*shape, dtype=dt).fill_(2)
            for d in (-2, 0, 1):
                got += [m.triu(x, diagonal=d), m.tril(x, d)]
                if 0 not in shape and len(shape) > 1:
                    nc = x.clone().transpose(-2, -1)
                    was = nc.is_contiguous()
                    got += [m.triu(nc, d), nc.clone().triu_(d), nc.clone().tril_(d),
                            nc.is_contiguous() == was]
                    ex = x.clone().expand(x.size(0), *x.size())
                    got += [m.tril(ex, d), ex.stride()]
    return got


@program()
def lapack_empty(m):  # test_lapack_empty
    e = lambda *s: m.zeros(*s)  # noqa: E731
    return (m.inverse(e(0, 0)).shape, m.pinverse(e(0, 5)).shape, m.pinverse(e(5, 0)).shape,
            m.pinverse(e(0, 0)).shape, m.det(e(0, 0)), m.logdet(e(0, 0)), m.slogdet(e(0, 0)),
            [t.shape for t in m.qr(e(3, 0), True)], [t.shape for t in m.qr(e(0, 3), True)],
            [t.shape for t in m.qr(e(3, 0), False)], tried(lambda: m.lstsq(e(0, 0), e(0, 0))),
            [t.shape for t in m.linalg.eigh(e(0, 0))])


@program()
def roll_values_and_errors(m):  # test_roll
    numbers = m.arange(1, 9)
    data = numbers.view(2, 2, 2)
    flat = data.view(2, 4)
    strided = numbers.view(2, 4).transpose(0, 1)
    return (numbers.roll(1, 0), numbers.roll(-2, 0), data.roll(1, 0), flat.roll(2, 0).roll(4, 1),
            flat.roll(-20, 0).roll(-40, 1), strided.roll(1, 0), strided.is_contiguous(),
            flat.roll(1), flat.roll(1, dims=None), flat.roll(shifts=(2, -1), dims=(1, 0)),
            tried(lambda: flat.roll(shifts=(), dims=())),
            tried(lambda: flat.roll(shifts=(), dims=1)),
            tried(lambda: flat.roll(shifts=(1, 2), dims=(1,))),
            tried(lambda: flat.roll(shifts=(1,), dims=(1, 2))))


@program()
def nonzero_empty_and_scalar(m):  # test_nonzero_empty
    x = m.zeros(0, 2, 0, 5, 0)
    return (m.nonzero(x), m.nonzero(x, as_tuple=True), m.nonzero(m.tensor(0.5)),
            m.nonzero(m.tensor(0.5), as_tuple=True), m.nonzero(m.zeros(())),
            m.nonzero(m.zeros(()), as_tuple=True))


@program()
def normal_statistics(m):  # test_normal (moments of gradkit's own stream)
    close = lambda t, v, tol: abs(t.item() - v) < tol  # noqa: E731
    q = m.empty(100, 100).normal_()
    got = [close(q.mean(), 0, 0.2), close(q.std(), 1, 0.2)]
    q.normal_(2, 3)
    got += [close(q.mean(), 2, 0.3), close(q.std(), 3, 0.3)]
    q = m.zeros(100, 100)
    q[99:100].normal_()
    got += [q[0:1].abs().sum().item() == 0, close(q[99:100].std(), 1, 0.2)]
    mean = m.zeros(100, 100)
    mean[50:] = 1
    std = m.ones(100, 100)
    std[:, :50] = 4
    for r in (m.normal(mean), m.normal(mean, 3), m.normal(2, std), m.normal(mean, std)):
        got += [r.shape, r.dtype]
    r = m.normal(mean, std)
    got += [close(r[:50].mean(), 0, 0.2), close(r[50:].mean(), 1, 0.2),
            close(r[:, :50].std(), 4, 0.3), close(r[:, 50:].std(), 1, 0.2)]
    r = m.normal(2, 3, (100, 100))
    return got + [r.shape, close(r.mean(), 2, 0.2), close(r.std(), 3, 0.2)]


@program()
def empty_strided_as_as_strided(m):  # test_empty_strided
    got = []
    for shape in ((2, 3, 4), (0, 2, 0)):
        for strides in ((12, 4, 1), (2, 4, 6), (0, 0, 0)):
            es = m.empty_strided(shape, strides)
            ast = m.empty(es.storage().size()).as_strided(shape, strides)
            kept = 0 in shape and strides == (0, 0, 0)  # gradkit reports contiguous strides
            got += [es.shape, ast.shape, es.storage().size()]
            got += [] if kept else [es.stride(), ast.stride()]
    return got


@program()
def sign_over_dtypes(m):  # test_sign
    got = []
    for name in MATH_DTYPES:
        dt = getattr(m, name)
        if dt.is_floating_point:
            info = m.finfo(dt)
            a = m.tensor([float("nan"), -12, 0, 71, info.min, info.max], dtype=dt)
        else:
            info = m.iinfo(dt)
            a = m.tensor([12, 0, 71, info.min, info.max] if info.min == 0 else
                         [-12, 0, 71, info.min, info.max], dtype=dt)
        got += [a.sign(), m.sign(a), a.clone().sign_()]
    b = m.tensor([True, True, False, float("nan")]).bool()
    return got + [b.sign(), m.sign(b), b.clone().sign_()]


@program()
def logical_any_all_uint8(m):  # test_logical_any, test_logical_all, test_all_any_empty
    got = []
    for fill, op in ((0, "any"), (1, "all")):
        x = m.full([2, 3, 40], fill, dtype=m.uint8)
        reduce = getattr(x, op)
        got += [reduce(), reduce(0, keepdim=True), reduce(1, keepdim=True), reduce(2, keepdim=True)]
        x[-1][-1][-1] = 1 - fill
        got += [reduce(), reduce(0, keepdim=True), reduce(1), reduce(2, keepdim=True)]
    for empty in (m.ByteTensor(), m.BoolTensor()):
        got += [empty.all(), empty.any()]
    return got


@program()
def log_normal_and_geometric(m):  # test_log_normal, test_geometric
    a = m.tensor([10], dtype=m.float32).log_normal_()
    b = m.tensor([10], dtype=m.float32).geometric_(0.5)
    return a.dtype, a.size(), (a > 0).all(), b.dtype, b.size(), (b >= 1).all(), b == b.round()


@program()
def distances_empty(m):  # test_pairwise_distance_empty, test_pdist_empty, test_cdist_empty
    z = m.zeros
    pd = m.pairwise_distance
    return (pd(z(2, 0), z(2, 0)), pd(z(2, 0), z(2, 0), keepdim=True),
            pd(z(0, 2), z(0, 2)), pd(z(0, 2), z(0, 2), keepdim=True),
            m.pdist(z(0, 2)), m.pdist(z(1, 2)), m.pdist(z(3, 0)), m.cdist(z(0, 5), z(4, 5)),
            m.cdist(z(2, 5), z(0, 5)), m.cdist(z(2, 0), z(3, 0)), m.cdist(z(2, 0), z(0, 0)))


def _brute_cdist(x, y, p):
    diff = (x.unsqueeze(-2) - y.unsqueeze(-3)).abs()
    if p == 0:
        return (diff != 0).sum(-1).to(x.dtype)
    if p == float("inf"):
        return diff.max(-1)[0]
    return diff.pow(p).sum(-1).pow(1.0 / p)


@program()
def cdist_norms_and_layouts(m):  # test_cdist_norm, test_cdist_norm_batch, test_cdist_large,
    # test_cdist_large_batch (40 rows), test_cdist_non_contiguous, test_cdist_non_contiguous_batch
    got = []
    for batch in ((), (2, 3)):
        for r1, mm, r2 in ((3, 2, 4), (6, 10, 8)):
            x = m.tensor(normal(*batch, r1, mm), dtype=m.float32)
            y = m.tensor(normal(*batch, r2, mm, seed=1), dtype=m.float32)
            for p in (0, 1, 2, 3, 1.5, 2.5, float("inf")):
                modes = (["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"] if p == 2
                         else ["use_mm_for_euclid_dist_if_necessary"])
                for cm in modes:
                    got.append(m.allclose(m.cdist(x, y, p=p, compute_mode=cm),
                                          _brute_cdist(x, y, p), rtol=1e-4,
                                          atol=2e-2 if p == 2 else 1e-5))
    x = m.tensor(normal(40, 10), dtype=m.float32)
    pairs = [(x.t(), m.tensor(normal(10, 3), dtype=m.float32).t()),
             (m.tensor(normal(4, 3, 2, 5, 7), dtype=m.float32).transpose(-1, -2),
              m.tensor(normal(4, 3, 2, 5, 3, seed=2), dtype=m.float32).transpose(-1, -2)),
             (m.tensor(normal(7, 2, 7, 5), dtype=m.float32),
              m.tensor(normal(7, 2, 5, 3), dtype=m.float32).transpose(-1, -2))]
    for a, b in pairs:
        for cm in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
            got += [m.cdist(a, b, compute_mode=cm).shape, a.is_contiguous(),
                    m.allclose(m.cdist(a, b, compute_mode=cm), _brute_cdist(a, b, 2), atol=1e-4)]
    return got


@program()
def multinomial_constraints(m):  # test_multinomial_constraints
    return (tried(lambda: m.multinomial(m.empty(1, 2, 3, dtype=m.float64), 2)),
            tried(lambda: m.multinomial(m.empty(1, 2, dtype=m.int64), 2)),
            tried(lambda: m.multinomial(m.ones(2, dtype=m.float64), 0)),
            tried(lambda: m.multinomial(m.ones(2, dtype=m.float64), -1)),
            tried(lambda: m.multinomial(m.ones(2, dtype=m.float64), 3, False)),
            tried(lambda: m.multinomial(m.empty(16777217, dtype=m.float64), 3)),
            tried(lambda: m.multinomial(m.zeros(16777217), 3, False)),
            tried(lambda: m.multinomial(m.ones(16777217), 16777218, False)),
            tried(lambda: m.multinomial(m.ones(1, 2, 3, dtype=m.int64), 2)),
            tried(lambda: m.multinomial(m.ones((), dtype=m.int64), 2)))


@pytest.mark.parametrize("name", program.names())
def test_program_as_torch(name):
    program.check(name)
