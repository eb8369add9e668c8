"""Grad modes: thread-local switches that say whether ops record a graph.

Each class is a context manager and a decorator through one shared base, as in
``torch.autograd.grad_mode``::

    with gradkit.no_grad():
        w -= 0.1 * w.grad          # not recorded

    @gradkit.no_grad()
    def evaluate(model, x): ...
"""
from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    # class attributes are the defaults every new thread starts with
    grad_enabled = True
    inference = False
    multithreading = True


state = _State()


def is_grad_enabled() -> bool:
    """True when ops record a graph for backward (per thread)."""
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """True inside an ``inference_mode()`` block (per thread)."""
    return state.inference


class _DecoratorContextManager:
    """Base of every mode: ``with mode():`` and ``@mode()`` (also bare ``@mode``)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    request = next(gen)
                while True:
                    try:
                        with self.clone():
                            response = yield request
                        with self.clone():
                            request = gen.send(response)
                    except StopIteration as stop:
                        return stop.value
            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()

    def __new__(cls, orig_func=None, *args, **kwargs):
        # allow the bare decorator form ``@no_grad`` as torch does
        if callable(orig_func) and not args and not kwargs:
            return cls()(orig_func)
        return super().__new__(cls)


class _GradSwitch(_DecoratorContextManager):
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


class _ImmediateSwitch(_DecoratorContextManager):
    """A flag set at once by the call, and restored on exit when used with ``with``."""

    flag = ""  # the attribute of the thread-local state

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"{type(self).__name__}() expects a bool, got {type(mode).__name__}")
        self.prev = getattr(state, self.flag)
        self.mode = mode
        setattr(state, self.flag, mode)  # takes effect at once, like torch

    def __enter__(self) -> None:
        setattr(state, self.flag, self.mode)

    def __exit__(self, *exc) -> None:
        setattr(state, self.flag, self.prev)

    def clone(self):
        return type(self)(self.mode)


class set_grad_enabled(_ImmediateSwitch):  # noqa: N801
    """Set grad mode: immediately as a function call, or scoped with ``with``/as decorator."""

    flag = "grad_enabled"


class inference_mode(_DecoratorContextManager):  # noqa: N801
    """Like no_grad, and marks the region for ``is_inference_mode_enabled()``."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self.prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled, state.inference = False, True

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
