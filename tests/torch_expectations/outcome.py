"""What one program gives under gradkit and under torch, in a form both libraries share.

Tensors become ("tensor", dtype name, shape, NumPy values), dtypes their names, sizes tuples,
errors ("raises", type name, first line of the message with the library's name read as
torch's). ``assert_same_outcome`` compares two such outcomes: dtypes and shapes exactly,
values with a tolerance (NaN equal to NaN), messages exactly.
"""
import warnings

import numpy as np

import gradkit

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
        return ("tensor", str(value.dtype).rsplit(".", 1)[-1], tuple(value.shape),
                np.array(value.detach().cpu().numpy()))
    if _is_dtype(value):
        return ("dtype", str(value).rsplit(".", 1)[-1])
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
            return ("raises", type(error).__name__, message.replace("gradkit", "torch"))


def assert_same_outcome(got, expected, rtol: float = 0.0, atol: float = 0.0, where: str = "result"):
    """Structural equality of two outcomes; arrays within ``rtol``/``atol`` (exact by default)."""
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {got!r} is not an array"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
        if expected.dtype == bool:
            np.testing.assert_array_equal(got, expected, err_msg=where)
        else:
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=where)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), \
            f"{where}: {_short(got)} != {_short(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same_outcome(g, e, rtol, atol, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), f"{where}: {got!r}"
        for k in expected:
            assert_same_outcome(got[k], expected[k], rtol, atol, f"{where}[{k!r}]")
    else:
        assert got == expected, f"{where}: {_short(got)} != {_short(expected)}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 300 else text[:300] + "..."


def assert_like_torch(program, rtol: float = 0.0, atol: float = 0.0) -> None:
    """``program`` gives the same outcome under gradkit as under torch."""
    assert_same_outcome(outcome(program, gradkit), outcome(program, torch), rtol, atol)
