"""Complex-number ops, with PyTorch's conjugate-Wirtinger convention for gradients.

For a real loss L of complex z, the gradient is dL/d(conj z); a rule for a
holomorphic f therefore multiplies by conj(f'(z)). ``real``/``imag`` of a real
tensor are the tensor itself / zeros, as in torch.
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import enable_grad
from gradkit.ops._op import op
from gradkit.ops.memory_overlap import OVERLAP_MESSAGE, _address, storage_of
from gradkit.ops.methods import register, tensor_method
from gradkit.ops.views import replay_view
from gradkit.ops.result_layout import laid_out_as


@op(linear=True, batchable=True, view=True)
def _conj(xp, x):
    if type(x) is not np.ndarray:
        return xp.conj(x)
    if x.size == 0:  # a view: x's strides
        return laid_out_as(xp.conj(x), x)
    owner = storage_of(x)
    start = _address(x) - _address(owner)
    if x is owner or (x.flags.c_contiguous and not start and x.nbytes == owner.nbytes):
        return xp.conj(x)
    # torch's conj is a view: keep x's strides and storage offset, in memory as large as its
    # storage, all of it conjugated (as_strided of the view may read outside x's elements)
    memory = np.empty(owner.nbytes, dtype=np.uint8)
    out = np.ndarray(x.shape, x.dtype, buffer=memory, offset=start, strides=x.strides)
    if not owner.flags.c_contiguous:  # (no flat reading of it): x's elements only
        return np.conjugate(x, out=out)
    shift = start % x.itemsize
    count = (owner.nbytes - shift) // x.itemsize
    np.conjugate(np.ndarray((count,), x.dtype, buffer=owner, offset=shift),
                 out=np.ndarray((count,), x.dtype, buffer=memory, offset=shift))
    return out


# a view as in torch (same memory, version and base; writes go both ways), though NumPy has no
# lazy conjugate: the values are computed, and in-place writes keep them in step (views.py)
_conj.view_inverse = _conj


_conj.defvjp(lambda g: conj(g))
_conj.defjvp(lambda t: conj(t))
_conj.name = "conj"
_conj.profiler_name = "gradkit::conj"
_conj.node_name = "ConjBackward0"


def conj(input):
    """Complex conjugate, a view of x (x itself, without a node, when it is real)."""
    if type(input) is float:  # a backward's real scalar: no call at all
        return input
    return _conj(input) if _is_complex(input) else input


# the method (and gradkit.conj, through take_numpy_names) take torch's NumPy names; the rules
# that call conj in every backward of mul, div and matmul keep the plain function
tensor_method()(conj)


def _conj_physical_op(node_name: str):
    """torch's conj_physical: the conjugate in new memory (no conj view), recorded as
    ``ConjPhysicalBackward0`` (``1``: the in-place form)."""
    def forward(xp, x):
        return xp.conj(x) if x.dtype.kind == "c" else x.copy()  # (NumPy's conj of bools: int8)
    forward.__name__ = "conj_physical"
    declared = op(linear=True, batchable=True, elementwise=True, node_name=node_name)(forward)
    declared.defvjp(lambda g: _conjugated(g))
    declared.defjvp(lambda t: _conjugated(t))
    return declared


_conj_physical = _conj_physical_op("ConjPhysicalBackward0")
_conj_physical_in_place = _conj_physical_op("ConjPhysicalBackward1")


def _conjugated(x):
    """conj_physical in rules, which also get raw arrays and numbers."""
    return _conj_physical(x) if _is_complex(x) else x


@tensor_method()
def conj_physical(input: Tensor) -> Tensor:  # noqa: A002 - torch's name
    """The complex conjugate in memory of its own (input itself when it is real)."""
    if not isinstance(input, Tensor):
        raise TypeError("conj_physical(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return _conjugated(input)


register(_conj_physical_in_place, "conj_physical", method=False, inplace=True)


def _kernel_only_for_complex(target, *args) -> bool:
    """torch's conj_physical_ of a real tensor returns before its kernel: an expanded target
    is refused only when complex (else its CopySlices' backward refuses, as after fill_)."""
    if target.dtype.kind == "c":
        raise RuntimeError(OVERLAP_MESSAGE)
    return True


_conj_physical_in_place.check_overlap = _kernel_only_for_complex


def _conj_steps(info):
    """How many conj steps the view chain from ``info`` takes before its base or a step that
    leaves complex numbers (real/imag), and that step's ViewInfo (None at the base)."""
    flips = 0
    while info is not None and info.op is not _real and info.op is not _imag:
        flips += info.op is _conj
        info = info.parent
    return flips, info


def detached_view(x: Tensor) -> Tensor:
    """``x.detach()`` for a view whose values are computed (a conj step in its chain): the same
    chain replayed on the detached base. torch's detach keeps the conj bit and the memory, so
    writes into either reach the other and ``is_conj()`` holds; a plain detached copy of the
    computed values would fall out of step with the base."""
    info = x._view
    base = Tensor._make(info.base._data, None, 0, info.base._vc)
    with enable_grad():  # a view as any (not one made under no_grad, which goes stale)
        detached = replay_view(info.steps(), base)
    detached._view.detached = True
    return detached


def is_conjugated_view(x) -> bool:
    """torch's ``is_conj()``: x is a complex view through an odd number of conj steps."""
    return _conj_steps(getattr(x, "_view", None))[0] % 2 == 1


def is_negative_view(x) -> bool:
    """torch's ``is_neg()``: x views the imaginary part of a conjugated view (its values are
    negated lazily in torch; gradkit computes them, and reports the bit as torch does)."""
    flips, part = _conj_steps(getattr(x, "_view", None))
    return part is not None and part.op is _imag and _conj_steps(part.parent)[0] % 2 == 1


@op(linear=True, batchable=True, view=True)
def _real(xp, x, _of_conj=False):
    return _part(xp, x, xp.real(x))


def _part(xp, x, part):
    """x's real or imaginary ``part``; of an empty x to which NumPy gave no strides (all 0),
    with those of torch's contiguous x, in the part's elements (twice the complex ones)."""
    if x.size or any(x.strides):
        return part
    strides, step = [], x.itemsize
    for n in reversed(x.shape):
        strides.append(step)
        step *= max(n, 1)
    return xp.lib.stride_tricks.as_strided(part, strides=tuple(reversed(strides)))


@op(linear=True, batchable=True, view=True)
def _imag(xp, x, _of_conj=False):
    return _part(xp, x, xp.imag(x))


@op(linear=True, batchable=True)
def _into_part(xp, g, _imag=False, _of_conj=False):
    """torch's real/imag are selects of view_as_real, whose backward puts g in one part and a
    zero in the other; of a conjugated view (``_of_conj``) it goes on through a conj (and for
    imag the neg of its neg view): that zero is -0.0."""
    out = xp.empty(g.shape, xp.result_type(g.dtype, xp.complex64))
    zero = -0.0 if _of_conj else 0.0
    xp.real(out)[...], xp.imag(out)[...] = (zero, g) if _imag else (g, zero)
    return out


_into_part.defvjp(lambda g, _imag, _of_conj: imag(g) if _imag else real(g))
_into_part.defjvp(lambda t, _imag, _of_conj: _into_part(t, _imag=_imag, _of_conj=_of_conj))
_real.defvjp(lambda g, _of_conj: _into_part(g, _of_conj=_of_conj))
_real.defjvp(lambda t, _of_conj: real(t))
_real.node_name = "RealBackward0"
_imag.defvjp(lambda g, _of_conj: _into_part(g, _imag=True, _of_conj=_of_conj))
_imag.defjvp(lambda t, _of_conj: imag(t))
_imag.node_name = "ImagBackward0"


def real(input):
    """Real part (the tensor itself when it is real)."""
    return _real(input, _of_conj=is_conjugated_view(input)) if _is_complex(input) else input


def imag(input):
    """Imaginary part; torch refuses it for real tensors, and so do we."""
    if not _is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _imag(input, _of_conj=is_conjugated_view(input))


def _is_complex(x) -> bool:
    t = type(x)
    if t is float or t is int:  # the common cases first: a backward's real scalars, arrays
        return False
    if t is np.ndarray:
        return x.dtype.kind == "c"
    data = getattr(x, "_data", x)
    dtype = getattr(data, "dtype", None)
    if dtype is None:
        return isinstance(x, complex)
    return dtype.kind == "c"
