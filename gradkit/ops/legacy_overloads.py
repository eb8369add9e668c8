"""torch's deprecated overloads that take a number before the tensors, still accepted by
torch 2.13 with a warning and common in older code: ``x.add_(-lr, grad)`` (add/sub's
``(Number alpha, Tensor other)``) and ``x.addcmul_(value, t1, t2)`` (addcmul/addcdiv's
``(Number value, Tensor tensor1, Tensor tensor2)``), and the scaled products' ``beta`` (and
``alpha``) before the tensors (``addmm(beta, input, alpha, mat1, mat2)``, ops/keywords.py).
Each op reads them through its ``legacy_positionals`` hook (ops/_op.py)."""
from __future__ import annotations

import functools

import numpy as np

from gradkit._tensor import Tensor
from gradkit._user_frames import warn_once_at_user
from gradkit.number_arguments import reads_as_number
from gradkit.ops.arithmetic import add, sub
from gradkit.ops.binary_math import addcdiv, addcmul
from gradkit.ops.keywords import scalar_first
from gradkit.ops.matrix_products import addr
from gradkit.ops.products import addbmm, addmm, addmv, baddbmm


_NUMBERS = (bool, int, float, complex)


def _number_first(name: str, keyword: str, tensors: int, old: str, new: str,
                  numbers: bool = False):
    """The hook of an op whose deprecated overload is ``(input, number, *tensors)``
    (``numbers``: its tensors may be Python numbers, as add's: ``add(x, 1, True)`` is x + 1,
    and its number a tensor that reads as one: ``add(b, b, True)`` of 0-d ``b``)."""
    def read(args: tuple, kwargs: dict) -> tuple:
        if len(args) != 2 + tensors or isinstance(args[1], Tensor) and not (
                numbers and reads_as_number(args[1])) or keyword in kwargs or \
                not all(isinstance(a, Tensor) or numbers and (
                    type(a) in _NUMBERS or isinstance(a, np.generic)) for a in args[2:]):
            return args, kwargs
        warn_once_at_user(f"This overload of {name} is deprecated:\n\t{name}({old})\nConsider "
                          f"using one of the following signatures instead:\n\t{name}({new})")
        return (args[0], *args[2:]), {**kwargs, keyword: args[1]}
    return read


add.legacy_positionals = _number_first("add", "alpha", 1, "Number alpha, Tensor other",
                                       "Tensor other, *, Number alpha = 1", numbers=True)
sub.legacy_positionals = _number_first("sub", "alpha", 1, "Number alpha, Tensor other",
                                       "Tensor other, *, Number alpha = 1", numbers=True)
addcmul.legacy_positionals = _number_first(
    "addcmul", "value", 2, "Number value, Tensor tensor1, Tensor tensor2",
    "Tensor tensor1, Tensor tensor2, *, Number value = 1")
addcdiv.legacy_positionals = _number_first(
    "addcdiv", "value", 2, "Number value, Tensor tensor1, Tensor tensor2",
    "Tensor tensor1, Tensor tensor2, *, Number value = 1")
add.keyword_only("alpha")  # (torch's current signatures; the deprecated one read above)
sub.keyword_only("alpha")
for _op in (addmm, addmv, baddbmm, addbmm, addr):
    _op.legacy_positionals = functools.partial(scalar_first, _op.name, _op.input_keywords)
