"""Regression tests for the mismatches differential fuzzing found (tests/fuzz), each against torch.

Each test is the shrunk program that exposed the bug, run in gradkit and torch.
"""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _run_both(program):
    """``program(lib)`` returns tensors; gradkit's and torch's results as NumPy pairs."""
    ours = [t.detach().numpy() for t in program(gradkit)]
    theirs = [t.detach().resolve_conj().numpy() for t in program(torch)]
    return list(zip(ours, theirs))


def _assert_agree(program):
    for ours, theirs in _run_both(program):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_sigmoid_of_complex_keeps_the_imaginary_part():
    # was: the sign split compared complex values, so the result became real-valued
    def program(lib):
        z = lib.tensor(np.array([0.3 + 0.4j, -0.5 + 0.2j]), requires_grad=True)
        s = lib.sigmoid(z)
        (s.real + 2 * s.imag).sum().backward()
        return s, z.grad
    _assert_agree(program)


def test_silu_of_complex_matches_torch():
    def program(lib):
        z = lib.tensor(np.array([0.3 + 0.4j, -0.5 + 0.2j]))
        return [lib.nn.functional.silu(z)]
    _assert_agree(program)


def test_var_without_degrees_of_freedom_gives_nan_gradient():
    # was: ZeroDivisionError in backward (torch: nan value, nan gradient, a warning)
    def program(lib):
        x = lib.tensor(np.array([0.5]), requires_grad=True)
        y = x.var(0)
        y.backward()
        return y, x.grad
    with pytest.warns(UserWarning):
        _ = torch.tensor([0.5]).var(0)
    with np.errstate(all="ignore"), pytest.warns((RuntimeWarning, UserWarning)):
        pairs = _run_both(program)
    for ours, theirs in pairs:
        assert np.isnan(theirs).all() and np.isnan(ours).all()


def test_result_of_div_may_be_modified_in_place():
    # was: div saved its result, so x / y followed by an in-place op failed backward
    def program(lib):
        x = lib.tensor(np.array([0.5, -1.5]), requires_grad=True)
        y = lib.tensor(np.array([2.0, 0.25]), requires_grad=True)
        q = x / y
        q.add_(q.detach())
        q.sum().backward()
        return q, x.grad, y.grad
    _assert_agree(program)


def test_div_double_backward_after_the_change_of_saved_values():
    def program(lib):
        x = lib.tensor(np.array([0.5, -1.5]), requires_grad=True)
        y = lib.tensor(np.array([2.0, 0.25]), requires_grad=True)
        gx, gy = lib.autograd.grad((x / y).pow(2).sum(), (x, y), create_graph=True)
        return lib.autograd.grad((gx * gy).sum(), (x, y))
    _assert_agree(program)


def test_in_place_through_a_one_element_view_writes_the_base():
    # was: x[0] on a 1-d tensor was a NumPy scalar copy, so x[0].mul_(5) left x unchanged,
    # and backward through the CopySlices mask raised TypeError on that scalar
    def program(lib):
        leaf = lib.tensor(np.array([0.5 + 0.1j, -1.0 + 0.3j]), requires_grad=True)
        x = leaf * 2
        v = x[0]
        v.sigmoid_()
        x.mean().real.backward()
        return x, leaf.grad
    _assert_agree(program)


def test_expand_that_adds_only_size_one_dims_is_writable():
    # was: broadcast_to returned a read-only array and the in-place op refused it
    def program(lib):
        leaf = lib.tensor(np.array([0.3]), requires_grad=True)
        e = lib.cos(leaf).expand(1, 1)
        e.sigmoid_()
        e.sum().backward()
        return e, leaf.grad
    _assert_agree(program)


def test_setitem_value_with_leading_size_one_dims():
    # was: IndexError in backward: the value's gradient was summed to a shape of more dims
    def program(lib):
        x = lib.tensor(np.array([[1.0, 2.0]]), requires_grad=True)
        value = lib.tensor(np.array([[[3.0]]]), requires_grad=True)
        y = x * 1
        y[0:1] = value
        (y * lib.tensor(np.array([[2.0, 5.0]]))).sum().backward()
        return y, x.grad, value.grad
    _assert_agree(program)


def test_logsumexp_gradient_of_complex_input_is_conjugated():
    def program(lib):
        z = lib.tensor(np.array([[0.3 + 0.4j], [-0.5 + 0.2j]]), requires_grad=True)
        out = lib.logsumexp(z, -2)
        (out.real + out.imag).sum().backward()
        return out, z.grad
    _assert_agree(program)



def test_flip_returns_a_copy_not_a_view():
    # was: NumPy's flip is a view, so writing to the result wrote to the input
    def program(lib):
        x = lib.tensor(np.array([1.0, 2.0, 3.0]))
        y = lib.flip(x, [0])
        y.mul_(10)
        return x, y
    _assert_agree(program)


def test_einsum_gradient_of_an_operand_the_other_one_broadcasts_against():
    # was: "EinsumBackward0 returned an invalid gradient": y's grad kept x's size-1 letter
    def program(lib):
        x = lib.tensor(np.array([[0.5]]), requires_grad=True)
        y = lib.tensor(np.linspace(0.1, 0.9, 9).reshape(1, 3, 3), requires_grad=True)
        out = lib.einsum("...i,...i->...", x, y)
        (out * lib.tensor(np.arange(3.0))).sum().backward()
        return out, x.grad, y.grad
    _assert_agree(program)


def test_std_of_equal_values_has_zero_gradient():
    # was: sqrt'(0) = inf times 0 gave nan (torch masks the gradient to 0 where std == 0)
    def program(lib):
        x = lib.tensor(np.array([0.5, 0.5]), requires_grad=True)
        z = lib.tensor(np.array([0.5 + 1j, 0.5 + 1j]), requires_grad=True)
        gx, gz = lib.autograd.grad(x.std(0) + z.std(0), (x, z), create_graph=True)
        return gx, gz, lib.autograd.grad((gx * gx).sum() + gz.abs().sum(), x,
                                         allow_unused=True, materialize_grads=True)[0]
    _assert_agree(program)


def test_view_taken_before_an_in_place_write_to_its_base_sees_the_write():
    # was: the view kept its old grad_fn, so its gradient missed the write (silently wrong)
    def program(lib):
        a = lib.tensor(np.array([2.0, 3.0]), requires_grad=True)
        b = lib.tensor(np.array([1.0, 1.0])) * 1
        first, rest = b[0], b[1:]
        b.mul_(a)                     # first now holds a[0] * 1: it depends on a
        return lib.autograd.grad(first + rest.sum(), a)
    _assert_agree(program)


def test_sibling_view_sees_an_in_place_write_through_another_view():
    def program(lib):
        a = lib.tensor(np.array([2.0, 3.0]), requires_grad=True)
        c = lib.tensor(np.array([1.0, 2.0]), requires_grad=True) * 1
        v1, v2 = c[0], c[1:]
        v2.mul_(a[1:] * 1)
        return lib.autograd.grad(v1 * 2 + c.sum() + v2.sum(), a)
    _assert_agree(program)

# -- differences found by fuzzing (tests/fuzz/programs.py), fixed since --------------------------

def test_in_place_write_through_real_is_seen_by_backward():
    def program(lib):
        z = lib.tensor(np.array([0.3 + 0.4j]), requires_grad=True)
        t = lib.tanh(z * 1)          # saves its result
        t.real.mul_(2)               # modifies that result through the view
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            t.abs().sum().backward()
        return [z]
    _run_both(program)


def test_result_of_pow_with_scalar_exponent_may_be_modified_in_place():
    def program(lib):
        x = lib.tensor(np.array([0.5, 1.5]), requires_grad=True)
        y = x ** 1.5
        y.add_(1)
        y.sum().backward()
        return y, x.grad
    _assert_agree(program)
