"""Run an unchanged torch program on gradkit: ``import torch`` (and ``torch.nn`` ...) give gradkit.

    python -m gradkit.utils.as_torch script.py [args...]

or, in Python, :func:`install` before the program imports torch. ``import torch.X`` gives
``gradkit.X``; torch packages gradkit does not implement (``torch.utils.data``,
``torchvision`` ...) fail with ModuleNotFoundError naming them (see docs/torch_coverage.md).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import runpy
import sys

import gradkit
from gradkit._not_implemented import NOT_IMPLEMENTED, message


class _ExistingModule(importlib.abc.Loader):
    """Loads a torch name as the gradkit module already imported."""

    def __init__(self, module) -> None:
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        pass


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """``torch.X`` -> ``gradkit.X``; torch packages gradkit lacks -> a clear error."""

    def find_spec(self, fullname: str, path=None, target=None):
        top = fullname.partition(".")[0]
        if top != "torch" and fullname not in NOT_IMPLEMENTED:
            return None
        if fullname in NOT_IMPLEMENTED or top != "torch":
            raise ModuleNotFoundError(message(fullname), name=fullname)
        target_name = "gradkit" + fullname[len("torch"):]
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            if e.name != target_name:
                raise
            raise ModuleNotFoundError(message(fullname), name=fullname) from None
        return importlib.machinery.ModuleSpec(fullname, _ExistingModule(module))


def install() -> None:
    """Make ``import torch`` (and its submodules) import gradkit, in this process."""
    sys.modules["torch"] = gradkit
    if not any(isinstance(f, TorchAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchAliasFinder())


def main(argv: list[str] | None = None) -> None:
    """``python -m gradkit.utils.as_torch script.py args...``."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        raise SystemExit("usage: python -m gradkit.utils.as_torch script.py [args...]")
    install()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
