"""torch's module table (ModuleInfo) as an oracle: each module built from torch's constructor
inputs in both libraries, given torch's parameters, run on torch's forward inputs.

``compare_module_input`` builds the torch module, builds gradkit's from the same constructor
arguments, loads torch's ``state_dict`` into it (so the names and shapes of parameters and
buffers are checked too), runs one forward in both and compares the outputs, the gradients of
the inputs and of every parameter, and the buffers after the forward (running statistics).
``module_scan.py`` is the command.
"""
from __future__ import annotations

import numpy as np

import gradkit
from fuzz.opinfo_samples import (
    UntranslatableError, _array, _flat, _weighted_sum, difference, fresh_leaves, to_gradkit,
    torch)
from torch.testing._internal.common_modules import module_db  # noqa: F401

# their output depends on random draws in training mode
RANDOM_IN_TRAINING = {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                      "FeatureAlphaDropout", "RReLU", "FractionalMaxPool2d",
                      "FractionalMaxPool3d", "TransformerEncoderLayer", "TransformerDecoderLayer",
                      "TransformerEncoder", "TransformerDecoder", "Transformer",
                      "MultiheadAttention"}


def gradkit_class(module_info):
    return getattr(gradkit.nn, module_info.module_cls.__name__, None)


def _load(gradkit_module, torch_module, gargs, gkwargs, fargs, fkwargs) -> str | None:
    """torch's parameters and buffers into gradkit's module (lazy ones made by a first call)."""
    if any(isinstance(p, torch.nn.parameter.UninitializedParameter)
           for p in torch_module.parameters()):
        with torch.no_grad():
            torch_module(*fargs, **fkwargs)
        with gradkit.no_grad():
            gradkit_module(*gargs, **gkwargs)
    state = torch_module.state_dict()
    mine = gradkit_module.state_dict()
    if set(state) != set(mine):
        return f"state_dict keys: torch only {sorted(set(state) - set(mine))}, gradkit only " \
               f"{sorted(set(mine) - set(state))}"
    gradkit_module.load_state_dict({k: to_gradkit(v.detach(), []) for k, v in state.items()})
    return None


def _gradient_difference(torch_module, gradkit_module, tout, gout, leaves) -> str | None:
    pairs = [(t, g) for t, g in zip(tout, gout) if isinstance(t, torch.Tensor)
             and t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]
    if not pairs:
        return None
    rng = np.random.default_rng(0)
    weights = [torch.tensor(rng.standard_normal(t.shape)).to(t.dtype).numpy() for t, _ in pairs]
    params_t = [p for _, p in torch_module.named_parameters()]
    params_g = [p for _, p in gradkit_module.named_parameters()]
    inputs_t = [t for t, _ in leaves] + params_t
    inputs_g = [g for _, g in leaves] + params_g
    try:
        expected = torch.autograd.grad(_weighted_sum(torch, [t for t, _ in pairs], weights),
                                       inputs_t, allow_unused=True)
    except Exception:  # noqa: BLE001 - torch refuses: not compared
        return None
    try:
        got = gradkit.autograd.grad(_weighted_sum(gradkit, [g for _, g in pairs], weights),
                                    inputs_g, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return f"backward: gradkit raises {type(e).__name__}: {str(e)[:100]}"
    names = [f"input {i}" for i in range(len(leaves))] + [
        n for n, _ in torch_module.named_parameters()]
    for name, a, b in zip(names, expected, got):
        if a is None or b is None:
            other = b if a is None else a
            if other is not None and np.any(_array(other)):
                return f"grad of {name}: None in {'torch' if a is None else 'gradkit'} only"
            continue
        found = difference(a, b, 1e-6)
        if found:
            return f"grad of {name}: {found}"
    return None


def compare_module_input(module_info, module_input, dtype, training: bool) -> str | None:
    """One ModuleInput of torch's table in both libraries: None when they agree."""
    cls = gradkit_class(module_info)
    if cls is None:
        return None
    cargs, ckwargs = module_input.constructor_input.args, module_input.constructor_input.kwargs
    fargs, fkwargs = module_input.forward_input.args, module_input.forward_input.kwargs
    torch.manual_seed(0)
    try:
        torch_module = module_info.module_cls(*cargs, **ckwargs).to(dtype)
    except Exception:  # noqa: BLE001 - torch's own table entry that cannot build here
        return None
    leaves: list = []
    try:
        gradkit_module = cls(*to_gradkit(cargs, []), **to_gradkit(ckwargs, []))
    except UntranslatableError:
        return None
    except Exception as e:  # noqa: BLE001
        return f"constructor: gradkit raises {type(e).__name__}: {str(e)[:100]}"
    gradkit_module = gradkit_module.to(to_gradkit(dtype, []))
    torch_module.train(training)
    gradkit_module.train(training)
    fargs, fkwargs = fresh_leaves(fargs), fresh_leaves(fkwargs)
    gargs, gkwargs = to_gradkit(fargs, leaves), to_gradkit(fkwargs, leaves)
    found = _load(gradkit_module, torch_module, gargs, gkwargs, fargs, fkwargs)
    if found:
        return found
    try:
        expected = torch_module(*fargs, **fkwargs)
    except Exception as e:  # noqa: BLE001
        try:
            gradkit_module(*gargs, **gkwargs)
        except Exception as ge:  # noqa: BLE001
            return None if isinstance(ge, type(e)) else \
                f"error types: torch {type(e).__name__} gradkit {type(ge).__name__}: {ge}"[:200]
        return f"torch raises {type(e).__name__}: {str(e)[:80]}; gradkit computes"
    try:
        got = gradkit_module(*gargs, **gkwargs)
    except Exception as e:  # noqa: BLE001
        return f"gradkit raises {type(e).__name__}: {str(e)[:100]}"
    tout, gout = _flat(expected), _flat(got)
    if len(tout) != len(gout):
        return f"outputs {len(tout)} vs {len(gout)}"
    for i, (a, b) in enumerate(zip(tout, gout)):
        found = difference(a, b)
        if found:
            return f"out[{i}] {found}"
    torch_buffers = dict(torch_module.named_buffers())
    for name, buffer in gradkit_module.named_buffers():
        found = name in torch_buffers and difference(torch_buffers[name], buffer)
        if found:
            return f"buffer {name} after forward: {found}"
    return _gradient_difference(torch_module, gradkit_module, tout, gout, leaves)

