"""Module state dicts: ``state_dict`` and ``load_state_dict`` (a mixin of ``nn.Module``)."""
from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.nn.parameter import Parameter


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns: the keys it did not find and the ones it did not use."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


class ModuleState:
    """Parameters and persistent buffers by dotted name, saved and loaded as torch does."""

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers by dotted name (detached unless keep_vars)."""
        destination = OrderedDict() if destination is None else destination
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip(".")):
            skip = module.__dict__.get("_non_persistent", ())
            dot = module_prefix + "." if module_prefix else ""
            for registry in (module._parameters, module._buffers):
                for name, value in registry.items():
                    if value is not None and name not in skip:
                        destination[dot + name] = value if keep_vars else value.detach()
        return destination

    def load_state_dict(self, state_dict: dict, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into parameters and buffers, in place."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [key for key in own if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own]
        errors = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected '
                              f"gradkit.Tensor or Tensor-like object from checkpoint but "
                              f"received {type(value)}")
            elif tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{target.shape}.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    if assign:  # take the checkpoint's tensor itself (keeping requires_grad)
                        owner, _, name = key.rpartition(".")
                        self.get_submodule(owner)._assign(name, target, state_dict[key])
                    else:
                        target.copy_(state_dict[key])
        return _IncompatibleKeys(missing, unexpected)

    def _assign(self, name: str, target: Tensor, value: Tensor) -> None:
        if name in self._parameters:
            value = value if isinstance(value, Parameter) else Parameter(value)
            self._parameters[name] = value.requires_grad_(target.requires_grad)
        else:
            self._buffers[name] = value
