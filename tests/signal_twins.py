"""Run one program with torch and with gradkit and compare what each gave (the signal lane's
tests: windows' neighbours stft, histograms and the data helpers).

A program takes the module and returns a tensor or a (nested) tuple/list of tensors; an error is
an outcome too (its type and message, ``torch.`` read as ``gradkit.``).
"""
import warnings

import numpy as np

import gradkit


def _tensors(result) -> list:
    if isinstance(result, (list, tuple)):
        return [t for part in result for t in _tensors(part)]
    return [result]


def _observed(item):
    """A tensor as (dtype name, array); anything else as itself."""
    if not hasattr(item, "detach"):
        return item
    item = item.detach()
    if hasattr(item, "resolve_conj"):  # torch's lazy conjugates refuse .numpy()
        item = item.resolve_conj().resolve_neg()
    return str(item.dtype).split(".")[-1], np.array(item.numpy())


def outcome(m, program):
    """[(dtype name, array), ...] of what ``program(m)`` returned (numbers and other values
    as they are), or (error type, message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = program(m)
        except Exception as error:  # noqa: BLE001 - the error is the observation
            return type(error).__name__, str(error).replace("torch.", "gradkit.")
    return [_observed(item) for item in _tensors(result)]


def assert_same(program, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """gradkit returns what torch returns (dtypes, shapes, values; NaN where torch's is)."""
    import torch
    expected, got = outcome(torch, program), outcome(gradkit, program)
    if isinstance(expected, tuple):
        assert got == expected
        return
    assert not isinstance(got, tuple), got
    assert len(got) == len(expected)
    for (dtype, ours), (t_dtype, theirs) in zip(got, expected, strict=True):
        assert dtype == t_dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def assert_same_error(program) -> None:
    """torch raises, and gradkit raises the same error with the same message."""
    import torch
    expected = outcome(torch, program)
    assert isinstance(expected, tuple), "torch did not raise"
    assert outcome(gradkit, program) == expected
