"""Conjugated views stay in step with their base, as torch's conj bit on shared memory:
``detach()``/``.data`` of one (``z.conj().detach()``, ``z.conj().imag.detach()``) and views of
one (``expand``, ``diagonal``...) see later writes into the base, and writes into them reach
it; ``is_conj()``/``is_neg()`` hold. gradkit's detach and ``.data`` used to copy the computed
values into a plain tensor, and an expanded conj view was not refreshed (silent stale
values)."""
import numpy as np
import pytest
from fuzz.known import diff_program
from fuzz.programs import RandomDrawer, generate

import gradkit

torch = pytest.importorskip("torch")


def _base_write_seen(lib):
    c = lib.tensor([1 + 2j, 3 - 1j])
    d = c.conj().detach()  # the view itself is dropped: only the detached tensor remains
    c.mul_(2)
    return d.tolist(), d.is_conj()


def _detached_write_reaches_base(lib):
    c = lib.tensor([1 + 2j, 3 - 1j])
    z = c.conj()
    d = z.detach()
    d.add_(1)
    return c.tolist(), z.tolist(), d.tolist()


def _leaf_written_through_a_detached_conj(lib):
    x = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    g = x.conj().detach()
    g.add_(1j)
    return x.tolist(), g.tolist(), g.requires_grad, x.is_leaf, x.grad_fn is None


def _negative_view(lib):
    c = lib.tensor([1 + 2j, 3 - 1j])
    n = c.conj().imag.detach()
    c.mul_(3)
    return n.is_neg(), n.tolist()


def _detached_then_used_in_autograd(lib):
    x = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    w = lib.tensor([0.5 - 1j, 2 + 0.5j], requires_grad=True)
    d = x.conj().detach()
    d.mul_(w)  # records on the detached tensor, not on x
    d.abs().sum().backward()
    return x.grad, w.grad.tolist()


@pytest.mark.parametrize("program", [_base_write_seen, _detached_write_reaches_base,
                                     _leaf_written_through_a_detached_conj, _negative_view,
                                     _detached_then_used_in_autograd])
def test_detached_conjugated_views_share_memory_as_torch(program):
    assert program(gradkit) == program(torch)


def test_a_detached_conjugated_view_is_no_view_for_the_user_as_torch():
    """gradkit keeps it a view of the detached base inside (its conj step keeps the values in
    step), but shows what torch shows: no view, no _base, detach_() allowed. Known difference
    (docs/torch_expectations.md): an in-place op recorded on it ends in its ConjBackward0."""
    def program(lib):
        c = lib.tensor([1 + 2j, 3 - 1j])
        d = c.conj().detach()
        seen = [d._is_view(), d._base is None]
        d.detach_()
        c.mul_(2)
        return seen + [d.is_conj(), d.tolist()]
    assert program(gradkit) == program(torch)
    d = gradkit.tensor([1 + 2j]).conj().detach()
    w = gradkit.tensor([2.0 + 0j], requires_grad=True)
    assert d.mul_(w).grad_fn.name() == "ConjBackward0"


VIEWS_OF_A_CONJ_VIEW = {
    "data": lambda z: z.data,
    "detach": lambda z: z.detach(),
    "view_as": lambda z: z.view_as(z),
    "expand": lambda z: z.expand(2, 2),
    "expand_diagonal": lambda z: z.unsqueeze(0).expand(2, 2).diagonal(),
    "permute": lambda z: z.unsqueeze(0).permute(1, 0),
    "narrow": lambda z: z.narrow(0, 1, 1),
    "select": lambda z: z[1],
    "as_strided": lambda z: z.as_strided((2,), (1,)),
    "unflatten": lambda z: z.unflatten(0, (2, 1)),
    "split": lambda z: z.split(1)[1],
    "unbind": lambda z: z.unbind()[0],
    "mH": lambda z: z.unsqueeze(0).mH,
    "contiguous": lambda z: z.contiguous(),
    "clone": lambda z: z.clone(),
}


def _in_step(lib, view_of):
    """Values before and after a write into the base, the conj bit, and the base after a write
    into the view (or the error torch gives for it)."""
    c = lib.tensor([1 + 2j, 3 - 1j])
    r = view_of(c.conj())
    before = r.tolist()
    c.mul_(2)
    outcome = [before, r.tolist(), r.is_conj()]
    try:
        r.add_(1)
        outcome.append(c.tolist())
    except RuntimeError as e:
        outcome.append(str(e).split(".")[0])
    return outcome


@pytest.mark.parametrize("view_of", VIEWS_OF_A_CONJ_VIEW.values(), ids=VIEWS_OF_A_CONJ_VIEW)
def test_views_of_a_conjugated_view_stay_in_step_as_torch(view_of):
    assert _in_step(gradkit, view_of) == _in_step(torch, view_of)


def _write_into_a_conj_of_an_expanded_view(lib):
    """Conj of an expanded view, written through one element of its diagonal (fuzz seed
    6726): the memory location takes the written value, not an unchanged broadcast copy."""
    x = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    part = x.expand(2, 2).conj().diagonal().data.split(1, dim=-1)[0]
    part.pow_(2)
    return part.tolist(), x.tolist()


def test_a_write_into_a_conj_of_an_expanded_view_reaches_its_location_as_torch():
    assert _write_into_a_conj_of_an_expanded_view(gradkit) == \
        _write_into_a_conj_of_an_expanded_view(torch)


_EXPANDED_WRITES = {
    "zero_": "b.zero_()", "fill_": "b.fill_(2.0)", "index_put": "b[m.tensor([0])] = 3.0",
    "masked_fill_": "b.masked_fill_(m.tensor([True, False, False]), 1.0)",
    "neg_fill_": "b = m.tensor([1 + 2j]).conj().imag.expand(3); b.fill_(1.0)",
    "recorded_zero_": "b = (m.tensor([1 + 2j], requires_grad=True) * 0.5).conj().expand(3); "
                      "b.zero_()",
}


@pytest.mark.parametrize("write", _EXPANDED_WRITES.values(), ids=_EXPANDED_WRITES)
def test_a_write_into_an_expanded_conj_view_is_refused_at_the_write_as_torch(write):
    """torch's conj (neg) fallback resolves the written tensor in place first
    (conj_physical_): refused for an expanded one even by fill_, zero_ and index_put_, which a
    plain expanded tensor allows; gradkit refused only at backward (conj_views seed 9064)."""
    for m in (torch, gradkit):
        b = m.tensor([1 + 2j]).conj().expand(3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            exec(write, {"m": m, "b": b})  # noqa: S102 - the writes above


def test_a_write_into_one_element_of_an_expanded_conj_view_as_torch():
    def program(m):
        b = m.tensor([1 + 2j]).conj().expand(3)
        b[0] = 3
        return b.tolist(), b.is_conj()
    assert program(gradkit) == program(torch)


def test_a_conj_view_written_into_its_own_memory_reads_the_old_values():
    """Documented (docs/numerics.md, "operand while it writes"): torch copies a broadcast
    conj view of x's first element into all of x element by element, so the second element
    reads the first one already written (conj of conj); gradkit copies the old values, as a
    clone of the operand does in both (conj_views seed 17299, a known difference)."""
    def write(m, value_of):
        x = m.tensor([[1 + 2j], [3 - 1j]], dtype=m.complex128)
        x[:, 0:1] = value_of(x.conj().flatten()[..., :1])
        return x.tolist()
    expected = write(torch, lambda v: v.clone())
    assert write(gradkit, lambda v: v) == expected == write(gradkit, lambda v: v.clone())
    assert write(torch, lambda v: v) == [[1 - 2j], [1 + 2j]] != expected
    problems, known = diff_program(generate(RandomDrawer(17299), "conj_views"))
    assert problems and known.startswith("an in-place op reading an expanded")


def test_copy_of_an_expanded_conj_view_onto_itself_passes_as_torch():
    """copy_ goes through torch's conj fallback unresolved: copying an expanded conj view onto
    itself does nothing, where fill_ is refused (conj_views seeds 9159, 13627)."""
    def program(m):
        b = m.tensor([1 + 2j]).conj().expand(2, 1)
        b.copy_(b)
        b[0:2] = b[..., :1]
        return b.tolist(), b.is_conj()
    assert program(gradkit) == program(torch)


def _written_through_data(lib, write):
    """A conj view of x, then a write into x's memory through a tensor with a version counter
    of its own (``x.data``), or into a conj view of ``x.data`` through x."""
    x = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    y = x.clone()
    z = x.conj()
    data = x.data
    w = data.conj()
    write(x, y, data)
    y.add_(z)  # reads z's values: the write must show (conj_views seed 300717: 1 + 2j + 1 - 2j)
    return y.tolist(), z.tolist(), w.tolist(), x._version, data._version


_DATA_WRITES = {
    "iadd_into_data": lambda x, y, data: data.add_(y),
    "setitem_into_data": lambda x, y, data: data.__setitem__(0, 5j),
    "copy_into_data": lambda x, y, data: data.copy_(y * 2),
    "into_x_under_no_grad": lambda x, y, data: _no_grad_mul(x),
}


def _no_grad_mul(x):
    with (gradkit if isinstance(x, gradkit.Tensor) else torch).no_grad():
        x.mul_(3)


@pytest.mark.parametrize("write", _DATA_WRITES.values(), ids=_DATA_WRITES)
def test_conj_views_see_writes_through_another_version_counter_as_torch(write):
    def program(lib):
        return _written_through_data(lib, lambda x, y, data: write(x, y.detach(), data))
    assert program(gradkit) == program(torch)


def test_in_place_op_on_a_conj_view_reading_its_own_negative_imaginary_part_as_torch():
    """torch's conj and neg fallbacks copy an operand with either bit out first, so
    ``z.add_(z.imag)`` of ``z = y.conj()`` computes where gradkit refused a partial overlap
    (conj_views seed 301284)."""
    def program(lib):
        x = lib.tensor([[1 + 2j]], requires_grad=True)
        y = x.clone()
        z = y.conj()
        z.add_(z.imag)
        z.expand_as(z).sum().abs().backward()
        return z.tolist(), y.tolist(), x.grad.tolist()
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("seed", [300717, 301284, 305465, 308543])
def test_fuzz_programs_writing_through_data_or_reading_a_negative_imag_match_torch(seed):
    """The conj_views programs that found the two fixes above (305465: tanh_ of a conj view,
    then tanh_ of its base's ``.data``: backward reads the values written; 308543: a write
    through ``.data`` of a conj view of an unbind output, which must bump no version of the
    base's and leave the unbind output valid, as torch's ``.data`` has its own counter)."""
    assert diff_program(generate(RandomDrawer(seed), "conj_views")) == ([], None)


def test_conj_views_made_and_dropped_leave_no_registry_entry():
    """The registry that lets a write through ``.data`` refresh conj views forgets a view when
    it dies (a complex model making x.conj() each step must not grow it)."""
    import gc

    from gradkit.ops.views import COMPUTED_VIEWS
    before = len(COMPUTED_VIEWS)
    for _ in range(50):
        x = gradkit.tensor([1 + 2j, 3 - 1j])
        c = x.conj()
        x.data.add_(1)
        assert c.tolist() == [2 - 2j, 4 + 1j]
    del x, c
    gc.collect()
    assert len(COMPUTED_VIEWS) == before


def _imag_of_a_set_conj_view(lib, x):
    c = x.clone().conj()
    c.imag = x.real * 3
    return c.imag + c.real


def _imag_of_a_conj_view_added_to(lib, x):
    c = x.clone().conj()
    c.imag.add_(x.real * -1)
    return c.imag * -2


_PART_PROGRAMS = {
    "imag": lambda lib, x: x.imag * -1,
    "real": lambda lib, x: x.real * -1,
    "conj_imag": lambda lib, x: x.conj().imag,
    "conj_real": lambda lib, x: x.conj().real * -1,
    "conj_conj_imag": lambda lib, x: x.conj().conj().imag,
    "torch_imag_of_conj": lambda lib, x: lib.imag(x.conj()) * -1,
    "conj_imag_sliced": lambda lib, x: x.conj().imag[1:],
    "conj_t_imag": lambda lib, x: x.reshape(2, 2).conj().t().imag * -1,
    "conj_imag_mul_": lambda lib, x: x.clone().conj().imag.mul_(1) ** 2,
    "conj_imag_set": _imag_of_a_set_conj_view,
    "conj_imag_add_": _imag_of_a_conj_view_added_to,
    "double": lambda lib, x: lib.autograd.grad(
        (x.conj().imag ** 2).sum(), x, create_graph=True)[0].imag * -1,
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_PART_PROGRAMS))
def test_real_and_imag_gradients_have_torchs_zero_signs(name, dtype):
    """torch's real/imag select from view_as_real: the backward's other part is +0.0, and of a
    conjugated view it passes a conj (imag: also its neg view), so that zero is -0.0 (0.0 in
    x.grad after conj's own backward). gradkit multiplied by 1j (-0.0 for a negative g) and
    passed no conj: ``x.conj().imag.sum().backward()`` gave 0.0 where torch gives -0.0."""
    def grad(lib):
        x = lib.tensor(np.array([1 + 2j, -3 - 0.5j, 0j, -0.0 - 0.0j], dtype=dtype),
                       requires_grad=True)
        _PART_PROGRAMS[name](lib, x).sum().backward()
        g = x.grad.numpy()
        return g.dtype, np.stack([g.real, g.imag])
    (ours_dtype, ours), (theirs_dtype, theirs) = grad(gradkit), grad(torch)
    assert ours_dtype == theirs_dtype
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))
