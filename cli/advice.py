"""Advice printed after a profile: causes of slowness that the op table alone does not show."""
from __future__ import annotations

import os

try:  # optional: reads the BLAS that is loaded itself
    from threadpoolctl import threadpool_info
except ImportError:
    threadpool_info = None

# ops (and their backward nodes) whose time is mostly a BLAS matrix product
_MATRIX_PRODUCTS = ("addmm", "mm", "bmm", "matmul", "linear", "conv2d", "einsum")
_BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def blas_threads() -> int:
    """How many threads NumPy's BLAS may use: threadpoolctl's answer where it is installed,
    else the first thread variable set, else one per core (OpenBLAS's and MKL's default)."""
    if threadpool_info is not None:
        blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
        if blas:
            return max(blas)
    for name in _BLAS_THREAD_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return os.cpu_count() or 1


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1


def matrix_product_share(events) -> float:
    """The share of self time spent in matrix-product ops and their backward nodes."""
    total = sum(e.self_cpu_time_total for e in events)
    if not total:
        return 0.0
    products = sum(e.self_cpu_time_total for e in events if _is_matrix_product(e.key))
    return products / total


def _is_matrix_product(name: str) -> bool:
    op = name.rpartition("::")[2].lower()
    return op in _MATRIX_PRODUCTS or any(op.startswith(p) and op.endswith(("backward0",
                                                                          "backward"))
                                         for p in _MATRIX_PRODUCTS)


def blas_thread_advice(share: float, threads: int, cores: int, load: float) -> str | None:
    """A warning when several BLAS threads share a small (<= 4 cores) or busy machine and
    matrix products take at least a tenth of the time, with the fix; else None."""
    busy = load >= cores
    if threads <= 1 or share < 0.1 or not (cores <= 4 or busy):
        return None
    where = f"{cores} cores" + (f" with a load of {load:.1f}" if busy else "")
    return (f"NumPy's BLAS may run {threads} threads on {where}, and matrix products take "
            f"{share:.0%} of the time: on small matrices those threads mostly wait for each "
            "other. Try one thread: OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "
            "gradkit profile ...")
