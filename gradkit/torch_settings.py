"""torch's global switches and their getters: deterministic algorithms, warn-always, float32
matmul precision, flush-denormal, inter-op threads, anomaly mode, the default tensor type.

gradkit's NumPy kernels are deterministic and have no TF32 or inter-op pool, so most of these
are recorded settings that answer torch's getters; ``set_warn_always`` and
``set_anomaly_enabled`` act on gradkit's own warnings and anomaly mode.
"""
from __future__ import annotations

import os

from gradkit import backend, legacy_tensor
from gradkit._user_frames import warn_always, warn_at_user, warn_once_at_user
from gradkit.autograd import anomaly_mode

# the settings torch keeps in its global context (one process-wide value each, as torch)
_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest",
          "interop_threads": os.cpu_count() or 1,  # torch: the cores
          "interop_set": False}

_DEBUG_MODES = ("default", "warn", "error")
_PRECISIONS = ("highest", "high", "medium")


def _require_bool(value, message: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(message.format(type(value).__name__))


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record torch's deterministic-algorithms switch (gradkit's kernels are deterministic
    either way)."""
    _require_bool(mode, "_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        "bool, not {}")
    _require_bool(warn_only, "_set_deterministic_algorithms(): argument 'warn_only' must be "
                             "bool, not {}")
    _state["deterministic"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(..., warn_only=True)`` is in effect."""
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """torch's other spelling of the switch: 0/"default" off, 1/"warn" warn only, 2/"error"."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn only) or 2 (error), from the deterministic-algorithms switch."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_warn_always(b: bool, /) -> None:
    """Make gradkit's warn-once warnings (torch's TORCH_WARN_ONCE) warn every time."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    warn_always[0] = b


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in effect."""
    return warn_always[0]


def set_float32_matmul_precision(precision: str) -> None:
    """Record torch's TF32 setting; NumPy's float32 matmul is always full precision."""
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _PRECISIONS:
        warn_at_user(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                     "setFloat32MatmulPrecision call has no effect.")  # torch's text
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision last set (``"highest"`` at first)."""
    return _state["matmul_precision"]


def set_flush_denormal(mode: bool) -> bool:
    """False: NumPy has no flush-to-zero switch, so gradkit answers as torch on a CPU without
    one (subnormal numbers stay as they are)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def get_num_interop_threads() -> int:
    """The inter-op thread count last set (gradkit runs ops on the calling thread)."""
    return _state["interop_threads"]


def set_num_interop_threads(count: int) -> None:
    """Record an inter-op thread count, as torch's setting (no effect on gradkit): once per
    process, as torch, whose pool cannot be resized."""
    if not isinstance(count, int) or isinstance(count, bool):
        raise RuntimeError("set_num_interop_threads expects an int, but got "
                           f"{type(count).__name__}")
    if count <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _state["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _state["interop_threads"], _state["interop_set"] = count, True


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch gradkit's anomaly mode on or off in this thread (``autograd.set_detect_anomaly``
    without the context manager)."""
    _require_bool(enabled, "set_anomaly_enabled(): argument 'enabled' (position 1) must be "
                           "bool, not {}")
    anomaly_mode.set_detect_anomaly(enabled, check_nan)


is_anomaly_enabled = anomaly_mode.is_anomaly_enabled
is_anomaly_check_nan_enabled = anomaly_mode.is_anomaly_check_nan_enabled

_FLOAT_TYPES = {legacy_tensor.FloatTensor, legacy_tensor.DoubleTensor,
                legacy_tensor.HalfTensor}


def set_default_tensor_type(t, /) -> None:
    """Deprecated (as in torch): set the default dtype from a float tensor type
    (``DoubleTensor``) or its name (``"torch.DoubleTensor"``)."""
    if isinstance(t, str):
        prefix, _, name = t.rpartition(".")
        if prefix not in ("torch", "gradkit"):
            raise ModuleNotFoundError(f"No module named '{prefix or t}'")
        t = getattr(legacy_tensor, name, None)
        if t is None:
            raise AttributeError(f"module '{prefix}' has no attribute '{name}'")
    warn_once_at_user("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.")
    if not isinstance(t, legacy_tensor.LegacyTensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if t not in _FLOAT_TYPES:
        raise TypeError("only floating-point types are supported as the default type")
    backend.set_default_dtype(t.dtype)
