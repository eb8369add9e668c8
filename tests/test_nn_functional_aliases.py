"""nn.functional's other spellings against torch: the ``*_with_indices`` pools (values and
indices whatever ``return_indices`` says), the deprecated ``upsample*`` (interpolate with
torch's warning) and ``native_channel_shuffle`` (channel_shuffle's values, a node that refuses
backward and forward AD). Values and gradients of the pools and upsample* are op_db rows."""
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)


@pytest.mark.parametrize("name, shape, args", [
    ("max_pool1d_with_indices", (1, 2, 6), (2, None, 0, 1, False, False)),
    ("max_pool2d_with_indices", (1, 1, 4, 4), (2,)),
    ("max_pool3d_with_indices", (1, 1, 2, 4, 4), (2,)),
    ("adaptive_max_pool1d_with_indices", (1, 2, 6), (3, False)),
    ("adaptive_max_pool2d_with_indices", (1, 2, 4, 4), ((2, 3),)),
    ("adaptive_max_pool3d_with_indices", (2, 3, 4, 4), (2, False)),
])
def test_with_indices_pools_return_values_and_indices_as_torch(name, shape, args):
    x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(float)
    found = []
    for lib in (torch, gradkit):
        values, indices = getattr(lib.nn.functional, name)(lib.tensor(x), *args)
        found.append((values.tolist(), indices.tolist(), str(indices.dtype).split(".")[-1]))
    assert found[1] == found[0]


@pytest.mark.parametrize("dims", [2, 3])
def test_fractional_with_indices_returns_both_even_when_told_not_to(dims):
    shape = (1, 2) + (5,) * dims
    x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(float)
    samples = rng.random((1, 2, dims))
    found = []
    for lib in (torch, gradkit):
        function = getattr(lib.nn.functional, f"fractional_max_pool{dims}d_with_indices")
        values, indices = function(lib.tensor(x), 2, 3, None, False, lib.tensor(samples))
        found.append((values.tolist(), indices.tolist()))
    assert found[1] == found[0]


def test_fractional_with_indices_errors_as_torch():
    found = []
    for lib in (torch, gradkit):
        with pytest.raises(ValueError) as info:
            lib.nn.functional.fractional_max_pool2d_with_indices(lib.ones(1, 1, 4, 4), 2)
        found.append(str(info.value))
    assert found[1] == found[0]


@pytest.mark.parametrize("name, args, kwargs", [
    ("upsample", ((1, 2, 3), None, 2), {}),
    ("upsample", ((1, 1, 3, 2), (4, 5), None, "bilinear"), {"align_corners": False}),
    ("upsample_nearest", ((1, 1, 2, 3), (3, 5)), {}),
    ("upsample_nearest", ((1, 1, 2, 2, 3),), {"scale_factor": 2}),
    ("upsample_bilinear", ((1, 1, 3, 2), None, 2), {}),
])
def test_upsample_warns_and_interpolates_as_torch(name, args, kwargs):
    x = rng.standard_normal(args[0])
    found = []
    for lib in (torch, gradkit):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.functional, name)(lib.tensor(x), *args[1:], **kwargs)
        found.append(([(w.category, str(w.message), w.filename) for w in caught],
                      np.round(out.numpy(), 12).tolist()))
    assert found[1] == found[0]
    assert found[0][0][0][2] == __file__  # stacklevel: the warning points at the caller


def test_native_channel_shuffle_values_match_torch():
    x = rng.standard_normal((2, 6, 3))
    found = [lib.nn.functional.native_channel_shuffle(lib.tensor(x), 3).numpy()
             for lib in (torch, gradkit)]
    np.testing.assert_array_equal(found[1], found[0])
    np.testing.assert_array_equal(
        found[1], gradkit.nn.functional.channel_shuffle(gradkit.tensor(x), 3).numpy())


def test_native_channel_shuffle_refuses_backward_as_torch():
    found = []
    for lib in (torch, gradkit):
        x = lib.ones(1, 4, 2, requires_grad=True)
        out = lib.nn.functional.native_channel_shuffle(x, 2)
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        found.append((out.requires_grad, out.grad_fn.name().split("::")[-1], str(info.value)))
    assert found[1] == found[0]
    assert gradkit.native_channel_shuffle is gradkit.nn.functional.native_channel_shuffle


def test_native_channel_shuffle_refuses_forward_ad_as_torch():
    found = []
    for lib in (torch, gradkit):
        forward_ad = lib.autograd.forward_ad
        with forward_ad.dual_level():
            x = forward_ad.make_dual(lib.ones(1, 4, 2), lib.ones(1, 4, 2))
            with pytest.raises(NotImplementedError) as info:
                lib.nn.functional.native_channel_shuffle(x, 2)
        found.append(str(info.value))
    assert found[1] == found[0]


@pytest.mark.parametrize("shape, groups", [((2, 3), 3), ((1, 4, 2), 3), ((1, 4, 2), 0),
                                           ((1, 4, 2), -1)])
@pytest.mark.parametrize("name", ["native_channel_shuffle", "channel_shuffle"])
def test_channel_shuffle_errors_match_torch(name, shape, groups):
    found = []
    for lib in (torch, gradkit):
        with pytest.raises(RuntimeError) as info:
            getattr(lib.nn.functional, name)(lib.ones(*shape), groups)
        found.append(str(info.value))
    assert found[1] == found[0]


# -- nn.init's deprecated spellings ----------------------------------------------------------

INIT_CALLS = {  # name: (shape, args)
    "uniform": ((3, 4), (-0.5, 0.5)), "normal": ((3, 4), (0.0, 2.0)),
    "constant": ((3, 4), (0.25,)), "eye": ((3, 4), ()), "dirac": ((4, 2, 3), ()),
    "xavier_uniform": ((3, 4), (1.5,)), "xavier_normal": ((3, 4), ()),
    "kaiming_uniform": ((3, 4), (0.1,)), "kaiming_normal": ((3, 4), (0.0, "fan_out")),
    "orthogonal": ((3, 4), ()), "sparse": ((4, 3), (0.5,)),
}


@pytest.mark.parametrize("name", sorted(INIT_CALLS))
def test_deprecated_init_spellings_warn_and_initialize_as_the_new_ones(name):
    shape, args = INIT_CALLS[name]
    found = []
    for lib in (torch, gradkit):
        init = lib.nn.init
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tensor = lib.empty(*shape)
            result = getattr(init, name)(tensor, *args)
        found.append(([(w.category, str(w.message), w.filename) for w in caught],
                      result is tensor, getattr(init, name).__name__))
    assert found[1] == found[0]
    assert found[0][0][0][2] == __file__
    gradkit.manual_seed(3)
    with pytest.warns(FutureWarning):
        old = getattr(gradkit.nn.init, name)(gradkit.empty(*shape), *args)
    gradkit.manual_seed(3)
    new = getattr(gradkit.nn.init, name + "_")(gradkit.empty(*shape), *args)
    np.testing.assert_array_equal(old.numpy(), new.numpy())
