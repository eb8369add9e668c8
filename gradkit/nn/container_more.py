"""Containers keyed by name or position: ModuleDict, ParameterList, ParameterDict (torch's
registration, ordering, methods and repr)."""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from gradkit._tensor import Tensor
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter


def _pairs(values, owner: str, sort_dicts: bool = False) -> Iterable:
    """(key, value) pairs of a mapping, a container of the same kind or an iterable of pairs,
    as torch's update(); ``sort_dicts``: ParameterDict's, which sorts the pairs of a mapping
    that is not ordered (an OrderedDict or a ParameterDict keeps its order)."""
    if isinstance(values, (ModuleDict, ParameterDict)):
        return values.items()
    if isinstance(values, Mapping):
        ordered = not sort_dicts or isinstance(values, OrderedDict)
        return values.items() if ordered else sorted(values.items())
    pairs = []
    for j, pair in enumerate(values):
        if not isinstance(pair, Iterable) or isinstance(pair, (str, bytes)):
            raise TypeError(f"{owner} update sequence element #{j} should be Iterable; is"
                            f"{type(pair).__name__}")  # (torch's text has no space)
        pair = tuple(pair)
        if len(pair) != 2:
            raise ValueError(f"{owner} update sequence element #{j} has length {len(pair)}; "
                             "2 is required")
        pairs.append(pair)
    return pairs


class ModuleDict(Module):
    """Modules by name, registered as children, in insertion order.

    >>> layers = gradkit.nn.ModuleDict({"enc": gradkit.nn.Linear(2, 3)})
    >>> list(layers), layers["enc"].out_features
    (['enc'], 3)
    """

    def __init__(self, modules: Mapping | Iterable | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules: Mapping | Iterable) -> None:
        """Add or replace modules from a mapping or from (name, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            f"pairs, but got {type(modules).__name__}")
        for key, module in _pairs(modules, "ModuleDict"):
            self[key] = module


def _as_parameter(value: Any) -> Any:
    """torch's rule: a plain Tensor put in a parameter container becomes a Parameter."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(key, value, by_type: bool = False) -> str:
    """torch's line for one entry: ParameterList names the dtype, ParameterDict the tensor
    type (``FloatTensor``)."""
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    size = "x".join(str(s) for s in value.shape)
    device = f" ({value.device})" if value.device.type == "cuda" else ""
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    what = value.type() if by_type else value.dtype
    return f"  ({key}): {kind} containing: [{what} of size {size}{device}]"


class ParameterList(Module):
    """Parameters by position ("0", "1", ...), registered with the module.

    >>> params = gradkit.nn.ParameterList([gradkit.zeros(2), gradkit.ones(3)])
    >>> [name for name, _ in params.named_parameters()]
    ['0', '1']
    """

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, idx: int) -> str:
        idx = operator.index(idx)  # integer tensors too
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % self._size)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(self._size)[idx]])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, value) -> None:
        setattr(self, self._key(idx), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, values: Iterable) -> ParameterList:
        return self.extend(values)

    def append(self, value) -> ParameterList:
        """Add ``value`` at the end (a Tensor becomes a Parameter)."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, p) for k, p in enumerate(self))


class ParameterDict(Module):
    """Parameters by name, registered with the module, in insertion order.

    >>> params = gradkit.nn.ParameterDict({"scale": gradkit.ones(2)})
    >>> type(params["scale"]).__name__
    'Parameter'
    """

    def __init__(self, parameters: Mapping | Iterable | None = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def update(self, parameters: Mapping | Iterable) -> None:
        """Add or replace parameters from a mapping or from (name, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            f"key/value pairs, but got {type(parameters).__name__}")
        for key, value in _pairs(parameters, "ParameterDict", sort_dicts=True):
            self[key] = value

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict(self.items()))

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self) -> tuple:
        """Remove and return the last ``(key, value)``."""
        key, _ = self._keys.popitem()  # dict's KeyError when empty, as torch's
        self._keys[key] = None
        return key, self.pop(key)

    def fromkeys(self, keys: Iterable[str], default=None) -> ParameterDict:
        """A new ParameterDict with each of ``keys`` holding ``default``."""
        return ParameterDict((k, default) for k in keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __or__(self, other: ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, p, by_type=True) for k, p in self.items())
