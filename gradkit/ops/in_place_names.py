"""The op an in-place call runs: its out-of-place op, under the name of torch's in-place op."""
from __future__ import annotations

from gradkit.ops._op import ALL_OPS, Op

# torch's in-place op where it is not the out-of-place name and "_"
_TORCH_NAMES = {"zeros_like_op": "zero_", "copy_from": "copy_"}
_forms: dict = {}  # out-of-place op (or function) -> what an in-place call runs


def in_place_name(op: Op) -> str:
    """The profiler name of ``op``'s in-place form: torch's in-place op (``gradkit::add_``)."""
    return "gradkit::" + _TORCH_NAMES.get(op.name, op.name + "_")


def in_place_form(out_of_place):
    """``out_of_place`` as its in-place calls run it: for an op, the same op (it shares its
    attributes, so a change to one is a change to both) but for its profiler name
    (``gradkit::add_``, as torch's ``aten::add_``); a function, its ``in_place`` form where it
    has one (its ops name its events), else itself."""
    form = _forms.get(out_of_place)
    if form is None:
        form = getattr(out_of_place, "in_place", out_of_place)
        if isinstance(out_of_place, Op):
            name = in_place_name(out_of_place)
            # a property outranks the shared instance dict, which holds the op's own name
            renamed = type(type(out_of_place).__name__, (type(out_of_place),),
                           {"profiler_name": property(lambda self: name)})
            form = object.__new__(renamed)
            form.__dict__ = out_of_place.__dict__
            ALL_OPS.append(form)
        _forms[out_of_place] = form
    return form
