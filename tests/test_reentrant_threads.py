"""Deep reentrant backward continues on fresh threads (gradkit/autograd/reentrant.py): results,
errors and the caller's settings are the same as on one deep stack."""
from __future__ import annotations

import threading

import pytest

import gradkit
from gradkit.autograd.reentrant import PASSES_PER_THREAD


def _countdown(lib, seen):
    """x - 1 whose backward runs a backward of its own until x < 0, noting where it ran."""

    class Countdown(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                ctx.x = x.detach().requires_grad_(True) - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            seen.append((threading.get_ident(), lib.get_default_dtype()))
            if ctx.x < 0:
                raise ValueError("bottom reached")
            with lib.enable_grad():
                Countdown.apply(ctx.x).sum().backward()
            return g

    return Countdown


@pytest.mark.parametrize("lib_name", ["gradkit", "torch"])
def test_an_error_at_the_bottom_of_a_deep_reentrant_chain_reaches_the_caller(lib_name):
    lib = gradkit if lib_name == "gradkit" else pytest.importorskip("torch")
    seen = []
    start = 3 * PASSES_PER_THREAD
    v = lib.tensor(float(start), dtype=lib.float64, requires_grad=True)
    with pytest.raises(ValueError, match="bottom reached"):
        _countdown(lib, seen).apply(v).sum().backward()
    assert len(seen) == start + 1  # x = start, ..., 0, -1


def test_deep_passes_move_to_new_threads_with_the_callers_settings():
    seen = []
    previous = gradkit.get_default_dtype()
    gradkit.set_default_dtype(gradkit.float64)
    try:
        v = gradkit.tensor(float(3 * PASSES_PER_THREAD), requires_grad=True)
        with pytest.raises(ValueError):
            _countdown(gradkit, seen).apply(v).sum().backward()
    finally:
        gradkit.set_default_dtype(previous)
    threads = {ident for ident, _ in seen}
    assert threading.get_ident() in threads and len(threads) >= 3
    assert {dtype for _, dtype in seen} == {gradkit.float64}
