"""Spatial transformers: affine_grid (a grid of sampling points from affine matrices) and
grid_sample (the input read at those points: bilinear, nearest or bicubic, 4-D inputs, or
trilinear and nearest, 5-D volumes).

affine_grid is one op, linear in theta (torch's AffineGridGeneratorBackward0). grid_sample is
composed of gradkit ops following torch's kernel step by step (unnormalize, pad by clipping or
reflecting, then gather the corners and weight them), so its gradients w.r.t. the input and
the grid, and their derivatives, are torch's; its nodes are those of the composing ops.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.ops._op import op
from gradkit.ops.fused import fused_multiply_add
from gradkit.ops.indexing import gather
from gradkit.ops.linalg import matmul
from gradkit.ops.grad_edges import refuse_tangents
from gradkit.ops.one_node import one_node
from gradkit.ops.piecewise import where
from gradkit.ops.shape import reshape, transpose
from gradkit.ops.unary_helpers import kernel_error, scalar_type_name

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def _default_align(align_corners) -> bool:
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return align_corners


def _base_grid(spatial: tuple, align_corners: bool, dtype, xp):
    """(prod(spatial), d + 1) rows (x, y[, z], 1): torch's base grid, x along the last dim."""
    axes = []
    for steps in spatial:
        line = np.linspace(-1.0, 1.0, steps) if steps > 1 else np.zeros(steps)
        axes.append(line if align_corners or steps <= 1 else line * (steps - 1) / steps)
    mesh = np.meshgrid(*axes, indexing="ij")[::-1]  # x (last dim) first
    rows = np.stack([m.reshape(-1) for m in mesh] + [np.ones(mesh[0].size)], axis=-1)
    return xp.asarray(rows.astype(dtype))


@op(save=("theta.shape",), node_name="AffineGridGeneratorBackward0")
def affine_grid_op(xp, theta, *, size=(), align_corners=False):
    """The sampling grid (N, *spatial, d) of the affine matrices theta (N, d, d + 1)."""
    base = _base_grid(tuple(size[2:]), align_corners, theta.dtype, xp)
    return (base @ xp.swapaxes(theta, 1, 2)).reshape((theta.shape[0], *size[2:], len(size) - 2))


def _affine_grid_grad(g, theta_shape, size, align_corners):
    xp = get_array_module(getattr(g, "_data", g))
    base = _base_grid(tuple(size[2:]), align_corners, g.dtype, xp)
    rows = reshape(g, (theta_shape[0], -1, len(size) - 2))
    return matmul(transpose(rows, 1, 2), base)


affine_grid_op.defvjp(_affine_grid_grad)
affine_grid_op.defjvp(lambda t, theta_shape, size, align_corners:
                      affine_grid_op(t, size=size, align_corners=align_corners))


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """A sampling grid for grid_sample from affine matrices: theta (N, 2, 3) with
    size (N, C, H, W), or theta (N, 3, 4) with size (N, C, D, H, W)."""
    align_corners = _default_align(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    d = len(size) - 2
    if d not in (2, 3):
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if theta.ndim != 3 or tuple(theta.shape[-2:]) != (d, d + 1):
        raise ValueError(f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for "
                         f"size {size}. Got {theta.shape}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", UserWarning,
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {d + 1}] but got: [{theta.shape[0]}, {d + 1}].")
    return affine_grid_op(theta, size=tuple(size), align_corners=align_corners)


# -- grid_sample ---------------------------------------------------------------------------

def _source_index(coord, size: int, padding_mode: str, align_corners: bool, planar: bool):
    """torch's grid_sampler_compute_source_index: from [-1, 1] to pixel coordinates."""
    return _padded(_unnormalize(coord, size, align_corners, planar), size, padding_mode,
                   align_corners)


def _unnormalize(coord, size: int, align_corners: bool, planar: bool):
    """[-1, 1] to pixel coordinates, rounded as torch: its 2-D CPU kernel (vectorized)
    multiplies by a scaling factor, its 3-D kernel is grid_sampler_unnormalize."""
    if planar:
        if align_corners:
            return (coord + 1) * ((size - 1) / 2)
        shifted = coord + 1
        plain = shifted * (size / 2) - 0.5
        # the value rounded once, as the kernel's fused multiply-add; the gradient plain's
        xp = get_array_module(plain._data)
        data = shifted._data
        fused = fused_multiply_add(xp, data, xp.asarray(size / 2, dtype=data.dtype),
                                   xp.asarray(-0.5, dtype=data.dtype))
        correction = xp.where(xp.isfinite(fused), fused - plain._data, 0).astype(data.dtype)
        return plain + Tensor._make(correction)
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _padded(coord, size: int, padding_mode: str, align_corners: bool):
    """torch's compute_coordinates: a pixel coordinate clipped (border) or reflected into the
    input (reflection), or left as it is (zeros)."""
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        return _clip(_reflect(coord, low, high), size)
    return coord


def _clip(coord, size: int):
    """torch's clip_coordinates: the value clamped to [0, size - 1]; the gradient multiplied
    by 0 on and beyond the borders (so a NaN gradient stays NaN there, also at an infinite
    coordinate: nan_to_num's gradient is g times 0 there), by 1 inside."""
    value = coord.detach().clamp(0, size - 1)
    inside = ((value > 0) & (value < size - 1)).to(coord.dtype)
    finite = coord.nan_to_num()
    return value + (finite - finite.detach()) * inside  # (0, gradient 1)


def _reflect(coord, twice_low: int, twice_high: int):
    """torch's reflect_coordinates: fold ``coord`` into [low, high] by mirroring."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    extra = distance.fmod(span)
    flips = (distance.detach() / span).floor()
    return where(flips.fmod(2) == 0, extra + low, span - extra + low)


def _read(flat, coords, sizes):
    """flat (N, C, prod(sizes)) at integer-valued pixel positions ``coords`` (x, y[, z], each
    (N, *out)), ``sizes`` the input's spatial sizes (D,) H, W: zeros outside."""
    inside = None
    index = 0
    stride = 1
    for coord, size in zip(coords, reversed(sizes), strict=True):
        within = (coord >= 0) & (coord <= size - 1)
        inside = within if inside is None else inside & within
        stride_of = stride
        stride *= size
        index = index + coord * stride_of
    n, c = flat.shape[:2]
    # a point outside (or NaN) reads pixel 0, whose value the caller masks out
    index = where(inside, index, 0).long()
    points = int(np.prod(coords[0].shape[1:]))  # (not -1: an empty batch leaves it open)
    index = reshape(index, (n, 1, points)).expand(n, c, points)
    values = reshape(gather(flat, 2, index), (n, c) + tuple(coords[0].shape[1:]))
    return values, inside.unsqueeze(1)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """``input`` (N, C, H, W) read at ``grid`` (N, Ho, Wo, 2), (x, y) in [-1, 1], or a volume
    (N, C, D, H, W) at (N, Do, Ho, Wo, 3), (x, y, z): bilinear (trilinear for volumes),
    nearest or bicubic (4-D), outside points read as zeros, the border, or the reflection."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = _default_align(align_corners)
    _check_grid(input, grid, mode)
    sample = _bicubic if mode == "bicubic" else _sample
    out = one_node(f"GridSampler{input.ndim - 2}DBackward0",
                   lambda input, grid: sample(input, grid, mode, padding_mode, align_corners),
                   (input, grid), {"input": 0, "grid": 1}, {  # torch's enums' ints
                       "interpolation_mode": ("bilinear", "nearest", "bicubic").index(mode),
                       "padding_mode": ("zeros", "border", "reflection").index(padding_mode),
                       "align_corners": align_corners})
    refuse_tangents(f"grid_sampler_{input.ndim - 2}d", (input, grid))  # torch: no formula
    return out


def _flat(input):
    n, c, *sizes = input.shape
    return reshape(input, (n, c, int(np.prod(sizes)))), tuple(sizes)


def _sample(input, grid, mode, padding_mode, align_corners):
    """Bilinear (trilinear) or nearest sampling proper, of arguments grid_sample checked."""
    flat, sizes = _flat(input)
    # x (the last dim) first; unbound, so that the grid's gradient is the components' stacked
    # (torch's kernel writes each: a -0.0 of a clipped coordinate stays, 0.0 + -0.0 would not)
    coords = [_source_index(component, size, padding_mode, align_corners, len(sizes) == 2)
              for component, size in zip(grid.unbind(-1), reversed(sizes), strict=True)]
    if mode == "nearest":  # round half to even, as torch's nearbyint; grid's gradient is 0
        rounded = [coord.round() for coord in coords]
        values, inside = _read(flat, [r.detach() for r in rounded], sizes)
        still = sum(r - r.detach() for r in rounded).unsqueeze(1)  # zero, grid's edge
        # values * (1 + 0), as torch: the input's gradient keeps an edge to the grid, whose
        # zero gradient (round's) a second backward sends on (0 * NaN upstream is NaN); an
        # outside (or NaN) point's factor is 1 exactly
        return where(inside, values * (1 + where(inside, still, 0)), 0)
    floors = [coord.detach().floor() for coord in coords]
    if len(sizes) == 2:  # torch's vectorized 2-D kernel: w = x - floor(x), e = 1 - w
        taps = [((low, 1 - (coord - low)), (low + 1, coord - low))
                for coord, low in zip(coords, floors, strict=True)]
    else:
        taps = [((low, (low + 1) - coord), (low + 1, coord - low))
                for coord, low in zip(coords, floors, strict=True)]
    out = None
    # torch's corners, weights and order (nw, ne, sw, se; top then bottom): x varies fastest,
    # the first term starts the sum, so that a sum of -0.0 terms stays -0.0
    for corner in itertools.product(*([0, 1] for _ in coords)):
        picked = [taps[k][side] for k, side in zip(reversed(range(len(coords))), corner,
                                                   strict=True)][::-1]
        values, inside = _read(flat, [position for position, _ in picked], sizes)
        factors = [factor for _, factor in picked]  # x, y[, z]
        if len(sizes) == 2:
            factors.reverse()  # torch's 2-D kernel: nw = s * e, the y weight first
        weight = factors[0]
        for factor in factors[1:]:
            weight = weight * factor
        # an outside corner reads 0, then weighted (NaN at a non-finite point)
        term = where(inside, values, 0) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _cubic_coefficients(t):
    """torch's grid sampler get_cubic_coefficients (A = -0.75) of the fraction t."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _bicubic(input, grid, mode, padding_mode, align_corners):
    """torch's bicubic grid sampling: 4 x 4 taps around the unnormalized point, each tap's
    position padded (clipped or reflected), read as zero outside; x blended first per row."""
    flat, sizes = _flat(input)
    height, width = sizes
    ix, iy = (_unnormalize(component, size, align_corners, True)
              for component, size in zip(grid.unbind(-1), (width, height), strict=True))
    x0, y0 = ix.detach().floor(), iy.detach().floor()
    weights_x, weights_y = _cubic_coefficients(ix - x0), _cubic_coefficients(iy - y0)
    out = None
    for i, wy in enumerate(weights_y):
        row = None
        tap_y = _padded(y0 + (i - 1), height, padding_mode, align_corners).detach()
        for j, wx in enumerate(weights_x):
            tap_x = _padded(x0 + (j - 1), width, padding_mode, align_corners).detach()
            values, inside = _read(flat, [tap_x, tap_y], sizes)
            term = where(inside, values, 0) * wx.unsqueeze(1)
            row = term if row is None else row + term
        term = row * wy.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _check_grid(input, grid, mode: str) -> None:
    """torch's grid_sampler checks, in its order: the common ones (batch size, grid's last
    size, non-empty spatial dims), the 2-d or 3-d kernel's ranks (any other rank is the 3-d
    one's), bicubic of a volume, then the kernel's dtypes."""
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, "
            f"but got grid with sizes {list(grid.shape)}")
    for dim in range(2, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {dim} being empty")
    rank = 4 if input.ndim == 4 else 5
    if input.ndim != rank or grid.ndim != rank:
        raise RuntimeError(
            f"grid_sampler(): expected {rank}D input and grid with same number of "
            f"dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}")
    if mode == "bicubic" and rank == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input._data)} but found "
                           f"{scalar_type_name(grid._data)}")
    if input._data.dtype.kind != "f":
        raise kernel_error("grid_sampler_2d_cpu_kernel_impl" if rank == 4 else
                           "grid_sampler3d_cpu")(input._data)
