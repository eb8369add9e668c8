"""hardtanh of integer tensors reads its limits as torch does: converted to int64 first
(truncated, so -0.5 is 0 and passes the unsigned check; inf, NaN and 1e30 are refused), then
uint8 refuses a negative one (fuzz strided_breadth seed 7498)."""

import math

import pytest

import gradkit

torch = pytest.importorskip("torch")

LIMITS = [(-0.5, 2.0), (-1, 1), (-0.99, 3.7), (0.5, 2.5), (-1.5, 2), (-math.inf, 3), (0, -0.5),
          (0, -1.0), (2, math.inf), (math.nan, 1), (0, 1e30), (True, 3), (3, 1)]


def clamped(lib, dtype: str, low, high):
    x = lib.tensor([0, 1, 2, 3, 100], dtype=getattr(lib, dtype))
    try:
        return lib.nn.functional.hardtanh(x, low, high).tolist()
    except (RuntimeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64"])
@pytest.mark.parametrize("low,high", LIMITS)
def test_integer_hardtanh_limits_as_torch(dtype, low, high):
    assert clamped(gradkit, dtype, low, high) == clamped(torch, dtype, low, high)


def test_the_refusals_say_why():
    assert clamped(gradkit, "uint8", -1.5, 2) == \
        "RuntimeError: cannot do hardtanh on an unsigned type with negative limits"
    assert clamped(gradkit, "int8", 0, math.inf) == \
        "RuntimeError: value cannot be converted to type int64_t without overflow"
    assert clamped(gradkit, "uint8", -0.5, 2.0) == [0, 1, 2, 2, 2]
