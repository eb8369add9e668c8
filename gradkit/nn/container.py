"""Containers: Sequential (chains modules) and ModuleList (holds them)."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator

from gradkit.nn.module import Module


class _IndexedModules(Module):
    """Shared indexing of modules stored under "0", "1", ... (Sequential, ModuleList)."""

    def _index(self, idx: int) -> str:
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules)[idx % n]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(*list(self._modules.values())[idx]) if isinstance(
                self, Sequential) else type(self)(list(self._modules.values())[idx])
        return self._modules[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._index(idx), module)

    def __delitem__(self, idx: int) -> None:
        del self._modules[self._index(idx)]
        # renumber so indices stay contiguous, as torch does
        modules = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(modules):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self


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

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_IndexedModules):
    """A list of modules whose parameters are registered (indexable, iterable).

    >>> blocks = gradkit.nn.ModuleList([gradkit.nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(blocks.parameters()))
    6
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        for module in modules or ():
            self.append(module)

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

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
