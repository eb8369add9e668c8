"""gradkit: automatic differentiation with torch.autograd's API, on NumPy and CuPy.

>>> import gradkit as torch
>>> x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x ** 2).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""
import math as _math
import types as _types

from gradkit.quiet_numpy import keep_quiet as _keep_quiet

_keep_quiet()  # NumPy's 0/0, log(-1) warnings: torch gives nan/inf silently (quiet_numpy.py)

from gradkit import backend
# The layers import one way (docs/architecture.md). The autograd package's __init__ gathers its
# public API, which sits above the Tensor core and the ops, while the core imports two of its
# low modules (grad_mode, inference): so the package is entered first and loads them in order.
from gradkit import autograd
from gradkit._tensor import Size, Tensor
from gradkit.backend import (  # noqa: F401
    bool_ as bool, complex64, complex128, device, dtype, float16, float32, float64,
    get_default_device, get_default_dtype, int8, int16, int32, int64, set_default_device,
    set_default_dtype, uint8, uint16, uint32, uint64)
from gradkit.ops import *  # noqa: F401,F403
from gradkit.ops import einsum  # noqa: F401
from gradkit.ops.keywords import take_numpy_names as _take_numpy_names
from gradkit.ops.patterns import tril_indices, triu_indices  # noqa: F401 - creation
from gradkit.ops.strided_scatter import empty_strided  # noqa: F401 - creation
from gradkit.dtype_rules import can_cast, promote_types, result_type  # noqa: F401
from gradkit import _tensor_methods, _tensor_numbers, _tensor_numpy, _tensor_operators  # noqa: F401 - methods layer
from gradkit import storage_methods  # noqa: F401 - x.resize_(), x.set_(), x.new() & co.
from gradkit.storage import TypedStorage, UntypedStorage, is_storage  # noqa: F401
from gradkit.memory_format import (  # noqa: F401
    channels_last, channels_last_3d, contiguous_format, layout, memory_format, preserve_format,
    strided)
from gradkit._inplace_functions import FUNCTIONS as _INPLACE_FUNCTIONS
# after the ops: gradkit.zeros_like & co. are the creation functions (dtype=, device=, ...)
from gradkit.creation import (  # noqa: F401
    as_tensor, eye, from_numpy, linspace, logspace, randint, randint_like, randperm, tensor)
from gradkit.creation_events import (  # noqa: F401 - op events while profiling
    arange, empty, empty_like, full, full_like, ones, ones_like, rand, rand_like, randn,
    randn_like, zeros, zeros_like)
from gradkit.generator import (  # noqa: F401
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state)
from gradkit.windows import (  # noqa: F401
    bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window)
from gradkit.ops.random_sampling import bernoulli, multinomial, normal, poisson  # noqa: F401
from gradkit.ops.binomial_norms import binomial  # noqa: F401
from gradkit.interop import from_dlpack, frombuffer, to_dlpack  # noqa: F401
from gradkit.legacy_tensor import (  # noqa: F401
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
    LongTensor, ShortTensor)
from gradkit import fft, linalg, nn, optim, signal, special  # noqa: E402,F401
from gradkit import func  # noqa: E402,F401
from gradkit.control_flow import cond, while_loop  # noqa: E402,F401
from gradkit.func.vmap import vmap  # noqa: E402,F401 - torch.vmap is torch.func.vmap
# torch.conv2d, torch.layer_norm, torch.kl_div & co.: nn.functional's layers with ATen's
# signatures (argument orders, int reductions, the native_* tuples)
from gradkit.nn.aten import *  # noqa: E402,F401,F403
from gradkit.nn.aten_losses import *  # noqa: E402,F401,F403
from gradkit.nn.aten_pooling import *  # noqa: E402,F401,F403
from gradkit.nn.rnn_functional import *  # noqa: E402,F401,F403
from gradkit.lowrank import pca_lowrank, svd_lowrank  # noqa: E402,F401
from gradkit.iterative_eigen import lobpcg  # noqa: E402,F401
from gradkit import accelerator, cuda  # noqa: E402,F401
from gradkit.serialization import load, save  # noqa: E402,F401
from gradkit import profiler, random, return_types, testing, utils  # noqa: E402,F401
from gradkit import distributions  # noqa: E402,F401
from gradkit.creation_more import (  # noqa: E402,F401
    asarray, broadcast_shapes, empty_permuted, range, scalar_tensor, unravel_index)
from gradkit.dtype_info import finfo, iinfo  # noqa: E402,F401
from gradkit._tensor_repr import set_printoptions  # noqa: E402,F401
from gradkit.torch_helpers import (  # noqa: E402,F401
    cat, concatenate, detach, fix, get_device, get_num_threads, ger, is_conj, is_neg,
    is_nonzero, is_same_size, is_signed, nonzero_static, resolve_conj, resolve_neg,
    set_num_threads, stack, typename)
from gradkit.torch_settings import (  # noqa: E402,F401
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode,
    get_float32_matmul_precision, get_num_interop_threads, is_anomaly_check_nan_enabled,
    is_anomaly_enabled, is_deterministic_algorithms_warn_only_enabled, is_warn_always_enabled,
    set_anomaly_enabled, set_default_tensor_type, set_deterministic_debug_mode,
    set_float32_matmul_precision, set_flush_denormal, set_num_interop_threads, set_warn_always,
    use_deterministic_algorithms)
from gradkit.products_out_dtype import takes_out_dtype as _takes_out_dtype  # noqa: E402

mm, bmm = (_takes_out_dtype(f, ("input", "mat2")) for f in (mm, bmm))  # noqa: F405 - ops'
addmm = _takes_out_dtype(addmm, ("input", "mat1", "mat2"))  # noqa: F405
baddbmm = _takes_out_dtype(baddbmm, ("input", "batch1", "batch2"))  # noqa: F405
from gradkit._not_implemented import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # torch features gradkit lacks: a clear AttributeError
from gradkit.autograd import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled)

float = float32  # noqa: A001 - torch's aliases
double = float64
half = float16
long = int64
short = int16
# torch's function names for the comparisons (also Tensor methods)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne  # noqa: F405
int = int32  # noqa: A001
cfloat = complex64
cdouble = complex128
if hasattr(backend, "bfloat16"):  # pragma: no cover - needs ml_dtypes
    bfloat16 = backend.bfloat16

# torch's constants (torch.pi is math.pi; torch.newaxis is None, as NumPy's)
pi, e, inf, nan, newaxis = _math.pi, _math.e, _math.inf, _math.nan, None

__version__ = "0.1.0"
globals().update(_INPLACE_FUNCTIONS)  # torch.abs_(x) & co.: x.abs_()


def is_tensor(obj) -> bool:
    """True if ``obj`` is a gradkit Tensor."""
    return isinstance(obj, Tensor)


def is_inference(input: Tensor) -> bool:  # noqa: A002 - torch's argument name
    """True if ``input`` is an inference tensor (made in ``inference_mode()``)."""
    if not isinstance(input, Tensor):
        raise TypeError("is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()


def numel(input: Tensor) -> int:
    """The number of elements of ``t``."""
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    """True if ``t`` has a floating dtype."""
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    """True if ``t`` has a complex dtype."""
    return input.is_complex()


# torch's C++-parsed functions take NumPy's names too (``gradkit.reshape(x=t, shape=...)``)
_take_numpy_names(globals())

# ``from gradkit import *`` gives the public API (functions, classes, dtypes, submodules it
# documents), not the implementation modules that happen to be imported
_SUBMODULES = ("autograd", "distributions", "fft", "func", "linalg", "nn", "optim", "cuda",
               "accelerator", "profiler", "random", "return_types", "signal", "special",
               "testing", "utils")
__all__ = sorted(
    [name for name, value in globals().items()
     if not name.startswith("_") and not isinstance(value, _types.ModuleType)]
    + [name for name in _SUBMODULES if name in globals()])
