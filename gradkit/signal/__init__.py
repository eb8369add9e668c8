"""``gradkit.signal``: torch.signal's window functions (``gradkit.signal.windows``).

>>> import gradkit
>>> gradkit.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from gradkit._not_implemented import module_getattr as _module_getattr
from gradkit.signal import windows  # noqa: F401

__getattr__ = _module_getattr(__name__)  # torch features gradkit lacks: a clear AttributeError

__all__ = ["windows"]
