"""``CatTransform`` and ``StackTransform``: one transform per slice (or per index) of a dim,
as torch.cat / torch.stack put the pieces together."""
from __future__ import annotations

from gradkit import ops
from gradkit._tensor import Tensor
from gradkit.distributions import constraints
from gradkit.distributions.transform_base import Transform
from gradkit.distributions.utils import lazy_property, sum_rightmost

__all__ = ["CatTransform", "StackTransform"]


def _check(name: str, value: Tensor, dim: int, size: int, what: str) -> None:
    if not -value.dim() <= dim < value.dim():
        kind = "tensor" if name in ("x ", "y ") else name.strip()
        raise AssertionError(f"dim {dim} out of range for {kind} with {value.dim()} dimensions")
    if value.shape[dim] != size:
        raise AssertionError(f"{name.strip()}.size({dim}) = {value.shape[dim]} must equal "
                             f"{what} {size}")


class _PieceWise(Transform):
    """Transforms ``tseq`` applied to pieces of a value along ``dim``."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)


class CatTransform(_PieceWise):
    """``tseq[i]`` on the ``lengths[i]`` slice number i of dim ``dim``."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        super().__init__(tseq, dim, cache_size)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")

    @lazy_property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, value: Tensor):
        start = 0
        for transform, length in zip(self.transforms, self.lengths):
            yield transform, value.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        _check("x ", x, self.dim, self.length, "length")
        return ops.cat([t(piece) for t, piece in self._slices(x)], dim=self.dim)

    def _inverse(self, y):
        _check("y ", y, self.dim, self.length, "length")
        return ops.cat([t.inv(piece) for t, piece in self._slices(y)], dim=self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        _check("x", x, self.dim, self.length, "length")
        _check("y", y, self.dim, self.length, "length")
        terms = []
        for (t, x_piece), (_, y_piece) in zip(self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(x_piece, y_piece)
            if t.event_dim < self.event_dim:
                term = sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return ops.cat(terms, dim=dim) if dim < 0 else sum(terms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(_PieceWise):
    """``tseq[i]`` on index i of dim ``dim``."""

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z: Tensor) -> list:
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        _check("x ", x, self.dim, len(self.transforms), "len(transforms)")
        return ops.stack([t(piece) for piece, t in zip(self._slice(x), self.transforms)],
                         dim=self.dim)

    def _inverse(self, y):
        _check("y ", y, self.dim, len(self.transforms), "len(transforms)")
        return ops.stack([t.inv(piece) for piece, t in zip(self._slice(y), self.transforms)],
                         dim=self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        _check("x", x, self.dim, len(self.transforms), "len(transforms)")
        _check("y", y, self.dim, len(self.transforms), "len(transforms)")
        return ops.stack([t.log_abs_det_jacobian(xs, ys) for xs, ys, t in
                          zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
