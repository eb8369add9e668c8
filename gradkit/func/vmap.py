"""torch.func.vmap, by running ``func`` once per sample and stacking the results.

That is exact for pure functions (and ``vmap(grad(f))``, nested vmap); it costs one call per
sample. Differences from torch: an ``out_dims=None`` output is accepted when every sample
returns the same values (torch asks that it not depend on the batch), and ``.item()`` or
data-dependent Python control flow inside ``func`` work rather than raise.

>>> from gradkit.func import vmap
>>> vmap(gradkit.dot)(gradkit.ones(3, 2), gradkit.ones(3, 2))
tensor([2., 2., 2.])
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

from gradkit._tensor import Tensor
from gradkit.autograd import observers
from gradkit.autograd.grad_mode import inference_mode, is_inference_mode_enabled, no_grad
from gradkit.creation import zeros
from gradkit.func._levels import transform_level
from gradkit.func.captured import captured_tensors
from gradkit.func.pytree import broadcast_prefix, tree_flatten, tree_unflatten
from gradkit.generator import default_generator, random_guard
from gradkit.ops.joining import stack

_RANDOMNESS = ("error", "different", "same")
_CAPTURED_WRITE = ("vmap: {name} wrote in place into a tensor it captured or got with in_dim "
                   "None. gradkit's vmap runs the function once per sample, so the write would "
                   "repeat for every sample (torch refuses such writes when the value written "
                   "depends on the mapped inputs). Please use out-of-place operations.")
_DIFFERENT_INPLACE = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. "
                      "This will appear like same randomness. If this is necessary for your "
                      "usage, please file an issue with functorch.")
_SAME_BATCHED = ("Vmap does not currently support same randomness with a batched tensor input. "
                 "Please file an issue with functorch")
_RANDOM_REFUSED = ("vmap: called random operation while in randomness error mode. Please either "
                   "use the 'same' or 'different' randomness flags on vmap or perform the "
                   "randomness operation out of vmap")


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its inputs, results stacked at ``out_dims``.

    ``in_dims`` / ``out_dims``: an int, None (not mapped), or a tuple/list/dict prefix of the
    inputs' / outputs' structure. ``randomness``: 'error' refuses random ops inside ``func``,
    'different' draws anew per sample, 'same' replays the same draws for every sample.
    ``chunk_size`` is checked and otherwise changes nothing.
    """
    check_randomness(randomness)
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                             "inputs, or you are trying to vmap over a function with no inputs. "
                             "The latter is unsupported.")
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not all(d is None or isinstance(d, int) for d in tree_flatten(out_dims)[0]):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                             "None or a python collection of ints representing where in the "
                             "outputs the vmapped dimension should appear.")
        flat_args, args_spec = tree_flatten(args)
        dims = _input_dims(in_dims, args, flat_args, args_spec, where)
        size = _batch_size(flat_args, dims)
        if size == 0:
            samples = [_empty_sample(flat_args, dims, args_spec)]
        else:
            samples = [tree_unflatten([x.select(d, i) if d is not None else x
                                       for x, d in zip(flat_args, dims, strict=True)], args_spec)
                       for i in range(size)]
        results = _run(func, samples, kwargs, randomness, name,
                       _watched(func, flat_args, dims))
        return _stack_outputs(results, out_dims, name, empty=size == 0)
    return wrapped


def check_randomness(randomness: str) -> None:
    """torch's error for a ``randomness=`` other than 'error', 'different' or 'same'."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


@contextlib.contextmanager
def random_refused(randomness: str):
    """Random draws raise torch's error in this block when ``randomness`` is 'error'."""
    previous = random_guard.message
    if randomness == "error":
        random_guard.message = _RANDOM_REFUSED
    try:
        yield
    finally:
        random_guard.message = previous


def _input_dims(in_dims, args: tuple, flat_args: list, args_spec, where: str) -> list:
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    dims = broadcast_prefix(in_dims, args, args_spec)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {args_spec}.")
    normalized = []
    for x, dim in zip(flat_args, dims, strict=True):
        if dim is not None and not isinstance(dim, int):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if dim is not None and not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        if dim is not None and not -x.dim() <= dim < x.dim():
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a "
                             f"Tensor of dimensionality {x.dim()} so expected in_dim to satisfy "
                             f"-{x.dim()} <= in_dim < {x.dim()}.")
        normalized.append(dim % x.dim() if dim is not None else None)
    return normalized


def _batch_size(flat_args: list, dims: list) -> int:
    sizes = [x.shape[d] for x, d in zip(flat_args, dims, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _empty_sample(flat_args: list, dims: list, args_spec):
    """A stand-in sample (zeros) for an empty batch: it tells the results' shapes."""
    return tree_unflatten([zeros(tuple(s for k, s in enumerate(x.shape) if k != d), dtype=x.dtype,
                                 device=x.device) if d is not None else x
                           for x, d in zip(flat_args, dims, strict=True)], args_spec)


def _watched(func, flat_args: list, dims: list) -> list:
    """The tensors func must not write in place: those it captured and its unmapped inputs
    (mapped inputs may be written: each sample writes its own slice)."""
    pairs = list(zip(flat_args, dims, strict=True))
    mapped = {id(x) for x, d in pairs if d is not None}
    unmapped = [x for x, d in pairs if d is None and isinstance(x, Tensor)]
    return [x for x in captured_tensors(func) + unmapped if id(x) not in mapped]


def _run(func, samples: list, kwargs: dict, randomness: str, name: str, watched: list) -> list:
    """func on every sample, random draws refused, fresh or replayed as ``randomness`` says;
    an in-place write into a ``watched`` tensor (captured, or unmapped input) raises after the
    sample that made it."""
    captured = [(t, t._version) for t in watched]
    state = default_generator.get_state() if randomness == "same" else None
    drawn_into = set()  # version counters of watched tensors a "same" draw wrote (allowed)
    results = []
    batched = _BatchedTensors() if randomness == "same" else None
    with random_refused(randomness), _inplace_draws(randomness, watched, drawn_into), \
            _batched_parameters_refused(batched):
        for sample in samples:
            if state is not None:
                default_generator.set_state(state)
            if batched is not None:
                batched.start(t for t in tree_flatten(sample)[0] if isinstance(t, Tensor)
                              and all(t is not w for w in watched))
            with transform_level():
                results.append(func(*sample, **kwargs))
            if any(t._version != version and id(t._vc) not in drawn_into
                   for t, version in captured):
                raise RuntimeError(_CAPTURED_WRITE.format(name=name))
    return results


class _BatchedTensors(observers.Observer):
    """The tensors of one sample that depend on the mapped inputs: the sample's slices and
    every op output made from one of them (an op observer, attached for 'same' randomness
    only, where torch refuses a draw parameterized by a batched tensor). Tensors made by
    creation functions (``zeros_like(t)``) are not ops and stay unmarked: a draw they
    parameterize runs rather than being refused."""

    def __init__(self) -> None:
        self.held: dict = {}  # id -> tensor (held, so that an id is not reused meanwhile)

    def start(self, tensors) -> None:
        self.held = {id(t): t for t in tensors}

    def op_exit(self, token, name, inputs, outputs, node, params) -> None:
        if outputs is not None and any(id(t) in self.held for t in _tensors_in(inputs)):
            self.held.update((id(t), t) for t in _tensors_in(outputs))

    def refuse_batched(self, tensors: tuple) -> None:
        if any(id(t) in self.held for t in tensors):
            raise RuntimeError(_SAME_BATCHED)


def _tensors_in(values) -> list:
    """The tensors among an op's inputs or outputs (one tensor, or a sequence holding
    tensors and sequences of tensors)."""
    if isinstance(values, Tensor):
        return [values]
    return [t for v in values for t in ([v] if isinstance(v, Tensor) else
                                        v if isinstance(v, (list, tuple)) else ())]


@contextlib.contextmanager
def _batched_parameters_refused(batched: _BatchedTensors | None):
    """Under 'same' randomness: track the batched tensors while the samples run, and refuse
    the draws they parameterize."""
    if batched is None:
        yield
        return
    previous = random_guard.parameterized_draw
    random_guard.parameterized_draw = batched.refuse_batched
    observers.attach(batched)
    try:
        yield
    finally:
        observers.detach(batched)
        random_guard.parameterized_draw = previous


@contextlib.contextmanager
def _inplace_draws(randomness: str, watched: list, drawn_into: set):
    """An in-place random draw into a ``watched`` (unbatched) tensor: torch's error under
    "different"; under "same" every sample writes the same draw, so the write is allowed."""
    def check(tensor: Tensor) -> None:
        if not any(tensor._vc is t._vc for t in watched):
            return
        if randomness == "different":
            raise RuntimeError(_DIFFERENT_INPLACE)
        drawn_into.add(id(tensor._vc))

    previous = random_guard.inplace_draw
    random_guard.inplace_draw = check
    try:
        yield
    finally:
        random_guard.inplace_draw = previous


def _stack_outputs(results: list, out_dims, name: str, empty: bool):
    flat_first, spec = tree_flatten(results[0])
    if isinstance(results[0], Tensor) and isinstance(out_dims, tuple) and len(out_dims) == 1:
        out_dims = out_dims[0]  # torch accepts (d,) for a function returning one tensor
    dims = broadcast_prefix(out_dims, results[0], spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         f"compatible with the structure of `outputs`. out_dims has structure "
                         f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")
    per_sample = [tree_flatten(r)[0] for r in results]
    stacked = []
    for k, dim in enumerate(dims):
        values = [leaves[k] for leaves in per_sample]
        if dim is None:
            stacked.append(_unbatched(values, name))
            continue
        if not isinstance(values[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(values[0])}. Did you mean to set out_dims= to None for "
                             "output?")
        whole = _stack_like_samples(values, dim)
        stacked.append(whole if not empty else whole.narrow(dim % (values[0].dim() + 1), 0, 0))
    return tree_unflatten(stacked, spec)


def _stack_like_samples(values: list, dim: int) -> Tensor:
    """The samples stacked; an ordinary tensor when they are (``vmap(grad(f))`` inside
    ``inference_mode()``), as torch's vmap returns the tensor its function made."""
    if is_inference_mode_enabled() and not values[0].is_inference():
        with inference_mode(False), no_grad():
            return stack(values, dim)
    return stack(values, dim)


def _unbatched(values: list, name: str):
    """An ``out_dims=None`` output: the same in every sample, returned once."""
    first = values[0]
    same = all(v is first for v in values) or (
        isinstance(first, Tensor) and all(isinstance(v, Tensor) and v.shape == first.shape
                                         and bool((v == first).all()) for v in values))
    if not same:
        raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                         "out_dim is None")
    return first
