"""torch.nn.utils.skip_init and convert_conv{2,3}d_weight_memory_format.

``skip_init`` builds a module without initialising its parameters: torch builds it on the
"meta" device, gradkit (which has none) builds it normally and puts the random generator back
as it was, so no draws are consumed; then ``to_empty`` leaves the values uninitialised.
"""
from __future__ import annotations

import inspect

from gradkit.generator import get_rng_state, set_rng_state
from gradkit.nn.module import Module


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """``module_cls(*args, **kwargs)`` with uninitialised parameters and buffers; the class
    must take a ``device`` argument, as torch requires."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    state = get_rng_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        set_rng_state(state)
    return module.to_empty(device=final_device)


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """``module`` unchanged: gradkit keeps no memory formats (channels_last), so there is
    nothing to convert."""
    return module


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """``module`` unchanged, as convert_conv2d_weight_memory_format."""
    return module


__all__ = ["skip_init", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format"]
