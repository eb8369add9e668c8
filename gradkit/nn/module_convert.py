"""Module conversions (a mixin of ``nn.Module``): ``to``, ``double``/``float``/``half``,
``type``, ``to_empty``, ``cpu``/``cuda``, ``share_memory`` and the ``_apply`` they share."""
from __future__ import annotations

import warnings
from collections.abc import Callable

from gradkit import __future__ as future, backend
from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.creation import zeros_like
from gradkit.nn.parameter import Parameter
from gradkit.to_arguments import to_arguments
from gradkit.utils._swap import swap_tensors

COMPLEX_MODULES = (
    "Complex modules are a new feature under active development whose design may change, and "
    "some modules might not work as expected when using complex tensors as parameters or "
    "buffers. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a complex module "
    "does not work as expected.")


class ModuleConvert:
    """Casts and moves of every parameter, gradient and buffer, in place."""

    def to(self, *args, **kwargs):
        """Move/cast parameters and buffers in place (a dtype casts the floating and complex
        ones only; a memory format applies to 4-d and 5-d tensors only); returns self."""
        device, dtype, copy, _ = to_arguments(args, kwargs)
        if copy is not None:  # even False, as torch's parser
            raise RuntimeError(".to() does not accept copy argument")
        if device is not None:
            backend.device(device)  # torch's parser refuses a bad device string first
        if isinstance(dtype, backend.dtype):
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn(COMPLEX_MODULES, stacklevel=2)
        layout = kwargs.get("memory_format")

        def convert(t: Tensor) -> Tensor:
            cast = dtype if t.is_floating_point() or t.is_complex() else None
            if layout is not None and t.dim() in (4, 5):
                return t.to(device, cast, memory_format=layout)
            return t.to(device, cast)
        return self._apply(convert)

    def double(self):
        """Cast floating parameters and buffers to float64; returns self."""
        return self._apply(lambda t: t.to(backend.float64) if t.is_floating_point() else t)

    def float(self):
        """Cast floating parameters and buffers to float32; returns self."""
        return self._apply(lambda t: t.to(backend.float32) if t.is_floating_point() else t)

    def half(self):
        """Cast floating parameters and buffers to float16; returns self."""
        return self._apply(lambda t: t.to(backend.float16) if t.is_floating_point() else t)

    def type(self, dst_type):
        """Cast every parameter and buffer (integer ones too) to ``dst_type``; returns self."""
        return self._apply(lambda t: t.type(dst_type))

    def to_empty(self, *, device, recurse: bool = True):
        """Parameters and buffers on ``device`` without their values (torch leaves the memory
        uninitialized; gradkit fills zeros); returns self."""
        return self._apply(lambda t: zeros_like(t, device=device), recurse)

    def cpu(self):
        """Move parameters and buffers to the CPU; returns self."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Move parameters and buffers to a GPU (``cuda`` or ``device``); returns self."""
        return self.to("cuda" if device is None else device)

    def share_memory(self):
        """``share_memory_()`` on every parameter and buffer (a lazy module's placeholders
        refuse, as torch's); returns self."""
        return self._apply(lambda t: t.share_memory_())

    def _apply(self, convert: Callable[[Tensor], Tensor], recurse: bool = True):
        """``convert`` every parameter, its gradient and every buffer (under no_grad). A new
        tensor becomes the parameter's (or gradient's) data, so references taken earlier (an
        optimizer's) follow, as torch's default ``param.data = ...``; with
        ``gradkit.__future__.set_overwrite_module_params_on_conversion(True)`` new Parameter
        objects replace them instead; with ``set_swap_module_params_on_conversion(True)`` the
        parameter (and gradient) objects swap their contents with the converted ones."""
        overwrite = future.get_overwrite_module_params_on_conversion()
        swap = future.get_swap_module_params_on_conversion()
        for module in self.modules() if recurse else (self,):
            for key, param in module._parameters.items():
                if param is None:
                    continue
                if swap:
                    _swap_converted(module, key, param, convert)
                    continue
                grad = param.grad
                new = _converted(param, convert, keep=not overwrite)
                if overwrite:
                    module._parameters[key] = param = Parameter(new, param.requires_grad)
                if grad is not None:
                    new_grad = _converted(grad, convert, keep=not overwrite)
                    if overwrite:
                        param.grad = new_grad.requires_grad_(grad.requires_grad)
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    module._buffers[name] = convert(buffer)
        return self


def _converted(t: Tensor, convert: Callable[[Tensor], Tensor], keep: bool) -> Tensor:
    """``convert(t)`` under no_grad; ``keep``: ``t`` itself, given the converted data."""
    with no_grad():
        new = convert(t)
    if keep and new is not t:
        t._data = new._data
        return t
    return new


def _swap_converted(module, key: str, param: Tensor, convert) -> None:
    """torch's _apply under swap_module_params_on_conversion: the parameter swaps contents with
    a new Parameter of the converted data, its gradient with the converted gradient."""
    with no_grad():
        new = Parameter(convert(param), requires_grad=param.requires_grad)
    grad = param.grad
    if grad is not None:  # torch drops the gradient's second user (the parameter) first
        param.grad = None
    try:
        swap_tensors(param, new)
    except Exception as error:
        if grad is not None:
            param.grad = grad
        raise RuntimeError(f"_apply(): Couldn't swap {module._get_name()}.{key}") from error
    if grad is None:
        return
    with no_grad():
        new_grad = convert(grad).requires_grad_(grad.requires_grad)
    try:
        swap_tensors(grad, new_grad)
    except Exception as error:
        raise RuntimeError(f"_apply(): Couldn't swap {module._get_name()}.{key}.grad") from error
    param.grad = grad
