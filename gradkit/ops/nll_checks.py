"""torch's checks of nll_loss's arguments, in its order: nll_loss_nd's (the input's rank, the
batch sizes, a spatial target's shape), then those of the kernel it calls, nll_loss for a 1-D
or 2-D input and nll_loss2d for the others (viewed as 4-D). Each raises torch's class and
message."""
from __future__ import annotations

import numpy as np

from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.ops.unary_helpers import require_real_floating, scalar_type_name


def check_nll_arguments(input, target, weight, reduction: str) -> None:
    """Refuse what torch's ``nll_loss_nd`` refuses, with its error."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    # torch reads a 0-d target's batch size as 0 (its sizes()[0], unchecked)
    batch = target.shape[0] if target.ndim else 0
    if input.ndim != 1 and input.shape[0] != batch:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({batch}).")
    if input.ndim <= 2:
        _check_flat(input, target, weight)
    else:
        _check_spatial(input, target, weight, reduction)


def _check_flat(input, target, weight) -> None:
    """nll_loss's checks (its autograd kernel's, its meta function's, then its kernel's)."""
    refuse_grad("nll_loss_forward", weight=weight)
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    _check_target_dtype(target)
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    if input.ndim == 2 and target.ndim == 0:  # its size check reads target.size(0), checked
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    classes = input.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != classes):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    _check_kernel_dtypes("nll_loss_out_frame", input, weight)


def _check_spatial(input, target, weight, reduction: str) -> None:
    """nll_loss_nd's view of a 3-D (or more than 4-D) input as 4-D, then nll_loss2d's checks;
    its kernel reads int64 targets only (none, when it reduces no element)."""
    spatial = tuple(input.shape[2:])
    if input.ndim != 4 and tuple(target.shape[1:]) != spatial:
        raise RuntimeError(f"Expected target size {[input.shape[0], *spatial]}, got "
                           f"{list(target.shape)}")
    refuse_grad("nll_loss2d_forward", weight=weight)
    if input.ndim == 4 and target.ndim != 3:  # (the others' target is viewed as 3-D)
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    _check_target_dtype(target)
    if weight is not None and weight.numel() != input.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if input.ndim == 4 and tuple(target.shape) != (input.shape[0],) + spatial:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                           f"{list(target.shape)}")
    _check_kernel_dtypes("nll_loss2d_forward_out_frame", input, weight)
    if target._data.dtype == np.uint8 and (reduction == "none" or target.numel()):
        raise RuntimeError("expected scalar type Long but found Byte")


def _check_target_dtype(target) -> None:
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{scalar_type_name(target._data)}")


def _check_kernel_dtypes(kernel: str, input, weight) -> None:
    """The kernel's dispatch on the input's dtype, then its read of the weight in that dtype."""
    require_real_floating(kernel, input._data)
    if weight is not None and weight._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input._data)} but found "
                           f"{scalar_type_name(weight._data)}")


def out_of_bounds_message(value: int, dtype, per_sample: bool) -> str:
    """torch's message for a target outside [0, classes). Its per-sample loop (a 2-D input,
    reduction 'none') prints a uint8 target as a C char: the message ends at a zero byte."""
    if per_sample and dtype == np.uint8:
        return "Target " if value == 0 else f"Target {chr(value)} is out of bounds."
    return f"Target {value} is out of bounds."


def refuse_grad(function: str, **arguments) -> None:
    """torch's error for a loss argument its backward has no formula for, given requires_grad
    (its autograd kernel's check: none under no_grad or inference_mode)."""
    if not is_grad_enabled():
        return
    for name, value in arguments.items():
        if getattr(value, "requires_grad", False):
            raise RuntimeError(f"The function '{function}' is not differentiable with respect to "
                               f"argument '{name}'. This input cannot have requires_grad True.")
