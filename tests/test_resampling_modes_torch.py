"""interpolate's modes torch computes and gradkit once refused, against torch: nearest-exact,
bicubic, area, and antialias (bilinear, bicubic, lanczos)."""
import itertools

import numpy as np
import pytest

import gradkit
import gradkit.nn.functional as F  # noqa: N812

torch = pytest.importorskip("torch")
TF = torch.nn.functional

from fuzz.opinfo_samples import differing_samples, op_db  # noqa: E402


def _pair(shape, dtype=np.float64, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (gradkit.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True))


def _same_forward_and_backward(run, shape, dtype=np.float64, rtol=1e-12):
    mine, theirs = _pair(shape, dtype)
    out, expected = run(F, mine), run(TF, theirs)
    assert tuple(out.shape) == tuple(expected.shape)
    assert str(out.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=rtol,
                               atol=rtol)
    weights = np.random.default_rng(1).standard_normal(tuple(expected.shape)).astype(dtype)
    (out * gradkit.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=rtol, atol=rtol)
    return out, expected


_RANKS = {"nearest-exact": (3, 4, 5), "area": (3, 4, 5), "bicubic": (4,)}
_SIZES = [dict(size=7), dict(size=2), dict(scale_factor=1.7), dict(scale_factor=0.6),
          dict(scale_factor=2.0), dict(scale_factor=1.7, recompute_scale_factor=True),
          dict(scale_factor=0.6, recompute_scale_factor=False)]


def _cases():
    for mode, ranks in _RANKS.items():
        aligns = (False, True) if mode == "bicubic" else (None,)
        for ndim, align, sizes in itertools.product(ranks, aligns, _SIZES):
            yield mode, ndim, align, sizes


@pytest.mark.parametrize("mode,ndim,align,sizes", list(_cases()))
def test_interpolate_modes_match_torch(mode, ndim, align, sizes):
    shape = (2, 3, 5, 4, 6)[:ndim]
    if ndim == 4 and "size" in sizes and sizes["size"] == 7:
        sizes = dict(size=(7, 3))  # a size per dim, one up one down
    _same_forward_and_backward(
        lambda f, x: f.interpolate(x, mode=mode, align_corners=align, **sizes), shape)


@pytest.mark.parametrize("mode", ["bicubic", "nearest-exact"])
def test_float32_rounds_as_torch(mode):
    _same_forward_and_backward(lambda f, x: f.interpolate(x, scale_factor=1.3, mode=mode),
                               (1, 2, 6, 5), np.float32, rtol=2e-6)


@pytest.mark.parametrize("mode,node", [("nearest-exact", "UpsampleNearestExact2DBackward0"),
                                       ("bicubic", "UpsampleBicubic2DBackward0"),
                                       ("area", "AdaptiveAvgPool2DBackward0")])
def test_one_node_named_as_torch(mode, node):
    out, expected = _same_forward_and_backward(
        lambda f, x: f.interpolate(x, size=(3, 5), mode=mode), (1, 2, 4, 4))
    assert type(out.grad_fn).__name__ == type(expected.grad_fn).__name__ == node


@pytest.mark.parametrize("mode,ndim", [("nearest-exact", 3), ("nearest-exact", 5),
                                       ("bicubic", 4), ("area", 3), ("area", 4)])
def test_gradcheck_and_gradgradcheck(mode, ndim):
    x = gradkit.tensor(np.random.default_rng(2).standard_normal((1, 2, 3, 4, 3)[:ndim]),
                       requires_grad=True)
    align = False if mode == "bicubic" else None

    def run(x):
        return F.interpolate(x, scale_factor=1.5, mode=mode, align_corners=align)
    assert gradkit.autograd.gradcheck(run, (x,))
    assert gradkit.autograd.gradgradcheck(run, (x,))


@pytest.mark.parametrize("mode", ["nearest-exact", "bicubic", "area"])
def test_upsample_layers_with_the_new_modes(mode):
    _same_forward_and_backward(
        lambda f, x: (gradkit.nn if f is F else torch.nn).Upsample(
            scale_factor=1.5, mode=mode)(x), (1, 2, 3, 4))


def _raised(run, module):
    with pytest.raises(Exception) as info:
        run(module)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("mode,ndim,kwargs,dtype", [
    ("area", 4, dict(align_corners=True), np.float64),
    ("nearest-exact", 4, dict(align_corners=False), np.float64),
    ("bicubic", 3, {}, np.float64),
    ("bicubic", 5, {}, np.float64),
    ("bicubic", 4, dict(antialias=False), np.int64),
    ("nearest-exact", 4, {}, np.int32),
    ("area", 3, dict(antialias=True), np.float64),
    ("bicubic", 4, dict(recompute_scale_factor=True, size=3), np.float64),
    ("nearest-exact", 4, dict(size=(0, 3)), np.float64),
])
def test_interpolate_mode_errors_match_torch(mode, ndim, kwargs, dtype):
    data = np.ones((1, 2, 3, 3, 3)[:ndim], dtype=dtype)
    kwargs = {"scale_factor": 2, **kwargs} if "size" not in kwargs else kwargs
    expected = _raised(lambda f: f.interpolate(torch.tensor(data) if f is TF else
                                               gradkit.tensor(data), mode=mode, **kwargs), TF)
    got = _raised(lambda f: f.interpolate(gradkit.tensor(data), mode=mode, **kwargs), F)
    assert got == expected


_AA_SIZES = [dict(size=(4, 5)), dict(size=(13, 17)), dict(scale_factor=0.37),
             dict(scale_factor=1.6), dict(size=(9, 3)),
             dict(scale_factor=0.5, recompute_scale_factor=True)]


@pytest.mark.parametrize("mode,align", [("bilinear", False), ("bilinear", True),
                                        ("bicubic", False), ("bicubic", True),
                                        ("lanczos", False)])
@pytest.mark.parametrize("sizes", _AA_SIZES)
def test_antialias_matches_torch(mode, align, sizes):
    _same_forward_and_backward(lambda f, x: f.interpolate(
        x, mode=mode, align_corners=align, antialias=True, **sizes), (1, 2, 9, 11))


@pytest.mark.parametrize("mode,node", [("bilinear", "UpsampleBilinear2DAaBackward0"),
                                       ("bicubic", "UpsampleBicubic2DAaBackward0"),
                                       ("lanczos", "UpsampleLanczos2DAaBackward0")])
def test_antialias_node_and_float32(mode, node):
    out, expected = _same_forward_and_backward(lambda f, x: f.interpolate(
        x, size=(5, 4), mode=mode, antialias=True), (1, 2, 9, 11), np.float32, rtol=2e-6)
    assert type(out.grad_fn).__name__ == type(expected.grad_fn).__name__ == node


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_gradcheck_and_gradgradcheck(mode):
    x = gradkit.tensor(np.random.default_rng(6).standard_normal((1, 1, 6, 5)),
                       requires_grad=True)

    def run(x):
        return F.interpolate(x, size=(3, 7), mode=mode, antialias=True)
    assert gradkit.autograd.gradcheck(run, (x,))
    assert gradkit.autograd.gradgradcheck(run, (x,))


@pytest.mark.parametrize("ndim,kwargs,dtype", [
    (4, dict(mode="lanczos", align_corners=True, antialias=True), np.float64),
    (4, dict(mode="lanczos"), np.float64),
    (3, dict(mode="lanczos"), np.float64),
    (3, dict(mode="lanczos", antialias=True), np.float64),
    (4, dict(mode="lanczos", antialias=True), np.int64),
    (4, dict(mode="bilinear", antialias=True), np.int64),
])
def test_antialias_errors_match_torch(ndim, kwargs, dtype):
    data = np.ones((1, 2, 5, 5)[:ndim], dtype=dtype)
    size = (3, 3)[:ndim - 2]
    expected = _raised(lambda f: f.interpolate(torch.tensor(data), size=size, **kwargs), TF)
    got = _raised(lambda f: f.interpolate(gradkit.tensor(data), size=size, **kwargs), F)
    assert got == expected


_INTERPOLATE = [o for o in op_db if o.name == "nn.functional.interpolate"
                and o.variant_test_name in ("nearest-exact", "bicubic", "area")]


@pytest.mark.parametrize("opinfo", _INTERPOLATE, ids=lambda o: o.variant_test_name)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_torch_samples_of_the_modes_agree(opinfo, dtype):
    differing = differing_samples(opinfo, [getattr(torch, dtype)], ("op",))
    assert not differing, differing
