"""``repr`` of float and complex tensors, as torch prints them (4 decimals, ``1.`` when whole,
scientific for extreme or widely spread magnitudes, each part padded to its widest value,
a suffix on its own line when the last one is full), compared with torch case by case."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan
VALUES = {  # name: values (a list, nested lists or one number)
    "whole": [1 + 2j, -3 + 0j],
    "decimals": [1 + 2j, 3.5 - 0.25j],
    "thirds": [0.1 + 0.2j, 1 / 3 - 2j / 3],
    "small_and_large": [1e-5 + 1j, 1e5 + 3j],
    "huge": [123456.789 + 1e-3j],
    "tiny": [1e-10 + 1e-10j],
    "nan_inf": [complex(NAN, 1), complex(INF, -INF), 1 + 1j, complex(0.5, NAN)],
    "signed_zeros": [complex(-0.0, -0.0), complex(0.0, 0.0), 1.5 - 0j],
    "0d": 1 / 3 + 1j,
    "0d_whole": -2 + 0j,
    "empty": [],
    "matrix": [[1e10 + 1j, 2 + 2j], [0j, -1 - 1j]],
    "wrapped": [complex(math.sin(k), math.cos(k) * 10 ** (k % 3)) for k in range(30)],
    "summarized": [complex(k / 7, -k) for k in range(1200)],
}


def _tensor(lib, values, dtype, requires_grad):
    t = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=requires_grad)
    return t * 2 if requires_grad else t  # a grad_fn suffix


def _text(lib, values, dtype, requires_grad=False):
    return repr(_tensor(lib, values, dtype, requires_grad)).replace(f"{lib.__name__}.", "lib.")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", VALUES)
def test_complex_repr_as_torch(name, dtype):
    values = VALUES[name]
    assert _text(gradkit, values, dtype) == _text(torch, values, dtype)


@pytest.mark.parametrize("name", ["thirds", "0d", "matrix", "wrapped"])
def test_complex_repr_with_grad_fn_as_torch(name):
    values = VALUES[name]
    assert _text(gradkit, values, "complex64", True) == _text(torch, values, "complex64", True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", VALUES)
def test_the_real_parts_print_as_torch_too(name, dtype):
    real = np.real(np.array(VALUES[name], dtype=np.complex128)).tolist()
    assert _text(gradkit, real, dtype) == _text(torch, real, dtype)


def test_the_parts_are_rounded_not_printed_in_full():
    text = repr(gradkit.tensor([1 / 3 + 2j / 3]))
    assert text == "tensor([0.3333+0.6667j])"


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([-1, 5, 1000]), lambda lib: lib.tensor([1, 200], dtype=lib.uint8),
    lambda lib: lib.tensor([True, False]), lambda lib: lib.tensor(-0.0),
    lambda lib: lib.zeros(2, 0), lambda lib: lib.zeros(0, dtype=lib.int64),
    lambda lib: lib.zeros(0, 3, dtype=lib.complex64),
    lambda lib: lib.arange(24000).reshape(2, 3, 4000) / 7,
    lambda lib: lib.tensor([1.5, 2.25], dtype=lib.float16),
], ids=["int", "uint8", "bool", "minus_zero", "empty_2d", "empty_int", "empty_complex",
        "summarized_3d", "float16"])
def test_other_tensors_print_as_torch(make):
    assert repr(make(gradkit)).replace("gradkit.", "lib.") == repr(make(torch)).replace(
        "torch.", "lib.")


def test_under_a_float64_default_complex128_is_the_default_complex_dtype():
    def text(lib):
        previous = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            return [repr(lib.tensor(v)).replace(f"{lib.__name__}.", "lib.")
                    for v in ([0.5 + 1j], [0.5], [[]])] + [
                repr(lib.tensor([1j], dtype=lib.complex64)).replace(f"{lib.__name__}.", "lib.")]
        finally:
            lib.set_default_dtype(previous)
    assert text(gradkit) == text(torch)


@pytest.mark.parametrize("make, spec", [
    (lambda m: m.tensor(0.1), ""), (lambda m: m.tensor(0.5), ".3f"),
    (lambda m: m.tensor(0.5, dtype=m.float64), ""), (lambda m: m.tensor(3), ">5"),
    (lambda m: m.tensor(True), ""), (lambda m: m.tensor(1 + 2j), ""),
    (lambda m: m.tensor(0.5, requires_grad=True), ".2f"), (lambda m: m.tensor([1.0, 2.0]), ""),
    (lambda m: m.tensor([]), ""), (lambda m: m.nn.Parameter(m.tensor(0.5)), ""),
    (lambda m: m.tensor([1.0, 2.0]), ".3f"), (lambda m: m.nn.Parameter(m.tensor(0.5)), ".2f"),
])
def test_format_as_torch(make, spec):
    """A plain 0-d tensor formats as its Python number (``f"{loss:.3f}"``); others as their
    repr, refusing a format spec with Python's error."""
    def text(m):
        try:
            return format(make(m), spec)
        except TypeError as error:
            return f"TypeError: {error}"
    assert text(gradkit) == text(torch)
