"""grid_sample, affine_grid, max_unpool, gumbel_softmax and triplet_margin_with_distance_loss
against torch: values, gradients (second order too), node names, warnings and errors."""
import math
import warnings

import numpy as np
import pytest

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - torch's convention

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(5)
IMAGE = RNG.standard_normal((2, 3, 4, 5))
GRID = RNG.uniform(-1.4, 1.4, (2, 3, 2, 2))


def _outcome(program, lib):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = program(lib)
        return value, [str(w.message) for w in caught]
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error).replace("torch.", "gradkit.")


def _numpy(value):
    if isinstance(value, (gradkit.Tensor, torch.Tensor)):
        return value.detach().numpy()
    if isinstance(value, (list, tuple)):
        return [_numpy(v) for v in value]
    return value


def _same(program, atol=1e-12):
    got, expected = _outcome(program, gradkit), _outcome(program, torch)
    got, expected = _numpy(got), _numpy(expected)
    _compare(got, expected, atol)


def _compare(got, expected, atol):
    if isinstance(expected, np.ndarray):
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, atol=atol, rtol=1e-9)
    elif isinstance(expected, list):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _compare(g, e, atol)
    else:
        assert got == expected


def _functional(lib):
    return F if lib is gradkit else TF


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_values_gradients_and_second_derivatives(mode, padding_mode, align_corners):
    def program(lib):
        image = lib.tensor(IMAGE, requires_grad=True)
        grid = lib.tensor(GRID, requires_grad=True)
        out = _functional(lib).grid_sample(image, grid, mode=mode, padding_mode=padding_mode,
                                           align_corners=align_corners)
        weights = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(out.shape))
        d_image, d_grid = lib.autograd.grad((out * weights).sum(), (image, grid),
                                            create_graph=True)
        if mode == "nearest":  # the grid's gradient is zero, and so is its derivative
            return out, d_image, d_grid
        second = lib.autograd.grad((d_grid ** 2).sum() + (d_image * image).sum(),
                                   (image, grid))
        return out, d_image, d_grid, second
    _same(program, atol=1e-10)


def test_affine_grid_into_grid_sample_is_a_spatial_transformer():
    theta = np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])

    def program(lib):
        angles = lib.tensor(theta, requires_grad=True)
        functional = _functional(lib)
        grid = functional.affine_grid(angles, (2, 3, 4, 5), align_corners=False)
        out = functional.grid_sample(lib.tensor(IMAGE), grid, align_corners=False)
        out.sum().backward()
        return out, angles.grad, grid.grad_fn.name()
    _same(program, atol=1e-10)
    identity = F.affine_grid(gradkit.tensor(theta[1:]), (1, 3, 4, 5), align_corners=False)
    resampled = F.grid_sample(gradkit.tensor(IMAGE[:1]), identity, align_corners=False)
    np.testing.assert_allclose(resampled.numpy(), IMAGE[:1], atol=1e-12)  # identity: no change


ERRORS = [
    lambda fn, lib: fn.grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2), align_corners=False),
    lambda fn, lib: fn.grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(2, 2, 2, 2),
                                 align_corners=False),
    lambda fn, lib: fn.grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 3),
                                 align_corners=False),
    lambda fn, lib: fn.grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 2,
                                                                  dtype=lib.float64),
                                 align_corners=False),
    lambda fn, lib: fn.grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 2), mode="area"),
    lambda fn, lib: fn.grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 2),
                                 padding_mode="wrap"),
    lambda fn, lib: fn.affine_grid(lib.zeros(1, 2, 3, dtype=lib.int64), (1, 1, 2, 2),
                                 align_corners=False),
    lambda fn, lib: fn.affine_grid(lib.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False),
    lambda fn, lib: fn.affine_grid(lib.zeros(1, 2, 3), (1, 1, 2, 2, 2), align_corners=False),
    lambda fn, lib: fn.affine_grid(lib.zeros(1, 2, 3), (1, 2, 2), align_corners=False),
    lambda fn, lib: fn.affine_grid(lib.zeros(1, 2, 3), (1, 1, 0, 2), align_corners=False),
    lambda fn, lib: fn.affine_grid(lib.zeros(2, 2, 3), (1, 1, 2, 2), align_corners=False),
    lambda fn, lib: fn.max_unpool2d(lib.zeros(1, 1, 2, 2), lib.tensor([[[[0, 3], [9, 20]]]]), 2),
    lambda fn, lib: fn.max_unpool2d(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 2, 2), 2),
    lambda fn, lib: fn.max_unpool2d(lib.zeros(1, 1, 2, 2),
                                  lib.zeros(1, 1, 2, 1, dtype=lib.int64), 2),
    lambda fn, lib: fn.max_unpool2d(lib.zeros(2, 2), lib.zeros(2, 2, dtype=lib.int64), 2),
    lambda fn, lib: fn.max_unpool2d(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 2, 2, dtype=lib.int64),
                                  2, output_size=(9, 9)),
    lambda fn, lib: fn.max_unpool2d(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 2, 2, dtype=lib.int64),
                                  2, output_size=(1, 4, 4)),
    lambda fn, lib: fn.triplet_margin_with_distance_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                       lib.zeros(2, 3), margin=0),
    lambda fn, lib: fn.triplet_margin_with_distance_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                       lib.zeros(3), reduction="mean"),
    lambda fn, lib: fn.triplet_margin_with_distance_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                       lib.zeros(2, 3), reduction="avg"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(index):
    _same(lambda lib: ERRORS[index](_functional(lib), lib))


@pytest.mark.parametrize("call", [
    lambda fn, lib: fn.grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2)).shape,
    lambda fn, lib: fn.affine_grid(lib.zeros(1, 2, 3), (1, 1, 2, 2)).shape,
    lambda fn, lib: fn.affine_grid(lib.zeros(1, 2, 3), (1, 1, 1, 2), align_corners=True).shape])
def test_align_corners_warnings_match_torch(call):
    _same(lambda lib: tuple(call(_functional(lib), lib)))


def test_max_unpool_puts_pooled_values_back_as_torch():
    def program(lib):
        x = lib.tensor(IMAGE, requires_grad=True)
        functional = _functional(lib)
        pooled, indices = functional.max_pool2d(x, 2, return_indices=True)
        restored = functional.max_unpool2d(pooled, indices, 2, output_size=x.shape)
        (restored * x).sum().backward()
        line, line_indices = functional.max_pool1d(x[0], 2, return_indices=True)
        return restored, x.grad, restored.grad_fn.name(), \
            functional.max_unpool1d(line, line_indices, 2, output_size=[5])
    _same(program)


def test_gumbel_softmax_is_softmax_of_logits_plus_gumbel_noise():
    logits = gradkit.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    gradkit.manual_seed(3)
    sample = F.gumbel_softmax(logits, tau=0.5)
    gradkit.manual_seed(3)
    noise = gradkit.zeros(3, 4, dtype=gradkit.float64).exponential_()
    expected = ((logits - noise.log()) / 0.5).softmax(-1)
    np.testing.assert_allclose(sample.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    gradkit.manual_seed(3)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    assert (hard.detach().numpy() == np.eye(4)[expected.detach().numpy().argmax(-1)]).all()
    weights = gradkit.tensor(RNG.standard_normal((3, 4)))
    (straight,) = gradkit.autograd.grad((hard * weights).sum(), logits)
    (soft,) = gradkit.autograd.grad((expected * weights).sum(), logits)
    np.testing.assert_allclose(straight.numpy(), soft.numpy(), atol=1e-12)


def test_gumbel_softmax_samples_categories_with_softmax_probabilities():
    logits = gradkit.tensor([[0.0, 1.0, -1.0, 2.0]]).expand(20000, 4)
    picks = F.gumbel_softmax(logits, hard=True).numpy().argmax(-1)
    expected = np.exp([0.0, 1.0, -1.0, 2.0]) / np.exp([0.0, 1.0, -1.0, 2.0]).sum()
    np.testing.assert_allclose(np.bincount(picks, minlength=4) / 20000, expected, atol=0.015)


@pytest.mark.parametrize("kwargs", [{}, {"hard": True}, {"dim": 0, "tau": 2.0},
                                    {"eps": 1e-3}])
def test_gumbel_softmax_graph_shape_and_warnings_match_torch(kwargs):
    def program(lib):
        logits = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        out = _functional(lib).gumbel_softmax(logits, **kwargs)
        out.sum().backward()
        return (out.grad_fn.name(), tuple(out.shape), str(out.dtype).split(".")[-1],
                math.isclose(float(out.detach().sum()), out.shape[1 - kwargs.get("dim", -1) % 2]),
                logits.grad.shape == logits.shape)
    _same(program)


@pytest.mark.parametrize("kwargs", [{}, {"swap": True, "margin": 0.5, "reduction": "none"},
                                    {"reduction": "sum"}])
def test_triplet_margin_with_distance_loss_takes_any_distance(kwargs):
    data = [RNG.standard_normal((4, 3)) for _ in range(3)]

    def program(lib):
        a, p, n = (lib.tensor(d, requires_grad=True) for d in data)
        functional = _functional(lib)
        cosine = functional.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda x, y: 1 - functional.cosine_similarity(x, y),
            **kwargs)
        default = functional.triplet_margin_with_distance_loss(a, p, n, **kwargs)
        grads = lib.autograd.grad(cosine.sum() + default.sum(), (a, p, n))
        return cosine, default, grads, default.grad_fn.name()
    _same(program)


def test_layers_wrap_the_functions_as_torch():
    data = [RNG.standard_normal((4, 3)) for _ in range(3)]

    def program(lib):
        nn = lib.nn
        layers = [nn.MaxUnpool2d(2), nn.MaxUnpool1d(2, stride=1), nn.CTCLoss(blank=1),
                  nn.TripletMarginWithDistanceLoss(), nn.TripletMarginWithDistanceLoss(
                      distance_function=nn.PairwiseDistance(p=1), margin=0.5, swap=True)]
        x = lib.tensor(IMAGE)
        pooled, indices = nn.functional.max_pool2d(x, 2, return_indices=True)
        line, line_indices = nn.functional.max_pool1d(x[0], 2, stride=1, return_indices=True)
        log_probs = lib.tensor(IMAGE.reshape(5, 6, 4)).log_softmax(2)
        triplet = [lib.tensor(d) for d in data]
        return ([repr(layer) for layer in layers],
                layers[0](pooled, indices, output_size=x.shape[2:]),
                layers[1](line, line_indices, output_size=[5]),
                layers[2](log_probs, lib.tensor([[0, 2]] * 6), [5] * 6, [2] * 6),
                layers[3](*triplet), layers[4](*triplet),
                _outcome(lambda lib: nn.TripletMarginWithDistanceLoss(margin=0), lib))
    _same(program)
