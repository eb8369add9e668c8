"""Run one program under gradkit and under torch 2.13 and compare what they give, dtypes included.

A program is a function of the library module ``m`` (``gradkit`` or ``torch``) that builds its
tensors from NumPy data (both libraries see the same numbers) and returns what it wants
compared: tensors (dtype, shape and values), sizes, dtypes, devices, numbers, booleans, strings,
None, in nested tuples/lists/dicts. An error is compared by its type and message (the library's
name read as torch's); warnings by their count.
"""

import warnings

import numpy as np
import pytest

import gradkit

try:
    import torch
except ImportError:  # the comparisons are skipped, the gradkit run is not
    torch = None

LIBRARIES = ("gradkit", "torch")


def _as_torch_text(text: str) -> str:
    """A message or name of either library, read as torch's."""
    return text.replace("gradkit._tensor.Tensor", "torch.Tensor").replace("gradkit.", "torch.")


def _is_tensor(value) -> bool:
    return isinstance(value, gradkit.Tensor) or (
        torch is not None and isinstance(value, torch.Tensor)
    )


def plain(value):
    """What a program gave, in library-free terms (tensors as tagged NumPy arrays)."""
    if _is_tensor(value):
        array = value.detach().resolve_conj().resolve_neg().cpu().numpy()
        return ("tensor", _as_torch_text(str(value.dtype)), tuple(value.shape), np.array(array))
    if isinstance(value, (gradkit.dtype, gradkit.device)) or (
        torch is not None and isinstance(value, (torch.dtype, torch.device))
    ):
        return ("meta", _as_torch_text(str(value)))
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, str):
        return _as_torch_text(value)
    return value


def outcome(program, m):
    """``(result, number of warnings)``; a raising program gives ("raises", type, message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = plain(program(m))
        except (
            IndexError,
            RuntimeError,
            TypeError,
            ValueError,
            NotImplementedError,
            AttributeError,
            KeyError,
            AssertionError,
        ) as error:
            message = str(error).split("\n")[0]
            result = ("raises", type(error).__name__, _as_torch_text(message))
    return result, len(caught)


def dtypes(m, bool_: bool = True, complex_: bool = True) -> list:
    """torch's test dtypes of library ``m``: the integers, float16/32/64, then bool and the
    complex ones unless left out (the order torch's tests list them in)."""
    listed = [m.uint8, m.int8, m.int16, m.int32, m.int64, m.float16, m.float32, m.float64]
    return listed + [m.bool] * bool_ + [m.complex64, m.complex128] * complex_


def _compare(got, expected, rtol, atol, where):
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {got!r} is not an array"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
        if expected.dtype.kind in "biu":
            np.testing.assert_array_equal(got, expected, err_msg=where)
        else:
            np.testing.assert_allclose(
                got, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=where
            )
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), (
            f"{where}: {got!r} != {expected!r}"
        )
        for i, (g, e) in enumerate(zip(got, expected)):
            _compare(g, e, rtol, atol, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), f"{where}: {got!r}"
        for k in expected:
            _compare(got[k], expected[k], rtol, atol, f"{where}[{k!r}]")
    elif isinstance(expected, float) and expected != expected:
        assert isinstance(got, float) and got != got, f"{where}: {got!r} is not nan"
    else:
        assert type(got) is type(expected) or {type(got), type(expected)} <= {int, bool}, (
            f"{where}: {type(got).__name__} {got!r} != {type(expected).__name__} {expected!r}"
        )
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def same_as_torch(program, rtol: float = 1e-6, atol: float = 1e-9, count_warnings: bool = True):
    """``program`` gives under gradkit what it gives under torch (skipped without torch).

    Returns gradkit's outcome so a test can add its own closed-form asserts."""
    got = outcome(program, gradkit)
    if torch is None:
        pytest.skip("torch is not installed")
    expected = outcome(program, torch)
    if not count_warnings:
        got, expected = (got[0], None), (expected[0], None)
    _compare(got, expected, rtol, atol, "outcome")
    return got[0]


def data(*shape: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    """Deterministic float64 NumPy data shared by both libraries."""
    return np.random.default_rng(seed).standard_normal(shape) * scale


def ints(*shape: int, low: int = -9, high: int = 10, seed: int = 0) -> np.ndarray:
    """Deterministic int64 NumPy data in [low, high)."""
    return np.random.default_rng(seed).integers(low, high, size=shape)
