"""How a Tensor prints, as torch: ``tensor([1., 2.], grad_fn=<MulBackward0>)``.

A port of torch's ``_tensor_str``: one formatter per tensor (complex: one per part) fixes the
style and width of every value, lines hold as many values of that width as fit in the line
width (80), and tensors of more than ``threshold`` (1000) elements show ``edgeitems`` (3)
values at each end; ``set_printoptions`` changes these, as torch's.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from gradkit import backend

_PREFIX = "tensor("


@dataclasses.dataclass
class PrintOptions:
    """torch's ``PRINT_OPTS``: the options every tensor's text follows."""
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None  # None: each formatter picks, from the values


PRINT_OPTS = PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch's print options: digits after the point, the element count above which a tensor
    is summarized, the values shown at each end then, the line width, a ``profile``
    (``"default"``, ``"short"``, ``"full"``) set first, and ``sci_mode`` (None: automatic)."""
    if profile in _PROFILES:  # torch ignores another name
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode  # as torch: not given is automatic again


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
    try:
        grad_fn = tensor.grad_fn
        node_name = None if grad_fn is None else grad_fn.name().rsplit("::", 1)[-1]  # as torch
    except RuntimeError:  # a stale view refuses its grad_fn: torch's repr says so
        node_name = "Invalid"
    if node_name is not None:
        extras.append(f"grad_fn=<{node_name}>")
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
        if line + len(suffix) + 2 > PRINT_OPTS.linewidth:
            text += ",\n" + " " * len(_PREFIX) + suffix
            line = len(_PREFIX) + len(suffix)
        else:
            text += ", " + suffix
            line += len(suffix) + 2
    return text + ")"


def _values_text(data) -> str:
    """The values of a non-empty array as torch's ``_tensor_str`` lays them out."""
    summarize = data.size > PRINT_OPTS.threshold
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
    ends = PRINT_OPTS.edgeitems
    cut = summarize and data.shape[0] > 2 * ends
    if data.ndim == 1:
        per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / width))
        values = data.tolist()
        words = ([text(v) for v in values[:ends]] + [" ..."] +
                 [text(v) for v in values[len(values) - ends:]] if cut else
                 [text(v) for v in values])
        lines = [", ".join(words[i:i + per_line]) for i in range(0, len(words), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [*range(ends), None, *range(data.shape[0] - ends, data.shape[0])] if cut \
        else range(data.shape[0])
    parts = ["..." if i is None else _layout(data[i], indent + 1, summarize, width, text)
             for i in rows]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _shown(data):
    """The values a summarized print shows: the first and last few along every dimension."""
    edge = PRINT_OPTS.edgeitems
    for axis, size in enumerate(data.shape):
        if size > 2 * edge:
            ends = [*range(edge), *range(size - edge, size)]
            data = data.take(ends, axis=axis)
    return data


class _Formatter:
    """torch's ``_Formatter``: floats print ``1.`` when all are whole, in scientific notation
    when the nonzero magnitudes span over 1000x or leave [1e-4, 1e8] (or as ``sci_mode`` says),
    with ``precision`` digits; every value is padded to the widest nonzero finite one (any
    value, for other dtypes)."""

    def __init__(self, values) -> None:
        self.floating = values.dtype.kind == "f"
        self.precision = PRINT_OPTS.precision
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            self.width = max([1] + [len(str(v)) for v in values.reshape(-1).tolist()])
            return
        shown = values[np.isfinite(values) & (values != 0)]
        if shown.size == 0:  # (torch's style then stays plain, whatever sci_mode says)
            return
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        magnitude = np.abs(shown.astype(np.float64))
        low, high = magnitude.min(), magnitude.max()
        self.sci_mode = bool(high / low > 1000.0 or high > 1e8 or low < 1e-4) \
            if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
        # whole numbers count the point they print with
        self.width = max(len(self._text(v)) + (self.int_mode and not self.sci_mode)
                         for v in shown.tolist())

    def _text(self, value) -> str:
        if not self.floating:
            return str(value)
        if self.sci_mode:
            return f"{value:.{self.precision}e}"
        if self.int_mode:
            return f"{value:.0f}"
        return f"{value:.{self.precision}f}"

    def format(self, value) -> str:
        text = self._text(value)
        if self.floating and self.int_mode and not self.sci_mode and math.isfinite(value):
            text += "."
        return text.rjust(self.width)
