"""``gradkit.accelerator``: torch's device-agnostic accelerator API (CUDA via CuPy is the one).

>>> gradkit.accelerator.is_available()   # False on a machine without a GPU
False
"""
from __future__ import annotations

from gradkit import backend, cuda


def is_available() -> bool:
    """True when a CUDA device can be used."""
    return cuda.is_available()


def device_count() -> int:
    return cuda.device_count()


def current_accelerator(check_available: bool = False) -> backend.device | None:
    """``device("cuda")`` when CuPy is installed (and a GPU present if asked), else None."""
    if check_available and not is_available():
        return None
    try:
        backend._cupy()
    except RuntimeError:
        return None
    return backend.device("cuda")


def current_device_index() -> int:
    return cuda.current_device()


def synchronize(device=None) -> None:
    cuda.synchronize(device)
