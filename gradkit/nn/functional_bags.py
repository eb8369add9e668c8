"""torch.nn.functional.bilinear and embedding_bag, composed from ops (matmul, embedding,
sums, maxima), with torch's checks and messages."""
from __future__ import annotations

import warnings

import numpy as np

from gradkit import creation, ops
from gradkit.autograd.grad_mode import is_grad_enabled, no_grad
from gradkit.backend import float16, float32, int64
from gradkit.ops.embedding import embedding, embedding_renorm_, type_name
from gradkit.ops.grad_edges import has_tangents, refuse_tangents
from gradkit.ops.one_node import one_node
from gradkit.ops.promotion import promote_types
from gradkit.ops.unary_helpers import c_type_name
from gradkit.tensor_arguments import tensor_parameters


def _check_bilinear_dtypes(input1, input2, weight, bias) -> None:
    """torch's: one dtype for all, and no complex result to differentiate (its _trilinear)."""
    named = {"input1": input1, "input2": input2, "weight": weight}
    if bias is not None:
        named["bias"] = bias
    if len({t.dtype for t in named.values()}) > 1:
        got = ", ".join(f"{name}: {c_type_name(t._data)}" for name, t in named.items())
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    if input1.is_complex() and is_grad_enabled() and any(
            t.requires_grad for t in (input1, input2, weight)):  # the bias is added after
        raise RuntimeError("_trilinear does not support automatic differentiation for outputs "
                           "with complex dtype.")


def _bag_max(bag):
    """torch's running maximum of a bag's rows: the first row, then any strictly greater one,
    so a NaN counts only as the first row (later ones never compare greater; seed 14712)."""
    data = bag.detach()
    index = ops.where(data.isnan(), -np.inf, data).argmax(0, keepdim=True)
    index = ops.where(data[:1].isnan(), 0, index)
    return ops.gather(bag, 0, index).squeeze(0)


@tensor_parameters("input2", "weight", "bias")
def bilinear(input1, input2, weight, bias=None):
    """y = x₁ᵀ A x₂ + b for each leading index: weight (out, in1, in2), bias (out,)."""
    _check_bilinear_dtypes(input1, input2, weight, bias)
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        for dim in range(input1.ndim - 1):
            if input1.shape[dim] != input2.shape[dim]:
                raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim "
                                   f"{dim}: got "
                                   f"{input1.shape[dim]} and {input2.shape[dim]}")
    for which, x, dim in (("input1", input1, 1), ("input2", input2, 2)):
        if x.shape[-1] != weight.shape[dim]:
            raise RuntimeError(f"bilinear(): {which} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[dim]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    out_features, in1, in2 = weight.shape

    def trilinear(rows1, weight, rows2):
        # x₁ A as one matmul: (n, in1) @ (in1, out·in2) -> (n, out, in2), then the dot with x₂
        left = ops.matmul(rows1, weight.permute(1, 0, 2).reshape(in1, out_features * in2))
        left = left.reshape(rows1.shape[0], out_features, in2)
        out = ops.sum(ops.mul(left, rows2.unsqueeze(-2)), -1)
        return out if out.dtype == rows1.dtype else out.to(rows1.dtype)  # sum made ints int64
    # ATen's composition: _trilinear (TrilinearBackward0) of the inputs as rows, reshaped back
    out = one_node("TrilinearBackward0", trilinear,
                   (input1.reshape(-1, in1), weight, input2.reshape(-1, in2)),
                   {"i1": 0, "i2": 1, "i3": 2},
                   guards={0: (1, 2), 1: (0, 2), 2: (0, 1)})  # each read by the others' rules
    out = out.reshape(*input1.shape[:-1], out_features)
    return out if bias is None else ops.add(out, bias)


def _bags(input, offsets, per_sample_weights, include_last_offset: bool):
    """(flat indices, flat weights or None, [(start, end)] of each bag), torch's checks."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        _check_index_types(input, input)
        rows, length = input.shape
        bounds = [(b * length, (b + 1) * length) for b in range(rows)]
        flat_weights = None if per_sample_weights is None else per_sample_weights.reshape(-1)
        return input.reshape(-1), flat_weights, bounds
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    _check_index_types(input, offsets)
    starts = [int(s) for s in offsets.detach().cpu().numpy()]
    if starts and starts[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {starts[0]}")
    if starts and starts[-1] > input.shape[0]:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                           f"{input.shape[0]} but got offsets[-1] of {starts[-1]}")
    if include_last_offset:  # torch's CPU kernel: the last bag still runs to the end
        starts = starts[:-1]
    return input, per_sample_weights, list(zip(starts, starts[1:] + [input.shape[0]]))


def _check_index_types(input, offsets) -> None:
    """torch's: indices and offsets, promoted to one type, are int64 or int32."""
    common = promote_types(input._data.dtype, offsets._data.dtype)
    if common.name not in ("int64", "int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{type_name(np.empty(0, common))} instead (while checking arguments "
                           "for embedding_bag)")


def _check_rows(indices, rows: int, padding_idx, fast_path: bool):
    """torch's checks of padding_idx and the indices against the weight's rows (its message
    from ``fast_path``'s index_select_add: a float32/float16 sum or mean without padding);
    returns the indices on the host and the padding row counted from 0."""
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-rows} "
                               f"through {rows - 1}, but got {padding_idx}")
        padding_idx %= rows
    host = indices.detach().cpu().numpy()
    bad = (host < 0) | (host >= rows)
    if bad.any() and fast_path:
        position = int(np.flatnonzero(bad)[0])
        raise RuntimeError(f"Index {position} of input takes value {host[position]} which is "
                           f"not in the valid range [0, {rows})")
    if bad.any():
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           f"idx to be {host[bad][0]}")
    return host, padding_idx


def _check_bag_dtypes(weight, sample_weights) -> None:
    """torch's checks of embedding_bag's weight (real floating) and per_sample_weights."""
    if not weight.is_floating_point():
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the "
                           "following scalar types: Half, BFloat16, Float, Double; but got "
                           f"{type_name(weight._data)} instead (while checking arguments for "
                           "embedding_bag)")
    if sample_weights is not None and sample_weights.dtype != weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as "
                           "tensor for argument #1 'per_sample_weights'; but type "
                           f"{type_name(weight._data)} does not equal "
                           f"{type_name(sample_weights._data)} (while checking arguments for "
                           "embedding_bag)")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx: int | None = None):
    """The sum, mean or max of each bag of embeddings: bags are the rows of a 2-D ``input``, or
    the pieces of a 1-D ``input`` starting at ``offsets``; an empty bag gives zeros and
    ``padding_idx`` entries are left out (of the count of a mean too)."""
    if weight.dtype == int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    indices, sample_weights, bounds = _bags(input, offsets, per_sample_weights,
                                            include_last_offset)
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with no_grad():
            embedding_renorm_(weight, indices, max_norm, norm_type)
    if sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    _check_bag_dtypes(weight, sample_weights)
    fast_path = mode != "max" and padding_idx is None and weight.dtype in (float16, float32)
    host, padding_idx = _check_rows(indices, weight.shape[0], padding_idx, fast_path)
    members = [[p for p in range(start, end) if host[p] != padding_idx] for start, end in bounds]
    # only the entries a bag uses are weighted: a padding entry's per-sample weight gets 0,
    # not 0 * its (maybe infinite) embedding
    used = creation.tensor(np.array(sum(members, []), dtype=np.int64), device=weight.device)

    def pooled(weight, sample_weights):
        rows = embedding(indices[used], weight, scale_grad_by_freq=scale_grad_by_freq,
                         sparse=sparse)
        if sample_weights is not None:
            rows = ops.mul(rows, sample_weights[used].unsqueeze(-1))
        bags, first = [], 0
        for kept in members:
            if not kept:  # zeros, on the graph of the rows (requires grad as torch's)
                bags.append(ops.sum(rows[:0], 0))
                continue
            bag = rows[first:first + len(kept)]
            first += len(kept)
            if mode == "max":
                bags.append(_bag_max(bag))
            else:
                total = ops.sum(bag, 0)
                bags.append(ops.div(total, len(kept)) if mode == "mean" else total)
        if not bags:
            return rows[:0].reshape(0, weight.shape[1])
        return ops.stack(bags, 0)
    # torch's node takes the weights flattened as the indices (a view of a 2-D input's)
    out = one_node("EmbeddingBagBackward0", pooled, (weight, sample_weights),
                   {"per_sample_weights": 1})
    # torch has no forward formula; it names the kernel for no gradient when neither input
    # requires one and the weight carries no tangent
    forward_only = not (weight.requires_grad or has_tangents((weight,)) or
                        getattr(sample_weights, "requires_grad", False))
    refuse_tangents("_embedding_bag_forward_only" if forward_only else "_embedding_bag",
                    (weight, sample_weights))
    return out
