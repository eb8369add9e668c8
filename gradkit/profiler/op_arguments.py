"""An op event's arguments as torch's profiler lists them (``record_shapes=True``).

torch lists every argument of the op's schema, in its order: tensors with their sizes, dtype
and strides, numbers as ``Scalar`` with their value, int lists as ``ScalarList``, tensor
lists as ``TensorList``, None and strings as ``""``. The recorder keeps an op call's inputs
and the keyword parameters it was given (``recorder.Given``); the op's other parameters get
their defaults here, when the events are made, not per op call.
"""
from __future__ import annotations

from numpy import dtype as np_dtype

from gradkit.backend import dtype
from gradkit.ops._op import ALL_OPS
from gradkit.ops.strided import strides_in_elements
from gradkit.profiler.recorder import Given, Ints, Tensors, value_meta

# numpy dtype name -> the C++ type name torch writes in "Input type"
_TORCH_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
                "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                "bool": "bool", "complex64": "c10::complex<float>",
                "complex128": "c10::complex<double>"}
# dtype name -> torch's ScalarType number, which its events give for a dtype argument
_SCALAR_TYPES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                 "float32": 6, "float64": 7, "complex32": 8, "complex64": 9, "complex128": 10,
                 "bool": 11, "bfloat16": 15, "uint16": 27, "uint32": 28, "uint64": 29}
_ops_by_name: dict = {}  # profiler name -> the Ops of that name (ALL_OPS's first _made[0])
_made = [0]
# ops whose dim torch takes as an int list (``int[1]? dim``): an int is listed as [dim]
_DIM_LISTS = frozenset(f"gradkit::{name}" for name in (
    "sum", "mean", "nansum", "amax", "amin", "logsumexp", "std", "var", "std_mean", "var_mean"))
_WHOLE_FORMS = frozenset(("gradkit::sum", "gradkit::mean"))  # torch's sum(x, dtype=None)
_EMPTY_DIMS = frozenset(("gradkit::amax", "gradkit::amin"))  # dim=[]: every dim
# ops whose number operands torch's Python binding wraps into 0-d tensors (no Scalar overload)
_WRAPPED_NUMBERS = frozenset(f"gradkit::{name}{suffix}" for suffix in ("", "_") for name in (
    "add", "sub", "mul", "div", "true_divide", "floor_divide"))
# torch's trailing arguments that gradkit's op has not, with the value torch's call gives them
_TORCH_EXTRAS = {"gradkit::expand": (False,), "gradkit::copy_": (False,)}  # implicit, non_blocking
_NUMBER_DTYPES = {bool: np_dtype("bool"), int: np_dtype("int64"), float: np_dtype("float64"),
                  complex: np_dtype("complex128")}


def _op_named(name: str, given: dict):
    """The op of that profiler name whose parameters include those given, or None."""
    if name not in _ops_by_name and _made[0] != len(ALL_OPS):
        for op in ALL_OPS[_made[0]:]:
            _ops_by_name.setdefault(op.profiler_name, []).append(op)
        _made[0] = len(ALL_OPS)
    return next((op for op in _ops_by_name.get(name, ())
                 if all(p in op.param_names for p in given)), None)


def torch_arguments(name: str, meta: tuple) -> tuple:
    """The metadata of every argument of the op ``name``, in torch's order: the inputs (a
    variadic op's as one tensor list), then each parameter, given or its default."""
    given = {p: m for p, m, _ in meta[-1]} if meta and type(meta[-1]) is Given else {}
    inputs = meta[:-1] if given else meta
    if name in _WRAPPED_NUMBERS:  # a 0-d tensor of the number's type
        inputs = tuple(((), _NUMBER_DTYPES[type(m)], ()) if type(m) in _NUMBER_DTYPES else m
                       for m in inputs)
    op = _op_named(name, given)
    if op is None:
        return (*inputs, *given.values())
    if op.variadic and all(type(m) is tuple for m in inputs):
        inputs = (Tensors(inputs),)
    listed = {p: given[p] if p in given else value_meta(op.defaults.get(p))
              for p in op.profiled_params}
    if name in _DIM_LISTS and "dim" in listed:
        _as_torch_dims(name, listed)
    return (*inputs, *listed.values(), *_TORCH_EXTRAS.get(name, ()))


def _as_torch_dims(name: str, listed: dict) -> None:
    """The dim of a reduction as torch lists it: an int as ``[dim]``; none, for sum and mean
    (unless keepdim), torch's overload without dim and keepdim, for amax and amin ``[]``."""
    dim = listed["dim"]
    if type(dim) is int:
        listed["dim"] = Ints((dim,))
    elif dim is None and name in _WHOLE_FORMS and not listed.get("keepdim"):
        del listed["dim"], listed["keepdim"]
    elif dim is None and name in _EMPTY_DIMS:
        listed["dim"] = Ints(())


def _tensor(m) -> tuple:
    """(dims, type, strides) of one tensor's metadata; one without byte strides is
    contiguous."""
    byte_strides = m[2] if len(m) > 2 else None
    return (list(m[0]), _TORCH_TYPES.get(m[1].name, m[1].name),
            list(strides_in_elements(m[0], byte_strides, m[1].itemsize)))


def input_lists(name: str, meta: tuple) -> tuple:
    """(shapes, types, values, strides) of an op event's arguments, as torch's events give them
    (a value is None but for numbers, dtypes, and int lists)."""
    shapes, types, values, strides = [], [], [], []
    for m in torch_arguments(name, meta):
        shape, kind, value, stride = [], "", None, []
        if type(m) is tuple:
            shape, kind, stride = _tensor(m)
        elif type(m) is Tensors:
            parts = [_tensor(t) for t in m]
            shape, kind, stride = [p[0] for p in parts], "TensorList", [p[2] for p in parts]
        elif type(m) is Ints:
            kind, value = "ScalarList", list(m)
        elif isinstance(m, (dtype, np_dtype)):
            kind, value = "Scalar", _SCALAR_TYPES.get(m.name, -1)
        elif isinstance(m, (int, float, complex)):  # bool too
            kind, value = "Scalar", m
        elif m is not None:  # an object of another type: its name
            kind = str(m)
        shapes.append(shape)
        types.append(kind)
        values.append(value)
        strides.append(stride)
    return shapes, types, values, strides


def concrete_text(value) -> str:
    """A value of "Concrete Inputs" in the trace, as torch writes it: a float with 17
    significant digits and a point when whole (``1.``, ``0.10000000000000001``)."""
    if value is None:
        return ""
    if type(value) is float:
        text = f"{value:.17g}"
        return text + "." if text.lstrip("-").isdigit() else text
    return str(value)
