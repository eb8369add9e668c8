"""What one program gives under gradkit and under torch, in a form both libraries share.

Tensors become ["tensor", dtype name, shape, NumPy values], dtypes ["dtype", name], sequences
lists, errors ["raises", type name, first line of the message with the library's name read as
torch's]. ``assert_same_outcome`` compares two such outcomes with twin.py's comparison: dtypes
and shapes exactly, values with a tolerance (NaN equal to NaN), messages exactly.
"""
import warnings

import numpy as np

import gradkit
from torch_expectations.twin import assert_same

try:
    import torch
except ImportError:  # the files using this helper skip without torch
    torch = None


def _is_tensor(value) -> bool:
    return isinstance(value, gradkit.Tensor) or (
        torch is not None and isinstance(value, torch.Tensor))


def _is_dtype(value) -> bool:
    return isinstance(value, gradkit.dtype) or (
        torch is not None and isinstance(value, torch.dtype))


def described(value):
    """``value`` with tensors, dtypes and sizes replaced by library-free descriptions."""
    if _is_tensor(value):
        return ["tensor", str(value.dtype).rsplit(".", 1)[-1], list(value.shape),
                np.array(value.detach().cpu().numpy())]
    if _is_dtype(value):
        return ["dtype", str(value).rsplit(".", 1)[-1]]
    if isinstance(value, (tuple, list)):
        return [described(v) for v in value]
    if isinstance(value, dict):
        return {k: described(v) for k, v in value.items()}
    return value


def outcome(program, m):
    """``program(m)`` described, or ("raises", type name, message's first line)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return described(program(m))
        except (IndexError, RuntimeError, TypeError, ValueError) as error:
            message = str(error).split("\n")[0].replace("gradkit._tensor.Tensor", "torch.Tensor")
            return ["raises", type(error).__name__, message.replace("gradkit", "torch")]


def assert_same_outcome(got, expected, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Structural equality of two outcomes; arrays within ``rtol``/``atol`` (exact by default;
    NaN equal to NaN)."""
    assert_same(got, expected, rtol, atol)


def assert_like_torch(program, rtol: float = 0.0, atol: float = 0.0) -> None:
    """``program`` gives the same outcome under gradkit as under torch."""
    assert_same_outcome(outcome(program, gradkit), outcome(program, torch), rtol, atol)
