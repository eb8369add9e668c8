"""torch's argument parser's TypeErrors for a function of one signature, in its words: too
many positional arguments, one given twice, a required one missing (its plural of "argument"
is inverted there: "1 required positional arguments"), an ill-typed one, an unknown keyword;
checked in that order, parameter by parameter."""
from __future__ import annotations

from collections.abc import Callable


def missing_arguments(function: str, names: tuple) -> TypeError:
    """torch's TypeError for required parameters from the first one missing on (listed even
    where given by keyword, as torch lists them)."""
    listing = ", ".join(f'"{name}"' for name in names)
    plural = "s" if len(names) == 1 else ""
    return TypeError(f"{function}() missing {len(names)} required positional argument{plural}: "
                     f"{listing}")


def _too_many(function: str, names: tuple, required: int, given: int) -> TypeError:
    if required != len(names):
        return TypeError(f"{function}() takes from {required} to {len(names)} positional "
                         f"arguments but {given} were given")
    return TypeError(f"{function}() takes {len(names)} positional argument"
                     f"{'' if len(names) == 1 else 's'} but {given} "
                     f"{'was' if given == 1 else 'were'} given")


def bind(function: str, names: tuple, required: int, args: tuple, keywords: dict,
         check: Callable | None = None) -> dict:
    """{name: value} of ``args`` and ``keywords`` bound to the parameters ``names`` (the
    first ``required`` of them required) as torch's parser binds them; ``check(name, value,
    position)`` gives the value read, or refuses an ill-typed one (position None for a
    keyword)."""
    if len(args) > len(names):
        raise _too_many(function, names, required, len(args))
    bound = {}
    for index, name in enumerate(names):
        if index < len(args):
            if name in keywords:
                raise TypeError(f"{function}() got multiple values for argument '{name}'")
            bound[name], position = args[index], index + 1
        elif name in keywords:
            bound[name], position = keywords[name], None
        elif index < required:
            raise missing_arguments(function, names[index:required])
        else:
            continue
        if check is not None:
            bound[name] = check(name, bound[name], position)
    for key in keywords:
        if key not in names:
            raise TypeError(f"{function}() got an unexpected keyword argument '{key}'")
    return bound
