"""A registry of small programs, each run under gradkit and under torch and compared with its
own tolerance (torch_expectations/outcome.py), and the data and error helpers they share:
NumPy data both libraries read, and an error caught inside a program as a comparable value."""
import numpy as np

import gradkit
from torch_expectations.outcome import assert_same_outcome, outcome

try:
    import torch
except ImportError:  # the files using this helper skip without torch
    torch = None


class Programs:
    """``@programs(rtol=..., atol=...)`` registers a program of the library module ``m``;
    ``check(name)`` runs it under both libraries and compares (exact by default)."""

    def __init__(self) -> None:
        self.entries = {}

    def __call__(self, rtol: float = 0.0, atol: float = 0.0):
        def register(fn):
            self.entries[fn.__name__] = (fn, rtol, atol)
            return fn
        return register

    def names(self) -> list:
        return sorted(self.entries)

    def check(self, name: str) -> None:
        fn, rtol, atol = self.entries[name]
        assert_same_outcome(outcome(fn, gradkit), outcome(fn, torch), rtol, atol)


def normal(*shape, seed=0) -> np.ndarray:
    """Standard normal float64 data."""
    return np.random.default_rng(seed).standard_normal(shape)


def uniform(*shape, seed=0) -> np.ndarray:
    """Uniform [0, 1) float64 data."""
    return np.random.default_rng(seed).random(shape)


def randn(m, *shape, seed=0, dtype=None):
    """A tensor of library ``m`` of :func:`normal` data (float32 unless ``dtype``)."""
    return m.tensor(normal(*shape, seed=seed), dtype=dtype or m.float32)


def tried(call):
    """``call()``, or the error it raises as ["raises", type, first line] (torch's names)."""
    try:
        return call()
    except (IndexError, RuntimeError, TypeError, ValueError) as error:
        message = str(error).split("\n")[0].replace("gradkit._tensor.Tensor", "torch.Tensor")
        return ["raises", type(error).__name__, message.replace("gradkit", "torch")]
