"""Views: what a view remembers about how it was made, in O(1) per view.

A view op's output (``@op(view=True)``) shares its base's array and version
counter and keeps a :class:`ViewInfo`: the base it ultimately views, the last
view op applied, and a link to the ViewInfo of the view it was made from. A
chain of n views therefore costs O(n) in total, not O(n^2); the chain is
rebuilt, base first, only when an in-place write must replay it
(ops/inplace.py). The ViewInfo also says how the view was created (torch's
CreationMeta): outputs of multi-output views (split, unbind) and views made
under no_grad or inference_mode refuse in-place writes that would be recorded.
"""
from __future__ import annotations

from weakref import ref as _weakref

import numpy as np

from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.inference import InferenceVersion
from gradkit.ops.base_layout import StorageLayout, layout_of  # noqa: F401 - re-exported

DEFAULT, MULTI_OUTPUT, NO_GRAD, INFERENCE = "default", "multi_output", "no_grad", "inference"
IN_CUSTOM_FUNCTION = "in_custom_function"
# a pure view custom Function's output viewing a tensor made inside its forward
OF_TEMPORARY = "of_temporary"
LEAF_VIEW_MESSAGE = ("a view of a leaf Variable that requires grad is being used in an "
                     "in-place operation.")

_TAILS = {
    MULTI_OUTPUT: " This view is the output of a function that returns multiple views. Such "
                  "functions do not allow the output views to be modified inplace. You should "
                  "replace the inplace operation by an out-of-place one.",
    NO_GRAD: " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
             "clarify your code by moving both the view and the inplace either both inside the "
             "no_grad block (if you don't want the inplace to be tracked) or both outside (if "
             "you want the inplace to be tracked).",
    IN_CUSTOM_FUNCTION: " This view was created inside a custom Function (or because an input "
                        "was returned as-is) and the autograd logic to handle view+inplace would "
                        "override the custom backward associated with the custom Function, "
                        "leading to incorrect gradients. This behavior is forbidden. You can fix "
                        "this by cloning the output of the custom Function.",
}
_TAILS[INFERENCE] = _TAILS[NO_GRAD].replace("no_grad block", "inference_mode block")


class ViewInfo:
    """How one view was made: ``op(parent view or base, **params)[index]``."""

    __slots__ = ("base", "parent", "op", "params", "index", "creation", "made_recording",
                 "computed", "forward_base", "function_output", "of_tracked", "named",
                 "transform_leaf", "detached")

    def __init__(self, base, parent, op, params, index, creation, made_recording,
                 of_tracked: bool = False) -> None:
        self.base = base              # the tensor (not a view) whose memory this is
        self.parent = parent          # ViewInfo of the view this was made from, or None
        self.op, self.params, self.index = op, params, index
        self.creation = creation      # DEFAULT, MULTI_OUTPUT, NO_GRAD or INFERENCE
        self.made_recording = made_recording  # grad mode was on: the view got a grad_fn
        # made from a tensor that required grad then (itself, or its root base: a no_grad view
        # of it), so torch gave it a grad_fn; not when that base gained requires_grad later
        self.of_tracked = of_tracked
        # a step of the chain computes its values (conj): they are kept in step by writes
        self.computed = op.view_inverse is not None or (parent is not None and parent.computed)
        self.forward_base = None  # make_dual's output: a weak reference to it (forward_ad.py)
        self.function_output = None  # (Function name, output index): a custom Function's view
        # the ViewInfo torch's messages name this view by: None for its own, or, after in-place
        # view ops (transpose_...), the one it had before them (torch keeps its grad_fn's
        # name). Not ``self``: a self-reference would leave every dropped view to the cyclic GC
        self.named = None
        # a reverse-mode transform's input (gradkit/func/_levels.py): a leaf at its level,
        # though a view of the caller's tensor here, so torch refuses writes into it
        self.transform_leaf = False
        # detach() of a conjugated view (ops/complex.py): a view only to keep its values in
        # step; torch's detach output is no view (_is_view(), _base, detach_() allowed)
        self.detached = False

    def steps(self) -> tuple:
        """The chain ``((op, params, index), ...)`` that rebuilds this view from its base."""
        steps = []
        info = self
        while info is not None:
            steps.append((info.op, info.params, info.index))
            info = info.parent
        steps.reverse()
        return tuple(steps)

    def of_pure_view_function(self) -> bool:
        """A pure view custom Function's output (``ctx._is_pure_view``): a write replays it
        from its base, so its Function's backward is left out, as torch rebuilds its graph."""
        return self.function_output is not None and self.creation == DEFAULT

    def of_transform_leaf(self) -> bool | None:
        """True for a reverse-mode transform's input itself, False for a view of one, else
        None (torch's leaf and view-of-a-leaf errors for a recorded write)."""
        info = self
        while info is not None:
            if info.transform_leaf:
                return info is self
            info = info.parent
        return None

    def refusal(self, indirect: bool) -> str | None:
        """torch's error for a recorded in-place write that this view does not allow (None:
        allowed); ``indirect``: the write went through its base or another view."""
        kind = self.creation
        if kind == DEFAULT:
            return None
        if kind == OF_TEMPORARY:  # torch's words: the temporary is a leaf to its autograd
            return LEAF_VIEW_MESSAGE
        has_grad_fn = self.made_recording and self.of_tracked  # as made: torch reads the field
        what = ("its base or another view of its base has been" if indirect else "is being")
        named = self.named or self
        op = named.op  # torch names the view's overload: Squeeze, Squeeze1 (a dim), Squeeze2
        node_name = op.node_name if op.node_name_rule is None else \
            op.node_name_rule(named.params, ())
        name = node_name.removesuffix("Backward0").replace("Backward", "")
        output = f"Output {named.index or 0} of {name}"
        if named.function_output is not None:  # torch names the Function and its output
            output = "Output {1} of {0}".format(*named.function_output)
        if kind in (NO_GRAD, INFERENCE) or not has_grad_fn:  # torch's words, by its rules
            where = "inference mode" if kind == INFERENCE else "no_grad mode"
            prefix = (f"{output} is a view of a view which was created in" if has_grad_fn
                      else "A view was created in")
            head = (f"{prefix} {where} and {what} modified inplace " +
                    ("in normal mode." if kind == INFERENCE else "with grad mode enabled."))
        else:
            head = f"{output} is a view and {what} modified inplace."
        return head + _TAILS[kind]


_new, _init_info = object.__new__, ViewInfo.__init__


def mark_function_output(view, name: str, index: int, n_outputs: int,
                         pure_view_of=None) -> None:
    """A view a custom Function returned (not marked dirty): as in torch, in-place on it is
    refused, naming the Function (its custom backward would be overridden). A pure view
    Function's (``ctx._is_pure_view``; ``pure_view_of``: its one input) is a plain view of
    that input, written in place through its base as any view; of a tensor made in its
    forward, refused as a leaf's view."""
    info = view._view
    if pure_view_of is None:
        kind = MULTI_OUTPUT if n_outputs > 1 else IN_CUSTOM_FUNCTION
    else:
        source = getattr(pure_view_of, "_view", None)
        of_input = info.base is (pure_view_of if source is None else source.base)
        kind = DEFAULT if of_input else OF_TEMPORARY
    # torch's messages say whether it has a grad_fn (the Function recorded a node)
    recorded = view.grad_fn is not None
    fresh = ViewInfo(info.base, info.parent, info.op, info.params, info.index, kind, recorded,
                     of_tracked=recorded)
    fresh.function_output, fresh.forward_base = (name, index), info.forward_base
    view._view = fresh


def mark_view(op, base, result, params) -> None:
    """Views share their base's version counter and remember how they were made."""
    if not isinstance(result, tuple):
        mark_one_view(op, base, result, params, None)
        return
    # even a tuple of one: replay must then pick element 0
    for i, out in enumerate(result):
        mark_one_view(op, base, out, params, i)


def mark_one_view(op, base, view, params, index) -> None:
    """``mark_view`` for one output ``view`` of ``op(base, **params)``, at ``index`` of a
    multi-output view op's outputs (None: its only output)."""
    refs = base._vc
    if type(refs) is InferenceVersion and not (grad_state.inference and _computed(op, base)):
        view._vc = refs  # as torch: a view of an inference tensor is none (no _base); in the
        return  # mode gradkit keeps a computed (conj) one's chain, which writes keep in step
    # a view's version counter holds a weak reference to it, so a counter without any is no
    # view's: this spares the costly getattr miss on the commonest base, a tensor not a view
    parent = getattr(base, "_view", None) if len(refs) > 1 else None
    recording = grad_state.grad_enabled
    if not recording:
        creation = INFERENCE if grad_state.inference else NO_GRAD
    elif index is not None:
        creation = MULTI_OUTPUT
    else:
        creation = DEFAULT if parent is None else parent.creation
    view._vc = refs
    view._view = info = _new(ViewInfo)  # ViewInfo(...) without type.__call__'s C frame
    _init_info(info, base if parent is None else parent.base, parent, op, params, index,
               creation, recording, base._requires_grad or (
                   parent is not None and parent.base._requires_grad))
    # a weak reference after the version: an in-place write to the base or to another view
    # must give this one a fresh history (ops/inplace.py)
    refs.append(_weakref(view))
    if info.computed:
        _register_computed(view, id(memory_owner(info.base._data)))
    n = len(refs) - 1
    if n >= 32 and n & (n - 1) == 0:  # at each power of two: drop dead views (amortized O(1))
        refs[1:] = [r for r in refs[1:] if r() is not None]


def _computed(op, base) -> bool:
    """``op(base)`` computes its values (a conj step in its chain)."""
    parent = getattr(base, "_view", None)
    return op.view_inverse is not None or (parent is not None and parent.computed)


def live_views(tensor):
    """The live views sharing ``tensor``'s memory (version counter), ``tensor`` excluded."""
    for ref in tensor._vc[1:]:
        other = ref()
        # (a transform's input detach_()ed stops being a view: gradkit/_tensor.py)
        if other is not None and other is not tensor and getattr(other, "_view", None) is not None:
            yield other


def write_through(chain, array, values) -> None:
    """Write ``values`` into the region of the raw ``array`` that the view ``chain`` describes;
    a step that computes its values (conj) is written back through its inverse."""
    for k, (view_op, params, _) in enumerate(chain):
        if view_op.view_inverse is not None:
            region = replay_view(chain[:k], array)
            computed = view_op(region, **params)
            if isinstance(computed, np.generic):  # a 0-d region's conj: an array to write into
                computed = np.asarray(computed)
            expanded = not getattr(region.flags, "writeable", True)  # zero strides: overlapping
            before = computed.copy() if expanded else None
            write_through(chain[k + 1:], computed, values)
            inverse = view_op.view_inverse(computed, **params)
            if not expanded:
                region[...] = inverse
                return
            # only the elements written: an unchanged copy of one memory location must not
            # overwrite a changed one (torch writes each element of the view to its location)
            alias = writable_alias(region)
            changed = computed != before
            if alias is not None:
                alias[changed] = inverse[changed]
            return
    region = replay_view(chain, array)
    if not getattr(region.flags, "writeable", True):  # a zero-stride (expanded) region
        alias = writable_alias(region)
        region = region if alias is None else alias
    region[...] = values


class _ArrayInterface:
    def __init__(self, interface: dict, base) -> None:
        self.__array_interface__, self.base = interface, base


def writable_alias(target):
    """A writable array over ``target``'s memory (NumPy marks broadcast views read-only), or
    None when that memory itself is read-only."""
    root = target
    while not root.flags.writeable:
        base = root.base
        if base is not None and not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)  # as_strided's DummyArray holds the array
        if not isinstance(base, np.ndarray):
            break
        root = base
    if not root.flags.writeable:
        return None
    interface = dict(target.__array_interface__)
    interface["data"] = (interface["data"][0], False)
    return np.asarray(_ArrayInterface(interface, root))


# id of the array owning a memory -> weak references to the computed (conj) views of it: a
# write through a tensor with a version counter of its own (``.data``) must refresh them too
# (conj_views seed 300717). Empty unless conj views live: writes then pay one test.
COMPUTED_VIEWS: dict[int, list] = {}


def _register_computed(view, key: int) -> None:
    """A dead view's reference leaves the registry (and an emptied memory its key), so views
    made and dropped each step leave nothing behind."""
    refs = COMPUTED_VIEWS.setdefault(key, [])

    def forget(ref, refs=refs):
        refs.remove(ref)
        if not refs and COMPUTED_VIEWS.get(key) is refs:
            del COMPUTED_VIEWS[key]
    refs.append(_weakref(view, forget))


def memory_owner(array):
    """The array that owns ``array``'s memory (the end of its chain of NumPy/CuPy bases)."""
    while hasattr(getattr(array, "base", None), "shape"):
        array = array.base
    return array


def refresh_computed_elsewhere(tensor) -> None:
    """After a write into ``tensor``, refresh the computed views of its memory that its own
    version counter does not list (``_update_views`` refreshes those). A computed view was
    written through into its base's memory."""
    info = getattr(tensor, "_view", None)
    key = id(memory_owner((info.base if info is not None and info.computed else tensor)._data))
    for ref in tuple(COMPUTED_VIEWS.get(key, ())):  # (a dead view leaves the list meanwhile)
        view = ref()
        if view is not None and view is not tensor and view._vc is not tensor._vc:
            refresh_computed(view)


def refresh_computed(view) -> None:
    """Recompute the values of a view with a computed step (conj) from its base's memory; an
    expanded view's (read-only to NumPy) through a writable alias of the same memory."""
    target = view._data
    if not getattr(target.flags, "writeable", True):  # CuPy arrays have no such flag
        target = writable_alias(target)
    if target is not None:
        info = view._view
        target[...] = replay_view(info.steps(), info.base._data)


def replay_view(chain, tensor):
    """Apply a view chain (``ViewInfo.steps()``) to ``tensor`` (a Tensor or a raw array)."""
    for view_op, params, index in chain:
        tensor = view_op(tensor, **params)
        if index is not None:
            tensor = tensor[index]
    return tensor


def copy_in_layout(xp, array, layout: tuple | None):
    """A copy of ``array`` (a 0-d array for a NumPy scalar) whose memory follows ``layout``
    (a :class:`StorageLayout`: at the base's positions of a storage like the base's)."""
    if isinstance(layout, StorageLayout):
        return layout.buffer(xp, array)
    if layout is None:
        return xp.array(array, order="C")
    out = xp.empty([array.shape[axis] for axis in layout], dtype=array.dtype)
    out = out.transpose(tuple(layout.index(axis) for axis in range(len(layout))))
    out[...] = array
    return out
