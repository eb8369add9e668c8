"""grid_sample's bicubic mode and 5-D volumes (trilinear, nearest), against torch: values,
gradients w.r.t. the input and the grid, node names and errors."""
import itertools

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

from fuzz.opinfo_samples import differing_samples, op_db  # noqa: E402


def _inputs(ndim, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    image = rng.standard_normal((2, 3, 4, 5, 6)[:2] + (4, 5, 6)[5 - ndim:]).astype(dtype)
    points = (2, 3, 4, 2)[:ndim - 1] if ndim == 4 else (2, 2, 3, 2)
    grid = rng.uniform(-1.3, 1.3, points + (ndim - 2,)).astype(dtype)
    return image, grid


def _run(lib, image, grid, **kwargs):
    x = lib.tensor(image, requires_grad=True)
    g = lib.tensor(grid, requires_grad=True)
    out = lib.nn.functional.grid_sample(x, g, **kwargs)
    weights = np.random.default_rng(3).standard_normal(tuple(out.shape)).astype(image.dtype)
    (out * lib.tensor(weights)).sum().backward()
    return out, [t.detach().numpy() for t in (out, x.grad, g.grad)]


_CASES = [(ndim, mode, padding, align)
          for ndim, mode in ((4, "bicubic"), (5, "bilinear"), (5, "nearest"))
          for padding, align in itertools.product(("zeros", "border", "reflection"),
                                                  (False, True))]


@pytest.mark.parametrize("ndim,mode,padding,align", _CASES)
def test_modes_match_torch(ndim, mode, padding, align):
    image, grid = _inputs(ndim)
    kwargs = dict(mode=mode, padding_mode=padding, align_corners=align)
    out, got = _run(gradkit, image, grid, **kwargs)
    expected_out, expected = _run(torch, image, grid, **kwargs)
    for mine, theirs in zip(got, expected, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)
    assert type(out.grad_fn).__name__ == type(expected_out.grad_fn).__name__ == \
        f"GridSampler{ndim - 2}DBackward0"


@pytest.mark.parametrize("ndim,mode", [(4, "bicubic"), (4, "bilinear"), (5, "bilinear")])
def test_float32_rounds_as_torch(ndim, mode):
    image, grid = _inputs(ndim, np.float32, seed=5)
    image = image * 255  # large values: a coordinate's rounding shows
    kwargs = dict(mode=mode, padding_mode="zeros", align_corners=False)
    for mine, theirs in zip(_run(gradkit, image, grid, **kwargs)[1],
                            _run(torch, image, grid, **kwargs)[1], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("ndim,mode,padding", [(4, "bicubic", "zeros"),
                                               (4, "bicubic", "reflection"),
                                               (5, "bilinear", "border"),
                                               (5, "nearest", "zeros")])
def test_gradcheck_and_gradgradcheck(ndim, mode, padding):
    image, grid = _inputs(ndim, seed=2)
    x = gradkit.tensor(image[:1, :1], requires_grad=True)
    g = gradkit.tensor(grid[:1, :1] * 0.9, requires_grad=True)

    def run(x, g):
        return gradkit.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding,
                                                 align_corners=False)
    assert gradkit.autograd.gradcheck(run, (x, g))
    assert gradkit.autograd.gradgradcheck(run, (x, g))


def test_bicubic_volume_is_refused_as_torch():
    image, grid = _inputs(5)
    messages = []
    for lib in (torch, gradkit):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.grid_sample(lib.tensor(image), lib.tensor(grid), mode="bicubic",
                                          align_corners=False)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == \
        "grid_sampler(): bicubic interpolation only supports 4D input"


_GRID = [o for o in op_db if o.name in ("nn.functional.grid_sample", "grid_sampler_2d",
                                        "grid_sampler_3d")]


@pytest.mark.parametrize("opinfo", _GRID, ids=lambda o: o.name)
def test_torch_samples_agree(opinfo):
    # float32 with the reference inputs too: large images, where float32's rounding shows
    differing = differing_samples(opinfo, [torch.float64], ("op",)) + differing_samples(
        opinfo, [torch.float32], ("op",), reference=True)
    assert not differing, differing
