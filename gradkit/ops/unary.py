"""The declaration of elementwise ops with one input (``@unary``): torch's dtype errors and
the integer-to-float rule of floating ops, then ``@op(elementwise=True)``."""
from __future__ import annotations

import functools
import inspect

from gradkit.backend import get_default_dtype
from gradkit.ops._op import op
from gradkit.ops.promotion import cast


def unary(save="x", floating=False, complex_error=None, bool_error=None, integer_error=None,
          **options):
    """Declare an elementwise op; ``floating`` ops compute integer inputs in the default dtype;
    ``complex_error(x)`` (``bool_error(x)``, ``integer_error(x)``) is the error torch raises
    for complex (bool, integer or bool) inputs (None: they are fine)."""
    def declare(forward):
        for kinds, error in (("c", complex_error), ("b", bool_error), ("biu", integer_error)):
            if error is not None:
                forward = _refusing(forward, kinds, error)
        return op(save=save, elementwise=True, **options)(
            _on_floats(forward) if floating else forward)
    return declare


def _refusing(forward, kinds: str, error):
    @functools.wraps(forward)
    def checked(xp, x, *args, **kwargs):
        if x.dtype.kind in kinds:
            raise error(x)
        return forward(xp, x, *args, **kwargs) if args or kwargs else forward(xp, x)
    return checked


def _on_floats(forward):
    def on_floats(xp, x, *args, **kwargs):
        if x.dtype.kind in "biu":  # torch: exp(int tensor) is a float tensor
            x = cast(x, get_default_dtype().np)
        # a plain call when there is nothing to unpack (sin(x), the common case): cheaper
        return forward(xp, x, *args, **kwargs) if args or kwargs else forward(xp, x)

    def on_floats_of_one(xp, x):  # a forward of (xp, x) alone: no tuple and dict per call
        return forward(xp, cast(x, get_default_dtype().np) if x.dtype.kind in "biu" else x)
    only_x = list(inspect.signature(forward).parameters) == ["xp", "x"]
    return functools.wraps(forward)(on_floats_of_one if only_x else on_floats)
