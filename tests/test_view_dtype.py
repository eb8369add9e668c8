"""``Tensor.view(dtype)`` as torch's: the same memory read as another dtype (shape, strides,
offset and values), torch's errors in its order, no graph and a shared version counter."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

CASES = {  # name: (make the source from lib, target dtype name or Python type)
    "float_to_int32": (lambda m: m.arange(6.0).reshape(2, 3), "int32"),
    "float_to_double": (lambda m: m.arange(8.0).reshape(2, 4), "float64"),
    "float_to_short": (lambda m: m.arange(6.0).reshape(2, 3), "int16"),
    "float_to_bytes_offset": (lambda m: m.arange(24.0)[1:5], "int8"),
    "double_to_float_sliced": (lambda m: m.arange(6.0, dtype=m.float64).reshape(2, 3)[:, 1:],
                               "float32"),
    "rows_of_a_wider_matrix": (lambda m: m.arange(24.0).reshape(3, 8)[:, :4], "float64"),
    "transposed_same_size": (lambda m: m.arange(6.0).reshape(2, 3).t(), "int32"),
    "complex_to_float": (lambda m: m.tensor([1 + 2j, 3 - 4j], dtype=m.complex64), "float32"),
    "complex_to_half": (lambda m: m.tensor([1 + 2j], dtype=m.complex64), "float16"),
    "long_to_complex": (lambda m: m.arange(4), "complex128"),
    "bool_to_uint8": (lambda m: m.tensor([True, False, True]), "uint8"),
    "empty_rows": (lambda m: m.zeros(0, 4), "float64"),
    "python_float_is_double": (lambda m: m.zeros(4), float),
    "python_int_is_long": (lambda m: m.zeros(4), int),
    "zero_d_same_size": (lambda m: m.tensor(1.5), "int32"),
    # errors, in torch's order of checks
    "zero_d_other_size": (lambda m: m.tensor(1.5), "int16"),
    "odd_last_dim": (lambda m: m.arange(9.0)[1:10], "float64"),
    "odd_offset": (lambda m: m.arange(24.0)[1:9], "float64"),
    "strided_last_dim_upsizing": (lambda m: m.arange(24.0).reshape(4, 6)[:, ::3], "float64"),
    "strided_last_dim_downsizing": (lambda m: m.arange(6.0).reshape(2, 3).t(), "int16"),
    "odd_row_stride": (lambda m: m.arange(24.0).reshape(8, 3)[:, :2], "float64"),
}


def _run(lib, make, target):
    dtype = getattr(lib, target) if isinstance(target, str) else target
    try:
        y = make(lib).view(dtype)
    except RuntimeError as error:
        return str(error)
    values = y.numpy() if lib is gradkit else y.numpy()
    return (str(y.dtype).split(".")[-1], tuple(y.shape), y.stride(), y.storage_offset(),
            values.tobytes(), y.requires_grad)


@pytest.mark.parametrize("name", CASES)
def test_view_dtype_as_torch(name):
    make, target = CASES[name]
    assert _run(gradkit, make, target) == _run(torch, make, target)


def test_no_graph_and_a_shared_version_counter():
    def program(m):
        x = m.arange(4.0, requires_grad=True).clone()
        y = x.view(m.int32)
        z = x.view(m.float32)  # the same dtype: still a new tensor without graph
        y[0] = 0  # writes the bits of 0.0 into x's memory
        x.add_(1)
        return (y.requires_grad, y.grad_fn, z.requires_grad, z.grad_fn is None, z is x,
                x._version, y._version, x.detach().tolist())
    assert program(gradkit) == program(torch)


def test_a_write_through_the_dtype_view_is_seen_by_saved_tensors():
    def program(m):
        x = m.arange(1.0, 4.0, requires_grad=True).clone()
        y = x.exp()  # saves its result
        y.view(m.int32)[0] = 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    program(gradkit)
    program(torch)


def test_view_still_takes_sizes():
    x = gradkit.arange(6.0)
    assert x.view([2, 3]).shape == (2, 3) and x.view(3, 2).shape == (3, 2)
    np.testing.assert_array_equal(x.view(-1).numpy(), np.arange(6.0))
