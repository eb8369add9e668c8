"""Helpers for the torch-test expectation files that compare structured results: a program's
answer (tensors in nested tuples, lists and named tuples) flattened to the tuple of tensors
that ``assert_same_as_torch`` compares, and the leaves of a float64 graph for gradients."""
import numpy as np
from test_torch_numerics import assert_same_as_torch

import gradkit

try:
    import torch
except ImportError:  # the files that use these helpers skip without torch
    torch = None

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]
INTEGRAL = ["uint8", "int8", "int16", "int32", "int64"]


def tensors(result) -> tuple:
    """The tensors of ``result`` in order, nested tuples and lists walked."""
    if isinstance(result, (tuple, list)):
        return tuple(t for part in result for t in tensors(part))
    return (result,)


def same(program, rtol: float = 0.0, atol: float = 0.0) -> None:
    """``program(m)`` gives the same tensors (dtype, shape, values) or error under both."""
    assert_same_as_torch(lambda m: tensors(program(m)), rtol=rtol, atol=atol)


def made(m, values: np.ndarray, dtype: str):
    """A tensor of library ``m`` from NumPy ``values`` cast to the dtype named."""
    return m.tensor(np.asarray(values), dtype=getattr(m, dtype))


def sample(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Values fit for ``dtype``: 0/1 for bool, small integers, normal floats (complex too)."""
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in INTEGRAL:
        return rng.integers(0, 100, shape)
    values = rng.standard_normal(shape) * 10
    return values + 1j * rng.standard_normal(shape) if dtype.startswith("complex") else values


def with_python_values(program) -> None:
    """``program(m)`` returns Python values (lists, numbers, booleans): equal under both."""
    assert program(gradkit) == program(torch)
