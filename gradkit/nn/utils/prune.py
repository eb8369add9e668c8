"""torch.nn.utils.prune: zero parts of a parameter through a mask kept beside it.

>>> m = l1_unstructured(gradkit.nn.Linear(4, 2), "weight", amount=3)
>>> int((m.weight == 0).sum()), sorted(dict(m.named_buffers())), is_pruned(m)
(3, ['weight_mask'], True)
>>> type(remove(m, "weight").weight).__name__  # permanent: a Parameter again, still pruned
'Parameter'
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gradkit import creation, ops
from gradkit._tensor import Tensor
from gradkit.memory_format import contiguous_format
from gradkit.nn.utils.convert_parameters import parameters_to_vector
from gradkit.nn.utils.pruning_base import (
    BasePruningMethod, PruningContainer, _compute_nparams_toprune, _validate_pruning_amount,
    _validate_pruning_amount_init, _validate_pruning_dim, _validate_structured_pruning)

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class Identity(BasePruningMethod):
    """Prunes nothing: the reparametrization with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class _AmountMethod(BasePruningMethod):
    """A method pruning ``amount`` units: a fraction (float) or a count (int)."""

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def _to_prune(self, tensor_size: int) -> int:
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        return nparams_toprune


class RandomUnstructured(_AmountMethod):
    """Prunes ``amount`` of the (still unpruned) entries, chosen at random."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _zero_top(default_mask, creation.rand_like(t), self._to_prune(t.nelement()), True)

    @classmethod
    def apply(cls, module: Any, name: str, amount: float) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(_AmountMethod):
    """Prunes the ``amount`` entries of smallest absolute value (exactly that many, ties
    broken by topk, not by a threshold)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _zero_top(default_mask, ops.abs(t), self._to_prune(t.nelement()), False)

    @classmethod
    def apply(cls, module: Any, name: str, amount: float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _zero_top(default_mask: Tensor, scores: Tensor, k: int, largest: bool) -> Tensor:
    """A copy of ``default_mask`` with the ``k`` largest (or smallest) ``scores`` zeroed."""
    mask = default_mask.clone(memory_format=contiguous_format)
    if k != 0:
        topk = ops.topk(scores.view(-1), k=k, largest=largest)
        mask.view(-1)[topk.indices] = 0
    return mask


class _StructuredMethod(_AmountMethod):
    """Prunes ``amount`` whole channels along ``dim``; ``_kept`` picks the kept ones."""

    PRUNING_TYPE = "structured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        nparams_toprune = self._to_prune(nchannels)
        kept = self._kept(t, nchannels, nparams_toprune)
        if nparams_toprune == 0:
            return default_mask
        mask = creation.zeros_like(t)
        mask[tuple(kept if d == _channel_dim(t, self.dim) else slice(None)
                   for d in range(t.dim()))] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask


def _channel_dim(t: Tensor, dim: int) -> int:
    """``dim`` made non-negative; one below ``-t.dim()`` is torch's IndexError of a list."""
    return list(range(t.dim()))[dim]


class RandomStructured(_StructuredMethod):
    """Prunes ``amount`` channels along ``dim``, chosen at random."""

    def __init__(self, amount: float, dim: int = -1) -> None:
        super().__init__(amount)
        self.dim = dim

    def _kept(self, t: Tensor, nchannels: int, nparams_toprune: int) -> Tensor | None:
        if nparams_toprune == 0:
            return None
        prob = creation.rand(nchannels)
        return prob > ops.kthvalue(prob, k=nparams_toprune).values

    @classmethod
    def apply(cls, module: Any, name: str, amount: float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_StructuredMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest ``n``-norm (``n`` as
    ``torch.norm``'s ``p``: a number, ``inf``, ``-inf`` or ``"fro"``)."""

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        super().__init__(amount)
        self.n = n
        self.dim = dim

    def _kept(self, t: Tensor, nchannels: int, nparams_toprune: int) -> Tensor:
        dims = [d for d in range(t.dim()) if d != _channel_dim(t, self.dim)]
        norm = ops.norm(t, p=self.n, dim=dims)
        return ops.topk(norm, k=nchannels - nparams_toprune, largest=True).indices

    @classmethod
    def apply(cls, module: Any, name: str, amount: float, n: Any,  # type: ignore[override]
              dim: int, importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is zero (on top of any earlier mask)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module: Any, name: str) -> Any:
    """Reparametrize ``module.<name>`` with a mask of ones; returns the module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: float) -> Any:
    """Prune ``amount`` random entries of ``module.<name>``; returns the module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: float,
                    importance_scores: Tensor | None = None) -> Any:
    """Prune the ``amount`` entries of smallest magnitude (of ``importance_scores`` when
    given); returns the module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: float, dim: int) -> Any:
    """Prune ``amount`` random channels along ``dim``; returns the module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Any:
    """Prune the ``amount`` channels along ``dim`` of smallest ``n``-norm; returns the module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    """Prune ``module.<name>`` where ``mask`` is zero; returns the module."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable, pruning_method: type,
                        importance_scores: dict | None = None, **kwargs: Any) -> None:
    """Prune the ``(module, name)`` pairs together, as one flattened tensor, with an
    unstructured ``pruning_method(**kwargs)``; each pair gets a CustomFromMask hook."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([
        getattr(module, name + "_mask", creation.ones_like(getattr(module, name)))
        for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + num_param].view_as(param))
        pointer += num_param


def remove(module: Any, name: str) -> Any:
    """Make the pruning of ``module.<name>`` permanent and drop its hook; returns the module."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Any) -> bool:
    """Whether ``module`` or a submodule has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, submodule in module.named_modules()
               for hook in submodule._forward_pre_hooks.values())
