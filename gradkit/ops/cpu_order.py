"""torch's CPU selection and sorting algorithms, replayed on one row, for the index they pick.

Among equal values, kthvalue, median along a dim, mode and topk return whichever index torch's
kernel leaves in place: kthvalue runs ATen's ``quick_select_template``, median along a dim
libstdc++'s ``std::nth_element``, mode libstdc++'s ``std::sort`` of (value, index) pairs, topk
``std::partial_sort`` or ``std::nth_element`` and ``std::sort`` (ops/unstable_order.py). NumPy
has none of them, so rows whose pick is ambiguous (ties, NaN) replay the very swaps here, in
Python on a list of indices; rows with a unique pick never come here (ops/order_statistics.py).
Comparisons are Python's on floats and ints, which treat NaN as C++ does (every one false).
"""
from __future__ import annotations

import operator
from collections.abc import Callable

_SORT_THRESHOLD = 16  # libstdc++'s _S_threshold: below it std::sort is an insertion sort


def greater_nan_largest(a, b) -> bool:
    """a > b with NaN above every number (ATen's kthvalue and topk comparisons)."""
    return (a != a and b == b) or a > b


def less_nan_largest(a, b) -> bool:
    """a < b with NaN above every number."""
    return (a == a and b != b) or a < b


def quick_select(values: list, k: int) -> int:
    """The index kthvalue returns: ATen's quick_select_template of ``values`` for rank ``k``."""
    order = list(range(len(values)))
    arr = list(values)

    def swap(i: int, j: int) -> None:
        arr[i], arr[j] = arr[j], arr[i]
        order[i], order[j] = order[j], order[i]
    gt = greater_nan_largest
    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)  # median of three as the pivot, moved to arr[lo]
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(pivot, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return order[k]


class _Sorter:
    """libstdc++'s introsort pieces on ``items`` with the strict order ``less(a, b)``."""

    def __init__(self, items: list, less: Callable):
        self.a, self.less = items, less

    def median_to_first(self, result: int, a: int, b: int, c: int) -> None:
        x, less = self.a, self.less
        if less(x[a], x[b]):
            pick = b if less(x[b], x[c]) else c if less(x[a], x[c]) else a
        else:
            pick = a if less(x[a], x[c]) else c if less(x[b], x[c]) else b
        x[result], x[pick] = x[pick], x[result]

    def partition_pivot(self, first: int, last: int) -> int:
        """__unguarded_partition_pivot: the cut after partitioning around a median of three."""
        x, less = self.a, self.less
        self.median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
        pivot, lo, hi = x[first], first + 1, last
        while True:
            while less(x[lo], pivot):
                lo += 1
            hi -= 1
            while less(pivot, x[hi]):
                hi -= 1
            if not lo < hi:
                return lo
            x[lo], x[hi] = x[hi], x[lo]
            lo += 1

    def linear_insert(self, last: int) -> None:
        x, less = self.a, self.less
        value = x[last]
        while last > 0 and less(value, x[last - 1]):
            x[last] = x[last - 1]
            last -= 1
        x[last] = value

    def insertion_sort(self, first: int, last: int) -> None:
        x, less = self.a, self.less
        for i in range(first + 1, last):
            if less(x[i], x[first]):
                value = x[i]
                x[first + 1:i + 1] = x[first:i]
                x[first] = value
            else:
                self.linear_insert(i)

    def adjust_heap(self, first: int, hole: int, length: int, value) -> None:
        x, less = self.a, self.less
        top, child = hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(x[first + child], x[first + child - 1]):
                child -= 1
            x[first + hole] = x[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            x[first + hole] = x[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and less(x[first + parent], value):
            x[first + hole] = x[first + parent]
            hole, parent = parent, (parent - 1) // 2
        x[first + hole] = value

    def pop_heap(self, first: int, last: int, result: int) -> None:
        value = self.a[result]
        self.a[result] = self.a[first]
        self.adjust_heap(first, 0, last - first, value)

    def heap_select(self, first: int, middle: int, last: int) -> None:
        length = middle - first
        for parent in range((length - 2) // 2, -1, -1) if length >= 2 else ():
            self.adjust_heap(first, parent, length, self.a[first + parent])
        for i in range(middle, last):
            if self.less(self.a[i], self.a[first]):
                self.pop_heap(first, middle, i)

    def partial_sort(self, first: int, middle: int, last: int) -> None:
        """std::partial_sort: __heap_select, then __sort_heap of the first part."""
        self.heap_select(first, middle, last)
        while middle - first > 1:
            middle -= 1
            self.pop_heap(first, middle, middle)

    def introsort(self, first: int, last: int, depth: int) -> None:
        """__introsort_loop: partitions until pieces are small (heapsort when too deep)."""
        while last - first > _SORT_THRESHOLD:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self.partition_pivot(first, last)
            self.introsort(cut, last, depth)
            last = cut

    def sort(self, first: int, last: int) -> None:
        """std::sort: introsort, then __final_insertion_sort."""
        if last - first < 2:
            return
        self.introsort(first, last, 2 * _lg(last - first))
        if last - first > _SORT_THRESHOLD:
            self.insertion_sort(first, first + _SORT_THRESHOLD)
            for i in range(first + _SORT_THRESHOLD, last):
                self.linear_insert(i)
        else:
            self.insertion_sort(first, last)

    def nth_element(self, first: int, nth: int, last: int) -> None:
        """std::nth_element (__introselect)."""
        depth = 2 * _lg(last - first)
        while last - first > 3:
            if depth == 0:
                self.heap_select(first, nth + 1, last)
                self.a[first], self.a[nth] = self.a[nth], self.a[first]
                return
            depth -= 1
            cut = self.partition_pivot(first, last)
            first, last = (cut, last) if cut <= nth else (first, cut)
        self.insertion_sort(first, last)


def _lg(n: int) -> int:
    return n.bit_length() - 1


def _indices_sorter(values: list, less: Callable) -> tuple[list, _Sorter]:
    """The indices of ``values`` and a sorter of them by ``less`` on their values (as ATen's
    rows of (value, index) pairs compared by value)."""
    order = list(range(len(values)))
    return order, _Sorter(order, lambda i, j: less(values[i], values[j]))


def nth_element(values: list, nth: int, less: Callable) -> int:
    """The index std::nth_element leaves at ``nth`` when it partitions the indices of ``values``
    by ``less`` on their values (median along a dim)."""
    order, sorter = _indices_sorter(values, less)
    sorter.nth_element(0, nth, len(order))
    return order[nth]


def std_sort(values: list, less: Callable = operator.lt) -> list:
    """The indices of ``values`` in the order std::sort leaves (value, index) pairs compared by
    value with ``less``: mode's order (equal values may come in any order), unique's along a
    dim (rows compared as torch's kernel compares them)."""
    order, sorter = _indices_sorter(values, less)
    sorter.sort(0, len(order))
    return order


def topk_order(values: list, k: int, less: Callable, sorted: bool) -> list:  # noqa: A002
    """The indices torch's CPU topk returns, in its order (``less``: the first of two goes
    first): std::partial_sort of the first k where 64 k <= n, else std::nth_element at k - 1
    and, when ``sorted``, std::sort of the first k - 1 (torch's bound)."""
    order, sorter = _indices_sorter(values, less)
    if 64 * k <= len(order):
        sorter.partial_sort(0, k, len(order))
    else:
        sorter.nth_element(0, k - 1, len(order))
        if sorted:
            sorter.sort(0, k - 1)
    return order[:k]


def same_or_both_nan(a, b):
    """Elementwise equal, NaN equal to NaN (a tie the replays settle)."""
    return (a == b) | ((a != a) & (b != b))
