"""The points where observers (profiler, anomaly mode, ...) attach to the engine.

There are three: op dispatch (forward), node execution (backward), and
saved-tensor pack/release — plus the bracket of a whole backward() call. Each hot
path reads one module attribute once (``op_watchers``, ``node_watchers``,
``saved_watchers``: the observers that implement that point); while it is empty
that is the whole cost of observability, and a single observer is called
directly (no token lists). The exit points get the enter point's arguments again, so
a token can be a bare value instead of a tuple built per op. An observer that leaves
op_enter (node_enter) out gets as token the time the op (node) started, on
``time.perf_counter_ns``: most observers want only that, and the caller reads the clock
for less than a Python call to an enter point would cost.

An observer implements any of::

    op_enter(name, inputs) -> token            op_exit(token, name, inputs, outputs, node, params)
                                        (params: the op's keyword parameters given, a dict)
    node_enter(node, grads) -> token           node_exit(token, node, grads, grad_inputs)
    node_error(node, exc)   (an exception in a node's backward or hooks; node_exit may raise)
    saved_pack(nbytes, pack)                   saved_release(nbytes, pack)
                                        (pack: an int naming the pack, to pair the two)
    backward_enter() -> token                  backward_exit(token)   (one engine run)
    module_enter(label) -> token               module_exit(token)     (an nn.Module call)
"""
from __future__ import annotations

import itertools
import threading
import weakref
from time import perf_counter_ns

active: tuple = ()
saved_watchers: tuple = ()  # the subset that accounts saved-tensor bytes (memory profiling)
# the subsets that override op_enter/op_exit and node_enter/node_exit: the hot paths call only
# these (usually one observer: a profiler or anomaly mode), read once per op or node
op_watchers: tuple = ()
node_watchers: tuple = ()
module_watchers: tuple = ()  # those that see nn.Module calls (profile(with_modules=True))
op_entering = False  # whether an op watcher overrides op_enter (else its token is the start)
node_entering = False  # the same for node watchers and node_enter
_op_enterers: tuple = ()    # those watchers, for the paths with several observers
_node_enterers: tuple = ()
_lock = threading.Lock()
_NO_PARAMS: dict = {}  # (never written)


class Observer:
    """No-op base: subclasses override the points they care about."""

    def op_enter(self, name, inputs):
        return None

    def op_exit(self, token, name, inputs, outputs, node, params) -> None:
        pass

    def node_enter(self, node, grads):
        return None

    def node_exit(self, token, node, grads, grad_inputs) -> None:
        pass

    def node_error(self, node, exc) -> None:
        pass

    def saved_pack(self, nbytes: int, pack: int) -> None:
        pass

    def saved_release(self, nbytes: int, pack: int) -> None:
        pass

    def backward_enter(self):
        return None

    def module_enter(self, label: str):
        return None

    def module_exit(self, token) -> None:
        pass

    def backward_exit(self, token) -> None:
        pass


def observe_op(watchers: tuple, name: str, inputs, run, params=None):
    """``run() -> (outputs, node)`` between the op_enter and op_exit of ``watchers``."""
    start = perf_counter_ns()
    tokens = [o.op_enter(name, inputs) if o in _op_enterers else start for o in watchers]
    outputs = node = None
    try:
        outputs, node = run()
        return outputs
    finally:
        for o, token in zip(watchers, tokens, strict=True):
            o.op_exit(token, name, inputs, outputs, node, params or _NO_PARAMS)


def observe_module(label: str, call):
    """``call()`` between the module_enter and module_exit of the module watchers."""
    watching = module_watchers
    tokens = [o.module_enter(label) for o in watching]
    try:
        return call()
    finally:
        for o, token in zip(reversed(watching), reversed(tokens), strict=True):
            o.module_exit(token)


def observe_backward(execute, *args):
    """Run one engine pass ``execute(*args)`` between backward_enter and backward_exit."""
    watching = [o for o in active if hasattr(o, "backward_enter")]
    tokens = [o.backward_enter() for o in watching]
    try:
        return execute(*args)
    finally:
        for o, token in zip(watching, tokens, strict=True):
            o.backward_exit(token)


def enter_nodes(watching, node, grads) -> list:
    """node_enter's tokens, for several observers (the start time for those without it)."""
    start = perf_counter_ns()
    return [o.node_enter(node, grads) if o in _node_enterers else start for o in watching]


def notify_error(node, exc: Exception) -> None:
    """Tell observers that running ``node`` (its backward or its hooks) raised ``exc``."""
    for o in active:
        if hasattr(o, "node_error"):
            o.node_error(node, exc)


def exit_nodes(watching, tokens, node, grads, grad_inputs) -> None:
    """node_exit for every observer, even when one raises (anomaly mode's NaN error)."""
    error = None
    for o, token in zip(watching, tokens, strict=True):
        try:
            o.node_exit(token, node, grads, grad_inputs)
        except Exception as exc:
            error = error or exc
    if error is not None:
        raise error


def _saved_pack_all(nbytes: int, pack: int) -> None:
    for o in saved_watchers:
        o.saved_pack(nbytes, pack)


def _saved_release_all(nbytes: int, pack: int) -> None:
    for o in saved_watchers:
        o.saved_release(nbytes, pack)


# ``saved_pack(nbytes, pack)``: nbytes more are held for backward (a node saved tensors);
# ``saved_release(nbytes, pack)``: the bytes of that pack were freed (the memory profile
# pairs them to charge the bytes to the line that saved them). Callers check
# ``saved_watchers`` first; with one watcher (a memory profile) these are its own methods.
saved_pack, saved_release = _saved_pack_all, _saved_release_all


# weak reference to one SavedTensor of each watched pack -> (the pack's bytes, its number): they
# are released when the SavedTensors die, after a backward freed them or with a graph dropped unrun
_held_packs: dict = {}
_pack_numbers = itertools.count(1)


def saved_pack_held_by(owner, nbytes: int) -> None:
    """``saved_pack(nbytes)``, and ``saved_release(nbytes)`` once ``owner`` (one of the pack's
    SavedTensors, which all die together with their node's saved values) is gone."""
    pack = next(_pack_numbers)
    saved_pack(nbytes, pack)
    _held_packs[weakref.ref(owner, _pack_dropped)] = (nbytes, pack)


def _pack_dropped(ref) -> None:
    nbytes, pack = _held_packs.pop(ref, (0, 0))
    if nbytes and saved_watchers:
        saved_release(nbytes, pack)


def _watches_saved(o) -> bool:
    """An observer takes saved-bytes events if it says so, or overrides saved_pack."""
    default = type(o).saved_pack is not Observer.saved_pack if isinstance(o, Observer) \
        else hasattr(o, "saved_pack")
    return bool(getattr(o, "watches_saved", default))


def _overrides(o, names: tuple) -> bool:
    """Whether ``o`` implements any of the points ``names`` (not the base class's no-ops)."""
    for name in names:
        method = getattr(o, name, None)
        if method is not None and getattr(method, "__func__", None) is not getattr(Observer, name):
            return True  # a method of its own, or a function bound on the instance
    return False


def _publish(observers: tuple) -> None:
    global active, saved_watchers, op_watchers, node_watchers, op_entering, node_entering
    global saved_pack, saved_release, _op_enterers, _node_enterers, module_watchers
    module_watchers = tuple(o for o in observers if _overrides(o, ("module_enter",)))
    saved_watchers = tuple(o for o in observers if _watches_saved(o))
    saved_pack, saved_release = (saved_watchers[0].saved_pack, saved_watchers[0].saved_release) \
        if len(saved_watchers) == 1 else (_saved_pack_all, _saved_release_all)
    op_watchers = tuple(o for o in observers if _overrides(o, ("op_enter", "op_exit")))
    _op_enterers = tuple(o for o in op_watchers if _overrides(o, ("op_enter",)))
    op_entering = bool(_op_enterers)
    node_watchers = tuple(o for o in observers if _overrides(o, ("node_enter", "node_exit")))
    _node_enterers = tuple(o for o in node_watchers if _overrides(o, ("node_enter",)))
    node_entering = bool(_node_enterers)
    active = observers


def attach(observer: Observer) -> None:
    """Start calling ``observer`` at the points it implements (all threads)."""
    with _lock:
        _publish((*active, observer))


def detach(observer: Observer) -> None:
    """Stop calling ``observer``."""
    with _lock:
        _publish(tuple(o for o in active if o is not observer))
