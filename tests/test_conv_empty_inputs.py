"""Convolutions of empty inputs, run in torch and gradkit: torch's empty backend (an empty
batch or no input channel) multiplies instead of running a kernel, so it skips the kernels'
dtype checks; any other empty input is refused."""
import pytest
from test_torch_numerics import assert_same_as_torch

import gradkit

torch = pytest.importorskip("torch")


def _conv_program(name, input_shape, weight_shape, dtypes, bias_dtype=None, **options):
    """conv ``name`` of ones of these shapes and dtypes, with its output and the gradients."""
    def program(m):
        x = m.ones(*input_shape, dtype=getattr(m, dtypes[0]), requires_grad=True)
        w = m.ones(*weight_shape, dtype=getattr(m, dtypes[1]), requires_grad=True)
        leaves = [x, w]
        if bias_dtype is not None:
            channels = weight_shape[1] * options.get("groups", 1) if "transpose" in name \
                else weight_shape[0]
            leaves.append(m.arange(1.0, channels + 1, dtype=getattr(m, bias_dtype),
                                   requires_grad=True))
        out = getattr(m.nn.functional, name)(*leaves, **options)
        return (out,) + m.autograd.grad(out.sum(), leaves)
    return program


@pytest.mark.parametrize("name, input_shape, weight_shape, dtypes, bias", [
    ("conv_transpose1d", (0, 2, 4), (2, 3, 2), ("float32", "float64"), None),
    ("conv_transpose1d", (0, 2, 4), (2, 3, 2), ("float64", "float32"), "float32"),
    ("conv_transpose2d", (0, 2, 4, 4), (2, 3, 2, 2), ("float32", "float64"), "float64"),
    ("conv_transpose3d", (0, 2, 2, 2, 2), (2, 1, 2, 2, 2), ("float32", "float64"), None),
    ("conv_transpose1d", (0, 4, 4), (4, 3, 2), ("float32", "float16"), None),
    ("conv_transpose1d", (0, 2, 4), (2, 3, 2), ("float32", "complex64"), None),  # refused
])
def test_conv_transpose_of_an_empty_batch_takes_any_weight_dtype(
        name, input_shape, weight_shape, dtypes, bias):
    """An empty batch computes ``input * weight.flatten()[0] + bias[0]`` (in place): the
    weight's dtype promotes as a 0-d operand, the bias takes the output's dtype; a complex
    output of a real input has no derivative."""
    groups = 2 if input_shape[1] == 4 else 1
    assert_same_as_torch(_conv_program(name, input_shape, weight_shape, dtypes, bias,
                                       stride=2, groups=groups))


@pytest.mark.parametrize("name, input_shape, weight_shape, dtypes, bias", [
    ("conv1d", (2, 0, 5), (3, 0, 2), ("float32", "float32"), None),
    ("conv1d", (2, 0, 5), (3, 0, 2), ("float64", "float64"), "float64"),
    ("conv2d", (2, 0, 5, 5), (3, 0, 2, 2), ("float32", "float64"), None),
    ("conv2d", (0, 5, 5), (3, 0, 2, 2), ("float64", "float64"), "float64"),
    ("conv2d", (0, 0, 5, 5), (4, 0, 2, 2), ("float64", "float64"), None),
    ("conv3d", (1, 0, 3, 3, 3), (4, 0, 2, 2, 2), ("float64", "float32"), None),
])
def test_convolution_of_no_input_channel_has_no_output_channel(
        name, input_shape, weight_shape, dtypes, bias):
    """No input channel: torch multiplies ``input.flatten() * weight.flatten()`` (both
    empty, so dtypes promote in full) and returns no output channel, whatever the weight's
    count; the bias gets a zero gradient."""
    assert_same_as_torch(_conv_program(name, input_shape, weight_shape, dtypes, bias,
                                       padding=1))


@pytest.mark.parametrize("name", ["conv1d", "conv_transpose1d"])
def test_empty_convolution_with_a_complex_weight_computes_without_grad(name):
    """A real input and a complex weight: the output is complex, computed when nothing
    records a gradient."""
    assert_same_as_torch(lambda m: getattr(m.nn.functional, name)(
        m.zeros(0, 2, 4), m.ones(2, 2, 2, dtype=m.complex64)))


def test_convolution_of_no_input_channel_options():
    """Groups, dilation, stride and 'same' padding shape the empty output as torch's."""
    for options in ({"groups": 2}, {"dilation": 2}, {"stride": 2}, {"padding": "same"}):
        def program(m, options=options):
            return m.nn.functional.conv2d(m.ones(1, 0, 5, 5), m.ones(4, 0, 3, 3), **options)
        assert_same_as_torch(program)


def test_convolution_of_no_input_channel_keeps_integer_and_bool_dtypes():
    """The empty multiply has no kernel: integer and bool operands compute (the bias is
    added in place)."""
    def program(m, dtype, weight_dtype, bias_dtype):
        bias = m.ones(3, dtype=bias_dtype)
        return m.nn.functional.conv1d(m.ones(1, 0, 3, dtype=dtype),
                                      m.ones(3, 0, 2, dtype=weight_dtype), bias)
    for dtypes in (("int64", "int64", "int64"), ("int64", "float32", "int64"),
                   ("bool", "bool", "bool")):
        assert_same_as_torch(lambda m, d=dtypes: program(m, *(getattr(m, t) for t in d)))


@pytest.mark.parametrize("call, message", [
    (lambda m: m.nn.functional.conv_transpose1d(m.zeros(1, 2, 0), m.zeros(2, 3, 2)),
     r"Only zero batch or zero channel inputs are supported, but got input shape: \[1, 2, 1, "
     r"0\]"),
    (lambda m: m.nn.functional.conv_transpose1d(m.zeros(1, 2, 0), m.zeros(2, 3, 1)),
     "Only zero batch"),  # before the output-size check
    (lambda m: m.nn.functional.conv_transpose2d(m.zeros(1, 2, 0, 3), m.zeros(2, 3, 2, 2)),
     r"got input shape: \[1, 2, 0, 3\]"),
    (lambda m: m.nn.functional.conv1d(m.zeros(1, 2, 0), m.zeros(3, 2, 2, dtype=m.float64),
                                      padding=1),
     r"got input shape: \[1, 2, 1, 0\]"),
    (lambda m: m.nn.functional.conv_transpose1d(m.zeros(2, 0), m.zeros(2, 3, 2)),
     r"got input shape: \[1, 2, 1, 0\]"),
    (lambda m: m.nn.functional.conv_transpose2d(m.ones(2, 0, 3, 3), m.ones(0, 4, 2, 2)),
     r"Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of "
     r"size \[0, 4, 2, 2\] instead"),
    (lambda m: m.nn.functional.conv2d(m.ones(0, 3, 5, 5), m.ones(0, 3, 2, 2)),
     "expected weight to be at least 1 at dimension 0"),
    (lambda m: m.nn.functional.conv1d(m.zeros(1, 2, 3), m.zeros(1, 1, 2), groups=2),
     r"Given groups=2, expected weight to be at least 2 at dimension 0, but got weight of "
     r"size \[1, 1, 2\] instead"),
])
def test_empty_convolutions_refused_as_torch(call, message):
    """An empty input torch's empty backend does not take, and a weight with fewer output
    (transposed: input) channels than groups, raise torch's RuntimeError."""
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match=message):
            call(m)


@pytest.mark.parametrize("call, error, message", [
    (lambda m: m.nn.functional.conv_transpose1d(m.zeros(0, 2, 3), m.zeros(2, 3, 0)),
     IndexError, r"select\(\): index 0 out of range for tensor of size \[0\] at dimension 0"),
    (lambda m: m.nn.functional.conv1d(m.zeros(0, 2, 3), m.zeros(3, 2, 0)),
     IndexError, r"select\(\): index 0 out of range"),
    (lambda m: m.nn.functional.conv_transpose1d(m.zeros(0, 2, 4, dtype=m.int64),
                                                m.zeros(2, 3, 2), m.zeros(3, dtype=m.complex64)),
     RuntimeError, "result type ComplexFloat can't be cast to the desired output type Float"),
    (lambda m: m.nn.functional.conv_transpose1d(m.zeros(0, 2, 4, dtype=m.int64),
                                                m.zeros(2, 3, 2, dtype=m.int64), m.zeros(3)),
     RuntimeError, "result type Float can't be cast to the desired output type Long"),
    (lambda m: m.nn.functional.conv1d(m.zeros(0, 2, 4), m.zeros(3, 2, 2),
                                      m.zeros(3, dtype=m.float64)),
     RuntimeError, r"Input type \(float\) and bias type \(double\) should be the same"),
])
def test_empty_backend_errors_as_torch(call, error, message):
    """The empty backend indexes the flattened weight and adds ``bias[0]`` in place; the
    non-transposed convolutions check the bias dtype first."""
    for m in (torch, gradkit):
        with pytest.raises(error, match=message):
            call(m)


_WEIGHTS = {"conv1d": (3, 2, 2), "conv_transpose1d": (2, 3, 2)}


@pytest.mark.parametrize("name, input_dtype, weight_dtype, bias_dtype, shown", [
    ("conv1d", "complex64", "float32", None, r"Input type \(CPUComplexFloatType\) and weight "
     r"type \(torch.FloatTensor\) should be the same"),
    ("conv_transpose1d", "complex64", "complex128", None, r"Input type "
     r"\(CPUComplexFloatType\) and weight type \(CPUComplexDoubleType\) should be the same"),
    ("conv_transpose1d", "complex64", "complex64", "float32", r"Input type "
     r"\(CPUComplexFloatType\) and bias type \(torch.FloatTensor\) should be the same"),
])
@pytest.mark.parametrize("batch", [0, 1])
def test_complex_convolution_checks_parameter_types(name, input_dtype, weight_dtype, bias_dtype,
                                                    shown, batch):
    """torch's complex convolution checks the weight's and bias's types, empty or not."""
    def call(m):
        bias = None if bias_dtype is None else m.zeros(3, dtype=getattr(m, bias_dtype))
        return getattr(m.nn.functional, name)(
            m.zeros(batch, 2, 3, dtype=getattr(m, input_dtype)),
            m.zeros(*_WEIGHTS[name], dtype=getattr(m, weight_dtype)), bias)
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match=shown):
            call(m)


@pytest.mark.parametrize("name, bias_dtype", [
    ("conv_transpose1d", "float64"), ("conv_transpose2d", "int64"),
    ("conv_transpose2d", "complex64"), ("conv_transpose3d", "float64")])
def test_conv_transpose_adds_its_bias_in_place(name, bias_dtype):
    """torch's 1-D and 2-D transposed kernels add the bias in place (the output keeps its
    dtype, a complex bias is refused); the 3-D kernel checks the bias's dtype."""
    d = int(name[-2])
    def program(m):
        x = m.ones(1, 2, *(3,) * d, requires_grad=True)
        w = m.ones(2, 3, *(2,) * d, requires_grad=True)
        b = m.ones(3, dtype=getattr(m, bias_dtype))
        out = getattr(m.nn.functional, name)(x, w, b)
        return (out,) + m.autograd.grad(out.sum(), [x, w])
    assert_same_as_torch(program)
