"""gradkit.nn.functional: torch's error messages, node names, dropout, and a small CNN."""
import numpy as np
import pytest

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - torch's convention


def R(*shape, requires_grad=False):
    return gradkit.tensor(np.random.standard_normal(shape), dtype=gradkit.float64,
                          requires_grad=requires_grad)


def L(values):
    return gradkit.tensor(values, dtype=gradkit.int64)


# -- errors, in torch's words ------------------------------------------------------------------

@pytest.mark.parametrize("call,error,message", [
    (lambda: F.conv2d(R(2, 4, 8, 8), R(8, 3, 3, 3)), RuntimeError,
     r"Given groups=1, weight of size \[8, 3, 3, 3\], expected input\[2, 4, 8, 8\] to have 3 "
     r"channels, but got 4 channels instead"),
    (lambda: F.conv2d(R(2, 3), R(8, 3, 3, 3)), RuntimeError,
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: "
     r"\[2, 3\]"),
    (lambda: F.conv2d(R(2, 3, 4, 4), R(8, 3, 5, 5)), RuntimeError,
     r"Calculated padded input size per channel: \(4 x 4\). Kernel size: \(5 x 5\). Kernel size "
     r"can't be greater than actual input size"),
    (lambda: F.conv2d(R(2, 4, 4, 4), R(3, 2, 3, 3), groups=2), RuntimeError,
     r"Given groups=2, expected weight to be divisible by 2 at dimension 0"),
    (lambda: F.conv2d(R(2, 4, 4, 4), R(4, 2, 3, 3), R(3), groups=2), RuntimeError,
     r"expected bias to be 1-dimensional with 4 elements, but got bias of size \[3\]"),
    (lambda: F.conv2d(R(1, 1, 4, 4), R(1, 1, 3, 3), stride=0), RuntimeError,
     "non-positive stride is not supported"),
    (lambda: F.conv2d(R(1, 1, 4, 4), R(1, 1, 3, 3), padding=-1), RuntimeError,
     "negative padding is not supported"),
    (lambda: F.conv2d(R(1, 1, 4, 4), R(1, 1, 3, 3), padding="same", stride=2), RuntimeError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.max_pool2d(R(1, 1, 4, 4), 3, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and "
     "dilation=1"),
    (lambda: F.max_pool2d(R(1, 1, 2, 2), 3), RuntimeError,
     r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\). Output size is too small"),
    (lambda: F.max_pool2d(R(1, 2), 3), RuntimeError,
     r"non-empty 3D or 4D \(batch mode\) tensor expected for input"),
    (lambda: F.cross_entropy(R(3, 5), L([1, 2])), ValueError,
     r"Expected input batch_size \(3\) to match target batch_size \(2\)."),
    (lambda: F.cross_entropy(R(3, 5), L([1, 2, 7])), IndexError, "Target 7 is out of bounds."),
    (lambda: F.cross_entropy(R(3, 5), R(3, 4)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: F.cross_entropy(R(3, 5), R(3, 5), ignore_index=1), RuntimeError,
     "ignore_index is not supported for floating point target"),
    (lambda: F.cross_entropy(R(3, 5), L([1, 2, 3]), reduction="foo"), ValueError,
     "foo is not a valid value for reduction"),
    (lambda: F.cross_entropy(R(3, 5), L([1, 2, 3]), label_smoothing=1.5), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda: F.nll_loss(R(3, 5), R(3)), RuntimeError,
     "expected target dtype to be Long or Byte, but got Double"),
    (lambda: F.nll_loss(R(3, 5, 2), L([[1, 2], [3, 4], [0, 0], [1, 1]])), ValueError,
     r"Expected input batch_size \(3\) to match target batch_size \(4\)."),
    (lambda: F.nll_loss(R(3, 5, 2), L([1, 2, 3])), RuntimeError,
     r"Expected target size \[3, 2\], got \[3\]"),  # torch 2.13's words
    (lambda: F.nll_loss(R(3, 5), L([1, 2, 3]), weight=R(4)), RuntimeError,
     r"weight tensor should be defined either for all 5 classes or no classes but got weight "
     r"tensor of shape: \[4\]"),
    (lambda: F.binary_cross_entropy_with_logits(R(3, 1), R(3)), ValueError,
     r"Target size \(gradkit.Size\(\[3\]\)\) must be the same as input size "
     r"\(gradkit.Size\(\[3, 1\]\)\)"),
    (lambda: F.dropout(R(3), 1.5), ValueError,
     "dropout probability has to be between 0 and 1, but got 1.5"),
    (lambda: F.layer_norm(R(2, 3), (4,)), RuntimeError,
     r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got input of "
     r"size\[2, 3\]"),
    (lambda: F.layer_norm(R(2, 3), (3,), R(4)), RuntimeError,
     r"Expected weight to be of same shape as normalized_shape, but got weight of shape \[4\] "
     r"and normalized_shape = \[3\]"),
    (lambda: F.embedding(L([5]), R(3, 2)), IndexError, "index out of range in self"),
    (lambda: F.embedding(R(1), R(3, 2)), RuntimeError,
     "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
     "Long, Int"),
    (lambda: F.embedding(L([1]), R(3, 2), padding_idx=4), AssertionError,
     "Padding_idx must be within num_embeddings"),
    (lambda: F.linear(R(2, 3), R(4, 2)), RuntimeError,
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x4\)"),
    (lambda: F.linear(R(2, 3).float(), R(4, 3)), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda: F.conv2d(R(1, 1, 3, 3).float(), R(1, 1, 2, 2)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: F.conv2d(R(1, 1, 3, 3), R(1, 1, 2, 2), R(1).float()), RuntimeError,
     r"Input type \(double\) and bias type \(float\) should be the same"),
])
def test_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_mse_loss_warns_about_broadcasting_like_torch():
    with pytest.warns(UserWarning, match=r"Using a target size \(gradkit.Size\(\[3\]\)\) that is "
                                         r"different to the input size"):
        F.mse_loss(R(3, 1), R(3))


# -- graph node names --------------------------------------------------------------------------

def test_node_names_follow_torch():
    x = R(2, 3, requires_grad=True)
    w = R(4, 3, requires_grad=True)
    assert F.linear(x, w, R(4)).grad_fn.name() == "AddmmBackward0"
    assert F.linear(x, w).grad_fn.name() == "MmBackward0"
    assert F.linear(R(5, 2, 3, requires_grad=True), w).grad_fn.name() == "UnsafeViewBackward0"
    image = R(1, 1, 4, 4, requires_grad=True)
    assert F.conv2d(image, R(1, 1, 2, 2)).grad_fn.name() == "ConvolutionBackward0"
    assert F.max_pool2d(image, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F.layer_norm(x, (3,)).grad_fn.name() == "NativeLayerNormBackward0"
    assert F.embedding(L([1]), w).grad_fn.name() == "EmbeddingBackward0"
    logits = R(3, 4, requires_grad=True)
    loss = F.cross_entropy(logits, L([0, 3, 1]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    assert F.mse_loss(logits, R(3, 4)).grad_fn.name() == "MseLossBackward0"


# -- dropout -----------------------------------------------------------------------------------

def test_dropout_scales_kept_elements_and_is_reproducible():
    x = gradkit.ones(10000, dtype=gradkit.float64, requires_grad=True)
    gradkit.manual_seed(3)
    y = F.dropout(x, 0.25)
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75)
    assert abs(kept.mean() - 0.75) < 0.02  # 5 sigma of a binomial(10000, 0.75) fraction
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), kept / 0.75)
    gradkit.manual_seed(3)
    np.testing.assert_array_equal(F.dropout(x, 0.25).detach().numpy(), y.detach().numpy())


def test_dropout_off_when_not_training_and_all_zero_at_p_1():
    x = R(5)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 1.0).tolist() == [0.0] * 5


def test_dropout_inplace_writes_into_its_input():
    x = gradkit.ones(6)
    version = x._version
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x and x._version == version + 1
    assert set(x.tolist()) <= {0.0, 2.0}


# -- activations and friends re-exported with torch's signatures ------------------------------

def test_reexports_behave_like_torch():
    torch = pytest.importorskip("torch")
    a = np.random.standard_normal((2, 3))
    x, t = gradkit.tensor(a), torch.tensor(a)
    tf = torch.nn.functional
    pairs = [(F.relu(x), tf.relu(t)),
             (F.gelu(x, approximate="tanh"), tf.gelu(t, approximate="tanh")),
             (F.silu(x), tf.silu(t)), (F.softplus(x, beta=2.0), tf.softplus(t, beta=2.0)),
             (F.sigmoid(x), tf.sigmoid(t)), (F.tanh(x), tf.tanh(t)),
             (F.softmax(x, dim=0), tf.softmax(t, dim=0)),
             (F.log_softmax(x, 1), tf.log_softmax(t, 1)), (F.logsigmoid(x), tf.logsigmoid(t)),
             (F.pad(x, (1, 1), value=2.0), tf.pad(t, (1, 1), value=2.0)),
             (F.elu(x), tf.elu(t)), (F.leaky_relu(x, 0.2), tf.leaky_relu(t, 0.2))]
    for got, expected in pairs:
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-15)


def test_relu_inplace_and_softmax_implicit_dim_warning():
    x = gradkit.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        F.softmax(gradkit.ones(2, 3))


# -- a small CNN on 8x8 images -----------------------------------------------------------------

def test_small_cnn_learns_to_separate_two_patterns():
    """conv -> relu -> max_pool -> linear -> cross_entropy, trained with plain SGD."""
    rng = np.random.default_rng(0)
    images = rng.standard_normal((32, 1, 8, 8)) * 0.3
    labels = np.arange(32) % 2
    images[labels == 0, :, :, :4] += 1.0   # class 0: bright left half
    images[labels == 1, :, :4, :] += 1.0   # class 1: bright top half
    x = gradkit.tensor(images, dtype=gradkit.float32)
    y = gradkit.tensor(labels)
    gradkit.manual_seed(0)
    conv_w = (gradkit.randn(4, 1, 3, 3) * 0.3).requires_grad_()
    conv_b = gradkit.zeros(4, requires_grad=True)
    fc_w = (gradkit.randn(2, 4 * 4 * 4) * 0.1).requires_grad_()
    fc_b = gradkit.zeros(2, requires_grad=True)
    params = [conv_w, conv_b, fc_w, fc_b]
    losses = []
    for _ in range(30):
        h = F.max_pool2d(F.relu(F.conv2d(x, conv_w, conv_b, padding=1)), 2)
        loss = F.cross_entropy(F.linear(h.reshape(32, -1), fc_w, fc_b), y)
        for p in params:
            p.grad = None
        loss.backward()
        with gradkit.no_grad():
            for p in params:
                p -= 0.2 * p.grad
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]
    assert loss.dtype == gradkit.float32
