"""torch.nn.utils.weight_norm (deprecated in torch, still used): w = g · v / ‖v‖.

``weight_norm(m)`` replaces the parameter ``weight`` by ``weight_g`` (the norms, per slice
along ``dim``) and ``weight_v`` (the direction); a forward pre-hook recomputes ``m.weight``
before each call. The math (torch's ``norm_except_dim`` and ``_weight_norm``) is shared with
``parametrizations.weight_norm``.

>>> layer = weight_norm(gradkit.nn.Linear(3, 2))
>>> layer.weight_g.shape, layer.weight_v.shape
(gradkit.Size([2, 1]), gradkit.Size([2, 3]))
"""
from __future__ import annotations

import warnings

from gradkit import autograd, linalg, ops
from gradkit._tensor import Tensor
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.layers_more import ConvTranspose2d
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter, is_lazy
from gradkit.ops import norm_except_dim  # torch.norm_except_dim: one definition


def weight_norm_of(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """torch._weight_norm: ``v · g / norm_except_dim(v, 2, dim)``."""
    return ops.mul(v, ops.div(g, norm_except_dim(v, 2, dim)))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        """g · v / ‖v‖ from the module's current parameters."""
        return weight_norm_of(getattr(module, self.name + "_v"),
                              getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and add the hook."""
        warnings.warn("`gradkit.nn.utils.weight_norm` is deprecated in favor of "
                      "`gradkit.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        _refuse_lazy(weight, "WeightNorm", "weight")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put back a plain parameter holding the current weight."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _refuse_lazy(weight: Tensor, hook: str, what: str) -> None:
    if is_lazy(weight):
        raise ValueError(f"The module passed to `{hook}` can't have uninitialized parameters. "
                         f"Make sure to run the dummy forward before applying {what} "
                         "normalization")


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Weight normalization by a forward pre-hook (``dim=None``: one norm for the whole
    tensor). Deprecated in torch (a FutureWarning) for parametrizations.weight_norm."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo weight_norm: ``module.<name>`` is a parameter again."""
    return _remove_hook(module, name, WeightNorm, "weight_norm")


def _remove_hook(module: Module, name: str, kind: type, what: str) -> Module:
    """Remove the ``kind`` pre-hook that reparametrizes ``module.<name>`` (torch's texts)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            for table in ("_state_dict_hooks", "_load_state_dict_pre_hooks"):  # spectral's
                hooks = module._hook_table(table)
                for k in [k for k, h in hooks.items() if getattr(h, "hook", h) in
                          (SpectralNormStateDictHook(hook), SpectralNormLoadPreHook(hook))]:
                    del hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


class SpectralNorm:
    """The forward pre-hook of the older spectral_norm: ``module.<name>`` is
    ``<name>_orig / σ``, σ estimated by power iteration on the buffers ``<name>_u`` and
    ``<name>_v`` (one step per training-mode call)."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name, self.dim, self.eps = name, dim, eps
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """``weight`` as a matrix with ``dim`` first."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """weight / uᵀWv, after ``n_power_iterations`` in-place updates of u and v."""
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with autograd.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(ops.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ops.mv(weight_mat, v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        return ops.div(weight, ops.dot(u, ops.mv(weight_mat, v)))

    def remove(self, module: Module) -> None:
        """Put back a plain parameter holding weight / σ (no further iteration)."""
        with autograd.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_default_dim(module: Module) -> int:
    """1 for ConvTranspose (its weight is (in, out, ...)), else 0."""
    return 1 if isinstance(module, ConvTranspose2d) else 0  # 1d and 3d subclass it


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Spectral normalization by a forward pre-hook (``weight_orig``, ``weight_u``,
    ``weight_v``); dim defaults to 1 for ConvTranspose, else 0. u and v start from gradkit's
    generator, so their values differ from torch's for the same seed."""
    if dim is None:
        dim = spectral_default_dim(module)
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                               f"parameter {name}")
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    if weight is None:
        raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
    _refuse_lazy(weight, "SpectralNorm", "spectral")
    with autograd.no_grad():
        height, width = fn.reshape_weight_to_matrix(weight).shape
        u = F.normalize(weight.new_empty(height).normal_(0, 1), dim=0, eps=fn.eps)
        v = F.normalize(weight.new_empty(width).normal_(0, 1), dim=0, eps=fn.eps)
    delattr(module, fn.name)
    module.register_parameter(fn.name + "_orig", weight)
    setattr(module, fn.name, weight.data)
    module.register_buffer(fn.name + "_u", u)
    module.register_buffer(fn.name + "_v", v)
    module.register_forward_pre_hook(fn)
    module._register_state_dict_hook(SpectralNormStateDictHook(fn))
    module._register_load_state_dict_pre_hook(SpectralNormLoadPreHook(fn))
    return module


class _SpectralNormHook:
    """A state-dict hook of one SpectralNorm (equal to another of the same kind and norm)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.fn is self.fn

    __hash__ = None


class SpectralNormStateDictHook(_SpectralNormHook):
    """Writes the norm's version into the state dict's metadata, as torch's (version 1: u, v
    and ``<name>_orig`` are saved, ``<name>`` is not)."""

    def __call__(self, module: Module, state_dict, prefix: str, local_metadata: dict) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = 1


class SpectralNormLoadPreHook(_SpectralNormHook):
    """Reads a state dict of torch's version None (``<name>`` saved, no ``<name>_v``):
    solves for the v that gives the saved σ, as torch's hook."""

    def __call__(self, state_dict, prefix: str, local_metadata: dict, strict: bool,
                 missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        fn, key = self.fn, prefix + self.fn.name
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version")
        if version is not None and version >= 1:
            return
        if version is None and key not in state_dict and all(
                key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # a current state dict without its metadata
        absent = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if absent:
            missing_keys.extend(absent if strict else ())
            return
        with autograd.no_grad():
            weight_orig = state_dict[key + "_orig"]
            sigma = ops.div(weight_orig, state_dict.pop(key)).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[key + "_u"]
            v = linalg.multi_dot([weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(),
                                  u.unsqueeze(1)]).squeeze(1)
            state_dict[key + "_v"] = v.mul_(sigma / ops.dot(u, ops.mv(weight_mat, v)))


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo spectral_norm: ``module.<name>`` is a parameter again."""
    return _remove_hook(module, name, SpectralNorm, "spectral_norm")
