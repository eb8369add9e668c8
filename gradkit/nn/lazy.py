"""LazyModuleMixin: modules whose parameters take their shapes from the first input
(torch.nn.modules.lazy). Until then they hold UninitializedParameter / UninitializedBuffer
placeholders; a forward pre-hook sizes them on the first call and the module becomes its
``cls_to_become``; a load_state_dict pre-hook sizes them from a checkpoint."""
from __future__ import annotations

import itertools

from gradkit.autograd.grad_mode import no_grad
from gradkit.nn.parameter import is_lazy


class LazyModuleMixin:
    """Mix in before a Module class; override ``initialize_parameters(*inputs)`` to
    ``materialize`` the placeholders from the inputs (see LazyLinear)."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(LazyModuleMixin._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _own_tensors(self, dot: str, keep_vars: bool) -> dict:
        # the placeholders go to the state dict themselves (detaching one would use it)
        own = super()._own_tensors(dot, True)
        return own if keep_vars else {key: value if is_lazy(value) else value.detach()
                                      for key, value in own.items()}

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs) -> None:
        """Size each placeholder that the checkpoint has a real tensor for."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and is_lazy(param) and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize the placeholders from the first call's inputs (each lazy class's)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether some parameter or buffer of this module is still a placeholder."""
        return any(map(is_lazy, itertools.chain(self._parameters.values(),
                                                self._buffers.values())))

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        """The forward pre-hook: initialize, drop both hooks, become ``cls_to_become``."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook, module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become
