"""Inference tensors: what ``inference_mode`` makes, and torch's rules for them.

A tensor created inside ``inference_mode()`` is an inference tensor, and so
are its views and ``detach()`` (they share its version counter). torch gives
such tensors no version counter at all; gradkit gives them one of a marked
type, :class:`InferenceVersion`, so that the mark travels with views for free
and the checks below are one type test each:

- an in-place write outside inference mode is refused (nothing could tell a
  graph that saved the tensor that it changed);
- autograd refuses to save one for backward, and ``requires_grad_()`` outside
  the mode is refused;
- ``_version`` cannot be read.

Out-of-place ops outside the mode make ordinary tensors from them.
"""
from __future__ import annotations

from gradkit.autograd.grad_mode import state

INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")
SAVE_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `gradkit.no_grad()` instead "
    "of `gradkit.inference_mode()`.")
VERSION_MESSAGE = "Inference tensors do not track version counter."
REQUIRES_GRAD_MESSAGE = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")


class InferenceVersion(list):
    """The version counter of an inference tensor and its views (``[version, *view refs]``)."""

    __slots__ = ()


def new_version_counter() -> list:
    """A fresh version counter: an inference one inside inference_mode."""
    return InferenceVersion((0,)) if state.inference else [0]


def check_inplace(tensor) -> None:
    """torch's error for writing into an inference tensor outside inference mode."""
    if type(tensor._vc) is InferenceVersion and not state.inference:
        raise RuntimeError(INPLACE_MESSAGE)

