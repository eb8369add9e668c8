"""The fuzzer's ``fwd`` class (tests/fuzz/transforms.py: op chains under forward-mode AD and
torch.func transforms) and what it found, each program run in gradkit and torch (its seed in
the test's docstring)."""
import pytest
from fuzz.known import check
from fuzz.programs import RandomDrawer, generate
from test_torch_numerics import assert_same_as_torch


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

