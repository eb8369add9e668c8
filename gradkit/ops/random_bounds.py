"""The bounds random_ and uniform_ accept, with torch's errors and warnings
(DistributionTemplates.h: the bounds must lie in the dtype's range; a float dtype warns
where it cannot hold every integer of random_'s range)."""
from __future__ import annotations

import numpy as np

from gradkit._user_frames import warn_at_user
from gradkit.ops.unary_helpers import c_type_name, cpp_number, scalar_type_name


def _dtype_range(dtype) -> tuple:
    if dtype.kind == "b":
        return 0, 1
    if dtype.kind in "iu":
        return int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    return float(np.finfo(dtype).min), float(np.finfo(dtype).max)


def _check_in_range(data, *named_values) -> None:
    lowest, highest = _dtype_range(data.dtype)
    for name, value in named_values:
        if not lowest <= value <= highest:
            raise RuntimeError(f"{name} is out of bounds for {c_type_name(data)}")


def random_bounds(data, from_, to, up_to_max: bool = False):
    """random_'s [low, high): (from, to), (0, from), the dtype's whole default range, or
    (``up_to_max``: ``random_(from, None)``) from ``from`` to that range's top."""
    dtype = data.dtype
    # torch's default range: [0, 2**digits] for floats, [0, max] for integers
    top = 2 if dtype.kind == "b" else int(np.iinfo(dtype).max) + 1 if dtype.kind in "iu" \
        else 2 ** (np.finfo(dtype).nmant + 1) + 1
    if to is None and from_ is None:
        return 0, top
    low, high = (from_, top) if up_to_max else (0, from_) if to is None else (from_, to)
    if up_to_max:  # torch checks ``from`` against the dtype first there
        _check_in_range(data, ("from", low))
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={cpp_number(low)} >= to={cpp_number(high)}")
    _check_in_range(data, ("from", low), ("to - 1", high - 1))
    if dtype.kind == "f":  # torch warns where the dtype cannot hold every integer
        digits = np.finfo(dtype).nmant + 1
        for value, name in ((low, "from"), (high - 1, "to - 1")):
            if not -2 ** digits <= value <= 2 ** digits:
                warn_at_user(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                             f"precision limitations {c_type_name(data)} can support discrete "
                             "uniform distribution only within this range. This warning will "
                             "become an error in version 1.7 release, please fix the code in "
                             "advance")
    return low, high


def check_uniform_bounds(data, from_: float, to: float) -> None:
    """uniform_'s checks of [from_, to), in torch's order."""
    _check_in_range(data, ("from", from_), ("to", to))
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={cpp_number(from_)} > to={cpp_number(to)}")
    if to - from_ > _dtype_range(data.dtype)[1]:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{scalar_type_name(data)}>::max(), but found to={cpp_number(to)} and "
                           f"from={cpp_number(from_)} which result in to-from to exceed the limit")


def check_random_factory(function: str, np_dtype: np.dtype, shape: tuple) -> None:
    """torch's refusals of rand, randn and randperm for a dtype their CPU kernels lack, and
    of a permutation longer than the dtype counts exactly."""
    data = np.empty(0, np_dtype)  # what the name helpers read
    kind = np_dtype.kind
    if function == "rand" and kind not in "fc":
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{scalar_type_name(data)}'")
    if function == "randn" and kind not in "fc" and 0 not in shape:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{scalar_type_name(data)}'")
    if function == "randint" and kind == "c":
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if function != "randperm":
        return
    if kind in "bc":
        raise NotImplementedError(f"\"randperm\" not implemented for '{scalar_type_name(data)}'")
    n = shape[0]
    if kind == "f":
        digits = np.finfo(np_dtype).nmant + 1
        if n > 2 ** digits + 1:
            limit = "2049" if digits == 11 else f"2^{digits}+1"
            raise RuntimeError(f"n cannot be greater than {limit} for {scalar_type_name(data)} "
                               "type.")
    elif n - 1 > np.iinfo(np_dtype).max:
        raise RuntimeError(f"value cannot be converted to type {np_dtype.name}_t without "
                           "overflow")
