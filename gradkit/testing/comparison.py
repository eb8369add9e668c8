"""``assert_close``: torch.testing's comparison of tensors, numbers and nested containers.

As in torch, the inputs are split into pairs (recursing through sequences and mappings), each
pair is handled by the first pair type that accepts it (None, bool, Python number, tensor-like),
and the first failing pair raises with torch's message.
"""
from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.creation import as_tensor, tensor
from gradkit.dtype_rules import promote_types
from gradkit.ops.comparison import isclose
from gradkit.testing.messages import (MismatchError, scalar_mismatch_message,
                                      tensor_mismatch_message)

# {dtype name: (rtol, atol)}: torch.testing's default tolerances; other dtypes compare exactly
DTYPE_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5),
                    "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
                    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
_UNSIGNED_WIDE = ("uint16", "uint32", "uint64")  # compared as int64, as torch does


class UnsupportedInputsError(Exception):
    """Raised by a pair type that does not handle the inputs: the next type is tried."""


def default_tolerances(*inputs, dtype_precisions: dict | None = None) -> tuple[float, float]:
    """The loosest (rtol, atol) of the inputs' dtypes (tensors or dtypes)."""
    precisions = dtype_precisions or DTYPE_PRECISIONS
    names = []
    for item in inputs:
        if isinstance(item, Tensor):
            names.append(item.dtype.name)
        elif isinstance(item, backend.dtype):
            names.append(item.name)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(item)} "
                            "instead.")
    rtols, atols = zip(*[precisions.get(name, (0.0, 0.0)) for name in names])
    return max(rtols), max(atols)


def _tolerances(*inputs, rtol, atol, id: tuple) -> tuple[float, float]:  # noqa: A002
    if (rtol is None) ^ (atol is None):
        raise MismatchError(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                            f"omitted, but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


class Pair:
    """Two inputs to compare, with the options of assert_close."""

    def __init__(self, actual, expected, *, id: tuple = (), **options) -> None:  # noqa: A002
        self.actual, self.expected, self.id = actual, expected, id

    def fail(self, kind: type[Exception], msg: str):
        raise MismatchError(kind, msg, id=self.id)

    def compare(self) -> None:
        """Raise MismatchError when the inputs do not match."""
        raise NotImplementedError


class NonePair(Pair):
    def __init__(self, actual, expected, **options) -> None:
        if not (actual is None or expected is None):
            raise UnsupportedInputsError
        super().__init__(actual, expected, **options)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self.fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    def __init__(self, actual, expected, **options) -> None:
        if not all(isinstance(value, (bool, np.bool_)) for value in (actual, expected)):
            raise UnsupportedInputsError
        super().__init__(bool(actual), bool(expected), **options)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self.fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    """Python (or NumPy) numbers: int as int64, float as float64, complex as complex128."""

    _DTYPES = {int: backend.int64, float: backend.float64, complex: backend.complex128}

    def __init__(self, actual, expected, *, id: tuple = (), rtol=None, atol=None,  # noqa: A002
                 equal_nan=False, check_dtype=False, **options) -> None:
        numbers = (int, float, complex, np.number)
        if not all(isinstance(value, numbers) for value in (actual, expected)):
            raise UnsupportedInputsError
        actual, expected = (value.item() if isinstance(value, np.number) else value
                            for value in (actual, expected))
        super().__init__(actual, expected, id=id)
        self.rtol, self.atol = _tolerances(*(self._DTYPES[type(v)] for v in (actual, expected)),
                                           rtol=rtol, atol=atol, id=id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            self.fail(AssertionError,
                      f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(expected):
            return
        self.fail(AssertionError, scalar_mismatch_message(actual, expected, rtol=self.rtol,
                                                          atol=self.atol))


class TensorLikePair(Pair):
    """Tensors, or inputs of one related type that ``as_tensor`` turns into tensors."""

    def __init__(self, actual, expected, *, id: tuple = (), allow_subclasses=True,  # noqa: A002
                 rtol=None, atol=None, equal_nan=False, check_device=True, check_dtype=True,
                 check_layout=True, check_stride=False, **options) -> None:
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise UnsupportedInputsError
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        super().__init__(actual, expected, id=id)
        self.rtol, self.atol = _tolerances(actual, expected, rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.checks = {"layout": check_layout, "stride()": check_stride,
                       "device": check_device, "dtype": check_dtype}

    @staticmethod
    def _to_tensor(value) -> Tensor:
        if isinstance(value, Tensor):
            return value
        try:
            return as_tensor(value)
        except Exception:  # noqa: BLE001 - any failure means "not a tensor-like"
            raise UnsupportedInputsError from None

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        actual, expected = self._equalize(actual.detach(), expected.detach())
        matches = isclose(actual, expected, rtol=self.rtol, atol=self.atol,
                          equal_nan=self.equal_nan)
        if bool(matches.all()):
            return
        if actual.shape == ():
            msg = scalar_mismatch_message(actual.item(), expected.item(), rtol=self.rtol,
                                          atol=self.atol)
        else:
            msg = tensor_mismatch_message(actual, expected, matches, rtol=self.rtol,
                                          atol=self.atol)
        self.fail(AssertionError, msg)

    def _compare_attributes(self, actual: Tensor, expected: Tensor) -> None:
        """shape always; layout, stride, device and dtype when their check is on."""
        def mismatch(name, actual_value, expected_value):
            self.fail(AssertionError, f"The values for attribute '{name}' do not match: "
                                      f"{actual_value} != {expected_value}.")

        if actual.shape != expected.shape:
            mismatch("shape", actual.shape, expected.shape)
        for name, read in (("layout", lambda t: t.layout), ("stride()", lambda t: t.stride()),
                           ("device", lambda t: t.device), ("dtype", lambda t: t.dtype)):
            if self.checks[name] and read(actual) != read(expected):
                mismatch(name, read(actual), read(expected))

    @staticmethod
    def _equalize(actual: Tensor, expected: Tensor) -> tuple[Tensor, Tensor]:
        """Both on the CPU when their devices differ, both in their promoted dtype when their
        dtypes differ (the wide unsigned ones counted as int64)."""
        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype != expected.dtype:
            dtypes = [backend.int64 if t.dtype.name in _UNSIGNED_WIDE else t.dtype
                      for t in (actual, expected)]
            common = promote_types(*dtypes)
            actual, expected = actual.to(common), expected.to(common)
        return actual, expected


PAIR_TYPES = (NonePair, BooleanPair, NumberPair, TensorLikePair)


def _is_sequence(value) -> bool:
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, str)


def originate_pairs(actual, expected, *, id: tuple = (), **options) -> list[Pair]:  # noqa: A002
    """The pairs to compare, recursing through sequences and mappings (torch's errors when
    their lengths or keys differ, or when no pair type accepts two leaves)."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise MismatchError(AssertionError, "The length of the sequences mismatch: "
                                f"{len(actual)} != {len(expected)}", id=id)
        return [pair for index in range(len(actual))
                for pair in originate_pairs(actual[index], expected[index], id=(*id, index),
                                            **options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise MismatchError(
                AssertionError, "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                id=id)
        keys: Any = actual_keys
        with contextlib.suppress(Exception):  # unorderable keys keep the set's order, as torch
            keys = sorted(keys)
        return [pair for key in keys
                for pair in originate_pairs(actual[key], expected[key], id=(*id, key),
                                            **options)]
    for pair_type in PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputsError:
            continue
    raise MismatchError(TypeError, "No comparison pair was able to handle inputs of type "
                        f"{type(actual)} and {type(expected)}.", id=id)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close, as
    ``torch.testing.assert_close``: ``|actual - expected| <= atol + rtol * |expected|``
    elementwise, with per-dtype default tolerances, the same shape, and (when checked) the same
    device, dtype, layout and stride. Inputs may be tensors, tensor-likes of one type (NumPy
    arrays), Python numbers, or sequences and mappings of them. ``msg`` replaces the message, or
    transforms it when callable.

    >>> gradkit.testing.assert_close(gradkit.tensor([1.0, 2.0]), gradkit.tensor([1.0, 2.0]))
    """
    __tracebackhide__ = True  # pytest: show the caller's line
    try:
        pairs = originate_pairs(actual, expected, allow_subclasses=allow_subclasses, rtol=rtol,
                                atol=atol, equal_nan=equal_nan, check_device=check_device,
                                check_dtype=check_dtype, check_layout=check_layout,
                                check_stride=check_stride)
    except MismatchError as error:
        raise error.to_error() from None  # torch ignores msg for errors in the structure
    for pair in pairs:
        try:
            pair.compare()
        except MismatchError as error:
            raise error.to_error(msg) from None


# assert_allclose's own defaults, looser than assert_close's
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5),
                        "float64": (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated in torch (FutureWarning): ``assert_close`` with NaNs equal, the dtypes not
    checked, and ``expected`` made a tensor of ``actual``'s dtype."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected,
                                        dtype_precisions=_ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
