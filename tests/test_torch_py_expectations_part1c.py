"""The expectations of torch's test/test_torch.py, characters 0 to about 325,000, part 3 of 6:
test_newaxis_numpy_comparison to test_view_and_reshape (indexing with None, writes through keys,
index_add/copy/fill, t, take/put, flatten, gather/scatter, masked_scatter/masked_fill, abs,
var, structseq repr, view/reshape), as programs run in gradkit and in torch 2.13 and compared
(see tests/tensor_twins.py). Each program names the torch test it covers."""

import math

import numpy as np

from tensor_twins import data, ints, outcome, same_as_torch


def _consec(m, *size, start=1):
    return (m.arange(int(np.prod(size)), dtype=m.float32) + start).view(*size)


def test_newaxis_numpy_comparison():  # test_newaxis_numpy_comparison
    def run(m):
        one, two = m.arange(0, 10), m.arange(0, 12).view(3, 4)
        cases1 = [
            (None,),
            (None, None),
            (..., None),
            (None, ...),
            (2, None),
            (None, 2),
            (..., None, 2),
            (..., 2, None),
            (2, ..., None),
            (2, None, ...),
            (None, 2, ...),
            (None, ..., 2),
        ]
        cases2 = [
            (None,),
            (None, None),
            (None, None, None),
            (..., None),
            (..., None, None),
            (None, ...),
            (None, ..., None),
            (None, None, ...),
            (2, None),
            (2, None, ...),
            (2, ..., None),
            (None, 2, ...),
            (..., 2, None),
            (..., None, 2),
            (None, ..., 2),
            (1, 2, None),
            (1, 2, ..., None),
            (1, ..., 2, None),
            (..., 1, None, 2),
            (..., 1, 2, None),
            (1, None, 2, ...),
            (None, 1, ..., 2),
            (None, 1, 2, ...),
        ]
        return [one[k] for k in cases1] + [two[k] for k in cases2]

    got = same_as_torch(run)
    assert got[0][2] == (1, 10)


def test_newindex():  # test_newindex
    def run(m):
        res = []
        for index in (0, 1, 2, (0, 1), (1, 2), (0, 2), m.LongTensor((0, 2))):
            ref = m.zeros(3, 3, 3)
            ref[index] = _consec(m, 3, 3, 3)[index]
            res.append(ref.clone())
            ref[index] = 0
            res.append(ref)
        ref = m.zeros(3, 3, 3)
        for key in [
            (1, 1, 1, 1),
            (1, 1, 1, (1, 1)),
            (3, 3, 3, 3, 3, 3, 3, 3),
            0.0,
            slice(0.0, 2.0),
            (0.0, slice(0.0, 2.0)),
            (0.0, slice(None), slice(0.0, 2.0)),
            (0.0, ..., slice(0.0, 2.0)),
            (0.0, slice(None), 0.0),
        ]:

            def write(lib, key=key):
                ref[key] = 1

            res.append(outcome(write, m)[0][:2])
        return res

    same_as_torch(run)


def test_index_add_and_neg_dims():  # test_index_add, test_index_add/copy/fill_neg_dim
    def run(m):
        dest, src = m.tensor(data(3, 4, 5)), m.tensor(data(3, 4, 5, seed=1))
        idx = m.tensor([2, 0, 1])
        res = [
            dest.clone().index_add_(0, idx, src),
            m.tensor(data(3)).index_add_(0, idx, m.tensor(data(3, seed=2))),
        ]
        d = m.tensor(data(10, 10))
        index = m.tensor(ints(10, low=0, high=9))
        for dim in (0, 1):
            for name, args in (
                ("index_add_", (m.tensor(data(10, 10, seed=3)),)),
                ("index_copy_", (m.tensor(data(10, 10, seed=3)),)),
                ("index_fill_", (12,)),
            ):
                if name == "index_copy_":
                    perm = m.tensor(np.random.default_rng(dim).permutation(10))
                    res += [
                        getattr(d.clone(), name)(dim, perm, *args),
                        getattr(d.clone(), name)(dim - 2, perm, *args),
                    ]
                else:
                    res += [
                        getattr(d.clone(), name)(dim, index, *args),
                        getattr(d.clone(), name)(dim - 2, index, *args),
                    ]
        return res

    same_as_torch(run)


def test_t():  # test_t, test_t_not_2d_error
    def run(m):
        x0, x1, x2 = m.tensor(2.5), m.arange(4), m.tensor(data(2, 2))
        return [
            x0.t(),
            x1.t(),
            x2.t(),
            x2.transpose(0, 1),
            outcome(lambda lib: lib.zeros(2, 2, 2).t(), m)[0],
            outcome(lambda lib: lib.zeros(2, 3, 4).t_(), m)[0],
        ]

    same_as_torch(run)


def test_take_put():  # test_take, test_put_, test_put_accumulate
    def run(m):
        src = m.tensor(data(2, 3, 5))
        idx = m.LongTensor([[0, 2], [3, 4]])
        values = m.tensor(data(2, 2, seed=1))
        dst = m.tensor(data(2, 3, 5, seed=2))
        acc = m.ones(2, 2)
        acc.put_(m.LongTensor([[0, 1], [0, 1]]), m.Tensor([1, 2, 3, 4]), accumulate=True)
        return [
            src.take(idx),
            src.transpose(1, 2).take(idx),
            src.bool().take(idx),
            dst.clone().put_(idx, values),
            dst.transpose(1, 2).clone().put_(idx, values),
            dst.bool().put_(idx, m.tensor([[False, False], [False, False]])),
            acc,
            acc.tolist(),
        ]

    same_as_torch(run)


def test_flatten():  # test_flatten
    def run(m):
        src = m.tensor(data(5, 5, 5, 5))
        return (
            [m.tensor(123).flatten(), m.tensor([123]).shape]
            + [
                src.flatten(*args).shape
                for args in [(0, -1), (0, 2), (0, 1), (1, 2), (2, 3), (-2, -1)]
            ]
            + [
                src.flatten(2, 2),
                outcome(lambda lib: src.flatten(5, 10), m)[0],
                outcome(lambda lib: src.flatten(2, 0), m)[0],
            ]
        )

    same_as_torch(run)


def test_gather_scatter():  # test_gather, test_scatter, test_scatterAdd, test_scatterFill
    def run(m):
        src = m.tensor(data(4, 5, 6))
        res = []
        for dim in range(3):
            shape = [4, 5, 6]
            shape[dim] = 3
            index = m.tensor(
                np.stack(
                    [
                        np.random.default_rng(i).permutation([4, 5, 6][dim])[:3]
                        for i in range(int(np.prod(shape)) // 3)
                    ]
                ).reshape([s for k, s in enumerate(shape) if k != dim] + [3])
            )
            index = index.movedim(-1, dim).contiguous()
            values = m.tensor(data(*shape, seed=dim))
            res += [
                m.gather(src, dim, index),
                src.clone().scatter_(dim, index, values),
                src.clone().scatter_add_(dim, index, values),
                src.clone().scatter_(dim, index, 0.25),
                src.clone().scatter_(dim, m.zeros(0, dtype=m.long), values),
            ]
            bad = index.clone()
            bad[0, 0, 0] = 23
            res += [
                outcome(lambda lib, bad=bad, dim=dim: lib.gather(src, dim, bad), m)[0][:2],
                outcome(
                    lambda lib, bad=bad, dim=dim, values=values: src.clone().scatter_(
                        dim, bad, values
                    ),
                    m,
                )[0][:2],
                outcome(
                    lambda lib, bad=bad, dim=dim, values=values: src.clone().scatter_add_(
                        dim, bad, values
                    ),
                    m,
                )[0][:2],
            ]
        s3 = m.tensor(data(3, 4, 5))
        expected, idx = s3.max(2, True)
        t = m.tensor([[False, True], [True, True]])
        return res + [m.gather(s3, 2, idx), expected, m.gather(t, 1, m.tensor([[0, 0], [1, 0]]))]

    same_as_torch(run)


def test_masked_scatter():  # test_masked_scatter
    def run(m):
        res = []
        for mask_dtype in (m.uint8, m.bool):
            for dt in (m.uint8, m.int8, m.int16, m.int32, m.int64, m.float32, m.float64, m.half):
                dest = m.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], dtype=dt)
                src = m.tensor([0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=dt)
                mask = m.tensor((0, 0, 0, 0, 1, 0, 1, 0, 1, 0), dtype=mask_dtype)
                # (torch warns of a uint8 mask before refusing it; gradkit only refuses it)
                res.append(
                    outcome(
                        lambda lib, dest=dest, mask=mask, src=src: dest.masked_scatter_(mask, src),
                        m,
                    )[0]
                )
                res.append(
                    outcome(
                        lambda lib, dest=dest, mask=mask, src=src: dest.masked_scatter_(
                            mask, src + 1
                        ),
                        m,
                    )[0]
                )
                res.append(
                    outcome(
                        lambda lib, dest=dest, mask=mask: dest.masked_scatter_(mask, lib.zeros(2)),
                        m,
                    )[0][:2]
                )
        return res

    same_as_torch(run)


def test_masked_fill():  # test_masked_fill
    def run(m):
        res = []
        for dt in (
            m.uint8,
            m.int8,
            m.int16,
            m.int32,
            m.int64,
            m.float32,
            m.float64,
            m.half,
            m.bool,
            m.complex64,
        ):
            for mask_dtype in (m.uint8, m.bool):
                dst = m.tensor([0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=dt)
                mask = m.tensor([1, 0, 1, 1, 0, 0, 1, 0, 0, 1]).to(mask_dtype)
                res.append(outcome(lambda lib, dst=dst, mask=mask: dst.masked_fill_(mask, 0.75), m))
        big = m.tensor(data(10, 10, 10)).permute((2, 0, 1))
        return res + [big.clone().masked_fill_(big > 0, 0.5), big.masked_fill((big > 0).byte(), 2)]

    same_as_torch(run)


def test_abs():  # test_abs
    def run(m):
        res = []
        for dtype in (m.float64, m.float32, m.int64, m.int32, m.int16, m.int8, m.uint8):
            x = m.tensor(ints(3, 4, 5, low=0, high=100)).to(dtype)
            sign = m.tensor(ints(3, 4, 5, low=0, high=2) * 2 - 1).to(dtype)
            res += [(x * sign).abs(), x.abs()]
        res += [
            m.LongTensor((-(2**31 + 1),)).abs(),
            m.tensor([0.0, -0.0]).abs(),
            m.abs(-m.zeros(10000, dtype=m.float64)).sum(),
            m.tensor([-0.0]).abs().tolist(),
        ]
        return res

    got = same_as_torch(run)
    assert math.copysign(1.0, got[-1][0]) == 1.0


def test_unbiased_and_var_stability():  # test_unbiased, test_var_stability
    def run(m):
        t = m.tensor(data(100), dtype=m.float32)
        return [
            t.var(0),
            t.var(0, unbiased=True),
            t.var(),
            t.var(unbiased=False),
            t.var(0, unbiased=False),
            m.FloatTensor([1.0, 2.0]).var(unbiased=True),
            m.FloatTensor([1.0, 2.0]).var(unbiased=False),
            m.FloatTensor([1.0, 2.0, 3.0]).var(unbiased=True),
            m.FloatTensor([1.0, 2.0, 3.0]).var(unbiased=False),
            t.std(0),
            t.std(),
            t.std(unbiased=False),
            m.FloatTensor([2281.5, 2281.25]).var(dim=0),
            m.FloatTensor([2281.5, 2281.25]).var(),
        ]

    got = same_as_torch(run)
    assert got[-1][3] == 0.03125


def test_structseq_repr():  # test_structseq_repr
    same_as_torch(lambda m: repr(m.arange(250).reshape(5, 5, 10).max(1)))


def test_view_and_reshape():  # test_view_empty, test_reshape, test_empty_reshape, test_view
    def run(m):
        x = m.tensor(data(3, 3))
        y = m.tensor(data(4, 4, 4))[:, 0, :]
        s = m.tensor(1.5)
        empty = m.tensor([])
        z = m.zeros(0, 6)
        res = [
            z.view(1, 0, 6, 1, 1).shape,
            x.data_ptr() == x.reshape(-1).data_ptr(),
            x.data_ptr() == x.reshape(1, 9, 1).data_ptr(),
            m.reshape(x, (9,)),
            outcome(lambda lib: x.reshape(-1, -1), m)[0],
            y.data_ptr() != y.reshape(-1).data_ptr(),
            y.reshape(-1),
            y.reshape(2, 2, 4).data_ptr() == y.data_ptr(),
            s.reshape(-1).shape,
            outcome(lambda lib: s.reshape(2), m)[0],
            empty.reshape(-1),
            empty.reshape([0]),
            empty.reshape([0, 1]).shape,
            empty.reshape([1, -1]).shape,
            outcome(lambda lib: empty.reshape(1), m)[0],
            x.data_ptr() == x.reshape_as(m.zeros(1, 9, 1)).data_ptr(),
            outcome(lambda lib: x.reshape_as(lib.zeros(10)), m)[0],
            z.reshape(1, 0, 6, 1, 1).shape,
            outcome(lambda lib: z.reshape(0, -1), m)[0],
        ]
        t = m.tensor(data(15))
        e = m.empty(0)
        res += [
            t.view_as(m.zeros(3, 5)).shape,
            t.view(m.Size([3, 5])).shape,
            t.view(-1, 5).shape,
            e.view(0, 3, 0, 1).shape,
            e.view(-1).shape,
            e.view(10, 3, -1).shape,
            outcome(lambda lib: e.view(-1, 0), m)[0],
            outcome(lambda lib: e.view(3, 0, -1, 0), m)[0],
            outcome(lambda lib: t.view(15, 0), m)[0],
            outcome(lambda lib: t.view(7, -1), m)[0],
            outcome(lambda lib: t.view(15, -1, -1), m)[0],
        ]
        w = m.tensor(data(4, 2, 5, 1, 6, 2, 9, 3)).transpose(-1, 2).transpose(-2, 3)
        for size in (
            [8, 1, 3, 3, 3, 4, 1, 3, 5],
            [2, 4, 3, 1, 9, 2, 2, 3, 5, 1],
            [1, 1, 2, 1, 4, 3, 1, 1, 9, 1, 2, 1, 2, 3, 1, 5, 1, 1],
        ):
            res.append(w.view(*size))
        for size in ([-1], [24, 9, 6, 2, 1, 5], [8, 3, 9, 6, 10], [8, 3, 54, 2, 1, 5]):
            res.append(outcome(lambda lib, size=size: w.view(*size), m)[0])
        zero = m.empty(1, 1).fill_(2.0).expand(3, 4)
        return res + [zero.view(-1), zero.view(1, -1, 1), zero.view(6, 2, 1)]

    same_as_torch(run)
