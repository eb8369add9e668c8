"""Combinators of ``numbers`` hooks (``Op.numbers``: torch's parser for an op's parameters,
int_arguments.py) and what a hook leaves unread, so that ``Op.__call__`` may skip it."""
from __future__ import annotations

from gradkit.int_arguments import _ABSENT, invalid_combination


def keepdim_needs_dim(function: str):
    """A ``numbers`` hook: torch's reductions take ``keepdim`` only in the signature with a
    ``dim``, so ``sum(x, keepdim=True)`` (no dim given, unlike ``dim=None``) is refused."""
    def read(params: dict, positional=(), inputs=()) -> dict:
        if "keepdim" in params and "dim" not in params:
            if len(params) > 1:  # another argument (dtype=) picks the signature with a dim
                error = TypeError(f'{function}() missing 1 required positional arguments: "dim"')
            else:
                error = invalid_combination(function, (), params)
            error.method_form = True
            raise error
        return params
    read.passes_ints = True  # (it reads only whether keepdim came without a dim)
    return read


def positional_none_refused(function: str, *names: str):
    """A ``numbers`` hook: the parameters ``names``, optional for gradkit's own calls (a
    derivative rule's None), take no None given positionally: torch's invalid combination."""
    def read(params: dict, positional=(), inputs=()) -> dict:
        if any(params.get(name, _ABSENT) is None for name in names if name in positional):
            raise combination_of(function, params, positional)
        return params
    read.passes_ints = True  # (only a None is refused)
    return read


def combination_of(function: str, params: dict, positional) -> TypeError:
    """``invalid_combination`` of a ``numbers`` hook's parameters (``positional``: the names
    given positionally), in the method's words (``method_form``)."""
    error = invalid_combination(function, tuple(params[k] for k in positional),
                                {k: v for k, v in params.items() if k not in positional})
    error.method_form = True
    return error


def chain(*readers):
    """One ``numbers`` hook running several readers in turn."""
    def read(params: dict, positional=(), inputs=()) -> dict:
        for reader in readers:
            params = reader(params, positional, inputs)
        return params
    read.readers = readers
    return read


def passes_int(hook, name: str) -> bool:
    """Whether the ``numbers`` hook ``hook`` returns a bare int given for the parameter
    ``name`` as it is (an int parameter ``ints_reader`` leaves unread, a hook that refuses
    only a None): ``Op.__call__`` may then bind ``x.squeeze(0)`` without calling it."""
    readers = getattr(hook, "readers", None)
    if readers is not None:
        return all(passes_int(reader, name) for reader in readers)
    passes = getattr(hook, "passes_ints", ())
    return passes is True or name in passes
