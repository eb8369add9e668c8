"""torch's test_nn.py (characters 320k-480k): padding (F.pad, constant_pad_nd, the Replication
and Reflection layers), empty inputs of convolutions and transformers, conv-bn fusion and
the unpooling nets, each program run under gradkit and torch 2.13."""
import numpy as np
import pytest

from tests.nn_torch_programs import filled, grads, leaf
from tests.tensor_twins import data, same_as_torch


def test_constant_pad_nd():
    got = same_as_torch(lambda m: m.constant_pad_nd(m.tensor([[1, 2], [3, 4]]), [1, 2, 1, 0], 9))
    assert got[3].tolist() == [[9, 9, 9, 9, 9], [9, 1, 2, 9, 9], [9, 3, 4, 9, 9]]


def test_constant_pad_nd_preserves_memory_format():
    def program(m):
        nchw = m.tensor(data(1, 2, 5, 3), dtype=m.float32)
        nhwc = nchw.contiguous(memory_format=m.channels_last)
        padded, padded_cl = (m.constant_pad_nd(t, [1, 2], 0.5) for t in (nchw, nhwc))
        return (padded, padded.is_contiguous(), padded_cl,
                padded_cl.is_contiguous(memory_format=m.channels_last))
    got = same_as_torch(program)
    assert got[1] is True and got[3] is True


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("pad, mode", [((5, 4), "circular"), ((3, 6), "circular"),
                                       ((-3, -2), "circular")])
def test_pad_circular_errors(dtype, pad, mode):
    got = same_as_torch(lambda m: m.nn.functional.pad(
        m.ones(1, 1, 4, dtype=getattr(m, dtype), requires_grad=True), pad, mode=mode))
    assert got[:2] == ("raises", "RuntimeError")


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("shape, pad", [((1, 1, 2, 3), (1, 1, 3, 0)), ((1, 1, 2), (2, 1))])
def test_pad_reflect_errors(dtype, shape, pad):
    got = same_as_torch(lambda m: m.nn.functional.pad(m.ones(*shape, dtype=getattr(m, dtype)),
                                                      pad, mode="reflect"))
    assert got[0] == "raises" and "Padding size should be less than" in got[2]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(0, 0, 0, 0), (0, 0, -1, -1)])
def test_pad_does_not_return_a_view(mode, pad):
    def program(m):
        inputs = m.tensor(np.abs(data(1, 3, 4, 4)) % 1.5)
        out = m.nn.functional.pad(inputs, pad, mode=mode)
        out.fill_(4)
        return inputs, out
    got = same_as_torch(program)
    assert (np.abs(got[0][3]) < 2).all()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("kind", ["Replication", "Reflection"])
def test_padding_layers_empty_batch(kind, dtype):
    def program(m):
        out = []
        for d, pad in ((1, 3), (2, 3), (3, 3)):
            x = m.zeros(0, 3, *[10] * d, dtype=getattr(m, dtype), requires_grad=True)
            y = getattr(m.nn, f"{kind}Pad{d}d")(pad)(x)
            out += [y.shape, grads(m, y.sum().abs(), [x])[0].shape]
        return out
    same_as_torch(program)


@pytest.mark.parametrize("kind", ["Replication", "Reflection"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_padding_layers_refuse_an_empty_channel(kind, d):
    got = same_as_torch(lambda m: getattr(m.nn, f"{kind}Pad{d}d")(2)(
        m.ones(3, 0, *[10] * d)))
    assert got[0] == "raises" and f"{d + 1}D or {d + 2}D" in got[2]


@pytest.mark.parametrize("d", [1, 2, 3])
def test_reflection_pad_fails_on_too_many_dims(d):
    """torch 2.13's words (newer torch says "Only 2D, 3D, 4D, 5D")."""
    got = same_as_torch(lambda m: getattr(m.nn, f"ReflectionPad{d}d")(2)(
        m.ones(*[3] * (d + 3))))
    assert got[:2] == ("raises", "NotImplementedError") and "is not supported for" in got[2]


@pytest.mark.parametrize("shape, pad", [((2, 6, 4), (3, 4)), ((6, 2, 4), (3, 4)),
                                        ((2, 6, 4, 4), (3, 4, 5, 6)),
                                        ((1, 6, 2, 2, 2), (3, 4, 5, 6, 7, 8))])
def test_replication_pad_edges_and_gradient(shape, pad):
    """torch's test_ReplicationPad*d_large at a small size: the edges repeat the border, the
    border's gradient sums what its copies received."""
    def program(m):
        x = leaf(m, *shape)
        out = getattr(m.nn, f"ReplicationPad{len(shape) - 2}d")(pad)(x)
        return out, grads(m, out, [x])
    got = same_as_torch(program)
    out, grad = got[0][3], got[1][0][3]
    pl, pr = pad[:2]
    np.testing.assert_array_equal(out[..., :pl], np.repeat(out[..., pl:pl + 1], pl, -1))
    np.testing.assert_array_equal(out[..., -pr:], np.repeat(out[..., -pr - 1:-pr], pr, -1))
    assert grad.shape == shape


def test_conv_empty_input():
    def program(m):
        out = []
        for d, fmt in ((2, m.channels_last), (3, m.channels_last_3d)):
            x = m.zeros(0, 4, *[6] * d, dtype=m.float64)
            conv = filled(getattr(m.nn, f"Conv{d}d")(4, 4, 3, 1).double(), m)
            ref = conv(x)
            conv_cl = conv.to(memory_format=fmt)
            out += [ref, conv_cl(x), conv(x.to(memory_format=fmt)),
                    conv_cl(x.to(memory_format=fmt))]
        weight = m.tensor(data(4, 8, 3, 3), dtype=m.float64)[:, ::2, :, :]
        bias = m.tensor(data(4, seed=1))
        x = m.zeros(0, 4, 6, 6, dtype=m.float64)
        out += [m.nn.functional.conv2d(x, weight, bias, (1, 1), 0, (1, 1), 1),
                m.nn.functional.conv2d(x, weight.contiguous(), bias, (1, 1), 0, (1, 1), 1)]
        return out
    same_as_torch(program)


def test_module_channel_last_conversion_keeps_values():
    def program(m):
        conv = filled(m.nn.Conv2d(3, 4, 3).double(), m).to(memory_format=m.channels_last)
        return conv.weight.is_contiguous(memory_format=m.channels_last), conv.weight
    assert same_as_torch(program)[0] is True


@pytest.mark.parametrize("affine", [True, False])
def test_fuse_conv_bn_eval_numerics(affine):
    def program(m):
        x = m.tensor(data(5, 3, 5, 5))
        conv = filled(m.nn.Conv2d(3, 6, bias=True, kernel_size=(3, 3)).double(), m).eval()
        bn = filled(m.nn.BatchNorm2d(6, affine=affine).double(), m, seed=10).eval()
        fused = m.nn.utils.fusion.fuse_conv_bn_eval(conv, bn)
        return bn(conv(x)), fused(x)
    got = same_as_torch(program)
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("d, shape", [(1, (1, 1, 4)), (2, (1, 1, 2, 4)), (3, (1, 1, 2, 4, 6)),
                                      (1, (1, 4)), (2, (1, 2, 4)), (3, (1, 2, 4, 6))])
def test_max_unpool_nets(d, shape):
    """torch's MaxUnpool{1,2,3}d_net tests: pool with indices, unpool, gradcheck."""
    def program(m):
        pool = getattr(m.nn, f"MaxPool{d}d")(2, return_indices=True)
        unpool = getattr(m.nn, f"MaxUnpool{d}d")(2)
        x = leaf(m, *shape)
        out = unpool(*pool(x))
        return out, grads(m, out, [x]), m.autograd.gradcheck(lambda t: unpool(*pool(t)), (x,))
    assert same_as_torch(program)[2] is True


def test_adaptive_log_softmax_module_test():
    """torch's AdaptiveLogSoftmax NewModuleTest: the output of fixed targets, its gradients."""
    def program(m):
        asfm = filled(m.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [2, 6]).double(), m)
        x = leaf(m, 4, 16)
        out = asfm(x, m.tensor([0, 1, 4, 8])).output
        return out, grads(m, out, [x] + list(asfm.parameters())), m.autograd.gradcheck(
            lambda t: asfm(t, m.tensor([0, 1, 4, 8])).output, (x,))
    assert same_as_torch(program)[2] is True


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_transformer_encoder_layer_empty(batch_first, training):
    def program(m):
        shape = (0, 10, 16) if batch_first else (10, 0, 16)
        layer = m.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32,
                                             batch_first=batch_first, dtype=m.double)
        filled(layer, m).train(training)
        x = m.zeros(*shape, dtype=m.double, requires_grad=training)
        out = layer(x)
        if not training:
            return out
        encoder = m.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        out2 = encoder(x)
        return out, grads(m, out, [x]), out2, grads(m, out2, [x])
    same_as_torch(program)


@pytest.mark.parametrize("batch_first", [True, False])
def test_transformer_decoder_layer_empty(batch_first):
    def program(m):
        memory = m.zeros(*((0, 10, 16) if batch_first else (10, 0, 16)), dtype=m.double)
        tgt = m.zeros(*((0, 20, 16) if batch_first else (20, 0, 16)), dtype=m.double,
                      requires_grad=True)
        layer = filled(m.nn.TransformerDecoderLayer(d_model=16, nhead=4, dim_feedforward=32,
                                                    batch_first=batch_first, dtype=m.double), m)
        decoder = m.nn.TransformerDecoder(layer, num_layers=2)
        out, out2 = layer(tgt, memory), decoder(tgt, memory)
        return (out, grads(m, out, [tgt] + list(layer.parameters())), out2,
                grads(m, out2, [tgt]))
    same_as_torch(program)


def test_transformer_empty():
    def program(m):
        model = filled(m.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2,
                                        num_decoder_layers=2, dim_feedforward=32,
                                        dtype=m.double), m)
        src = m.zeros(10, 0, 16, dtype=m.double, requires_grad=True)
        tgt = m.zeros(20, 0, 16, dtype=m.double, requires_grad=True)
        out = model(src, tgt)
        return out, grads(m, out, [src, tgt])
    same_as_torch(program)
