"""The general paths around dispatch: devices, NumPy operands, argument errors, saving
any ``save`` spec, and the derivative helpers shared with the engine.

``ops/_op.py`` keeps the hot path (the fast path and recording); what it falls back to for
inputs off the common case (GPU arrays, NumPy values, lists, errors) lives here.
"""
from __future__ import annotations

import dis
import inspect
from sys import modules as _modules
from types import SimpleNamespace

import numpy as np

from gradkit.autograd import observers
from gradkit.autograd.batching import state as batch_state
from gradkit._tensor import Tensor
from gradkit.autograd.graph import FREED_ENTRY, SavedTensor
from gradkit.backend import get_array_module
from gradkit.int_arguments import invalid_combination, type_name
from gradkit.number_arguments import python_number
from gradkit.ops.promotion import NumpyOperand


class _Seam:
    """The ops the mechanism itself uses (gradient casts and sums, derived rules): declared
    with ``op`` in the files above this one, so ``gradkit/ops/__init__.py`` binds them once they
    are loaded. The one place where a lower layer reaches up (also used by the backward rules
    of shape.py and indexing.py, which reduction.py imports)."""

    conj = sum = real = astype = None


seam = _Seam()

_ARRAY_TYPES = (np.ndarray, np.generic)
_add_reduce = np.add.reduce
_new, _init_saved = object.__new__, SavedTensor.__init__


def _entries_read(rule, n_saved: int) -> frozenset | None:
    """Indices of the saved values (the parameters after ``g``) that ``rule``'s code reads.

    None when that cannot be told (``*args`` it reads, a non-function): then everything is
    kept. Parameters used by nested functions or comprehensions count as read; ``*saved``
    never read reads nothing (a refusal's ``refuse(g, *saved)``: torch's NotImplemented node
    saves nothing, so a later in-place write is no version error).
    """
    code = getattr(rule, "__code__", None)
    if code is None:
        return None
    varargs = code.co_flags & inspect.CO_VARARGS
    if not varargs and code.co_argcount < 1 + n_saved:
        return None
    names = code.co_varnames[1:min(1 + n_saved, code.co_argcount)]
    read = set(code.co_cellvars)
    for instruction in dis.get_instructions(code):
        if instruction.opname.startswith("LOAD_FAST") or instruction.opname in (
                "LOAD_DEREF", "LOAD_CLOSURE"):
            value = instruction.argval
            read.update(value if isinstance(value, tuple) else (value,))
    if varargs and code.co_varnames[code.co_argcount + code.co_kwonlyargcount] in read:
        return None
    return frozenset(k for k, name in enumerate(names) if name in read)



def _numpy_operands(args, datas):
    """NumPy values given with tensors, read as torch reads them: a 0-d array ranks as a
    dimensioned operand in promotion (NumPy computes it in torch), a NumPy scalar is a
    Python number (a NumPy bool a float, as torch's parser reads it). (Derivative rules on
    raw arrays keep NumPy scalars as 0-d values.)"""
    read = [a if d is not a else
            a.view(NumpyOperand) if type(a) is np.ndarray and not a.ndim else
            python_number(a) if isinstance(a, np.generic) else a
            for a, d in zip(args, datas)]
    return tuple(read), [d if d is not a else r for a, d, r in zip(args, datas, read)]



def _check_argument_types(op, args, numbers: bool = False) -> None:
    """torch's TypeError for an argument that is neither a tensor, an array nor a number (or,
    for an op of one input whose forward failed on it, a Python number: ``sin(1.5)``; with
    ``numbers``, a forward that read an array attribute of one: a number where an input that
    takes none goes, ``addmm(x, 1, y)``)."""
    for i, a in enumerate(args):
        name = op.input_names[i] if i < len(op.input_names) else "x"
        if i and name in _NUMBER_INPUTS:  # a dim or value: the op's own checks word it
            continue
        if isinstance(a, (str, bytes, dict, set, tuple, list)) or a is None or callable(a) or \
                type(a) in (bool, int, float, complex) and (
                    len(args) == 1 or numbers and name not in _NUMBER_INPUTS):
            if i and op.name in _SCALAR_OVERLOADS:  # two signatures could take it
                raise invalid_combination(op.name, args, {})
            torch_names = getattr(op, "torch_input_names", None)  # (ops/node_names.py)
            if name in _TORCH_NAMES or not torch_names:
                name = _TORCH_NAMES.get(name, name) if i else "input"
            else:
                name = torch_names[i]
            raise TypeError(f"{op.name}(): argument '{name}' (position {i + 1}) must be Tensor, "
                            f"not {type_name(a)}")


def failed_on_argument(error: AttributeError, args) -> bool:
    """Whether ``error`` (``'int' object has no attribute 'ndim'``) is a forward reading an
    array attribute of one of the op's arguments (not of a parameter: ``alpha=None``)."""
    failed = str(error).partition("' object has no attribute")[0].lstrip("'")
    return any(type(a).__name__ == failed for a in args)


_TORCH_NAMES = {"x": "input", "y": "other"}  # the input names of most ops, in torch's words
# inputs that take a number (a dim, a fill value): not blamed as tensors (the op's own checks
# give torch's "must be int" for a dim)
_NUMBER_INPUTS = frozenset(("dim", "value", "weight", "src"))

# ops with a (Tensor, Scalar) signature beside (Tensor, Tensor): torch's parser lists both for
# a second argument that neither takes (add, mul ... read a number as a tensor: one signature)
_SCALAR_OVERLOADS = frozenset((
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
    "eq", "ne", "lt", "le", "gt", "ge", "fill",
    "copysign", "divide", "float_power", "floor_divide", "fmod", "isin", "multiply", "pow",
    "remainder", "rsub", "subtract", "true_divide", "xlogy"))


def broadcast_shape(*shapes) -> tuple:
    """The shape arrays of ``shapes`` broadcast to, or torch's error."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(_broadcast_message([SimpleNamespace(shape=s) for s in shapes])) \
            from None


def _broadcast_message(datas) -> str:
    """torch's infer_size message: the operands' shapes folded left to right, the first one
    that does not broadcast with the shape so far is ``b`` (its last mismatching dim)."""
    shapes = [tuple(d.shape) for d in datas if hasattr(d, "shape")]
    a = shapes[0]
    for b in shapes[1:] or [()]:
        ndim = max(len(a), len(b))
        for dim in range(ndim - 1, -1, -1):
            i, j = dim - ndim + len(a), dim - ndim + len(b)
            n, m = (a[i] if i >= 0 else 1), (b[j] if j >= 0 else 1)
            if n != m and n != 1 and m != 1:
                return (f"The size of tensor a ({n}) must match the size of tensor b ({m}) at "
                        f"non-singleton dimension {dim}")
        a = np.broadcast_shapes(a, b)
    return f"shapes {' and '.join(str(list(s)) for s in shapes)} cannot be broadcast together"



def _floating(out) -> bool:
    """Only floating/complex results carry gradients (torch: integer outputs never do)."""
    first = out[0] if type(out) is tuple else out
    kind = getattr(getattr(first, "dtype", None), "kind", "f")
    return kind in "fcV"


def _xp_of(datas):
    for d in datas:
        if isinstance(d, _ARRAY_TYPES):
            if "cupy" in _modules and _maybe_gpu(datas):  # GPU arrays may exist: check
                _check_same_device(datas)
            return np
        if hasattr(d, "__cuda_array_interface__"):
            _check_same_device(datas)
            return get_array_module(d)
        if isinstance(d, (list, tuple)) and d:
            return _xp_of(d)
    return np


def _forward_on_device(op, xp, datas, params):
    """GPU forwards run with their inputs' device current: CuPy allocates on the current one."""
    with _first_gpu_array(datas).device:
        return op.forward(xp, *datas, **params)


def _first_gpu_array(datas):
    for d in datas:
        if hasattr(d, "__cuda_array_interface__"):
            return d
        if isinstance(d, (list, tuple)):
            found = _first_gpu_array(d)
            if found is not None:
                return found
    return None


def _maybe_gpu(datas) -> bool:
    """Whether anything besides NumPy arrays and scalars is among the inputs (cheap test)."""
    for d in datas:
        if type(d) not in _HOST_TYPES and not isinstance(d, np.generic):
            return True
    return False


_HOST_TYPES = frozenset({np.ndarray, int, float, complex, bool, str, type(None)})


def _check_same_device(datas) -> None:
    """torch's error when one op meets arrays of two devices (NumPy scalars have none)."""
    seen = _device_indices(datas, set())
    if len(seen) > 1:
        a, b = (f"cuda:{i}" if i >= 0 else "cpu"
                for i in sorted(seen, key=lambda i: (i < 0, i))[:2])
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {a} and {b}!")


def _device_indices(datas, seen: set) -> set:
    """-1 for NumPy arrays, the CUDA device index for GPU arrays, looking into lists."""
    for d in datas:
        if type(d) is np.ndarray:
            seen.add(-1)
        elif hasattr(d, "__cuda_array_interface__"):
            seen.add(d.device.id)
        elif isinstance(d, (list, tuple)):
            _device_indices(d, seen)
    return seen


def _as_array(xp, out):
    """Scalars (NumPy reductions) become 0-d arrays; arrays of any device stay as they are."""
    if type(out) is np.ndarray or hasattr(out, "__cuda_array_interface__"):
        return out
    return xp.asarray(out)



def _save(node, op, args, datas, outputs, keep) -> None:
    """``node.saved`` of an op saving metadata too (``x.shape``); what is not a tensor also
    goes to the node's ``extras().kept_meta`` (no slot on every Node: the plain chain of
    bench_instructions.py costs no more), which backward does not free: torch's sizes, dtypes and
    numbers stay readable (``_saved_self_sym_sizes``, ``_saved_dim``) after its saved tensors
    are freed."""
    saved = []
    nbytes = 0
    held = None  # a SavedTensor of this pack: its death releases the pack's bytes
    for k, (kind, index, attr) in enumerate(op.save_spec):
        if keep and not keep[k]:  # no rule that will run reads it
            saved.append(None)
            continue
        if kind == "inputs":
            if attr:
                saved.append(tuple(getattr(d, attr) for d in datas))
                continue
            packed = _SavedInputs(SavedTensor(a, False) if d is not a else a
                                  for a, d in zip(args, datas))
            tensors = [p for p in packed if type(p) is SavedTensor]
            nbytes += sum(p.nbytes for p in tensors)
            held = tensors[-1] if tensors else held
            saved.append(packed)
            continue
        source = args[index] if kind == "input" else outputs[index]
        if attr:
            value = datas[index] if kind == "input" else source._data
            value = getattr(value, attr, _scalar_meta)  # (a Python scalar has no shape)
            saved.append(_scalar_meta(attr) if value is _scalar_meta else value)
        elif kind == "result" or datas[index] is not source:  # a Tensor
            held = _new(SavedTensor)  # SavedTensor(...) without type.__call__'s C frame
            _init_saved(held, source, kind == "result")  # (as _dispatch_hot makes nodes)
            nbytes += held.nbytes
            saved.append(held)
        else:
            saved.append(source)  # a Python scalar argument: saved as is
    if nbytes and observers.saved_watchers:
        observers.saved_pack_held_by(held, nbytes)
    node.saved = saved = tuple(saved)
    wraps = getattr(op, "number_edges", False)  # (add, mul: a number is torch's 0-d tensor)
    node.extras().kept_meta = tuple(FREED_ENTRY if type(value) in (SavedTensor, _SavedInputs) or
                           (wraps and not attr and value is not None) else value
                           for value, (_, _, attr) in zip(saved, op.save_spec))


def numbers_only(plain: tuple, args: tuple, datas: tuple) -> tuple:
    """The save mask of a node torch names NotImplemented by its operands (remainder of a
    number by a tensor): torch's saves nothing, so no tensor is kept (a later in-place write
    is no version error), only the numbers its rule's refusal reads."""
    return tuple(not is_result and datas[index] is args[index] for is_result, index in plain)


def keep_values(node, saved: tuple) -> None:
    """A number or an absent tensor (None) the op saved as is stays readable after backward,
    as torch's (``gather``'s ``_saved_dim``, ``lerp``'s ``_saved_weight``): kept apart, as
    ``_save``'s metadata."""
    node.extras().kept_meta = tuple(
        FREED_ENTRY if type(value) is SavedTensor else value for value in saved)


def _scalar_meta(attr):
    """Metadata of a Python scalar argument: shape () and no dtype of its own."""
    return () if attr == "shape" else None


class _SavedInputs(tuple):
    """All inputs of a variadic op saved for backward (``save="inputs"``)."""


def _unpack_all(saved, node, create_graph):
    return tuple(s.unpack(node, create_graph) if type(s) is SavedTensor else s for s in saved)


def cast_grad(g, dtype):
    """A gradient in its input's dtype: the real part for real inputs, then a cast (torch)."""
    data = getattr(g, "_data", g)
    if data.dtype.kind == "c" and dtype.kind != "c":
        g = seam.real(g)
    return seam.astype(g, dtype=dtype)


def fit_grad(node, index: int, g, shape, dtype, reducible):
    """``g`` as the gradient of input ``index`` of ``node``, in its shape and dtype as torch's
    engine validates it: a gradient in a shape the input's expands to is summed back to it
    (``reducible``: the op broadcast, no need to check), any other shape is an error;
    another dtype is cast (the one check for ops and custom Functions)."""
    data = g if type(g) is np.ndarray else getattr(g, "_data", g)
    if data.shape != shape:
        if not reducible and not _expands_to(shape, data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(data.shape)} but expected shape compatible with {list(shape)}")
        g = sum_to_shape(g, shape)
        data = getattr(g, "_data", g)
    if data.dtype != dtype:
        g = cast_grad(g, dtype)
    return g


def _expands_to(shape: tuple, target: tuple) -> bool:
    """torch's is_expandable_to: ``shape`` broadcasts to ``target`` (dims of 1 or equal)."""
    return len(shape) <= len(target) and all(
        n == 1 or n == m for n, m in zip(reversed(shape), reversed(target)))


def sum_to_shape(g, shape):
    """Sum a broadcast gradient back to ``shape`` (the one shared unbroadcast helper)."""
    _sum = seam.sum
    lead = 1 if batch_state.size else 0  # a vectorized batched backward keeps its batch dim
    if not lead and isinstance(g, Tensor):  # a graph being built (create_graph): torch's nodes
        return _sum_to_as_torch(g, shape)
    extra = g.ndim - lead - len(shape)
    if extra > 0:  # leading broadcast dims: summed away (a fresh array, not a view)
        g = _sum(g, tuple(range(lead, lead + extra))) if type(g) is not np.ndarray or \
            g.dtype.kind not in "fc" or g.dtype.char == "e" else \
            _summed(g, tuple(range(lead, lead + extra)))
    axes = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = _sum(g, axes, True)
    return g


def _sum_to_as_torch(g, shape: tuple):
    """torch's ``sum_to`` of a gradient on a graph, so its grad_fn reads as torch's: ``sum()``
    to a 0-d shape (SumBackward0), else one ``sum(dims, keepdim=True)`` (SumBackward1) over
    the leading and the broadcast dims, then a ``view`` dropping the leading ones."""
    if not shape:
        return g.sum()
    extra = g.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and g.shape[extra + i] != 1)
    if axes:
        g = g.sum(axes, keepdim=True)
    return g.view(shape) if extra else g


def _summed(g, axes: tuple):
    """``seam.sum(g, axes)`` of a raw float32/64 or complex array (a plain backward's bias
    gradient) without the op's call: sum's own reduction (``np.add.reduce`` is what ``np.sum``
    runs, float16 excepted: it adds up in float32) and its C-ordered result."""
    out = _add_reduce(g, axes)
    return out if out.flags.c_contiguous else out.copy(order="C")
