"""Differences from torch 2.13 noticed in earlier sessions and settled in the nineteenth
(docs/torch_expectations.md, "Noticed, nineteenth session"), each program run in both
libraries."""
import pytest
from test_breadth_fuzz_found import _outcome

import gradkit

torch = pytest.importorskip("torch")


def _complex_row(m):
    return m.tensor([1 + 1j, 2 + 2j, 3 + 3j, 4 - 1j])


@pytest.mark.parametrize("write", [
    lambda x: x[1:].copy_(x.conj()[:-1]), lambda x: x[:-1].copy_(x.conj()[1:]),
    lambda x: x.conj()[1:].copy_(x[:-1]), lambda x: x.conj()[1:].copy_(x.conj()[:-1]),
    lambda x: x[::2].copy_(x.conj()[1::2]), lambda x: x.conj().copy_(x),
    lambda x: x.copy_(x.conj()), lambda x: x[2:].copy_(x.conj()[:2]),
    lambda x: x.conj()[1:].add_(x[:-1]), lambda x: x[1:].add_(x.conj()[:-1]),
    lambda x: x[1:3].copy_(x[:-1].conj()[1:])])
def test_copy_from_a_partly_overlapping_conj_view_is_refused(write):
    """torch's copy_ has no conj fallback (no copy of the conjugated side first): it reads the
    view's memory, so a source or target that partly overlaps the other through a conj view
    is refused as any partial overlap; the same memory whole is no error. Other in-place ops
    (add_) copy the conj operand out first and go through, as gradkit's did."""
    def program(m):
        x = _complex_row(m)
        write(x)
        return x
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


_WITH_OUT = {
    "clamp": lambda m, out: m.clamp(m.tensor([1.0, 5.0, -3.0]), -1, 2, out=out),
    "clip": lambda m, out: m.clip(m.tensor([1.0, 5.0, -3.0]), -1, 2, out=out),
    "index_select": lambda m, out: m.index_select(m.tensor([1.0, 5.0, 7.0]), 0,
                                                  m.tensor([2, 0, 1]), out=out),
    "add": lambda m, out: m.add(m.tensor([1.0, 5.0, -3.0]), 1, out=out),
}


@pytest.mark.parametrize("name", sorted(_WITH_OUT))
def test_out_arguments_are_refused_where_torch_writes_into_them(name):
    """A deliberate difference (docs/torch_expectations.md): gradkit takes ``out=`` on no op,
    so clamp, clip and index_select refuse it as add does, with Python's TypeError naming
    it, where torch writes the result into ``out`` and returns it."""
    out = torch.empty(3)
    assert _WITH_OUT[name](torch, out) is out
    with pytest.raises(TypeError, match="'out'"):
        _WITH_OUT[name](gradkit, gradkit.empty(3))
