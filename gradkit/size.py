"""gradkit.Size: torch.Size, the tuple of ints a tensor's shape is."""
from __future__ import annotations

import operator


class Size(tuple):
    """torch.Size: a tuple of ints with ``numel()``."""

    def __new__(cls, sizes=()) -> Size:
        items = tuple(sizes)
        if not all(type(item) is int for item in items):  # ints that index (0-d int tensors)
            items = tuple(_size_item(item, k) for k, item in enumerate(items))
        return tuple.__new__(cls, items)

    # slices, sums and repeats of a Size are Sizes, as torch's
    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other) -> Size:
        return Size(tuple.__add__(self, other))

    def __radd__(self, other) -> Size:
        return Size(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, count) -> Size:
        return Size(tuple.__mul__(self, count))

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"gradkit.Size({list(self)})"


def _size_item(item, position: int) -> int:
    """One size of a Size: an int, or what indexes as one (torch's message otherwise)."""
    try:
        if not isinstance(item, (float, complex, str)):
            return operator.index(item)
    except TypeError:
        pass
    raise TypeError(f"gradkit.Size() takes an iterable of 'int' (item {position} is "
                    f"'{type(item).__name__}')")
