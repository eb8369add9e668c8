"""The expectations of torch's test/test_torch.py, characters 0 to about 325,000, part 6 of 6:
test_fill_diagonal to TestTorchDeviceType's test_index (fill_diagonal_, batch norm inference,
the negative-dim table, diag/diagonal, pow, neg, logical ops, isinf, clamp, cat of empty
tensors, linear algebra helpers, flip/rot90, windows, broadcasting), as programs run in gradkit
and in torch 2.13 and compared (see tests/tensor_twins.py). Each program names the torch test it
covers."""

import math
from itertools import combinations

import numpy as np
import pytest

from tensor_twins import data, dtypes, ints, outcome, same_as_torch

INF, NAN = math.inf, math.nan


def test_fill_diagonal():  # test_fill_diagonal
    def run(m):
        return [
            m.tensor(data(7, 3)).fill_diagonal_(1),
            m.tensor(data(7, 3)).fill_diagonal_(1, wrap=True),
            m.tensor(data(3, 3, 3)).fill_diagonal_(1),
            m.tensor(data(3, 3, 3))[:, 1, ...].fill_diagonal_(1),
            m.tensor(data(7, 3, 3))[:, 1, ...].fill_diagonal_(1, wrap=True),
        ]

    same_as_torch(run)


def test_batch_norm_cpu_inference():  # test_batch_norm_cpu_inference
    def run(m):
        res = []
        for x in (m.tensor([[[[-0.5]]], [[[0.5]]]]), m.tensor(data(2, 2, 2, 2), dtype=m.float32)):
            bn = m.nn.BatchNorm2d(x.size(1), 1e-05, 0.1, affine=False)
            bn.eval()
            res += [
                bn(x),
                bn(x.permute(0, 1, 3, 2)).permute(0, 1, 3, 2),
                bn(x.contiguous(memory_format=m.channels_last)),
            ]
        return res

    same_as_torch(run)


NEG_DIM = [  # torch's add_neg_dim_tests table: (name, shape, args with None for a dim, kinds)
    ("narrow", (4, 5, 6), [None, 0, 2], "m"),
    ("transpose", (4, 5, 6), [None, None], "mif"),
    ("size", (4, 5, 6), [None], "m"),
    ("chunk", (4, 5, 6), [2, None], "mf"),
    ("index_select", (6, 6), [None, "idx6"], "mf"),
    ("split", (6, 8), [2, None], "mf"),
    ("squeeze", (4, 1, 5, 1), [None], "mif"),
    ("unbind", (2, 3, 4), [None], "f"),
    ("cumprod", (4, 5), [None], "mf"),
    ("cumsum", (4, 5), [None], "mf"),
    ("mean", (4, 5), [None], "mf"),
    ("median", (4, 5), [None], "mf"),
    ("mode", (4, 5), [None], "mf"),
    ("norm", (4, 5), [2, None], "mf"),
    ("prod", (4, 5), [None], "mf"),
    ("std", (4, 5), [None], "mf"),
    ("sum", (4, 5), [None], "mf"),
    ("var", (4, 5), [None], "mf"),
    ("kthvalue", (4, 5), [3, None], "mf"),
    ("max", (4, 5), [None], "mf"),
    ("min", (4, 5), [None], "mf"),
    ("sort", (4, 5), [None], "mf"),
    ("topk", (4, 5), [2, None], "mf"),
    ("select", (4, 5), [None, 3], "m"),
    ("unfold", (6, 8), [None, 2, 2], "m"),
    ("gather", (6, 6), [None, "idx66"], "mf"),
    ("scatter", (6, 6), [None, "idx66", "src66"], "i"),
    ("unsqueeze", (4, 5), [None], "mif"),
]


@pytest.mark.parametrize("name,shape,args,kinds", NEG_DIM, ids=[row[0] for row in NEG_DIM])
def test_neg_dim(name, shape, args, kinds):  # test_<name>_neg_dim, test_cat_neg_dim
    def run(m):
        x = m.tensor(data(*shape))
        extra = {
            "idx6": m.tensor(ints(6, low=0, high=5)),
            "idx66": m.tensor(ints(6, 6, low=0, high=5)),
            "src66": m.tensor(data(6, 6, seed=1)),
        }
        ndim = len(shape) + (1 if name == "unsqueeze" else 0)
        n_dims = sum(a is None for a in args)
        res = []
        for dims in combinations(range(ndim), n_dims):
            for sign in (0, -ndim):
                it = iter(dims)
                call = [
                    next(it) + sign if a is None else extra.get(a, a) if isinstance(a, str) else a
                    for a in args
                ]
                if "m" in kinds:
                    res.append(getattr(x, name)(*call))
                if "i" in kinds:
                    res.append(getattr(x.clone(), name + "_")(*call))
                if "f" in kinds:
                    res.append(getattr(m, name)(x, *call))
        if name == "chunk":
            res += [
                m.cat([m.tensor(data(2, 3, 4)), m.tensor(data(2, 3, 4, seed=1))], d)
                for d in range(-3, 3)
            ]
        return res

    same_as_torch(run)


def test_diag_diagonal():  # test_diag, test_diagonal(_multidim), test_broadcast_tensors
    def run(m):
        x = m.tensor(data(10, 10))
        y = m.tensor(data(4, 5, 6, 7))
        res = [m.diag(x), m.diagonal(x), m.diagonal(x, 3), m.diag(x, 3)]
        res += [m.diagonal(y, *args) for args in [(2, 2, 3), (2,), (-2, 1, 2), (0, -2, -1)]]
        res.append(m.diagonal(y.permute(1, 2, 3, 0), 0, -2, -1))
        res += [t.shape for t in m.broadcast_tensors(m.zeros(2, 1, 3), m.zeros(3), m.zeros(3, 1))]
        return res

    same_as_torch(run)


@pytest.mark.parametrize(
    "shapes", [((2,), (3,)), ((2, 1), (1, 3), (4, 1, 1), (5,)), ((0,), (2, 3))]
)
def test_broadcast_tensors_mismatch(shapes):  # test_broadcast_tensors: torch's error
    got = same_as_torch(lambda m: m.broadcast_tensors(*(m.zeros(s) for s in shapes)))
    assert got[:2] == ("raises", "RuntimeError")


def test_pow():  # test_pow
    def run(m):
        res = []
        for dtype in (m.uint8, m.int8, m.int16, m.int32, m.int64, m.float32, m.float64):
            if dtype.is_floating_point:
                m1 = m.tensor(np.abs(data(10, 10)) + 0.5).to(dtype)
            else:
                high = 4 if dtype in (m.int8, m.uint8) else 10
                m1 = m.tensor(ints(10, 10, low=1, high=high)).to(dtype)
            for num in (-2.8, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 4, 3.3):
                res += [
                    outcome(lambda lib, m1=m1, num=num: lib.pow(m1[4], num), m)[0],
                    outcome(lambda lib, m1=m1, num=num: lib.pow(m1[:, 4], num), m)[0],
                ]
            res += [m.pow(3, m1[4]), m.pow(3, m1[:, 4])]
        return res

    same_as_torch(run, rtol=1e-5)


def test_neg():  # test_neg
    def run(m):
        res = [outcome(lambda lib: -lib.tensor([False, True]), m)[0]]
        for dtype in (m.float, m.double, m.long, m.int, m.short, m.int8, m.uint8):
            a = m.tensor(ints(10, 9, low=-128, high=128)).to(dtype)
            res += [
                a.clone().neg_(),
                a.neg(),
                -a,
                m.add(m.zeros_like(a), a, alpha=255 if dtype == m.uint8 else -1),
            ]
        return res

    same_as_torch(run)


def test_logical_not_xor():  # test_logical_not, test_logical_xor
    def run(m):
        res = []
        listed = dtypes(m, complex_=False)
        for dtype in listed:
            a = m.tensor([10, 1, 0], dtype=dtype)
            res += [a.logical_not(), a.clone().logical_not_()]
            x = m.tensor([10, 0, 1, 0], dtype=dtype)
            for other in listed:
                res.append(x.logical_xor(m.tensor([1, 0, 0, 10], dtype=other)))
            res.append(x.clone().logical_xor_(m.tensor([1, 0, 0, 10], dtype=dtype)))
        return res

    same_as_torch(run)


def test_isinf():  # test_isinf
    same_as_torch(
        lambda m: (
            [m.isinf(m.Tensor([1, INF, 2, -INF, NAN]))]
            + [
                m.isinf(getattr(m, n)([1, 2, 3]))
                for n in ("ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor")
            ]
        )
    )


def test_clamp():  # test_clamp
    def run(m):
        m1 = m.tensor(data(100) * 2)
        m1[1], m1[2] = -1, 1
        nan = m.tensor([NAN])
        return [
            m1.clone().clamp_(-1, 1),
            m.clamp(m1, min=-1),
            m.clamp(m1, max=1),
            nan.clone().clamp_(-1, 1),
            m.clamp(nan, min=-1),
            m.clamp(nan, max=1),
            outcome(lambda lib: m1.clamp(), m)[0],
            outcome(lambda lib: m1.clamp_(), m)[0],
        ]

    same_as_torch(run)


def test_cat_empty():  # test_cat_empty_legacy, test_cat_empty
    def run(m):
        x = m.tensor(data(4, 3, 5, 5))
        empty1 = m.zeros(0)
        empty4 = m.zeros(4, 0, 5, 5)
        res = [
            m.cat([x, empty1], dim=1),
            m.cat([empty1, x], dim=1),
            m.cat([empty1, empty1], dim=1),
            outcome(lambda lib: lib.cat([], dim=1), m)[0],
            m.cat([x, empty4], dim=1),
            m.cat([empty4, x], dim=1),
            m.cat([empty4, empty4], dim=1),
        ]
        for bad in (m.zeros(4, 0, 4, 5), m.zeros(4, 0)):
            res += [
                outcome(lambda lib, bad=bad: lib.cat([x, bad], dim=1), m)[0],
                outcome(lambda lib, bad=bad: lib.cat([bad, x], dim=1), m)[0],
            ]
        return res

    same_as_torch(run)


def test_linalg_helpers():  # test_inverse, test_pinverse, test_matrix_rank, test_matrix_power, ...
    def run(m):
        a = m.tensor(data(5, 5)) + 5 * m.eye(5, dtype=m.float64)
        batch = m.tensor(data(2, 3, 4, 4)) + 5 * m.eye(4, dtype=m.float64)
        spd = a @ a.mT + m.eye(5, dtype=m.float64)
        b = m.tensor(data(5, 3, seed=1))
        chol = m.linalg.cholesky(spd)
        eye = m.eye(10, dtype=m.float64)
        eye[5, 5] = 0
        res = [
            m.inverse(a),
            m.inverse(batch),
            m.inverse(batch.transpose(-2, -1)),
            outcome(lambda lib: lib.inverse(lib.zeros(2, 3, 4, 3)), m)[0],
            m.pinverse(m.tensor(data(3, 5, 2))),
            m.pinverse(m.zeros(0, 3, 2, dtype=m.float64)).shape,
            m.linalg.matrix_rank(m.eye(10)),
            m.linalg.matrix_rank(eye),
            m.linalg.matrix_rank(eye, hermitian=True),
        ]
        res += [m.matrix_power(a, k) for k in (0, 2, 3, 6, -1, -2)] + [m.matrix_power(batch, 3)]
        res += [
            m.chain_matmul(m.tensor(data(3, 4)), m.tensor(data(4, 5)), m.tensor(data(5, 2))),
            m.det(a),
            m.logdet(spd),
            m.slogdet(a),
            m.det(batch),
            m.slogdet(batch),
            m.linalg.solve(a, b),
            m.cholesky_solve(b, chol),
            m.cholesky_solve(b, chol.mT, upper=True),
            m.cholesky_inverse(chol),
            m.cholesky_inverse(chol.mT, True),
            m.linalg.cholesky(spd),
        ]
        return res

    # not the warnings: chain_matmul's deprecation warns once per process in both libraries
    same_as_torch(run, rtol=1e-7, atol=1e-10, count_warnings=False)


def test_flip_rot90():  # test_flip, test_rot90
    def run(m):
        d = m.tensor([1, 2, 3, 4, 5, 6, 7, 8]).view(2, 2, 2)
        res = [
            d.flip(*dims) for dims in [(0,), (1,), (2,), (0, 1), (0, 1, 2), (-1,), (0, 2), (2, 0)]
        ]
        for bad in ((0, 1, 1), (), (0, 1, 2, 3), (3,)):
            res.append(outcome(lambda lib, bad=bad: d.flip(*bad), m)[0])
        res += [
            m.arange(1, 4).view(3, 1).expand(3, 2).flip(0),
            m.arange(1, 9).view(2, 2, 2).transpose(0, 1).flip(0, 1, 2),
            m.tensor([]).flip(0),
        ]
        r = m.arange(1, 5).view(2, 2)
        res += [r.rot90(k, [0, 1]) for k in (0, 1, 2, 3, 5, -1, -5)] + [
            r.rot90(),
            r.rot90(1, [1, 0]),
        ]
        r3 = m.arange(1, 9).view(2, 2, 2)
        res += [r3.rot90(1, [1, 2]), r3.rot90(1, [1, -1])]
        for bad in ([0, -3], [0, 2], [0, 3], [1, 1], [0, 1, 2], [0]):
            res.append(outcome(lambda lib, bad=bad: r3.rot90(1, bad), m)[0])
        return res

    same_as_torch(run)


@pytest.mark.parametrize("name", ["hann", "hamming", "bartlett", "blackman"])
def test_signal_window_functions(name):  # test_signal_window_functions
    def run(m):
        fn = getattr(m, name + "_window")
        res = [fn(size, periodic=p) for size in (1, 2, 5, 10, 50) for p in (True, False)]
        return res + [
            outcome(lambda lib: fn(3, dtype=lib.long), m)[0],
            fn(3, requires_grad=True).requires_grad,
            fn(3).requires_grad,
        ]

    same_as_torch(run)


BROADCAST_FNS = [
    "dist",
    "atan2",
    "pow",
    "lerp",
    "add",
    "sub",
    "mul",
    "div",
    "fmod",
    "remainder",
    "eq",
    "ge",
    "gt",
    "le",
    "lt",
    "max",
    "min",
    "ne",
    "addcdiv",
    "addcmul",
    "masked_scatter",
    "masked_select",
    "masked_fill",
    "map",
    "map2",
    "copy",
]


@pytest.mark.parametrize("fn", BROADCAST_FNS)
def test_broadcast(fn):  # test_broadcast
    def run(m):
        full = (3, 4, 5)
        small, large, small2 = (
            m.tensor(np.abs(data(*s, seed=i)) + 0.5, dtype=m.float32)
            for i, s in enumerate(((4, 1), (3, 1, 5), (1, 5)))
        )
        full1d = m.tensor(data(60), dtype=m.float32)

        def call(f, t1, t2, t3):
            if fn == "lerp":
                return f(t1, 0.5)
            if fn == "masked_select":
                return f(t1 < 1)
            if fn == "masked_scatter":
                return f(t1 < 1, full1d)
            if fn == "masked_fill":
                return f(t1 < 1, 1.0)
            if fn == "map":
                return f(t1, lambda x, y: x + y)
            if fn == "map2":
                return f(t1, t2, lambda x, y, z: x + y + z)
            if fn in ("addcdiv", "addcmul"):
                return f(t1, t2, value=1)
            return f(t1)

        res = []
        for first, second, third in (
            (large, small, small2),
            (small, large, small2),
            (small2, small, large),
        ):
            if fn not in ("map", "map2", "copy"):
                res.append(call(getattr(first, fn), second, third, None))
                res.append(
                    call(
                        getattr(first.expand(*full), fn),
                        second.expand(*full),
                        third.expand(*full),
                        None,
                    )
                )
        if hasattr(m.zeros(1), fn + "_"):
            base = large.expand(*full).clone()
            res.append(call(getattr(base, fn + "_"), small, small2, None))
            res.append(
                outcome(lambda lib: call(getattr(small.clone(), fn + "_"), large, small2, None), m)[
                    0
                ][:2]
            )
        return res

    same_as_torch(run, rtol=1e-5)


@pytest.mark.parametrize("fn", ["baddbmm", "addbmm", "addmm", "addmv", "addr"])
def test_broadcast_fused_matmul(fn):  # test_broadcast_fused_matmul
    def run(m):
        b, n, k, p = 2, 3, 4, 5
        shapes = {
            "baddbmm": ((1, n, 1), (b, n, k), (b, k, p)),
            "addbmm": ((n, 1), (b, n, k), (b, k, p)),
            "addmm": ((1, p), (n, k), (k, p)),
            "addmv": ((1,), (n, k), (k,)),
            "addr": ((n, 1), (n,), (k,)),
        }[fn]
        t0, t1, t2 = (m.tensor(data(*s, seed=i)) for i, s in enumerate(shapes))
        full = getattr(m, fn)(m.zeros(*[max(a, 1) for a in shapes[0]]), t1, t2).shape
        return [getattr(m, fn)(t0, t1, t2), getattr(m, fn)(t0.expand(full), t1, t2)]

    same_as_torch(run)


def test_broadcast_batched_matmul():  # test_broadcast_batched_matmul
    def run(m):
        res = []
        for lhs_shape, rhs_shape in [
            ((2, 1, 3, 4), (4, 5)),
            ((3, 4), (2, 3, 4, 5)),
            ((4,), (2, 3, 4, 5)),
            ((2, 3, 3, 4), (4,)),
            ((1, 3, 4), (2, 1, 4, 5)),
        ]:
            lhs, rhs = m.tensor(data(*lhs_shape)), m.tensor(data(*rhs_shape, seed=1))
            res += [lhs.matmul(rhs), m.matmul(lhs, rhs)]
        return res

    same_as_torch(run)


def test_index():  # test_index (TestTorchDeviceType)
    def run(m):
        ref = (m.arange(27, dtype=m.float32) + 1).view(3, 3, 3)
        res = [
            ref[m.LongTensor()],
            ref[0],
            ref[0, 1],
            ref[0:2],
            ref[2, 2, 2],
            ref[...],
            ref[..., 2],
            ref[0, ..., 2],
            ref[2, 2, ..., 2],
            ref[2, None],
            ref[2, None, None],
            ref[2:4, None],
            ref[None, 2, None, None],
            ref[None, 2:5, None, None],
            ref[slice(0)],
            ref[slice(0), 2],
            ref[2, slice(0)],
            ref[2, 1:1, 2],
            ref[m.LongTensor([2, 0])],
        ]
        for key in ("1:9:0", "1:9:-1", "1, 1, 1, 1", "0.0", "0.0:2.0", "0.0, :, 0.0"):
            res.append(outcome(lambda lib, key=key: eval(f"ref[{key}]", {"ref": ref}), m)[0][:2])  # noqa: S307
        return res

    same_as_torch(run)
