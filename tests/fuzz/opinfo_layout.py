"""torch's op table with non-contiguous inputs: each OpInfo sample in five layouts, the same in
torch and gradkit.

    python tests/fuzz/opinfo_layout.py [--dtypes float64,complex128] [--only add,sum]
                                       [--layouts transposed,step2,expanded,conj,offset]
                                       [--variants op,method,inplace] [--all-strides]

Every tensor of a sample is laid out anew (values kept, but ``expanded``'s): ``transposed``
(the last two dims swapped in a contiguous buffer, then transposed back), ``step2`` (every
other element of a buffer twice as large in each dim), ``expanded`` (the first dim longer than
1 expanded from its first slice; not for in-place variants), ``conj`` (a conj view of the
conjugated values, complex tensors) and ``offset`` (contiguous, 3 elements into its storage).
gradkit's inputs take the same strides, offset and conj bit (``same_layout``). Values and
gradients are compared as ``opinfo_scan.py`` does; the output strides and ``is_contiguous``
where torch's follow the layout (elementwise ops, keep-dim reductions, views of the input;
every output with ``--all-strides``); for in-place variants the whole storage under the
input too (the write reaching the base). Exits 1 when any sample differs.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.opinfo_samples import compare_sample, difference, torch  # noqa: E402
from fuzz.opinfo_scan import (  # noqa: E402
    parse_scan_args, scan_parser, scan_samples, verdict)
from torch.testing._internal.opinfo.core import (  # noqa: E402
    BinaryUfuncInfo, ReductionOpInfo, UnaryUfuncInfo)

import gradkit  # noqa: E402


def transposed(t):
    return t.transpose(-1, -2).contiguous().transpose(-1, -2) if t.ndim >= 2 else None


def step2(t):
    if t.ndim == 0:
        return None
    view = torch.zeros([2 * n for n in t.shape], dtype=t.dtype)[(slice(None, None, 2),) * t.ndim]
    return view.copy_(t)


def expanded(t):
    dims = [d for d, n in enumerate(t.shape) if n > 1]
    return t.narrow(dims[0], 0, 1).clone().expand(t.shape) if dims else None


def conj(t):
    return t.resolve_conj().conj_physical().conj() if t.is_complex() else None


def offset(t):
    return torch.zeros(t.numel() + 3, dtype=t.dtype)[3:].view(t.shape).copy_(t)


LAYOUTS = {f.__name__: f for f in (transposed, step2, expanded, conj, offset)}
counts: Counter = Counter()  # (layout, "samples" / "values" / "strides") -> how many


def laid_out(value, layout, requires_grad: bool, changed: list):
    """A tensor ``value`` in ``layout`` (``changed`` records that it was); others as they are."""
    new = layout(value.detach()) if isinstance(value, torch.Tensor) else None
    if new is None:
        return value
    changed.append(True)
    return new.detach().requires_grad_(requires_grad and value.requires_grad)


def layout_items(names: list):
    """``scan_samples``'s ``items``: each sample in each layout that changes one of its tensors
    (read-only ones only for ``expanded``), named by it (``.name``)."""
    def items(opinfo, variant: str, samples: list) -> list:
        out = []
        for name in names:
            if name == "expanded" and variant == "inplace":
                continue
            for sample in samples:
                changed: list = []
                new = sample.transform(
                    lambda v, f=LAYOUTS[name], c=changed: laid_out(v, f, variant != "inplace", c))
                if changed:
                    new.name = name
                    out.append(new)
        return out
    return items


def _storage(t):
    """All of t's storage as a 1-d tensor (the stored values of a conj view)."""
    t = t.detach()
    t = t.conj() if t.is_conj() else t
    return t.as_strided((t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)


def _follows_layout(opinfo, x, out) -> bool:
    """Whether torch's strides of ``out`` are set by the input's layout."""
    if isinstance(opinfo, (UnaryUfuncInfo, BinaryUfuncInfo)):
        return True
    if isinstance(x, torch.Tensor) and out._is_view() and \
            out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        return True
    return isinstance(opinfo, ReductionOpInfo) and isinstance(x, torch.Tensor) and \
        out.ndim == x.ndim


def layout_check(opinfo, variant: str, all_strides: bool):
    """``compare_sample``'s ``check``: output strides and contiguity, and for an in-place
    variant the input's whole storage."""
    def check(x, gx, tout, gout) -> str | None:
        if variant == "inplace" and isinstance(x, torch.Tensor):
            found = difference(_storage(x), _storage(gx))
            if found:
                return f"storage under the input: {found}"
        for i, (t, g) in enumerate(zip(tout, gout)):
            if isinstance(t, torch.Tensor) and isinstance(g, gradkit.Tensor) and \
                    (all_strides or _follows_layout(opinfo, x, t)) and \
                    (t.stride(), t.is_contiguous()) != (g.stride(), g.is_contiguous()):
                return f"strides out[{i}] {t.stride()} vs {g.stride()}" + (
                    f" is_contiguous {t.is_contiguous()} vs {g.is_contiguous()}"
                    if t.is_contiguous() != g.is_contiguous() else "")
        return None
    return check


def _contiguous(value):
    if not isinstance(value, torch.Tensor):
        return value
    return value.detach().contiguous().requires_grad_(value.requires_grad)


def compare_laid_out(all_strides: bool):
    """``scan_samples``'s ``compare`` of a laid-out sample; a difference in values that the
    sample's contiguous copy shows too is not the layout's (tagged and counted apart)."""
    def compare(opinfo, variant: str, sample, grads: bool) -> str | None:
        counts[sample.name, "samples"] += 1
        grads = grads and variant != "inplace"
        found = compare_sample(opinfo, variant, sample, grads, keep_layout=True,
                               check=layout_check(opinfo, variant, all_strides))
        if not found:
            return None
        kind = "strides" if found.startswith("strides") else "values"
        if kind == "values" and compare_sample(opinfo, variant, sample.transform(_contiguous),
                                               grads):
            kind, found = "contiguous too", f"{found} (contiguous too)"
        counts[sample.name, kind] += 1
        return f"{sample.name}: {found}"
    return compare


def main() -> int:
    parser = scan_parser(__doc__, "float64,complex128", "OpInfo names", "op")
    parser.add_argument("--variants", default="op,method,inplace")
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--all-strides", action="store_true",
                        help="compare every output's strides, not only layout-set ones")
    args, only = parse_scan_args(parser)
    names = args.layouts.split(",")
    total, bad = scan_samples(only, [getattr(torch, d) for d in args.dtypes.split(",")],
                              args.variants.split(","), False, args.show,
                              items=layout_items(names), compare=compare_laid_out(args.all_strides))
    for name in names:
        print(f"{name}: {counts[name, 'samples']} samples, {counts[name, 'values']} differ in "
              f"values or gradients, {counts[name, 'strides']} in strides only, "
              f"{counts[name, 'contiguous too']} in values also when contiguous")
    return verdict(total, bad, "laid-out samples")


if __name__ == "__main__":
    sys.exit(main())
