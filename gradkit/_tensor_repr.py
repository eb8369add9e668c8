"""How a Tensor prints, as torch: ``tensor([1., 2.], grad_fn=<MulBackward0>)``.

A port of torch's ``_tensor_str`` with its default print options: one formatter per tensor
(complex: one per part) fixes the style and width of every value, lines hold as many values
of that width as fit in 80 characters, and large tensors show 3 values at each end.
"""
from __future__ import annotations

import math

import numpy as np

from gradkit import backend

_LINE_WIDTH, _SHOWN_AT_EACH_END, _SUMMARIZED_ABOVE = 80, 3, 1000  # torch's print options
_PREFIX = "tensor("


def host_array(array):
    """The array on the host (a NumPy array; a CuPy array is copied)."""
    return array if isinstance(array, (np.ndarray, np.generic)) else array.get()


def tensor_repr(tensor) -> str:
    """torch's text of a tensor: values, then device, dtype and autograd extras."""
    data = np.asarray(host_array(tensor._data))
    extras = []
    if str(tensor.device) != "cpu":
        extras.append(f"device='{tensor.device}'")
    default_float = backend.get_default_dtype().np
    if data.size == 0:
        body = "[]"
        if data.ndim != 1:
            extras.append(f"size={tuple(data.shape)}")
        if data.dtype != default_float:
            extras.append(f"dtype={tensor.dtype}")
    else:
        body = _values_text(data)
        default_complex = np.result_type(default_float, np.complex64)
        if data.dtype not in (default_float, default_complex, np.int64, np.bool_):
            extras.append(f"dtype={tensor.dtype}")
    if tensor.grad_fn is not None:
        extras.append(f"grad_fn=<{tensor.grad_fn.name()}>")
    elif tensor._requires_grad:
        extras.append("requires_grad=True")
    fw = getattr(tensor, "_fw", None)
    if fw is not None and fw[0].open:  # a dual tensor of the open forward-AD level
        extras.append(f"tangent={fw[1]!r}")
    return _with_suffixes(_PREFIX + body, extras)


def _with_suffixes(text: str, suffixes: list) -> str:
    """torch's ``_add_suffixes``: each suffix after ``, `` unless the line would pass 80
    characters, then on a line of its own indented under the values."""
    line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line + len(suffix) + 2 > _LINE_WIDTH:
            text += ",\n" + " " * len(_PREFIX) + suffix
            line = len(_PREFIX) + len(suffix)
        else:
            text += ", " + suffix
            line += len(suffix) + 2
    return text + ")"


def _values_text(data) -> str:
    """The values of a non-empty array as torch's ``_tensor_str`` lays them out."""
    summarize = data.size > _SUMMARIZED_ABOVE
    shown = _shown(data) if summarize else data  # widths come from the values shown
    if data.dtype.kind == "c":
        real, imag = _Formatter(shown.real), _Formatter(shown.imag)
        width = real.width + 2 + imag.width + 1

        def text(value) -> str:
            imag_text = (imag.format(value.imag) + "j").lstrip()
            # the imaginary part's own sign (also of -0.0), else "+"
            return real.format(value.real) + ("" if imag_text[0] in "+-" else "+") + imag_text
    else:
        formatter = _Formatter(shown)
        width, text = formatter.width + 2, formatter.format
    return _layout(data, len(_PREFIX), summarize, width, text)


def _layout(data, indent: int, summarize: bool, width: int, text) -> str:
    """torch's ``_tensor_str_with_formatter``: nested brackets, rows of ``width``-wide values."""
    if data.ndim == 0:
        return text(data.item())
    ends = _SHOWN_AT_EACH_END
    cut = summarize and data.shape[0] > 2 * ends
    if data.ndim == 1:
        per_line = max(1, math.floor((_LINE_WIDTH - indent) / width))
        values = data.tolist()
        words = ([text(v) for v in values[:ends]] + [" ..."] + [text(v) for v in values[-ends:]]
                 if cut else [text(v) for v in values])
        lines = [", ".join(words[i:i + per_line]) for i in range(0, len(words), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [*range(ends), None, *range(data.shape[0] - ends, data.shape[0])] if cut \
        else range(data.shape[0])
    parts = ["..." if i is None else _layout(data[i], indent + 1, summarize, width, text)
             for i in rows]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _shown(data):
    """The values a summarized print shows: the first and last few along every dimension."""
    for axis, size in enumerate(data.shape):
        if size > 2 * _SHOWN_AT_EACH_END:
            ends = [*range(_SHOWN_AT_EACH_END), *range(size - _SHOWN_AT_EACH_END, size)]
            data = data.take(ends, axis=axis)
    return data


class _Formatter:
    """torch's ``_Formatter`` (precision 4): floats print ``1.`` when all are whole, in
    scientific notation when the nonzero magnitudes span over 1000x or leave [1e-4, 1e8];
    every value is padded to the widest nonzero finite one (any value, for other dtypes)."""

    def __init__(self, values) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            self.width = max(len(str(v)) for v in values.reshape(-1).tolist())
            return
        shown = values[np.isfinite(values) & (values != 0)]
        if shown.size == 0:
            return
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        magnitude = np.abs(shown.astype(np.float64))
        low, high = magnitude.min(), magnitude.max()
        self.sci_mode = bool(high / low > 1000.0 or high > 1e8 or low < 1e-4)
        self.width = max(len(self._text(v)) for v in shown.tolist())

    def _text(self, value) -> str:
        if not self.floating:
            return str(value)
        if self.sci_mode:
            return f"{value:.4e}"
        if self.int_mode:
            return f"{value:.0f}" + ("." if math.isfinite(value) else "")
        return f"{value:.4f}"

    def format(self, value) -> str:
        return self._text(value).rjust(self.width)
