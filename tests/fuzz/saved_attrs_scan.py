"""grad_fn introspection of torch's OpInfo samples, in gradkit and torch 2.13.

    python tests/fuzz/saved_attrs_scan.py [--dtypes float64,complex128] [--only mean,select]
                                          [--variants op,method,inplace] [--show 2]

For each sample's first output on a graph: the grad_fn's class name, its ``_saved_*`` and
``_raw_saved_*`` names (``dir``), each saved value before backward (a tensor by shape and
dtype, any other value as it is) and after ``backward()`` frees the graph (other values stay,
a tensor raises torch's RuntimeError), the names of ``next_functions``, and the grad_fn names
of ``grad(create_graph=True)``'s outputs. Prints the differences per op and their counts per
class (``name``, ``names missing``, ``names extra``, ``value``, ``after backward``,
``next_functions``, ``second order``). Exits 1 when any differs.
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.opinfo_samples import (  # noqa: E402
    _flat, _variant, fresh_leaves, gradkit, gradkit_callable, to_gradkit, torch)
from fuzz.opinfo_scan import (  # noqa: E402
    _selected, draw_samples, parse_scan_args, report, scan_parser, timed_out, verdict)

classes: collections.Counter = collections.Counter()  # class of difference -> samples
by_node: dict = collections.defaultdict(set)  # (class, node name) -> the names that differ
_PREFIXES = ("_saved_", "_raw_saved_")


def _form(value):
    """A saved value in a form both libraries share: a tensor as its shape and dtype."""
    if isinstance(value, (torch.Tensor, gradkit.Tensor)):
        return ("tensor", tuple(value.shape), str(value.dtype).split(".")[-1])
    if isinstance(value, (list, tuple)):
        return tuple(_form(v) for v in value)
    if isinstance(value, (torch.dtype, gradkit.dtype)):
        return str(value).split(".")[-1]
    if isinstance(value, float) and value != value:
        return "nan"
    if type(value).__name__ == "SavedTensor":  # a _raw_saved_* object
        return "SavedTensor"
    return (type(value).__name__, value)


def _read(node, name: str):
    """``(form, error text)`` of one attribute."""
    try:
        return _form(getattr(node, name)), None
    except Exception as e:  # noqa: BLE001 - compared with the other library's
        return None, f"{type(e).__name__}: {str(e)[:60]}"


def _names(node) -> set:
    return {n for n in dir(node) if n.startswith(_PREFIXES)}


def _edges(node) -> tuple:
    return tuple(None if f is None else type(f).__name__ for f, _ in node.next_functions)


def _graph_output(outputs: list):
    return next((t for t in outputs if getattr(t, "grad_fn", None) is not None), None)


def _run(lib, f, args: tuple, inplace: bool = False):
    """The first output on a graph; an in-place variant writes a clone of its leaf."""
    x = args[0].clone() if inplace and args[0].requires_grad else args[0]
    return _graph_output(_flat(f(x, *args[1], **args[2])))


def _found(kind: str, text: str) -> str:
    classes[kind] += 1
    return f"{kind}: {text}"


def _unsigned(form) -> bool:
    """torch's binding shows a negative dim as its unsigned 64-bit pattern (Known: gradkit
    gives the negative int, or the dim its op normalized; docs/autograd_api.md)."""
    if isinstance(form, tuple) and len(form) == 2 and form[0] == "int":
        return form[1] >= 2 ** 63
    return isinstance(form, tuple) and any(_unsigned(f) for f in form)


def _values_differ(tnode, gnode, names: list, when: str) -> str | None:
    for name in names:
        (tv, te), (gv, ge) = _read(tnode, name), _read(gnode, name)
        if _unsigned(tv):
            classes["known: unsigned dim"] += 1
            continue
        if (te is None) != (ge is None) or tv != gv or (te and te != ge):
            return _found(when, f"{name} torch {te or tv} gradkit {ge or gv}"[:220])
    return None


def _second_order(opinfo, variant: str, sample) -> str | None:
    """grad_fn names of ``grad(out, leaves, create_graph=True)`` in both libraries."""
    names = []
    for lib, f, convert in ((torch, _variant(opinfo, variant), None),
                            (gradkit, gradkit_callable(opinfo, variant), to_gradkit)):
        args = [fresh_leaves(v) for v in (sample.input, sample.args, sample.kwargs)]
        leaves: list = []
        if convert is not None:
            args = [convert(v, leaves) for v in args]
            leaves = [g for _, g in leaves]
        else:
            leaves = [t for t in _flat(list(args[:1]) + list(args[1]) + list(args[2].values()))
                      if isinstance(t, torch.Tensor) and t.requires_grad]
        try:
            out = _run(lib, f, tuple(args), variant == "inplace")
            grads = lib.autograd.grad(out, leaves, lib.ones_like(out), create_graph=True,
                                      allow_unused=True)
        except Exception:  # noqa: BLE001 - the first-order scans compare that
            return None
        names.append([None if g is None or g.grad_fn is None else type(g.grad_fn).__name__
                      for g in grads])
    if names[0] != names[1]:
        return _found("second order", f"torch {names[0]} gradkit {names[1]}")
    return None


def compare_saved(opinfo, variant: str, sample, grads: bool) -> str | None:
    """How the grad_fn of one sample's output shows itself in gradkit and torch."""
    gradkit_f = gradkit_callable(opinfo, variant)
    if not grads or gradkit_f is None or not isinstance(sample.input, torch.Tensor):
        return None
    args = tuple(fresh_leaves(v) for v in (sample.input, sample.args, sample.kwargs))
    inplace = variant == "inplace"
    try:
        tout = _run(torch, _variant(opinfo, variant), args, inplace)
        gout = _run(gradkit, gradkit_f, tuple(to_gradkit(v, []) for v in args), inplace)
    except Exception:  # noqa: BLE001 - the value scans compare errors
        return None
    if tout is None or gout is None:
        return None if tout is gout else _found("on a graph", f"torch {tout is not None}")
    tnode, gnode = tout.grad_fn, gout.grad_fn
    where = type(tnode).__name__
    if where != type(gnode).__name__:
        return _found("name", f"torch {where} gradkit {type(gnode).__name__}")
    found = []  # one difference per class, every class this sample shows
    tnames, gnames = _names(tnode), _names(gnode)
    for kind, names in (("names missing", tnames - gnames), ("names extra", gnames - tnames)):
        raw = sorted(n for n in names if n.startswith("_raw"))
        if raw:
            found.append(_found("raw " + kind, f"{where} {raw}"[:160]))
        if set(names) - set(raw):
            found.append(_found(kind, f"{where} {sorted(set(names) - set(raw))}"[:200]))
        by_node[kind, where] |= names
    common = sorted(n for n in tnames & gnames if n.startswith("_saved_"))
    found.append(_values_differ(tnode, gnode, common, "value"))
    if _edges(tnode) != _edges(gnode):
        found.append(_found("next_functions",
                            f"{where} torch {_edges(tnode)} gradkit {_edges(gnode)}"))
    try:
        torch.autograd.backward(tout, torch.ones_like(tout))
        gradkit.autograd.backward(gout, gradkit.ones_like(gout))
    except Exception:  # noqa: BLE001
        return "; ".join(f for f in found if f) or None
    found += [_values_differ(tnode, gnode, common, "after backward"),
              _second_order(opinfo, variant, sample)]
    return "; ".join(f for f in found if f) or None


def main() -> int:
    parser = scan_parser(__doc__, "float64,complex128", "OpInfo names", "op")
    parser.add_argument("--variants", default="op,method,inplace")
    parser.add_argument("--by-node", action="store_true",
                        help="print the names missing or extra per node class")
    args, only = parse_scan_args(parser)
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    total = bad = 0
    for opinfo in _selected(only):
        for dtype in dtypes:
            if dtype not in opinfo.supported_dtypes("cpu") or not opinfo.supports_autograd:
                continue
            for variant in args.variants.split(","):
                samples = draw_samples(opinfo, dtype)
                total += len(samples)
                bad += report(
                    f"{opinfo.name}.{opinfo.variant_test_name} [{variant} {str(dtype)[6:]}",
                    samples, lambda s, o=opinfo, v=variant: compare_saved(o, v, s, True),
                    args.show, lambda s: f"sample: {s.summary()}")
    if args.by_node:
        for (kind, where), names in sorted(by_node.items()):
            print(f"{kind} {where}: {sorted(names)}")
    print("per class:", dict(classes.most_common()))
    return verdict(total, bad, "samples", f", {len(timed_out)} over the time limit")


if __name__ == "__main__":
    sys.exit(main())
