"""``gradkit.cuda``: the CUDA device API of ``torch.cuda``, on CuPy (imported only when asked).

>>> gradkit.cuda.is_available()      # False without CuPy or without a GPU
False
"""
from __future__ import annotations

from gradkit import backend
from gradkit.generator import manual_seed as _seed


def is_available() -> bool:
    """True when CuPy is installed and sees at least one CUDA device."""
    return backend.cuda_is_available()


def device_count() -> int:
    """How many CUDA devices CuPy sees (0 without CuPy or a driver)."""
    if not is_available():
        return 0
    return int(backend._cupy().cuda.runtime.getDeviceCount())


def _require() -> object:
    if not is_available():
        raise RuntimeError("gradkit found no CUDA device: it needs CuPy (pip install "
                           "'gradkit[cuda]') and an NVIDIA GPU with its driver")
    return backend._cupy()


def _index(device) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    dev = backend.device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return dev.index


def current_device() -> int:
    """Index of the CUDA device new CUDA tensors go to by default."""
    return int(_require().cuda.runtime.getDevice())


def set_device(device) -> None:
    """Make ``device`` (an index, ``"cuda:1"`` or a gradkit.device) the current CUDA device."""
    cp = _require()
    cp.cuda.Device(_index(device)).use()


def synchronize(device=None) -> None:
    """Wait until all work queued on ``device`` (default: the current one) has finished.

    >>> gradkit.cuda.synchronize()   # before reading a timer, as with torch.cuda
    """
    cp = _require()
    cp.cuda.Device(_index(device)).synchronize()


def memory_allocated(device=None) -> int:
    """Bytes held by tensors in CuPy's default memory pool (torch.cuda.memory_allocated)."""
    if not is_available():
        return 0
    return int(backend._cupy().get_default_memory_pool().used_bytes())


def memory_reserved(device=None) -> int:
    """Bytes CuPy's default memory pool holds from the driver (torch.cuda.memory_reserved)."""
    if not is_available():
        return 0
    return int(backend._cupy().get_default_memory_pool().total_bytes())


def empty_cache() -> None:
    """Return the pool's unused blocks to the driver (torch.cuda.empty_cache)."""
    if is_available():
        backend._cupy().get_default_memory_pool().free_all_blocks()


def manual_seed(seed: int) -> None:
    """Accepted for torch compatibility: gradkit draws every random number from one generator."""
    _seed(seed)


manual_seed_all = manual_seed
