"""The activations and losses of lane nnact against torch: modules (repr, parameters, forward,
gradients), gradients at the kinks (first and second order), reduction modes, torch's errors,
in-place forms, empty batches, and the derivatives torch does not have."""
import math

import numpy as np
import pytest

import gradkit
import gradkit.nn as nn
import gradkit.nn.functional as F  # noqa: N812 - torch's convention

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")

_rng = np.random.default_rng(515)
KINKS = np.array([-6.0, -3.0, -1.0, -0.5, -0.1, -0.0, 0.0, 0.1, 0.5, 1.0, 3.0, 6.0, math.nan,
                  math.inf, -math.inf])


def _tensor(lib, values, requires_grad=False, dtype="float64"):
    return lib.tensor(np.asarray(values), dtype=getattr(lib, dtype), requires_grad=requires_grad)


def _numpy(t):
    return t.detach().numpy()


def _assert_same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(_numpy(ours), _numpy(theirs), rtol=1e-10, atol=1e-12)


def _value_grad_hessian(lib, function, values):
    """f(x), the gradient of sum(f(x)) and of the sum of that gradient (zeros where the
    gradient does not depend on x), and the name of f's node."""
    x = _tensor(lib, values, requires_grad=True)
    out = function(lib, x)
    grad, = lib.autograd.grad(out.sum(), x, create_graph=True)
    if grad.requires_grad:
        hessian, = lib.autograd.grad(grad.sum(), x, allow_unused=True)
    else:
        hessian = None
    return out, grad, hessian, out.grad_fn.name()


ELEMENTWISE = {
    "relu6": lambda lib, x: lib.nn.functional.relu6(x),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),
    "hardtanh_wide": lambda lib, x: lib.nn.functional.hardtanh(x, -3.0, 0.5),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "softshrink_1": lambda lib, x: lib.nn.functional.softshrink(x, 1.0),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x),
    "hardshrink_method": lambda lib, x: x.hardshrink(1.0),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.5, -2.0),
    "celu": lambda lib, x: lib.nn.functional.celu(x, 2.0),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "elu": lambda lib, x: lib.nn.functional.elu(x, 0.5),
    "rrelu_eval": lambda lib, x: lib.nn.functional.rrelu(x, 0.1, 0.3),
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "tanhshrink": lambda lib, x: lib.nn.functional.tanhshrink(x),
    "clamp_min": lambda lib, x: lib.clamp_min(x, 0.5),
    "prelu": lambda lib, x: lib.nn.functional.prelu(x, _tensor(lib, [0.25])),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_values_and_derivatives_at_the_kinks_match_torch(name):
    values = KINKS[np.isfinite(KINKS)] if name in ("mish", "tanhshrink") else KINKS
    ours = _value_grad_hessian(gradkit, ELEMENTWISE[name], values)
    theirs = _value_grad_hessian(torch, ELEMENTWISE[name], values)
    assert ours[3] == theirs[3]
    for mine, expected in zip(ours[:3], theirs[:3], strict=True):
        if expected is None:  # the gradient does not depend on x (clamp_min)
            assert mine is None
        else:
            _assert_same(mine, expected)


def test_hardsigmoid_has_no_second_derivative_as_in_torch():
    for lib in (gradkit, torch):
        x = _tensor(lib, KINKS, requires_grad=True)
        out = lib.nn.functional.hardsigmoid(x)
        grad, = lib.autograd.grad(out.sum(), x, create_graph=True)
        with pytest.raises(RuntimeError,
                           match="derivative for aten::hardsigmoid_backward is not implemented"):
            lib.autograd.grad(grad.sum(), x)
    ours = F.hardsigmoid(_tensor(gradkit, KINKS, requires_grad=True))
    theirs = torch.nn.functional.hardsigmoid(_tensor(torch, KINKS, requires_grad=True))
    _assert_same(ours, theirs)
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "HardsigmoidBackward0"


@pytest.mark.parametrize("loss,width", [("smooth_l1_loss", "beta"), ("huber_loss", "delta")])
@pytest.mark.parametrize("size", [0.5, 1.0, 2.0])
def test_smooth_l1_and_huber_derivatives_at_the_joint(loss, width, size):
    differences = np.array([-2 * size, -size, -size / 2, 0.0, size / 2, size, 2 * size])

    def program(lib):
        x = _tensor(lib, differences, requires_grad=True)
        target = _tensor(lib, np.zeros(len(differences)))
        out = getattr(lib.nn.functional, loss)(x, target, reduction="sum", **{width: size})
        grad, = lib.autograd.grad(out, x, create_graph=True)
        hessian, = lib.autograd.grad(grad.sum(), x)
        return out, grad, hessian

    for mine, expected in zip(program(gradkit), program(torch), strict=True):
        _assert_same(mine, expected)


def _both(make):
    """make(lib) in gradkit and in torch, compared (values, then each leaf's gradient)."""
    outputs = []
    for lib in (gradkit, torch):
        leaves = []

        def leaf(values, requires_grad=True, dtype="float64", lib=lib, leaves=leaves):
            t = _tensor(lib, values, requires_grad=requires_grad, dtype=dtype)
            if requires_grad:
                leaves.append(t)
            return t
        out = make(lib, leaf)
        grads = lib.autograd.grad(out.sum(), leaves, allow_unused=True) if out.requires_grad \
            else []
        outputs.append((out, grads))
    (ours, our_grads), (theirs, their_grads) = outputs
    _assert_same(ours, theirs)
    for mine, expected in zip(our_grads, their_grads, strict=True):
        _assert_same(mine, expected)
    return ours, theirs


def _losses():
    """(name, make(lib, leaf, reduction)) for every loss of the lane."""
    x, y, p = _rng.standard_normal((3, 4)), _rng.standard_normal((3, 4)), _rng.random((3, 4))
    signs = np.where(_rng.random((3, 4)) < 0.5, -1.0, 1.0)
    labels = np.array([1, 0, 3])
    lists = np.array([[1, 3, -1, 0], [0, 2, 3, -1], [-1, 1, 1, 1]])

    def f(lib):
        return lib.nn.functional
    return {
        "l1": lambda lib, t, r: f(lib).l1_loss(t(x), t(y), reduction=r),
        "l1_weight": lambda lib, t, r: f(lib).l1_loss(t(x), t(y), reduction=r, weight=t(p, False)),
        "smooth_l1": lambda lib, t, r: f(lib).smooth_l1_loss(t(x), t(y), reduction=r, beta=0.7),
        "huber": lambda lib, t, r: f(lib).huber_loss(t(x), t(y), reduction=r, delta=0.7),
        "huber_weight": lambda lib, t, r: f(lib).huber_loss(t(x), t(y), reduction=r,
                                                            weight=t(p, False)),
        "kl_div": lambda lib, t, r: f(lib).kl_div(t(x), t(p), reduction=r),
        "kl_div_log": lambda lib, t, r: f(lib).kl_div(t(x), t(y), reduction=r, log_target=True),
        "bce": lambda lib, t, r: f(lib).binary_cross_entropy(t(p), t(p[::-1].copy()),
                                                             t(p[0], False), reduction=r),
        "poisson": lambda lib, t, r: f(lib).poisson_nll_loss(t(x), t(3 * p), full=True,
                                                             reduction=r),
        "gaussian": lambda lib, t, r: f(lib).gaussian_nll_loss(t(x), t(y), t(p[:, 0]),
                                                               reduction=r),
        "margin_ranking": lambda lib, t, r: f(lib).margin_ranking_loss(t(x), t(y), t(signs,
                                                                                     False),
                                                                       0.2, reduction=r),
        "hinge": lambda lib, t, r: f(lib).hinge_embedding_loss(t(x), t(signs, False),
                                                               reduction=r),
        "soft_margin": lambda lib, t, r: f(lib).soft_margin_loss(t(x), t(signs, False),
                                                                 reduction=r),
        "cosine_embedding": lambda lib, t, r: f(lib).cosine_embedding_loss(
            t(x), t(y), t(signs[:, 0], False), margin=0.1, reduction=r),
        "triplet": lambda lib, t, r: f(lib).triplet_margin_loss(t(x), t(y), t(p), swap=True,
                                                                reduction=r),
        "multi_margin": lambda lib, t, r: f(lib).multi_margin_loss(
            t(x), lib.tensor(labels), p=2, weight=t(p[0], False), reduction=r),
        "multilabel_margin": lambda lib, t, r: f(lib).multilabel_margin_loss(
            t(x), lib.tensor(lists), reduction=r),
        "multilabel_soft_margin": lambda lib, t, r: f(lib).multilabel_soft_margin_loss(
            t(x), t(p), t(p[1], False), reduction=r),
    }


LOSSES = _losses()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_match_torch_in_every_reduction(name, reduction):
    ours, theirs = _both(lambda lib, leaf: LOSSES[name](lib, leaf, reduction))
    assert ours.grad_fn.name() == theirs.grad_fn.name()


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_bad_reduction_is_torchs_error(name):
    messages = []
    for lib in (gradkit, torch):
        with pytest.raises(ValueError) as caught:
            LOSSES[name](lib, lambda v, g=True, lib=lib: _tensor(lib, v), "average")
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_kl_div_batchmean_and_its_mean_warning():
    _both(lambda lib, leaf: lib.nn.functional.kl_div(leaf(np.log([[0.2, 0.8]])),
                                                     leaf([[0.5, 0.5]]), reduction="batchmean"))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(gradkit.zeros(2), gradkit.ones(2))


def test_legacy_size_average_and_reduce_give_torchs_reduction_and_warning():
    for size_average, reduce in ((False, None), (None, False), (True, True)):
        for lib in (gradkit, torch):
            with pytest.warns(UserWarning, match="size_average and reduce args will be "
                                                 "deprecated"):
                out = lib.nn.functional.l1_loss(lib.ones(2, 3), lib.zeros(2, 3),
                                                size_average=size_average, reduce=reduce)
            if lib is gradkit:
                ours = out
        _assert_same(ours, out)


def _error_of(program, lib):
    try:
        program(lib)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error), str(error)
    return None


ERRORS = {
    "celu_alpha_0": lambda lib: lib.nn.functional.celu(lib.ones(2), 0.0),
    "softshrink_negative": lambda lib: lib.nn.functional.softshrink(lib.ones(2), -0.25),
    "softshrink_negative_double": lambda lib: lib.nn.functional.softshrink(
        lib.ones(2, dtype=lib.float64), -1.0),
    "hardtanh_bounds": lambda lib: lib.nn.functional.hardtanh(lib.ones(2), 2.0, 1.0),
    "hardtanh_bool": lambda lib: lib.nn.functional.hardtanh(lib.tensor([True])),
    "hardsigmoid_int": lambda lib: lib.nn.functional.hardsigmoid(lib.tensor([1, 2])),
    "hardswish_complex": lambda lib: lib.nn.functional.hardswish(lib.tensor([1j])),
    "mish_int": lambda lib: lib.nn.functional.mish(lib.tensor([1])),
    "celu_int": lambda lib: lib.nn.functional.celu(lib.tensor([1])),
    "threshold_bool": lambda lib: lib.nn.functional.threshold(lib.tensor([True]), 0.5, 1.0),
    "glu_odd": lambda lib: lib.nn.functional.glu(lib.ones(2, 3)),
    "glu_scalar": lambda lib: lib.nn.functional.glu(lib.ones(())),
    "glu_int": lambda lib: lib.nn.functional.glu(lib.ones(4, dtype=lib.int64)),
    "prelu_channels": lambda lib: lib.nn.functional.prelu(lib.ones(2, 4), lib.ones(3)),
    "prelu_unbatched": lambda lib: lib.nn.functional.prelu(lib.ones(4), lib.ones(4)),
    "prelu_2d_weight": lambda lib: lib.nn.functional.prelu(lib.ones(2, 4), lib.ones(2, 2)),
    "prelu_dtypes": lambda lib: lib.nn.functional.prelu(lib.ones(2, 4),
                                                        lib.ones(1, dtype=lib.float64)),
    "rrelu_bounds": lambda lib: lib.nn.functional.rrelu(lib.ones(2), 0.5, 0.1),
    "rrelu_int": lambda lib: lib.nn.functional.rrelu(lib.tensor([1])),
    "smooth_l1_beta": lambda lib: lib.nn.functional.smooth_l1_loss(lib.ones(2), lib.ones(2),
                                                                   beta=-1.0),
    "huber_delta": lambda lib: lib.nn.functional.huber_loss(lib.ones(2), lib.ones(2), delta=0.0),
    "l1_weight_shape": lambda lib: lib.nn.functional.l1_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                             weight=lib.ones(3)),
    "l1_weight_reduction": lambda lib: lib.nn.functional.l1_loss(
        lib.ones(2), lib.ones(2), weight=lib.ones(2), reduction="x"),
    "kl_div_int": lambda lib: lib.nn.functional.kl_div(lib.ones(2), lib.tensor([1, 0])),
    "kl_div_complex": lambda lib: lib.nn.functional.kl_div(lib.ones(2), lib.tensor([1j, 0j]),
                                                           reduction="sum"),
    "bce_range": lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([1.5]),
                                                                    lib.tensor([1.0])),
    "bce_nan": lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([math.nan]),
                                                                  lib.tensor([1.0])),
    "bce_shape": lambda lib: lib.nn.functional.binary_cross_entropy(lib.ones(2, 3) / 2,
                                                                    lib.ones(3)),
    "bce_int": lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([1, 0]),
                                                                  lib.tensor([1, 0])),
    "bce_weight_grad": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.ones(2) / 2, lib.ones(2), lib.ones(2, requires_grad=True)),
    "gaussian_negative_var": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.ones(2), lib.ones(2), -lib.ones(2)),
    "gaussian_var_size": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(3, 2)),
    "margin_ranking_dims": lambda lib: lib.nn.functional.margin_ranking_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(3)),
    "soft_margin_target_grad": lambda lib: lib.nn.functional.soft_margin_loss(
        lib.ones(2), lib.ones(2, requires_grad=True)),
    "cosine_embedding_target": lambda lib: lib.nn.functional.cosine_embedding_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 1)),
    "cosine_embedding_1d_target": lambda lib: lib.nn.functional.cosine_embedding_loss(
        lib.ones(3), lib.ones(2, 3), lib.ones(2)),
    "cosine_embedding_0d_target": lambda lib: lib.nn.functional.cosine_embedding_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.tensor(1.0)),
    "triplet_margin": lambda lib: lib.nn.functional.triplet_margin_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=0.0),
    "triplet_dims": lambda lib: lib.nn.functional.triplet_margin_loss(
        lib.ones(2, 3), lib.ones(3), lib.ones(2, 3)),
    "multi_margin_p": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3), lib.tensor([0, 1]), p=3),
    "multi_margin_target": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3), lib.tensor([0, 3])),
    "multi_margin_negative_target": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3), lib.tensor([0, -1])),
    "multi_margin_target_size": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3), lib.tensor([0, 1, 2])),
    "multi_margin_weight_size": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3), lib.tensor([0, 1]), weight=lib.ones(2)),
    "multi_margin_weight_dims": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3), lib.tensor([0, 1]), weight=lib.ones(1, 3)),
    "multi_margin_float_target": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3), lib.tensor([0.0, 1.0])),
    "multi_margin_3d": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3, 1), lib.tensor([0, 1])),
    "multilabel_margin_target": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.ones(2, 3), lib.tensor([[0, 3, -1], [1, -1, 0]])),
    "multilabel_margin_size": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.ones(2, 3), lib.tensor([[0, 2], [1, -1]])),
    "multilabel_soft_margin_reduction": lambda lib: lib.nn.functional.multilabel_soft_margin_loss(
        lib.ones(2, 3), lib.ones(2, 3), reduction="x"),
    "cosine_similarity_int": lambda lib: lib.nn.functional.cosine_similarity(
        lib.tensor([1, 2]), lib.tensor([1, 2]), dim=0),
    "smooth_l1_complex": lambda lib: lib.nn.functional.smooth_l1_loss(lib.ones(2) * 1j,
                                                                      lib.ones(2) * 1j),
    "huber_int": lambda lib: lib.nn.functional.huber_loss(lib.tensor([1]), lib.tensor([2])),
    "multi_margin_int": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(2, 3, dtype=lib.int64), lib.tensor([0, 1])),
    "multilabel_margin_complex": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.ones(2, 3) * 1j, lib.tensor([[0, 1, -1], [1, -1, 0]])),
    "glu_complex": lambda lib: lib.nn.functional.glu(lib.ones(2, 4) * 1j),
    "prelu_int": lambda lib: lib.nn.functional.prelu(lib.tensor([1, -2]), lib.tensor([1])),
    "rrelu_training_int": lambda lib: lib.nn.functional.rrelu(lib.tensor([1]), training=True),
    "soft_margin_int": lambda lib: lib.nn.functional.soft_margin_loss(lib.tensor([1]),
                                                                      lib.tensor([1])),
    "soft_margin_bool": lambda lib: lib.nn.functional.soft_margin_loss(lib.tensor([True]),
                                                                       lib.tensor([True])),
    "bce_dtypes": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.ones(2, dtype=lib.float64) / 2, lib.ones(2)),
    "huber_dtypes_backward": lambda lib: lib.nn.functional.huber_loss(
        lib.ones(2, requires_grad=True), lib.ones(2, dtype=lib.float64) * 3).backward(),
    "hardtanh_module": lambda lib: lib.nn.Hardtanh(1.0, 1.0),
    "triplet_module": lambda lib: lib.nn.TripletMarginLoss(margin=-1),
    "multi_margin_module_p": lambda lib: lib.nn.MultiMarginLoss(p=3),
    "multi_margin_module_weight": lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_torchs(name):
    ours, theirs = _error_of(ERRORS[name], gradkit), _error_of(ERRORS[name], torch)
    assert theirs is not None and ours is not None
    assert ours[0] is theirs[0]
    assert ours[1].replace("gradkit.Size", "torch.Size") == theirs[1]


def test_margin_losses_have_no_second_derivative_nor_forward_ad_as_in_torch():
    programs = {
        "multi_margin_loss": lambda lib, x: lib.nn.functional.multi_margin_loss(
            x, lib.tensor([0, 2])),
        "multilabel_margin_loss": lambda lib, x: lib.nn.functional.multilabel_margin_loss(
            x, lib.tensor([[0, 2, -1], [1, -1, 0]])),
    }
    for name, program in programs.items():
        for lib in (gradkit, torch):
            x = _tensor(lib, _rng.standard_normal((2, 3)), requires_grad=True)
            grad, = lib.autograd.grad(program(lib, x), x, create_graph=True)
            with pytest.raises(RuntimeError, match=f"derivative for aten::{name}_backward is "
                                                   "not implemented"):
                lib.autograd.grad(grad.sum(), x)
            with lib.autograd.forward_ad.dual_level():
                dual = lib.autograd.forward_ad.make_dual(x.detach(), lib.ones_like(x))
                with pytest.raises(NotImplementedError, match="Trying to use forward AD with "
                                                              f"{name}"):
                    program(lib, dual)


def test_margin_ranking_of_integers_is_a_float_loss_as_torchs():
    ours, theirs = (lib.nn.functional.margin_ranking_loss(lib.tensor([1, 4]), lib.tensor([2, 2]),
                                                          lib.tensor([1, -1]), 1)
                    for lib in (gradkit, torch))
    _assert_same(ours, theirs)


@pytest.mark.parametrize("name", ["soft_margin_loss", "huber_loss"])
def test_losses_writing_in_the_input_dtype_as_torchs(name):
    ours, theirs = (getattr(lib.nn.functional, name)(lib.tensor([0.5, -2.0]),
                                                     lib.tensor([1.0, -1.0], dtype=lib.float64))
                    for lib in (gradkit, torch))
    _assert_same(ours, theirs)


def test_empty_batches():
    for make in (lambda lib, leaf: lib.nn.functional.l1_loss(
                     leaf(np.zeros((0, 3))), leaf(np.zeros((0, 3))), reduction="sum"),
                 lambda lib, leaf: lib.nn.functional.smooth_l1_loss(
                     leaf(np.zeros((0, 3))), leaf(np.zeros((0, 3))), reduction="none"),
                 lambda lib, leaf: lib.nn.functional.multi_margin_loss(
                     leaf(np.zeros((0, 3))), lib.zeros(0, dtype=lib.int64), reduction="none"),
                 lambda lib, leaf: lib.nn.functional.glu(leaf(np.zeros((0, 4)))),
                 lambda lib, leaf: lib.nn.functional.hardswish(leaf(np.zeros((0, 4)))),
                 lambda lib, leaf: lib.nn.functional.prelu(leaf(np.zeros((0, 2))),
                                                           leaf([0.1, 0.2])),
                 lambda lib, leaf: lib.nn.functional.cosine_similarity(leaf(np.zeros((0, 3))),
                                                                       leaf(np.zeros((0, 3))))):
        _both(make)


@pytest.mark.parametrize("name,args", [
    ("elu_", (0.5,)), ("celu_", (2.0,)), ("selu_", ()), ("leaky_relu_", (0.2,)),
    ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, 3.0)), ("rrelu_", (0.1, 0.2)),
    ("relu_", ())])
def test_in_place_forms_write_into_their_input(name, args):
    values = _rng.standard_normal(5)
    results = []
    for lib in (gradkit, torch):
        leaf = _tensor(lib, values, requires_grad=True)
        x = leaf * 1.0
        out = getattr(lib.nn.functional, name)(x, *args)
        assert out is x and x._version == 1
        out.sum().backward()
        results.append((out, leaf.grad, out.grad_fn.name()))
    for mine, expected in zip(results[0][:2], results[1][:2], strict=True):
        _assert_same(mine, expected)
    assert results[0][2] == results[1][2]  # EluBackward1 & co.: torch's in-place overloads


@pytest.mark.parametrize("name,args,message", [
    ("elu_", (-0.5,), "In-place elu backward"), ("celu_", (-0.5,), "In-place elu backward"),
    ("leaky_relu_", (-0.2,), "In-place leakyReLu backward")])
def test_in_place_forms_refuse_a_negative_slope_in_backward_as_torch(name, args, message):
    values = []
    for lib in (gradkit, torch):
        leaf = _tensor(lib, [-1.0, 2.0], requires_grad=True)
        out = getattr(lib.nn.functional, name)(leaf * 1.0, *args)
        with pytest.raises(RuntimeError, match=message):
            out.sum().backward()
        values.append(out)
    _assert_same(*values)


def test_rrelu_training_draws_one_slope_per_element_in_the_bounds():
    x = gradkit.tensor(-np.ones(1000), requires_grad=True)
    gradkit.manual_seed(3)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -out.detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() < 0.3 and len(np.unique(slopes)) > 900
    assert out.grad_fn.name() == "RreluWithNoiseBackward0"
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), slopes)
    gradkit.manual_seed(3)
    np.testing.assert_array_equal(F.rrelu(x, 0.1, 0.3, training=True).detach().numpy(), -slopes)
    positive = gradkit.tensor([0.5, 2.0])
    np.testing.assert_array_equal(F.rrelu(positive, training=True).numpy(), [0.5, 2.0])


MODULES = [
    ("ELU", (), {}), ("ELU", (0.5, True), {}), ("CELU", (2.0,), {}), ("SELU", (True,), {}),
    ("GLU", (1,), {}), ("Hardtanh", (-2.0, 2.0), {}), ("Hardtanh", (), {"inplace": True}),
    ("ReLU6", (), {}), ("ReLU6", (True,), {}), ("Hardsigmoid", (True,), {}),
    ("Hardswish", (), {}), ("Mish", (True,), {}), ("Softsign", (), {}), ("Tanhshrink", (), {}),
    ("Softshrink", (1.0,), {}), ("Hardshrink", (), {}), ("Threshold", (0.1, 2.0), {}),
    ("Threshold", (0.1, 2.0, True), {}), ("RReLU", (0.1, 0.2), {}), ("LogSigmoid", (), {}),
    ("Softplus", (2.0, 10.0), {}), ("LeakyReLU", (0.2, True), {}), ("SiLU", (), {}),
    ("PReLU", (), {}), ("PReLU", (4, 0.1), {}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_activation_modules_match_torch(name, args, kwargs):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.eval(), theirs.eval()
    values = _rng.standard_normal((3, 4, 2)) * 2
    results = []
    for lib, module in ((gradkit, ours), (torch, theirs)):
        module.to(lib.float64)
        leaf = _tensor(lib, values, requires_grad=True)
        out = module(leaf * 1.0)
        out.sum().backward()
        results.append([out, leaf.grad] + [p.grad for p in module.parameters()])
    for mine, expected in zip(*results, strict=True):
        _assert_same(mine, expected)


LOSS_MODULES = [
    ("L1Loss", {}, 2), ("SmoothL1Loss", {"beta": 0.5}, 2), ("HuberLoss", {"delta": 0.5}, 2),
    ("KLDivLoss", {"reduction": "batchmean"}, "counts"), ("KLDivLoss", {"log_target": True}, 2),
    ("BCELoss", {"weight": [0.5, 1.0, 2.0, 1.5]}, "probabilities"),
    ("PoissonNLLLoss", {"full": True}, "counts"), ("GaussianNLLLoss", {"full": True}, "var"),
    ("MarginRankingLoss", {"margin": 0.5}, "ranking"), ("HingeEmbeddingLoss", {}, "signs"),
    ("SoftMarginLoss", {"reduction": "sum"}, "signs"),
    ("CosineEmbeddingLoss", {"margin": 0.2}, "pairs"),
    ("TripletMarginLoss", {"margin": 2.0, "swap": True}, 3),
    ("MultiMarginLoss", {"p": 2, "weight": [0.5, 1.0, 2.0, 1.5]}, "labels"),
    ("MultiLabelMarginLoss", {}, "lists"),
    ("MultiLabelSoftMarginLoss", {"weight": [0.5, 1.0, 2.0, 1.5]}, "probabilities"),
    ("CosineSimilarity", {"dim": 0}, 2), ("PairwiseDistance", {"p": 1.0, "keepdim": True}, 2),
]


def _loss_inputs(lib, kind, leaf):
    if isinstance(kind, int):
        return [leaf(_rng_values(i)) for i in range(kind)]
    signs = _tensor(lib, np.where(_rng_values(1) > 0, 1.0, -1.0))
    if kind != "probabilities":
        x = leaf(_rng_values(0))
    return {
        "probabilities": lambda: [leaf(1 / (1 + np.exp(-_rng_values(0)))),
                                  leaf(1 / (1 + np.exp(-_rng_values(1))))],
        "counts": lambda: [x, _tensor(lib, np.abs(_rng_values(1)) * 3)],
        "var": lambda: [x, leaf(_rng_values(1)), leaf(np.abs(_rng_values(2)))],
        "ranking": lambda: [x, leaf(_rng_values(1)), signs],
        "signs": lambda: [x, signs],
        "pairs": lambda: [x, leaf(_rng_values(1)), signs[:, 0]],
        "labels": lambda: [x, lib.tensor([1, 0, 3])],
        "lists": lambda: [x, lib.tensor([[1, 3, -1, 0], [0, 2, 3, -1], [-1, 1, 1, 1]])],
    }[kind]()


def _rng_values(i):
    return np.random.default_rng(70 + i).standard_normal((3, 4))


@pytest.mark.parametrize("name,kwargs,kind", LOSS_MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(LOSS_MODULES)])
def test_loss_modules_match_torch(name, kwargs, kind):
    results = []
    for lib in (gradkit, torch):
        settings = {k: _tensor(lib, v) if isinstance(v, list) else v for k, v in kwargs.items()}
        module = getattr(lib.nn, name)(**settings)
        leaves = []

        def leaf(values, lib=lib, leaves=leaves):
            leaves.append(_tensor(lib, values, requires_grad=True))
            return leaves[-1]
        out = module(*_loss_inputs(lib, kind, leaf))
        grads = lib.autograd.grad(out.sum(), leaves)
        results.append((repr(module), [n for n, _ in module.named_buffers()], out, grads))
    (repr_ours, buffers_ours, out, grads), (repr_theirs, buffers_theirs, t_out, t_grads) = results
    assert repr_ours == repr_theirs and buffers_ours == buffers_theirs
    _assert_same(out, t_out)
    for mine, expected in zip(grads, t_grads, strict=True):
        _assert_same(mine, expected)


def test_loss_modules_keep_a_bad_reduction_until_called_as_torchs():
    for lib in (gradkit, torch):
        module = lib.nn.L1Loss(reduction="average")
        assert module.reduction == "average"
        with pytest.raises(ValueError, match="average is not a valid value for reduction"):
            module(lib.ones(2), lib.zeros(2))
    for lib in (gradkit, torch):
        with pytest.warns(UserWarning, match="please use reduction='none' instead"):
            assert lib.nn.SoftMarginLoss(reduce=False).reduction == "none"
        with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
            assert lib.nn.L1Loss(size_average=False).reduction == "sum"
