"""The fuzzer's ``fwd`` class (tests/fuzz/transforms.py: op chains under forward-mode AD and
torch.func transforms) and what it found, each program run in gradkit and torch (its seed in
the test's docstring)."""
import pytest
from fuzz.known import check
from fuzz.programs import RandomDrawer, generate
from test_torch_numerics import assert_same_as_torch

import gradkit


torch = pytest.importorskip("torch")


def _tangents_after(m, make_output, write):
    """The tangents of a dual ``x`` and of ``make_output(x)`` after ``write`` into the
    output in place."""
    fw = m.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(m.tensor([3.0, -0.5], dtype=m.float64),
                         m.tensor([1.0, 2.0], dtype=m.float64))
        y = make_output(x)
        write(y)
        return fw.unpack_dual(x).tangent, fw.unpack_dual(y).tangent, fw.unpack_dual(y).primal


@pytest.mark.parametrize("make_output", [lambda x: x.clone(), lambda x: x + 1,
                                         lambda x: x.sub(x.detach()), lambda x: x * 1])
@pytest.mark.parametrize("write", [lambda y: y.sigmoid_(), lambda y: y.mul_(2)])
def test_in_place_write_into_an_output_leaves_the_inputs_tangent_alone(make_output, write):
    """An op whose jvp passes its input's tangent through (clone, x + 1) gave the output that
    very tangent, so an in-place write into the output updated the input's tangent too
    (seed 212: clone then sigmoid_ of a complex dual)."""
    assert_same_as_torch(lambda m: _tangents_after(m, make_output, write))
    program = generate(RandomDrawer(212), "fwd")
    assert program.transform == "dual" and check(program) == []


def test_jacfwd_blocks_have_the_outputs_dtype():
    """jacfwd's blocks are tangents of the outputs: a float32 output's block for a float64
    input is float32, a float64 output's for a float32 input float64 (seed 244)."""
    def program(m):
        def f(a, b):
            return a * 2, b.sin(), (a + b.double()).sum()
        a = m.tensor([[0.5]], dtype=m.float64)
        b = m.tensor([0.25], dtype=m.float32)
        forward = m.func.jacfwd(f, argnums=(0, 1))(a, b)
        reverse = m.func.jacrev(f, argnums=(0, 1))(a, b)
        return tuple(block for per_output in (*forward, *reverse) for block in per_output)
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(244), "fwd")) == []


def _write_into_inner_input(m, transform, write, through_view):
    def f(x):
        return write(x[0:1] if through_view else x).sum()
    x = m.tensor([0.5, 1.5], dtype=m.float64)
    if transform == "hessian":
        return m.func.hessian(f)(x)
    if transform == "jvp_of_grad":
        return m.func.jvp(m.func.grad(f), (x,), (m.ones(2, dtype=m.float64),))
    return m.func.grad(f)(x.requires_grad_())


@pytest.mark.parametrize("transform", ["hessian", "jvp_of_grad", "grad_of_a_graph_input"])
@pytest.mark.parametrize("through_view", [False, True])
@pytest.mark.parametrize("write", [lambda x: x.sigmoid_(), lambda x: x.mul_(2),
                                   lambda x: x.zero_()])
def test_reverse_transform_input_is_a_leaf_to_in_place_writes(transform, write, through_view):
    """grad's (and jacrev's) input is a leaf at its level: an in-place write into it, or into
    a view of it, is torch's leaf error also when the input has a graph (inside jvp, jacfwd
    or reverse mode), where gradkit's input is a view of the caller's tensor (seed 34)."""
    assert_same_as_torch(lambda m: _write_into_inner_input(m, transform, write, through_view))
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable" if through_view
                       else "^a leaf Variable that requires grad"):
        _write_into_inner_input(gradkit, transform, write, through_view)
    assert check(generate(RandomDrawer(34), "fwd")) == []
