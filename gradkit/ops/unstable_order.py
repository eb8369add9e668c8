"""torch's CPU sort and topk among equal values: their libstdc++ algorithms replayed on the
rows where equal values make a choice.

torch's kernels are unstable: ``sort`` (``stable`` not True) is std::sort, ``topk`` std::nth_element
or std::partial_sort (cpu_order.std_sort, cpu_order.topk_order). Among equal values (0.0 and
-0.0, NaNs) they pick other elements, and send their gradients elsewhere, than a stable sort.
A row is replayed only where that can matter; others keep the stable order, which is the same.
"""
from __future__ import annotations

import numpy as np

from gradkit.ops.cpu_order import (
    greater_nan_largest, less_nan_largest, same_or_both_nan, std_sort, topk_order)

REPLAYED_ELEMENTS_AT_MOST = 1 << 18  # beyond this a stable order is kept (about 1 us each)
_INSERTION_SORT_AT_MOST = 16  # std::sort of a row this short is an insertion sort: stable


def _topk_rows_to_replay(ordered_rows, k: int, sorted: bool):  # noqa: A002
    """Rows where torch's unstable selection may differ from the stable one."""
    n = ordered_rows.shape[-1]
    if not sorted and 64 * k > n and k > 1:
        return np.ones(len(ordered_rows), dtype=bool)
    head = ordered_rows[:, :min(k + 1, n)]
    return same_or_both_nan(head[:, 1:], head[:, :-1]).any(axis=-1)


def _replayed(x, order, dim: int, count: int, rows_to_replay, replay_row):
    """(values, indices) of x's first ``count`` along dim: ``order`` (x's stable sorting
    indices along dim), but ``replay_row(row values)`` for the rows ``rows_to_replay(rows in
    that order)`` marks (2-d arrays, a row each)."""
    rows = np.moveaxis(x, dim, -1)
    shape, n = rows.shape, rows.shape[-1]
    rows, order = rows.reshape(-1, n), np.moveaxis(order, dim, -1).reshape(-1, n)
    picked = order[:, :count].copy()
    replay = np.flatnonzero(rows_to_replay(np.take_along_axis(rows, order, -1)))
    if len(replay) * n <= REPLAYED_ELEMENTS_AT_MOST:
        for r in replay:
            picked[r] = replay_row(rows[r].tolist())
    picked = np.ascontiguousarray(np.moveaxis(picked.reshape(*shape[:-1], count), -1, dim))
    return np.take_along_axis(x, picked, dim), picked.astype(np.int64)


def _first(descending: bool):
    return greater_nan_largest if descending else less_nan_largest


def torchs_topk(x, order, k: int, dim: int, largest: bool, sorted: bool):  # noqa: A002
    """topk's (values, indices) on the CPU as torch's kernel picks them, from ``order``: x's
    stable sorting indices along dim (largest first when ``largest``); x not 0-d, k > 0."""
    return _replayed(x, order, dim, k, lambda rows: _topk_rows_to_replay(rows, k, sorted),
                     lambda row: topk_order(row, k, _first(largest), sorted))


def _tied_long_rows(rows):
    if rows.shape[-1] <= _INSERTION_SORT_AT_MOST:
        return np.zeros(len(rows), dtype=bool)
    return same_or_both_nan(rows[:, 1:], rows[:, :-1]).any(axis=-1)


def torchs_sort(x, order, dim: int, descending: bool):
    """sort's (values, indices) on the CPU as torch's unstable kernel orders them, from
    ``order``: x's stable sorting indices along dim; x neither 0-d nor empty."""
    return _replayed(x, order, dim, x.shape[dim], _tied_long_rows,
                     lambda row: std_sort(row, _first(descending)))
