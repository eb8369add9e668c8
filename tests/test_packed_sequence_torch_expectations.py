"""The expectations of torch's test/nn/test_packed_sequence.py (PackedSequenceTest), as
programs run in gradkit and in torch 2.13 and compared: values, dtypes, shapes, strides,
gradients (gradcheck / gradgradcheck in float64), errors by type and message. torch's random
sequences are drawn here from a fixed NumPy generator so both libraries see the same data."""
import itertools

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.outcome import assert_like_torch  # noqa: E402

CASTS = {"float64": "double", "float32": "float", "int64": "long", "int32": "int",
         "int16": "short", "int8": "char", "uint8": "byte"}


def _rnn(m):
    return m.nn.utils.rnn


def _ordered(m, dtype, seed=0, batch=5, max_length=6):
    """torch's _ordered_sequence: random integer-valued sequences, longest first."""
    rng = np.random.default_rng(seed)
    low, high = (0, 256) if dtype == "uint8" else (-128, 128)
    seqs = [rng.integers(low, high, rng.integers(1, max_length + 1)) for _ in range(batch)]
    return [m.tensor(s, dtype=getattr(m, dtype)) for s in sorted(seqs, key=len, reverse=True)]


def _padded(m, dtype, seed=0):
    ordered = _ordered(m, dtype, seed)
    return _rnn(m).pad_sequence(ordered), [len(s) for s in ordered]


def _random_sequences(m, num_dim, seed=1, descending=False):
    """torch's 'more dimensions' sequences: lengths i*i, trailing dims of 4, shuffled."""
    rng = np.random.default_rng(seed)
    lengths = [i * i for i in range(1, 6)]
    if descending:
        lengths.reverse()
    else:
        rng.shuffle(lengths)
    return [m.tensor(rng.random((n, 5) + (4,) * num_dim)) for n in lengths]


@pytest.mark.parametrize("input_dtype", list(CASTS))
def test_type_casts(input_dtype):  # test_type_casts
    def program(m):
        results = []
        for cast, enforce_sorted in itertools.product(CASTS.values(), (True, False)):
            padded, lengths = _padded(m, input_dtype)
            packed = _rnn(m).pack_padded_sequence(padded, lengths, enforce_sorted=enforce_sorted)
            unpacked, lengths_out = _rnn(m).pad_packed_sequence(getattr(packed, cast)())
            results += [unpacked, lengths_out, unpacked.type().split(".")[-1]]
        return results
    assert_like_torch(program)


def test_wrong_order():  # test_wrong_order
    assert_like_torch(lambda m: _rnn(m).pack_padded_sequence(
        _rnn(m).pad_sequence([m.ones(22, 3), m.ones(25, 3)]), [22, 25], enforce_sorted=True))


def test_pad_sequence_with_tensor_sequences():  # same name
    assert_like_torch(lambda m: (
        _rnn(m).pad_sequence((m.tensor([[7, 6]]), m.tensor([[-7, -1]]))),
        _rnn(m).pad_sequence(m.tensor([[[7, 6]], [[-7, -1]]]))))


def test_pad_sequence_with_non_iterable_sequences():  # same name
    assert_like_torch(lambda m: _rnn(m).pad_sequence(5))


@pytest.mark.parametrize("batch_first", [True, False])
def test_total_length(batch_first):  # test_total_length
    def program(m):
        padded, lengths = _padded(m, "float32")
        packed = _rnn(m).pack_padded_sequence(padded, lengths)
        return [_rnn(m).pad_packed_sequence(packed, batch_first=batch_first,
                                            total_length=max(lengths) + delta)
                for delta in (0, 1, 8)]
    assert_like_torch(program)
    for total_length in (-1, 0, 5):  # (the longest sequence here has 6 steps)
        assert_like_torch(lambda m, t=total_length: _rnn(m).pad_packed_sequence(
            _rnn(m).pack_padded_sequence(*_padded(m, "float32")), batch_first, total_length=t))


def test_to():  # test_to (CPU only)
    def program(m):
        results = []
        for enforce_sorted in (True, False):
            padded, lengths = _padded(m, "int32")
            a = _rnn(m).pack_padded_sequence(padded, lengths, enforce_sorted=enforce_sorted).cpu()
            b = a.to(m.int64)
            results += [a is a.to("cpu"), a is a.cpu(), a is a.to("cpu", dtype=m.int32),
                        a is a.to(dtype=m.int32), list(a.long()), list(b), a.is_cuda,
                        a.is_pinned(), b.batch_sizes.dtype]
        return results
    assert_like_torch(program)


def test_pad_sequence():  # test_pad_sequence
    def program(m):
        a, b, c = m.tensor([1, 2, 3]), m.tensor([4, 5]), m.tensor([6])
        results = [_rnn(m).pad_sequence([b, a, c], True), _rnn(m).pad_sequence([b, a, c]),
                   _rnn(m).pad_sequence([b, a, c], True, 1), _rnn(m).pad_sequence([a, b, c], True),
                   _rnn(m).pad_sequence([b, a, c], True, 9, "left"),
                   _rnn(m).pad_sequence([b, a, c], False, -1, "left")]
        for num_dim in (0, 1, 2):
            sequences = _random_sequences(m, num_dim)
            for batch_first in (True, False):
                padded = _rnn(m).pad_sequence(sequences, batch_first)
                results += [padded, padded.stride()]
        return results
    assert_like_torch(program)


def test_pad_sequence_errors_and_broadcast():  # (pad_sequence's checks; ATen's copy_ slots)
    def seqs(m, *shapes):
        return [m.ones(shape) for shape in shapes]
    for program in (lambda m: _rnn(m).pad_sequence([]),
                    lambda m: _rnn(m).pad_sequence(seqs(m, (2,), (1,)), padding_side="up"),
                    lambda m: _rnn(m).pad_sequence(seqs(m, (2, 3), (2, 4))),
                    lambda m: _rnn(m).pad_sequence(seqs(m, (2, 3), (2, 3, 1))),
                    lambda m: _rnn(m).pad_sequence(seqs(m, (2, 3), (2, 1, 3))),
                    lambda m: _rnn(m).pad_sequence([m.tensor(1.0), m.tensor(2.0)]),
                    lambda m: _rnn(m).pad_sequence(seqs(m, (2, 3), (2, 1))),  # broadcast
                    lambda m: _rnn(m).pad_sequence([m.ones(1, dtype=m.int64), m.ones(3)], True,
                                                   2.5)):  # the first sequence's dtype
        assert_like_torch(program)


@pytest.mark.parametrize("batch_first", [True, False])
def test_unpad_sequence(batch_first):  # test_unpad_sequence
    def program(m):
        results = []
        for sequences in ([m.tensor([1, 2, 3]), m.tensor([4, 5]), m.tensor([6])],
                          _random_sequences(m, 1), _random_sequences(m, 2)):
            lengths = m.as_tensor([v.size(0) for v in sequences])
            padded = _rnn(m).pad_sequence(sequences, batch_first=batch_first)
            unpadded = _rnn(m).unpad_sequence(padded, lengths, batch_first=batch_first)
            results += [unpadded, [u.equal(s) for u, s in zip(unpadded, sequences)]]
        return results
    assert_like_torch(program)


def test_pack_sequence():  # test_pack_sequence
    def program(m):
        a, b, c = m.tensor([1, 2, 3]), m.tensor([4, 5]), m.tensor([6])
        results = [list(_rnn(m).pack_sequence([a, b, c], enforce_sorted=False)),
                   list(_rnn(m).pack_sequence([b, c, a], enforce_sorted=False)),
                   list(_rnn(m).pack_sequence([a, b, c], enforce_sorted=True))]
        for num_dim, batch_first in itertools.product((0, 1, 2), (True, False)):
            for sequences, enforce_sorted in ((_random_sequences(m, num_dim, 2, True), True),
                                              (_random_sequences(m, num_dim, 2, True), False),
                                              (_random_sequences(m, num_dim, 3), False)):
                lengths = [len(s) for s in sequences]
                padded = _rnn(m).pad_sequence(sequences, batch_first)
                packed = _rnn(m).pack_sequence(sequences, enforce_sorted)
                unpacked = _rnn(m).pad_packed_sequence(packed, batch_first)
                pack_padded = _rnn(m).pack_padded_sequence(padded, lengths, batch_first,
                                                           enforce_sorted)
                results += [list(packed), unpacked, padded.equal(unpacked[0]),
                            all(x.equal(y) for x, y in zip(packed[:2], pack_padded[:2]))]
        return results
    assert_like_torch(program)
    assert_like_torch(lambda m: _rnn(m).pack_sequence(
        [m.tensor([4, 5]), m.tensor([6]), m.tensor([1, 2, 3])], enforce_sorted=True))


def test_unpack_sequence():  # test_unpack_sequence
    def program(m):
        results = []
        for sequences in ([m.tensor([1, 2, 3]), m.tensor([4, 5]), m.tensor([6])],
                          _random_sequences(m, 0), _random_sequences(m, 2)):
            packed = _rnn(m).pack_sequence(sequences, enforce_sorted=False)
            results.append(_rnn(m).unpack_sequence(packed))
        return results
    assert_like_torch(program)


@pytest.mark.parametrize("sorted_lengths,shuffle", [([10, 8, 4, 2, 2, 2, 1], False),
                                                    ([11, 10, 8, 6, 4, 3, 1], False),
                                                    ([11, 10, 8, 6, 4, 3, 1], True)])
@pytest.mark.parametrize("batch_first", [True, False])
def test_pack_padded_sequence(sorted_lengths, shuffle, batch_first):  # same name
    permutation = np.random.default_rng(4).permutation(len(sorted_lengths)).tolist()

    def program(m):
        longest = sorted_lengths[0]
        padded = m.cat([m.cat([i * 100 + m.arange(1.0, 5 * n + 1).view(n, 1, 5),
                               m.zeros(longest - n, 1, 5)])
                        for i, n in enumerate(sorted_lengths, 1)], 1)
        lengths = sorted_lengths
        if shuffle:
            padded = padded.index_select(1, m.tensor(permutation))
            lengths = m.tensor(sorted_lengths).index_select(0, m.tensor(permutation))
        padded.requires_grad_()
        source = padded.transpose(0, 1) if batch_first else padded
        packed = _rnn(m).pack_padded_sequence(source, lengths, batch_first=batch_first,
                                              enforce_sorted=not shuffle)
        unpacked, unpacked_lengths = _rnn(m).pad_packed_sequence(packed, batch_first)
        grad = m.tensor(np.random.default_rng(5).standard_normal(tuple(unpacked.shape)))
        unpacked.backward(grad)
        return (list(packed), unpacked, unpacked.stride(), unpacked_lengths, padded.grad,
                packed.data.grad_fn.name(), unpacked.grad_fn.name())
    assert_like_torch(program)


def test_pack_padded_sequence_errors():  # test_pack_padded_sequence's error messages
    rng = np.random.default_rng(6)
    for shape, lengths, batch_first in (((3, 3), [1, 3, 2], False), ((0, 0), [], False),
                                        ((0, 1, 10), rng.random((11, 14, 14, 2)), True),
                                        ((3, 3), [3, 2], False), ((3, 3), [3, 2, 0], False),
                                        ((3, 2), [[3, 2]], False)):
        assert_like_torch(lambda m, s=shape, n=lengths, b=batch_first: _rnn(m).pack_padded_sequence(
            m.ones(s), m.tensor(n) if isinstance(n, np.ndarray) else n, b))


def test_packed_sequence_constructor():  # (PackedSequence's own forms)
    def program(m):
        data, sizes = m.arange(3.0), m.tensor([2, 1])
        return [list(_rnn(m).PackedSequence(data, sizes)),
                list(_rnn(m).PackedSequence((data, sizes))),
                list(_rnn(m).PackedSequence(data, sizes, m.tensor([1, 0]))),
                _rnn(m).invert_permutation(m.tensor([2, 0, 1]))]
    assert_like_torch(program)


def test_packing_gradients():  # (the OpInfo-style gradient checks, float64)
    x = gradkit.tensor(np.random.default_rng(7).standard_normal((4, 3, 2)), requires_grad=True)
    for enforce_sorted, lengths in ((True, [4, 2, 1]), (False, [2, 4, 1])):
        def round_trip(x, lengths=lengths, enforce_sorted=enforce_sorted):
            packed = gradkit.nn.utils.rnn.pack_padded_sequence(x, lengths,
                                                               enforce_sorted=enforce_sorted)
            return gradkit.nn.utils.rnn.pad_packed_sequence(packed, total_length=5)[0]
        assert gradkit.autograd.gradcheck(round_trip, (x,))
        assert gradkit.autograd.gradgradcheck(round_trip, (x,))

    def padded(a, b):
        return gradkit.nn.utils.rnn.pad_sequence([a, b], True, 0.5, "left")
    pieces = (x[:3, 0].detach().requires_grad_(), x[:1, 1].detach().requires_grad_())
    assert gradkit.autograd.gradcheck(padded, pieces)
    assert gradkit.autograd.gradgradcheck(padded, pieces)


def test_to_memory_format():  # test_to_memory_format (nn.Module.to: 4-d and 5-d tensors only)
    def program(m):
        conv = m.nn.Conv2d(in_channels=16, out_channels=32, kernel_size=2, bias=True)
        conv = conv.to(memory_format=m.channels_last)
        conv3 = m.nn.Conv3d(2, 3, 2).to(m.float64, memory_format=m.channels_last_3d)
        return [(p.dim(), p.is_contiguous(memory_format=m.channels_last), p.stride())
                for p in conv.parameters()] + [(p.dtype, p.stride()) for p in conv3.parameters()]
    assert_like_torch(program)


def test_is_contiguous_in_a_format_of_another_rank():  # (test_to_memory_format's bias)
    assert_like_torch(lambda m: [
        m.ones(shape).is_contiguous(memory_format=fmt)
        for shape in ((3,), (0, 3), (2, 2, 2, 2), (2, 2, 2, 2, 2), (1, 1, 1))
        for fmt in (m.channels_last, m.channels_last_3d)])
