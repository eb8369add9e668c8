"""The op an in-place call runs: its out-of-place op, under the name of torch's in-place op."""
from __future__ import annotations

import copy

from gradkit.ops._op import ALL_OPS, Op

# torch's in-place op where it is not the out-of-place name and "_"
_TORCH_NAMES = {"zeros_like_op": "zero_", "copy_from": "copy_"}
_forms: dict = {}  # out-of-place op (or function) -> what an in-place call runs


def in_place_form(out_of_place):
    """``out_of_place`` as its in-place calls run it: for an op, a copy that differs only in
    its profiler name (``gradkit::add_``, as torch's ``aten::add_``), made on first use (the op
    is complete by then); a function, its ``in_place`` form where it has one (its ops name its
    events), else itself."""
    form = _forms.get(out_of_place)
    if form is None:
        form = getattr(out_of_place, "in_place", out_of_place)
        if isinstance(out_of_place, Op):
            form = copy.copy(out_of_place)
            form.profiler_name = "gradkit::" + _TORCH_NAMES.get(out_of_place.name,
                                                                out_of_place.name + "_")
            ALL_OPS.append(form)
        _forms[out_of_place] = form
    return form
