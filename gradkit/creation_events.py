"""Creation functions as op events, as torch's profiler records them.

``gradkit.zeros(2, 3)`` is one ``gradkit::zeros`` event whose inputs are torch's arguments of
``aten::zeros`` (size, dtype, layout, device, pin_memory), and its array counts in a memory
profile. torch's own children of these events (``aten::empty``, ``aten::fill_``, ...) are its
kernels' steps: gradkit has none to record. ``gradkit.tensor`` makes no event: torch records
no ``aten::tensor`` either, only the steps it copies the data with.
"""
from __future__ import annotations

import functools

from gradkit import creation
from gradkit.autograd import observers


def _size(args) -> tuple:
    """The size given as ints or as one sequence: torch's ScalarList."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(n) for n in args)


def _options(kwargs) -> tuple:
    """dtype, layout, device, pin_memory: torch lists no layout or device it was not given."""
    return kwargs.get("dtype"), None, None, kwargs.get("pin_memory", False)


def _factory(args, kwargs) -> tuple:  # zeros, ones, rand, randn
    return _size(args), *_options(kwargs)


def _empty(args, kwargs) -> tuple:
    return *_factory(args, kwargs), kwargs.get("memory_format")


def _full(args, kwargs) -> tuple:
    return _size(args[:1]), *args[1:2], *_options(kwargs)


def _arange(args, kwargs) -> tuple:
    return *args, *_options(kwargs)


def _like(args, kwargs) -> tuple:  # input, [fill_value], options, memory_format
    return *args, *_options(kwargs), kwargs.get("memory_format")


def _observed(function, arguments):
    """``function``, an op event named as torch's for the op observers that record creations
    (``records_creations``: the profiler's recorder); its inputs are ``arguments(args,
    kwargs)``, torch's."""
    name = "gradkit::" + function.__name__

    @functools.wraps(function)
    def create(*args, **kwargs):
        watchers = observers.op_watchers
        if watchers:  # the profiler's: anomaly mode, vmap see ops only (full(-inf) is no anomaly)
            watchers = tuple(o for o in watchers if getattr(o, "records_creations", False))
        if not watchers:
            return function(*args, **kwargs)
        try:
            inputs = arguments(args, kwargs)
        except (TypeError, ValueError):  # arguments the call itself refuses, in its words
            inputs = args
        return observers.observe_op(watchers, name, inputs,
                                    lambda: (function(*args, **kwargs), None))
    return create


zeros, ones, rand, randn = (_observed(f, _factory) for f in (
    creation.zeros, creation.ones, creation.rand, creation.randn))
empty = _observed(creation.empty, _empty)
full = _observed(creation.full, _full)
arange = _observed(creation.arange, _arange)
zeros_like, ones_like, empty_like, rand_like, randn_like, full_like = (
    _observed(f, _like) for f in (creation.zeros_like, creation.ones_like, creation.empty_like,
                                  creation.rand_like, creation.randn_like, creation.full_like))
