"""Which ops are also Tensor methods, said on their declaration.

``@op(method=True, inplace=True)`` on an op, or ``@tensor_method(inplace=True)`` on an op written
as a plain function, makes ``x.name(...)`` the op with ``self`` first and ``x.name_(...)`` its
in-place form. The declarations fill the two tables below; the methods layer
(``gradkit/_tensor_methods.py``) turns them into Tensor methods once every op is loaded.
"""
from __future__ import annotations

from collections.abc import Callable

from gradkit.ops.keywords import PYTHON_FUNCTIONS, PYTHON_METHODS, numpy_names

METHODS: dict[str, Callable] = {}  # x.name(...) -> the op (or function) called with self first
INPLACE: dict[str, Callable] = {}  # x.name_(...) -> the out-of-place op it writes back
# the methods layer's installer(name, op_or_function, inplace), once it is loaded: a method
# declared later (a user's op) becomes a Tensor method at once
_installer: list[Callable] = []


def method_names(name: str, method: bool | str | tuple[str, ...]) -> tuple[str, ...]:
    """The method names a declaration asks for: its own name (True), one name, or several."""
    if method is True:
        return (name,)
    if isinstance(method, str):
        return (method,)
    return tuple(method or ())


def register(function: Callable, name: str, method: bool | str | tuple[str, ...] = True,
             inplace: bool = False) -> None:
    """Record ``function`` as the methods ``method`` names (and ``name_`` when ``inplace``)."""
    entries = [(method_name, False) for method_name in method_names(name, method)]
    if inplace:
        entries.append((name, True))
    for method_name, is_inplace in entries:
        (INPLACE if is_inplace else METHODS)[method_name] = function
        for install in _installer:
            install(method_name, function, is_inplace)


def install_with(installer: Callable) -> None:
    """Make every declared method with ``installer(name, op, inplace)``, now and from now on."""
    for table, is_inplace in ((METHODS, False), (INPLACE, True)):
        for name, function in table.items():
            installer(name, function, is_inplace)
    _installer[:] = [installer]


def tensor_method(method: bool | str | tuple[str, ...] = True, *, inplace: bool = False):
    """Decorator for an op written as a plain function: it is also a Tensor method, and both
    take the NumPy names torch's parser takes (``x=``, ``axis=``: ``numpy_names``)."""
    def declare(function: Callable) -> Callable:
        name = function.__name__
        aliased = numpy_names(function)
        python_method = not PYTHON_METHODS.isdisjoint(method_names(name, method))
        register(function if python_method else aliased, name, method, inplace)
        return function if name in PYTHON_FUNCTIONS else aliased
    return declare
