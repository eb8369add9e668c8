"""F.linear_cross_entropy, nn.LinearCrossEntropyLoss and nn.LinearCrossEntropyOptions (torch
2.13), each program run under gradkit and torch."""

import warnings

import numpy as np
import pytest

import gradkit
from tests.tensor_twins import data, same_as_torch

CLASS_WEIGHT = np.abs(data(5, seed=3))
OPTIONS = {
    "none": {},
    "sum": {"reduction": "sum"},
    "each": {"reduction": "none"},
    "ignore": {"ignore_index": 2},
    "smooth": {"label_smoothing": 0.3},
    "weight": {"weight": CLASS_WEIGHT},
    "all": {"weight": CLASS_WEIGHT, "label_smoothing": 0.2, "ignore_index": 4},
    "bias": {"linear_bias": data(5, seed=4)},
}


def _tensors(m, options: dict) -> dict:
    return {k: m.tensor(v, requires_grad=k == "linear_bias") if isinstance(v, np.ndarray) else v
            for k, v in options.items()}


@pytest.mark.parametrize("name", OPTIONS)
def test_values_gradients_and_second_gradients_as_torch(name):
    """The loss, its gradients through input, linear weight and bias, and a second derivative."""
    def program(m):
        x = m.tensor(data(4, 3, seed=1), requires_grad=True)
        w = m.tensor(data(5, 3, seed=2), requires_grad=True)
        kwargs = _tensors(m, OPTIONS[name])
        loss = m.nn.functional.linear_cross_entropy(x, w, m.tensor([0, 4, 2, 1]), **kwargs)
        inputs = [x, w] + [v for v in kwargs.values() if getattr(v, "requires_grad", False)]
        grads = m.autograd.grad(loss.sum(), inputs, create_graph=True)
        second = m.autograd.grad(sum((g * g).sum() for g in grads), [x, w])
        return loss, grads, second
    same_as_torch(program)


def test_k_dimensional_loss_and_probabilities_as_torch():
    """A (C, d1, in) weight gives a (N, d1) loss; a target shaped as the logits is read as
    probabilities; an unbatched input gives one number."""
    def program(m):
        F = m.nn.functional  # noqa: N806
        x = m.tensor(data(4, 3, seed=1), requires_grad=True)
        w = m.tensor(data(5, 2, 3, seed=2), requires_grad=True)
        b = m.tensor(data(5, 2, seed=4), requires_grad=True)
        target = m.tensor([[0, 1], [4, 2], [3, 3], [1, 0]])
        each = F.linear_cross_entropy(x, w, target, linear_bias=b, reduction="none")
        probabilities = m.tensor(data(4, 5, 2, seed=5)).softmax(1)
        soft = F.linear_cross_entropy(x, w, probabilities)
        flat_w = m.tensor(data(5, 3, seed=6))
        one = F.linear_cross_entropy(x[0], flat_w, m.tensor(3))
        one_soft = F.linear_cross_entropy(x[0], flat_w, m.tensor(data(5, seed=7)).softmax(0))
        return each, m.autograd.grad(each.sum() + soft, [x, w, b]), soft, one, one_soft
    same_as_torch(program)


ERRORS = {
    "input3d": lambda m, x, w: m.nn.functional.linear_cross_entropy(x.reshape(2, 2, 3), w,
                                                                    m.tensor([0, 1])),
    "weight1d": lambda m, x, w: m.nn.functional.linear_cross_entropy(x, w[0], m.tensor([0])),
    "in_features": lambda m, x, w: m.nn.functional.linear_cross_entropy(x, w[:, :2],
                                                                        m.tensor([0])),
    "bias": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor([0, 1, 2, 3]), linear_bias=m.zeros(4, dtype=m.float64)),
    "unbatched_k": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x[0], w.reshape(5, 1, 3), m.tensor([0])),
    "probabilities_ignore": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.zeros(4, 5, dtype=m.float64), ignore_index=1),
    "reduction": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor([0, 1, 2, 3]), reduction="avg"),
    "positional": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor([0, 1, 2, 3]), None),
    "module_weight": lambda m, x, w: m.nn.LinearCrossEntropyLoss(3, 5, weight=m.ones(4)),
    "module_smoothing": lambda m, x, w: m.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=1.5),
    "module_negative_smoothing": lambda m, x, w: m.nn.LinearCrossEntropyLoss(
        3, 5, label_smoothing=-0.5),
    "module_positional": lambda m, x, w: m.nn.LinearCrossEntropyLoss(3, 5, (2,)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_torch(name):
    same_as_torch(lambda m: ERRORS[name](m, m.tensor(data(4, 3)), m.tensor(data(5, 3))))


def test_error_messages():
    x, w = gradkit.zeros(4, 3), gradkit.zeros(5, 2, 3)
    with pytest.raises(RuntimeError, match=r"requires batched input, \(N, 3\), got unbatched"):
        gradkit.nn.functional.linear_cross_entropy(x[0], w, gradkit.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"expected linear_bias shape \(5, 2\), got \(5,\)"):
        gradkit.nn.functional.linear_cross_entropy(x, w, gradkit.zeros(4, 2, dtype=gradkit.int64),
                                                   linear_bias=gradkit.zeros(5))


BAD_OPTIONS = [{"acc_policy": "x"}, {"chunking_method": "foo"},
               {"chunking_method": "aspect_ratio:0"}, {"batch_chunk_size": 0},
               {"batch_chunk_size": 1.5}, {"acc_dtype": "int64"}]


@pytest.mark.parametrize("bad", BAD_OPTIONS, ids=str)
def test_options_validated_as_torch(bad):
    def program(m):
        kwargs = {k: getattr(m, v) if k == "acc_dtype" else v for k, v in bad.items()}
        return m.nn.LinearCrossEntropyOptions(**kwargs).acc_policy
    same_as_torch(program)


@pytest.mark.parametrize("case", ["smoothing", "k_dim", "supported"])
def test_options_warn_where_torch_ignores_them(case):
    """torch warns (and computes the reference path) where its chunked kernel cannot go; with
    options it can take, the loss is the same."""
    def program(m):
        F, options = m.nn.functional, m.nn.LinearCrossEntropyOptions(batch_chunk_size=2)  # noqa: N806
        x, target = m.tensor(data(4, 3, seed=1), requires_grad=True), m.tensor([0, 4, 2, 1])
        if case == "smoothing":
            loss = F.linear_cross_entropy(x, m.tensor(data(5, 3)), target, label_smoothing=0.1,
                                          options=options)
        elif case == "k_dim":
            loss = F.linear_cross_entropy(x, m.tensor(data(5, 1, 3)), target.reshape(4, 1),
                                          options=options)
        else:
            loss = F.linear_cross_entropy(x, m.tensor(data(5, 3)), target, options=options)
        return loss, m.autograd.grad(loss, x)
    same_as_torch(program)


def test_options_warning_text():
    options = gradkit.nn.LinearCrossEntropyOptions()
    with pytest.warns(UserWarning, match=r"``options`` ignored; chunked path needs .* Got "
                      r"reduction='mean', label_smoothing=0.1"):
        gradkit.nn.functional.linear_cross_entropy(
            gradkit.zeros(2, 3), gradkit.zeros(4, 3), gradkit.tensor([0, 1]), options=options,
            label_smoothing=0.1)


def test_options_take_a_second_backward_known():
    """Known: torch's chunked path (options given) refuses a second backward and create_graph;
    gradkit has no chunked kernel, so the reference path's graph takes both."""
    x = gradkit.tensor(data(4, 3), requires_grad=True)
    w = gradkit.tensor(data(5, 3, seed=1))
    options = gradkit.nn.LinearCrossEntropyOptions()
    loss = gradkit.nn.functional.linear_cross_entropy(x, w, gradkit.tensor([0, 1, 2, 3]),
                                                      options=options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # options torch's chunked path takes: no warning
        (g,) = gradkit.autograd.grad(loss, x, create_graph=True)
    loss.backward()
    assert g.grad_fn is not None
    np.testing.assert_allclose(x.grad.numpy(), g.detach().numpy())


def test_module_as_torch():
    """The module's parameters (stored flat), buffers, repr, loss and gradients."""
    def program(m):
        m.manual_seed(0)
        loss_fn = m.nn.LinearCrossEntropyLoss(
            3, 5, out_features=(2,), bias=True, dtype=m.float64,
            weight=m.tensor(CLASS_WEIGHT), label_smoothing=0.1)
        with m.no_grad():
            loss_fn.linear.weight.copy_(m.tensor(data(10, 3, seed=2)))
            loss_fn.linear.bias.copy_(m.tensor(data(10, seed=4)))
        loss = loss_fn(m.tensor(data(4, 3, seed=1)), m.tensor([[0, 1], [4, 2], [3, 3], [1, 0]]))
        loss.backward()
        return (repr(loss_fn), list(loss_fn.state_dict()), loss, loss_fn.linear.weight.grad,
                loss_fn.linear.bias.grad, m.nn.LinearCrossEntropyLoss(3, 5).linear.bias)
    same_as_torch(program)


def test_all_targets_ignored_as_torch():
    """torch's test_all_targets_ignored (test/nn/test_linear_cross_entropy.py, its older
    chunking_strategy API): mean is NaN, sum 0, none zeros; with options too."""
    def program(m):
        x, w, b = (m.tensor(data(*s, seed=i)) for i, s in enumerate([(16, 4), (8, 4), (8,)]))
        target = m.full((16,), -1, dtype=m.int64)
        return [m.nn.functional.linear_cross_entropy(
            x, w, target, linear_bias=b, reduction=r, ignore_index=-1, options=o)
            for r in ("mean", "sum", "none") for o in (None, m.nn.LinearCrossEntropyOptions())]
    same_as_torch(program)


def test_gradcheck_and_gradgradcheck():
    """torch's test_gradcheck, with gradgradcheck (the reference path is twice differentiable)."""
    x, w, b = (gradkit.tensor(data(*s, seed=i), requires_grad=True)
               for i, s in enumerate([(3, 5), (20, 5), (20,)]))
    target = gradkit.tensor([3, 19, 0])

    def loss(x, w, b):
        return gradkit.nn.functional.linear_cross_entropy(x, w, target, linear_bias=b,
                                                          label_smoothing=0.1)
    assert gradkit.autograd.gradcheck(loss, (x, w, b))
    assert gradkit.autograd.gradgradcheck(loss, (x, w, b))


TARGET_CALLS = {
    "nll": lambda f, x, t: f.nll_loss(x, t),
    "cross_entropy": lambda f, x, t: f.cross_entropy(x, t),
    "unbatched": lambda f, x, t: f.nll_loss(x[0], t[0]),
    "spatial": lambda f, x, t: f.nll_loss(x.reshape(4, 5, 1), t.reshape(4, 1)),
    "cross_entropy_spatial": lambda f, x, t: f.cross_entropy(x.reshape(4, 5, 1), t.reshape(4, 1)),
}


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool", "float32"])
@pytest.mark.parametrize("call", TARGET_CALLS)
def test_class_index_target_dtypes_as_torch(call, dtype):
    """torch's nll kernels take int64 or uint8 class indices (int64 only for spatial ones); a
    float target not shaped as the logits is read as indices, so refused the same way
    (linear_cross_entropy's int32 targets led here)."""
    def program(m):
        x = m.tensor(data(4, 5)).log_softmax(1)
        return TARGET_CALLS[call](m.nn.functional, x, m.tensor([0, 1, 2, 3]).to(getattr(m, dtype)))
    same_as_torch(program)


@pytest.mark.parametrize("bias", ["float32", "int64", "complex128", "float32_wrong_shape"])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_linear_bias_of_another_dtype_as_torch(rank, bias):
    """A bias whose dtype is not the weight's is torch's addmm error, before any shape check."""
    def program(m):
        x = m.tensor(data(*[(3,), (2, 3), (1, 2, 3)][rank - 1], seed=1))
        b = m.ones(3 if bias.endswith("shape") else 4, dtype=getattr(m, bias.split("_")[0]))
        return m.nn.functional.linear(x, m.tensor(data(4, 3)), b)
    same_as_torch(program)


@pytest.mark.parametrize("bias", ["float16", "float32", "complex128", "float64_2d"])
@pytest.mark.parametrize("layout", ["transposed3", "permuted4", "sliced3", "contiguous4",
                                    "transposed2"])
def test_linear_bias_of_another_dtype_off_the_addmm_path_as_torch(layout, bias):
    """torch's linear runs addmm (refusing the bias's dtype) for a 2-D input or a contiguous
    one that is 3-D or has a 1-D bias; otherwise matmul then add_, where the bias promotes
    into the result's dtype or raises add_'s cast error (MultiheadAttention's float16
    in_proj_bias on its transposed float64 query; found by test_nn_multihead_attention)."""
    def program(m):
        x = m.tensor(data(3, 2, 2, 4, seed=2))
        x = {"transposed3": x[0].reshape(3, 2, 4).transpose(0, 1), "contiguous4": x,
             "permuted4": x.permute(1, 0, 2, 3), "sliced3": x.reshape(6, 2, 4)[::2],
             "transposed2": x.reshape(12, 4)[:4].t().t()}[layout]
        w = m.tensor(data(5, 4, seed=3), requires_grad=True)
        shape = (2, 5) if bias.endswith("2d") else (5,)
        b = m.tensor(data(*shape, seed=4)).to(getattr(m, bias.split("_")[0]))
        b.requires_grad_(True)
        y = m.nn.functional.linear(x, w, b)
        y.sum().backward()
        return y, w.grad, b.grad
    same_as_torch(program)
