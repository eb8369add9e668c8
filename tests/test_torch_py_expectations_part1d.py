"""The expectations of torch's test/test_torch.py, characters 0 to about 325,000, part 4 of 6:
test_matmul_small_brute_force to test_half_tensor (matmul shapes and layouts, expand/repeat,
repeat_interleave, is_same_size/equal, set_/is_set_to, element_size, split/chunk, tolist,
reversed, ``in``, deepcopy and pickle, norm, bernoulli, generators, argument parsing), as
programs run in gradkit and in torch 2.13 and compared (see tests/tensor_twins.py). Each program
names the torch test it covers."""

import copy
import math
import pickle
from itertools import product

import numpy as np
import pytest

import gradkit
from tensor_twins import data, outcome, same_as_torch


def test_matmul_small_brute_force():  # test_matmul_small_brute_force_1d_Nd, ..._2d_Nd
    def run(m):
        res = []
        for n, mm, p, o in product((1, 3), (1, 4), (1, 3), (1, 2)):
            x = m.arange(n * mm).reshape(n, mm)
            y = m.arange(o * mm * p).reshape(o, mm, p)
            yt = m.arange(o * p * mm).reshape(o, p, mm).transpose(-1, -2)
            ys = m.arange(o * mm * 2 * p).reshape(o, mm, 2 * p)[:, :, ::2]
            for a in (x, x[0], m.arange(n * 2 * mm).reshape(n, 2 * mm)[:, ::2]):
                for b in (y, yt, ys):
                    r = m.matmul(a, b)
                    res += [r, r.is_contiguous()]
        return res

    same_as_torch(run)


def test_expand_repeat():  # test_expand, test_repeat, test_repeat_tile
    def run(m):
        t = m.tensor(data(1, 8, 1))
        t2 = m.tensor(data(5, seed=1))
        template = m.zeros(4, 8, 5)
        nc = m.tensor(data(5, 2, 1, 3))[:, 0]
        tile = m.tensor(data(8, 4))
        broad = m.from_numpy(np.broadcast_to(data(1, 4), (8, 4)))
        return [
            t.expand_as(template).shape,
            t.expand(4, 8, 5),
            t.expand(template.size()).shape,
            t2.expand_as(template).shape,
            t2.expand(1, 5).expand(2, 2, 5),
            t2.repeat(2, 2, 1),
            nc.expand(2, 5, 4, 3),
            nc.contiguous().repeat(2, 1, 4, 1),
            t2.expand(1, 1, 5).stride(),
            t2.unsqueeze(0).unsqueeze(1).stride(),
            t.expand(4, -1, 5),
            outcome(lambda lib: t2.expand(-1, -1), m)[0],
            m.zeros(0).expand((0,)),
            tile.repeat(3, 1, 1).shape,
            tile.repeat(m.Size((3, 1, 1))),
            tile.repeat((3, 0)).shape,
        ] + [
            src.repeat(*r)
            for r in ((3, 1, 1), (3, 3, 3), (1, 2, 1), (2, 2, 2, 2))
            for src in (tile, broad)
        ]

    # from_numpy of a read-only array warns once per process in both libraries: which one
    # still warns here depends on the tests run before (values, shapes and strides compared)
    same_as_torch(run, count_warnings=False)


def test_repeat_interleave():  # test_repeat_interleave
    def run(m):
        y = m.tensor([[1, 2], [3, 4]])
        res = [
            m.repeat_interleave(m.tensor([0, 1, 2, 3])),
            m.repeat_interleave(y, 2),
            m.repeat_interleave(y, m.tensor(2)),
            m.repeat_interleave(y, m.tensor([2])),
            m.repeat_interleave(y, 3, dim=1),
            m.repeat_interleave(y, m.tensor([1, 2]), dim=0),
            m.repeat_interleave(m.zeros((5, 0)), repeats=3, dim=1),
            m.repeat_interleave(m.tensor([], dtype=m.int64), m.tensor([], dtype=m.int64)),
        ]
        for bad in (
            lambda lib: lib.repeat_interleave(lib.arange(4).reshape(2, 2)),
            lambda lib: lib.repeat_interleave(lib.arange(4.0)),
            lambda lib: lib.repeat_interleave(lib.tensor([1, 2, -1, 3, 4])),
            lambda lib: lib.repeat_interleave(y, lib.tensor([1, 2, 3]), dim=0),
            lambda lib: lib.repeat_interleave(y, lib.arange(9).reshape(3, 3), dim=0),
        ):
            res.append(outcome(bad, m)[0])
        return res

    same_as_torch(run)


def test_is_same_size_equal():  # test_is_same_size, test_equal
    def run(m):
        t1, t2, t3, t4 = (
            m.zeros(3, 4, 9, 10),
            m.zeros(3, 4),
            m.zeros(1, 9, 3, 3),
            m.zeros(3, 4, 9, 10),
        )
        a = m.Tensor((3, 4, 9, 10))
        s = m.Tensor(((1, 2, 3, 4), (5, 6, 7, 8)))
        s1 = s[:, 1:3]
        return [
            t1.is_same_size(t2),
            t1.is_same_size(t3),
            t1.is_same_size(t4),
            a.equal(a.contiguous()),
            a.equal(m.Tensor((1, 9, 3, 10))),
            a.equal(m.Tensor((3, 4, 9))),
            m.equal(a, m.Tensor()),
            s1.is_contiguous(),
            s1.equal(s1.clone()),
            s1.equal(m.Tensor(((2, 3), (6, 7)))),
            m.equal(s1, m.Tensor(((0, 0), (0, 0)))),
        ]

    same_as_torch(run)


def test_tensor_set():  # test_tensor_set, test_tensor_set_errors, test_is_set_to, test_contiguous
    def run(m):
        t2 = m.tensor(data(3, 4, 9, 10), dtype=m.float32)
        t1 = m.Tensor()
        t1.set_(t2)
        res = [t1.data_ptr() == t2.data_ptr(), t1.is_set_to(t2), t2.is_set_to(t1)]
        size = m.Size([9, 3, 4, 10])
        t1.set_(t2.untyped_storage(), 0, size)
        res += [t1.size(), t1.stride()]
        t1.set_(t2.untyped_storage(), 0, tuple(size), (10, 360, 90, 1))
        res += [t1.stride(), t1]
        t1 = m.Tensor()
        t1.set_(source=t2)
        res.append(t1.is_set_to(t2))
        t1.set_(source=t2.untyped_storage(), storage_offset=0, size=size, stride=(10, 360, 90, 1))
        res += [t1.size(), t1.stride(), t1.is_set_to(t2)]
        b1, b2 = m.tensor([True, True]), m.tensor([False, False])
        b1.set_(b2)
        res.append(b1.is_set_to(b2))
        f, d = m.zeros(2, 3), m.zeros(2, 3, dtype=m.float64)
        res += [
            outcome(lambda lib: f.set_(d), m)[0],
            outcome(lambda lib: f.set_(d.untyped_storage(), 0, d.size(), d.stride()), m)[0][:2],
        ]
        e1, e2 = m.empty(3, 4, 9, 10), m.empty(3, 4, 9, 10)
        e3 = m.tensor([]).set_(e1)
        e4 = e3.clone().resize_(12, 90)
        g = m.empty([2, 3, 4])
        z = m.empty([2, 5, 0])
        res += [
            e1.is_set_to(e2),
            e1.is_set_to(e3),
            e3.is_set_to(e1),
            e1.is_set_to(e4),
            m.Tensor().is_set_to(m.Tensor()),
            g.is_set_to(g.view(4, 3, 2)),
            g.view(4, 3, 2).is_set_to(g),
            z.is_set_to(z.view([0])),
            z.view([0]).is_set_to(z),
        ]
        x = m.tensor(data(1, 16, 5, 5))
        stride = list(x.stride())
        stride[0] = 20
        x.set_(x.untyped_storage(), 0, x.size(), stride)
        return res + [x.is_contiguous(), x.stride()]

    same_as_torch(run)


def test_element_size():  # test_element_size
    same_as_torch(
        lambda m: [
            getattr(m, name)().element_size()
            for name in (
                "ByteTensor",
                "CharTensor",
                "ShortTensor",
                "IntTensor",
                "LongTensor",
                "FloatTensor",
                "DoubleTensor",
                "BoolTensor",
                "HalfTensor",
            )
        ]
    )


def test_split_chunk():  # test_split, test_chunk, test_split/chunk_neg_dim
    def run(m):
        t, u = m.tensor(data(7, 4)), m.tensor(data(20, 10))
        v = m.tensor(data(4, 7))
        return [
            t.split(3, 0),
            u.split([5, 5, 10], 0),
            u.split([2, 2, 6], 1),
            u.split(5, -1),
            m.split(u, 5, -2),
            v.chunk(3, 1),
            m.chunk(v, 3, -1),
            outcome(lambda lib: v.chunk(0), m)[0],
            outcome(lambda lib: v.chunk(-2), m)[0],
        ]

    same_as_torch(run)


def test_tolist_permute_iter():  # test_tolist, test_permute, test_iter, test_unsqueeze
    def run(m):
        t3 = m.Tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
        x = m.zeros(1, 2, 3, 4, 5, 6, 7)
        perm = [3, 0, 6, 1, 5, 2, 4]
        y = m.tensor(data(2, 3, 4))
        nc = y[:, 1]
        return [
            m.Tensor([]).tolist(),
            m.Tensor([1, 2, 3]).tolist(),
            m.Tensor([[1, 2], [3, 4]]).tolist(),
            t3.select(1, 1).is_contiguous(),
            t3.select(1, 1).tolist(),
            x.permute(*perm).size(),
            x.size(),
            [row for row in m.tensor(data(3, 3))],
            list(m.Tensor()),
            y.unsqueeze(1),
            y.clone().unsqueeze_(2),
            nc.unsqueeze(1),
            nc.clone().unsqueeze_(2),
        ]

    same_as_torch(run)


def test_reversed():  # test_reversed
    same_as_torch(
        lambda m: [
            reversed(m.arange(0, 10)),
            reversed(m.arange(1, 10).view(3, 3)),
            reversed(m.tensor(42)),
        ]
    )


def test_contains():  # test_contains
    def run(m):
        x = m.arange(0, 10)
        y = m.arange(1, 10).view(3, 3)
        val = m.arange(1, 4)
        return [
            4 in x,
            12 in x,
            val in y,
            (val + 10) in y,
            outcome(lambda lib: "foo" in y, m)[0],
            outcome(lambda lib: [1, 2] in y, m)[0],
        ]

    same_as_torch(run)


def test_deepcopy_and_pickle():  # test_deepcopy, test_deepcopy_scalar, test_pickle*, test_storage
    def run(m):
        a, b = m.tensor(data(5, 5)), m.tensor(data(5, 5, seed=1))
        c = a.view(25)
        q = [a, [a.untyped_storage(), b.untyped_storage()], b, c]
        w = copy.deepcopy(q)
        w[0].add_(1)
        w[2].sub_(1)
        s = m.tensor(5)
        p = m.nn.Parameter(m.tensor(data(2, 2)))
        p2 = m.nn.Parameter(m.tensor(data(2, 2)), requires_grad=False)
        loaded = [pickle.loads(pickle.dumps(v)) for v in (a, p, p2, m.float32, m.zeros(10).size())]
        lin = m.nn.Linear(10, 1)
        state = copy.deepcopy(lin.state_dict(keep_vars=True))
        return [
            w[0],
            w[3],
            w[2],
            w[0].data_ptr() == w[3].data_ptr(),
            copy.deepcopy(s).size(),
            copy.deepcopy(s),
            loaded[0],
            type(loaded[1]).__name__,
            loaded[1].requires_grad,
            type(loaded[2]).__name__,
            loaded[2].requires_grad,
            loaded[3] is m.float32,
            type(loaded[4]).__name__,
            loaded[4],
            type(state["weight"]).__name__,
            a.untyped_storage().nbytes(),
        ]

    same_as_torch(run)


def test_norm_fastpaths():  # test_norm_fastpaths, test_norm_neg_dim
    def run(m):
        x = m.tensor(data(3, 5))
        return [m.norm(x, p, 1) for p in (4.5, 0, 1, 2, 3)] + [x.norm(2, -1), m.norm(x, 2, -2)]

    same_as_torch(run)


def test_bernoulli():  # test_bernoulli, test_bernoulli_edge_cases
    def run(m):
        def binary(t):
            return bool(((t == 0) | (t == 1)).all())

        res = []
        for t_dtype, p_dtype in ((m.float32, m.float64), (m.uint8, m.float64), (m.bool, m.float32)):
            for trivial in ([0, 1], [1, 0, 1, 1, 0, 1]):
                res.append(m.tensor(trivial, dtype=p_dtype).bernoulli().tolist())
            p = m.rand(5, 5, dtype=p_dtype)
            res += [
                binary(p.bernoulli()),
                binary(m.rand(5, dtype=p_dtype).expand(5, 5).bernoulli()),
            ]
            t = m.empty(10, 10, dtype=t_dtype)
            res.append(t.bernoulli_(0.5).dtype)
            res.append(binary(t.fill_(1).bernoulli_(0.5)))
            res.append(binary(t.bernoulli_(m.rand(10, dtype=p_dtype).expand(10, 10))))
            res.append(binary(t.bernoulli_(m.rand_like(t, dtype=p_dtype))))
        zeros, ones = m.zeros(1000, 1000), m.ones(1000, 1000)
        return res + [int((m.bernoulli(zeros) == 1).sum()), int((m.bernoulli(ones) == 0).sum())]

    same_as_torch(run)


def test_bernoulli_statistics():  # test_bernoulli (the share of ones follows p)
    gradkit.manual_seed(0)
    p = gradkit.tensor([0.1, 0.5, 0.9], dtype=gradkit.float64).expand(20000, 3)
    share = gradkit.bernoulli(p).mean(0)
    # 4 standard errors of a share of 20000 draws: at most 0.0142
    assert np.allclose(share.numpy(), [0.1, 0.5, 0.9], atol=4 * math.sqrt(0.25 / 20000))


def test_generator_cpu():  # test_generator_cpu
    def run(m):
        g1, g2 = m.Generator(), m.Generator()
        g1.manual_seed(12345)
        g2.manual_seed(12345)
        res = [g1.initial_seed() == g2.initial_seed(), m.default_generator == m.default_generator]
        g1.seed()
        g2.seed()
        res.append(g1.initial_seed() != g2.initial_seed())
        g1 = m.Generator()
        state = g2.get_state()
        draw = m.randn(1, generator=g2)
        g1.set_state(state)
        res.append(bool(m.equal(draw, m.randn(1, generator=g1))))
        default_state = m.default_generator.get_state()
        q = m.zeros(100)
        first = q.normal_().clone()
        g3 = m.Generator()
        g3.set_state(default_state)
        res.append(bool(m.equal(first, q.normal_(generator=g3))))
        return res

    assert all(same_as_torch(run))


def test_parsing():  # test_parsing_int64, test_parsing_double, test_parsing_intlist
    def run(m):
        ones = m.ones(5, 5)
        x = m.tensor(data(2, 3))
        t = m.tensor
        res = [
            m.cumsum(ones, t(0)),
            outcome(lambda lib: lib.cumsum(ones, t(0.0)), m)[0][:2],
            m.isclose(x, x, 1, 1).all(),
            m.isclose(x, x, 1.5, 1.0).all(),
            m.isclose(x, x, t(1), t(1)).all(),
            m.isclose(x, x, t(1.5), t(1.0)).all(),
            outcome(lambda lib: lib.isclose(x, x, t(1.5), t(1.0, requires_grad=True)), m)[0][:2],
            m.ones((t(3), t(4))).shape,
            m.ones(t(3), t(4)).shape,
            m.ones((np.array(3), np.int64(4))).shape,
            m.ones(np.array(3), np.int64(4)).shape,
            m.ones((np.int64(3), np.array(4))).shape,
        ]
        for bad in (
            lambda lib: lib.ones((t(3.0), t(4))),
            lambda lib: lib.ones((np.float64(3.0), t(4))),
            lambda lib: lib.ones((np.array(3.0), t(4))),
            lambda lib: lib.ones(t([3, 3])),
        ):
            res.append(outcome(bad, m)[0][:2])
        res.append(outcome(lambda lib: lib.LongTensor((6, 0), 1, 1, 0), m)[0][:2])
        return res

    same_as_torch(run)


def test_half_tensor():  # test_half_tensor
    def run(m):
        x = m.tensor(data(5, 5), dtype=m.float32)
        z = m.zeros(5, 5)
        return [x.half().float(), z.copy_(x.half()), x.half().dtype]

    same_as_torch(run)


def test_storage():  # test_storage, test_has_storage
    def run(m):
        v = m.tensor(data(3, 5))
        s = v.storage()
        return [
            s[0] == v[0][0].item(),
            s[14] == v[2][4].item(),
            [s[k] for k in range(15)] == v.reshape(-1).tolist(),
            v.untyped_storage()[0:8].tolist() == v[0, :1].numpy().view(np.uint8).tolist(),
            s.size(),
            v.untyped_storage().nbytes(),
            [
                t.storage().size()
                for t in (
                    m.Tensor(),
                    m.Tensor(0),
                    m.Tensor([]),
                    m.Tensor().clone(),
                    m.Tensor([0, 0, 0]).nonzero(),
                    m.Tensor().new(),
                )
            ],
        ]

    assert same_as_torch(run, count_warnings=False)[:4] == [True] * 4  # (TypedStorage: once)


@pytest.mark.parametrize(
    "call",
    [
        "x.repeat(2, -1)",
        "x.repeat(-1, -1)",
        "x.repeat(1, 1, -1)",
        "x.repeat(-1, 0)",
        "x.new_empty(-1)",
        "x.new_zeros(-1)",
        "x.new_ones(-1)",
        "x.new_empty((2, -3))",
        "m.zeros(-1)",
        "m.empty(2, -1)",
    ],
)
def test_negative_sizes(call):  # test_repeat, test_empty_full: torch's negative-size errors
    def run(m):
        return eval(call, {"m": m, "x": m.zeros(2, 3)})  # noqa: S307 - the calls above

    assert same_as_torch(run)[:2] == ("raises", "RuntimeError")
