"""torch's checks of ``Module.to``'s dtype: floating or complex only, complex with a warning."""
from __future__ import annotations

import warnings

from gradkit import backend
from gradkit.to_arguments import to_arguments

COMPLEX_WARNING = (
    "Complex modules are a new feature under active development whose design may change, and "
    "some modules might not work as expected when using complex tensors as parameters or "
    "buffers. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a complex module "
    "does not work as expected.")


def is_dtype(arg) -> bool:
    return isinstance(arg, backend.dtype)


def check_to_dtype(args: tuple, kwargs: dict) -> None:
    """The dtype ``Module.to(*args, **kwargs)`` asks for (given, or a tensor's): refused
    unless floating or complex; complex warns, as torch's."""
    try:
        dtype = to_arguments(args, kwargs)[1]
    except TypeError:
        return  # the tensors' own ``to`` raises torch's TypeError
    if dtype is None:
        return
    if not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                        f"desired dtype={dtype}")
    if dtype.is_complex:
        warnings.warn(COMPLEX_WARNING, stacklevel=3)
