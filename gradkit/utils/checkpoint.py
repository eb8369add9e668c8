"""Activation checkpointing: trade compute for memory by recomputing in backward.

``checkpoint(fn, *args)`` runs ``fn`` keeping nothing it would save for
backward; when backward first needs one of those tensors, ``fn`` runs again
(same inputs, same random numbers) and the recomputed values are used.

>>> from gradkit.utils.checkpoint import checkpoint
>>> y = checkpoint(lambda x: x.sin().exp(), gradkit.randn(3, requires_grad=True),
...                use_reentrant=False)
>>> y.sum().backward()     # sin and exp run again here
"""
from __future__ import annotations

import contextlib
import warnings

from gradkit._tensor import Tensor
from gradkit import backend
from gradkit.autograd.api import backward
from gradkit.autograd.backward_pass import current_pass as _current_pass
from gradkit.autograd.function import Function
from gradkit.autograd.grad_mode import enable_grad
from gradkit.autograd.graph import saved_tensors_hooks
from gradkit.generator import get_rng_state, set_rng_state
from gradkit import nn


def checkpoint(function, *args, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, early_stop: bool = True, **kwargs):
    """``function(*args, **kwargs)``, recomputed during backward instead of stored.

    ``use_reentrant=False`` (the default; not passing it warns, as torch, whose default is
    True) packs saved tensors as indices through
    saved_tensors_hooks; ``True`` uses a Function whose backward reruns
    ``function`` and calls backward on it (tensor args only, no kwargs).
    ``preserve_rng_state`` replays the random stream, so dropout masks match.
    ``early_stop`` (non-reentrant): stop the recomputation once every saved tensor is back;
    a :func:`set_checkpoint_early_stop` block around forward overrides it.

    >>> out = checkpoint(block, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. gradkit uses use_reentrant=False when it is not passed "
                      "(torch: True, and an error in a future version); pass it to silence "
                      "this warning.", UserWarning, stacklevel=2)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    recomputation = _Recomputation(function, args, kwargs,
                                   get_rng_state() if preserve_rng_state else None,
                                   early_stop if _early_stop[0] is None else _early_stop[0])
    with saved_tensors_hooks(recomputation.pack, recomputation.unpack):
        result = function(*args, **kwargs)
    recomputation.held = None  # from now on, saved tensors come from recomputations
    return result


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run ``functions`` (a Sequential or a list of modules or functions) in order, split into
    ``segments`` chunks; each chunk but the last is a :func:`checkpoint`. Each function takes
    and returns one tensor. ``preserve_rng_state`` is the only keyword argument.

    >>> out = checkpoint_sequential(model, 2, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly. gradkit uses use_reentrant=False "
                      "when it is not passed (torch: True, and an error in a future version); "
                      "pass it to silence this warning.", UserWarning, stacklevel=2)
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, nn.Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = 0  # as torch's: segments - 1 checkpointed chunks of len // segments, then the rest
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(_run_in_order(functions[start:end]), input,
                           use_reentrant=bool(use_reentrant), preserve_rng_state=preserve)
    return _run_in_order(functions[end:])(input)


def _run_in_order(functions):
    def forward(input):
        for function in functions:
            input = function(input)
        return input

    return forward


_early_stop = [None]  # as torch: one setting for the process (None: each checkpoint's own),
# read when forward runs


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoints made in this block stop their recomputation as soon
    as every tensor backward needs is recomputed (the default) or rerun the whole function.

    Only forward needs to run inside the block.

    >>> with set_checkpoint_early_stop(False):
    ...     out = checkpoint(fn, x, use_reentrant=False)
    >>> out.sum().backward()    # reruns all of fn
    """
    previous = _early_stop[0]
    _early_stop[0] = enable
    try:
        yield
    finally:
        _early_stop[0] = previous


class _StopRecomputationError(Exception):
    """Raised by the recomputation's pack hook once it holds every tensor backward needs."""


@contextlib.contextmanager
def _rng_replayed(state):
    """Run a block from the random state ``state``, then continue the caller's stream."""
    if state is None:
        yield
        return
    current = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(current)


class _Recomputation:
    """The forward of one checkpoint call: saved tensors are indices into a rerun of it."""

    def __init__(self, function, args, kwargs, rng_state, early_stop: bool) -> None:
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.early_stop = early_stop
        self.device_block = backend.default_device_block()  # the forward's ``with device(...)``
        self.count = 0
        self.metadata = []  # of each packed tensor, to check the recomputed ones against
        self.values = {}   # index -> recomputed tensor, dropped as backward unpacks it
        self.recomputed_for = None  # the backward pass self.values were recomputed for
        # while forward runs, what it saves is kept: a grad() inside the function reads it
        self.held = {}

    def pack(self, tensor) -> int:
        index = self.count
        self.count += 1
        self.metadata.append(_metadata(tensor))
        if self.held is not None:
            self.held[index] = tensor
        return index

    def unpack(self, index: int):
        if self.held is not None:  # a grad() inside the checkpointed function
            return self.held[index]
        backward_pass = _current_pass()
        # as torch: one recomputation per backward pass (a second backward with retain_graph
        # recomputes), and one per read outside backward (``node._saved_result``)
        if backward_pass is None or backward_pass is not self.recomputed_for:
            self.recompute()
            self.recomputed_for = backward_pass
        if index not in self.values:
            raise RuntimeError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do "
                "so only once. Otherwise please open an issue with details on your use case.")
        return self.values.pop(index)

    def recompute(self) -> None:
        values = {}

        def keep(tensor):
            # detached, as torch: a saved output held with its own node would form a cycle
            tensor = tensor.detach() if tensor.requires_grad else tensor
            if len(values) == self.count:  # only without early stop: it stops at the count
                raise RuntimeError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    "than during the original forward pass.")
            values[len(values)] = tensor
            if self.early_stop and len(values) == self.count:
                raise _StopRecomputationError
            return tensor

        # the recomputed graph keeps its tensors as they are: a checkpointed function that
        # itself calls grad() (nested checkpoints, double backward) backpropagates through it
        with enable_grad(), _rng_replayed(self.rng_state), saved_tensors_hooks(keep, _as_is), \
                self.device_block:
            try:
                self.function(*self.args, **self.kwargs)
            except _StopRecomputationError:
                pass
        if len(values) != self.count:
            raise RuntimeError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{self.count}\nNumber of tensors saved during recomputation: {len(values)}")
        different = "".join(
            f"tensor at position {i}:\nsaved metadata: {saved}\nrecomputed metadata: "
            f"{_metadata(values[i])}\n" for i, saved in enumerate(self.metadata)
            if saved != _metadata(values[i]))
        if different:
            raise RuntimeError("torch.utils.checkpoint: Recomputed values for the following "
                               "tensors have different metadata than during the forward pass."
                               f"\n{different}")
        self.values = values


def _as_is(tensor):
    return tensor


def _metadata(tensor) -> dict:
    """What a recomputed saved tensor must share with the original (torch's three fields)."""
    return {"shape": tuple(tensor.shape), "dtype": tensor.dtype, "device": tensor.device}


class CheckpointFunction(Function):
    """use_reentrant=True: forward without graph; backward reruns and backpropagates (torch's
    name, so its node is ``CheckpointFunctionBackward``)."""

    @staticmethod
    def forward(ctx, function, preserve_rng_state, *args):
        ctx.function = function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.tensor_indices = [i for i, a in enumerate(args) if _is_tensor(a)]
        ctx.plain_args = [None if _is_tensor(a) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_indices])
        return function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if _current_pass().targeted:  # its inner backward would accumulate into .grad instead
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        args = list(ctx.plain_args)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            args[i] = t.detach()._set_requires_grad(t.requires_grad)
        with enable_grad(), _rng_replayed(ctx.rng_state):
            outputs = ctx.function(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=False)
                 if _is_tensor(o) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if _is_tensor(a) else None for a in args)


def _is_tensor(value) -> bool:
    return isinstance(value, Tensor)
