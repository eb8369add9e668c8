"""Indexing against torch: the same keys give the same shapes, values, views and gradients."""
import numpy as np
import pytest
from test_torch_views import same_as_torch

import gradkit

torch = pytest.importorskip("torch")


def _weights(lib, shape):
    """Distinct weights, so a gradient tells which element went where."""
    n = 1
    for s in shape:
        n *= s
    return lib.arange(1.0, n + 1.0, dtype=lib.float64).reshape(shape)


def _read(key_of):
    """A program that reads ``x[key]`` and backpropagates weighted values through it."""
    def program(lib):
        x = _weights(lib, (2, 3, 4)).requires_grad_()
        y = x[key_of(lib)]
        (y * _weights(lib, tuple(y.shape))).sum().backward()
        return list(y.shape), y, x.grad
    return program


KEYS = {
    "int_slice_list": lambda lib: (0, slice(None), [0, 1]),
    "int_slice_2d_list": lambda lib: (0, slice(None), [[0], [2]]),
    "list_int_list": lambda lib: ([1, 0], 1, [2, 3]),
    "ellipsis_int_tensor": lambda lib: (Ellipsis, 1, lib.tensor([0, 0])),
    "none_int_list": lambda lib: (None, 1, slice(None), [3, 0]),
    "int_bool_mask": lambda lib: (1, lib.tensor([True, False, True])),
    "zero_d_tensor": lambda lib: lib.tensor(1),
    "zero_d_tensors": lambda lib: (lib.tensor(1), lib.tensor(2)),
    "true": lambda lib: True,
    "false": lambda lib: False,
    "zero_d_true": lambda lib: lib.tensor(True),
    "zero_d_false": lambda lib: lib.tensor(False),
    "int_slice_true": lambda lib: (0, slice(1, None), True),
    "ints_ellipsis_true": lambda lib: (0, 1, Ellipsis, True),
    "list_false_list": lambda lib: ([0, 1], False, [1, 2]),
    "numpy_int_slice_list": lambda lib: (np.int64(1), slice(None), [0, 2]),
}


@pytest.mark.parametrize("name", KEYS)
def test_read_and_gradient_match_torch(name):
    same_as_torch(_read(KEYS[name]))


SEQUENCE_KEYS = {
    "list_of_0d_tensors": lambda lib: [lib.tensor(1), lib.tensor(2)],
    "list_of_1d_tensors": lambda lib: [lib.tensor([1, 0]), lib.tensor([2, 0])],
    "list_of_lists": lambda lib: [[1, 0], [2, 0]],
    "list_with_slice": lambda lib: [1, slice(None), lib.tensor(3)],
}


@pytest.mark.parametrize("name", SEQUENCE_KEYS)
def test_a_list_holding_tensors_is_a_tuple_of_indices(name):
    same_as_torch(_read(SEQUENCE_KEYS[name]))
    with pytest.warns(UserWarning, match="Using a non-tuple sequence for multidimensional"):
        gradkit.zeros(2, 3, 4)[SEQUENCE_KEYS[name](gradkit)]


def test_zero_d_integer_tensor_index_is_a_view():
    def program(lib):
        x = lib.arange(12.0).reshape(3, 4).clone()
        assert x[np.int64(2)]._base is x
        y = x[lib.tensor(1)]
        x.add_(1)
        y.mul_(2)
        return y, x, y._base is x, y._version, x._version
    assert same_as_torch(program)[2] is True


def _scalar_program(write):
    def program(lib):
        leaf = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        v = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        x = leaf * 1
        write(lib, x, v)
        (x * x).backward()
        return x, leaf.grad, v.grad, x._version
    return program


SCALAR_WRITES = {
    "ellipsis": lambda lib, x, v: x.__setitem__(Ellipsis, v * 5),
    "empty_tuple": lambda lib, x, v: x.__setitem__((), v),
    "true": lambda lib, x, v: x.__setitem__(True, v),
    "zero_d_true": lambda lib, x, v: x.__setitem__(lib.tensor(True), v),
    "false": lambda lib, x, v: x.__setitem__(False, v),
    "number": lambda lib, x, v: x.__setitem__(Ellipsis, 7.0),
}


@pytest.mark.parametrize("name", SCALAR_WRITES)
def test_setitem_on_a_0d_tensor(name):
    same_as_torch(_scalar_program(SCALAR_WRITES[name]))


@pytest.mark.parametrize("key", [True, False, Ellipsis, ()])
def test_indexing_a_0d_tensor(key):
    def program(lib):
        x = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        y = x[key]
        (y * 2).sum().backward()
        return list(y.shape), y, x.grad
    same_as_torch(program)


def _write(key_of, value_shape):
    def program(lib):
        v = _weights(lib, value_shape).requires_grad_()
        x = lib.zeros(2, 3, 4, dtype=lib.float64)
        x[key_of(lib)] = v * 1
        (x * _weights(lib, (2, 3, 4))).sum().backward()
        return x, v.grad
    return program


@pytest.mark.parametrize("name,value_shape", [
    ("int_slice_list", (3, 1)), ("int_slice_2d_list", (3, 2, 1)),
    ("list_int_list", (2,)), ("zero_d_tensors", (4,)), ("int_bool_mask", (1,)),
    ("zero_d_tensor", (3, 4)), ("int_slice_true", (2, 1, 4)), ("numpy_int_slice_list", (3, 2))])
def test_setitem_with_a_gradient_matches_torch(name, value_shape):
    same_as_torch(_write(KEYS[name], value_shape))


def test_separated_advanced_index_gradcheck():
    x = gradkit.randn(2, 3, 4, dtype=gradkit.float64, requires_grad=True)
    assert gradkit.autograd.gradcheck(lambda t: t[0, :, [0, 1, 1]], (x,))
    assert gradkit.autograd.gradgradcheck(lambda t: t[0, :, [0, 1, 1]], (x,))
