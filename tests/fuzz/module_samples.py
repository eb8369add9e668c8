"""torch's module table (ModuleInfo) as an oracle: each module built from torch's constructor
inputs in both libraries, given torch's parameters, run on torch's forward inputs.

``compare_module_input`` builds the torch module, builds gradkit's from the same constructor
arguments, loads torch's ``state_dict`` into it (so the names and shapes of parameters and
buffers are checked too), runs one forward in both and compares the outputs, the gradients of
the inputs and of every parameter, and the buffers after the forward (running statistics).
``module_scan.py`` is the command.
"""
from __future__ import annotations


import gradkit
from fuzz.opinfo_samples import (
    UntranslatableError, compare_gradients, difference, fresh_leaves, run_both, to_gradkit,
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


def _encoder_layer(value):
    """gradkit's twin of the torch encoder layer TransformerEncoder's inputs hand it (its
    settings read back from its parts); other values as they are."""
    if not isinstance(value, torch.nn.TransformerEncoderLayer):
        return value
    attention = value.self_attn
    return gradkit.nn.TransformerEncoderLayer(
        attention.embed_dim, attention.num_heads, value.linear1.out_features,
        dropout=value.dropout.p, activation=to_gradkit(value.activation, []),
        layer_norm_eps=value.norm1.eps, batch_first=attention.batch_first,
        norm_first=value.norm_first, bias=value.linear1.bias is not None)


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
        gradkit_module = cls(*to_gradkit([_encoder_layer(a) for a in cargs], []),
                             **to_gradkit(ckwargs, []))
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
    found, tout, gout = run_both(lambda: torch_module(*fargs, **fkwargs),
                                 lambda: gradkit_module(*gargs, **gkwargs))
    if found or tout is None:
        return found
    torch_buffers = dict(torch_module.named_buffers())
    for name, buffer in gradkit_module.named_buffers():
        found = name in torch_buffers and difference(torch_buffers[name], buffer)
        if found:
            return f"buffer {name} after forward: {found}"
    names = [f"input {i}" for i in range(len(leaves))] + [
        name for name, _ in torch_module.named_parameters()]
    return compare_gradients(
        tout, gout, [t for t, _ in leaves] + list(torch_module.parameters()),
        [g for _, g in leaves] + list(gradkit_module.parameters()), names)

