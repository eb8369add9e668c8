"""Run one spectral program under torch and gradkit and compare what each gave, with a
tolerance scaled to the result (NumPy's pocketfft and torch's MKL differ in the last bits and
in the sign of exact zeros: neither is a finding).

A program takes the module and returns a tensor, a number or a (nested) tuple/list of them; an
error is an outcome too (its type and message, ``torch.`` read as ``gradkit.``).
"""
import re

import numpy as np
from signal_twins import outcome

import gradkit


def assert_close(ours: np.ndarray, theirs: np.ndarray, rtol: float, where: str = "") -> None:
    """Values within ``rtol`` of the largest magnitude (complex parts compared apart)."""
    assert ours.shape == theirs.shape, f"{where}: shape {ours.shape} != {theirs.shape}"
    finite = np.isfinite(theirs)
    scale = float(np.abs(theirs[finite]).max()) if finite.any() else 1.0
    for part in (np.real, np.imag):
        np.testing.assert_allclose(part(ours), part(theirs), rtol=rtol,
                                   atol=rtol * max(scale, 1.0), equal_nan=True, err_msg=where)


def assert_same(program, rtol: float = 1e-10) -> list:
    """gradkit gives what torch gives: same dtypes, shapes, values within ``rtol`` of the
    result's scale, or the same error. Returns gradkit's observations."""
    import torch
    expected, got = outcome(torch, program), outcome(gradkit, program)
    if isinstance(expected, tuple):
        assert got == expected
        return got
    assert not isinstance(got, tuple), f"gradkit raised {got}"
    assert len(got) == len(expected)
    for i, (ours, theirs) in enumerate(zip(got, expected, strict=True)):
        if isinstance(theirs, tuple):
            assert isinstance(ours, tuple) and ours[0] == theirs[0], f"[{i}]: {ours} != {theirs}"
            assert_close(ours[1], theirs[1], rtol, f"[{i}]")
        else:
            assert ours == theirs, f"[{i}]: {ours!r} != {theirs!r}"
    return got


def assert_same_error(program, error: type, match: str) -> None:
    """torch raises ``error`` matching ``match`` (torch's test's expectation), gradkit the same
    error with the same message."""
    import torch
    expected = outcome(torch, program)
    assert isinstance(expected, tuple) and expected[0] == error.__name__, expected
    assert re.search(match, expected[1]), expected
    assert outcome(gradkit, program) == expected
