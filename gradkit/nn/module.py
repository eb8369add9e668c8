"""Module: the base class of layers — parameters, submodules, modes and state dicts."""
from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from gradkit._tensor import Tensor
from gradkit.autograd import observers
from gradkit.autograd.grad_mode import no_grad
from gradkit.nn.module_global_hooks import (
    _global_backward_hooks, _global_backward_pre_hooks, _global_buffer_registration_hooks,
    _global_forward_hooks, _global_forward_pre_hooks, _global_module_registration_hooks,
    _global_parameter_registration_hooks, run_registration_hooks)
from gradkit.nn.module_convert import ModuleConvert
from gradkit.nn.module_hooks import ModuleHooks
from gradkit.nn.module_paths import call_observed
from gradkit.nn.module_state import ModuleState
from gradkit.nn.parameter import Buffer, Parameter, buffer_persistent
from gradkit.torch_helpers import typename


class Module(ModuleHooks, ModuleState, ModuleConvert):
    """Base class of every layer: assign Parameters and Modules as attributes.

    >>> class Affine(gradkit.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = gradkit.nn.Parameter(gradkit.ones(3))
    ...     def forward(self, x):
    ...         return x * self.scale
    >>> [name for name, _ in Affine().named_parameters()]
    ['scale']
    """

    training: bool
    call_super_init: bool = False  # True: __init__ passes its arguments on, for mixins

    def __init__(self, *args, **kwargs) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # object.__setattr__: our own __setattr__ needs these dicts to exist
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        self._init_hooks()
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """The computation of the module; subclasses override it and call the module."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if observers.module_watchers:  # a profile(with_modules=True): the call is a range
            return call_observed(self, lambda: self._call(args, kwargs))
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict):
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks \
                or self._backward_pre_hooks or _global_forward_pre_hooks \
                or _global_forward_hooks or _global_backward_pre_hooks or _global_backward_hooks:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    # -- attribute registration --------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:  # plain attributes may come first, as torch
            for kind, what in ((Parameter, "parameters"), (Module, "module"), (Buffer, "buffer")):
                if isinstance(value, kind):
                    raise AttributeError(f"cannot assign {what} before Module.__init__() call")
            object.__setattr__(self, name, value)
            return
        for registry, kind, what in ((self._parameters, Parameter, "parameter"),
                                     (self._modules, Module, "child module")):
            if isinstance(value, kind):  # it replaces whatever had the name, in its place
                self._forget(name, keep=registry)
                if kind is Parameter:  # torch's register_parameter checks (a property stays)
                    _check_name(self, name, "parameter")
                registry[name] = self._registered(kind, name, value)
                return
            if name in registry:  # only None may replace a registered one
                if value is not None:
                    raise TypeError(f"cannot assign '{typename(value)}' as {what} '{name}' "
                                    f"(gradkit.nn.{kind.__name__} or None expected)")
                registry[name] = self._registered(kind, name, None)
                return
        # a Buffer registers itself (its isinstance is a Python call: tensors only)
        if name in self._buffers or isinstance(value, Tensor) and isinstance(value, Buffer):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(gradkit.nn.Buffer, gradkit.Tensor or None expected)")
            persistent = buffer_persistent(value) if isinstance(value, Buffer) \
                else name not in self.__dict__.get("_non_persistent", ())
            register_buffer_of(self, name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def _registered(self, kind: type, name: str, value):
        """``value`` after the global registration hooks of its kind (parameter, buffer or
        module) saw it; a hook's non-None result is what gets registered. (torch's hooks see
        a None module or buffer, never a None parameter.)"""
        if value is None and kind is Parameter:
            return None
        table = _global_parameter_registration_hooks if kind is Parameter else \
            _global_module_registration_hooks if kind is Module else \
            _global_buffer_registration_hooks
        return run_registration_hooks(table, self, name, value) if table else value

    def _forget(self, name: str, keep=None) -> None:
        self.__dict__.pop(name, None)
        self.__dict__.get("_non_persistent", set()).discard(name)
        for registry in (self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: look in the registries
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self.__dict__.get("_non_persistent", set()).discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` (a Parameter, or None) under ``name``."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter "
                            f"'{name}' (gradkit.nn.Parameter or None required)")
        _check_name(self, name, "parameter")
        self._parameters[name] = self._registered(Parameter, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that is state but not a parameter (in state_dict unless not persistent)."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer "
                            f"'{name}' (gradkit.Tensor or None required)")
        _check_name(self, name, "buffer")
        self._buffers[name] = self._registered(Tensor, name, tensor)
        if not persistent:
            self.__dict__.setdefault("_non_persistent", set()).add(name)
        else:
            self.__dict__.get("_non_persistent", set()).discard(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add the submodule ``module`` (or None) under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(self, name, "module")
        self._modules[name] = self._registered(Module, name, module)

    register_module = add_module

    # -- traversal ---------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every submodule, depth first, with dotted names."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                                remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and all its submodules, depth first."""
        return _values(self.named_modules())

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` of the direct submodules."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct submodules."""
        return _values(self.named_children())

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True):
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs, each parameter once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs, each buffer once."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every learnable Parameter (each once, even if shared): what optimizers take."""
        return _values(self.named_parameters(recurse=recurse))

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The registered buffers (of submodules too, with ``recurse``)."""
        return _values(self.named_buffers(recurse=recurse))

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``"0.linear"``)."""
        module = self
        for item in target.split(".") if target else ():
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target`` (its parent must exist; ``strict``:
        the name too)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (``"0.weight"``)."""
        module, name = self._owner_of(target)
        if not isinstance(getattr(module, name), Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return getattr(module, name)

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target`` (``"1.running_mean"``)."""
        module, name = self._owner_of(target)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    def _owner_of(self, target: str) -> tuple[Module, str]:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        return module, name

    # -- modes and bulk changes --------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout active) for this module and its children; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode: same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad`` (to None by default, as torch does)."""
        for param in self.parameters():
            _reset_grad(param, set_to_none)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and on self, e.g. to initialise."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- printing ----------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in repr (override in layers)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        if not self._modules and len(lines) <= 1:
            return f"{self._get_name()}({lines[0] if lines else ''})"
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        keys = set(super().__dir__()) | set(self._parameters) | set(self._buffers) \
            | set(self._modules)
        return sorted(key for key in keys if not key[0].isdigit())  # not Python names


def _check_name(module: Module, name: str, kind: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        got = f", got: {name}" if kind == "module" else ""  # (torch's texts)
        raise KeyError(f'{kind} name can\'t contain "."{got}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    registry = {"parameter": "_parameters", "buffer": "_buffers", "module": "_modules"}[kind]
    if name in module.__dict__ or (hasattr(module, name) and
                                   name not in getattr(module, registry)):
        raise KeyError(f"attribute '{name}' already exists")


def _reset_grad(param: Tensor, set_to_none: bool) -> None:
    """Shared by Module.zero_grad and Optimizer.zero_grad."""
    grad = param.grad
    if grad is None:
        return
    if set_to_none:
        param.grad = None
        return
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    with no_grad():
        grad.zero_()


def _values(named: Iterator[tuple[str, Any]]) -> Iterator:
    """The values of ``(name, value)`` pairs: parameters() of named_parameters() and so on."""
    return (value for _, value in named)


def register_buffer_of(module: Module, name: str, value, persistent: bool) -> None:
    """A Buffer assigned as an attribute: registered through the module's register_buffer,
    without ``persistent`` where a subclass overrode it without that argument (as torch)."""
    register = module.register_buffer
    if getattr(register, "__func__", None) is Module.register_buffer or \
            "persistent" in inspect.signature(register).parameters:
        module.register_buffer(name, value, persistent)
    elif not persistent:
        raise RuntimeError("Registering a non-persistent buffer on a Module subclass that "
                           "implements register_buffer() without the persistent argument is "
                           "not allowed.")
    else:
        module.register_buffer(name, value)
