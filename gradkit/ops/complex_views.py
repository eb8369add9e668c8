"""``view_as_real`` and ``view_as_complex``: the same memory seen as (re, im) pairs or as
complex numbers, views in torch's sense (writes through either show in the other)."""
from __future__ import annotations

from gradkit.memory_format import contiguous_format
from gradkit.ops._op import op
from gradkit.ops.complex import is_conjugated_view
from gradkit.ops.conversion import clone
from gradkit.ops.memory_overlap import storage_offset
from gradkit.ops.unary_helpers import scalar_type_name

_REAL_OF = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


@op(name="view_as_real", linear=True, view=True, batchable=True)
def _view_as_real(xp, x):
    if x.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    # a trailing size-1 axis is contiguous whatever x's strides: NumPy may split its items
    return x[..., None].view(_REAL_OF[x.dtype.name])


@op(name="view_as_complex", linear=True, view=True, batchable=True)
def _view_as_complex(xp, x):
    name = x.dtype.name
    if name not in _COMPLEX_OF and name != "float16":
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {scalar_type_name(x)}")
    if x.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if x.size:  # NumPy does not keep torch's strides for an empty array (often all 0)
        _check_complex_layout(x)
    if name == "float16":
        raise TypeError("complex32 (ComplexHalf) tensors are not supported by gradkit")
    if x.size == 0:
        return xp.empty(x.shape[:-1], dtype=_COMPLEX_OF[name])
    return x.view(_COMPLEX_OF[name])[..., 0]


def _check_complex_layout(x) -> None:
    if x.strides[-1] != x.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(stride % (2 * x.itemsize) for stride, size in zip(x.strides[:-1], x.shape)
           if size != 1):  # torch ignores a one-element dim's stride
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if storage_offset(x) % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")


def _complex_of_grad(g):
    """torch's ``view_as_complex(grad.contiguous())``: an expanded gradient has stride 0, and
    an empty one NumPy's arbitrary strides."""
    data = getattr(g, "_data", g)
    c_order = data.size and data.strides == _c_strides(data)
    return _view_as_complex(g if c_order else clone(g, memory_format=contiguous_format))


def _c_strides(array) -> tuple:
    """The strides of a C-contiguous array of this shape (NumPy's contiguity flag lets a
    one-element dim have any stride; torch's contiguous() does not)."""
    strides, step = [], array.itemsize
    for n in reversed(array.shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


_view_as_real.defvjp(_complex_of_grad)
_view_as_real.defjvp(lambda t: view_as_real(t))
_view_as_complex.defvjp(lambda g: _view_as_real(g))
_view_as_complex.defjvp(lambda t: view_as_complex(t))


def view_as_real(input):
    """A real view of complex ``input`` with a last dimension of size 2: (real, imag)."""
    if is_conjugated_view(input):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
            "warned that the resulting tensor will NOT alias the original.")
    return _view_as_real(input)


def view_as_complex(input):
    """A complex view of ``input``, whose last dimension (size 2, stride 1) holds (real, imag)."""
    return _view_as_complex(input)
