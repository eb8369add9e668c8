"""torch's own op table (OpInfo) as an oracle: its sample inputs run through gradkit and torch.

torch's test suite describes every op with an ``OpInfo``: the inputs its authors chose
(``sample_inputs``, ``reference_inputs``) and the misuses it must refuse (``error_inputs``,
with the error type and message). ``compare_sample`` runs one sample in both libraries and
says how they differ (values, dtypes, shapes, gradients, which one raises); ``compare_error``
checks that gradkit refuses an error input as torch does. ``opinfo_scan.py`` is the command.
"""
from __future__ import annotations

import functools
import re
import sys
import types
import unittest

import numpy as np

import gradkit

# torch's test helpers import expecttest (a test-only package) for one base class
_stub = types.ModuleType("expecttest")
_stub.TestCase = unittest.TestCase
sys.modules.setdefault("expecttest", _stub)

import torch  # noqa: E402
from fuzz.function_twins import function_twin, reading_gradkit  # noqa: E402, F401
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402, F401

RANDOM = {"cauchy", "exponential", "geometric", "log_normal", "normal", "uniform", "bernoulli",
          "multinomial", "rrelu", "svd_lowrank", "pca_lowrank"}
NOT_PUBLIC = {"max_pool2d_with_indices_backward",  # aten internals
              # its distance_function argument is torch's own pairwise_distance
              "nn.functional.triplet_margin_with_distance_loss",
              # dtypes and layouts gradkit has not (docs/torch_coverage.md, "Not covered")
              "bfloat16", "chalf", "to_sparse"}
TOLERANCE = {"float64": 1e-7, "complex128": 1e-7, "float32": 1e-4, "complex64": 1e-4,
             "float16": 2e-2}


class UntranslatableError(Exception):
    """A sample gradkit cannot be handed (a generator, a meta tensor, ...)."""


def skipped(opinfo) -> bool:
    """Random ops (streams differ), aten internals, and views into a larger storage."""
    name = opinfo.name
    return (name.split(".")[-1] in RANDOM or name in NOT_PUBLIC or "rand" in name or "empty" in name
            or "dropout" in name or "fractional" in name
            or opinfo.variant_test_name == "partial_views")


def resolve(name: str):
    """gradkit's function of torch's dotted name (``linalg.svd``), or None."""
    obj = gradkit
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _dtype(torch_dtype):
    return getattr(gradkit, str(torch_dtype).split(".")[1])


def fresh_leaves(value):
    """Each torch tensor requiring grad as a leaf of its own (same strides): torch's samples
    may derive one from another (a target as log(input)), and its noncontiguous tensors are
    leaf views whose uses autograd does not reach; gradkit's copies are plain leaves."""
    if isinstance(value, torch.Tensor) and value.requires_grad:
        return value.detach().requires_grad_(True)
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return type(value)(fresh_leaves(v) for v in value)
    if isinstance(value, dict):
        return {k: fresh_leaves(v) for k, v in value.items()}
    return value


def same_layout(value: torch.Tensor) -> gradkit.Tensor:
    """gradkit's twin of a torch tensor laid out as it: a copy of its whole storage read with
    its sizes, strides and offset (a conj view's twin a conj view of the stored values)."""
    plain = value.detach().resolve_neg()
    conj = plain.is_conj()
    stored = plain.conj() if conj else plain
    whole = torch.as_strided(stored, (stored.untyped_storage().nbytes() // stored.element_size(),),
                             (1,), 0)
    out = gradkit.as_strided(gradkit.tensor(whole.numpy(), dtype=_dtype(stored.dtype)),
                             tuple(stored.shape), stored.stride(), stored.storage_offset())
    return (out.conj() if conj else out).detach()


def to_gradkit(value, leaves: list, keep_layout: bool = False):
    """torch values as gradkit's; each torch tensor requiring grad is paired in ``leaves``.
    With ``keep_layout`` each tensor keeps its strides, storage offset and conj bit."""
    if isinstance(value, torch.nn.Module):  # a module handed to a constructor
        raise UntranslatableError("module argument")
    if callable(value) and getattr(value, "__module__", "") in ("torch._C._nn",
                                                                  "torch.nn.functional"):
        return getattr(gradkit.nn.functional, value.__name__)  # an activation argument
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu":  # meta tensors of error inputs
            raise UntranslatableError(value.device.type)
        if value.dtype in (torch.bfloat16, torch.complex32):  # dtypes gradkit has not
            raise UntranslatableError(str(value.dtype))
        plain = value.detach().resolve_conj().resolve_neg()
        out = same_layout(value) if keep_layout else gradkit.tensor(plain.numpy(),
                                                                    dtype=_dtype(plain.dtype))
        if value.requires_grad:
            out.requires_grad_(True)
            leaves.append((value, out))
        return out
    if isinstance(value, torch.dtype):
        return _dtype(value)
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, torch.device):
        return "cpu"
    if isinstance(value, torch.layout):  # gradkit has strided only: others stay torch's
        return gradkit.strided if value == torch.strided else value
    if isinstance(value, torch.memory_format):
        return getattr(gradkit, str(value).split(".")[1])
    if isinstance(value, torch.Generator):
        raise UntranslatableError("generator")
    if isinstance(value, (list, tuple)):
        return type(value)(to_gradkit(v, leaves, keep_layout) for v in value)
    if isinstance(value, dict):
        return {k: to_gradkit(v, leaves, keep_layout) for k, v in value.items()}
    return value


def _variant(opinfo, variant: str):
    return {"op": opinfo.op, "method": opinfo.method_variant,
            "inplace": opinfo.inplace_variant}[variant]


def gradkit_callable(opinfo, variant: str):
    """gradkit's counterpart of an OpInfo's function, method or in-place variant."""
    f = _variant(opinfo, variant)
    if f is None:
        return None
    if isinstance(f, functools.partial):  # partial(F.mish, inplace=True): gradkit's F.mish
        inner = gradkit_callable(types.SimpleNamespace(
            name=opinfo.name, op=f.func, method_variant=None, inplace_variant=None), "op")
        return inner and functools.partial(inner, *f.args, **f.keywords)
    owner = getattr(f, "__self__", None)
    if isinstance(owner, type) and issubclass(owner, torch.autograd.Function):
        return function_twin(owner).apply  # autograd_function_db's custom Functions
    module = getattr(f, "__module__", "") or ""
    # a method of torch's Tensor (cfloat's op is one): gradkit's method of that name
    if (variant != "op" or isinstance(f, types.MethodDescriptorType)) and \
            not isinstance(f, types.FunctionType):
        name = getattr(f, "__name__", opinfo.name.split(".")[-1])
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    if module.startswith("torch.nn.functional"):
        return getattr(gradkit.nn.functional, f.__name__, None)
    if isinstance(f, types.FunctionType) and module.startswith("torch.testing"):
        return reading_gradkit(f)  # a lambda of torch's table (``lambda x: x.H``)
    return resolve(opinfo.name)


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in _flat(item)]
    return [out]


def _array(value):
    if isinstance(value, torch.Tensor):
        # force: a ZeroTensor (sgn's gradient of a real input) has no array of its own
        return np.asarray(value.detach().resolve_conj().resolve_neg().numpy(force=True))
    if isinstance(value, gradkit.Tensor):  # a conj view too (the layout scan's inputs)
        return np.asarray(value.detach().resolve_conj().resolve_neg().numpy())
    return value


def difference(torch_value, gradkit_value, tolerance: float = 0.0) -> str | None:
    """How two results differ (type, shape, dtype, values), or None."""
    a, b = _array(torch_value), _array(gradkit_value)
    if not (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
        both_nan = isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b)
        return None if both_nan or a == b else f"{a!r} vs {b!r}"
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return f"type {type(torch_value).__name__} vs {type(gradkit_value).__name__}"
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} vs {b.dtype}"
    if a.dtype.kind in "biu":
        return None if np.array_equal(a, b) else "values (exact)"
    tolerance = max(tolerance, TOLERANCE.get(str(a.dtype), 0.0))
    if a.dtype.kind == "c":  # part by part: NumPy calls inf + 1.13j and inf + 1.13000001j apart
        a, b = np.stack([a.real, a.imag]), np.stack([b.real, b.imag])
    if np.allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True):
        return None
    error = np.nanmax(np.abs(a.astype(complex) - b.astype(complex))) if a.size else 0
    return f"values, largest difference {error:.3g}"


def _weighted_sum(lib, outputs: list, weights: list):
    total = 0
    for out, w in zip(outputs, weights):
        product = out * lib.tensor(w)
        total = total + (product.real if out.dtype.is_complex else product).sum()
    return total


def compare_gradients(tout: list, gout: list, torch_inputs: list, gradkit_inputs: list,
                      names: list | None = None) -> str | None:
    """Gradients of one random weighted sum of the differentiable outputs, in both libraries,
    with respect to the paired inputs (``names`` label them in the report)."""
    pairs = [(t, g) for t, g in zip(tout, gout) if isinstance(t, torch.Tensor)
             and t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]
    if not pairs or not torch_inputs:
        return None
    weights = random_weights(np.random.default_rng(0), [t for t, _ in pairs])
    try:
        expected = torch.autograd.grad(_weighted_sum(torch, [t for t, _ in pairs], weights),
                                       torch_inputs, allow_unused=True)
    except Exception:  # noqa: BLE001 - torch refuses: gradkit may too
        return None
    got = [None] * len(gradkit_inputs)  # no gradkit output on a graph: no gradients
    try:
        if any(g.requires_grad for _, g in pairs if isinstance(g, gradkit.Tensor)):
            got = gradkit.autograd.grad(_weighted_sum(gradkit, [g for _, g in pairs], weights),
                                        gradkit_inputs, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return f"backward: gradkit raises {type(e).__name__}: {str(e)[:100]}"
    names = names or [f"input {i}" for i in range(len(torch_inputs))]
    return derivative_difference(names, expected, got, "grad", 1e-6)


def random_weights(rng, tensors: list) -> list:
    """A standard normal array (complex for a complex tensor) per tensor, in its dtype."""
    return [torch.tensor(rng.standard_normal(t.shape) + (1j * rng.standard_normal(t.shape)
                                                         if t.dtype.is_complex else 0))
            .to(t.dtype).numpy() for t in tensors]


def derivative_difference(names: list, expected, got, what: str,
                          tolerance: float) -> str | None:
    """How torch's derivatives (``expected``) and gradkit's differ, the first one found."""
    for name, a, b in zip(names, expected, got):
        if a is None or b is None:  # None and zeros are the same derivative
            other = b if a is None else a
            if other is not None and np.any(_array(other)):
                return f"{what} of {name}: None in {'torch' if a is None else 'gradkit'} only"
            continue
        found = difference(a, b, tolerance)
        if found:
            return f"{what} of {name}: {found}"
    return None


def run_both(torch_call, gradkit_call, label=lambda i, n: f"out[{i}]") -> tuple:
    """``(difference, torch's outputs, gradkit's outputs)`` of one call in each library;
    when one raises, its error is compared with the other's (by type) and no outputs come.
    ``label(i, n)`` names output i of n in the report."""
    try:
        expected = torch_call()
    except Exception as e:  # noqa: BLE001 - compared with gradkit's refusal
        try:
            gradkit_call()
        except Exception as ge:  # noqa: BLE001
            # torch's LinAlgError is torch._C._LinAlgError, gradkit's gradkit.linalg.LinAlgError
            if isinstance(ge, type(e)) or type(ge).__name__ == type(e).__name__.lstrip("_"):
                return None, None, None
            return (f"error types: torch {type(e).__name__} gradkit {type(ge).__name__}: "
                    f"{ge}"[:200], None, None)
        return f"torch raises {type(e).__name__}: {str(e)[:80]}; gradkit computes", None, None
    try:
        got = gradkit_call()
    except Exception as e:  # noqa: BLE001
        return f"gradkit raises {type(e).__name__}: {str(e)[:100]}", None, None
    tout, gout = _flat(expected), _flat(got)
    if len(tout) != len(gout):
        return f"outputs {len(tout)} vs {len(gout)}", None, None
    for i, (a, b) in enumerate(zip(tout, gout)):
        found = difference(a, b)
        if found:
            return f"{label(i, len(tout))} {found}", None, None
    return None, tout, gout


def _drops_out(opinfo, args: tuple, kwargs: dict) -> bool:
    """Dropout in effect (multi_head_attention_forward takes its dropout_p positionally)."""
    p = kwargs.get("dropout_p", 0)
    if opinfo.name == "nn.functional.multi_head_attention_forward":
        p = args[9] if kwargs.get("training", True) else 0
    return float(p or 0) > 0


def compare_sample(opinfo, variant: str, sample, grads: bool, keep_layout: bool = False,
                   check=None) -> str | None:
    """Run one sample in torch and gradkit: None when they agree, else how they differ.
    With ``keep_layout`` gradkit's inputs are laid out as torch's (which are not cloned for an
    in-place variant: the caller made them fresh), and ``check(x, gx, tout, gout)`` (torch's
    and gradkit's input and outputs) may report a further difference."""
    gradkit_f = gradkit_callable(opinfo, variant)
    if gradkit_f is None or (variant != "op" and not isinstance(sample.input, torch.Tensor)):
        return None  # a number's method (5.1.add(t)) is Python's error, not the op's
    x, args, kwargs = (fresh_leaves(v) for v in (sample.input, sample.args, sample.kwargs))
    if variant == "inplace" and isinstance(x, torch.Tensor) and not keep_layout:
        x = x.detach().clone()
    leaves: list = []
    gx, gargs, gkwargs = (to_gradkit(v, leaves, keep_layout) for v in (x, args, kwargs))
    random = _drops_out(opinfo, args, kwargs)  # streams differ: computing is all
    found, tout, gout = run_both(lambda: _variant(opinfo, variant)(x, *args, **kwargs),
                                 lambda: gradkit_f(gx, *gargs, **gkwargs))
    if random:
        return found if found and not found.startswith("out[") else None
    if not found and tout is not None and check is not None:
        found = check(x, gx, tout, gout)
    if found or tout is None or not grads or variant == "inplace" or not leaves:
        return found
    torch_leaves, gradkit_leaves = zip(*leaves)
    return compare_gradients(tout, gout, list(torch_leaves), list(gradkit_leaves))


def compare_error(opinfo, error_input) -> str | None:
    """torch's designed misuse of an op: gradkit raises the same type, the message matching."""
    sample = error_input.sample_input
    gradkit_f = gradkit_callable(opinfo, "op")
    if gradkit_f is None:
        return None
    leaves: list = []
    try:
        gx, gargs, gkwargs = (to_gradkit(v, leaves)
                              for v in (sample.input, sample.args, sample.kwargs))
    except Exception:  # noqa: BLE001 - no gradkit form (meta tensors, > 64 dims)
        return None
    expected, pattern = error_input.error_type, error_input.error_regex
    try:
        opinfo.op(sample.input, *sample.args, **sample.kwargs)
    except Exception:  # noqa: BLE001 - torch refuses it, as its table says
        pass
    else:
        return None  # a misuse torch 2.13 accepts (its table's wart): gradkit may compute
    try:
        gradkit_f(gx, *gargs, **gkwargs)
    except Exception as e:  # noqa: BLE001
        if not isinstance(e, expected):
            return f"error type: torch {expected.__name__} gradkit {type(e).__name__}: {e}"[:220]
        # gradkit's dtypes print as gradkit.float32 where torch's print torch.float32
        if pattern and not re.search(pattern, str(e).replace("gradkit.", "torch.")):
            return f"message: torch /{pattern[:80]}/ gradkit {str(e)[:100]!r}"
        return None
    return f"gradkit computes; torch raises {expected.__name__} /{pattern[:80]}/"


def differing_samples(opinfo, dtypes, variants=("op", "method", "inplace"),
                      reference: bool = False) -> list:
    """Each sample of ``opinfo`` (its reference inputs too with ``reference``) at each dtype
    on which gradkit and torch differ, as ``"<variant> <dtype> #<k>: <difference>"``."""
    differing = []
    for dtype in dtypes:
        grads = opinfo.supports_autograd and (dtype.is_floating_point or dtype.is_complex)
        for draw in [opinfo.sample_inputs] + ([opinfo.reference_inputs] if reference else []):
            torch.manual_seed(0)
            samples = list(draw("cpu", dtype, requires_grad=grads))
            for variant in variants:
                for k, sample in enumerate(samples):
                    found = compare_sample(opinfo, variant, sample, grads)
                    if found:
                        differing.append(f"{variant} {str(dtype)[6:]} #{k}: {found}")
    return differing
