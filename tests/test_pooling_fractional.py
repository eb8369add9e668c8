"""F.fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d against torch: with the same
``_random_samples`` the windows, maxima, indices and gradients are torch's; torch's errors.
(gradcheck and gradgradcheck: the op_db rows.)"""
import numpy as np
import pytest

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - torch's convention

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(5)


def _random_case(d):
    """Input sizes, kernel and an output size torch accepts (its 3-d bound is strict)."""
    sizes = tuple(int(s) for s in rng.integers(5, 12, d))
    kernel = tuple(int(k) for k in rng.integers(1, 4, d))
    outs = tuple(int(rng.integers(1, s - k + 3 - d)) for s, k in zip(sizes, kernel))
    return sizes, kernel, outs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("d", [2, 3])
def test_values_indices_and_gradients_match_torch(d, dtype):
    for _ in range(12):
        sizes, kernel, outs = _random_case(d)
        x, samples = rng.standard_normal((2, 3) + sizes), rng.random((2, 3, d))
        x[0, 0].flat[::3] = 0.5  # ties: the first maximum wins
        found = []
        for lib, functional in ((torch, TF), (gradkit, F)):
            xs = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            pool = getattr(functional, f"fractional_max_pool{d}d")
            values, indices = pool(xs, kernel, outs, return_indices=True,
                                   _random_samples=lib.tensor(samples, dtype=getattr(lib, dtype)))
            weights = lib.tensor(np.cos(np.arange(values.numel())).reshape(values.shape),
                                 dtype=getattr(lib, dtype))
            (grad,) = lib.autograd.grad((values * weights).sum(), xs)
            assert values.dtype == grad.dtype == getattr(lib, dtype)
            assert indices.dtype == lib.int64
            assert values.grad_fn.name() == f"FractionalMaxPool{d}DBackward0"
            found.append((values.detach().numpy(), indices.numpy(), grad.numpy()))
        for got, want in zip(found[1], found[0], strict=True):
            np.testing.assert_array_equal(got, want)


def test_nan_wins_and_unbatched_input_match_torch():
    x = rng.standard_normal((2, 6, 7))
    x[0, 1, 1] = x[1, 4, 5] = x[1, 4, 6] = np.nan
    samples = rng.random((1, 2, 2))
    found = [functional.fractional_max_pool2d(lib.tensor(x), 3, output_ratio=(0.5, 0.5),
                                              return_indices=True,
                                              _random_samples=lib.tensor(samples))
             for lib, functional in ((torch, TF), (gradkit, F))]
    for got, want in zip(found[1], found[0], strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_drawn_samples_pick_window_maxima():
    """Without _random_samples the windows are drawn: every output is the input at its index,
    and the layer's output has the size the ratio asks for."""
    x = gradkit.randn(2, 3, 9, 8)
    values, indices = F.fractional_max_pool2d(x, 2, output_size=(4, 4), return_indices=True)
    picked = x.flatten(2).gather(2, indices.flatten(2)).reshape(values.shape)
    assert gradkit.equal(picked, values)
    assert F.fractional_max_pool3d(gradkit.randn(3, 6, 6, 6), 2, output_ratio=0.5).shape == \
        (3, 3, 3, 3)


@pytest.mark.parametrize("d", [2, 3])
def test_layers_match_torch(d):
    sizes = (7, 6) if d == 2 else (6, 7, 6)
    x, samples = rng.standard_normal((2, 3) + sizes), rng.random((2, 3, d))
    found = []
    for lib in (torch, gradkit):
        layer = getattr(lib.nn, f"FractionalMaxPool{d}d")(
            2, output_ratio=0.5, return_indices=True, _random_samples=lib.tensor(samples))
        assert repr(layer) == f"FractionalMaxPool{d}d()"
        assert layer.kernel_size == (2,) * d and layer.output_ratio == (0.5,) * d
        assert list(dict(layer.named_buffers())) == ["_random_samples"]
        found.append([t.numpy() for t in layer(lib.tensor(x))])
    for got, want in zip(found[1], found[0], strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kwargs, message", [
    ({}, "requires specifying either an output size, or a pooling ratio"),
    ({"output_size": 2, "output_ratio": 0.5}, "only one of output_size and output_ratio may"),
    ({"output_ratio": 1.5}, r"output_ratio must be between 0 and 1 \(got 1.5\)"),
    ({"output_ratio": (0.5, 1.0, 0.5)}, r"output_ratio must be between 0 and 1 \(got"),
])
def test_layer_errors_match_torch(d, kwargs, message):
    for lib in (torch, gradkit):
        with pytest.raises(ValueError, match=message):
            getattr(lib.nn, f"FractionalMaxPool{d}d")(2, **kwargs)


def _samples(lib, *shape, dtype="float32"):
    return lib.rand(*shape, dtype=getattr(lib, dtype))


ERRORS_2D = [  # (input shape, kernel, output_size, samples shape, samples dtype, error, message)
    ((2, 3, 7, 9), 2, (7, 9), (2, 3, 2), "float32", RuntimeError,
     r"fractional_max_pool2d\(\): pool height 2 too large relative to input height 7"),
    ((2, 3, 7, 9), 2, (3, 9), (2, 3, 2), "float32", RuntimeError,
     r"pool width 2 too large relative to input width 9"),
    ((2, 3, 7, 9), (2, 2, 2), (3, 4), (2, 3, 2), "float32", RuntimeError,
     "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints"),
    ((2, 3, 7, 9), 2, (3, 4, 5), (2, 3, 2), "float32", RuntimeError,
     "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints"),
    ((2, 3, 7, 9), 2, (3, 4), (1, 3, 2), "float32", RuntimeError,
     r"Expect _random_samples.size\(0\) no less then input batch size."),
    ((2, 3, 7, 9), 2, (3, 4), (2, 2, 2), "float32", RuntimeError,
     r"Expect _random_samples.size\(1\) equals to input channel size."),
    ((2, 3, 7, 9), 2, (3, 4), (2, 3, 3), "float32", RuntimeError,
     r"Expect _random_samples.size\(2\) equals to 2; got 3."),
    ((2, 3, 7, 9), 2, (3, 4), (2, 3), "float32", RuntimeError,
     "Expect _random_samples to have 3 dimensions, got 2"),
    ((2, 3, 7, 9), 2, (3, 4), (2, 3, 2), "float64", RuntimeError,
     "Expect _random_samples to have the same dtype as input"),
    ((7, 9), 2, (3, 4), (2, 3, 2), "float32", RuntimeError,
     r"fractional_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[7, 9\]"),
    ((2, 3, 0, 9), 2, (3, 4), (2, 3, 2), "float32", RuntimeError,
     r"Expected input to have non-zero size for non-batch dimensions, but got\[2, 3, 0, 9\] "
     "with dimension 2 being empty."),
]
ERRORS_3D = [
    ((2, 3, 5, 6, 7), 2, (4, 4, 5), (2, 3, 3), "float32", RuntimeError,
     r"fractional_max_pool3d_out\(\): pool time 2 too large relative to input time 5"),
    ((2, 3, 10, 6, 7), 1, (10, 4, 5), (2, 3, 3), "float32", RuntimeError,
     "pool time 1 too large relative to input time 10"),
    ((2, 3, 5, 6, 7), 2, (3, 5, 5), (2, 3, 3), "float32", RuntimeError,
     "pool height 2 too large relative to input height 6"),
    ((2, 3, 5, 6, 7), 2, (3, 4, 6), (2, 3, 3), "float32", RuntimeError,
     "pool width 2 too large relative to input width 7"),
    ((2, 3, 5, 6, 7), (2, 2), (3, 4, 5), (2, 3, 3), "float32", RuntimeError,
     "fractional_max_pool3d: kernel_size must either be a single Int or tuple of three Ints"),
    ((2, 3, 5, 6, 7), 2, (3, 4), (2, 3, 3), "float32", RuntimeError,
     "fractional_max_pool3d: output_size must either be a single Int or tuple of three Ints"),
    ((2, 3, 5, 6, 7), 2, (3, 4, 5), (2, 3, 2), "float32", RuntimeError,
     r"Expect _random_samples.size\(2\) equals to 3; got 2."),
    ((5, 6, 7), 2, (3, 4, 5), (2, 3, 3), "float32", RuntimeError,
     r"fractional_max_pool3d_out\(\): Expected 4D or 5D tensor, but got: \[5, 6, 7\]"),
]


@pytest.mark.parametrize("case", [(2, *c) for c in ERRORS_2D] + [(3, *c) for c in ERRORS_3D],
                         ids=lambda c: c[-1][:40])
def test_errors_match_torch(case):
    d, shape, kernel, outs, samples_shape, samples_dtype, error, message = case
    for lib, functional in ((torch, TF), (gradkit, F)):
        with pytest.raises(error, match=message):
            getattr(functional, f"fractional_max_pool{d}d")(
                lib.zeros(shape), kernel, outs,
                _random_samples=_samples(lib, *samples_shape, dtype=samples_dtype))


@pytest.mark.parametrize("d", [2, 3])
def test_argument_and_dtype_errors_match_torch(d):
    shape = (1, 2) + (6,) * d
    name = f"fractional_max_pool{d}d"
    for lib, functional in ((torch, TF), (gradkit, F)):
        pool = getattr(functional, name)
        with pytest.raises(ValueError, match=f"{name} requires specifying either an "
                                             "output_size or an output_ratio"):
            pool(lib.zeros(shape), 2)
        with pytest.raises(NotImplementedError,
                           match=f"\"{name}_out_frame\" not implemented for 'Long'"):
            pool(lib.zeros(shape, dtype=lib.int64), 2, (2,) * d,
                 _random_samples=lib.zeros(1, 2, d, dtype=lib.int64))
        if d == 2:
            with pytest.raises(ValueError, match="requires output_ratio to either be a single "
                                                 "Int or tuple of Ints."):
                pool(lib.zeros(shape), 2, output_ratio=(0.5, 0.5, 0.5))
            with pytest.raises(TypeError, match="object of type 'float' has no len()"):
                pool(lib.zeros(shape), 2, output_ratio=0.5)  # torch's F takes no lone float


def test_zero_kernel_is_refused():
    """torch returns -inf at each window's start there; gradkit refuses it."""
    with pytest.raises(NotImplementedError, match="fractional_max_pool2d with a kernel_size "
                                                  "of 0 is not supported"):
        F.fractional_max_pool2d(gradkit.zeros(1, 1, 6, 6), (0, 2), output_size=3,
                                _random_samples=gradkit.rand(1, 1, 2))
