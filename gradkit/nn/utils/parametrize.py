"""torch.nn.utils.parametrize: a module's tensor computed by modules from stored originals.

``register_parametrization(m, "weight", P())`` moves ``m.weight`` to
``m.parametrizations.weight.original`` (right_inverse applied, when P has one) and makes
``m.weight`` a property that returns ``P()(original)``; assigning ``m.weight = X`` stores
``right_inverse(X)``. As torch, the module's class becomes a generated subclass
``Parametrized<Class>`` holding the properties, and state_dict keys read
``parametrizations.weight.original``.

>>> class Symmetric(gradkit.nn.Module):
...     def forward(self, x):
...         return x.triu() + x.triu(1).transpose(0, 1)
>>> layer = gradkit.nn.Linear(2, 2)
>>> _ = register_parametrization(layer, "weight", Symmetric())
>>> bool((layer.weight == layer.weight.T).all()), type(layer).__name__
(True, 'ParametrizedLinear')
"""
from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence

from gradkit import autograd
from gradkit._tensor import Tensor
from gradkit.nn.container import ModuleList
from gradkit.nn.container_more import ModuleDict
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Within it, each parametrized tensor is computed once and reused (until the outermost
    ``cached()`` exits)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register(module: Module, name: str, tensor: Tensor) -> None:
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _set_values(dest: Tensor, src: Tensor) -> None:
    """Give ``dest`` the values of ``src`` in place (torch's ``set_``), keeping the object."""
    dest.data = src


def _changed(what: str, of: str, before, after, unsafe_hint: str = "the `unsafe` flag") -> str:
    return (f"Registering a parametrization may not change the {what} of the tensor, unless "
            f"{unsafe_hint} is enabled.\n{of[0]}: {before}\n{of[1]}: {after}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the ``original`` (or
    ``original0``, ``original1``, ... when right_inverse returns a sequence)."""

    def __init__(self, modules: Sequence[Module], original: Tensor,
                 unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with autograd.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    with contextlib.suppress(NotImplementedError):
                        new = module.right_inverse(new)
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            with autograd.no_grad():
                _set_values(original, new)
            _register(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part._set_requires_grad(original.requires_grad)
                _register(self, f"original{i}", part)
        if not self.unsafe:
            result = self()
            if not isinstance(result, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(result).__name__}.")
            names = ("unparametrized {}", "parametrized {}")
            if result.dtype != original_dtype:
                raise ValueError(_changed("dtype", [n.format("dtype") for n in names],
                                          original_dtype, result.dtype, "`unsafe` flag"))
            if result.shape != original_shape:
                raise ValueError(_changed("shape", [n.format("shape") for n in names],
                                          original_shape, result.shape, "`unsafe` flag"))

    def right_inverse(self, value: Tensor) -> None:
        """Store the originals that the parametrizations map to ``value``."""
        with autograd.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_values(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or "
                                     f"reference-type opaques. Got element {i} of type "
                                     f"{type(tensor).__name__}.")
                if original.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{tensor.dtype} while `original{i}` has dtype "
                                     f"{original.dtype}")
                _set_values(original, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: the first module on the originals, then the rest."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        index = 1  # by integer name: a nested parametrization adds a `parametrizations` child
        while hasattr(self, str(index)):
            x = self[index](x)
            index += 1
        return x


def _no_pickle(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _deepcopy(self, memo: dict):
    """deepcopy without pickling's __getstate__ (which refuses): copy the __dict__."""
    if id(self) in memo:
        return memo[id(self)]
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    object.__setattr__(replica, "__dict__", copy.deepcopy(self.__dict__, memo))
    return replica


def _inject_new_class(module: Module) -> None:
    """A subclass per parametrized module, to hold its properties (as torch)."""
    cls = module.__class__
    members = {"__getstate__": _no_pickle}
    if not hasattr(cls, "__deepcopy__"):
        members["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), members)


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        if _cache.get(key) is None:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_added(module: Module, tensor_name: str, parametrization: Module) -> None:
    """torch's checks when a parametrization is appended to an already parametrized one."""
    current = getattr(module, tensor_name)
    result = parametrization(current)
    if not isinstance(result, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(result).__name__}.")
    names = (f"module.{tensor_name}.{{}}", f"parametrization(module.{tensor_name}).{{}}")
    for what in ("dtype", "shape"):
        if getattr(result, what) != getattr(current, what):
            raise ValueError(_changed(what, [n.format(what) for n in names],
                                      getattr(current, what), getattr(result, what),
                                      "the `unsafe` flag"))
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        inverse = parametrization.right_inverse(result)
    except NotImplementedError:
        return
    if not isinstance(inverse, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                         f"{type(inverse).__name__}")
    for what, label in (("dtype", "returned dtype"), ("shape", "returned shape")):
        if getattr(inverse, what) != getattr(current, what):
            raise ValueError(f"The tensor returned by parametrization.right_inverse must have "
                             f"the same {what} as module.{tensor_name}, unless the `unsafe` "
                             f"flag is enabled.\nmodule.{tensor_name}.{what}: "
                             f"{getattr(current, what)}\n{label}: {getattr(inverse, what)}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize ``module.<tensor_name>`` (a parameter, buffer or already parametrized
    tensor) by ``parametrization``; ``unsafe=True`` skips the dtype and shape checks."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_added(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo register_parametrization: ``module.<tensor_name>`` becomes a plain parameter (or
    buffer) again, holding the parametrized value (``leave_parametrized``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with autograd.no_grad():
                _set_values(original, getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations replaced it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations (all, or those of ``tensor_name``) on
    ``to_module`` too, sharing the same parametrization modules and original tensors."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
            continue
        index = 0
        while hasattr(source, f"original{index}"):
            setattr(target, f"original{index}", getattr(source, f"original{index}"))
            index += 1
    return to_module


__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]
