"""torch's test_nn.py (characters 320k-480k): AdaptiveLogSoftmaxWithLoss, cross entropy,
reduction strings, margin losses, one_hot and the scalar/empty/NaN checks of activations, each
program run under gradkit and torch 2.13."""
import math

import numpy as np
import pytest

from tests.nn_torch_programs import filled, grads, leaf
from tests.tensor_twins import data, same_as_torch


@pytest.mark.parametrize("cutoffs", [[5, 15, 15], [5, 15, 10], [5, 10, 25], [5, 10, 20],
                                     [5, 10, 19]])
def test_adaptive_log_softmax_cutoffs(cutoffs):
    got = same_as_torch(lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs,
                                                                  div_value=2.).head.weight.shape)
    assert (got[0] == "raises") == (cutoffs != [5, 10, 19])


@pytest.mark.parametrize("target", [[0, 5, 10], [0, 20]])
def test_adaptive_log_softmax_bad_targets(target):
    def program(m):
        asfm = m.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10, 15], div_value=2.)
        return asfm(m.tensor(data(2, 16), dtype=m.float32), m.tensor(target))
    assert same_as_torch(program)[:2] == ("raises", "RuntimeError")


def test_adaptive_log_softmax_shapes_and_log_prob():
    def program(m):
        asfm = filled(m.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10, 15], div_value=2.), m)
        sizes = [tuple(asfm.head.weight.shape)] + [tuple(asfm.tail[i][1].weight.shape)
                                                  for i in range(3)]
        x = m.tensor(data(1, 16), dtype=m.float32)
        y = m.tensor([17])
        batched, single = asfm(x, y), asfm(x.squeeze(0), y.squeeze(0))
        small = filled(m.nn.AdaptiveLogSoftmaxWithLoss(8, 4, [2], div_value=2.), m)
        x4 = m.tensor(data(4, 8, seed=1), dtype=m.float32)
        logprob = small.log_prob(x4)
        outs = [small(x4, m.full((4,), v, dtype=m.long)) for v in range(4)]
        return (sizes, batched.output, batched.loss, single.output, single.loss, logprob,
                [(o.output, o.loss, m.nn.functional.nll_loss(logprob, m.full((4,), v)))
                 for v, o in enumerate(outs)])
    got = same_as_torch(program, rtol=1e-5, atol=1e-6)
    assert got[0] == [[8, 16], [5, 8], [5, 4], [5, 2]]
    np.testing.assert_allclose(np.exp(got[5][3]).sum(1), 1, rtol=1e-5)


def test_adaptive_log_softmax_predict():
    def program(m):
        x = m.tensor(np.abs(data(64, 8)), dtype=m.float32)
        out = []
        for case in range(3):
            asfm = filled(m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8], div_value=2.,
                                                          head_bias=True), m)
            s = asfm.shortlist_size
            with m.no_grad():
                asfm.head.weight.abs_()
                asfm.head.bias.abs_()
                if case == 0:
                    asfm.head.weight[s:, :].zero_()
                elif case == 1:
                    asfm.head.weight[:s, :].zero_()
                else:
                    x[:32, :s].zero_()
                    x[32:, s:].zero_()
                    asfm.head.weight[:s, s:].zero_()
                    asfm.head.weight[s:, :s].zero_()
            out += [asfm.predict(x), asfm.log_prob(x).argmax(dim=1)]
        return out
    got = same_as_torch(program)
    for predicted, argmax in zip(got[::2], got[1::2]):
        np.testing.assert_array_equal(predicted[3], argmax[3])


def test_cross_entropy_loss_float16_against_float32():
    """torch's test_cross_entropy_loss runs bfloat16 (no NumPy dtype); float16 here."""
    def program(m):
        inputf = leaf(m, 15, 10, dtype=m.float32)
        half = inputf.detach().half().requires_grad_()
        target = m.tensor(np.random.default_rng(1).integers(0, 10, 15))
        loss = m.nn.CrossEntropyLoss()
        outf, out = loss(inputf, target), loss(half, target)
        return outf, out, grads(m, outf, [inputf]), grads(m, out, [half])
    got = same_as_torch(program, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(got[1][3], got[0][3], atol=1e-1)


def test_cross_entropy_loss_precision_and_zero_div():
    def program(m):
        inputf = m.tensor(data(8, 2, 48, 48), dtype=m.float32)
        target = m.tensor(np.random.default_rng(1).integers(0, 2, (8, 48, 48)))
        loss = m.nn.CrossEntropyLoss()
        empty = [m.nn.CrossEntropyLoss(reduction=r, label_smoothing=s)(m.rand(5, 0),
                                                                      m.rand(5, 0))
                 for r in ("mean", "sum", "none") for s in (0.0, 0.1)]
        return loss(inputf, target), loss(inputf.double(), target), empty
    got = same_as_torch(program, rtol=1e-6)
    assert math.isnan(got[2][0][3]) and got[2][2][3] == 0


REDUCTION_LOSSES = {
    "nll_loss": lambda m, f, x, t, v, r: f.nll_loss(x, t, reduction=r),
    "cross_entropy": lambda m, f, x, t, v, r: f.cross_entropy(x, t, reduction=r),
    "kl_div": lambda m, f, x, t, v, r: f.kl_div(x, x, reduction=r),
    "huber_loss": lambda m, f, x, t, v, r: f.huber_loss(x, x, reduction=r),
    "smooth_l1_loss": lambda m, f, x, t, v, r: f.smooth_l1_loss(x, x, reduction=r),
    "l1_loss": lambda m, f, x, t, v, r: f.l1_loss(x, x, reduction=r),
    "l1_loss_complex": lambda m, f, x, t, v, r: f.l1_loss(x.cfloat(), x.cfloat(), reduction=r),
    "mse_loss": lambda m, f, x, t, v, r: f.mse_loss(x, x, reduction=r),
    "hinge_embedding_loss": lambda m, f, x, t, v, r: f.hinge_embedding_loss(x, x, reduction=r),
    "poisson_nll_loss": lambda m, f, x, t, v, r: f.poisson_nll_loss(x, x, reduction=r),
    "gaussian_nll_loss": lambda m, f, x, t, v, r: f.gaussian_nll_loss(x, x, v, reduction=r),
    "binary_cross_entropy": lambda m, f, x, t, v, r: f.binary_cross_entropy(
        m.sigmoid(x), x.gt(0).to(m.get_default_dtype()), reduction=r),
    "binary_cross_entropy_with_logits": lambda m, f, x, t, v, r:
        f.binary_cross_entropy_with_logits(x, x, reduction=r),
    "multilabel_soft_margin_loss": lambda m, f, x, t, v, r: f.multilabel_soft_margin_loss(
        x, m.zeros_like(x).to(m.int64), reduction=r),
    "triplet_margin_loss": lambda m, f, x, t, v, r: f.triplet_margin_loss(x, x, x, reduction=r),
    "triplet_margin_with_distance_loss": lambda m, f, x, t, v, r:
        f.triplet_margin_with_distance_loss(x, x, x, reduction=r),
    "margin_ranking_loss": lambda m, f, x, t, v, r: f.margin_ranking_loss(x, x, x.sign(),
                                                                           reduction=r),
    "cosine_embedding_loss": lambda m, f, x, t, v, r: f.cosine_embedding_loss(
        x, x, x[:, 0].sign(), reduction=r),
    "soft_margin_loss": lambda m, f, x, t, v, r: f.soft_margin_loss(x, x.sign().detach(),
                                                                     reduction=r),
    "ctc_loss": lambda m, f, x, t, v, r: f.ctc_loss(
        m.tensor(data(12, 4, 6), dtype=m.float32).log_softmax(2),
        m.tensor(np.random.default_rng(2).integers(1, 6, (4, 5))), m.full((4,), 12),
        m.tensor([5, 3, 4, 2]), reduction=r),
}


@pytest.mark.parametrize("reduction", ["none", "invalid"])
@pytest.mark.parametrize("name", sorted(REDUCTION_LOSSES))
def test_invalid_reduction_strings(name, reduction):
    def program(m):
        x = m.tensor(data(3, 5), dtype=m.float32).requires_grad_()
        return REDUCTION_LOSSES[name](m, m.nn.functional, x, m.tensor([1, 0, 4]),
                                      m.ones(3, 5, requires_grad=True), reduction)
    got = same_as_torch(program, rtol=1e-5, atol=1e-6)
    if reduction == "invalid":
        assert got[:2] == ("raises", "ValueError")


@pytest.mark.parametrize("beta", [1.0, 0.5, 1.5])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1_loss_vs_huber_loss(beta, reduction):
    def program(m):
        out = []
        for shape, step in (((2, 2), 1), ((64, 64), 1), ((64, 128), 2)):
            x = m.tensor(data(*shape), dtype=m.float32)[..., ::step]
            t = m.tensor(data(*shape, seed=1), dtype=m.float32)[..., ::step]
            smooth = m.nn.SmoothL1Loss(beta=beta, reduction=reduction)(x, t)
            out += [smooth, m.nn.HuberLoss(delta=beta, reduction=reduction)(x, t), smooth * beta]
        return out
    got = same_as_torch(program, rtol=1e-6, atol=1e-7)
    for smooth, huber, scaled in zip(got[::3], got[1::3], got[2::3]):
        np.testing.assert_allclose(huber[3], scaled[3] if beta != 1.0 else smooth[3], rtol=1e-5)


ACTIVATIONS = ["ELU", "Hardtanh", "LeakyReLU", "LogSigmoid", "Softshrink", "Softplus", "Sigmoid",
               "Tanh"]


@pytest.mark.parametrize("name", ACTIVATIONS + ["RReLU"])
def test_nn_scalars_and_empty(name):
    def program(m):
        out = []
        for shape in ((5, 6), (), (0,), (0, 2)):
            x = leaf(m, *shape)
            y = getattr(m.nn, name)().eval()(x)  # eval: RReLU's slope is fixed, not drawn
            out += [y.shape, grads(m, y.sum(), [x])[0].shape]
        return out
    same_as_torch(program)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", ["BCELoss", "L1Loss", "MSELoss", "SmoothL1Loss",
                                  "SoftMarginLoss"])
def test_nn_scalars_reductions(name, reduction):
    def program(m):
        out = []
        for shape in ((5, 6), ()):
            x = leaf(m, *shape)
            target = m.tensor((data(*shape, seed=1) > 0).astype(float))
            y = getattr(m.nn, name)(reduction=reduction)(m.sigmoid(x), target)
            out += [y, grads(m, y.sum(), [x])]
        return out
    same_as_torch(program)


NAN_CASES = [("relu",), ("relu", {"inplace": True}), ("relu6",), ("elu",), ("selu",), ("celu",),
             ("rrelu",), ("rrelu", {"inplace": True}), ("hardtanh",), ("tanh",), ("sigmoid",),
             ("logsigmoid",), ("hardshrink",), ("tanhshrink",), ("softsign",), ("softmin", 0),
             ("softmax", 0), ("log_softmax", 0), ("leaky_relu", 0.2), ("threshold", 3, 2),
             ("threshold", 3, 2, {"inplace": True})]


@pytest.mark.parametrize("case", NAN_CASES, ids=lambda c: "-".join(map(str, c)))
def test_nonlinearity_propagate_nan(case):
    name, *args = case
    kwargs = args.pop() if args and isinstance(args[-1], dict) else {}
    got = same_as_torch(lambda m: getattr(m.nn.functional, name)(
        m.tensor([math.nan]), *args, **kwargs).item())
    assert math.isnan(got)


@pytest.mark.parametrize("args", [([3, 4, -1, 0], -1), ([3, 4, 1, 0], 3), ([3, 4, 1, 0],),
                                  ([3, 4, 1, 0], -1), ([3, 4, 1, 0], 6), ([[3, 4], [1, 0]],),
                                  (4,), ([3, 4, 1, 0], -2)])
def test_one_hot(args):
    values, *rest = args
    got = same_as_torch(lambda m: m.nn.functional.one_hot(m.tensor(values), *rest))
    assert (got[0] == "raises") == (args in (([3, 4, -1, 0], -1), ([3, 4, 1, 0], 3),
                                             ([3, 4, 1, 0], -2)))


def test_one_hot_of_empty():
    got = same_as_torch(lambda m: m.nn.functional.one_hot(m.empty([4, 0], dtype=m.long), 100))
    assert got[2] == (4, 0, 100)
    got = same_as_torch(lambda m: m.nn.functional.one_hot(m.empty([4, 0], dtype=m.long)))
    assert got[:2] == ("raises", "RuntimeError")


@pytest.mark.parametrize("name", ["MultiMarginLoss", "MultiLabelMarginLoss"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_margin_loss_empty(name, dtype):
    def program(m):
        mod = getattr(m.nn, name)()
        x = m.zeros(0, 10, dtype=getattr(m, dtype), requires_grad=True)
        y = m.ones(0, *([10] if name == "MultiLabelMarginLoss" else []), dtype=m.long)
        out = mod(x, y)  # torch's mean of nothing reads uninitialized memory: not compared
        return out.shape, out.dtype, grads(m, out.sum(), [x])
    same_as_torch(program)
    for shapes in (((0,), (10,)), ((10, 0), (10, 0))):
        got = same_as_torch(lambda m, shapes=shapes: getattr(m.nn, name)()(
            m.zeros(*shapes[0], dtype=getattr(m, dtype), requires_grad=True),
            m.ones(*shapes[1], dtype=m.long)))
        assert got[0] == "raises" and "Expected" in got[2]
