"""torch's checks of ``x[key] = value`` that gradkit makes before writing: the value's type,
a basic key's expand (torch copies into the region's view) and index_put's shape message."""
from __future__ import annotations

import re

import numpy as np

from gradkit._tensor import Tensor
from gradkit.ops.expand_view import expand_refusal
from gradkit.ops.unary_helpers import tensor_type_name

NUMPY_SHAPES = re.compile(r"\(([\d, ]*)\)")  # the shapes in NumPy's messages: "(2, 3)"

# what torch's setitem takes as a value: a tensor or a Python number (NumPy integers too,
# which Python reads as an index; a NumPy float32 or an array is refused)
_ASSIGNABLE = (Tensor, bool, int, float, complex, np.integer)


def check_expands_to_region(x, raw, value) -> None:
    """torch's copy_to for a basic key: the value, without its leading 1-dims, expanded to the
    region it writes (expand's errors, not index_put's)."""
    region = x._data[raw].shape
    shape = tuple(value.shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    if len(shape) <= len(region) and shape == region[len(region) - len(shape):]:
        return  # (the common case, told without naming the value's type)
    refusal = expand_refusal(shape, region, tensor_type_name(value._data))
    if refusal is not None:
        raise RuntimeError(refusal)


def check_assignable(x, value) -> None:
    """torch's TypeError for a value that is neither a tensor nor a number (a list, an
    array, a NumPy float32, None)."""
    if not isinstance(value, _ASSIGNABLE):
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else \
            f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError(f"can't assign a {name} to a {tensor_type_name(x._data)}")


def value_shape_refusal(numpy_message: str, value_shape, target, key) -> str | None:
    """torch's index_put message for a value that does not broadcast to the indexing result,
    from NumPy's ("value array of shape (4,) could not be broadcast", or a boolean mask's own
    text); None for another error."""
    if numpy_message.startswith("NumPy boolean array indexing assignment"):
        shapes = [str(list(value_shape)), str(list(target[key].shape))]
    else:
        shapes = [str([int(n) for n in found.replace(",", " ").split()])
                  for found in NUMPY_SHAPES.findall(numpy_message)]
        if len(shapes) != 2:
            return None
    return (f"shape mismatch: value tensor of shape {shapes[0]} cannot be broadcast to "
            f"indexing result of shape {shapes[1]}")
