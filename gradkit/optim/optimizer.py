"""Optimizer: parameter groups, per-parameter state, zero_grad, state dicts and torch's hooks."""
from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import enable_grad, set_grad_enabled
from gradkit.creation import tensor
from gradkit.autograd.hook_handles import RemovableHandle, _HookDict, add_hook
from gradkit.ops.complex_views import view_as_real
from gradkit.nn.module import _reset_grad
from gradkit.profiler.record_function import record_function
from gradkit.torch_helpers import typename

_REQUIRED = object()  # marks a hyper-parameter with no default (none of ours today)
# state_dict: pre hook(optimizer), post hook(optimizer, state_dict) -> new state_dict or None;
# load_state_dict: pre hook(optimizer, state_dict) -> new state_dict or None, post hook(optimizer)
_STATE_DICT_HOOK_KINDS = ("state_dict_pre", "state_dict_post", "load_state_dict_pre",
                          "load_state_dict_post")
_global_step_pre_hooks = _HookDict()
_global_step_post_hooks = _HookDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` before every optimizer's step (torch's global hook);
    it may return ``(new_args, new_kwargs)``."""
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` after every optimizer's step."""
    return add_hook(_global_step_post_hooks, hook)


def _with_step_hooks(step: Callable) -> Callable:
    """``step`` inside torch's profiler range, between the pre and post step hooks."""
    @functools.wraps(step)
    def hooked_step(*args, **kwargs):
        self = args[0]
        # the range name torch's profiler uses, so traces of both read alike
        with record_function(f"Optimizer.step#{type(self).__name__}.step"):
            for hook in (*_global_step_pre_hooks.values(),
                         *self._optimizer_step_pre_hooks.values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{step} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            out = step(*args, **kwargs)
            for hook in (*self._optimizer_step_post_hooks.values(),
                         *_global_step_post_hooks.values()):
                hook(self, args, kwargs)
            return out

    hooked_step.hooked = True
    return hooked_step


class Optimizer:
    """Base class: subclasses implement ``_update_group(group)`` for one parameter group.

    Parameters are updated in place under ``no_grad`` (their ``_version`` bumps), so
    tensors saved for a backward that is still pending notice the change. torch's
    implementation switches are kept in the groups: ``foreach`` and ``fused`` only pick
    torch's kernel (on the CPU its fused kernels give the single-tensor algorithm's numbers to
    rounding, so gradkit runs that algorithm after torch's checks of fused parameters);
    ``differentiable=True`` runs the step in grad mode, recording the update in the graph;
    ``capturable=True`` is refused at the step, as torch refuses it for CPU tensors.
    """

    # torch's words for the tensors its capturable check names
    _capturable_names = "params and state_steps"
    _capturable_devices = ("cuda", "xpu", "hpu", "privateuseone", "xla")
    _capturable_foreach_xla = False  # whether torch's multi-tensor check lists xla too
    _capturable_checked_first = False  # Adam's multi-tensor step checks it before autograd
    _foreach_supports_autograd = False  # SGD's multi-tensor step records the graph

    # state entries torch keeps as 0-d tensors: loaded as numbers (older state dicts), they
    # become tensors of the default dtype again (torch's __setstate__)
    _scalar_state_keys: tuple[str, ...] = ()

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks = _HookDict()
        self._optimizer_step_post_hooks = _HookDict()
        self._state_dict_hooks = {kind: _HookDict() for kind in _STATE_DICT_HOOK_KINDS}
        # as torch: the class's step is wrapped once, when its first instance is built
        if not getattr(type(self).step, "hooked", False):
            type(self).step = _with_step_hooks(type(self).step)
        self.state: defaultdict[Tensor, dict] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {typename(params)}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)
        # torch checks these after the groups
        if defaults.get("fused") and defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("fused") and defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyper-parameters (missing ones: defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = [params] if isinstance(params, Tensor) else list(params)
        # torch 2.x takes (name, tensor) pairs too: the names go to the group's param_names
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names and len(names) != len(params):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        if names:
            param_group = {**param_group, "param_names": names}
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(param).__name__}")
            # a differentiable optimizer may step a non-leaf (a parameter computed upstream)
            if not (self.defaults.get("differentiable") or param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        group = {**self.defaults, **param_group, "params": params}
        missing = [k for k, v in group.items() if v is _REQUIRED]
        if missing:
            raise ValueError(f"parameter group didn't specify a value of required "
                             f"optimization parameter {missing[0]}")
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        for other in self.param_groups:
            if ("param_names" in group) != ("param_names" in other):
                raise ValueError("all optimizer param groups should be with/without names. "
                                 "cannot add param group "
                                 f"{'with' if names else 'without'} names to the optimizer")
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if existing & {id(p) for p in params}:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before this optimizer's step; it may return
        ``(new_args, new_kwargs)`` for the step."""
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after this optimizer's step."""
        return add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable,
                                     prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` before :meth:`state_dict` reads the optimizer."""
        return self._add_state_dict_hook("state_dict_pre", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable,
                                      prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` after :meth:`state_dict`; may return a new one."""
        return self._add_state_dict_hook("state_dict_post", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable,
                                          prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` before loading; may return the state dict to load."""
        return self._add_state_dict_hook("load_state_dict_pre", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable,
                                           prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` after :meth:`load_state_dict`."""
        return self._add_state_dict_hook("load_state_dict_post", hook, prepend)

    def _add_state_dict_hook(self, kind: str, hook: Callable, prepend: bool) -> RemovableHandle:
        hooks = self._state_dict_hooks[kind]
        handle = add_hook(hooks, hook)
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def _run_state_dict_hooks(self, kind: str, *args: Any) -> Any:
        """Call the hooks of ``kind``; the last state dict a hook returned (else args[0])."""
        result = args[0] if args else None
        for hook in self._state_dict_hooks[kind].values():
            returned = hook(self, *((result,) if args else ()))
            if returned is not None:
                result = returned
        return result

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimized parameter (to None by default)."""
        with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
            for group in self.param_groups:
                for param in group["params"]:
                    _reset_grad(param, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        # differentiable=True records the update in the graph (torch reads the defaults)
        with set_grad_enabled(bool(self.defaults.get("differentiable"))):
            for group in self.param_groups:
                self._update_group(group)
                self._refuse_step(group)
        return loss

    def _params_with_grads(self, group: dict[str, Any]):
        """(param, grad) for the group's parameters that have a gradient (negated to maximize)."""
        for param in group["params"]:
            grad = param.grad
            if grad is not None:
                yield param, (-grad if group["maximize"] else grad)

    def _update_group(self, group: dict[str, Any]) -> None:
        raise NotImplementedError

    def _step_refused(self, group: dict[str, Any]) -> bool:
        """Whether torch refuses this group's step after making every parameter's state (see
        :meth:`_refuse_step`): capturable on the CPU (torch's fused kernels skip that check),
        or a differentiable multi-tensor step."""
        return (bool(group.get("capturable")) and not group.get("fused")) or \
            (bool(group.get("foreach")) and bool(group.get("differentiable"))
             and not self._foreach_supports_autograd)

    def _refuse_step(self, group: dict[str, Any]) -> None:
        """torch's checks of a step once the states are made, before any step count moves: a
        capturable step wants tensors no CPU has (the multi-tensor form's list leaves out xla),
        and torch's multi-tensor kernels record no graph."""
        if not (self._step_refused(group) and any(p.grad is not None for p in group["params"])):
            return
        foreach = bool(group.get("foreach"))
        capturable = bool(group.get("capturable")) and not group.get("fused")
        if foreach and group.get("differentiable") and not (
                capturable and self._capturable_checked_first):
            raise AssertionError("_foreach ops don't support autograd")
        devices = [d for d in self._capturable_devices
                   if not (foreach and d == "xla" and not self._capturable_foreach_xla)]
        names = self._capturable_names
        if foreach and names.count(",") == 1:  # NAdam's multi-tensor words
            names = names.replace(" and", ", and")
        raise AssertionError(f"If capturable=True, {names} must be on supported "
                             f"devices: {devices}.")

    def _check_fused(self, group: dict[str, Any], once: bool, new_states: bool) -> None:
        """torch's checks before a ``fused=True`` step: ``once``, the first parameter with a
        gradient on the optimizer's first step (SGD, Adagrad); ``new_states``, each one whose
        state is still empty (Adam, Adagrad)."""
        if not group.get("fused"):
            return
        with_grads = [p for p in group["params"] if p.grad is not None]
        if once and with_grads and getattr(self, "_need_device_dtype_check_for_fused", True):
            check_fused(with_grads[0])
            self._need_device_dtype_check_for_fused = False
        for param in with_grads if new_states else ():
            if not self.state.get(param):
                check_fused(param)

    # -- state dicts -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters as indices."""
        self._run_state_dict_hooks("state_dict_pre")
        index = {}
        groups = []
        for group in self.param_groups:
            for param in group["params"]:
                index.setdefault(id(param), len(index))
            groups.append({**group, "params": [index[id(p)] for p in group["params"]]})
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return self._run_state_dict_hooks("state_dict_post",
                                          {"state": state, "param_groups": groups})

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyper-parameters and state (copied; tensors cast to each parameter)."""
        # as torch: the hooks see a shallow copy (so they may change the caller's groups)
        state_dict = self._run_state_dict_hooks("load_state_dict_pre", dict(state_dict))
        state_dict = copy.deepcopy(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        pairs = list(zip(groups, saved_groups, strict=True))
        if any(len(g["params"]) != len(s["params"]) for g, s in pairs):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = {i: p for g, s in pairs for i, p in zip(s["params"], g["params"], strict=True)}
        self.state = defaultdict(dict)
        for i, values in state_dict["state"].items():
            param = by_index.get(int(i))
            if param is not None:
                self.state[param] = {k: _cast_like(param, k, v) for k, v in values.items()}
                for key in self._scalar_state_keys:
                    if key in self.state[param] and not isinstance(self.state[param][key], Tensor):
                        self.state[param][key] = tensor(float(self.state[param][key]),
                                                        device=param.device)
        # saved hyper-parameters on our parameters; our param_names unless saved ones exist
        self.param_groups = [{**({"param_names": g["param_names"]} if "param_names" in g else {}),
                              **s, "params": g["params"]} for g, s in pairs]
        # torch's __setstate__: a group added after loading has the key (Adafactor, LBFGS)
        self.defaults.setdefault("differentiable", False)
        self._run_state_dict_hooks("load_state_dict_post")

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"


_HYPERPARAMETER_NAMES = {"lr": "learning rate", "eps": "epsilon value"}


def check_one_element(name: str, value: Any) -> None:
    """torch's ``Tensor lr must be 1-element`` for a tensor hyperparameter."""
    if isinstance(value, Tensor) and value.numel() != 1:
        raise ValueError(f"Tensor {name} must be 1-element")


def check_nonnegative(nan_passes: bool = False, /, **values: float) -> None:
    """torch's ``Invalid learning rate: -1`` for hyperparameters that must be >= 0: its
    ``not 0.0 <= lr`` refuses a NaN, SGD's ``lr < 0.0`` (``nan_passes``) does not."""
    for key, value in values.items():
        check_one_element(key, value)  # (the comparison below needs one value)
        if (value < 0.0) if nan_passes else not 0.0 <= value:
            raise ValueError(f"Invalid {_HYPERPARAMETER_NAMES.get(key, key + ' value')}: {value}")


def check_betas(betas: tuple[float, float]) -> None:
    """torch's ``Invalid beta parameter at index i`` unless 0 <= beta < 1."""
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def check_fused(param: Tensor) -> None:
    """torch's refusal of a parameter ``fused=True`` cannot step: one not floating point."""
    if not param.is_floating_point():
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors "
                           f"of supported devices: {_FUSED_DEVICES} but {param.dtype} and "
                           f"{param.device.type}")


def saved_copy(value: Tensor, group: dict[str, Any]) -> Tensor:
    """``value`` cloned in a differentiable group, as torch's: the graph saves the clone, so
    the in-place updates of the state tensor that follow leave the saved one intact."""
    return value.clone() if group["differentiable"] else value


def decayed_gradient(grad: Tensor, param: Tensor, weight_decay: Any) -> Tensor:
    """L2 weight decay added to the gradient. A tensor ``weight_decay`` that requires grad
    goes in through torch's ``grad.addcmul_(param.clone(), weight_decay)``: in place, so the
    parameter's ``.grad`` holds the decayed gradient afterwards, as torch's does."""
    if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
        return grad.addcmul_(param.clone(), weight_decay)
    return grad.add(param, alpha=weight_decay)


def real_views(param: Tensor, *tensors: Tensor) -> list[Tensor]:
    """torch treats a complex parameter as pairs of independent reals: view_as_real of each."""
    if not param.is_complex():
        return list(tensors)
    return [view_as_real(t) for t in tensors]


def _cast_like(param: Tensor, key: str, value: Any) -> Any:
    """torch's policy: state tensors (in lists and dicts too) of a floating parameter take its
    dtype, whatever theirs; a complex parameter's keep theirs (NAdam's float32 ``mu_product``
    stays real); all follow its device; the step count stays as is."""
    if isinstance(value, dict):
        return {k: _cast_like(param, k, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_like(param, key, v) for v in value)
    if not isinstance(value, Tensor) or key == "step":
        return value
    if param.is_floating_point():
        return value.to(param.device, param.dtype)
    return value.to(param.device)
