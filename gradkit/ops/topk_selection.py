"""torch's CPU ``topk`` among equal values: its libstdc++ selection replayed on the rows where
equal values make a choice.

torch's kernel is unstable (cpu_order.topk_order), so among equal values (0.0 and -0.0, NaNs)
it picks other elements, and sends their gradients elsewhere, than a stable sort does. A row
is replayed only where that can matter: equal values among the first k + 1 of its order, or
``sorted=False`` on the nth_element path (whose arrangement is its own).
"""
from __future__ import annotations

import numpy as np

from gradkit.ops.cpu_order import (
    greater_nan_largest, less_nan_largest, same_or_both_nan, topk_order)

REPLAYED_ELEMENTS_AT_MOST = 1 << 18  # beyond this a stable order is kept (about 1 us each)


def _rows_to_replay(ordered_rows, k: int, sorted: bool):  # noqa: A002
    """Rows where torch's unstable selection may differ from the stable one."""
    n = ordered_rows.shape[-1]
    if not sorted and 64 * k > n and k > 1:
        return np.ones(len(ordered_rows), dtype=bool)
    head = ordered_rows[:, :min(k + 1, n)]
    return same_or_both_nan(head[:, 1:], head[:, :-1]).any(axis=-1)


def torchs_topk(x, order, k: int, dim: int, largest: bool, sorted: bool):  # noqa: A002
    """topk's (values, indices) on the CPU as torch's kernel picks them, from ``order``: x's
    stable sorting indices along dim (largest first when ``largest``)."""
    rows = np.moveaxis(x, dim, -1)
    shape, n = rows.shape, rows.shape[-1]
    rows, order = rows.reshape(-1, n), np.moveaxis(order, dim, -1).reshape(-1, n)
    picked = order[:, :k].copy()
    replay = np.flatnonzero(_rows_to_replay(np.take_along_axis(rows, order, -1), k, sorted))
    if len(replay) * n <= REPLAYED_ELEMENTS_AT_MOST:
        less = greater_nan_largest if largest else less_nan_largest
        for r in replay:
            picked[r] = topk_order(rows[r].tolist(), k, less, sorted)
    picked = np.moveaxis(picked.reshape(*shape[:-1], k), -1, dim)
    return np.take_along_axis(x, picked, dim), picked.astype(np.int64)
