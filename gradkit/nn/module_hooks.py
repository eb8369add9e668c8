"""Module hooks: forward (pre-)hooks and full backward (pre-)hooks, with torch.nn's semantics.

A full backward hook sees the gradients of the module's tensor inputs and outputs. As in torch,
the module call routes its tensor inputs and outputs through an identity Function
(``BackwardHookFunctionBackward`` nodes): the node after the outputs records ``grad_output``
(and runs the backward pre-hooks), the node before the inputs calls the backward hooks with
``grad_input``, and a hook's return value replaces those gradients.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.autograd.function import Function
from gradkit.autograd.graph import RemovableHandle
from gradkit.autograd.grad_mode import is_grad_enabled
from gradkit.nn.module_global_hooks import (
    FlaggedHandle, _global_backward_pre_hooks, _global_forward_hooks,
    _global_forward_hooks_always_called, _global_forward_hooks_with_kwargs,
    _global_forward_pre_hooks, global_backward_hooks)
from gradkit.nn.module_legacy_hooks import register_legacy_backward_hooks

# the per-module hook tables, with torch's attribute names
HOOK_TABLES = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
               "_backward_pre_hooks", "_state_dict_pre_hooks", "_state_dict_hooks",
               "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


def _register(hooks: OrderedDict, hook: Callable, prepend: bool,
              flags: tuple = ()) -> RemovableHandle:
    """Add ``hook`` to ``hooks`` (first when ``prepend``) and set it in each flag table."""
    flag_tables = tuple(table for table, on in flags if on)
    handle = FlaggedHandle(hooks, flag_tables)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    for table in flag_tables:
        table[handle.id] = True
    return handle


class ModuleHooks:
    """The hook half of :class:`gradkit.nn.Module` (registration and the hooked call)."""

    def _init_hooks(self) -> None:
        for name in HOOK_TABLES:
            object.__setattr__(self, name, OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)  # None: no backward hook yet

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``(module, args, kwargs)``) before forward.

        A non-None result replaces args (a single value is wrapped in a tuple); with
        ``with_kwargs`` it must be a tuple ``(args, kwargs)``.
        """
        return _register(self._forward_pre_hooks, hook, prepend,
                         ((self._forward_pre_hooks_with_kwargs, with_kwargs),))

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (or ``(module, args, kwargs, output)``) after forward.

        A non-None result replaces the output; ``always_call`` runs it even if forward raised.
        """
        return _register(self._forward_hooks, hook, prepend,
                         ((self._forward_hooks_with_kwargs, with_kwargs),
                          (self._forward_hooks_always_called, always_call)))

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the output gradients are known; a non-None
        result (a tuple like grad_output) replaces them."""
        return _register(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` once the gradients of the tensor inputs
        are computed; a non-None result (a tuple like grad_input) replaces them."""
        self._set_backward_kind(full=True)
        return _register(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """torch's deprecated non-full hook: ``hook(module, grad_input, grad_output)`` on the
        node that made the (first) output, with that node's own gradients."""
        self._set_backward_kind(full=False)
        return _register(self._backward_hooks, hook, prepend=False)

    def _set_backward_kind(self, full: bool) -> None:
        if self.__dict__.get("_is_full_backward_hook") is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    def _backward_hooks_of_kind(self, full: bool) -> list:
        own = list(self._backward_hooks.values()) \
            if self.__dict__.get("_is_full_backward_hook") is full else []
        return global_backward_hooks(full) + own

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        """The module call when some hook is registered (torch's ``_call_impl``): global hooks
        run before the module's own; ``always_call`` forward hooks run even when a pre-hook,
        forward or another forward hook raised."""
        state = {"args": args, "kwargs": kwargs, "output": None, "called": set()}
        try:
            return self._hooked_call(state)
        except Exception:
            self._run_always_called_hooks(state)
            raise

    def _hooked_call(self, state: dict):
        args, kwargs = state["args"], state["kwargs"]
        for hook_id, hook in (*_global_forward_pre_hooks.items(),
                              *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
            state["args"], state["kwargs"] = args, kwargs
        full_hooks = self._backward_hooks_of_kind(full=True)
        pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        backward = None
        if full_hooks or pre_hooks:
            backward = _BackwardHook(self, full_hooks, pre_hooks)
            state["args"] = args = backward.setup_input_hook(args)
        output = state["output"] = self.forward(*args, **kwargs)
        for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called \
                    or hook_id in _global_forward_hooks_always_called:
                state["called"].add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs \
                    or hook_id in _global_forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = state["output"] = result
        if backward is not None:
            if not isinstance(output, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(output)}",
                              stacklevel=4)
            output = backward.setup_output_hook(output)
        legacy_hooks = self._backward_hooks_of_kind(full=False)
        if legacy_hooks:
            register_legacy_backward_hooks(self, legacy_hooks, args, output)
        return output

    def _run_always_called_hooks(self, state: dict) -> None:
        args, kwargs, output = state["args"], state["kwargs"], state["output"]
        # torch calls the global ones without kwargs, whatever their with_kwargs
        for hook_id, hook in tuple(_global_forward_hooks.items()):
            if hook_id in _global_forward_hooks_always_called \
                    and hook_id not in state["called"]:
                _call_silenced(lambda hook=hook: hook(self, args, output), "global module")
        for hook_id, hook in tuple(self._forward_hooks.items()):
            if hook_id not in self._forward_hooks_always_called or hook_id in state["called"]:
                continue
            if hook_id in self._forward_hooks_with_kwargs:
                _call_silenced(lambda hook=hook: hook(self, args, kwargs, output), "module")
            else:
                _call_silenced(lambda hook=hook: hook(self, args, output), "module")


def _call_silenced(call: Callable, kind: str) -> None:
    try:
        call()
    except Exception as e:  # the error of forward is the one to report
        warnings.warn(f"{kind} forward hook with ``always_call=True`` raised an exception that "
                      f"was silenced as another error was raised in forward: {e}", stacklevel=4)


class BackwardHookFunction(Function):
    """Identity on tensors: gives the module's inputs/outputs a node to hook (torch's name)."""

    @staticmethod
    def forward(ctx, *tensors):
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return grads


class _BackwardHook:
    """One module call's backward hooks: what the output node saw, what the input node calls.

    Hooks see one gradient per positional argument (per output): None where it is no tensor.
    """

    def __init__(self, module: ModuleHooks, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks, self.pre_hooks = hooks, pre_hooks  # global ones first, as torch
        self.input_positions = self.output_positions = None  # set when routed
        self.n_inputs = self.n_outputs = 0
        self.grad_outputs = None

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, self.input_positions = self._route(args, self._input_hook, is_input=True)
        return args

    def setup_output_hook(self, output):
        if isinstance(output, Tensor):
            self.n_outputs = 1
            routed, self.output_positions = self._route((output,), self._output_hook, False)
            return routed[0]
        if isinstance(output, tuple):  # torch routes no list: its hooks then never run
            self.n_outputs = len(output)
            routed, self.output_positions = self._route(output, self._output_hook, False)
            return type(output)(*routed) if hasattr(output, "_fields") else routed
        return output

    def _route(self, values: tuple, node_hook: Callable, is_input: bool):
        """Pass the tensors among ``values`` through BackwardHookFunction and hook its node;
        returns the new values and the tensors' positions (None when nothing was routed)."""
        positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        tensors = [values[i] for i in positions]
        if not (is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return values, None
        routed = BackwardHookFunction.apply(*tensors)
        node = next(t.grad_fn for t in routed if t.grad_fn is not None)
        if is_input:
            node.register_hook(node_hook)
        else:
            node.register_prehook(node_hook)
        values = list(values)
        for i, t in zip(positions, routed):
            values[i] = t
        return tuple(values), positions

    def _output_hook(self, grad_outputs: tuple):
        module = self.module
        packed = _pack_with_none(self.output_positions, grad_outputs, self.n_outputs)
        for hook in self.pre_hooks:
            result = hook(module, packed)
            if result is not None:
                packed = _checked(result, len(packed), "Backward pre hook", "grad_output")
        self.grad_outputs = packed
        if self.input_positions is None:
            # no input requires grad: the hooks run now, with None for every grad_input (torch
            # warns even when there are only pre-hooks)
            warnings.warn("Full backward hook is firing when gradients are computed with respect "
                          "to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=2)
            for hook in self.hooks:
                result = hook(module, (None,) * self.n_inputs, packed)
                if result is not None and not (isinstance(result, tuple)
                                               and all(r is None for r in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        if self.input_positions is None:
            self.grad_outputs = None
        return tuple(packed[i] for i in self.output_positions)

    def _input_hook(self, grad_inputs: tuple, _grad_outputs: tuple):
        if self.grad_outputs is None:  # reached without passing the outputs (double backward)
            return None
        module = self.module
        packed = _pack_with_none(self.input_positions, grad_inputs, self.n_inputs)
        for hook in self.hooks:
            result = hook(module, packed, self.grad_outputs)
            if result is not None:
                packed = _checked(result, len(packed), "Backward hook", "grad_input")
        self.grad_outputs = None
        return tuple(packed[i] for i in self.input_positions)


def _pack_with_none(positions: list, values, size: int) -> tuple:
    packed = [None] * size
    for i, value in zip(positions, values):
        packed[i] = value
    return tuple(packed)


def _checked(result, expected: int, hook_kind: str, what: str) -> tuple:
    if not isinstance(result, tuple):
        result = (result,) if isinstance(result, Tensor) else tuple(result)
    if len(result) != expected:
        raise RuntimeError(f"{hook_kind} returned an invalid number of {what}, got "
                           f"{len(result)}, but expected {expected}")
    return result
