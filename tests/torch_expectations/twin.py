"""Run one small program under gradkit and under torch (when installed) and compare.

A program is a function of the library module ``lib`` (``gradkit`` or ``torch``): it builds
its tensors with ``lib`` (from NumPy data so both libraries see the same numbers) and returns
what it wants compared — tensors, numbers, booleans, None, in nested tuples/lists/dicts.
Without torch the gradkit run still happens, so the test keeps its own closed-form asserts.
"""
import numpy as np
import pytest

import gradkit

try:
    import torch
except ImportError:  # the comparisons are skipped, the gradkit run is not
    torch = None


def data(*shape: int, seed: int = 0, positive: bool = False) -> np.ndarray:
    """Deterministic float64 NumPy data shared by both libraries."""
    values = np.random.default_rng(seed).standard_normal(shape)
    return np.abs(values) + 0.5 if positive else values


def leaf(lib, *shape: int, seed: int = 0, requires_grad: bool = True, positive: bool = False):
    """A float64 leaf tensor of library ``lib`` built from :func:`data`."""
    return lib.tensor(data(*shape, seed=seed, positive=positive), dtype=lib.float64,
                    requires_grad=requires_grad)


def plain(lib, *shape: int, seed: int = 0):
    """A float64 tensor without grad (what torch's functorch tests feed the transforms)."""
    return leaf(lib, *shape, seed=seed, requires_grad=False)


def _plain(value):
    """Tensors become NumPy arrays; containers are walked; everything else stays."""
    if isinstance(value, gradkit.Tensor) or (torch is not None and isinstance(value, torch.Tensor)):
        return np.asarray(value.detach().cpu().numpy())
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def assert_same(got, expected, rtol: float = 1e-7, atol: float = 1e-10) -> None:
    """Structural equality, arrays compared with tolerance and shape."""
    got, expected = _plain(got), _plain(expected)
    _compare(got, expected, rtol, atol, "result")


def _compare(got, expected, rtol, atol, where):
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {got!r} is not a tensor"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
        if expected.dtype == bool:  # (no difference of booleans to weigh)
            np.testing.assert_array_equal(got, expected, err_msg=where)
        else:
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{where}: {got!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            _compare(g, e, rtol, atol, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), f"{where}: {got!r}"
        for k in expected:
            _compare(got[k], expected[k], rtol, atol, f"{where}[{k!r}]")
    else:
        assert not isinstance(got, (np.ndarray, list, dict)), f"{where}: {got!r} != {expected!r}"
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def like_torch(program, rtol: float = 1e-7, atol: float = 1e-10):
    """Run ``program(gradkit)``; when torch is installed also ``program(torch)`` and compare.

    Returns gradkit's result so the test can add closed-form asserts.
    """
    got = program(gradkit)
    if torch is not None:
        assert_same(got, program(torch), rtol, atol)
    return got


def raises_like_torch(program, exception: type, match: str):
    """``program`` raises ``exception`` matching ``match`` under gradkit (and under torch)."""
    if torch is not None:
        with pytest.raises(exception, match=match):
            program(torch)
    with pytest.raises(exception, match=match) as info:
        program(gradkit)
    return info


# a test of ``lib`` run once on gradkit and once on torch (skipped without torch): torch's
# own asserts held against both libraries
both_libraries = pytest.mark.parametrize("lib", [
    pytest.param(gradkit, id="gradkit"),
    pytest.param(torch, id="torch",
                 marks=pytest.mark.skipif(torch is None, reason="torch not installed"))])
