"""The expectations of torch's test/nn/test_embedding.py for nn.EmbeddingBag and
F.embedding_bag, as programs run in gradkit and in torch 2.13 and compared: values, dtypes,
shapes, gradients (gradcheck / gradgradcheck in float64), errors by type and message. Each
program names the torch test it covers; torch's random indices and bag sizes are drawn here
from a fixed NumPy generator so both libraries see the same data."""
import itertools

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.outcome import assert_like_torch  # noqa: E402

MODES = ["sum", "mean", "max"]
INDEX_DTYPES = list(itertools.product(["int32", "int64"], ["int32", "int64"]))


def _values(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _known_bag(m, mode, wdtype="float64", dtype="int64", odtype="int64"):
    """torch's _test_EmbeddingBag: weight rows 1..10, bags [3 1 1], [], [1 4 0], [], []."""
    bag = m.nn.EmbeddingBag(5, 2, mode=mode).to(getattr(m, wdtype))
    with m.no_grad():
        bag.weight.copy_(m.arange(1, 11).view(5, 2))
    index = m.tensor([3, 1, 1, 1, 4, 0], dtype=getattr(m, dtype))
    offsets = m.tensor([0, 0, 3, 3, 6], dtype=getattr(m, odtype))
    return bag, index, offsets


@pytest.mark.parametrize("dtypes", INDEX_DTYPES)
@pytest.mark.parametrize("wdtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_device(mode, wdtype, dtypes):  # test_embedding_bag_device, _half
    def program(m):
        bag, index, offsets = _known_bag(m, mode, wdtype, *dtypes)
        out = bag(index, offsets)
        out.backward(m.tensor([99, 99, 1, 2, 99, 99, 3, 4, 99, 99.]).view(5, 2).to(out.dtype))
        results = [out, bag.weight.grad]
        bag.zero_grad()
        out = bag(index.view(2, -1))  # the same bags as a 2-D input
        out.backward(m.tensor([[1, 2], [3, 4.]]).to(out.dtype))
        results += [out, bag.weight.grad]
        bag.zero_grad()
        empty = bag(m.tensor([], dtype=index.dtype), m.tensor([0, 0, 0, 0], dtype=offsets.dtype))
        empty.sum().backward()
        return results + [empty, bag.weight.grad]
    assert_like_torch(program, rtol=1e-3 if wdtype == "float16" else 1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("max_norm", [None, 3.0])
@pytest.mark.parametrize("sizes", [(7, 5, 3, 4), (1, 2, 1, 2), (2, 1, 2, 1), (20, 3, 6, 9)])
def test_embedding_bag_vs_embedding(mode, max_norm, sizes):  # _test_EmbeddingBag_vs_Embedding
    n, d, b, length = sizes
    index = np.random.default_rng(1).integers(0, n, (b, length))

    def program(m):
        weight = m.tensor(_values(n, d) * 3)
        bag = m.nn.EmbeddingBag(n, d, mode=mode, max_norm=max_norm, _weight=weight.clone())
        embedding = m.nn.Embedding(n, d, max_norm=max_norm, _weight=weight.clone())
        out = bag(m.tensor(index.reshape(-1)), m.arange(0, b * length, length))
        rows = embedding(m.tensor(index))
        reference = {"sum": rows.sum(1), "mean": rows.mean(1), "max": rows.max(1)[0]}[mode]
        grad = m.tensor(_values(b, d, seed=2))
        out.backward(grad)
        reference.backward(grad)
        return out, reference, bag.weight.grad, embedding.weight.grad, bag.weight
    assert_like_torch(program, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_1d_padding_idx(mode, include_last_offset):  # test_embedding_bag_1D_...
    rng = np.random.default_rng(3)
    sizes = list(rng.integers(1, 10, 10))
    sizes[2], sizes[5] = 0, 10  # an empty bag and a full one
    for allpad in (False, True):
        index = [1] * sum(sizes) if allpad else list(rng.integers(0, 100, sum(sizes)))
        offsets = list(np.cumsum([0] + sizes[:-1])) + ([sum(sizes)] if include_last_offset
                                                       else [])
        for padding_idx in sorted(set(index))[:4] + [None]:
            def program(m, index=index, offsets=offsets, padding_idx=padding_idx):
                weight = m.tensor(_values(100, 3), requires_grad=True)
                out = m.nn.functional.embedding_bag(
                    m.tensor(index), weight, m.tensor(offsets), mode=mode,
                    include_last_offset=include_last_offset, padding_idx=padding_idx)
                out.sum().backward()
                return out, weight.grad
            assert_like_torch(program, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rows", [1, 10])
def test_embedding_bag_2d_padding_idx(mode, rows):  # test_embedding_bag_2D_padding_idx
    rng = np.random.default_rng(4)
    for allpad in (False, True):
        index = np.ones((rows, 10), dtype=np.int64) if allpad else rng.integers(0, 10, (rows, 10))
        index[rows - 1] = index[rows - 1][0]  # one row of a single index: all padding below
        for padding_idx in sorted(set(index.reshape(-1).tolist())):
            def program(m, index=index, padding_idx=padding_idx):
                weight = m.tensor(_values(10, 3), requires_grad=True)
                out = m.nn.functional.embedding_bag(m.tensor(index), weight, mode=mode,
                                                    padding_idx=padding_idx)
                out.sum().backward()
                return out, weight.grad
            assert_like_torch(program, rtol=1e-12, atol=1e-12)


def test_embedding_bag_functional():  # test_embedding_bag_functional
    def program(m):
        index = m.tensor([[1, 3, 2], [0, 2, 1]])
        table = m.tensor(_values(4, 3), requires_grad=True)
        module = m.nn.EmbeddingBag(4, 3)
        module.weight = m.nn.Parameter(table)
        pretrained = m.nn.EmbeddingBag.from_pretrained(table, padding_idx=2)
        return (module(index), m.nn.functional.embedding_bag(index, table),
                pretrained(index), m.nn.functional.embedding_bag(index, table, padding_idx=2),
                pretrained.weight.requires_grad, repr(pretrained))
    assert_like_torch(program)


@pytest.mark.parametrize("padding_idx", range(-6, 6))
def test_embedding_bag_padding_idx_error(padding_idx):  # test_embedding_bag_padding_idx_error
    assert_like_torch(lambda m: m.nn.functional.embedding_bag(
        m.tensor([[1, 3, 2], [0, 2, 1]]), m.tensor(_values(4, 3)), padding_idx=padding_idx))
    for m in (torch, gradkit):
        if -4 <= padding_idx < 4:
            assert m.nn.EmbeddingBag(4, 3, padding_idx=padding_idx).padding_idx == padding_idx % 4
        else:
            with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
                m.nn.EmbeddingBag(4, 3, padding_idx=padding_idx)


def test_embeddingbag_from_pretrained():  # test_embeddingbag_from_pretrained, _options,
    def program(m):                       # test_embedding_bag_from_pretrained(_padding_idx)
        table = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=m.float64)
        plain = m.nn.EmbeddingBag.from_pretrained(table.clone())
        results = [plain(m.tensor([[0, 1]])), plain(m.tensor([0, 1]), m.arange(2)),
                   plain.weight.requires_grad]
        options = m.nn.EmbeddingBag.from_pretrained(table, max_norm=2.0, norm_type=0.5,
                                                    mode="max", freeze=False)
        return results + [options(m.tensor([[0, 1]])), table, options.weight.requires_grad,
                          repr(options)]
    assert_like_torch(program, rtol=1e-12)


def test_embeddingbag_include_last_offset():  # test_embeddingbag_include_last_offset
    def program(m):
        bag = m.nn.EmbeddingBag(100, 3, include_last_offset=True, padding_idx=61,
                                _weight=m.tensor(_values(100, 3)))
        index = m.tensor([0, 1, 2, 3])
        # the last bag runs to the end of the input, whatever the last offset says
        return [bag(index, m.tensor(offsets)) for offsets in
                ([0, 3, 3], [0, 3, 4], [0, 1, 2], [0, 2], [0, 1, 1, 2], [0, 2, 2, 2])]
    assert_like_torch(program)


@pytest.mark.parametrize("dtypes", INDEX_DTYPES)
def test_embedding_bag_empty_input(dtypes):  # test_embedding_bag_empty_input
    def program(m):
        bag = m.nn.EmbeddingBag(4, 3)
        empty = m.tensor([], dtype=getattr(m, dtypes[0]))
        return [bag(empty, m.tensor(offsets, dtype=getattr(m, dtypes[1])))
                for offsets in ([0], [0, 0])]
    assert_like_torch(program)


@pytest.mark.parametrize("dtypes", list(itertools.product(["float32", "float64"],
                                                          ["int32", "int64"])))
@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_out_of_bounds_idx(mode, dtypes):  # test_embedding_bag_out_of_bounds_idx
    for index, weighted in itertools.product(([[-1, 1]], [[11, 8]]), (False, mode == "sum")):
        def program(m, index=index, weighted=weighted):
            wdtype = getattr(m, dtypes[0])
            return m.nn.functional.embedding_bag(
                m.tensor(index, dtype=getattr(m, dtypes[1])), m.ones(10, 2, dtype=wdtype),
                per_sample_weights=m.ones(1, 2, dtype=wdtype) if weighted else None,
                padding_idx=0, mode=mode)
        assert_like_torch(program)


def test_embedding_bag_dimension_errors():  # test_embedding_bag_dimension_errors
    cases = [((2, 6), (2, 0, 0, 6, 6), (2, 0, 0, 6, 6)), ((2, 2), (2,), (2, 0, 0, 6, 6)),
             ((2, 2, 2), (2,), (2,))]
    for weight, index, offsets in cases:  # F's ValueErrors, then torch.embedding_bag's own
        assert_like_torch(lambda m, w=weight, i=index, o=offsets: m.nn.functional.embedding_bag(
            m.full(i, 1, dtype=m.int64), m.zeros(w, dtype=m.float64),
            m.zeros(o, dtype=m.int64)))
        assert_like_torch(lambda m, w=weight, i=index, o=offsets: m.embedding_bag(
            m.zeros(w, dtype=m.float64), m.full(i, 1, dtype=m.int64),
            m.zeros(o, dtype=m.int64)))


@pytest.mark.parametrize("wdtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding_idx", [None, 0])
def test_embedding_bag_out_of_range_messages(wdtype, mode, padding_idx):
    # (torch's fast path, a float32/float16 sum or mean without padding, words it otherwise)
    for index in ([1, -1, 5], [1, 7, -1, 5]):
        assert_like_torch(lambda m, i=index: m.nn.functional.embedding_bag(
            m.tensor(i), m.ones(4, 3, dtype=getattr(m, wdtype)), m.tensor([0]), mode=mode,
            padding_idx=padding_idx))


@pytest.mark.parametrize("dtypes", INDEX_DTYPES)
def test_embeddingbag_per_sample_weights_failures(dtypes):  # test_EmbeddingBag_per_sample_...
    def bag(m, mode="sum"):
        return m.nn.EmbeddingBag(5, 2, mode=mode, _weight=m.ones(5, 2))
    index = [3, 1, 1, 1, 4, 0]

    def program(m, weights_dtype="float64", weights=6, index_shape=(6,)):
        return bag(m)(m.tensor(index, dtype=getattr(m, dtypes[0])).view(index_shape),
                      None if len(index_shape) == 2 else
                      m.tensor([0, 0, 3, 3, 6], dtype=getattr(m, dtypes[1])),
                      m.ones(weights, dtype=getattr(m, weights_dtype)))
    assert_like_torch(program)  # dtype
    assert_like_torch(lambda m: program(m, "float32", 5))  # shape, 1-D input
    assert_like_torch(lambda m: program(m, "float32", 6, (2, 3)))  # shape, 2-D input
    for mode in ("max", "mean"):
        for m in (torch, gradkit):
            with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
                bag(m, mode)(m.tensor([[0, 1]]), None, m.ones(1, 2))


def _reference_bags(m, index, weight, offsets, mode, sample_weights, include_last_offset):
    """torch's _embedding_bag_reference_impl: bags sliced by the offsets, reduced one by one."""
    rows = weight.index_select(0, index.long()) * sample_weights.unsqueeze(1)
    ends = offsets[1:].tolist() + ([] if include_last_offset else [len(index)])
    bags = []
    for start, end in zip(offsets.tolist(), ends):
        part = rows[start:end]
        if end == start:
            bags.append(m.zeros(weight.shape[1], dtype=weight.dtype))
        else:
            bags.append({"sum": part.sum(0), "mean": part.sum(0) / (end - start),
                         "max": part.max(0)[0]}[mode])
    return m.stack(bags)


@pytest.mark.parametrize("dtypes", INDEX_DTYPES)
@pytest.mark.parametrize("mode,weighted", [("sum", False), ("sum", True), ("max", False),
                                           ("mean", False)])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embeddingbag_per_sample_weights_and_new_offsets(dtypes, mode, weighted,
                                                         include_last_offset):
    # test_EmbeddingBag_per_sample_weights_and_(new_)offsets, _empty_per_sample_weights_...
    for index, offsets in (([3, 1, 1, 1, 4, 0], [0, 0, 3, 3, 6]), ([], [0, 0, 0, 0, 0])):
        def program(m, index=index, offsets=offsets):
            bag = m.nn.EmbeddingBag(5, 2, mode=mode, include_last_offset=include_last_offset,
                                    _weight=m.arange(1.0, 11.0, dtype=m.float64).view(5, 2))
            idx = m.tensor(index, dtype=getattr(m, dtypes[0]))
            off = m.tensor(offsets + ([len(index)] if include_last_offset else []),
                           dtype=getattr(m, dtypes[1]))
            sample = m.tensor(_values(len(index)), requires_grad=True) if weighted else None
            out = bag(idx, off, sample)
            grad = m.tensor(_values(*out.shape, seed=5))
            out.backward(grad)
            results = [out, bag.weight.grad, None if sample is None else sample.grad]
            if index and not include_last_offset:  # torch's reference (its own last bag)
                reference = _reference_bags(
                    m, idx, bag.weight.detach(), off, mode,
                    sample.detach() if weighted else m.ones(len(index), dtype=m.float64), False)
                results.append(reference)
            return results
        assert_like_torch(program, rtol=1e-12)


@pytest.mark.parametrize("dtypes", list(itertools.product(["int32", "int64"],
                                                          ["float32", "float64"])))
@pytest.mark.parametrize("trainable", [False, True])
@pytest.mark.parametrize("sizes", [(2, 3, 5, 7), (2, 5, 53, 23), (101, 5, 3, 7), (2, 101, 3, 7)])
def test_embeddingbag_per_sample_weights_and_no_offsets(dtypes, trainable, sizes):
    n, d, b, length = sizes
    index = np.random.default_rng(6).integers(0, n, (b, length))

    def program(m):
        wdtype = getattr(m, dtypes[1])
        weight = m.tensor(_values(n, d), dtype=wdtype)
        bag = m.nn.EmbeddingBag(n, d, mode="sum", _weight=weight.clone())
        sample = m.tensor(_values(b, length, seed=7), dtype=wdtype).softmax(-1)
        sample.requires_grad_(trainable)
        out = bag(m.tensor(index, dtype=getattr(m, dtypes[0])).view(-1),
                  m.arange(0, b * length, length, dtype=getattr(m, dtypes[0])),
                  sample.view(-1))
        out.backward(m.tensor(_values(b, d, seed=8), dtype=wdtype))
        return out, bag.weight.grad, sample.grad
    assert_like_torch(program, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bag_grad,weights_grad", list(itertools.product([True, False],
                                                                         repeat=2)))
def test_embedding_bag_per_sample_weights_grad(bag_grad, weights_grad):  # same name
    def program(m):
        bag = m.nn.EmbeddingBag(16, 4, mode="sum", _weight=m.tensor(_values(16, 4)))
        bag.requires_grad_(bag_grad)
        w = m.tensor(_values(3, 4, seed=9), requires_grad=weights_grad)
        out = bag(m.arange(1, 5).expand(3, -1), per_sample_weights=m.softmax(w, dim=-1))
        return out, out.requires_grad
    assert_like_torch(program, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_non_contiguous_weight(mode):  # test_embedding_bag_non_contiguous_weight
    def program(m):
        weight = m.tensor(_values(3, 4))[:, :3]
        index, offsets = m.tensor([0, 1, 2]), m.tensor([0, 2])
        return (m.nn.functional.embedding_bag(index, weight, offsets, mode=mode),
                m.nn.functional.embedding_bag(index, weight.contiguous(), offsets, mode=mode))
    assert_like_torch(program)


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_scale_grad_by_freq(mode, padding_idx):  # (the option; not gradcheck-able)
    """The documented meaning: each row's gradient over its index's count in the batch, as
    torch's F.embedding gives it. (torch 2.13's CPU embedding_bag divides some rows by another
    index's count: [0, 0, 1, 2, 2, 2] gives row 2 three times its gradient.)"""
    index, bags = [0, 2, 2, 1, 0, 0, 2], [(0, 3), (3, 5), (5, 7)]

    def composed(m):  # F.embedding's scaled rows, reduced per bag without the padding
        weight = m.tensor(_values(5, 3), requires_grad=True)
        rows = m.nn.functional.embedding(m.tensor(index), weight, padding_idx,
                                         scale_grad_by_freq=True)
        keep = (m.tensor(index) != (-1 if padding_idx is None else padding_idx)).double()
        out = m.stack([(rows[a:b] * keep[a:b, None]).sum(0) / (keep[a:b].sum().clamp(min=1)
                                                               if mode == "mean" else 1)
                       for a, b in bags])
        out.backward(m.tensor(_values(3, 3, seed=10)))
        return out, weight.grad

    def bagged(m):
        weight = m.tensor(_values(5, 3), requires_grad=True)
        out = m.nn.functional.embedding_bag(m.tensor(index), weight, m.tensor([0, 3, 5]),
                                            mode=mode, scale_grad_by_freq=True,
                                            padding_idx=padding_idx)
        out.backward(m.tensor(_values(3, 3, seed=10)))
        return out, weight.grad
    got, expected = bagged(gradkit), composed(torch)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-12)
    assert_like_torch(composed, rtol=1e-12)


def test_embedding_bag_argument_errors():  # (F.embedding_bag's Python checks, ATen's)
    def bag(m, index=(1, 2), offsets=(0, 1), **options):
        return m.nn.functional.embedding_bag(m.tensor(index), m.ones(4, 3), m.tensor(offsets),
                                             **options)
    for options in ({"mode": "max", "scale_grad_by_freq": True}, {"mode": "max", "sparse": True},
                    {"mode": "min"}):
        assert_like_torch(lambda m, o=options: bag(m, **o))
    for index, offsets in (((1, 2), (1,)), ((1, 2), (0, 3)), ((1.0, 2.0), (0, 1)),
                           ((1, 2), (0.0, 1.0))):
        assert_like_torch(lambda m, i=index, o=offsets: bag(m, i, o))
    assert_like_torch(lambda m: m.nn.functional.embedding_bag(
        m.ones(3, 4, dtype=m.int64), m.ones(4, 3), m.arange(3)))  # 2-D input and offsets
    assert_like_torch(lambda m: m.nn.functional.embedding_bag(m.ones(3, dtype=m.int64),
                                                              m.ones(4, 3)))  # no offsets
    # index types promote together: a uint8 input with int64 offsets is int64
    assert_like_torch(lambda m: bag(m, m.tensor([1, 2], dtype=m.uint8).tolist()).dtype)
    assert_like_torch(lambda m: m.nn.functional.embedding_bag(
        m.tensor([[1, 2]], dtype=m.int16), m.ones(4, 3)))


def test_embedding_bag_gradcheck():  # (the OpInfo gradient checks, float64)
    index, offsets = gradkit.tensor([0, 2, 2, 1, 3, 0]), gradkit.tensor([0, 2, 2, 5])
    weight = gradkit.tensor(_values(4, 3), requires_grad=True)
    sample = gradkit.tensor(_values(6, seed=11), requires_grad=True)
    for mode in MODES:
        def fn(w, mode=mode):
            return gradkit.nn.functional.embedding_bag(index, w, offsets, mode=mode)
        assert gradkit.autograd.gradcheck(fn, (weight,))
        assert gradkit.autograd.gradgradcheck(fn, (weight,))

    def weighted(w, s):
        return gradkit.nn.functional.embedding_bag(index, w, offsets, mode="sum",
                                                   per_sample_weights=s)
    assert gradkit.autograd.gradcheck(weighted, (weight, sample))
    assert gradkit.autograd.gradgradcheck(weighted, (weight, sample))


def test_embedding_bag_sparse_refused():  # test_embedding_bag_device's sparse=True half
    bag = gradkit.nn.EmbeddingBag(5, 2, mode="sum", sparse=True)
    with pytest.raises(NotImplementedError, match="sparse=True .* not supported by gradkit"):
        bag(gradkit.tensor([0, 1]), gradkit.tensor([0]))
    with gradkit.no_grad():
        assert bag(gradkit.tensor([0, 1]), gradkit.tensor([0])).shape == (1, 2)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_aten_embedding_bag_bookkeeping(mode, include_last_offset):  # torch.embedding_bag
    def program(m):
        offsets = [0, 1, 3] + ([6] if include_last_offset else [])
        return m.embedding_bag(m.tensor(_values(5, 2)), m.tensor([3, 1, 1, 2, 4, 0]),
                               m.tensor(offsets), False, mode, False, None,
                               include_last_offset, 1)
    assert_like_torch(program)
