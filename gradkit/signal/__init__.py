"""``gradkit.signal``: torch.signal's window functions (``gradkit.signal.windows``).

>>> import gradkit
>>> gradkit.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from gradkit.signal import windows  # noqa: F401

__all__ = ["windows"]
