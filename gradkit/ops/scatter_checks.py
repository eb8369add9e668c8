"""torch's checks of an index's bounds and of scatter's arguments (scatter, scatter_add,
scatter_reduce), in its order."""
from __future__ import annotations

from gradkit.ops.shape import _normalize_dim


def refuse_outside(index, size: int, dim: int, error: type = RuntimeError, prefix: str = "",
                   negative_ok: bool = False) -> None:
    """torch's "index i is out of bounds for dimension d with size n", for the first index
    outside [0, size) ([-size, size) when ``negative_ok``)."""
    outside = (index < (-size if negative_ok else 0)) | (index >= size)
    if outside.any():
        raise error(f"{prefix}index {int(index[outside][0])} is out of bounds for dimension "
                    f"{dim} with size {size}")


def check_scatter(x, dim: int, index, src, kernel_check=None) -> None:
    """torch's checks of scatter, scatter_add and scatter_reduce, in its order (``src`` may be
    a number for scatter; ``kernel_check`` runs where scatter_reduce checks its kernel)."""
    if hasattr(src, "dtype") and src.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.size == 0:  # nothing to write: torch checks no more (an index of any dtype)
        return
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if kernel_check is not None:
        kernel_check()
    if max(index.ndim, 1) != max(x.ndim, 1):  # torch reads a 0-d tensor as 1-d here
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    src_shape = getattr(src, "shape", None)
    wrong = any(i > n for d, (i, n) in enumerate(zip(index.shape, x.shape)) if d != dim)
    for d, i in enumerate(tuple(index.shape) if src_shape is not None and not wrong else ()):
        if len(src_shape) and d >= len(src_shape):
            _normalize_dim(d, len(src_shape))  # torch reads src's sizes first: IndexError
        if i > (src_shape[d] if len(src_shape) else 1):
            wrong = True
            break
    if src_shape is not None and max(len(src_shape), 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(x.shape)} apart from dimension {dim} and to be no larger size "
                           f"than src {list(src_shape or ())}")
    refuse_outside(index, x.shape[dim] if x.ndim else 1, dim)
