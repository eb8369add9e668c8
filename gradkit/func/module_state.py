"""torch.func's helpers for ensembles of modules: ``stack_module_state`` (one stacked tensor per
parameter and buffer name, for ``vmap`` over models) and ``replace_all_batch_norm_modules_``."""
from __future__ import annotations

from collections.abc import Sequence

from gradkit._tensor import Tensor
from gradkit.nn.layers_more import _BatchNorm
from gradkit.nn.module import Module
from gradkit.ops.joining import stack


def _stacked_leaf(tensors: Sequence[Tensor], name: str) -> Tensor:
    """torch's construct_stacked_leaf: the stack, a new leaf requiring grad when every tensor
    does (unrelated to the models' own), torch's error when only some do."""
    all_require = all(t.requires_grad for t in tensors)
    if not all_require and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach()._set_requires_grad() if all_require else result


def stack_module_state(models: Sequence[Module]) -> tuple[dict, dict]:
    """(params, buffers): for each name of ``models[0]``'s parameters and buffers, the models'
    tensors stacked along a new dim 0 (optimizable leaves), ready for
    ``vmap(lambda p, b, x: functional_call(models[0], (p, b), x))``. torch's errors for no
    model, mixed training/eval modes and mixed classes.
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    stacked = []
    for named in ("named_parameters", "named_buffers"):
        per_model = [dict(getattr(model, named)()) for model in models]
        stacked.append({name: _stacked_leaf([state[name] for state in per_model], name)
                        for name in per_model[0]})
    return stacked[0], stacked[1]


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """In place: every BatchNorm module of ``root`` (itself included) that tracks running
    statistics stops (its running_mean, running_var and num_batches_tracked become None), so it
    normalizes with the batch's statistics, as torch's; returns ``root``."""
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
