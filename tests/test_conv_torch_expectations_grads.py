"""torch's test/nn/test_convolution.py, its gradient expectations rerun under torch 2.13 and
gradkit: grouped convolutions against their halves, torch.nn.grad's functions against
autograd, double backward (gradgradcheck, forward-over-reverse), 'same'/'valid' padding
gradients, conv_tbc, and test_conv_backend's CPU backends through torch.convolution.
"""
import numpy as np
import pytest
from test_torch_numerics import assert_same_as_torch

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

FLOAT32 = {"rtol": 1e-4, "atol": 1e-5}  # float32 gradients summed in another order


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _tensor(m, *shape, dtype="float64", seed=0, requires_grad=False):
    return m.tensor(_data(*shape, seed=seed), dtype=getattr(m, dtype),
                    requires_grad=requires_grad)


def _leaves(*shapes, dtype="float64", seed=0):
    """gradkit float64 leaves for gradcheck (complex: real and imaginary parts drawn)."""
    leaves = []
    for i, shape in enumerate(shapes):
        values = _data(*shape, seed=seed + i)
        if "complex" in dtype:
            values = values + 1j * _data(*shape, seed=seed + 50 + i)
        leaves.append(gradkit.tensor(values, dtype=getattr(gradkit, dtype), requires_grad=True))
    return leaves


def _copy_parameters(m, layer, dtype, seed=1):
    with m.no_grad():
        for i, p in enumerate(layer.parameters()):
            p.copy_(_tensor(m, *p.shape, dtype=dtype, seed=seed + i))
    return layer


# -- grouped convolutions equal their halves --------------------------------------------------

GROUPED = [  # (layer, in, out, groups, bias, input shape)
    ("Conv2d", 4, 4, 2, False, (2, 4, 6, 6)),      # test_Conv2d_groups_nobias
    ("Conv2d", 4, 16, 2, False, (2, 4, 6, 6)),     # test_Conv2d_groups_nobias_v2
    ("Conv3d", 4, 16, 2, False, (2, 4, 5, 5, 5)),  # test_Conv3d_groups_nobias
    ("Conv3d", 4, 16, 2, True, (2, 4, 5, 5, 5)),   # test_Conv3d_groups_wbias
    ("Conv2d", 4, 4, 2, True, (2, 4, 6, 6)),       # test_Conv2d_naive_groups
    ("Conv2d", 2, 4, 2, True, (2, 2, 6, 6)),       # test_Conv2d_depthwise_naive_groups (CPU)
    ("Conv3d", 2, 2, 2, True, (2, 2, 5, 5, 5)),    # test_Conv3d_depthwise_naive_groups (CPU)
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, c_in, c_out, groups, bias, shape", GROUPED)
def test_grouped_conv_equals_its_halves(name, c_in, c_out, groups, bias, shape, dtype):
    """Output and gradients of a 2-group layer are those of two layers on the halves."""
    def program(m):
        layer = _copy_parameters(m, getattr(m.nn, name)(c_in, c_out, 3, groups=groups,
                                                        bias=bias).to(getattr(m, dtype)), dtype)
        x = _tensor(m, *shape, dtype=dtype, requires_grad=True)
        out = layer(x)
        grad_out = _tensor(m, *out.shape, dtype=dtype, seed=7)
        out.backward(grad_out)
        halves = []
        for half in range(2):
            part = getattr(m.nn, name)(c_in // 2, c_out // 2, 3, bias=bias).to(getattr(m, dtype))
            rows = slice(half * c_out // 2, (half + 1) * c_out // 2)
            with m.no_grad():
                part.weight.copy_(layer.weight[rows])
                if bias:
                    part.bias.copy_(layer.bias[rows])
            x_half = x.detach()[:, half * c_in // 2:(half + 1) * c_in // 2].clone()
            x_half.requires_grad_()
            out_half = part(x_half)
            out_half.backward(grad_out[:, rows])
            halves.append((out_half, x_half.grad, part.weight.grad,
                           part.bias.grad if bias else part.weight.grad))
        joined = [m.cat([a[i] for a in halves], 1 if i < 2 else 0) for i in range(4)]
        expected = (out, x.grad, layer.weight.grad, layer.bias.grad if bias else
                    layer.weight.grad)
        for got, want in zip(expected, joined, strict=True):
            assert m.allclose(got, want, rtol=1e-4, atol=1e-4)
        return expected
    assert_same_as_torch(program, **FLOAT32)


@pytest.mark.parametrize("groups", [24, 23, 25])
@pytest.mark.parametrize("dilation", [1, 2])
def test_depthwise_conv2d_weight_gradient(groups, dilation):
    """test_Conv2d_OneDNN: ones through a strided, padded depthwise layer, its weight grad."""
    def program(m):
        layer = m.nn.Conv2d(groups, groups, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1],
                            dilation=[dilation, dilation], groups=groups, bias=False)
        layer.weight.data = m.ones([groups, 1, 3, 3])
        out = layer(m.ones([1, groups, 6, 6]))
        out.backward(m.ones(out.shape))
        return out, layer.weight.grad
    assert_same_as_torch(program)


# -- torch.nn.grad against autograd: test_grad_conv*, test_functional_grad_conv(2d) ----------

@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("kernel, size", [(3, 6), (4, 9)])
@pytest.mark.parametrize("batch, stride, padding", [(1, 1, 0), (2, 2, 1), (1, 2, 2)])
def test_nn_grad_functions_equal_autograd(dims, kernel, size, batch, stride, padding):
    """run_grad_conv_test: F.grad.conv{d}d_input/_weight are autograd's gradients."""
    def program(m):
        x = _tensor(m, batch, 2, *[size] * dims, requires_grad=True)
        w = _tensor(m, 3, 2, *[kernel] * dims, seed=1, requires_grad=True)
        b = _tensor(m, 3, seed=2, requires_grad=True)
        options = {"stride": stride, "padding": padding, "dilation": 1}
        out = getattr(m.nn.functional, f"conv{dims}d")(x, w, bias=b, **options)
        grad_out = _tensor(m, *out.shape, seed=3)
        grad_x, grad_w = m.autograd.grad(out, (x, w), grad_out)
        by_input = getattr(m.nn.grad, f"conv{dims}d_input")(x.shape, w, grad_out, **options)
        by_weight = getattr(m.nn.functional.grad, f"conv{dims}d_weight")(x, w.shape, grad_out,
                                                                          **options)
        np.testing.assert_allclose(by_input.detach().numpy(), grad_x.numpy(), rtol=1e-12)
        np.testing.assert_allclose(by_weight.detach().numpy(), grad_w.numpy(), rtol=1e-12)
        return by_input, by_weight
    assert_same_as_torch(program, rtol=1e-10)


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("kernel", [1, 3, 5])
@pytest.mark.parametrize("groups", [1, 2, 4])
@pytest.mark.parametrize("dilation", [1, 2])
def test_nn_grad_conv2d_with_groups_and_dilation(stride, kernel, groups, dilation):
    """test_functional_grad_conv2d on a smaller image (8 x 8 instead of 32 x 32)."""
    def program(m):
        options = {"stride": stride, "padding": kernel // 2, "dilation": dilation,
                   "groups": groups}
        x = _tensor(m, 2, 8, 8, 8, dtype="float32")
        w = _tensor(m, 8, 8 // groups, kernel, kernel, dtype="float32", seed=1)
        out_shape = m.nn.functional.conv2d(x, w, **options).shape
        grad_out = _tensor(m, *out_shape, dtype="float32", seed=2)
        return (m.nn.grad.conv2d_input(x.shape, w, grad_out, **options),
                m.nn.grad.conv2d_weight(x, w.shape, grad_out, **options))
    assert_same_as_torch(program, **FLOAT32)


def test_nn_grad_is_differentiable_in_weight_and_grad_output():
    """torch's convolution_backward has a derivative: so do the nn.grad results."""
    def program(m):
        w = _tensor(m, 2, 3, 3, seed=1, requires_grad=True)
        grad_out = _tensor(m, 1, 2, 5, seed=2, requires_grad=True)
        x = _tensor(m, 1, 3, 7, seed=3, requires_grad=True)
        by_input = m.nn.grad.conv1d_input((1, 3, 7), w, grad_out, dilation=1)
        by_weight = m.nn.grad.conv1d_weight(x, (2, 3, 3), grad_out)
        assert by_input.requires_grad and by_weight.requires_grad
        return (by_input, by_weight,
                *m.autograd.grad((by_input ** 2).sum() + (by_weight ** 3).sum(), (w, grad_out, x)))
    assert_same_as_torch(program, rtol=1e-10)
    plain = gradkit.nn.grad.conv1d_input((1, 1, 5), gradkit.ones(1, 1, 3), gradkit.ones(1, 1, 3))
    assert not plain.requires_grad and plain.grad_fn is None
    np.testing.assert_array_equal(plain.numpy(), [[[1.0, 2.0, 3.0, 2.0, 1.0]]])  # closed form


# -- conv_tbc: test_conv_tbc ------------------------------------------------------------------

@pytest.mark.parametrize("time, kernel, pad", [(9, 3, 3), (9, 3, 0), (9, 3, -1), (2, 3, 0),
                                               (9, 12, 1), (0, 3, 1)])
def test_conv_tbc_values_and_gradients(time, kernel, pad):
    def program(m):
        x = _tensor(m, time, 4, 5, requires_grad=True)
        w = _tensor(m, kernel, 5, 6, seed=1, requires_grad=True)
        b = _tensor(m, 6, seed=2, requires_grad=True)
        out = m.conv_tbc(x, w, b, pad)
        assert type(out.grad_fn).__name__ == "ConvTbcBackward0"
        return (out, *m.autograd.grad(out, (x, w, b), _tensor(m, *out.shape, seed=3)))
    assert_same_as_torch(program, rtol=1e-10)
    if time == 9 and kernel == 3 and pad >= 0:
        assert gradcheck(lambda i, w, b: gradkit.nn.functional.conv_tbc(i, w, b, pad),
                         tuple(_leaves((time, 4, 5), (kernel, 5, 6), (6,))))
        assert gradgradcheck(lambda i, w, b: gradkit.conv_tbc(i, w, b, pad),
                             tuple(_leaves((time, 2, 3), (kernel, 3, 2), (2,))))


@pytest.mark.parametrize("program", [
    lambda m: m.conv_tbc(m.ones(9, 4), m.ones(3, 5, 6), m.ones(6)),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5), m.ones(6)),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6), m.ones(6, 1)),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 4, 6), m.ones(6)),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6), m.ones(5)),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6), m.ones(6), -5),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6, dtype=m.float64), m.ones(6)),
    lambda m: m.conv_tbc(m.ones(9, 4, 5, dtype=m.float64), m.ones(3, 5, 6, dtype=m.float64),
                         m.ones(6)),
    lambda m: m.nn.functional.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6), None),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6)),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6), m.ones(6), 1.5),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6), m.ones(6), pad=True),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6), m.ones(6), m.tensor(2)),
    lambda m: m.conv_tbc(m.ones(9, 4, 5), m.ones(3, 5, 6), m.ones(6), pad=m.tensor([2])),
], ids=["input rank", "weight rank", "bias rank", "channels", "bias size", "too short",
        "dtypes", "float32 bias", "None bias", "no bias", "float pad", "bool pad",
        "0-d integer tensor pad", "1-element tensor pad"])
def test_conv_tbc_errors_and_dtypes(program):
    assert_same_as_torch(program)


# -- double backward: run_conv_double_back_test ----------------------------------------------

DOUBLE_BACK = [  # (kernel, stride, padding, c_in, c_out, batch, size, dilation, groups, bias)
    (3, 2, 1, 2, 4, 2, 5, 1, 1, True),    # test_conv_double_backward_no_bias (bias as torch's)
    (3, 1, 2, 4, 8, 2, 6, 1, 2, True),    # test_conv_double_backward_groups
    (3, 2, 0, 1, 2, 2, 5, 1, 1, True),    # test_conv_double_backward_stride
    (3, 2, 1, 1, 2, 2, 5, 2, 1, True),
    (3, 2, 1, 1, 2, 2, 7, 1, 1, True),
    (3, 1, 2, 2, 3, 1, 5, 2, 1, False),   # test_conv_double_backward (CUDA) on the CPU
    (4, 1, 2, 2, 3, 1, 9, 1, 1, False),
]


@pytest.mark.parametrize("kernel, stride, padding, c_in, c_out, batch, size, dilation, "
                         "groups, bias", DOUBLE_BACK)
def test_conv_double_backward(kernel, stride, padding, c_in, c_out, batch, size, dilation,
                              groups, bias):
    shapes = [(batch, c_in, size, size), (c_out, c_in // groups, kernel, kernel)]
    shapes += [(c_out,)] if bias else []

    def conv(*leaves):
        return gradkit.nn.functional.conv2d(*leaves, *([None] if not bias else []), stride,
                                            padding, dilation, groups)
    leaves = _leaves(*shapes)
    grad_y = gradkit.tensor(_data(*conv(*leaves).shape, seed=9), requires_grad=True)
    assert gradgradcheck(conv, tuple(leaves), (grad_y,))

    def program(m):  # the second derivatives themselves, against torch's
        xs = [_tensor(m, *s, seed=i, requires_grad=True) for i, s in enumerate(shapes)]
        out = m.nn.functional.conv2d(*xs, *([None] if not bias else []), stride, padding,
                                     dilation, groups)
        first = m.autograd.grad((out ** 2).sum(), xs, create_graph=True)
        return (*first, *m.autograd.grad(sum((g ** 2).sum() for g in first), xs))
    assert_same_as_torch(program, rtol=1e-9, atol=1e-9)


def test_float32_double_backward_keeps_a_graph():
    """run_conv_double_back_test's float32 branch: the input gradient requires grad."""
    def program(m):
        x = _tensor(m, 2, 2, 5, 5, dtype="float32", requires_grad=True)
        w = _tensor(m, 3, 2, 3, 3, dtype="float32", seed=1, requires_grad=True)
        (g,) = m.autograd.grad(m.nn.functional.conv2d(x, w).sum(), x, create_graph=True)
        assert g.requires_grad
        return g
    assert_same_as_torch(program, **FLOAT32)


def test_double_backward_of_a_strided_1d_convolution_has_the_operands_shapes():
    """test_conv_double_backward_strided_with_3D_input_and_weight, through autograd: the
    gradients of a double backward have the shapes of grad_output, input and weight."""
    def program(m):
        x = _tensor(m, 2, 3, 6, requires_grad=True)
        w = _tensor(m, 3, 3, 3, seed=1, requires_grad=True)
        b = _tensor(m, 3, seed=2, requires_grad=True)
        out = m.convolution(x, w, b, (2,), (1,), (1,), False, (0,), 1)
        grad_out = _tensor(m, *out.shape, seed=3, requires_grad=True)
        gx, gw, gb = m.autograd.grad(out, (x, w, b), grad_out, create_graph=True)
        seeds = [_tensor(m, *t.shape, seed=4 + i) for i, t in enumerate((gx, gw, gb))]
        second = m.autograd.grad((gx, gw, gb), (grad_out, x, w), seeds)
        assert [tuple(t.shape) for t in second] == [tuple(grad_out.shape), (2, 3, 6), (3, 3, 3)]
        return second
    assert_same_as_torch(program, rtol=1e-10)


# -- 'same' and 'valid' padding gradients ----------------------------------------------------

SAME_BACKWARD = [  # (input, weight, explicit options, crop, dilation)
    ((1, 1, 12), (1, 1, 4), {"padding": 3, "dilation": 2}, (), 2),
    ((1, 1, 12), (1, 1, 4), {"padding": 2}, (slice(1, None),), 1),
    ((1, 1, 10, 11), (1, 1, 4, 5), {"padding": (3, 4), "dilation": 2}, (), 2),
    ((1, 1, 10, 11), (1, 1, 4, 4), {"padding": 2}, (slice(1, None), slice(1, None)), 1),
    ((1, 1, 1, 11, 12), (1, 1, 1, 2, 5), {"padding": (0, 1, 4), "dilation": 2}, (), 2),
    ((1, 1, 1, 11, 12), (1, 1, 1, 4, 4), {"padding": 2}, (slice(1, None), slice(1, None)), 1),
]


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64", "complex128"])
@pytest.mark.parametrize("x_shape, w_shape, explicit, crop, dilation", SAME_BACKWARD)
def test_same_padding_gradients(x_shape, w_shape, explicit, crop, dilation, dtype):
    """test_conv{1,2,3}d_same_padding_backward: gradients of |sum| through 'same' equal those
    through the explicit padding (cropped), and torch's."""
    name = f"conv{len(x_shape) - 2}d"

    def gradients(m, same):
        x = _tensor(m, *x_shape, dtype=dtype, requires_grad=True)
        w = _tensor(m, *w_shape, dtype=dtype, seed=1, requires_grad=True)
        conv = getattr(m.nn.functional, name)
        out = conv(x, w, padding="same", dilation=dilation) if same else \
            conv(x, w, **explicit)[(Ellipsis, *crop)]
        return m.autograd.grad(out.sum().abs(), (x, w))
    for got, want in zip(gradients(gradkit, True), gradients(gradkit, False), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    assert_same_as_torch(lambda m: gradients(m, True), **FLOAT32)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("padding, w_shape, dilation", [
    ("same", (1, 1, 1, 2, 5), 2), ("same", (1, 1, 1, 4, 4), 1), ("valid", (1, 1, 1, 1, 4), 1)])
def test_conv3d_padding_strings_gradcheck(padding, w_shape, dilation, dtype):
    """test_conv3d_same/valid_padding_backward: gradcheck with forward AD, gradgradcheck with
    forward-over-reverse."""
    x_shape = (1, 1, 1, 11, 12) if padding == "same" else (1, 1, 1, 1, 10)
    leaves = tuple(_leaves(x_shape, w_shape, dtype=dtype))

    def conv(x, w):
        return gradkit.nn.functional.conv3d(x, w, padding=padding, dilation=dilation)
    assert gradcheck(conv, leaves, check_forward_ad=True)
    assert gradgradcheck(conv, leaves, check_fwd_over_rev=True)


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_valid_padding_gradients(dims, dtype):
    """test_conv{1,2}d_valid_padding_backward."""
    def program(m):
        x = _tensor(m, *(1,) * dims, 1, 10, dtype=dtype, requires_grad=True)
        w = _tensor(m, *(1,) * dims, 1, 4, dtype=dtype, seed=1, requires_grad=True)
        conv = getattr(m.nn.functional, f"conv{dims}d")
        valid = m.autograd.grad(conv(x, w, padding="valid").sum().abs(), (x, w))
        plain = m.autograd.grad(conv(x, w, padding=0).sum().abs(), (x, w))
        for a, b in zip(valid, plain, strict=True):
            assert m.equal(a, b)
        return valid
    assert_same_as_torch(program, **FLOAT32)


# -- gradcheck of single cases: test_Conv2d_1x1, test_Conv2d_backward_depthwise --------------

def test_conv2d_1x1_gradcheck():
    x, w = _leaves((1, 2, 5, 5), (2, 2, 1, 1))
    assert gradcheck(gradkit.nn.functional.conv2d, (x, w))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_depthwise_conv2d_with_a_wide_stride_gradcheck(dtype):
    x, w = _leaves((2, 2, 4, 20), (2, 1, 3, 5), dtype=dtype)
    assert gradcheck(lambda x, w: gradkit.nn.functional.conv2d(x, w, None, stride=(1, 10),
                                                               groups=2), (x, w))


@pytest.mark.parametrize("name, dims", [("conv2d", 2), ("conv_transpose2d", 2),
                                        ("conv3d", 3), ("conv_transpose3d", 3)])
@pytest.mark.parametrize("stride, padding, dilation", [(2, 0, 1), (1, 1, 1), (2, 1, 1),
                                                       (1, 0, 2)])
def test_strided_padded_dilated_gradcheck(name, dims, stride, padding, dilation):
    """test_thnn_conv_strided_padded_dilated's CPU half (its CUDA half is out of scope)."""
    leaves = tuple(_leaves((1, 2) + (3,) * dims, (2, 2) + (1,) * dims, (2,)))
    options = {"stride": stride, "padding": padding, "dilation": dilation}
    assert gradcheck(lambda x, w, b: getattr(gradkit.nn.functional, name)(x, w, b, **options),
                     leaves)


# -- test_conv_backend: torch.convolution of the CPU backends (slow, dilated, empty) --------

BACKENDS = [  # (input shape, transposed, dilated, groups)
    ((2, 6, 7), False, False, 3), ((2, 6, 7), True, False, 3), ((2, 6, 7), False, True, 3),
    ((2, 6, 7), True, True, 3), ((2, 6, 7, 8), False, False, 3), ((2, 6, 7, 8), True, False, 3),
    ((2, 6, 7, 8), False, True, 3), ((2, 6, 7, 8), True, True, 3),
    ((2, 6, 5, 6, 5), False, False, 3), ((2, 6, 5, 6, 5), False, True, 3),
    ((0, 6, 7), False, False, 3), ((2, 0, 7), False, False, 3), ((0, 0, 7), False, False, 3),
    ((0, 6, 7, 8), False, False, 3), ((2, 0, 7, 8), False, False, 3),
    ((0, 6, 7, 8, 9), False, False, 3), ((2, 0, 7, 8, 9), False, False, 3),
]


def _backend_operands(m, shape, transposed, groups, bias, contiguous, dtype, out_channels=12):
    c_in, c_out, d = shape[1], out_channels, len(shape) - 2
    w_shape = ((c_in, c_out // groups) if transposed else (c_out, c_in // groups)) + (3,) * d
    operands = [_tensor(m, *shape, dtype=dtype), _tensor(m, *w_shape, dtype=dtype, seed=1),
                _tensor(m, c_out, dtype=dtype, seed=2) if bias else None]
    if not contiguous:  # torch's _make_noncontiguous: every other element of a repeat
        operands = [None if t is None else m.repeat_interleave(t, 2, dim=-1)[..., ::2]
                    for t in operands]
    return [None if t is None else t.detach().requires_grad_() for t in operands]


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("shape, transposed, dilated, groups", BACKENDS)
def test_convolution_backends(shape, transposed, dilated, groups, bias, strided, contiguous):
    """Forward and backward as torch's in float32, for torch's shapes."""
    options = _backend_options(len(shape) - 2, strided, dilated, transposed, groups)

    def program(m):
        operands = _backend_operands(m, shape, transposed, groups, bias, contiguous, "float32")
        out = m.convolution(*operands, *options)
        leaves = [t for t in operands if t is not None]
        return (out, *m.autograd.grad(out, leaves, _tensor(m, *out.shape, dtype="float32",
                                                           seed=3)))
    assert_same_as_torch(program, **FLOAT32)


def _backend_options(d, strided, dilated, transposed, groups):
    return [(2,) * d if strided else (1,) * d, (0,) * d, (2,) * d if dilated else (1,) * d,
            transposed, (0,) * d, groups]


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("shape, transposed, dilated, groups", BACKENDS)
def test_convolution_backends_gradcheck(shape, transposed, dilated, groups, strided):
    """The rest of test_conv_backend on smaller operands (3 channels, short sides, a
    non-contiguous input): forward AD past the empty backend, gradcheck, and gradgradcheck
    without the bias's gradient, in float64."""
    shape = shape[:2] + (6, 5, 5)[:len(shape) - 2]
    shape = (min(shape[0], 1), min(shape[1], 3)) + shape[2:]
    options = _backend_options(len(shape) - 2, strided, dilated, transposed, groups)
    operands = _backend_operands(gradkit, shape, transposed, groups, True, False, "float64",
                                 out_channels=3)
    if shape[0] and shape[1]:
        fw = gradkit.autograd.forward_ad
        with fw.dual_level():
            duals = [fw.make_dual(t, gradkit.rand_like(t)) for t in operands]
            assert fw.unpack_dual(gradkit.convolution(*duals, *options)).tangent is not None
    assert gradcheck(lambda *leaves: gradkit.convolution(*leaves, *options), tuple(operands))
    operands[2].requires_grad_(False)
    assert gradgradcheck(lambda *leaves: gradkit.convolution(*leaves, *options),
                         tuple(operands))


# -- a non-contiguous gradient: test_noncontig_conv_grad on the CPU ---------------------------

def test_noncontiguous_grad_output():
    def program(m):
        layer = _copy_parameters(m, m.nn.Conv2d(3, 5, kernel_size=3, padding=1).double(),
                                 "float64")
        x = _tensor(m, 2, 3, 6, 6, requires_grad=True)
        out = layer(x)
        grad = _tensor(m, 2, 2, 5, 6, 6, seed=4)[:, 1]
        assert not grad.is_contiguous()
        out.backward(grad, retain_graph=True)
        strided = x.grad.clone()
        x.grad = None
        out.backward(grad.contiguous())
        assert m.allclose(strided, x.grad, rtol=0, atol=1e-12)
        return strided
    assert_same_as_torch(program, rtol=1e-10)


# -- float16: torch's CPU kernels sum in float32 and round once -------------------------------

@pytest.mark.parametrize("name, shapes, options", [
    ("conv2d", [(1, 16, 8, 8), (4, 16, 3, 3), (4,)], {"padding": 1}),
    ("conv2d", [(2, 8, 8, 8), (4, 4, 3, 3), (4,)], {"padding": 1, "dilation": 2, "groups": 2}),
    ("conv1d", [(2, 8, 9), (4, 8, 3), (4,)], {"stride": 2}),
    ("conv3d", [(1, 4, 5, 5, 5), (2, 4, 3, 3, 3), (2,)], {}),
    ("conv_transpose2d", [(1, 16, 6, 6), (16, 4, 3, 3), (4,)], {"stride": 2}),
    ("conv_transpose1d", [(1, 16, 6), (16, 4, 3), (4,)], {"stride": 2, "padding": 1}),
    ("conv_transpose3d", [(1, 4, 3, 3, 3), (4, 2, 3, 3, 3), (2,)], {"stride": 2}),
])
def test_float16_convolutions_round_once(name, shapes, options):
    """Output and gradients are float32 sums rounded once to float16, as torch's: equal to
    torch's but where float32 rounding lands on the other side of a float16 tie (at most one
    element in a hundred, one ulp). gradkit summed in float16 and was off in a quarter of the
    elements, by up to several ulps."""
    def program(m, dtype="half"):
        leaves = [getattr(_tensor(m, *s, seed=i).half(), dtype)().requires_grad_()
                  for i, s in enumerate(shapes)]
        out = getattr(m.nn.functional, name)(*leaves, **options)
        grad_out = getattr(m.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape)).half(),
                           dtype)()
        return (out, *m.autograd.grad(out, leaves, grad_out))
    # torch's float16 kernels round once on AVX-512 CPUs; on others (AVX2) some round along
    # the way: there only a tolerance of their steps' rounding holds (a few ulps of the
    # largest element, for sums of elements of other signs)
    in_float32 = [t.half() for t in program(torch, "float")]
    for got, want, once in zip(program(gradkit), program(torch), in_float32, strict=True):
        assert str(got.dtype) == "gradkit.float16" and got.shape == tuple(want.shape)
        rounds_once = torch.equal(want, once)
        got, want = got.double().detach().numpy(), want.double().detach().numpy()
        assert not rounds_once or (got != want).sum() <= max(1, got.size // 100)
        np.testing.assert_allclose(got, want, rtol=1e-3,
                                   atol=2e-6 if rounds_once else 2e-3 * np.abs(want).max())
