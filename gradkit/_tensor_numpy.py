"""Tensor <-> NumPy: ``numpy()``, ``np.asarray(tensor)`` and NumPy's ufuncs on tensors.

The methods layer (``gradkit/__init__.py`` imports it once the ops are loaded). As torch's:
``numpy()`` shares memory (NumPy then fixes the storage's size) and refuses, unless forced, a
tensor off the CPU, one that requires grad while grad mode is on, and a conjugated or negated
view (torch's lazy conj/neg bits); NumPy's ufuncs take tensors (``np.sin(t)`` is a tensor), and
``ndarray * tensor`` is the tensor's ``__rmul__`` (a higher ``__array_priority__``).
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor, extend
from gradkit._tensor_repr import host_array
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.interop import from_numpy
from gradkit.ops.complex import is_conjugated_view, is_negative_view
from gradkit.storage_owner import share_with_numpy


def _check_exportable(tensor: Tensor) -> None:
    """torch's checks of ``numpy(force=False)``, in its order."""
    if not isinstance(tensor._data, (np.ndarray, np.generic)):
        raise TypeError(f"can't convert {tensor.device} device type tensor to numpy. Use "
                        "Tensor.cpu() to copy the tensor to host memory first.")
    if tensor._requires_grad and grad_state.grad_enabled:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    if is_conjugated_view(tensor):
        raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use "
                           "tensor.resolve_conj().numpy() instead.")
    if is_negative_view(tensor):
        raise RuntimeError("Can't call numpy() on Tensor that has negative bit set. Use "
                           "tensor.resolve_neg().numpy() instead.")


class _NumPyMethods:
    __array_priority__ = 1000  # torch's: NumPy's operators defer to the tensor's

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array sharing its memory; ``force``: also of a tensor that
        requires grad, is a conjugated view or is off the CPU (a host copy), as torch's."""
        if not force:
            _check_exportable(self)
        if not isinstance(self._data, (np.ndarray, np.generic)):
            return host_array(self._data)
        if isinstance(self._data, np.ndarray):  # (a NumPy scalar has no storage to fix)
            share_with_numpy(self._data)
        return self._data

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """NumPy's conversion (``np.asarray(t)``): ``numpy()``, cast to ``dtype`` if given."""
        array = self.numpy()
        if dtype is not None:
            return array.astype(dtype, copy=bool(copy))
        return array.copy() if copy else array

    def __array_wrap__(self, array, context=None, return_scalar: bool = False) -> Tensor:
        """A NumPy ufunc's result on tensors as a tensor (a bool result as uint8, as torch's)."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return from_numpy(np.asarray(array))


extend(_NumPyMethods)
