"""torch's test_nn.py (characters 320k-480k): test_interpolate, the upsampling tests of
TestNNDeviceType and the affine_grid + grid_sample rotations, each program run under gradkit
and torch 2.13 (the rotations also against scipy's affine_transform where torch's test uses it).
"""
import math

import numpy as np
import pytest

from tests.nn_torch_programs import grads, leaf
from tests.tensor_twins import data, same_as_torch

LINEAR_MODES = {1: "linear", 2: "bilinear", 3: "trilinear"}


def _interpolate_case(m, dim, scale, kwargs):
    f = m.nn.functional
    x = m.ones(1, 1, *[2] * dim, dtype=m.float64, requires_grad=True)
    out_size = int(math.floor(2 * scale))
    layer = (m.nn.Upsample(scale_factor=scale, **kwargs)
             if kwargs["mode"] != "bicubic" else
             (lambda t: f.interpolate(t, scale_factor=scale, **kwargs)))
    y = layer(x)
    check = m.autograd.gradcheck(lambda t: f.interpolate(t, out_size, **kwargs), (x,))
    check2 = m.autograd.gradgradcheck(lambda t: f.interpolate(t, out_size, **kwargs), (x,))
    bad = []
    for size in (float(out_size), m.tensor(out_size, dtype=m.float32)):
        try:
            f.interpolate(x, size=(size,) * dim, **kwargs)
        except TypeError as error:
            bad.append(str(error).split("\n")[0])
    return (y, f.interpolate(x, (out_size,) * dim, **kwargs),
            f.interpolate(x, scale_factor=scale, **kwargs), check, check2, bad)


@pytest.mark.parametrize("scale", [0.5, 1.5, 2])
@pytest.mark.parametrize("mode, dim", [("nearest", 1), ("nearest", 2), ("nearest", 3),
                                       ("area", 1), ("area", 2), ("area", 3)])
def test_interpolate_nearest_and_area(mode, dim, scale):
    got = same_as_torch(lambda m: _interpolate_case(m, dim, scale, {"mode": mode}))
    assert got[3] is True and got[4] is True and len(got[5]) == 2
    np.testing.assert_array_equal(got[0][3], 1.0)


@pytest.mark.parametrize("scale", [0.5, 1.5, 2])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("mode, dim", [("linear", 1), ("bilinear", 2), ("bicubic", 2),
                                       ("trilinear", 3)])
def test_interpolate_linear_modes(mode, dim, scale, align_corners):
    kwargs = {"mode": mode, "align_corners": align_corners}
    got = same_as_torch(lambda m: _interpolate_case(m, dim, scale, kwargs))
    assert got[3] is True and got[4] is True
    assert all("expected size to be one of int or" in text for text in got[5])


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_upsampling_nearest(mode, dim):
    def program(m):
        f = m.nn.functional
        fmt = {2: m.channels_last, 3: m.channels_last_3d}.get(dim)
        x = m.ones(1, 2, *[2] * dim, dtype=m.float64)
        if fmt is not None:
            x = x.contiguous(memory_format=fmt)
        x.requires_grad_()
        y = m.nn.Upsample(size=4, mode=mode)(x)
        y8 = m.nn.Upsample(size=4, mode=mode)(m.ones(1, 2, *[2] * dim, dtype=m.uint8))
        y.backward(m.tensor(data(*y.shape)))
        layout = [] if fmt is None else [y.is_contiguous(memory_format=fmt),
                                         x.grad.is_contiguous(memory_format=fmt)]
        up, down = leaf(m, 1, 1, *[2] * dim), leaf(m, 1, 1, *[5] * dim)
        checks = [m.autograd.gradcheck(lambda t: f.interpolate(t, 4, mode=mode), (up,)),
                  m.autograd.gradgradcheck(lambda t: f.interpolate(t, 4, mode=mode), (up,)),
                  m.autograd.gradcheck(lambda t: f.interpolate(t, 3, mode=mode), (down,))]
        same = [f.interpolate(up, 4, mode=mode), f.interpolate(up, scale_factor=2, mode=mode)]
        return y, y8, x.grad, layout, checks, same
    got = same_as_torch(program)
    assert all(got[3]) and all(got[4])


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("isize, osize", [(20, 11), (10, 15)])
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_upsampling_nearest_correctness(mode, isize, osize, dim):
    """OpenCV's INTER_NEAREST (nearest) and scikit-image's (nearest-exact) source indices."""
    def program(m):
        x = m.arange(isize ** dim, dtype=m.float32).reshape(1, 1, *[isize] * dim)
        return m.nn.functional.interpolate(x, size=(osize,) * dim, mode=mode,
                                           recompute_scale_factor=False)
    got = same_as_torch(program, rtol=0, atol=0)
    shift = 0.5 if mode == "nearest-exact" else 0.0
    index = [int((o + shift) * (isize / osize)) for o in range(osize)]
    expected = np.arange(isize ** dim, dtype=np.float32).reshape([isize] * dim)
    for axis in range(dim):
        expected = np.take(expected, index, axis=axis)
    np.testing.assert_array_equal(got[3][0, 0], expected)


def test_upsampling_nearest_exact_rescale():
    def program(m):
        x = m.arange(20, dtype=m.float32)[None, None]
        return [m.nn.functional.interpolate(x, scale_factor=s, mode="nearest-exact",
                                            recompute_scale_factor=False)
                for s in (1.00001, 2.00001)]
    got = same_as_torch(program, rtol=0, atol=0)
    np.testing.assert_array_equal(got[0][3][0, 0], np.arange(20))
    np.testing.assert_array_equal(got[1][3][0, 0], np.repeat(np.arange(20), 2))


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("channels_last", [False, True])
def test_upsampling_bi_mode_2d(antialias, align_corners, mode, channels_last):
    def program(m):
        f = m.nn.functional
        kwargs = {"mode": mode, "align_corners": align_corners, "antialias": antialias}
        fmt = m.channels_last if channels_last else m.contiguous_format
        out = []
        for scale in (0.5, 1.5, 2):
            x = m.ones(2, 3, 8, 8, dtype=m.float64).contiguous(memory_format=fmt)
            x.requires_grad_()
            y = f.interpolate(x, scale_factor=scale, **kwargs)
            y.backward(m.tensor(data(*y.shape)))
            out += [y, y.is_contiguous(memory_format=fmt), x.grad.is_contiguous(
                memory_format=fmt), x.grad]
        size = 4
        r = m.tensor(data(1, 2, 5, 5)).contiguous(memory_format=fmt).requires_grad_()
        out.append(m.autograd.gradcheck(lambda t: f.interpolate(t, size, **kwargs), (r,)))
        return out
    got = same_as_torch(program, rtol=1e-9, atol=1e-12)
    assert all(v is True for v in got[1::4]) and got[-1] is True


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float32",
                                   "float64"])
@pytest.mark.parametrize("antialias", [True, False])
def test_upsampling_bi_mode_2d_nonsupported_dtypes(mode, dtype, antialias):
    if "nearest" in mode and antialias:
        pytest.skip("nearest modes have no antialiasing (torch's test skips it too)")
    got = same_as_torch(lambda m: m.nn.functional.interpolate(
        m.ones(1, 3, 32, 32, dtype=getattr(m, dtype)), (12, 12), mode=mode,
        antialias=antialias).shape)
    supported = dtype.startswith("float") or dtype == "uint8"
    assert (got[0] != "raises") == supported
    if not supported:
        assert "not implemented for" in got[2]


@pytest.mark.parametrize("mode, expected", [
    ("bilinear", [17.035713, 20.25, 42.75, 45.964287, 81.03572, 84.25, 106.75, 109.96428,
                  145.0357, 148.25, 170.75, 173.9643]),
    ("bicubic", [15.1205635, 18.760439, 44.23956, 47.879436, 79.12056, 82.76044, 108.23956,
                 111.87944, 143.12057, 146.76044, 172.23956, 175.87943])])
@pytest.mark.parametrize("channels_last", [False, True])
def test_upsampling_antialias_matches_pil(mode, expected, channels_last):
    def program(m):
        x = m.arange(3 * 8 * 8, dtype=m.float32).reshape(1, 3, 8, 8).expand(5, 3, 8, 8)
        if channels_last:
            x = x.contiguous(memory_format=m.channels_last)
        return m.nn.functional.interpolate(x, size=(2, 2), mode=mode, align_corners=False,
                                           antialias=True)
    got = same_as_torch(program, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(got[3], np.broadcast_to(
        np.array(expected, dtype=np.float32).reshape(1, 3, 2, 2), (5, 3, 2, 2)), rtol=1.3e-6,
        atol=1e-5)


def test_upsampling_bicubic_matches_opencv():
    got = same_as_torch(lambda m: m.nn.functional.interpolate(
        m.arange(8.).view(1, 2, 2, 2), scale_factor=2, mode="bicubic", align_corners=False))
    np.testing.assert_allclose(got[3][0, 0, 0], [-0.31641, 0.01562, 0.56250, 0.89453],
                               atol=1e-5)


@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("sizes", [(19, 23), (21, 17)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_upsampling_bilinear_uint8_near_float(align_corners, sizes, channels_last):
    """torch's test_upsamplingBiLinear2d_consistency_interp_size_bug at a small size."""
    def program(m):
        isize, osize = sizes
        x = m.tensor(np.random.default_rng(0).integers(0, 256, (1, 3, isize, isize)),
                     dtype=m.uint8)
        if channels_last:
            x = x.contiguous(memory_format=m.channels_last)
        kwargs = {"size": (osize, osize), "mode": "bilinear", "align_corners": align_corners}
        return (m.nn.functional.interpolate(x.float(), **kwargs).round().to(m.uint8),
                m.nn.functional.interpolate(x, **kwargs))
    got = same_as_torch(program, rtol=0, atol=0)
    assert np.abs(got[0][3].astype(int) - got[1][3].astype(int)).max() <= 1


@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("channels_last", [False, True])
def test_upsampling_trilinear_3d(align_corners, channels_last):
    def program(m):
        f = m.nn.functional
        kwargs = {"mode": "trilinear", "align_corners": align_corners}
        fmt = m.channels_last_3d if channels_last else m.contiguous_format
        out = []
        for scale in (0.5, 1.5, 2):
            x = m.ones(1, 2, 4, 4, 4, dtype=m.float64).contiguous(memory_format=fmt)
            x.requires_grad_()
            y = m.nn.Upsample(scale_factor=scale, **kwargs)(x)
            g = m.tensor(data(*y.shape)).contiguous(memory_format=fmt)
            y.backward(g)
            size = int(math.floor(4 * scale))
            r = leaf(m, 1, 2, 4, 4, 4)
            out += [y, y.is_contiguous(memory_format=fmt), x.grad,
                    x.grad.is_contiguous(memory_format=fmt),
                    f.interpolate(r, (size,) * 3, **kwargs),
                    f.interpolate(r, scale_factor=scale, **kwargs)]
        small = leaf(m, 1, 1, 2, 3, 2)
        out.append(m.autograd.gradcheck(lambda t: f.interpolate(t, 3, **kwargs), (small,)))
        return out
    got = same_as_torch(program, rtol=1e-9, atol=1e-12)
    assert all(v is True for v in got[1::6] + got[3::6]) and got[-1] is True


def _rotation_2d(m, angle):
    c, s = math.cos(angle), math.sin(angle)
    return m.tensor([[[c, -s, 0.0], [s, c, 0.0]]], dtype=m.float32)


@pytest.mark.parametrize("angle", [0.0, 0.25 * math.pi * 2, 0.125 * math.pi * 2, 1.3])
@pytest.mark.parametrize("in_size, out_size", [((1, 1, 3, 3), (1, 1, 5, 5)),
                                               ((1, 1, 4, 4), (1, 1, 4, 4)),
                                               ((1, 1, 3, 5), (1, 1, 5, 3))])
def test_affine_2d_rotate(angle, in_size, out_size):
    """torch's test_affine_2d_rotate*: affine_grid + grid_sample (border, align_corners)."""
    def program(m):
        x = m.tensor(np.random.default_rng(0).random(in_size), dtype=m.float32)
        grid = m.nn.functional.affine_grid(_rotation_2d(m, angle), m.Size(out_size),
                                           align_corners=True)
        return grid, m.nn.functional.grid_sample(x, grid, padding_mode="border",
                                                 align_corners=True)
    same_as_torch(program, rtol=1e-5, atol=1e-6)


def test_affine_2d_rotate90_against_scipy():
    scipy_ndimage = pytest.importorskip("scipy.ndimage")

    def program(m):
        x = m.tensor(np.random.default_rng(0).random((1, 1, 4, 4)), dtype=m.float32)
        grid = m.nn.functional.affine_grid(_rotation_2d(m, math.pi / 2), m.Size((1, 1, 4, 4)),
                                           align_corners=True)
        return m.nn.functional.grid_sample(x, grid, padding_mode="border", align_corners=True)
    got = same_as_torch(program, rtol=1e-6, atol=1e-6)
    x = np.random.default_rng(0).random((4, 4)).astype(np.float32)
    # a quarter turn about the centre, as scipy maps output to input coordinates
    matrix = np.array([[0.0, 1.0], [-1.0, 0.0]])
    offset = np.array([1.5, 1.5]) - matrix @ np.array([1.5, 1.5])
    expected = scipy_ndimage.affine_transform(x, matrix, offset=offset, order=1, mode="nearest")
    np.testing.assert_allclose(got[3][0, 0], expected, atol=1e-5)


@pytest.mark.parametrize("axis", [(1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.3, 0.5, 0.81)])
@pytest.mark.parametrize("in_size, out_size", [((1, 1, 2, 3, 4), (1, 1, 3, 4, 5)),
                                               ((1, 1, 3, 3, 3), (1, 1, 2, 2, 2))])
def test_affine_3d_rotate(axis, in_size, out_size):
    def program(m):
        z, y, x = np.array(axis) / np.linalg.norm(axis)
        c, s = math.cos(0.7), math.sin(0.7)
        c1 = 1 - c
        rotation = [[x * x * c1 + c, y * x * c1 - z * s, z * x * c1 + y * s, 0],
                    [x * y * c1 + z * s, y * y * c1 + c, z * y * c1 - x * s, 0],
                    [x * z * c1 - y * s, y * z * c1 + x * s, z * z * c1 + c, 0]]
        inp = m.tensor(np.random.default_rng(0).random(in_size), dtype=m.float32)
        grid = m.nn.functional.affine_grid(m.tensor([rotation], dtype=m.float32),
                                           m.Size(out_size), align_corners=True)
        return grid, m.nn.functional.grid_sample(inp, grid, padding_mode="border",
                                                 align_corners=True)
    same_as_torch(program, rtol=1e-5, atol=1e-6)


def test_interpolate_gradient_of_linear_modes_matches():
    def program(m):
        x = leaf(m, 2, 3, 5, 6)
        y = m.nn.functional.interpolate(x, size=(7, 4), mode="bicubic", align_corners=False)
        return y, grads(m, y, [x])
    same_as_torch(program, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode, dim, kwargs", [
    ("nearest", 1, {}), ("nearest", 2, {}), ("nearest-exact", 2, {}), ("linear", 1, {}),
    ("bilinear", 2, {}), ("bicubic", 2, {}), ("trilinear", 3, {}), ("area", 2, {}),
    ("bilinear", 2, {"antialias": True}), ("bicubic", 2, {"antialias": True})])
@pytest.mark.parametrize("size", ["float", "float tensor", "int tensor"])
def test_interpolate_scalar_size_kinds(mode, dim, kwargs, size):
    """One size for every dim: an int tensor is a size, a float (or float tensor) is refused
    by the kernel's parser, in its words (gradkit raised "'float' object is not iterable")."""
    def program(m):
        value = {"float": 3.0, "float tensor": m.tensor(3.0), "int tensor": m.tensor(3)}[size]
        return m.nn.functional.interpolate(m.ones(1, 1, *[2] * dim), size=value, mode=mode,
                                           **kwargs).shape
    got = same_as_torch(program)
    assert (got[0] == "raises") == (size != "int tensor")
