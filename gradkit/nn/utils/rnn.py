"""torch.nn.utils.rnn: padding and packing variable-length sequences for the recurrent layers.

A PackedSequence keeps the time steps of a batch sorted by length, longest first: ``data``
holds step 0 of every sequence, then step 1 of those still running, ...; ``batch_sizes[t]``
says how many. Packing and padding are composed from slicing, cat and stack, so gradients
flow through them as in torch.

>>> from gradkit.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([gradkit.tensor([1., 2., 3.]), gradkit.tensor([4.])])
>>> packed.batch_sizes
tensor([2, 1, 1])
>>> pad_packed_sequence(packed)
(tensor([[1., 4.],
        [2., 0.],
        [3., 0.]]), tensor([3, 1]))
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from gradkit import backend, creation, ops
from gradkit.backend import int64
from gradkit._tensor import Tensor
from gradkit.ops.one_node import one_node

_SORTED_LENGTHS = ("`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                   "is True. You can pass `enforce_sorted=False` to pack_padded_sequence "
                   "and/or pack_sequence to sidestep this requirement if you do not need ONNX "
                   "exportability.")


class PackedSequence_(NamedTuple):  # noqa: N801 - torch's name
    """The namedtuple fields PackedSequence extends (a NamedTuple may not define __new__)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _cast(name: str, dtype):
    """PackedSequence's method ``name``: the sequence with ``data`` cast to ``dtype``."""
    def cast(self) -> PackedSequence:
        return self.to(dtype=dtype)
    cast.__name__, cast.__qualname__ = name, f"PackedSequence.{name}"
    cast.__doc__ = f"``data`` as {dtype}."
    return cast


class PackedSequence(PackedSequence_):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as torch's; build it with
    pack_padded_sequence / pack_sequence. ``PackedSequence(data, batch_sizes,
    sorted_indices)`` fills ``unsorted_indices`` with the inverse permutation."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data.to(...)``; the indices follow to its device only. Returns self when
        ``data`` is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))  # noqa: E731
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cuda(self, *args, **kwargs) -> PackedSequence:
        """The sequence with ``data`` on the GPU."""
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self, *args, **kwargs) -> PackedSequence:
        """The sequence with ``data`` on the CPU."""
        return self.to("cpu")

    # torch's casts of ``data``: x.double() is x.to(dtype=float64)
    double = _cast("double", backend.float64)
    float = _cast("float", backend.float32)
    half = _cast("half", backend.float16)
    long = _cast("long", int64)
    int = _cast("int", backend.int32)
    short = _cast("short", backend.int16)
    char = _cast("char", backend.int8)
    byte = _cast("byte", backend.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` lives on the GPU."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        """False: gradkit has no pinned host memory."""
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of an index permutation (None stays None)."""
    if permutation is None:
        return None
    output = creation.empty_like(permutation)
    return output.scatter_(0, permutation, creation.arange(permutation.numel(),
                                                          device=permutation.device))


def _as_lengths(lengths) -> Tensor:
    """torch's: a tensor of lengths as int64, other sequences through as_tensor."""
    if isinstance(lengths, Tensor):
        return lengths.to(int64)
    return creation.as_tensor(lengths, dtype=int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (T, B, *) batch (B, T, * with batch_first) of sequences with the given
    lengths; ``enforce_sorted=False`` sorts them by length first and records the order."""
    lengths = _as_lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = ops.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = ops.index_select(input, 0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:  # ATen's checks, in its order
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.ndim != 1:
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D cpu Long tensor")
    lengths = [int(n) for n in lengths.tolist()]
    if len(lengths) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={input.shape[1]})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError(_SORTED_LENGTHS)
    batch_sizes = [sum(n > t for n in lengths) for t in range(lengths[0])]
    data = one_node("PackPaddedSequenceBackward0",  # torch's single node for the packing
                    lambda padded: ops.cat([padded[t, :size]
                                            for t, size in enumerate(batch_sizes)], 0),
                    (input,))
    return PackedSequence(data, creation.tensor(batch_sizes, dtype=int64), sorted_indices,
                          None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of pack_padded_sequence: (padded batch, lengths), in the original order;
    ``total_length`` pads the time axis further."""
    batch_sizes = [int(n) for n in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    data = sequence.data
    # ATen's: the padding value everywhere, each time step's rows copied in (CopySlices)
    output = creation.full((steps, batch_sizes[0]) + tuple(data.shape[1:]), padding_value,
                           dtype=data.dtype, device=data.device)
    for t, rows in enumerate(ops.split(data, batch_sizes, 0)):
        output[t, :rows.shape[0]].copy_(rows)
    output = output.transpose(0, 1) if batch_first else output
    lengths = creation.tensor([sum(size > b for size in batch_sizes)
                               for b in range(batch_sizes[0])], dtype=int64)
    if sequence.unsorted_indices is not None:
        output = ops.index_select(output, 0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return output, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths (L_i, *) into (T, B, *) (B, T, * with
    batch_first), filling with ``padding_value`` on ``padding_side``; dtype of the first.
    As ATen's, each sequence is copied (broadcast) into its slot of the filled output."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    if first.ndim == 0:  # (ATen slices the first sequence's trailing sizes)
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    length = max(seq.shape[0] for seq in sequences)
    lead = (len(sequences), length) if batch_first else (length, len(sequences))
    output = creation.full(lead + tuple(first.shape[1:]), padding_value, dtype=first.dtype,
                           device=first.device)
    for b, seq in enumerate(sequences):
        start = length - seq.shape[0] if padding_side == "left" else 0
        steps = slice(start, start + seq.shape[0])
        slot = output[b, steps] if batch_first else output[steps, b]
        if seq.ndim > slot.ndim:  # copy_ reads a longer shape as a broadcast too
            _refuse_longer_shape(tuple(slot.shape), tuple(seq.shape))
        slot.copy_(seq)
    return output


def _refuse_longer_shape(slot: tuple, shape: tuple) -> None:
    """torch's copy_ errors for a source of more dims than its slot: its broadcast, then the
    broadcast shape that is not the slot's."""
    padded = (1,) * (len(shape) - len(slot)) + slot
    for dim in reversed(range(len(shape))):
        if padded[dim] != shape[dim] and 1 not in (padded[dim], shape[dim]):
            raise RuntimeError(f"The size of tensor a ({padded[dim]}) must match the size of "
                               f"tensor b ({shape[dim]}) at non-singleton dimension {dim}")
    broadcast = [max(a, b) for a, b in zip(padded, shape)]
    raise RuntimeError(f"output with shape {list(slot)} doesn't match the broadcast shape "
                       f"{broadcast}")


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, cut to their lengths. As torch, transposes a
    time-major ``padded_sequences`` in place."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) sequences (longest first unless enforce_sorted=False)."""
    lengths = creation.tensor([seq.shape[0] for seq in sequences], dtype=int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]
