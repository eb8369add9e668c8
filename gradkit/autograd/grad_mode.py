"""Grad modes: thread-local switches that say whether ops record a graph.

Each class is a context manager and a decorator through one shared base, as in
``torch.autograd.grad_mode``::

    with gradkit.no_grad():
        w -= 0.1 * w.grad          # not recorded

    @gradkit.no_grad()
    def evaluate(model, x): ...

A decorated function runs in the mode only while it runs: a decorated
generator has the mode on while its body runs and the caller's own mode
between two ``next()`` calls.
"""
from __future__ import annotations

import functools
import inspect
import threading
import warnings


class _State(threading.local):
    # class attributes are the defaults every new thread starts with
    grad_enabled = True   # is_grad_enabled(); ops record when this is on and inference is off
    inference = False
    multithreading = True
    transforms = 0        # gradkit.func transforms running a function (transform_errors.py)
    captured = frozenset()  # ids of the tensors those functions captured (grad transforms)


state = _State()


def is_grad_enabled() -> bool:
    """True when grad mode is on (per thread); inside inference_mode ops still record nothing."""
    return state.grad_enabled


def records_graph() -> bool:
    """True when ops record a graph: grad mode on and inference mode off (dispatch inlines it)."""
    return state.grad_enabled and not state.inference


def is_inference_mode_enabled() -> bool:
    """True inside an ``inference_mode()`` block (per thread)."""
    return state.inference


_CLASS_WARNING = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only "
    "decorate functions or methods. To preserve the current behavior of class decoration, you "
    "can directly decorate the `__init__` method and nothing else.")


class _DecoratorContextManager:
    """Base of every mode: ``with mode():`` and ``@mode()``; each call gets a fresh ``clone()``."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):  # bare ``@mode`` (defaults)
            return _decorate(cls, args[0], stacklevel=3)
        return super().__new__(cls)

    def __call__(self, func):
        return _decorate(self.clone, func, stacklevel=3)

    def clone(self):
        return type(self)()


def _decorate(make_mode, func, stacklevel: int):
    """``func`` running under ``make_mode()`` (a fresh mode per call, so calls may nest)."""
    if inspect.isclass(func):  # torch: the class is called under the mode (deprecated)
        warnings.warn(_CLASS_WARNING, FutureWarning, stacklevel=stacklevel)
        cls = func

        def construct(*args, **kwargs):
            return cls(*args, **kwargs)
        func = construct
    elif not callable(func):
        raise TypeError(f"a grad mode can only decorate a function, got {type(func).__name__}")
    if inspect.isgeneratorfunction(func):
        return _wrap_generator(make_mode, func)

    @functools.wraps(func)
    def run_in_mode(*args, **kwargs):
        with make_mode():
            return func(*args, **kwargs)
    return run_in_mode


def _wrap_generator(make_mode, func):
    """A generator whose body runs in the mode; the caller keeps its own between steps."""
    @functools.wraps(func)
    def generator_in_mode(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with make_mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_mode():
                        gen.close()
                    raise
                except BaseException as exc:  # thrown in by the caller: the body handles it
                    with make_mode():
                        response = gen.throw(exc)
                else:
                    with make_mode():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value
    return generator_in_mode


class _NoArgumentMode(_DecoratorContextManager):
    """A mode without arguments, also usable as a bare decorator (``@no_grad``)."""

    def __new__(cls, func=None):
        if func is None:
            return object.__new__(cls)
        return _decorate(cls, func, stacklevel=3)  # refuses what is not callable


class _GradSwitch(_NoArgumentMode):
    """Set grad mode on enter, restore the previous one on exit."""

    mode = True

    def __enter__(self) -> None:
        self.prev = state.grad_enabled
        state.grad_enabled = self.mode

    def __exit__(self, *exc) -> None:
        state.grad_enabled = self.prev


class no_grad(_GradSwitch):  # noqa: N801 - torch's spelling
    """Disable graph recording in this block/function (results have requires_grad=False)."""

    mode = False


class enable_grad(_GradSwitch):  # noqa: N801
    """Re-enable graph recording inside a no_grad block."""

    mode = True


def _check_bool(mode, function: str, argument: str) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"{function}(): argument '{argument}' (position 1) must be bool, not "
                        f"{type(mode).__name__}")


class _ImmediateSwitch(_DecoratorContextManager):
    """A flag set at once by the call, restored on exit of ``with``.

    As a decorator the flag is restored at once: it is on only inside the calls.
    """

    flag = ""  # the attribute of the thread-local state
    argument = "mode"

    def __init__(self, mode: bool) -> None:
        _check_bool(mode, type(self).__name__, self.argument)
        self.prev = getattr(state, self.flag)
        self.mode = mode
        setattr(state, self.flag, mode)  # takes effect at once, like torch

    def __call__(self, func):
        setattr(state, self.flag, self.prev)  # decorating is not a call of the function
        return _decorate(self.clone, func, stacklevel=3)

    def __enter__(self) -> None:
        setattr(state, self.flag, self.mode)

    def __exit__(self, *exc) -> None:
        setattr(state, self.flag, self.prev)

    def clone(self):
        return type(self)(self.mode)

    def __repr__(self) -> str:
        return f"gradkit.autograd.grad_mode.{type(self).__name__}(mode={self.mode})"


class set_grad_enabled(_ImmediateSwitch):  # noqa: N801
    """Set grad mode: immediately as a function call, or scoped with ``with``/as decorator."""

    flag = "grad_enabled"
    argument = "enabled"


class inference_mode(_DecoratorContextManager):  # noqa: N801
    """no_grad that also makes inference tensors (see ``Tensor.is_inference``).

    Tensors created inside are inference tensors: cheaper in torch, and never
    part of a recorded graph. ``inference_mode(False)`` turns the mode off
    (and grad mode on) in its block. Ops record no graph inside, even under
    ``enable_grad``, and forward-mode AD pushes no tangents.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return object.__new__(cls)
        return _decorate(cls, mode, stacklevel=3)  # bare ``@inference_mode``

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self.prev = (state.grad_enabled, state.inference)
        state.grad_enabled, state.inference = not self.mode, self.mode

    def __exit__(self, *exc) -> None:
        state.grad_enabled, state.inference = self.prev

    def clone(self):
        return inference_mode(self.mode)


class set_multithreading_enabled(_ImmediateSwitch):  # noqa: N801
    """Accepted for torch compatibility (takes effect at once, scoped with ``with``).

    gradkit's engine runs each backward on the calling thread, so the flag changes nothing;
    concurrent backward passes from several threads are supported either way.
    """

    flag = "multithreading"


def is_multithreading_enabled() -> bool:
    return state.multithreading
