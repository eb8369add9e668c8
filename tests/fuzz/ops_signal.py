"""The signal lane's ops for the fuzzer (class ``signal``: ``run_fuzz.py --classes signal``):
stft/istft, gradient, index_reduce, histogram(dd), unique_consecutive and the windows.

Their own class and table, so the breadth class's seeds keep drawing what they drew. Results
torch does not differentiate (counts, runs) enter as ``x + f(x.detach())``-style sums, so their
values reach the compared outputs.
"""
from __future__ import annotations

import numpy as np

from .ops_breadth import _real, _tiled
from .ops_core import OpSpec

_PAD_MODES = ("reflect", "constant", "replicate", "circular")


def _signal(x):
    """x as one signal (1-D) or, for a 2-D x, a batch of them."""
    return x if x.dim() == 2 else x.reshape(-1)


def _stft_params(draw, shapes):
    shape = shapes[0]
    length = shape[-1] if len(shape) == 2 else int(np.prod(shape))
    if length < 1 or len(shape) == 2 and shape[0] == 0:  # an empty batch: torch's MKL refuses
        return None  # its FFT where gradkit returns the empty result (docs/api.md)
    n_fft = draw.integer(1, max(1, min(length + 2, 9)))
    return {"n_fft": n_fft, "hop": draw.choice((None, draw.integer(0, n_fft))),
            "win": draw.choice((None, draw.integer(1, n_fft))),
            "center": draw.boolean(), "pad_mode": draw.choice(_PAD_MODES),
            "normalized": draw.boolean(), "onesided": draw.choice((None, True, False)),
            "window": draw.choice(("none", "hann", "leaf"))}


def _filled(lib, y, shape, dtype):
    """y's real values repeated to ``shape`` (ones when y is empty), in ``dtype``."""
    if not y.numel():
        return lib.ones(shape, dtype=dtype)
    return _tiled(y, tuple(shape)).to(dtype)


def _window(lib, y, kind, size, dtype):
    if kind == "hann":
        return lib.hann_window(size, dtype=dtype)
    return None if kind == "none" else _filled(lib, y, (size,), dtype).abs() + 0.5


def _stft_fn(lib, x, y, n_fft, hop, win, center, pad_mode, normalized, onesided, window):
    size = n_fft if win is None else win
    w = _window(lib, y, window, size, _real(x).dtype)
    return lib.stft(_signal(x), n_fft, hop_length=hop, win_length=win, window=w, center=center,
                    pad_mode=pad_mode, normalized=normalized, onesided=onesided,
                    return_complex=True)


def _istft_fn(lib, x, y, n_fft, hop, win, center, pad_mode, normalized, onesided, window):
    """istft of a spectrum computed from x, with a window that leaves no gap."""
    size = n_fft if win is None else win
    w = _window(lib, y, "leaf", size, _real(x).dtype)
    spectrum = lib.stft(_real(_signal(x)), n_fft, hop_length=hop, win_length=win, window=w,
                        center=center, normalized=normalized, return_complex=True)
    frames = spectrum.shape[-1]
    return lib.istft(spectrum * (1 + 0.5j), n_fft, hop_length=hop, win_length=win, window=w,
                     center=center, normalized=normalized, onesided=onesided,
                     length=frames if pad_mode == "reflect" else None)


def _gradient_params(draw, shapes):
    nd = len(shapes[0])
    dims = tuple(d - nd if draw.boolean() else d for d in range(nd) if draw.boolean())
    dim = None if not dims or draw.chance(0.3) else dims[0] if draw.boolean() else dims
    count = nd if dim is None else 1 if isinstance(dim, int) else len(dim)
    # no explicit spacing=None with a tuple of dims: torch's argument parser refuses that pair
    spacing = draw.choice((None if isinstance(dim, int) or dim is None else 1.0,
                           draw.choice((0.5, 2, -1.5)),
                           [draw.choice((0.5, 2, 3.0)) for _ in range(count)], "coordinates"))
    return {"dim": dim, "spacing": spacing, "edge_order": draw.choice((1, 2, 2, 3))}


def _gradient_fn(lib, x, y, dim, spacing, edge_order):
    if spacing == "coordinates":
        dims = range(x.dim()) if dim is None else [dim] if isinstance(dim, int) else dim
        spacing = [(_filled(lib, y, (x.shape[d],), _real(x).dtype).abs() + 0.25).cumsum(0)
                   for d in dims]
    out = lib.gradient(x, spacing=spacing, dim=dim, edge_order=edge_order)
    return lib.stack(out) if out else x


def _index_reduce_params(draw, shapes):
    shape = shapes[0]
    if not shape:
        return None
    dim = draw.integer(-len(shape), len(shape) - 1)
    size = shape[dim]
    count = draw.integer(0, 4)
    index = [draw.integer(0, size - 1) if size else 0 for _ in range(count)]
    return {"dim": dim, "index": index, "reduce": draw.choice(("prod", "mean", "amax", "amin")),
            "include_self": draw.boolean()}


def _index_reduce_fn(lib, x, y, dim, index, reduce, include_self):
    source_shape = list(x.shape)
    source_shape[dim] = len(index)
    source = _filled(lib, y, source_shape, x.dtype)
    return lib.index_reduce(x, dim, lib.tensor(index, dtype=lib.int64), source, reduce,
                            include_self=include_self)


def _histogram_params(draw, shapes):
    return {"bins": draw.integer(0, 6), "density": draw.boolean(), "ranged": draw.boolean(),
            "dd": draw.chance(0.3)}


def _histogram_fn(lib, x, bins, density, ranged, dd):
    values = _real(x).detach()
    if dd:
        points = values.reshape(-1, 2) if values.numel() % 2 == 0 else values.reshape(-1, 1)
        hist, _ = lib.histogramdd(points, bins, density=density)
    else:
        hist, _ = lib.histogram(values, bins, range=(-1.0, 1.5) if ranged else None,
                                density=density)
    return x + hist.sum()


def _runs_fn(lib, x, dim):
    values = _real(x).detach().round()
    runs, inverse, counts = lib.unique_consecutive(values, return_inverse=True,
                                                   return_counts=True, dim=dim)
    return x * (runs.sum() + inverse.sum() + counts.sum())


def _runs_params(draw, shapes):
    nd = len(shapes[0])
    return {"dim": None if not nd or draw.boolean() else draw.integer(-nd, nd - 1)}


def _windowed_fn(lib, x, name, periodic):
    """x times a window along its last dim (a leaf of torch's own making)."""
    size = x.shape[-1] if x.dim() else 1
    window = getattr(lib, name)(size, periodic, dtype=_real(x).dtype)
    return x * window


def _windowed_params(draw, shapes):
    return {"name": draw.choice(("hann_window", "hamming_window", "blackman_window",
                                 "bartlett_window", "kaiser_window")),
            "periodic": draw.boolean()}


SIGNAL_OPS: dict[str, OpSpec] = {
    "s_stft": OpSpec(2, _stft_fn, _stft_params),
    "s_istft": OpSpec(2, _istft_fn, _stft_params),
    "s_gradient": OpSpec(2, _gradient_fn, _gradient_params),
    "s_index_reduce": OpSpec(2, _index_reduce_fn, _index_reduce_params),
    "s_histogram": OpSpec(1, _histogram_fn, _histogram_params),
    "s_unique_consecutive": OpSpec(1, _runs_fn, _runs_params),
    "s_window": OpSpec(1, _windowed_fn, _windowed_params),
}
