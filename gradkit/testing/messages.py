"""The failure messages of ``gradkit.testing.assert_close``, laid out as torch.testing's.

torch computes the mismatch statistics with tensor ops in the tensors' dtype (an integer
difference divided by an integer is a default-dtype float), so these do the same with gradkit
ops: the numbers printed are the ones torch prints for the same inputs.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.ops.extremes import max as max_of
from gradkit.ops.shape import flatten

Identifier = str | Callable[[str], str] | None


class MismatchError(Exception):
    """A failure found while comparing: the exception type to raise and its message, with the
    position (``id``) of the failing item in nested inputs."""

    def __init__(self, type: type[Exception], msg: str, *, id: tuple = ()) -> None:  # noqa: A002
        super().__init__(msg)
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        """The exception to raise: ``msg`` replaces the message, or wraps it when callable."""
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += ("\n\nThe failure occurred for item "
                              + "".join(str([item]) for item in self.id))
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


def _identifier(default: str, identifier: Identifier) -> str:
    if identifier is None:
        return default
    return identifier(default) if callable(identifier) else identifier


def mismatch_message(*, default_identifier: str, identifier: Identifier = None,
                     extra: str | None = None, abs_diff: float, abs_diff_idx=None,
                     atol: float, rel_diff: float, rel_diff_idx=None, rtol: float) -> str:
    """torch's message for numbers that are not close (or not equal, with zero tolerances)."""
    equality = rtol == 0 and atol == 0

    def diff_line(kind: str, diff: float, idx, tol: float) -> str:
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = (f"{_identifier(default_identifier, identifier)} are not "
           f"{'equal' if equality else 'close'}!\n\n")
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_diff_idx, atol)
    msg += diff_line("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def scalar_mismatch_message(actual, expected, *, rtol: float, atol: float,
                            identifier: Identifier = None) -> str:
    """torch's message for two Python numbers (or 0-d tensors' items) that are not close."""
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return mismatch_message(default_identifier="Scalars", identifier=identifier,
                            extra=f"Expected {expected} but got {actual}.", abs_diff=abs_diff,
                            atol=atol, rel_diff=rel_diff, rtol=rtol)


def _unravel(flat_index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        flat_index, position = divmod(flat_index, size)
        index.append(position)
    return tuple(reversed(index))


def tensor_mismatch_message(actual: Tensor, expected: Tensor, matches: Tensor, *, rtol: float,
                            atol: float, identifier: Identifier = None) -> str:
    """torch's message for tensors that are not close: how many elements mismatch, and the
    greatest absolute and relative differences among them, with their indices."""
    total = matches.numel()
    mismatches = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    actual_flat, expected_flat, matches_flat = flatten(actual), flatten(expected), flatten(matches)
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        actual_flat = actual_flat.to(backend.int64)  # as torch: no wrap-around in the difference
        expected_flat = expected_flat.to(backend.int64)
    abs_diff = (actual_flat - expected_flat).abs()
    abs_diff[matches_flat] = 0  # only mismatches count
    max_abs, max_abs_at = max_of(abs_diff, 0)
    with np.errstate(divide="ignore", invalid="ignore"):  # x/0 is inf or nan, silently as torch
        rel_diff = abs_diff / expected_flat.abs()
    rel_diff[matches_flat] = 0
    max_rel, max_rel_at = max_of(rel_diff, 0)
    return mismatch_message(
        default_identifier="Tensor-likes", identifier=identifier, extra=extra,
        abs_diff=max_abs.item(), abs_diff_idx=_unravel(int(max_abs_at), tuple(matches.shape)),
        atol=atol, rel_diff=max_rel.item(),
        rel_diff_idx=_unravel(int(max_rel_at), tuple(matches.shape)), rtol=rtol)
