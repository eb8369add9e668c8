"""Tensor's Python operators (``x + y``, ``x[i] = v``, ``x += y``) and in-place methods.

A layer above the Tensor core (``_tensor.py``) and the ops, imported by ``gradkit/__init__.py``:
it adds the operators to Tensor, and the methods the op declarations ask for
(``@op(method=True, inplace=True)``, ops/methods.py): ``x.exp()`` is the op with self first.
"""
from __future__ import annotations

import functools
import numbers
import re

import numpy as np

from gradkit._tensor import Tensor, extend
from gradkit.int_arguments import INT64, bool_argument, type_name
from gradkit.ops import (
    arithmetic, comparison, conversion, elementwise, indexing, piecewise, setitem)
from gradkit.ops import methods as method_table
from gradkit.ops._op import Op
from gradkit.ops._op import dispatch as _dispatch
from gradkit.ops.inplace import inplace
from gradkit.ops.missing_inputs import method_expectation
from gradkit.ops.binary_breadth import rsub_number
from gradkit.ops.linalg import matmul
from gradkit.ops.joining import unbind

_NO_PARAMS: dict = {}  # shared, never mutated: ops without parameters
# What a binary operator takes as its other operand; anything else gets NotImplemented, as in
# torch, so Python tries the other side and then raises its own TypeError (``x == None`` is
# False). NumPy arrays stay: ``x + array`` is ``x + from_numpy(array)`` (see torch_expectations),
# and so do other arrays (a device array: the ops' own ``tensor * array``).
_OPERANDS = (Tensor, bool, int, float, complex, np.generic, np.ndarray)


def _array_like(other) -> bool:
    return getattr(other, "shape", None) is not None and hasattr(other, "dtype")


_GUARDED = frozenset(  # the binary operators written as methods below
    "rtruediv floordiv rfloordiv mod rmod and rand or ror xor rxor lshift rlshift rshift "
    "rrshift eq ne lt le gt ge iadd isub imul itruediv".split())


class _TensorOperators:
    # -- Python protocol ----------------------------------------------------------------
    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(unbind(self, 0))

    def __reversed__(self):  # torch's: flipped along dim 0 (a 0-d tensor is itself)
        return self if self._data.ndim == 0 else self.flip(0)

    def __contains__(self, element) -> bool:
        """``element in x``: whether some element of x equals it (torch's: tensors and numbers
        only)."""
        if not isinstance(element, (Tensor, numbers.Number)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                               f"passed in a {type(element)}.")
        return bool((element == self).any().item())

    __hash__ = object.__hash__

    # -- operators (x + y, x * y... are in _BINARY_OPERATORS below) ------------------------
    def __rtruediv__(self, other):
        # torch: ``self.reciprocal() * other`` (so 1j / -0.0 is -inf - infj, the grad_fn Mul)
        return _dispatch(arithmetic.mul, (elementwise.reciprocal(self), other), _NO_PARAMS)

    def __floordiv__(self, other):
        return arithmetic.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return arithmetic.floor_divide(other, self)

    def __mod__(self, other):
        return arithmetic.remainder(self, other)

    def __rmod__(self, other):
        return arithmetic.remainder(other, self)

    def __neg__(self):
        return _dispatch(arithmetic.neg, (self,), _NO_PARAMS)

    def __pos__(self):
        return self

    def __abs__(self):
        return piecewise.abs(self)

    def __invert__(self):
        if self._data.dtype.kind not in "biu":  # torch's Python operator, not the kernel, refuses
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                            "tensors")
        return comparison.logical_not(self) if self._data.dtype == np.bool_ else \
            comparison.bitwise_not(self)

    def __and__(self, other):
        return comparison.bitwise_and(self, other)

    def __rand__(self, other):
        return comparison.bitwise_and(other, self)

    def __or__(self, other):
        return comparison.bitwise_or(self, other)

    def __ror__(self, other):
        return comparison.bitwise_or(other, self)

    def __xor__(self, other):
        return comparison.bitwise_xor(self, other)

    def __rxor__(self, other):
        return comparison.bitwise_xor(other, self)

    def __lshift__(self, other):
        return comparison.bitwise_left_shift(self, other)

    def __rlshift__(self, other):
        return comparison.bitwise_left_shift(other, self)

    def __rshift__(self, other):
        return comparison.bitwise_right_shift(self, other)

    def __rrshift__(self, other):
        return comparison.bitwise_right_shift(other, self)

    def __eq__(self, other):
        return comparison.eq(self, other)

    def __ne__(self, other):
        return comparison.ne(self, other)

    def __lt__(self, other):
        return comparison.lt(self, other)

    def __le__(self, other):
        return comparison.le(self, other)

    def __gt__(self, other):
        return comparison.gt(self, other)

    def __ge__(self, other):
        return comparison.ge(self, other)

    def __getitem__(self, key):
        return indexing.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        setitem.setitem_(self, key, value)

    def __delitem__(self, key) -> None:
        raise TypeError("Tensor does not support deleting items")

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # -- in-place ops ---------------------------------------------------------------------
    def zero_(self) -> Tensor:
        """Fill with zeros in place."""
        return inplace(self, conversion.zeros_like_op)

    def fill_(self, value) -> Tensor:
        """Fill with ``value`` in place (a number or a 0-d tensor, differentiable)."""
        try:
            return inplace(self, conversion.fill, value)
        except TypeError as error:
            raise _as_method_combination(error, "fill", "fill_") from None

    def copy_(self, other, non_blocking: bool = False) -> Tensor:
        """Copy ``other`` (broadcast, cast) into this tensor in place; differentiable in other
        (torch's binding names it ``other``, its docs ``src``)."""
        if not isinstance(other, (Tensor, numbers.Number)):  # torch's parser: a tensor or number
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                            f"{type_name(other)}")
        bool_argument(non_blocking, "copy_", "non_blocking", 2)
        return inplace(self, conversion.copy_from, other)

    def add_(self, other, *args, **kwargs) -> Tensor:
        """``self += alpha * other`` in place (``alpha=`` a keyword; torch's deprecated
        ``add_(alpha, other)`` too)."""
        try:
            return inplace(self, arithmetic.add, other, *args, **kwargs)
        except TypeError as error:
            raise _as_method_argument_error(error, "add", "add_") from None

    def sub_(self, other, *args, **kwargs) -> Tensor:
        """``self -= alpha * other`` in place (``alpha=`` a keyword; torch's deprecated
        ``sub_(alpha, other)`` too)."""
        try:
            return inplace(self, arithmetic.sub, other, *args, **kwargs)
        except TypeError as error:
            raise _as_method_argument_error(error, "sub", "sub_") from None


def _operand_or_not_implemented(method):
    """``method(self, other)``, or NotImplemented when other is not an operand (_OPERANDS)."""
    @functools.wraps(method)
    def guarded(self, other):
        if isinstance(other, _OPERANDS) or _array_like(other):
            return method(self, other)
        return NotImplemented
    return guarded


for _name, _method in vars(_TensorOperators).copy().items():
    if _name.startswith("__") and _name[2:-2] in _GUARDED:
        setattr(_TensorOperators, _name, _operand_or_not_implemented(_method))
extend(_TensorOperators)


def _binary_operator(name: str, op: Op, reflected: bool):
    """``x + y`` (or reflected, ``2 + x``) straight to the dispatcher: no Op.__call__ frame on
    the hottest path."""
    run = op.hot_dispatch or _dispatch  # the op's own hot path: no dispatch frame between
    if reflected:
        def method(self, other):
            if isinstance(other, _OPERANDS) or _array_like(other):
                return run(op, (other, self), _NO_PARAMS)
            return NotImplemented
    else:
        def method(self, other):
            if isinstance(other, _OPERANDS) or _array_like(other):
                return run(op, (self, other), _NO_PARAMS)
            return NotImplemented
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    return method


_BINARY_OPERATORS = (  # (dunder, op, reflected: the other operand comes first)
    ("__add__", arithmetic.add, False),
    ("__radd__", arithmetic.add, False),  # self first, as torch: it is self + 1 * other
    # ``2 - x`` is torch's rsub(x, 2) (RsubBackward1), not a sub
    ("__sub__", arithmetic.sub, False), ("__rsub__", rsub_number, False),
    ("__mul__", arithmetic.mul, False),
    ("__rmul__", arithmetic.mul, False),  # self first, as torch: 2 * x is x.mul(2)
    ("__truediv__", arithmetic.div, False),  # __rtruediv__ is reciprocal(self) * other
    ("__pow__", arithmetic.pow, False), ("__rpow__", arithmetic.pow, True),
    ("__matmul__", matmul, False), ("__rmatmul__", matmul, True))
for _dunder, _op, _reflected in _BINARY_OPERATORS:
    setattr(Tensor, _dunder, _binary_operator(_dunder, _op, _reflected))
del _dunder, _op, _reflected


# Simple method forms of ops: Tensor.exp(), x.sum(dim), x.mul_(y)... declared on the op
# (``@op(method=True, inplace=True)``, ops/methods.py): the op with self as its first argument.
def _as_method(name, op):
    if isinstance(op, Op):
        run = op.hot_dispatch or _dispatch

        # x.mul(), x.logsumexp(): torch's TypeError, from Op.__call__
        some_missing = op.n_inputs > 1 or any(p not in op.defaults for p in op.param_names)
        unary = op.n_inputs == 1

        def method(self, *args, **kwargs):
            if args or kwargs or some_missing:
                if unary and not kwargs and len(args) == 1 and type(args[0]) is int and \
                        -INT64 <= args[0] < INT64 and op.int_first is not None:
                    # x.squeeze(0): Op.__call__'s int lane
                    params = {op.int_first: args[0]}  # without its frame
                    try:
                        return run(op, (self,), params)
                    except TypeError as error:
                        raise _as_method_argument_error(op.parser_error(error, params), op.name,
                                                        name) from None
                if len(args) > 1 and op.method_varargs:  # x.squeeze(0, 1): one int list
                    args = (args,)
                try:
                    return op(self, *args, **kwargs)
                except TypeError as error:
                    raise _as_method_argument_error(error, op.name, name) from None
            return run(op, (self,), _NO_PARAMS)  # x.exp(): no Op.__call__ frame between
    elif getattr(op, "function_words", False):  # a plain function's errors count the input
        def method(self, *args, **kwargs):
            try:
                return op(self, *args, **kwargs)
            except TypeError as error:
                raise _as_method_argument_error(error, name, name) from None
    elif getattr(op, "lists_input_in_function_form", False):
        def method(self, *args, **kwargs):
            try:
                return op(self, *args, **kwargs)
            except TypeError as error:
                converted = _as_method_combination(error, name)
                if converted is error:
                    raise
                raise converted from None
    else:  # (torch's Python-level methods, split, list the input as their function does)
        def method(self, *args, **kwargs):
            return op(self, *args, **kwargs)
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = f"``gradkit.{name}(self, ...)``: " + (op.__doc__ or name)
    return method


def _as_inplace_method(name, op):
    def method(self, *args, **kwargs):
        try:
            return inplace(self, op, *args, **kwargs)
        except TypeError as error:
            raise _as_method_argument_error(error, name, name + "_") from None
    method.__name__ = name + "_"
    method.__qualname__ = f"Tensor.{name}_"
    method.__doc__ = f"In-place ``{name}`` (bumps the version counter; see gradkit.{name})."
    return method


def _as_method_argument_error(error: TypeError, name: str, method: str) -> TypeError:
    """An argument error of the op ``name`` in the words of its method, whose argument list
    does not count self: "atan2(): argument 'other' (position 2)" is "atan2_(): ... (position
    1)", "lerp() ... got (Tensor, int, float)" is "lerp() ... got (int, float)". Errors of
    integer parameters (int_arguments) already count as the method does (``method_form``)."""
    error = getattr(error, "method_error", error)  # the function's overloads, not the method's
    if getattr(error, "method_form", False):
        return error
    message = str(error)
    match = re.match(rf"{name}\(\): argument '(\w+)' \(position (\d+)\)", message)
    if match is not None and match.group(2) != "1":
        return TypeError(f"{method}(): argument '{match.group(1)}' (position "
                         f"{int(match.group(2)) - 1}){message[match.end():]}")
    if method != name and (match is not None or message.startswith(f"{name}() missing")):
        return TypeError(method + message[len(name):])  # (a method's own words: renamed)
    if match is None and method != name and message.startswith(f"{name}(): argument '"):
        return TypeError(method + message[len(name):])  # a keyword: "value must be Number"
    takes = re.match(rf"{name}\(\) takes (?:from (\d+) to )?(\d+) positional arguments? but "
                     r"(\d+) were given", message)
    if takes is not None:  # Python's count of a function's positionals, less self
        least, most, given = (int(v) - 1 if v else None for v in takes.groups())
        if most == 0:
            return TypeError(f"Tensor.{method}() takes no arguments ({given} given)")
        count = (f"{most} positional argument{'' if most == 1 else 's'}" if least is None else
                 f"from {least} to {most} positional arguments")
        return TypeError(f"{method}() takes {count} but {given} were given")
    return _as_method_combination(error, name, method)


def _as_method_combination(error: TypeError, name: str, method: str | None = None) -> TypeError:
    """torch's "invalid combination" of the function ``name`` as its method lists it, without
    the input: "got (Tensor, keepdim=bool)" is "got (keepdim=bool, )" (keywords alone end with
    ", " in torch's listing), "got (Tensor)" is "got ()"."""
    invalid = f"{name}() received an invalid combination of arguments - got (Tensor"
    message = str(error)
    if getattr(error, "method_form", False) or not message.startswith(invalid):
        return error
    listing, rest = message[len(invalid):].removeprefix(", ").split(")", 1)
    if listing and "=" in listing.split(", ")[0]:
        listing += ", "
    expected = method_expectation(name)
    if expected is not None:
        rest = ", " + expected
    return TypeError(f"{method or name}() received an invalid combination of arguments - got ("
                     f"{listing}){rest}")


def _install_method(name, op, inplace: bool) -> None:
    """Tensor.name (or name_ for ``inplace``) from a declaration; the class's own methods win."""
    attribute = name + "_" if inplace else name
    if attribute not in _OWN_METHODS:
        setattr(Tensor, attribute, (_as_inplace_method if inplace else _as_method)(name, op))


_OWN_METHODS = frozenset(dir(Tensor))
method_table.install_with(_install_method)
# x op= y writes into x (its views see it), as torch's in-place operators do
for _dunder, _name in (("__ipow__", "pow_"), ("__imod__", "remainder_"),
                       ("__ifloordiv__", "floor_divide_"), ("__iand__", "bitwise_and_"),
                       ("__ior__", "bitwise_or_"), ("__ixor__", "bitwise_xor_"),
                       ("__ilshift__", "bitwise_left_shift_"),
                       ("__irshift__", "bitwise_right_shift_")):
    setattr(Tensor, _dunder, _operand_or_not_implemented(getattr(Tensor, _name)))
del _name, _dunder, _method
