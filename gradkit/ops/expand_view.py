"""expand's geometry: torch's sizes and strides of an expanded tensor (inferExpandGeometry),
its refusals, and the view of a C-contiguous array made in one call (docs/performance.md)."""
from __future__ import annotations

import numpy as np

_ndarray = np.ndarray
_NUMEL_MAX = 2 ** 63 - 1


def expand_geometry(shape: tuple, strides: tuple, sizes) -> tuple | None:
    """``(target, strides, repeats)`` of an array of ``shape`` and (byte) ``strides``
    expanded to ``sizes`` (-1 keeps a dim), as torch's inferExpandGeometry: a dim keeps its
    stride where its size stays (size 1 too), a repeated one is 0 (``repeats``: some dim
    repeats), a new leading dim of size 1 spans the dims after it; a 0-d array gives all 0.
    None when torch refuses (``expand_refusal`` words it) or the size is negative."""
    n = len(sizes)
    lead = n - len(shape)
    if lead < 0:
        return None
    target, steps, repeats = [0] * n, [0] * n, False
    for i in range(n - 1, lead - 1, -1):  # the array's own dims
        size, want = shape[i - lead], sizes[i]
        if want == size or want == -1:
            target[i], steps[i] = size, strides[i - lead]
        elif size == 1 and want >= 0:
            target[i], repeats = want, True
        else:
            return None
    for i in range(lead - 1, -1, -1):  # new leading dims
        want = sizes[i]
        if want == 1:
            target[i], steps[i] = 1, target[i + 1] * steps[i + 1] if i + 1 < n else 0
        elif want >= 0:
            target[i], repeats = want, True
        else:
            return None
    return target, steps, repeats


def expanded_view(x, sizes):
    """``x`` expanded to ``sizes``, made by one ``ndarray`` call over a C-contiguous NumPy
    array's memory (``broadcast_to`` then ``as_strided``'s Python wrappers cost ~20 µs);
    read-only where a dim repeats, as ``broadcast_to``'s views are. None where the general
    lines decide: another array, a refused size, one too large for NumPy."""
    if type(x) is not _ndarray or not x.flags.c_contiguous:
        return None
    geometry = expand_geometry(x.shape, x.strides, sizes)
    if geometry is None:
        return None
    target, steps, repeats = geometry
    try:
        out = _ndarray(target, x.dtype, x, 0, steps)
    except (ValueError, TypeError, BufferError):  # more bytes than NumPy addresses, a dtype
        return None  # it exports no buffer of: the general lines decide
    if repeats:
        out.setflags(write=False)
    return out


def expand_refusal(shape, sizes, type_name: str) -> str | None:
    """torch's message when a tensor of ``shape`` (of type ``type_name``,
    ``torch.FloatTensor``) does not expand to ``sizes`` (-1 keeps a dim), None when it does:
    too few sizes, then the innermost dimension that does not fit, as torch checks them, then
    a negative size or too many elements (torch's numel, a product in unsigned 64 bits)."""
    sizes, shape = [int(n) for n in sizes], [int(n) for n in shape]
    if len(sizes) < len(shape):
        return (f"expand({type_name}{{{shape}}}, size={sizes}): the number of sizes provided "
                f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
                f"tensor ({len(shape)})")
    numel, overflows = 1, False
    for i in range(len(sizes) - 1, -1, -1):
        dim = i - len(sizes) + len(shape)
        size, wanted = (shape[dim] if dim >= 0 else 1), sizes[i]
        if wanted == -1:
            if dim < 0:
                return ("The expanded size of the tensor (-1) isn't allowed in a leading, "
                        f"non-existing dimension {i}")
            wanted = size
        if size != wanted and size != 1:
            return (f"The expanded size of the tensor ({wanted}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: {sizes}.  Tensor "
                    f"sizes: {shape}")
        numel *= wanted % 2 ** 64
        overflows |= numel >= 2 ** 64
        numel %= 2 ** 64
    if overflows or numel > _NUMEL_MAX:
        return "numel: integer multiplication overflow"
    return None
