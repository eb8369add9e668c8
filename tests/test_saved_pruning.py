"""Nodes keep only what the rules that will run read (torch saves `other` for `self * other`
only when `self` needs a gradient)."""
import numpy as np
import pytest

import gradkit
from gradkit.ops._op import _entries_read


def leaf(values):
    return gradkit.tensor(values, dtype=gradkit.float64, requires_grad=True)


def test_mul_by_a_constant_tensor_keeps_only_the_constant():
    x = leaf([1.0, 2.0])
    c = gradkit.tensor([3.0, 4.0], dtype=gradkit.float64)
    y = x * c
    count, nbytes = y.grad_fn.saved_tensors_info()
    assert (count, nbytes) == (1, c.nbytes)
    with gradkit.no_grad():
        x_alias = x.detach()
        x_alias.mul_(10)  # x changed in place: y's backward does not need it
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_both_inputs_needing_grads_keep_both():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    assert (x * w).grad_fn.saved_tensors_info()[0] == 2


def test_pow_with_a_scalar_exponent_does_not_keep_its_result():
    x = leaf([0.5, 1.5])
    y = x ** 1.5
    y.add_(1)  # allowed: the base's rule reads x and the exponent only
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * np.array([0.5, 1.5]) ** 0.5)


def test_pruned_values_still_support_double_backward():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (gx,) = gradkit.autograd.grad((x * w * x).sum(), x, create_graph=True)
    (gw,) = gradkit.autograd.grad(gx.sum(), w)
    np.testing.assert_allclose(gw.numpy(), 2 * np.array([1.0, 2.0]))


def test_the_analysis_reads_code_conservatively():
    assert _entries_read(lambda g, x, y: g * y, 2) == frozenset({1})
    assert _entries_read(lambda g, x, y: [g * v for v in (x,)], 2) == frozenset({0})
    assert _entries_read(lambda g, *saved: g * saved[0], 2) is None  # cannot tell: keep all
    assert _entries_read(lambda g, *saved: g, 2) == frozenset()  # never read: a refusal's
    assert _entries_read(lambda g, x, *saved: g * x, 3) == frozenset({0})

    def uses_closure(g, x, y):
        return (lambda: y)() * g
    assert _entries_read(uses_closure, 2) == frozenset({1})


def test_same_program_as_torch_with_in_place_after_a_constant_product():
    torch = pytest.importorskip("torch")

    def program(lib, values):
        x = lib.tensor(values, requires_grad=True)
        h = x * 1.0
        y = h * 3.0        # needs nothing of h
        h.add_(1)          # so this in-place write is fine in torch
        (y.sum() + h.sum()).backward()
        return x.grad.numpy()

    values = np.array([0.5, -1.0])
    np.testing.assert_allclose(program(gradkit, values), program(torch, values))


# ops with an input that needs a gradient (a) and constants (b, c); a is written in place
# after the op: torch saves a only where a rule that will run reads it (its codegen's
# should_compute_output / wrap_opt_if guards), so backward raises only then
_WRITTEN_AFTER = {
    "mul": lambda m, a, b, c: a * b, "mul_rev": lambda m, a, b, c: b * a,
    "div": lambda m, a, b, c: b / a, "div_by": lambda m, a, b, c: a / b,
    "matmul": lambda m, a, b, c: a @ b, "bmm": lambda m, a, b, c: m.bmm(a, b),
    "bmm_rev": lambda m, a, b, c: m.bmm(b, a),
    "addbmm": lambda m, a, b, c: m.addbmm(c, a, b), "addbmm_rev": lambda m, a, b, c: m.addbmm(
        c, b, a), "baddbmm": lambda m, a, b, c: m.baddbmm(b, a, b),
    "addmm": lambda m, a, b, c: m.addmm(c, a[0], b[0]),
    "addmm_rev": lambda m, a, b, c: m.addmm(c, b[0], a[0]),
    "addmv": lambda m, a, b, c: m.addmv(c[0], a[0], b[0, 0]),
    "addmv_rev": lambda m, a, b, c: m.addmv(c[0], b[0], a[0, 0]),
    "addcmul": lambda m, a, b, c: m.addcmul(c, a, b),
    "addcdiv_rev": lambda m, a, b, c: m.addcdiv(c, b, a),
    "addr": lambda m, a, b, c: m.addr(c, a[0, 0], b[0, 0]),
    "kron": lambda m, a, b, c: m.kron(a, b),
    "atan2": lambda m, a, b, c: m.atan2(a, b),
    "pow_exponent": lambda m, a, b, c: m.pow(b.abs(), a),
    "bilinear_input1": lambda m, a, b, c: m.nn.functional.bilinear(a, b, c[None]),
    "bilinear_input2": lambda m, a, b, c: m.nn.functional.bilinear(b, a, c[None]),
    "bilinear_weight": lambda m, a, b, c: m.nn.functional.bilinear(b[0], b[1], a),
    "conv1d_weight": lambda m, a, b, c: m.nn.functional.conv1d(b, a),
    "linear": lambda m, a, b, c: m.nn.functional.linear(a, c),
    # torch's LdexpBackward0 saves other only for self's gradient (breadth seed 1559351)
    "ldexp_other": lambda m, a, b, c: m.ldexp(b, a), "ldexp_self": lambda m, a, b, c: m.ldexp(
        a, b),
}


def _written_after(module, program) -> str:
    a = module.arange(18.0, dtype=module.float64).reshape(2, 3, 3).sin().requires_grad_() * 1
    b = module.arange(18.0, dtype=module.float64).reshape(2, 3, 3).cos() + 2
    c = module.arange(9.0, dtype=module.float64).reshape(3, 3).sin()
    try:
        y = program(module, a, b, c)
        a.add_(1)
        y.sum().backward()
        return "computed"
    except RuntimeError as error:
        return str(error).split(":")[0]


@pytest.mark.parametrize("name", sorted(_WRITTEN_AFTER))
def test_an_input_written_after_the_op_raises_only_where_torch_saved_it(name):
    """addmm/addmv/baddbmm/addbmm saved both factors, bilinear all three inputs, whichever
    needed a gradient: backward raised where torch computes (breadth seed 1306971)."""
    torch = pytest.importorskip("torch")
    assert _written_after(gradkit, _WRITTEN_AFTER[name]) == _written_after(
        torch, _WRITTEN_AFTER[name])


def test_lerp_keeps_its_weight_only_where_a_rule_reads_it():
    """Deliberate (docs/autograd.md, "saves `weight` whatever needs a gradient"): torch's
    lerp saves `weight` even when only `weight` needs a gradient (its rule reads `end - self`),
    so writing `weight` in place afterwards raises there; gradkit computes that gradient."""
    def program(module):
        weight = module.tensor([0.25, 0.5], dtype=module.float64, requires_grad=True) * 1
        start, end = (module.tensor(v, dtype=module.float64) for v in ([1.0, 2.0], [5.0, 3.0]))
        y = module.lerp(start, end, weight)
        weight.add_(1)
        y.sum().backward()
    x = gradkit.tensor([0.25, 0.5], dtype=gradkit.float64, requires_grad=True)
    weight = x * 1
    y = gradkit.lerp(gradkit.tensor([1.0, 2.0], dtype=gradkit.float64),
                     gradkit.tensor([5.0, 3.0], dtype=gradkit.float64), weight)
    weight.add_(1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 1.0])  # end - start
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        program(torch)
