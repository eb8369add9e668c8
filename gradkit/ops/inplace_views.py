"""In-place view ops: ``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_`` (``swapaxes_``,
``swapdims_``) change a tensor's shape and strides, not its values.

As torch records them, the tensor becomes its own view: it takes the view op's node under the
in-place overload's name (``TBackward1``, ``UnsqueezeBackward1``, ``SqueezeBackward3/4/5``,
``TransposeBackward1``), its version is bumped, a view stays a view of its base (one step
longer), and a leaf (or a view of one) that requires grad is refused while recording.
"""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.autograd.grad_mode import records_graph
from gradkit.autograd.graph import node_type
from gradkit.autograd.inference import check_inplace
from gradkit.int_arguments import int_argument, invalid_combination, reads_as_int
from gradkit.signature_errors import bind
from gradkit.ops.in_place_names import in_place_form
from gradkit.ops.inplace import refuse_recorded_write, set_history
from gradkit.ops.methods import register
from gradkit.ops.shape import squeeze, t, transpose, unsqueeze, view
from gradkit.ops.stale_views import make_stale
from gradkit.ops.views import DEFAULT, ViewInfo, live_views

# the out-of-place node's name -> the in-place overload's
_IN_PLACE_NODE = {"TBackward0": "TBackward1", "UnsqueezeBackward0": "UnsqueezeBackward1",
                  "TransposeBackward0": "TransposeBackward1",
                  "SqueezeBackward0": "SqueezeBackward3", "SqueezeBackward1": "SqueezeBackward4",
                  "SqueezeBackward2": "SqueezeBackward5",
                  "AsStridedBackward0": "AsStridedBackward1"}


def restride_in_place(tensor: Tensor, view_op, undo, check=None, **params) -> Tensor:
    """Make ``tensor`` the view ``view_op(tensor, **params)`` of its own memory, in place;
    ``undo``: ``(op, params)``, the view op that gives back the old shape and strides (used,
    so needed, only when ``tensor`` is not a view itself); ``check()``: the op's own checks,
    which torch makes after its autograd refusals."""
    check_inplace(tensor)
    info = getattr(tensor, "_view", None)
    recording = records_graph() and tensor._data.dtype.kind in "fcV" and (
        tensor._requires_grad or (info is not None and info.base._requires_grad))
    if recording:
        refuse_recorded_write(tensor, info)
    if check is not None:
        check()
    out = in_place_form(view_op)(tensor, **params)  # named as torch's: t_, squeeze_
    tensor._data = out._data
    if info is None and len(tensor._vc) > 1:
        _reroot_views(tensor, *undo)
    if info is not None:  # still a view of the same base: its chain gains this step, and
        # it stays the kind of view it was (one made under no_grad even if this is not)
        tensor._view = out._view
        tensor._view.creation, tensor._view.made_recording = info.creation, info.made_recording
        tensor._view.named = info.named or info
    if recording:
        node = out.grad_fn
        node.__class__ = node_type(_IN_PLACE_NODE[node.name()])
        set_history(tensor, node, out._output_nr)
    if getattr(out, "_fw", None) is not None:  # forward AD: the tangent takes the new shape
        tensor._fw = out._fw
    tensor._vc[0] += 1
    stale_views_of(tensor)
    return tensor


def stale_views_of(tensor: Tensor) -> None:
    """After an in-place view op bumped ``tensor``'s version, the other views of its memory
    that refuse in-place writes (split outputs, no_grad views) are stale, as after a write:
    torch regenerates them when next read, and raises (breadth seed 113031: squeeze_)."""
    for other in live_views(tensor):
        info = getattr(other, "_view", None)  # (the base of a view is no view)
        if info is not None and info.creation != DEFAULT:
            make_stale(other, info)


def _reroot_views(base: Tensor, undo_op, undo_params: dict) -> None:
    """The views of ``base`` were made from its old shape: their chains now start with the
    step back to it, so a write replays them onto the same elements (torch regenerates them
    with as_strided)."""
    roots = {}
    for other in live_views(base):
        root = other._view
        while root.parent is not None:
            root = root.parent
        if root.base is base:
            roots[id(root)] = root
    for root in roots.values():
        root.parent = ViewInfo(base, None, undo_op, undo_params, None, root.creation,
                               root.made_recording)


def _squeeze_(self: Tensor, *dims, dim=None) -> Tensor:
    """Drop size-1 dims (or only ``dim``, or the size-1 dims among ``dim``) in place; the dims
    may come as separate ints (``x.squeeze_(0, 1)``), not as None."""
    if dims:
        dim = dims if len(dims) > 1 else dims[0]
        if not (reads_as_int(dim) or type(dim) in (tuple, list)):
            raise invalid_combination("squeeze_", dims, {})  # (None too: no signature takes it)
    return restride_in_place(self, squeeze, (view, {"shape": self._data.shape}), dim=dim)


def _unsqueeze_(self: Tensor, *args, **kwargs) -> Tensor:
    """Insert a size-1 dim at ``dim`` in place."""
    dim = bind("unsqueeze_", ("dim",), 1, args, kwargs, _int_reader("unsqueeze_"))["dim"]
    return restride_in_place(self, unsqueeze, (view, {"shape": self._data.shape}), dim=dim)


def _t_(self: Tensor, *args) -> Tensor:
    """Transpose a tensor of at most 2 dims in place."""
    if args:
        raise TypeError(f"TensorBase.t_() takes no arguments ({len(args)} given)")

    def at_most_2d():
        if self._data.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                               f"{self._data.ndim}D")
    return restride_in_place(self, t, (t, {}), check=at_most_2d)


def _transposer(name: str, first: str, second: str):
    """``transpose_`` as torch names it and its arguments (``swapaxes_``: ``axis0``)."""
    def transpose_(self: Tensor, *args, **kwargs) -> Tensor:
        """Swap two dims in place."""
        dim0, dim1 = bind(name, (first, second), 2, args, kwargs, _int_reader(name)).values()
        return restride_in_place(self, transpose, (transpose, {"dim0": dim0, "dim1": dim1}),
                                 dim0=dim0, dim1=dim1)
    return transpose_


def _int_reader(function: str):
    return lambda name, value, position: int_argument(value, function, name, position)


for _name, _method in (("squeeze_", _squeeze_), ("unsqueeze_", _unsqueeze_), ("t_", _t_),
                       ("transpose_", _transposer("transpose_", "dim0", "dim1")),
                       ("swapaxes_", _transposer("swapaxes_", "axis0", "axis1")),
                       ("swapdims_", _transposer("swapdims_", "dim0", "dim1"))):
    register(_method, _name)
