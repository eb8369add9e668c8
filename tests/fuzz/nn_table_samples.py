"""torch's older nn test tables (``common_nn``: ``module_tests``, ``get_new_module_tests()``,
``criterion_tests``, which test_nn.py turns into its NewModuleTest / CriterionTest cases) as an
oracle: each entry's module built in both libraries, given torch's parameters, run on the
entry's input (and target); outputs, gradients and second derivatives (where the entry's
``check_gradgrad`` allows) compared.

An entry's ``constructor`` is often a lambda over ``nn``; gradkit's twin is the same code with
``torch``/``nn``/``F`` bound to gradkit's (``gradkit_twin``, over function_twins.py).
``nn_table_scan.py`` is the command.
"""
from __future__ import annotations

import functools
import types

import gradkit
from fuzz.function_twins import rebound, twin_globals
from fuzz.module_samples import RANDOM_IN_TRAINING, _load
from fuzz.opinfo_gradgrad import gradgrad_difference
from fuzz.opinfo_samples import (
    UntranslatableError, compare_gradients, run_both, to_gradkit, torch)
from torch.testing._internal import common_nn


def entries() -> list:
    """(name, entry, is_criterion) of every table entry."""
    tables = ((common_nn.module_tests, False), (common_nn.get_new_module_tests(), False),
              (common_nn.criterion_tests, True))
    return [(entry_name(e), e, criterion) for table, criterion in tables for e in table]


def entry_name(entry: dict) -> str:
    if "fullname" in entry:
        return entry["fullname"]
    return entry["module_name"] + ("_" + entry["desc"] if "desc" in entry else "")


def gradkit_twin(value):
    """A torch constructor (or a value it closes over) as gradkit's."""
    if isinstance(value, functools.partial):
        return functools.partial(gradkit_twin(value.func), *to_gradkit(value.args, []),
                                 **to_gradkit(value.keywords, []))
    if isinstance(value, type) and issubclass(value, torch.nn.Module):
        if not value.__module__.startswith("torch.nn"):  # the tables' wrap_functional
            return type(value.__name__, (gradkit.nn.Module,),
                        {"forward": gradkit_twin(value.forward)})
        twin = getattr(gradkit.nn, value.__name__, None)
        if twin is None:
            raise UntranslatableError(f"gradkit.nn has no {value.__name__}")
        return twin
    if callable(value) and _torch_own(value):  # torch's function: gradkit's of that name
        twin = getattr(resolve_gradkit(value.__module__), value.__name__, None)
        if twin is None:
            raise UntranslatableError(f"gradkit has no {value.__module__}.{value.__name__}")
        return twin
    if isinstance(value, types.FunctionType):
        cells = tuple(types.CellType(gradkit_twin(c.cell_contents)) for c in
                      value.__closure__ or ())
        twin = rebound(value, twin_globals(value.__globals__), cells or None)
        twin.__defaults__ = to_gradkit(value.__defaults__, [])
        twin.__kwdefaults__ = to_gradkit(value.__kwdefaults__, [])
        return twin
    return to_gradkit(value, [])


def _torch_own(value) -> bool:
    module = getattr(value, "__module__", None) or ""
    return module.split(".")[0] == "torch" and not module.startswith("torch.testing") and \
        not isinstance(value, type)


def resolve_gradkit(module: str):
    """gradkit's twin of a torch module path (torch._C._nn is torch.nn.functional's)."""
    if module in ("torch._C._nn", "torch._C._VariableFunctions", "torch._C"):
        return gradkit.nn.functional if module == "torch._C._nn" else gradkit
    twin = gradkit
    for part in module.split(".")[1:]:
        twin = getattr(twin, part)
    return twin


def _constructor(entry: dict):
    return entry.get("constructor") or getattr(torch.nn, entry["module_name"])


def _draw(entry: dict, size_key: str, fn_key: str, fixed_key: str):
    if fn_key in entry:
        return entry[fn_key]()
    if size_key in entry:
        return torch.randn(entry[size_key])
    return entry.get(fixed_key)


def compare_entry(entry: dict, criterion: bool, training: bool) -> str | None:
    """One table entry in both libraries: None when they agree (or torch cannot run it)."""
    dtype = entry.get("default_dtype", torch.float64)
    previous = torch.get_default_dtype(), gradkit.get_default_dtype()
    torch.set_default_dtype(dtype)
    gradkit.set_default_dtype(to_gradkit(dtype, []))
    try:
        return _compare(entry, criterion, training)
    finally:
        torch.set_default_dtype(previous[0])
        gradkit.set_default_dtype(previous[1])


def _compare(entry: dict, criterion: bool, training: bool) -> str | None:
    torch.manual_seed(0)
    args = entry.get("constructor_args", ())
    try:
        torch_module = _constructor(entry)(*args)
        inputs = _draw(entry, "input_size", "input_fn", "input")
        target = _draw(entry, "target_size", "target_fn", "target") if criterion else None
    except Exception:  # noqa: BLE001 - an entry torch cannot build here (CUDA...)
        return None
    try:
        gradkit_module = gradkit_twin(_constructor(entry))(*to_gradkit(args, []))
    except UntranslatableError:
        return None
    except Exception as e:  # noqa: BLE001
        return f"constructor: gradkit raises {type(e).__name__}: {str(e)[:100]}"
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    inputs = tuple(_leaf(t) for t in inputs)
    extra = (target,) if criterion else ()
    extra += tuple(entry.get("extra_args", ()))
    leaves: list = []
    gradkit_args = to_gradkit(inputs, leaves) + to_gradkit(extra, [])
    torch_module.train(training)
    gradkit_module.train(training)
    found = _load(gradkit_module, torch_module, gradkit_args, {}, inputs + extra, {})
    if found:
        return found
    def run():
        return run_both(lambda: torch_module(*inputs, *extra),
                        lambda: gradkit_module(*gradkit_args))

    found, tout, gout = run()
    if found or tout is None:
        return found
    names = [f"input {i}" for i in range(len(leaves))] + [
        name for name, _ in torch_module.named_parameters()]
    torch_inputs = [t for t, _ in leaves] + list(torch_module.parameters())
    gradkit_inputs = [g for _, g in leaves] + list(gradkit_module.parameters())
    found = compare_gradients(tout, gout, torch_inputs, gradkit_inputs, names)
    if found or not entry.get("check_gradgrad", True):
        return found
    _, tout, gout = run()  # the first pass freed its graph
    return gradgrad_difference(tout, gout, torch_inputs, gradkit_inputs)


def _leaf(value):
    """A floating input as a leaf requiring grad (the tables' inputs are plain tensors)."""
    if isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex()):
        return value.detach().clone().requires_grad_(True)
    return value


def random_in_training(name: str) -> bool:
    return any(name.startswith(module) for module in RANDOM_IN_TRAINING)
