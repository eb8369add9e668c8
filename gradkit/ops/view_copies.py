"""torch's ``*_copy`` functions (``view_copy``, ``t_copy``, ``split_copy``...): the view, then a
copy, as one node named after the view's (``TBackward0_copy``); and ``unsafe_split`` & co.:
split's pieces of x's memory, but not views (no shared version counter, no view checks).

Each function makes the view of a detached x first: that runs the view's own checks and
gives the view op and its parameters, which the derived op then applies to x."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.memory_format import contiguous_format
from gradkit.int_arguments import int_argument, int_list_argument, int_parameters
from gradkit.autograd.saved_names import declare_saved_names
from gradkit.ops._op import Op
from gradkit.ops.arithmetic import not_implemented
from gradkit.ops.complex_views import view_as_complex, view_as_real
from gradkit.ops.joining import chunk, split, unbind
from gradkit.ops.methods import tensor_method
from gradkit.ops.shape import _normalize_dim, squeeze, t, transpose, unsqueeze, view
from gradkit.ops.slicing import _alias, _slice, select
from gradkit.ops.triangular import diagonal

_DERIVED: dict = {}  # (view op, name, node name, copies) -> the derived op


def _save_names(view_op: Op) -> tuple:
    """The ``save=`` names of ``view_op``'s declaration, rebuilt from its parsed spec."""
    names = []
    for kind, index, attr in view_op.save_spec:
        name = view_op.input_names[index] if kind == "input" else \
            "inputs" if kind == "inputs" else "result" if index == 0 else f"result{index}"
        names.append(f"{name}.{attr}" if attr else name)
    return tuple(names)


def derived_op(view_op: Op, name: str, node_name: str, copies: bool,
               any_layout: bool = False) -> Op:
    """``view_op`` as a plain op named ``name``: its outputs copied (``copies``) or left on the
    input's memory, but never views; the view's rules, torch's ``node_name``. ``any_layout``:
    the view is taken of x's values in C order (view_copy reshapes what it cannot view)."""
    key = (view_op, name, node_name, copies, any_layout)
    if key in _DERIVED:
        return _DERIVED[key]

    def forward(xp, x, **params):
        out = view_op.forward(xp, xp.ascontiguousarray(x) if any_layout else x, **params)
        if not copies:
            return out
        return tuple(xp.array(o, order="C") for o in out) if isinstance(out, tuple) else \
            xp.array(out, order="C")

    derived = Op(forward, name=name, save=_save_names(view_op), linear=view_op.linear,
                 outputs=view_op.outputs, node_name=node_name,
                 differentiable_outputs=view_op.differentiable_outputs)
    derived.param_names, derived.defaults = list(view_op.param_names), dict(view_op.defaults)
    if view_op.node_name_rule is not None:  # squeeze's overloads: SqueezeBackward1_copy
        rule = view_op.node_name_rule
        derived.node_name_rule = lambda params, inputs: rule(params, inputs) + \
            node_name.removeprefix(view_op.node_name)
    if view_op.vjp_all is not None:
        derived.defvjp_all(view_op.vjp_all, needs=view_op.vjp_needs)
    else:
        derived.defvjp(*view_op.vjps)
    derived.jvps, derived.jvp_all = view_op.jvps, view_op.jvp_all
    if getattr(view_op, "torch_saved", None):  # split's split_size, in torch's form
        derived.torch_saved = view_op.torch_saved
        declare_saved_names(derived)
    derived.no_complex_grad = view_op.no_complex_grad
    _DERIVED[key] = derived
    return derived


def _derived_function(view_function: Callable, name: str, node_name: str | None = None,
                      copies: bool = True, complex_grad: bool = True,
                      first: tuple | None = None, keyword: str | None = None,
                      any_layout: bool = False) -> Callable:
    """torch.<name>: ``view_function``'s view of x copied (``copies``, one node named after the
    view's, ``TBackward0_copy``) or left on x's memory (then named ``node_name``), never a view
    of x; ``complex_grad=False``: recording it for a complex output raises, as torch's;
    ``first``: (torch's name, "SymInt" or "SymInt[]") of its first argument, read first as
    torch's parser reads it (permute_copy's dims, split_copy's split_size); ``keyword``: torch's
    name of that argument where it is not ``first``'s (view_copy's size); ``any_layout``: x
    need not be laid out for the view (``derived_op``)."""
    given_as = keyword or (first and first[0])

    def derived_function(x: Tensor, *args, **kwargs):
        if given_as in kwargs and not args:  # torch's name of its first argument
            kwargs = dict(kwargs)
            args = (kwargs.pop(given_as),)
        if first is not None and args:
            (int_argument if first[1] == "SymInt" else int_list_argument)(
                args[0], name, first[0], 2, symint=True)
        try:
            probe = view_function(x.detach().contiguous() if any_layout else x.detach(),
                                  *args, **kwargs)
        except TypeError as error:  # torch's parser names the function called
            raise _renamed(error, view_function.__name__, name) from None
        pieces = probe if isinstance(probe, (tuple, list)) else (probe,)
        if not pieces:  # unbind of an empty dim
            return ()
        info = pieces[0]._view
        # torch's conjugate and negative fallbacks resolve x for ops that are no views there:
        # an unsafe split of a conj or neg tensor is a copy (breadth seed 1414137)
        derived = derived_op(info.op, name, node_name or info.op.node_name + "_copy",
                             copies or x.is_conj() or x.is_neg(), any_layout)
        if not complex_grad:
            derived.no_complex_grad = name
        return derived(x, **info.params)
    derived_function.__name__ = derived_function.__qualname__ = name
    derived_function.function_words = first is not None  # (its method's words: no self)
    derived_function.__doc__ = (f"A copy of ``{view_function.__name__}``'s view" if copies else
                                f"``{view_function.__name__}`` whose pieces are not views") + \
        f" (torch.{name})."
    return derived_function


def _renamed(error: TypeError, old: str, new: str) -> TypeError:
    """``error`` naming ``new()`` where it names ``old()``."""
    message = str(error)
    return TypeError(new + message[len(old):]) if message.startswith(old + "()") else error


@int_parameters("slice_copy", dim=(2, "int"), start=(3, "SymInt?"), end=(4, "SymInt?"),
                step=(5, "SymInt"))  # (slice_copy's positions: it has no method)
def _slice_view(x: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """torch's ``slice`` (x[..., start:end:step] along dim), a view whose node keeps torch's
    ``_saved_dim``, ``_saved_start``, ``_saved_end``, ``_saved_step``."""
    if x.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, x.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _slice(x, dim=dim, start=start, end=end, step=step)


def _native_split(x, split_size_or_sections, dim: int = 0):
    """split as ATen's ``split_copy``/``unsafe_split`` take it: their parser reads a NumPy
    integer as the SymInt size (torch.split, a Python function, refuses one)."""
    if isinstance(split_size_or_sections, np.integer):
        split_size_or_sections = int(split_size_or_sections)
    return split(x, split_size_or_sections, dim)


_view_copy = _derived_function(view, "view_copy", keyword="size", any_layout=True)


def view_copy(input: Tensor, *size, **kwargs) -> Tensor:  # noqa: A002 - torch's name
    """A copy of ``input.view(size)`` in C order, of an input laid out for that view or not
    (torch reshapes it then); ``view_copy(input, dtype)``: of ``input.view(dtype)``, which
    records no gradient, as torch's."""
    dtype = kwargs.pop("dtype", size[0] if len(size) == 1 and
                       isinstance(size[0], backend.dtype) else None)
    if dtype is None and (len(size) > 1 or size and isinstance(size[0], int)):
        raise TypeError("view_copy() received an invalid combination of arguments - got "
                        f"(Tensor, {', '.join(type(n).__name__ for n in size)}), but expected "
                        "one of:\n * (Tensor input, torch.dtype dtype, *, Tensor out = None)\n"
                        " * (Tensor input, tuple of ints size, *, Tensor out = None)\n")
    if dtype is None:
        return _view_copy(input, *size, **kwargs)
    return input.detach().view(dtype).clone(memory_format=contiguous_format)
def _view_as_real_resolved(x: Tensor) -> Tensor:
    """view_as_real of x's values: torch's copy resolves a conjugate bit (the view refuses it)."""
    return view_as_real(x.resolve_conj())


_view_as_real_resolved.__name__ = "view_as_real"
(t_copy, transpose_copy, unsqueeze_copy, squeeze_copy,
 diagonal_copy, alias_copy, unbind_copy, view_as_real_copy) = (
    _derived_function(function, name) for function, name in (
     (t, "t_copy"), (transpose, "transpose_copy"),
     (unsqueeze, "unsqueeze_copy"), (squeeze, "squeeze_copy"),
     (diagonal, "diagonal_copy"), (_alias, "alias_copy"),
     (unbind, "unbind_copy"), (_view_as_real_resolved, "view_as_real_copy")))
split_with_sizes_copy = _derived_function(split, "split_with_sizes_copy",
                                         first=("split_sizes", "SymInt[]"))
split_copy = _derived_function(_native_split, "split_copy", first=("split_size", "SymInt"))
# torch records these three for real outputs only
select_copy, slice_copy, view_as_complex_copy = (
    _derived_function(function, name, complex_grad=False) for function, name in (
        (select, "select_copy"), (_slice_view, "slice_copy"),
        (view_as_complex, "view_as_complex_copy")))
# the unsafe splits are Tensor methods too
unsafe_split, unsafe_chunk, unsafe_split_with_sizes = (
    tensor_method()(_derived_function(function, name, node, copies=False, first=first))
    for function, name, node, first in (
        (_native_split, "unsafe_split", "UnsafeSplitBackward0", ("split_size", "SymInt")),
        (chunk, "unsafe_chunk", "UnsafeSplitBackward0", None),
        (split, "unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0",
         ("split_sizes", "SymInt[]"))))


def detach_copy(input: Tensor) -> Tensor:
    """A copy of x; as torch's, it requires grad when x does, but backward through it raises
    (torch has no derivative for detach_copy)."""
    return _detach_copy(input)


_detach_copy = Op(lambda xp, x: xp.array(x, order="C"), name="detach_copy",
                  node_name="NotImplemented")
_detach_copy.defvjp(not_implemented("detach_copy")[0])
_detach_copy.defjvp(not_implemented("detach_copy")[1])
