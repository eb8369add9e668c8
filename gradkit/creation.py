"""Tensor creation: tensor, zeros, ones, full, arange, linspace, eye, rand*, *_like."""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit import memory_format as memory_formats
from gradkit._tensor import Tensor
from gradkit._user_frames import warn_at_user
from gradkit.int_arguments import (
    bool_argument, device_argument, dtype_argument, factory_size, int_argument,
    invalid_combination, reads_as_int, type_name)
from gradkit.generator import default_generator, rng_of
from gradkit.interop import check_numpy_array, from_numpy
from gradkit.nested_data import checked_array, infer_dtype, nested_values, ragged_array
from gradkit.number_arguments import number_argument
from gradkit.ops.conversion import fitted
from gradkit.ops.random_bounds import check_random_factory, random_bounds
from gradkit.ops.spaced_values import (arange_values, linspace_values, logspace_values,
                                       spaced_arguments)
from gradkit.quiet_numpy import keep_quiet
from gradkit.range_arguments import arange_arguments, full_arguments, spaced_call


def _resolve(dtype, device, default_kind: str = "f"):
    keep_quiet()  # factories start a program: its ops' NumPy warnings stay silent
    dev = backend.get_default_device() if device is None else backend.device(device)
    if dtype is None:
        np_dtype = backend.get_default_dtype().np if default_kind == "f" else np.dtype(np.int64)
    else:
        np_dtype = backend.to_numpy_dtype(dtype)
    return dev, np_dtype


def _checked_options(function: str, dtype, device, requires_grad) -> None:
    """torch's TypeErrors for a factory's keyword options of the wrong type."""
    if dtype is not None:
        dtype_argument(dtype, function)
    if device is not None:
        device_argument(device, function)
    if requires_grad is not None:  # (torch takes None)
        bool_argument(requires_grad, function, "requires_grad")


def _finish(data, dev, requires_grad: bool) -> Tensor:
    keep_quiet()
    if dev.type != "cpu":
        data = backend.to_device(data, dev)
    t = Tensor._make(_strided_if_empty(data))
    if requires_grad:
        t._set_requires_grad(True, factory=True)
    return t


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor (a copy) from Python data, a NumPy array or another tensor.

    >>> gradkit.tensor([[1., 2.], [3., 4.]], requires_grad=True).shape
    gradkit.Size([2, 2])
    """
    _checked_options("tensor", dtype, device, None)
    bool_argument(requires_grad, "tensor", "requires_grad")  # (None refused, unlike zeros)
    if isinstance(data, Tensor):
        warn_at_user(COPY_CONSTRUCT.format("gradkit.tensor"))
        return copied_tensor(data, dtype, device, requires_grad)
    dev = backend.get_default_device() if device is None else backend.device(device)
    if hasattr(data, "__cuda_array_interface__"):
        data = data.get()
    if isinstance(data, np.ndarray):
        check_numpy_array(data)
    if isinstance(data, (str, bytes)) and isinstance(data, np.generic):  # np.str_, np.bytes_
        raise TypeError(f"new(): invalid data type '{type_name(data)}'")
    if isinstance(data, np.ndarray) and dtype is None and data.size:
        # (torch's copy keeps a dense array's strides, a size-1 dim's too: NumPy's sets those)
        array = memory_formats.preserved_copy(np, data)
    elif isinstance(data, (np.ndarray, np.generic)) and dtype is None:
        array = np.array(data, copy=True)
        if isinstance(data, np.generic):  # torch reads a NumPy scalar as an array
            check_numpy_array(array)
    else:
        values, inferred = nested_values(  # torch's checks of nested data, its dtype
            data, None if dtype is None else backend.to_numpy_dtype(dtype))
        try:
            array = (infer_dtype(values) if inferred is None else np.array(values, inferred)) \
                if dtype is None else checked_array(values, backend.to_numpy_dtype(dtype))
        except ValueError:
            array = ragged_array(values, None if dtype is None else  # torch's words for ragged
                                 backend.to_numpy_dtype(dtype))  # data, or its empty tensor
            if array is None:
                raise
        array = array.copy() if dtype is None else array
    return _finish(array, dev, requires_grad)


COPY_CONSTRUCT = ("To copy construct from a tensor, it is recommended to use sourceTensor."
                  "detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
                  "rather than {}(sourceTensor).")


def copied_tensor(data: Tensor, dtype, device, requires_grad: bool) -> Tensor:
    """A new leaf with a copy of ``data``'s values (``tensor(t)``, ``t.new_tensor(t)``, after
    their warning)."""
    array = data._data.copy()
    if dtype is not None:
        array = array.astype(backend.to_numpy_dtype(dtype))
    dev = data.device if device is None else backend.device(device)
    return _finish(backend.to_device(array, dev) if dev.type == "cpu" else array, dev,
                   requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """A tensor from ``data``, sharing memory with a Tensor or NumPy array when it can (a
    Tensor of another dtype or device is converted with its graph, as torch's)."""
    if isinstance(data, Tensor):
        # torch: the tensor itself when dtype and device match, else a differentiable copy
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray) and (dtype is None or backend.to_numpy_dtype(dtype) ==
                                         data.dtype) and (device is None or
                                                          backend.device(device).type == "cpu"):
        return from_numpy(data)  # the array's memory, as torch's (a CPU one, of its dtype)
    return tensor(data, dtype=dtype, device=device)


def _strided_if_empty(data):
    """A new empty array with torch's contiguous strides (its sizes' zeros counted as ones):
    NumPy gives it none, so its transpose or permutation would read as C order again."""
    if type(data) is not np.ndarray or data.size or data.ndim < 2 or any(data.strides):
        return data
    strides = memory_formats.format_strides(data.shape, memory_formats.contiguous_format)
    return np.lib.stride_tricks.as_strided(data, strides=[s * data.itemsize for s in strides])


def _filled(fill, size, dtype, device, requires_grad, kind="f", function="zeros",
            keywords=None) -> Tensor:
    _checked_options(function, dtype, device, requires_grad)
    dev, np_dtype = _resolve(dtype, device, kind)
    shape = factory_size(size, function, np_dtype, keywords)
    # torch's checked fill: 300 into uint8 refused, -9 wraps to 247 (NumPy would refuse both)
    fill = fitted(fill, np_dtype, one_element=np.prod(shape) == 1)
    xp = backend.array_module(dev)
    if dev.type == "cpu":
        with np.errstate(over="ignore"):  # 70000 into float16 is inf silently, as torch
            data = np.full(shape, fill, dtype=np_dtype)
    else:
        with xp.cuda.Device(dev.index):
            data = xp.full(shape, fill, dtype=np_dtype)
    t = Tensor._make(_strided_if_empty(data))
    if requires_grad:
        t._set_requires_grad(True, factory=True)
    return t


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, **keywords) -> Tensor:
    """Zeros of the given size: ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    return _filled(0, size, dtype, device, requires_grad, keywords=keywords)


def ones(*size, dtype=None, device=None, requires_grad: bool = False, **keywords) -> Tensor:
    """A tensor filled with ones: ``gradkit.ones(2, 3)``, ``gradkit.ones((2, 3))`` or
    ``gradkit.ones(size=(2, 3))``."""
    return _filled(1, size, dtype, device, requires_grad, function="ones", keywords=keywords)


def empty(*size, dtype=None, device=None, requires_grad: bool = False, memory_format=None,
          **keywords) -> Tensor:
    """A tensor of the given size (uninitialized in torch; here filled with zeros), laid out
    in ``memory_format`` (C order by default; channels last for 4-d, 3d for 5-d)."""
    out = _filled(0, size, dtype, device, requires_grad, function="empty", keywords=keywords)
    if memory_format is None or memory_format is memory_formats.contiguous_format:
        return out
    if memory_format is memory_formats.preserve_format:  # nothing to preserve, as torch
        raise RuntimeError("unsupported memory format Preserve")
    return _in_format(out, out, memory_format, "empty")


def full(*args, dtype=None, device=None, requires_grad: bool = False, **keywords) -> Tensor:
    """``full(size, fill_value)``: a tensor filled with ``fill_value`` (dtype inferred from
    it: bool, int64 or float)."""
    size, fill_value = full_arguments(args, keywords)
    size = (size,)  # one tuple of ints
    if dtype is None:
        kind = "b" if isinstance(fill_value, bool) else \
            "i" if isinstance(fill_value, int) else "f"
        if kind == "b":
            dtype = backend.bool_
        elif isinstance(fill_value, complex):
            dtype = backend.get_default_dtype().to_complex()
        return _filled(fill_value, size, dtype, device, requires_grad,
                       "i" if kind == "i" else "f", "full")
    return _filled(fill_value, size, dtype, device, requires_grad, function="full")


def _like(t: Tensor, dtype, device, function: str):
    """(dtype, device) of a ``*_like`` result; a non-tensor ``t`` (a list, a number, a NumPy
    array) is torch's TypeError."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{function}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(t)}")
    return (t.dtype if dtype is None else dtype), (t.device if device is None else device)


def _in_format(out: Tensor, t: Tensor, memory_format, function: str) -> Tensor:
    """``out``, a new C-order tensor shaped like ``t``, laid out in ``memory_format``: for
    ``preserve_format`` t's strides when t is dense, else the order of t's strides, as torch's."""
    xp = backend.get_array_module(out._data)
    if memory_format is memory_formats.preserve_format:
        strides = memory_formats.preserved_strides(tuple(t.shape), t.stride())
        out._data = memory_formats.copy_with_strides(xp, out._data, strides)
        return out
    order = memory_formats.physical_order(
        out.shape, memory_formats.check_format(memory_format, function))
    if order is not None and order != tuple(range(out.ndim)):
        out._data = memory_formats.lay_out(xp, out._data, order)
    return out


def _like_of(make):
    """``make_like(input, dtype=None, device=None, requires_grad=False, memory_format=...)``
    from a creation function."""
    def like(input: Tensor, *, dtype=None, device=None,  # noqa: A002 - torch's name
             requires_grad: bool = False, memory_format=memory_formats.preserve_format,
             **options) -> Tensor:  # options: rand_like's generator=
        _checked_options(like.__name__, dtype, device, requires_grad)
        dtype, device = _like(input, dtype, device, like.__name__)
        out = make(tuple(input.shape), dtype=dtype, device=device, requires_grad=requires_grad,
                   **options)
        return _in_format(out, input, memory_format, like.__name__)
    like.__name__ = like.__qualname__ = make.__name__ + "_like"
    like.__doc__ = f"{make.__name__}() with the shape (and by default dtype and device) of input."
    return like


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=memory_formats.preserve_format) -> Tensor:
    """``empty`` shaped like ``input`` (its dtype, device and layout unless given)."""
    _like(input, dtype, device, "empty_like")
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad,
                      memory_format=memory_format)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None,
              requires_grad: bool = False,
              memory_format=memory_formats.preserve_format) -> Tensor:
    """``full`` shaped like ``t`` (its dtype, device and layout unless given)."""
    dtype, device = _like(input, dtype, device, "full_like")
    fill_value = number_argument(fill_value, "full_like", "fill_value", 2)
    out = full(tuple(input.shape), fill_value, dtype=dtype, device=device,
               requires_grad=requires_grad)
    return _in_format(out, input, memory_format, "full_like")


def arange(*args, dtype=None, device=None, requires_grad: bool = False, **numbers) -> Tensor:
    """``arange(end)`` or ``arange(start, end, step=1)``; int64 for integer arguments."""
    start, end, step = arange_arguments(args, numbers)
    start, end, step = (v.item() if isinstance(v, np.generic) else v for v in (start, end, step))
    if dtype is None:
        ints = all(isinstance(v, int) for v in (start, end, step))
        dtype = backend.int64 if ints else backend.get_default_dtype()
    dev, np_dtype = _resolve(dtype, device)
    return _finish(arange_values(start, end, step, np_dtype, backend.threads[0]), dev,
                   requires_grad)


def linspace(*args, dtype=None, device=None, requires_grad: bool = False, **numbers) -> Tensor:
    """``linspace(start, end, steps)``: ``steps`` evenly spaced values from ``start`` to
    ``end``, both included, as torch's kernel rounds them (a number or 0-d tensor each;
    complex ones make a complex tensor)."""
    start, end, steps, _ = spaced_call("linspace", args, numbers)
    dev, np_dtype = _resolve(dtype, device)
    start, end, np_dtype = spaced_arguments("linspace", start, end, steps, dtype, np_dtype)
    return _finish(linspace_values(np, start, end, steps, np_dtype), dev, requires_grad)


def logspace(*args, dtype=None, device=None, requires_grad: bool = False, **numbers) -> Tensor:
    """``logspace(start, end, steps, base=10.0)``: ``steps`` values ``base ** x`` for x evenly
    spaced from ``start`` to ``end``, as torch's kernel rounds them (the exponents in float64,
    C's pow)."""
    start, end, steps, base = spaced_call("logspace", args, numbers)
    dev, np_dtype = _resolve(dtype, device)
    start, end, np_dtype = spaced_arguments("logspace", start, end, steps, dtype, np_dtype)
    return _finish(logspace_values(start, end, steps, base, np_dtype), dev, requires_grad)


_NO_M = object()  # eye's m not given (eye(n, None) is refused)


def eye(n: int, m: int | None = _NO_M, *extra, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """An n x m (default n x n) identity matrix."""
    given = (n,) if m is _NO_M else (n, m, *extra)
    if len(given) > 1 and not (reads_as_int(n) and reads_as_int(m) and not extra):
        raise invalid_combination("eye", given, {})  # torch's eye(n) and eye(n, m)
    n = int_argument(n, "eye", "n", 1)
    m = None if m is _NO_M else int_argument(m, "eye", "m", 2)
    for name, size in (("n", n), ("m", m)):
        if size is not None and size < 0:  # NumPy's message would name neither
            raise RuntimeError(f"{name} must be greater or equal to 0, got {size}")
    dev, np_dtype = _resolve(dtype, device)
    return _finish(np.eye(n, m, dtype=np_dtype), dev, requires_grad)


# -- random numbers ------------------------------------------------------------------

_generator = default_generator  # nn.init, dropout and rrelu draw from it too


def _random(sample, size, dtype, device, requires_grad, kind="f", generator=None,
            function="rand", keywords=None) -> Tensor:
    # torch's rand has other signatures (a generator's, names'): a size given twice or
    # beside an unknown keyword matches none
    if keywords and (size or "size" in keywords and len(keywords) > 1):
        raise invalid_combination(function, size, keywords)
    rng = rng_of(generator, function)
    dev, np_dtype = _resolve(dtype, device, kind)
    shape = factory_size(size, function, np_dtype, keywords)
    check_random_factory(function, np_dtype, shape)
    return _finish(np.asarray(sample(rng, shape)).astype(np_dtype), dev, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad: bool = False, generator=None,
         **keywords) -> Tensor:
    """Uniform samples on [0, 1) (``rand(2, 3)``, ``rand((2, 3))``, ``rand(size=(2, 3))``)."""
    return _random(lambda rng, s: rng.random(s), size, dtype, device, requires_grad,
                   generator=generator, keywords=keywords)


def randn(*size, dtype=None, device=None, requires_grad: bool = False, generator=None,
          **keywords) -> Tensor:
    """Standard normal samples (``randn(2, 3)``, ``randn((2, 3))``, ``randn(size=(2, 3))``)."""
    return _random(lambda rng, s: rng.standard_normal(s), size, dtype, device, requires_grad,
                   generator=generator, function="randn", keywords=keywords)


def randint(low, high=None, size=None, dtype=None, device=None,
            requires_grad: bool = False, generator=None) -> Tensor:
    """Integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    # torch's randint is an empty tensor's random_(low, high): its checks of the bounds
    # against the dtype (and its warnings) come first
    random_bounds(np.empty(0, _resolve(dtype, device, "i")[1]), low, high)
    return _random(lambda rng, s: rng.integers(low, high, s), (tuple(size),), dtype, device,
                   requires_grad, "i", generator, "randint")


def randperm(n: int, dtype=None, device=None, requires_grad: bool = False,
             generator=None) -> Tensor:
    """A random permutation of 0..n-1 (int64)."""
    n = int_argument(n, "randperm", "n", 1, symint=True)  # a one-element int tensor too
    return _random(lambda rng, s: rng.permutation(n), ((n,),), dtype, device, requires_grad, "i",
                   generator, "randperm")


def randint_like(input: Tensor, low, high=None, dtype=None, device=None, *, generator=None,
                 memory_format=memory_formats.preserve_format) -> Tensor:
    """``randint`` shaped like ``t`` (its dtype, device and layout unless given)."""
    if not isinstance(input, Tensor):  # (torch's randint_like has two signatures)
        raise invalid_combination("randint_like", (input, low) + (() if high is None else (high,)),
                                  {})
    dtype, device = _like(input, dtype, device, "randint_like")
    out = randint(low, high, tuple(input.shape), dtype=dtype, device=device, generator=generator)
    return _in_format(out, input, memory_format, "randint_like")


def bernoulli_mask(shape, p: float, xp=np):
    """A keep-mask for dropout, drawn from gradkit's generator."""
    return _generator.rng.random(shape) >= p


zeros_like = _like_of(zeros)
ones_like = _like_of(ones)
rand_like = _like_of(rand)
randn_like = _like_of(randn)
(zeros, ones, empty, full, rand, randn, randint, randperm, arange, linspace, logspace, eye,
 zeros_like, ones_like, rand_like, randn_like, empty_like, full_like, randint_like) = map(
    memory_formats.takes_layout,
    (zeros, ones, empty, full, rand, randn, randint, randperm, arange, linspace, logspace, eye,
     zeros_like, ones_like, rand_like, randn_like, empty_like, full_like, randint_like))
