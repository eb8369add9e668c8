"""``detach()`` of a conjugated view (``z.conj().detach()``, ``z.conj().imag.detach()``) shares
the memory with the conj bit, as torch's: writes into the base or the detached tensor reach the
other, ``is_conj()``/``is_neg()`` hold. gradkit's detach used to copy the computed values into a
plain tensor that fell out of step with the base (a silent stale value)."""
import pytest

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


def test_a_detached_conjugated_view_is_a_view_of_the_detached_base():
    """docs/torch_expectations.md: gradkit keeps it a view (its conj bit is a view step), where
    torch's detach output is no view; values, memory and is_conj() are torch's. So an in-place
    op recorded on it ends in the view's ConjBackward0, torch's in the op's node."""
    c = gradkit.tensor([1 + 2j])
    d = c.conj().detach()
    assert d._is_view() and not torch.tensor([1 + 2j]).conj().detach()._is_view()
    assert d._base.data_ptr() == c.data_ptr() and d._base.grad_fn is None
    w = gradkit.tensor([2.0 + 0j], requires_grad=True)
    assert d.mul_(w).grad_fn.name() == "ConjBackward0"
