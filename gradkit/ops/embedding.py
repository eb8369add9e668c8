"""torch.nn.functional.embedding: rows of a weight picked by integer indices, with torch's
padding row, max_norm renorm (in place, before the lookup) and scale_grad_by_freq."""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import is_grad_enabled, no_grad
from gradkit.backend import get_array_module
from gradkit.number_arguments import number_argument
from gradkit.ops._op import op
from gradkit.ops.indexing import index_put_into_zeros
from gradkit.ops.linalg_norms import vector_norm
from gradkit.ops.piecewise import where
from gradkit.ops.shape import reshape
from gradkit.ops.unary_helpers import scalar_type_name


def type_name(array) -> str:
    """torch's name of a CPU tensor type in its argument checks (``torch.LongTensor``)."""
    name = scalar_type_name(array)
    return f"CPU{name}Type" if array.dtype.kind in "bc" else f"torch.{name}Tensor"


def check_indices(indices: Tensor, argument: str, function: str) -> None:
    """torch's check that indices are int64 or int32 (no other integer type)."""
    if indices._data.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"Expected tensor for argument {argument} to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{type_name(indices._data)} instead (while checking arguments for "
                           f"{function})")


@op(save=("indices", "weight.shape"), node_name="EmbeddingBackward0")
def _embedding(xp, indices, weight, padding_idx=None, scale_grad_by_freq=False):
    return xp.take(weight, indices, axis=0)


def _embedding_grad_weight(g, indices, weight_shape, padding_idx, scale_grad_by_freq):
    keys = getattr(indices, "_data", indices)
    if padding_idx is not None:  # the padding row never learns
        g = where(reshape(indices == padding_idx, tuple(indices.shape) + (1,)), 0.0, g)
    if scale_grad_by_freq:  # each row's gradient over the count of its index in the batch
        xp = get_array_module(keys)
        _, inverse, counts = xp.unique(keys.reshape(-1), return_inverse=True,
                                       return_counts=True)
        share = (1.0 / counts[inverse]).reshape(tuple(keys.shape) + (1,)).astype(g.dtype)
        if isinstance(g, Tensor):  # torch's double backward (embedding_dense_double_backward)
            # leaves the scale out: the scaled values, the derivative of the unscaled ones
            g = (g * Tensor._make(share)).detach() + (g - g.detach())
        else:
            g = g * share
    return index_put_into_zeros(g, tuple(weight_shape), (keys,))


_embedding.defvjp(None, _embedding_grad_weight)
_embedding.no_complex_grad = "embedding"  # torch has no complex formula for it
_embedding.defjvp(None, lambda t, indices, weight_shape, padding_idx, scale_grad_by_freq:
                  _embedding(indices, t, padding_idx=padding_idx))


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """torch.embedding_renorm_: each row of the weight ``input`` named by ``indices`` whose
    ``norm_type``-norm exceeds ``max_norm`` is scaled by max_norm / (norm + 1e-7), in place
    (not recorded: torch has no derivative for it)."""
    if input.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "embedding_renorm_)")
    check_indices(indices, "#2 'indices'", "embedding_renorm_")
    if input.is_leaf and input.requires_grad and is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    xp = get_array_module(input._data)
    rows = Tensor._make(xp.unique(indices._data.reshape(-1)))
    values = input.detach()  # the same storage and version counter, no tangent to rescale
    picked = values[rows]
    norms = vector_norm(picked, norm_type, 1, True)
    scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    values.index_copy_(0, rows, picked * scale)
    return input


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input`` (torch.nn.functional.embedding).

    ``max_norm`` first rescales, in place and unrecorded, the rows ``input`` names whose
    ``norm_type``-norm exceeds it; ``scale_grad_by_freq`` divides each row's gradient by the
    count of its index in ``input``. A sparse gradient (``sparse=True``) is refused.

    >>> embedding(gradkit.tensor([0, 2]), gradkit.randn(3, 4)).shape
    gradkit.Size([2, 4])
    """
    if padding_idx is not None:  # torch's Python asserts, then the row it names
        if not -weight.shape[0] <= padding_idx < weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= weight.shape[0]
    if max_norm is not None:  # read as embedding_renorm_'s floats
        max_norm, norm_type = (number_argument(v, "embedding_renorm_", name, position, "float",
                                               optional=False)
                               for position, name, v in ((3, "max_norm", max_norm),
                                                         (4, "norm_type", norm_type)))
        with no_grad():
            embedding_renorm_(weight, input, max_norm, norm_type)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    check_indices(input, "#1 'indices'", "embedding")
    if sparse and is_grad_enabled() and weight.requires_grad:
        raise NotImplementedError("embedding: sparse=True (a sparse gradient of the weight) is "
                                  "not supported by gradkit; use sparse=False")
    data, rows = input._data, weight.shape[0]
    if data.size and (int(data.min()) < 0 or int(data.max()) >= rows):  # torch: no -1
        raise IndexError("index out of range in self")
    return _embedding(input, weight, padding_idx=padding_idx,
                      scale_grad_by_freq=bool(scale_grad_by_freq))
