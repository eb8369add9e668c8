"""Containers: Sequential (chains modules) and ModuleList (holds them)."""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from gradkit.nn.module import Module


def _check_sequential(other) -> None:
    if not isinstance(other, Sequential):
        raise ValueError("add operator supports only objects of Sequential class, but "
                         f"{type(other)} is given.")


def _check_factor(sequential, factor) -> None:
    if not isinstance(factor, int):
        raise TypeError(f"unsupported operand type(s) for *: {type(sequential)} and "
                        f"{type(factor)}")
    if factor <= 0:
        raise ValueError(f"Non-positive multiplication factor {factor} for {type(sequential)}")


class _IndexedModules(Module):
    """Shared indexing of modules stored in order (Sequential, ModuleList), as torch's."""

    def _key(self, idx) -> str:
        """The key at position ``idx`` (Sequential's keys may be names)."""
        return list(self._modules)[self._position(idx)]

    def _slice_keys(self, idx: slice) -> list:
        return list(self._modules)[idx]

    def _position(self, idx) -> int:
        n = len(self._modules)
        idx = operator.index(idx)  # integer tensors too; torch's TypeError for the rest
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._sliced(idx)
        return self._modules[self._key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx) -> None:
        for key in self._slice_keys(idx) if isinstance(idx, slice) else [self._key(idx)]:
            delattr(self, key)
        # renumber so indices stay contiguous (names too), as torch does
        modules = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(modules):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove and return the module (or container of modules, for a slice) at ``key``."""
        value = self[key]
        del self[key]
        return value

    def _shift_in(self, index: int, module: Module) -> None:
        """Put ``module`` at ``index``, moving the later ones up (torch's insert)."""
        n = len(self._modules)
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module


class Sequential(_IndexedModules):
    """Modules applied one after the other.

    >>> net = gradkit.nn.Sequential(gradkit.nn.Linear(4, 8), gradkit.nn.ReLU())
    >>> net(gradkit.zeros(2, 4)).shape
    gradkit.Size([2, 8])
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def _sliced(self, idx: slice) -> Sequential:
        return type(self)(OrderedDict(list(self._modules.items())[idx]))  # names kept

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def insert(self, index: int, module: Module) -> Sequential:
        """Put ``module`` at ``index`` (negative counts from the end); returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        self._shift_in(index + n if index < 0 else index, module)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append each module of ``sequential``; returns self."""
        for layer in sequential:
            self.append(layer)
        return self

    def __add__(self, other: Sequential) -> Sequential:
        _check_sequential(other)
        return Sequential().extend(self).extend(other)

    def __iadd__(self, other: Sequential) -> Sequential:
        _check_sequential(other)
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other: int) -> Sequential:
        _check_factor(self, other)
        combined = Sequential()
        for _ in range(other):
            combined.extend(self)
        return combined

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        _check_factor(self, other)
        n = len(self)
        for i in range(n, n * other):  # torch's: by the keys "0", "1"... (a KeyError for names)
            self.add_module(str(i), self._modules[str(i % n)])
        return self


class ModuleList(_IndexedModules):
    """A list of modules whose parameters are registered (indexable, iterable).

    >>> blocks = gradkit.nn.ModuleList([gradkit.nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(blocks.parameters()))
    6
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _sliced(self, idx: slice) -> ModuleList:
        return type(self)(list(self._modules.values())[idx])

    # torch's ModuleList reads the keys "0", "1"... by number, not by position (they differ
    # only after an insert out of range, which torch allows)
    def _key(self, idx) -> str:
        return str(self._position(idx))

    def _slice_keys(self, idx: slice) -> list:
        return [str(k) for k in range(len(self._modules))[idx]]

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before ``index`` (as list.insert, for indices in range)."""
        self._shift_in(index, module)

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append each module of ``modules``; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList().extend(self).extend(other)

    def __repr__(self) -> str:
        """torch's: a run of modules with the same repr reads ``(0-2): 3 x Linear(...)``."""
        if not len(self):
            return self._get_name() + "()"
        runs: list[list] = []  # [first index, last index, repr]
        for i, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = [(f"({first}): " if first == last else
                  f"({first}-{last}): {last - first + 1} x ") + text.replace("\n", "\n  ")
                 for first, last, text in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"
