"""The machinery of torch.nn.utils.prune: a pruning method is a forward pre-hook.

Pruning parameter ``name`` of a module moves it to the parameter ``name_orig``, adds the
buffer ``name_mask`` and sets the plain attribute ``name = name_orig * name_mask``; the
method, registered as a forward pre-hook, recomputes ``name`` before each call. Pruning the
same tensor again wraps the methods in a :class:`PruningContainer`, whose new mask is
computed only on what the earlier masks kept. The concrete methods live in ``prune``.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from typing import Any

from gradkit import creation
from gradkit._tensor import Tensor
from gradkit.memory_format import contiguous_format


class BasePruningMethod(ABC):
    """Abstract base of pruning methods: subclasses define ``compute_mask`` and
    ``PRUNING_TYPE`` (``"unstructured"``, ``"structured"`` with a ``dim``, or ``"global"``)."""

    _tensor_name: str

    def __call__(self, module: Any, inputs: Any) -> None:
        """The forward pre-hook: ``module.<name> = <name>_orig * <name>_mask``."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for importance scores ``t``, on top of ``default_mask`` (same shape)."""

    def apply_mask(self, module: Any) -> Tensor:
        """The pruned tensor: the module's mask (in the original's dtype) times the original."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``; returns the hook (a
        PruningContainer when the tensor was pruned before). On failure the module is left
        as it was."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:  # the Parameter object itself moves, so optimizers keep pointing at it
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = creation.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # roll back to the unpruned parameter
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times the mask computed from ``importance_scores`` (default ``t``)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    "importance_scores should have the same shape as tensor t, "
                    f"got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else creation.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Make the pruning permanent: ``name`` becomes the original Parameter holding the
        pruned values; ``name_orig`` and ``name_mask`` go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls: type, module: Any, name: str, *args: Any,
                      **kwargs: Any) -> BasePruningMethod:
    """The new method, or the container of the old and new ones (the old hook removed)."""
    found = [k for k, hook in module._forward_pre_hooks.items()
             if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    old_method = module._forward_pre_hooks[found[0]] if found else None
    for k in found:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old_method is None:
        return method
    if not isinstance(old_method, PruningContainer):
        old_method = PruningContainer(old_method)
    old_method.add_pruning_method(method)
    return old_method


class PruningContainer(BasePruningMethod):
    """The sequence of methods that pruned one tensor; its mask is the latest method's,
    computed on the entries (unstructured) or channels (structured) still kept."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method`` (acting on the same tensor name)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. "
                             f"Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with the latest method's mask written where it still keeps."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)  # (in place when the dtypes agree, as torch)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc = default_mask == 1
        elif kind == "structured":
            slc = _kept_channels(method, t, default_mask)
        elif kind == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


def _kept_channels(method: BasePruningMethod, t: Tensor, mask: Tensor) -> tuple:
    """An index selecting the channels along ``method.dim`` that ``mask`` does not zero."""
    if not hasattr(method, "dim"):
        raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the '
                             "attribute `dim` defined.")
    n_dims = t.dim()
    dim = method.dim + n_dims if method.dim < 0 else method.dim
    if dim < 0:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
    keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
    slc = [slice(None)] * n_dims
    slc[dim] = keep_channel  # (a dim past the end: the list's IndexError, as torch)
    return tuple(slc)


def _validate_pruning_amount_init(amount: Any) -> None:
    """``amount`` is a fraction in [0, 1] (float) or a count (non-negative int)."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    """A count of units to prune is at most the number there are."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    """Structured pruning removes slices: a 1-D tensor has none."""
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    """An int amount is a count; a float one a fraction, rounded half to even as torch."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
