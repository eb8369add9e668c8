"""Anomaly mode: find the forward line behind a NaN, cheaply.

While enabled (per thread), every node remembers where the user's code created it,
as ``(code, lasti)`` pairs of the user's frames (never frame objects, which would
keep locals alive); text is made only when something goes wrong. In backward, a
node that returns NaN raises ``RuntimeError("Function 'SqrtBackward0' returned nan
values in its 0th output.")``; that error, and any other exception raised in a
node's backward or its hooks, carries an :class:`AnomalyReport` as ``err.anomaly``
and warns with the forward traceback, as PyTorch does::

    with gradkit.autograd.detect_anomaly():
        loss = model(x).sum()
        loss.backward()          # RuntimeError naming the node and the forward line

``check_forward=True`` also stops at the first op whose forward output has NaN/Inf.
It all runs at the observer points of ``gradkit.autograd.observers``.
"""
from __future__ import annotations

import inspect
import math
import threading
import warnings

import numpy as np

from gradkit._user_frames import first_user_frame, internal_files, is_internal
from gradkit.autograd import anomaly_report as report_mod
from gradkit.autograd.anomaly_errors import attach_report, nan_error, node_report
from gradkit.autograd import observers
from gradkit.autograd.anomaly_report import AnomalyReport
from gradkit.autograd.grad_mode import _DecoratorContextManager
from gradkit.autograd.saved_messages import with_anomaly_hint
from gradkit.backend import get_array_module

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "is_anomaly_check_forward_enabled", "AnomalyReport"]


class _AnomalyState:
    """One thread's settings and place in backward: plain attributes, read on every op/node."""

    __slots__ = ("enabled", "check_nan", "check_forward", "nan_checks", "forward_checks",
                 "current", "run", "clean")

    def __init__(self) -> None:
        self.enabled, self.check_nan, self.check_forward = False, True, False
        self.nan_checks = False      # enabled and check_nan: one read on the backward hot path
        self.forward_checks = False  # enabled and check_forward: one read per op
        self.current = None  # the node whose backward runs on this thread (parent of new nodes)
        self.run = None      # [root node] of the innermost engine run on this thread
        self.clean = None    # the gradient last found free of NaN (passed on as is: no recheck)


class _PerThread(threading.local):
    def __init__(self) -> None:
        self.state = _AnomalyState()


_thread = _PerThread()  # one threading.local read per observer point, then plain attributes


def is_anomaly_enabled() -> bool:
    """True while anomaly mode is on in this thread."""
    return _thread.state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True when anomaly mode checks backward outputs for NaN (``check_nan``)."""
    return _thread.state.check_nan


def is_anomaly_check_forward_enabled() -> bool:
    """True when anomaly mode checks forward outputs for NaN/Inf (``check_forward``)."""
    return _thread.state.check_forward


# -- switching on and off: one observer, attached while any thread has the mode on ----

_threads_enabled = 0
_count_lock = threading.Lock()


def _settings() -> tuple:
    state = _thread.state
    return state.enabled, state.check_nan, state.check_forward


def _apply(enabled: bool, check_nan: bool, check_forward: bool) -> None:
    global _threads_enabled
    state = _thread.state
    was = state.enabled
    state.enabled, state.check_nan, state.check_forward = enabled, check_nan, check_forward
    state.nan_checks = enabled and check_nan
    state.forward_checks = enabled and check_forward
    if not enabled:
        _forget_frames()
    if was == enabled:
        return
    with _count_lock:
        _threads_enabled += 1 if enabled else -1
        if enabled and _threads_enabled == 1:
            observers.attach(_observer)
        elif not enabled and _threads_enabled == 0:
            observers.detach(_observer)


class detect_anomaly(_DecoratorContextManager):  # noqa: N801 - torch's spelling
    """Context manager/decorator that enables anomaly detection in its block.

    >>> with gradkit.autograd.detect_anomaly():
    ...     x = gradkit.zeros(1, requires_grad=True)
    ...     x.sqrt().sum().backward()   # raises, naming SqrtBackward0 and this line
    """

    def __init__(self, check_nan: bool = True, check_forward: bool = False) -> None:
        self.check_nan = check_nan
        self.check_forward = check_forward
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)  # as torch

    def __enter__(self) -> None:
        self.prev = _settings()
        _apply(True, self.check_nan, self.check_forward)

    def __exit__(self, *exc) -> None:
        _apply(*self.prev)

    def clone(self):
        return detect_anomaly(self.check_nan, self.check_forward)


class set_detect_anomaly(_DecoratorContextManager):  # noqa: N801
    """Turn anomaly detection on/off at once; as a context manager, restore on exit.

    >>> gradkit.autograd.set_detect_anomaly(True)
    >>> with gradkit.autograd.set_detect_anomaly(False): ...
    """

    def __init__(self, mode: bool, check_nan: bool = True, check_forward: bool = False) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_detect_anomaly() expects a bool, got {type(mode).__name__}")
        self.prev = _settings()
        self.settings = (mode, check_nan, check_forward)
        _apply(*self.settings)

    def __enter__(self) -> None:
        _apply(*self.settings)

    def __exit__(self, *exc) -> None:
        _apply(*self.prev)

    def clone(self):
        clone = set_detect_anomaly.__new__(set_detect_anomaly)
        clone.prev, clone.settings = _settings(), self.settings
        return clone


# -- capture (hot path: per op while enabled) -------------------------------------------

# (frame, {lasti: stack}, stack of its callers) for the last first user frame captured: while
# that frame runs its callers cannot change, so its ops share one tuple per call site. It
# holds one frame: dropped when a backward starts or ends, and when anomaly mode ends.
_last_capture = None
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def capture_stack(skip: int = 1, key=None) -> tuple:
    """The user's frames of the stack, innermost first, flat: ``(code, lasti, code, lasti, ...)``.

    One flat tuple of objects the GC does not track (code objects and ints): the GC
    soon stops scanning it, however many nodes keep one. ``skip`` frames above this call are
    gradkit's; ``key`` (an op) lets the search probe the depth it found last time.
    """
    return _stack_from(first_user_frame(key, skip + 1))


def _stack_from(frame) -> tuple:
    """capture_stack from the first user frame: one tuple per call site while ``frame`` runs."""
    global _last_capture
    if frame is None:
        return ()
    cached = _last_capture
    if cached is None or cached[0] is not frame:
        if frame.f_code.co_flags & _RESUMABLE:  # a generator's callers change as it resumes
            return (frame.f_code, frame.f_lasti) + _user_frames(frame.f_back)
        cached = _last_capture = (frame, {}, _user_frames(frame.f_back))
    lasti = frame.f_lasti
    stack = cached[1].get(lasti)
    if stack is None:
        stack = cached[1][lasti] = (frame.f_code, lasti) + cached[2]
    return stack


def _user_frames(frame) -> tuple:
    """``(code, lasti, ...)`` of the user's frames from ``frame`` outwards (gradkit's dropped)."""
    internal = internal_files.get
    frames = []
    append = frames.append
    while frame is not None:
        code = frame.f_code
        flag = internal(code.co_filename)
        if not flag:
            if flag is None and is_internal(code.co_filename):
                frame = frame.f_back
                continue
            # f_lasti, not f_lineno: the line is looked up only when a report is made
            append(code)
            append(frame.f_lasti)
        frame = frame.f_back
    return tuple(frames)


def _forget_frames() -> None:
    global _last_capture
    _last_capture = None


# -- checks --------------------------------------------------------------------------

_min_reduce = np.minimum.reduce
_ndarray = np.ndarray
_isnan = math.isnan


def _has_nan(value) -> bool:
    """Exact NaN test in one reduction: min propagates NaN and, unlike sum, never overflows."""
    data = value if type(value) is np.ndarray else getattr(value, "_data", value)
    try:
        kind = data.dtype.kind
    except AttributeError:  # not an array: the engine's own checks will say what is wrong
        return False
    if kind == "f":
        if type(data) is np.ndarray:  # skip ndarray.min's Python wrapper: this runs per node
            if data.ndim == 1:  # a sum of squares is NaN only from a NaN (inf stays inf)
                return _isnan(data.dot(data))
            return data.size != 0 and _isnan(_min_reduce(data, None))
        return data.size != 0 and _isnan(data.min())
    if kind == "c":
        return bool(get_array_module(data).isnan(data).any())
    return False


def _non_finite(data) -> str | None:
    """"nan", "inf" or "nan and inf" when the array has such values, else None."""
    if data.dtype.kind not in "fc" or data.size == 0:
        return None
    xp = get_array_module(data)
    if bool(xp.isfinite(data).all()):
        return None
    nan = bool(xp.isnan(data).any())
    inf = bool(xp.isinf(data).any())
    return " and ".join(w for w, present in (("nan", nan), ("inf", inf)) if present)


_SKIP = 4  # first_user_frame looks past op_exit, the dispatcher and its caller (gradkit's)


class _HookNan:
    """node_enter's token when the node's own hooks put a NaN into its gradients."""

    __slots__ = ("previous", "index")

    def __init__(self, previous, index: int) -> None:
        self.previous, self.index = previous, index


_OFF = object()  # node_enter's token on a thread where anomaly mode is off


class _AnomalyObserver(observers.Observer):
    """Captures forward stacks on nodes and checks values at the engine's observer points."""

    def op_exit(self, token, name, inputs, outputs, node, params) -> None:
        s = _thread.state
        if not s.enabled:
            return
        if node is not None:
            frame = first_user_frame(node.op, _SKIP)
            cached = _last_capture  # _stack_from's fast path, inlined: this runs per op
            trace = cached[1].get(frame.f_lasti) if cached is not None and \
                cached[0] is frame else None
            if trace is None:
                trace = _stack_from(frame)
            current = s.current
            if current is not None:  # made by the backward of `current` (create_graph)
                trace = report_mod.InducedTrace(trace, current.name(), current.anomaly_trace)
            node.anomaly_trace = trace
        if outputs is not None and s.forward_checks:
            _check_forward(name, inputs, outputs, node)

    def backward_enter(self):
        s = _thread.state
        if not s.enabled:
            return None
        _forget_frames()  # the forward that made this graph is over: hold none of its frames
        previous, s.run, s.clean = s.run, [None], None
        return (previous,)

    def backward_exit(self, token) -> None:
        if token is not None:
            _forget_frames()
            s = _thread.state
            s.run, s.clean = token[0], None

    def node_enter(self, node, grads):
        """The token is the node that ran before (restored on exit), or a _HookNan."""
        s = _thread.state
        if not s.enabled:
            return _OFF
        run = s.run
        if run is not None and run[0] is None:
            run[0] = node  # the engine runs the loss's node first
        previous, s.current = s.current, node
        extras = node._extras
        if extras is not None and (extras.tensor_pre_hooks or extras.pre_hooks) and s.check_nan:
            # the gradients as the node's hooks left them: a NaN here came from a hook
            for i, g in enumerate(grads):
                if g is not None and _has_nan(g):
                    return _HookNan(previous, i)
        return previous

    def node_exit(self, token, node, grads, grad_inputs) -> None:
        if token is _OFF:
            return
        s = _thread.state
        hook_nan = type(token) is _HookNan
        s.current = token.previous if hook_nan else token
        if grad_inputs is None or not s.nan_checks:
            return
        if hook_nan:
            raise nan_error("hook_nan", f"Hook registered on the gradient of output "
                            f"{token.index} of '{node.name()}' returned nan values.",
                            node, s.run, None, grads, None)
        clean = s.clean
        for i, g in enumerate(grad_inputs):
            if g is None:
                continue
            if g is clean and node.op.checks_grads:
                continue  # handed on unchanged by a built-in node (their rules never write into g)
            if type(g) is _ndarray and g.ndim == 1 and g.dtype.kind == "f":  # _has_nan, inlined
                if not _isnan(g.dot(g)):
                    clean = g
                    continue
            elif not _has_nan(g):
                clean = g
                continue
            raise nan_error("backward_nan", f"Function '{node.name()}' returned nan values "
                            f"in its {i}th output.", node, s.run, i, grads, grad_inputs)
        s.clean = clean

    def node_error(self, node, exc) -> None:
        if not _thread.state.enabled or getattr(exc, "anomaly", None) is not None:
            return  # an inner engine run (or a node nearer the error) already reported it
        with_anomaly_hint(exc)
        message = f"{type(exc).__name__}: {exc}"
        attach_report(exc, node_report("backward_error", message, node, _thread.state.run))


def _check_forward(name, inputs, outputs, node) -> None:
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    for i, out in enumerate(outs):
        data = getattr(out, "_data", None)
        what = _non_finite(data) if data is not None else None
        if what is None:
            continue
        message = f"Op '{name}' returned {what} values in its {i}th output in the forward pass."
        stack = report_mod.source_frames(capture_stack())
        stats = [report_mod.tensor_stats(f"input {j}", a) for j, a in enumerate(inputs)]
        report = AnomalyReport(
            "forward_nonfinite", message, node.name() if node is not None else None, name, i,
            stack, [], [s for s in stats if s is not None],
            [report_mod.tensor_stats(f"output {i}", data)], None)
        error = RuntimeError(message)
        attach_report(error, report)
        raise error


_observer = _AnomalyObserver()
