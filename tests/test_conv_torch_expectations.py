"""torch's test/nn/test_convolution.py (TestConvolutionNN, TestConvolutionNNDeviceType), its
CPU expectations rerun as programs under torch 2.13 and gradkit: the conv layers' arguments
and errors, padding strings and padding modes, shapes, transposed output sizes, empty inputs
and non-contiguous operands. Gradients, groups and double backward are in
``test_conv_torch_expectations_grads.py``.

Each program takes the module (``torch`` or ``gradkit``); ``assert_same_as_torch`` compares
dtypes, shapes and values, or the error's type and message.
"""
import re

import numpy as np
import pytest
from test_torch_numerics import assert_same_as_torch

import gradkit

torch = pytest.importorskip("torch")

FLOAT32 = {"rtol": 1e-5, "atol": 1e-5}  # float32 sums in another order than torch's kernels


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _tensor(m, *shape, dtype="float64", seed=0, requires_grad=False):
    """Deterministic data of ``shape`` as a tensor of module ``m`` (complex: real parts)."""
    return m.tensor(_data(*shape, seed=seed), dtype=getattr(m, dtype),
                    requires_grad=requires_grad)


def _layer(m, name, *args, dtype="float64", seed=1, **options):
    """nn.<name>(*args, **options) of module ``m`` with deterministic parameters."""
    layer = getattr(m.nn, name)(*args, **options).to(getattr(m, dtype))
    with m.no_grad():
        for i, p in enumerate(layer.parameters()):
            p.copy_(_tensor(m, *p.shape, dtype=dtype, seed=seed + i))
    return layer


def _raises(m, exception, function):
    """The program's error must be ``exception`` (torch's own test asserts only the type)."""
    with pytest.raises(exception):
        function()
    return m.ones(1)


# -- invalid arguments: test_invalid_conv1d/2d/3d, test_mismatch_shape_conv2d ----------------

DTYPES = ["float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dims, layer_options, input_shape", [
    (1, {"kernel_size": 10}, (1, 3, 4)),                    # kernel larger than the input
    (1, {"kernel_size": 3, "stride": -1}, (1, 3, 4)),       # negative stride
    (2, {"kernel_size": 10}, (1, 3, 1, 1)),
    (2, {"kernel_size": 4, "stride": -1}, (1, 3, 4, 4)),
    (2, {"kernel_size": 4, "stride": 0}, (1, 3, 4, 4)),     # zero stride
    (2, {"kernel_size": 3, "dilation": 2, "stride": 2}, (1, 3, 4, 4)),
    (3, {"kernel_size": 3, "dilation": 2, "stride": 2}, (1, 3, 4, 4, 4)),
    (3, {"kernel_size": 3, "stride": -2}, (1, 3, 4, 4, 4)),
])
def test_invalid_conv_arguments_raise_torch_errors(dims, layer_options, input_shape, dtype):
    def program(m):
        layer = getattr(m.nn, f"Conv{dims}d")(3, 6, bias=True, **layer_options)
        return layer.to(getattr(m, dtype))(_tensor(m, *input_shape, dtype=dtype))
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_conv2d_of_a_5d_input_names_the_ranks(dtype):
    assert_same_as_torch(lambda m: m.nn.functional.conv2d(
        _tensor(m, 1, 10, 1, 28, 28, dtype=dtype), _tensor(m, 6, 1, 5, 5, dtype=dtype)))


@pytest.mark.parametrize("name", ["Conv1d", "Conv2d", "Conv3d"])
@pytest.mark.parametrize("groups", [0, -1, -2])
def test_conv_layers_refuse_non_positive_groups(name, groups):
    assert_same_as_torch(lambda m: getattr(m.nn, name)(1, 1, kernel_size=3, dilation=2,
                                                       stride=2, groups=groups))


@pytest.mark.parametrize("build", [
    lambda m: m.nn.Conv2d(3, 3, 3, padding_mode="xyz"),
    lambda m: m.nn.Conv2d(3, 3, 3, padding_mode=3),
    lambda m: m.nn.ConvTranspose2d(3, 3, 3, padding_mode="reflect"),
    lambda m: m.nn.ConvTranspose1d(3, 3, 3, padding_mode="circular", groups=0),
    lambda m: m.nn.LazyConvTranspose3d(3, 3, padding_mode="replicate"),
    lambda m: m.nn.Conv1d(3, 33, kernel_size=10, padding="foo"),
    lambda m: m.nn.Conv1d(3, 33, kernel_size=10, padding="same", stride=2),
    lambda m: m.nn.Conv2d(3, 33, kernel_size=10, padding="same", stride=(1, 3)),
    lambda m: m.nn.Conv2d(3, 33, kernel_size=10, padding="same", stride=(4, 1)),
    lambda m: m.nn.Conv3d(3, 33, kernel_size=10, padding="same", stride=(1, 1, 3)),
    lambda m: m.nn.Conv3d(3, 33, kernel_size=10, padding="same", stride=(5, 1, 1)),
    lambda m: m.nn.Conv2d(3, 4, 3, groups=2),
    lambda m: m.nn.Conv2d(4, 3, 3, groups=2),
], ids=["mode xyz", "mode 3", "transposed reflect", "transposed mode first",
        "lazy transposed", "padding foo", "same stride 1d", "same stride (1, 3)",
        "same stride (4, 1)", "same stride 3d", "same stride (5, 1, 1)", "in_channels",
        "out_channels"])
def test_conv_layer_constructor_errors(build):
    """test_conv_padding_mode, test_Conv{1,2,3}d_module_same_padding's errors: ValueErrors in
    torch's order and words (torch prints a set: its order is the hash seed's)."""
    assert _error(build, gradkit) == _error(build, torch)


def _error(build, m):
    """(type, message with each printed set's items sorted) of ``build(m)``'s error."""
    with pytest.raises(Exception) as info:  # noqa: PT011 - the error is compared after
        build(m)
    return type(info.value), re.sub(r"\{[^}]*\}", lambda s: str(sorted(s[0][1:-1].split(", "))),
                                    str(info.value).replace("torch.", "gradkit."))


def test_conv_layer_repr_shows_padding_strings_and_modes():
    for build in (lambda m: m.nn.Conv2d(3, 3, 3, padding="same"),
                  lambda m: m.nn.Conv1d(3, 3, 3, padding="valid", padding_mode="circular"),
                  lambda m: m.nn.Conv3d(3, 3, 2, padding=1, padding_mode="reflect"),
                  lambda m: m.nn.Conv2d(3, 3, 3, padding=(1, 2), padding_mode="replicate"),
                  lambda m: m.nn.Conv1d(3, 3, 4, padding="same", dilation=3)):
        assert repr(build(gradkit)) == repr(build(torch))
        # what the layer hands F.pad (a list for a padding string, a tuple for numbers)
        assert build(gradkit)._reversed_padding_repeated_twice == \
            build(torch)._reversed_padding_repeated_twice


# -- padding strings and padding modes -------------------------------------------------------

PADDINGS = [
    (1, {"kernel_size": 10, "padding": "same"}),
    (1, {"kernel_size": 10, "padding": "same", "dilation": 2}),
    (1, {"kernel_size": 4, "padding": 3}),
    (2, {"kernel_size": (5, 10), "padding": "same"}),
    (2, {"kernel_size": (3, 4), "padding": "same", "dilation": (1, 2)}),
    (2, {"kernel_size": 3, "padding": (1, 2)}),
    (2, {"kernel_size": 3, "padding": "valid", "stride": 2}),
    (3, {"kernel_size": (2, 3, 4), "padding": "same"}),
    (3, {"kernel_size": (2, 3, 4), "padding": "same", "dilation": (3, 2, 1)}),
    (3, {"kernel_size": 2, "padding": (0, 1, 2), "stride": (1, 2, 1)}),
]


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("dims, options", PADDINGS)
def test_conv_layer_padding_modes_match_torch(dims, options, mode):
    """test_Conv{1,2,3}d_module_same_padding: a padding mode other than zeros pads with F.pad
    (its form of the padding, 'same' split with the extra element after), then convolves
    unpadded; values and the three gradients as torch's."""
    sizes = {1: (20,), 2: (9, 20), 3: (4, 5, 6)}[dims]

    def program(m):
        layer = _layer(m, f"Conv{dims}d", 2, 3, padding_mode=mode, **options)
        x = _tensor(m, 2, 2, *sizes, seed=5, requires_grad=True)
        out = layer(x)
        grads = m.autograd.grad(out, (x, layer.weight, layer.bias), m.ones_like(out))
        return (out, *grads)
    assert_same_as_torch(program, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dims, mode, pads", [
    (1, "replicate", [4, 5]), (2, "reflect", [1, 2, 1, 1]), (3, "circular", [1, 2, 1, 1, 0, 1]),
])
def test_same_padding_mode_equals_explicit_pad_then_valid(dims, mode, pads):
    """torch's own comparison: the layer equals F.pad(x, pads, mode) then padding='valid'."""
    kernel = {1: 10, 2: (3, 4), 3: (2, 3, 4)}[dims]
    x = _tensor(gradkit, 1, 1, *{1: (20,), 2: (9, 20), 3: (4, 4, 4)}[dims], seed=2)
    layer = _layer(gradkit, f"Conv{dims}d", 1, 1, kernel_size=kernel, padding="same",
                   padding_mode=mode)
    conv = getattr(gradkit.nn.functional, f"conv{dims}d")
    expect = conv(gradkit.nn.functional.pad(x, pads, mode=mode), layer.weight, layer.bias,
                  padding="valid")
    np.testing.assert_allclose(layer(x).detach().numpy(), expect.detach().numpy())
    assert expect.shape == x.shape
    assert_same_as_torch(lambda m: _layer(m, f"Conv{dims}d", 1, 1, kernel_size=kernel,
                                          padding="same", padding_mode=mode)(
        _tensor(m, *x.shape, seed=2)))


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("in_size", [50, 53])
@pytest.mark.parametrize("kernel", [1, 2, 3, 8])
@pytest.mark.parametrize("dilation", [1, 2, 3])
def test_conv1d_same_padding_keeps_the_length(in_size, kernel, dilation, dtype):
    """test_conv1d_same_padding: the output has the input's length (stride 1)."""
    assert_same_as_torch(lambda m: m.nn.functional.conv1d(
        _tensor(m, 1, 1, in_size, dtype=dtype), _tensor(m, 1, 1, kernel, dtype=dtype, seed=1),
        padding="same", dilation=dilation), **FLOAT32)


SAME_AS_EXPLICIT = [  # (input, weight, explicit options, crop of the explicit result, dilation)
    ((1, 1, 12), (1, 1, 3), {"padding": 1}, (), 1),
    ((1, 1, 12), (1, 1, 4), {"padding": 3, "dilation": 2}, (), 2),
    ((1, 1, 12), (1, 1, 4), {"padding": 5, "dilation": 3}, (slice(1, None),), 3),
    ((1, 1, 10, 11), (1, 1, 4, 5), {"padding": (2, 2)}, (slice(1, None), slice(None)), 1),
    ((1, 1, 10, 11), (1, 1, 3, 4), {"padding": (2, 3), "dilation": 2}, (), 2),
    ((1, 1, 10, 11), (1, 1, 4, 4), {"padding": 5, "dilation": 3},
     (slice(1, None), slice(1, None)), 3),
    ((1, 1, 10, 11, 12), (1, 1, 1, 2, 5), {"padding": (0, 1, 2)},
     (slice(None), slice(1, None), slice(None)), 1),
    ((1, 1, 10, 11, 12), (1, 1, 1, 2, 5), {"padding": (0, 1, 4), "dilation": 2}, (), 2),
    ((1, 1, 10, 11, 12), (1, 1, 4, 4, 4), {"padding": 5, "dilation": 3},
     (slice(1, None),) * 3, 3),
]


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("x_shape, w_shape, explicit, crop, dilation", SAME_AS_EXPLICIT)
def test_same_padding_equals_explicit_padding(x_shape, w_shape, explicit, crop, dilation,
                                              dtype):
    """test_conv{1,2,3}d_same_padding: 'same' is the explicit padding, cropped at the start
    where the total is odd."""
    conv = getattr(gradkit.nn.functional, f"conv{len(x_shape) - 2}d")
    x, w = _tensor(gradkit, *x_shape, dtype=dtype), _tensor(gradkit, *w_shape, dtype=dtype,
                                                             seed=1)
    expect = conv(x, w, **explicit)[(Ellipsis, *crop)]
    actual = conv(x, w, padding="same", dilation=dilation)
    np.testing.assert_allclose(actual.numpy(), expect.numpy(), rtol=1e-6, atol=1e-6)
    assert_same_as_torch(lambda m: getattr(m.nn.functional, f"conv{len(x_shape) - 2}d")(
        _tensor(m, *x_shape, dtype=dtype), _tensor(m, *w_shape, dtype=dtype, seed=1),
        padding="same", dilation=dilation), **FLOAT32)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("x_shape, w_shape", [
    ((1, 1, 10), (1, 1, 4)), ((1, 1, 1, 10), (1, 1, 1, 4)), ((1, 1, 1, 1, 10), (1, 1, 1, 1, 4)),
])
def test_valid_padding_is_no_padding(x_shape, w_shape, dtype):
    conv = getattr(gradkit.nn.functional, f"conv{len(x_shape) - 2}d")
    x, w = _tensor(gradkit, *x_shape, dtype=dtype), _tensor(gradkit, *w_shape, dtype=dtype)
    np.testing.assert_array_equal(conv(x, w, padding="valid").numpy(), conv(x, w).numpy())
    assert_same_as_torch(lambda m: getattr(m.nn.functional, f"conv{len(x_shape) - 2}d")(
        _tensor(m, *x_shape, dtype=dtype), _tensor(m, *w_shape, dtype=dtype),
        padding="valid"), **FLOAT32)


@pytest.mark.parametrize("mode", ["valid", "same"])
@pytest.mark.parametrize("signal, kernel", [((10,), (4,)), ((10,), (5,)), ((5, 10), (2, 4)),
                                            ((5, 10), (3, 5)), ((5, 5, 10), (2, 2, 4)),
                                            ((5, 5, 10), (2, 3, 5))])
def test_conv_of_a_flipped_kernel_is_numpy_convolution(signal, kernel, mode):
    """test_conv{1,2,3}d_vs_scipy with NumPy as the reference: a convolution is the
    cross-correlation with the flipped kernel (full 'valid' sums checked by brute force)."""
    d = len(signal)
    x, w = _data(1, 1, *signal), _data(1, 1, *kernel, seed=1)
    conv = getattr(gradkit.nn.functional, f"conv{d}d")
    xt = gradkit.tensor(x)
    if mode == "same":
        xt = gradkit.nn.functional.pad(xt, [k // 2 for k in reversed(kernel) for _ in range(2)])
    actual = conv(xt, gradkit.tensor(w).flip(tuple(range(2, d + 2)))).numpy()[0, 0]
    full = np.zeros(tuple(s + k - 1 for s, k in zip(signal, kernel, strict=True)))
    for index in np.ndindex(*signal):  # the full convolution, one input element at a time
        window = tuple(slice(i, i + k) for i, k in zip(index, kernel, strict=True))
        full[window] += x[(0, 0, *index)] * w[0, 0]
    if mode == "valid":
        expected = full[tuple(slice(k - 1, s) for s, k in zip(signal, kernel, strict=True))]
    else:
        expected = full[tuple(slice((k - 1) // 2, None) for k in kernel)]
        expected = expected[tuple(slice(0, s) for s in actual.shape)]
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


# -- shapes: test_conv_shapecheck, incorrect input sizes, transposed output sizes -----------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("build, input_size", [
    (lambda m: m.nn.Conv1d(1, 1, 3), (1, 2)),
    (lambda m: m.nn.Conv1d(1, 1, 3, stride=2), (1, 2)),
    (lambda m: m.nn.Conv1d(1, 1, 2), (1, 2)),
    (lambda m: m.nn.Conv1d(1, 1, 2, stride=2), (1, 2)),
    (lambda m: m.nn.Conv1d(1, 1, 3, stride=2, padding=1), (1, 2)),
    (lambda m: m.nn.Conv2d(1, 1, (3, 3)), (1, 2, 2)),
    (lambda m: m.nn.Conv2d(1, 1, (3, 3)), (1, 3, 3)),
    (lambda m: m.nn.Conv2d(1, 1, (3, 3), padding=1), (1, 2, 2)),
    (lambda m: m.nn.Conv3d(1, 1, (3, 3, 3)), (1, 2, 2, 2)),
    (lambda m: m.nn.Conv3d(1, 1, (3, 3, 3)), (1, 3, 3, 3)),
    (lambda m: m.nn.Conv3d(1, 1, (3, 3, 3), padding=1), (1, 2, 2, 2)),
])
def test_conv_shapecheck(build, input_size, dtype):
    def program(m):
        layer = build(m).to(getattr(m, dtype))
        with m.no_grad():
            for p in layer.parameters():
                p.fill_(0.5)
        return layer(m.ones(3, *input_size, dtype=getattr(m, dtype)))
    assert_same_as_torch(program, rtol=1e-3)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name, ranks", [("Conv1d", (1, 4)), ("ConvTranspose1d", (1, 4)),
                                         ("Conv2d", (2, 5)), ("ConvTranspose2d", (2, 5)),
                                         ("Conv3d", (3, 6)), ("ConvTranspose3d", (3, 6))])
def test_conv_layers_refuse_inputs_of_other_ranks(name, ranks, dtype):
    for rank in ranks:
        assert_same_as_torch(lambda m, rank=rank: getattr(m.nn, name)(3, 8, 3).to(
            getattr(m, dtype))(
            m.ones((3,) * rank, dtype=getattr(m, dtype))))


def test_conv_transpose2d_output_size_range():
    """test_ConvTranspose2d_output_size: sizes 18..20 reachable, others a ValueError."""
    def upsample(m, size):
        return _layer(m, "ConvTranspose2d", 3, 4, 3, 3, 0, 2)(_tensor(m, 2, 3, 6, 6), size)
    for size in ((18, 18), (18, 19), (20, 18), (20, 19)):
        assert_same_as_torch(lambda m, size=size: upsample(m, size), rtol=1e-10)
    for size in ((17, 18), (21, 19), (18, 22)):  # torch.Size printed as gradkit.Size
        def build(m, size=size):
            upsample(m, size)
        assert _error(build, gradkit) == _error(build, torch)


@pytest.mark.parametrize("h, w", [(13, 13), (17, 16), (23, 14)])
@pytest.mark.parametrize("k, d, s, p", [(2, 1, 1, 0), (3, 2, 2, 1), (4, 1, 3, 2), (2, 4, 3, 0),
                                        (3, 3, 2, 2)])
def test_conv_transpose2d_undoes_the_downsampling_shape(h, w, k, d, s, p):
    """test_ConvTranspose2d_output_size_downsample_upsample: output_size=input.shape."""
    def program(m):
        options = {"kernel_size": k, "stride": s, "padding": p, "dilation": d}
        conv, t_conv = _layer(m, "Conv2d", 3, 2, **options), _layer(m, "ConvTranspose2d", 2, 3,
                                                                    **options)
        x = _tensor(m, 2, 3, h, w)
        return t_conv(conv(x), output_size=x.shape)
    assert gradkit_shape_of(program)[2:] == (h, w)
    assert_same_as_torch(program, rtol=1e-10)


def gradkit_shape_of(program):
    return tuple(program(gradkit).shape)


@pytest.mark.parametrize("program", [
    lambda m: _layer(m, "ConvTranspose3d", 2, 2, 2)(_tensor(m, 1, 2, 1, 1, 1),
                                                    output_size=(1, 2, 2, 2, 2)),
    lambda m: _layer(m, "ConvTranspose2d", 1, 1, kernel_size=16, stride=16, padding=7,
                     bias=False)(_tensor(m, 1, 15, 13), output_size=(1, 240, 200)),
    lambda m: _layer(m, "ConvTranspose3d", 1, 1, kernel_size=16, stride=16, padding=7,
                     bias=False)(_tensor(m, 1, 3, 2, 2), output_size=(1, 48, 24, 24)),
    lambda m: _layer(m, "ConvTranspose1d", 2, 3, 3, stride=2)(_tensor(m, 2, 4),
                                                              output_size=[10]),
], ids=["3d 5-element size", "2d unbatched", "3d unbatched", "1d unbatched"])
def test_conv_transpose_output_size_forms(program):
    """test_ConvTranspose3d_correct_output_size, test_conv_transpose_with_output_size_and_no_
    batch_dim (the 3-D case on a smaller input), and the 1-D form."""
    assert_same_as_torch(program, rtol=1e-10)


def test_conv_transpose3d_unbatched_output_size_too_short_is_torch_value_error():
    assert_same_as_torch(lambda m: _layer(m, "ConvTranspose3d", 1, 1, 2)(
        _tensor(m, 1, 2, 2, 2), output_size=(1, 4)))


# -- dtypes, arguments, autograd bookkeeping --------------------------------------------------

@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float64", "float16"),
                                    ("float64", "complex128")])
def test_conv2d_of_mixed_dtypes_is_refused(dtypes):
    """test_Conv2d_inconsistent_types (the input's dtype ahead of the weight's; torch's
    MKLDNN-path message, for a float32 or float16 input, is covered only by type)."""
    assert_same_as_torch(lambda m: m.nn.functional.conv2d(
        _tensor(m, 4, 1, 7, 7, dtype=dtypes[0]), _tensor(m, 1, 1, 3, 3, dtype=dtypes[1])))
    for m in (torch, gradkit):  # a float32 input with a float64 weight: the type only
        _raises(m, RuntimeError, lambda m=m: m.nn.functional.conv2d(
            _tensor(m, 4, 1, 7, 7, dtype="float32"), _tensor(m, 1, 1, 3, 3)))


@pytest.mark.parametrize("call", [
    lambda m: m.nn.Conv2d(3, 3, 3)(None),
    lambda m: m.nn.functional.conv1d(None, m.ones(1, 1, 1)),
    lambda m: m.nn.functional.conv3d(input=3, weight=m.ones(1, 1, 1, 1, 1)),
    lambda m: m.nn.functional.conv_transpose2d([1.0], m.ones(1, 1, 1, 1)),
], ids=["layer None", "conv1d None", "conv3d int keyword", "conv_transpose2d list"])
def test_conv_input_that_is_not_a_tensor_is_a_type_error(call):
    """test_Conv2d_missing_argument: torch's parser refuses it (first line of its message; a
    Parameter is named Tensor in gradkit's)."""
    with pytest.raises(TypeError) as expected:
        call(torch)
    with pytest.raises(TypeError) as got:
        call(gradkit)
    first = str(expected.value).split(" - got ")[0].split(": argument")[0]
    assert str(got.value).startswith(first)


def test_conv2d_backward_twice_needs_retain_graph():
    def program(m):
        out = _layer(m, "Conv2d", 3, 3, 3)(_tensor(m, 2, 3, 5, 5))
        out.sum().backward()
        out.sum().backward()
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_conv2d_discontiguous_weight(dtype):
    """test_conv2d_discontiguous_weight (pytorch#55781): a strided weight view."""
    def program(m):
        x = m.ones(4, 16, 6, 6, dtype=getattr(m, dtype))
        w = m.arange(0, 1.0, 1 / 2.0**10).reshape(32, 16, 1, 2).to(getattr(m, dtype))
        w = w[:, :, :, ::2]
        assert not w.is_contiguous()
        return m.nn.functional.conv2d(x, w, None)
    assert_same_as_torch(program, **FLOAT32)
    # closed form: every output sums 16 channels of the weight's even entries
    w = np.arange(0, 1.0, 1 / 2.0**10).reshape(32, 16, 1, 2)[:, :, :, 0]
    np.testing.assert_allclose(program(gradkit).sum().item(), 4 * 36 * w.sum(), rtol=1e-6)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("groups", [1, 3])
def test_conv_of_expanded_weights(dims, groups):
    """test_conv_noncontig_weights: an expanded (stride-0) weight, both convolutions."""
    def program(m):
        w = _tensor(m, *[3] * dims).expand([3, 3 // groups] + [3] * dims)
        w = w.detach().requires_grad_()
        x = _tensor(m, 1, 3, *[5] * dims, seed=1, requires_grad=True)
        y = getattr(m.nn.functional, f"conv{dims}d")(x, w, groups=groups)
        t = getattr(m.nn.functional, f"conv_transpose{dims}d")(x, w, groups=groups)
        return (y, t, *m.autograd.grad(y.sum() + t.sum(), (x, w)))
    assert_same_as_torch(program, rtol=1e-10)


@pytest.mark.parametrize("bias", [True, False])
def test_conv_of_strided_views_equals_their_contiguous_copies(bias):
    """test_conv_noncontig_weights_and_bias, test_conv_contiguous_for_oneDNN and CUDA's
    test_cudnn_noncontiguous_weight on the CPU: strided input, weight and bias."""
    def program(m):
        x = _tensor(m, 1, 3, 24, 24, 2, dtype="float32")[:, :, :, :, 1]
        w = _tensor(m, 8, 3, 7, 7, 2, dtype="float32", seed=1)[:, :, :, :, 1]
        b = _tensor(m, 8, 2, dtype="float32", seed=2)[:, 1] if bias else None
        strided = m.nn.functional.conv2d(x, w, b, stride=2, padding=3)
        dense = m.nn.functional.conv2d(x.contiguous(), w.contiguous(),
                                       None if b is None else b.contiguous(), stride=2,
                                       padding=3)
        assert m.equal(strided, dense) or m.allclose(strided, dense, rtol=1e-6, atol=1e-6)
        x2 = _tensor(m, 1, 2, 32, 20, 1, dtype="float32").transpose(1, 4)[..., 0]
        layer = _layer(m, "Conv2d", 1, 16, (5, 2), stride=(2, 1), padding=(0, 1),
                       dtype="float32")
        return strided, layer(x2)
    assert_same_as_torch(program, **FLOAT32)
    assert_same_as_torch(lambda m: m.nn.functional.conv1d(
        m.tensor([1.0, 1, 1], dtype=m.float64).view(1, 1, 3),
        m.tensor([1.0], dtype=m.float64).expand(1, 1, 2), stride=2, dilation=2))


@pytest.mark.parametrize("program", [
    lambda m: m.nn.functional.conv2d(
        _tensor(m, 1, 64, 48, 3, dtype="float32").permute(0, 3, 1, 2),
        m.zeros(3, 1, 1, 9), groups=3),
    lambda m: m.nn.functional.conv3d(m.ones(2, 3, 8, 9, 26), m.ones(3, 1, 1, 1, 17), groups=3),
    lambda m: m.nn.functional.conv1d(_tensor(m, 1, 1, 16, dtype="float32").transpose(1, 2),
                                     m.ones(16, 1, 32), m.ones(16), 1, 16, 1, 16),
], ids=["issue 120211", "issue 120406", "issue 120547"])
def test_conv_issue_reproducers(program):
    """test_permute_conv2d_issue_120211 (a smaller image), 120406, 120547: no error, torch's
    values."""
    assert_same_as_torch(program, **FLOAT32)


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("groups", [1, 2, 4])
def test_conv2d_under_no_grad_is_the_same(batch, groups):
    """test_conv2d_no_grad: inference gives the values of a recorded forward."""
    def program(m):
        layer = _layer(m, "Conv2d", groups, 8, (3, 3), groups=groups, dtype="float32")
        x = _tensor(m, batch, groups, 8, 8, dtype="float32")
        with m.no_grad():
            quiet = layer(x)
        recorded = layer(x)
        assert not quiet.requires_grad and recorded.requires_grad
        return quiet, recorded
    assert_same_as_torch(program, **FLOAT32)


# -- empty inputs: test_conv_empty_channel, test_group_conv(Transpose)_empty -----------------

def _empty_run(m, layer, x):
    """_test_module_empty_input: output, input grad and parameter grads of an empty input."""
    x = x.requires_grad_()
    out = layer(x)
    total = out.sum()
    (total.real + total.imag if total.is_complex() else total).backward()
    return (out, x.grad, *(p.grad for p in layer.parameters()))


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("dims, channels, kernel, sizes", [
    (1, 8, 2, (15,)), (2, 33, 3, (10, 20)), (3, 33, 3, (10, 4, 8))])
def test_conv_of_zero_input_channels(dims, channels, kernel, sizes, dtype):
    def program(m):
        layer = _layer(m, f"Conv{dims}d", 0, channels, kernel, stride=2, dtype=dtype)
        return _empty_run(m, layer, m.zeros(2, 0, *sizes, dtype=getattr(m, dtype)))
    assert_same_as_torch(program)
    sizes = sizes[:-1] + (0,)  # one channel, an empty spatial dim: refused
    assert_same_as_torch(lambda m: _layer(m, f"Conv{dims}d", 0, channels, kernel, dtype=dtype)(
        m.zeros(2, 1, *sizes, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("name, groups", [("Conv2d", 4), ("ConvTranspose2d", 4),
                                          ("ConvTranspose2d", 1)])
def test_conv_of_an_empty_batch(name, groups):
    def program(m):
        layer = _layer(m, name, 4, 4, stride=2, kernel_size=3, padding=1, groups=groups)
        return _empty_run(m, layer, m.zeros(0, 4, 4, 4, dtype=m.float64))
    assert_same_as_torch(program)


# -- argument checks found while porting (regressions against torch) -------------------------

@pytest.mark.parametrize("name, dims", [("conv1d", 1), ("conv2d", 2), ("conv3d", 3),
                                        ("conv_transpose1d", 1), ("conv_transpose2d", 2),
                                        ("conv_transpose3d", 3)])
@pytest.mark.parametrize("dilation, batch", [(0, 1), (-1, 1), ("one zero", 1), (0, 0)])
def test_zero_and_negative_dilation(name, dims, dilation, batch):
    """A negative dilation is refused with the other arguments; a zero one only by the
    kernels (the empty backend computes), shown in the 2-D form of a 1-D convolution and, for a
    transposed one, per dim."""
    if dilation == "one zero":
        dilation = [1, 0, 1][:dims]
    assert_same_as_torch(lambda m: getattr(m.nn.functional, name)(
        _tensor(m, batch, 1, *[5] * dims), _tensor(m, 1, 1, *[3] * dims, seed=1),
        dilation=dilation), rtol=1e-10)


@pytest.mark.parametrize("program", [
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(1, 1, 3, 3), padding="foo"),
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 5), m.ones(1, 1, 3), padding="Same"),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(1, 1, 3, 3), padding="same",
                                     stride=2),
    lambda m: m.nn.functional.conv_transpose2d(m.ones(1, 1, 5, 5), m.ones(1, 1, 3, 3),
                                               padding="same"),
])
def test_functional_padding_strings(program):
    assert_same_as_torch(program)


# (not (3, 3): its second pad, 3 over the 2 rows a crop of 1 keeps, makes torch read its own
# output or raise its overlap error by the layout; gradkit refuses it, docs/api.md's F.pad row)
@pytest.mark.parametrize("padding, size", [(5, 3), (4, 3), (2, 1)])
def test_circular_padding_wraps_at_most_once(padding, size):
    """F.pad's circular mode (reached by padding_mode='circular') refuses a pad beyond the
    input's size."""
    assert_same_as_torch(lambda m: _layer(m, "Conv1d", 1, 1, 3, padding=padding,
                                          padding_mode="circular")(_tensor(m, 1, 1, size)))
    assert_same_as_torch(lambda m: m.nn.functional.pad(
        _tensor(m, 1, 2, size, size + 1), (padding, 0, -1, padding), mode="circular"))
