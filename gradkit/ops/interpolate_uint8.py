"""uint8 bilinear, bicubic and lanczos ``interpolate`` (4-D) as torch's CPU kernel computes it:
fixed point, not floats.

Per spatial dim torch computes each output's input window and its weights in double, scales
them to int16 with a precision of ``p`` bits chosen from the largest weight, then resamples
separably, the last dim first (a dim whose size does not change is skipped), each pass
``clamp((2**(p-1) + sum(pixel * weight)) >> p, 0, 255)``: a rounded uint8 between passes.
Without antialias the window is the mode's fixed taps (cubic A = -0.75, weights of taps past
the border folded onto the edge pixel); with it, the filter stretched by the scale (PIL's).
"""
from __future__ import annotations

import math

import numpy as np

from gradkit.backend import get_array_module

_CUBIC = {False: -0.75, True: -0.5}  # torch: OpenCV's constant without antialias, PIL's with it
_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}


def _triangle(x: float, antialias: bool) -> float:
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


def _cubic(x: float, antialias: bool) -> float:
    a, x = _CUBIC[antialias], abs(x)
    if x < 1.0:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2.0:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def _lanczos(x: float, antialias: bool) -> float:
    return float(np.sinc(x) * np.sinc(x / 3)) if abs(x) < 3.0 else 0.0


_FILTERS = {"bilinear": _triangle, "bicubic": _cubic, "lanczos": _lanczos}


def _window_aa(i, in_size, scale, support, width, filter_fn):
    """torch's _compute_indices_min_size_weights_aa: the window under the stretched filter."""
    center = scale * (i + 0.5)
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    start = max(int(center - support + 0.5), 0)
    size = min(max(min(int(center + support + 0.5), in_size) - start, 0), width)
    weights = [filter_fn((j + start - center + 0.5) * invscale, True) for j in range(size)]
    total = sum(weights)
    if total != 0.0:
        weights = [w / total for w in weights]
    return start, weights, max(weights, default=0.0) if total != 0.0 else 0.0


def _window(i, in_size, scale, align_corners, taps, filter_fn):
    """torch's _compute_indices_min_size_weights: the mode's fixed taps around the source
    index, the weights of taps beyond the border added to the edge pixel's."""
    if align_corners:
        real = scale * i
    else:
        real = scale * (i + 0.5) - 0.5
        real = max(real, 0.0) if taps == 2 else real
    index = min(math.floor(np.float32(real)), in_size - 1)  # torch's floorf
    fraction = min(max(real - index, 0.0), 1.0)
    half = taps // 2
    low = index - half + 1
    start = max(low, 0)
    size = min(max(min(index + half + 1, in_size) - start, 0), taps)
    weights, position, largest = [0.0] * taps, 0, 0.0
    for j in range(taps):
        if low + j <= 0:
            position = 0
        elif low + j >= in_size - 1:
            position = size - 1
        weights[position] += filter_fn((j + 1 - half) - fraction, False)
        largest = max(largest, weights[position])
        position += 1
    return start, weights[:size], largest


def _int16_taps(in_size, out_size, scale_factor, align_corners, mode, antialias):
    """(starts, int16 weights [out, width], precision) of one dim, as torch's
    _compute_index_ranges_int16_weights."""
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        scale = 1.0 / scale_factor if scale_factor else in_size / out_size
    taps, filter_fn = _TAPS[mode], _FILTERS[mode]
    if antialias:
        support = taps * 0.5 * scale if scale >= 1.0 else taps * 0.5
        width = math.ceil(support) * 2 + 1
        windows = [_window_aa(i, in_size, scale, support, width, filter_fn)
                   for i in range(out_size)]
    else:
        width = taps
        windows = [_window(i, in_size, scale, align_corners, taps, filter_fn)
                   for i in range(out_size)]
    largest = max(w for _, _, w in windows)
    precision = 0
    while precision < 22 and int(0.5 + largest * (1 << (precision + 1))) < 1 << 15:
        precision += 1
    weights = np.zeros((out_size, width), dtype=np.int64)
    for i, (_, ws, _) in enumerate(windows):
        # C's truncating casts of v ± 0.5: rounded half away from zero
        weights[i, :len(ws)] = [math.trunc(w * (1 << precision) + (0.5 if w >= 0 else -0.5))
                                for w in ws]
    starts = np.array([s for s, _, _ in windows], dtype=np.int64)
    return starts, weights, precision


def _resample_dim(x, dim, out_size, scale_factor, align_corners, mode, antialias):
    """One fixed-point pass along ``dim`` of an int64 array (values 0..255)."""
    xp = get_array_module(x)
    in_size = x.shape[dim]
    starts, weights, precision = _int16_taps(in_size, out_size, scale_factor, align_corners,
                                             mode, antialias)
    index = np.minimum(starts[:, None] + np.arange(weights.shape[1]), in_size - 1)
    moved = xp.moveaxis(x, dim, -1)[..., xp.asarray(index)]  # [..., out, width]
    total = (moved * xp.asarray(weights)).sum(axis=-1) + (1 << (precision - 1))
    return xp.moveaxis(xp.clip(total >> precision, 0, 255), -1, dim)


def resample_uint8(data, outs, scales, align_corners, mode: str, antialias: bool):
    """(N, C, H, W) uint8 ``data`` resized to ``outs`` as torch's fixed-point kernel."""
    x = data.astype(np.int64)
    for i in reversed(range(len(outs))):  # the last dim first
        if outs[i] != x.shape[i + 2]:
            x = _resample_dim(x, i + 2, outs[i], scales[i], bool(align_corners), mode,
                              antialias)
    return x.astype(np.uint8)
