"""``div(x, y, rounding_mode=...)`` against torch: values and dtypes (integers stay integers
once rounded), torch's errors, the node it records (``DivBackward2`` and what it saved), zero
gradients once rounded (first and second order, forward AD), and the in-place forms."""
import math

import pytest

import gradkit
from gradkit.autograd import forward_ad
from test_torch_numerics import assert_same_as_torch, with_grads

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan
MODES = (None, "trunc", "floor")
FLOATS = [7.0, -7.0, 2.5, -0.0, 5.0, -5.0, 0.0, 1e308, -7.5, 1.0]
DIVISORS = [2.0, 2.0, -0.0, 3.0, 0.0, 0.0, 0.0, 1e-10, INF, -3.0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64"),
                                    ("float16", "int64"), ("int64", "int64"), ("int32", "int8"),
                                    ("uint8", "uint8"), ("bool", "int64"), ("int64", "float32")])
def test_values_and_dtypes(mode, dtypes):
    def program(m):
        if dtypes[0] in ("float64", "float32", "float16"):
            x, y = FLOATS, DIVISORS
            if dtypes[0] != "float64":  # 1e308 overflows their range: a number float16 holds
                x = [6e4 if v == 1e308 else v for v in x]
        else:
            x, y = [7, 6, 0, 5, 1, 2, 3, 4, 1, 0], [2, 3, 1, 2, 3, 5, 2, 1, 1, 7]
            if dtypes[0] in ("int64", "int32"):
                x = [-v if i % 2 else v for i, v in enumerate(x)]
        return m.div(m.tensor(x, dtype=getattr(m, dtypes[0])),
                     m.tensor(y, dtype=getattr(m, dtypes[1])), rounding_mode=mode)
    assert_same_as_torch(program)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("number", [2, -3, 2.5, -0.5, 0.0, True])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_number_operands(mode, number, dtype):
    assert_same_as_torch(lambda m: m.div(m.tensor([7, -7, 5, 0], dtype=getattr(m, dtype)),
                                         number, rounding_mode=mode))
    assert_same_as_torch(lambda m: m.div(number, m.tensor([2, -3, 4, 5], dtype=getattr(m, dtype)),
                                         rounding_mode=mode))


@pytest.mark.parametrize("program", [
    lambda m: m.div(m.tensor([1, 2]), m.tensor([0, 1]), rounding_mode="trunc"),
    lambda m: m.div(m.tensor([1, 2]), 0, rounding_mode="floor"),
    lambda m: m.div(m.tensor([1j]), m.tensor([1j]), rounding_mode="trunc"),
    lambda m: m.div(m.tensor([1j]), 2, rounding_mode="floor"),
    lambda m: m.div(m.tensor([True]), m.tensor([True]), rounding_mode="floor"),
    lambda m: m.div(m.tensor([1.0]), 2.0, rounding_mode="round"),
    lambda m: m.div(m.tensor([1.0]), 2.0, rounding_mode="Floor"),
    lambda m: m.tensor([1, 2]).div_(2),
    lambda m: m.div(m.tensor([1j]), m.tensor([2j]), rounding_mode=None),
    lambda m: m.div(m.tensor([1, 2]), m.tensor([0, 1]), rounding_mode=None),
], ids=["int_by_zero_trunc", "int_by_zero_floor", "complex_trunc", "complex_floor", "bool",
        "invalid_mode", "invalid_mode_case", "int_in_place_true_division", "complex_true",
        "int_by_zero_true"])
def test_errors_and_edges(program):
    assert_same_as_torch(program)


@pytest.mark.parametrize("call", [
    lambda m, x: m.div(x, x, rounding_mode=1),
    lambda m, x: m.div(x, 2, rounding_mode=1),
    lambda m, x: m.div(x, x, "floor"),
])
def test_argument_type_errors(call):
    """torch's parser refuses these: the first line of its message (gradkit does not list
    the overloads torch expected)."""
    with pytest.raises(TypeError) as torch_error:
        call(torch, torch.ones(2))
    with pytest.raises(TypeError) as gradkit_error:
        call(gradkit, gradkit.ones(2))
    assert str(torch_error.value).startswith(str(gradkit_error.value) + ", but expected one of")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("other", ["tensor", "number"])
def test_node_and_saved_values(mode, other):
    def node(m):
        x = m.tensor([7.0, -7.0, 2.5], requires_grad=True)
        y = m.tensor([2.0, 2.0, -4.0], requires_grad=True) if other == "tensor" else 2
        return x, m.div(x, y, rounding_mode=mode).grad_fn
    (tx, t_node), (gx, g_node) = node(torch), node(gradkit)
    assert g_node.name() == t_node.name() == "DivBackward2"
    assert g_node._saved_rounding_mode == t_node._saved_rounding_mode == mode
    for name in ("_saved_self", "_saved_other"):  # self is saved for other's gradient only
        saved, expected = getattr(g_node, name), getattr(t_node, name)
        assert (saved is None) == (expected is None)
        if expected is not None:
            assert saved.tolist() == expected.tolist()
            assert str(saved.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
    assert [n is None for n, _ in g_node.next_functions] == \
        [n is None for n, _ in t_node.next_functions]
    assert gradkit.div(gx, 2).grad_fn.name() == torch.div(tx, 2).grad_fn.name()  # no mode


@pytest.mark.parametrize("mode", MODES)
def test_gradients_and_second_order(mode):
    def program(m):
        x = m.tensor([7.0, -7.0, 2.5, 1.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([2.0, 2.0, -0.0, 3.0], dtype=m.float64, requires_grad=True)
        out = m.div(x, y, rounding_mode=mode)
        gx, gy = m.autograd.grad(out.sum(), (x, y), create_graph=True)
        assert (gx.grad_fn is None) == (mode is not None)  # rounded: constant zeros, as torch's
        if mode is None:
            return (out, gx, gy) + m.autograd.grad((gx * gy).sum(), (x, y))
        return out, gx, gy
    assert_same_as_torch(program)
    for mode_ in MODES:
        assert_same_as_torch(with_grads(lambda m, a, b, mode_=mode_: m.div(
            a, b, rounding_mode=mode_), [[1.5, -2.5]], [[0.5], [-3.0]]))


@pytest.mark.parametrize("mode", MODES)
def test_forward_ad(mode):
    def program(m, fw):
        with fw.dual_level():
            dual = fw.make_dual(m.tensor([7.0, -7.0, 2.5], dtype=m.float64),
                                m.tensor([1.0, 2.0, 3.0], dtype=m.float64))
            out = m.div(dual, m.tensor([2.0, 3.0, -0.5], dtype=m.float64), rounding_mode=mode)
            return fw.unpack_dual(out)
    (t_primal, t_tangent), (g_primal, g_tangent) = (
        program(torch, torch.autograd.forward_ad), program(gradkit, forward_ad))
    assert g_primal.tolist() == t_primal.tolist()
    assert g_tangent.tolist() == t_tangent.tolist()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["div_", "divide_"])
def test_in_place(mode, name):
    def program(m):
        x = m.tensor([7.0, -7.0, 2.5], requires_grad=True)
        z = x * 1
        getattr(z, name)(m.tensor([2.0, 2.0, -4.0]), rounding_mode=mode)
        assert z.grad_fn.name() == "DivBackward2"
        ints = m.tensor([7, -7, 9])
        getattr(ints, name)(2, rounding_mode=mode or "floor")
        return (z, ints) + m.autograd.grad(z.sum(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("spelling", ["div", "divide"])
def test_spellings(spelling):
    assert_same_as_torch(lambda m: (
        getattr(m, spelling)(m.tensor([7, -7]), m.tensor([2, 2]), rounding_mode="trunc"),
        getattr(m.tensor([7, -7]), spelling)(2, rounding_mode="floor")))


@pytest.mark.parametrize("call", [
    lambda m, x, y: m.true_divide(x, y, rounding_mode="floor"),
    lambda m, x, y: m.true_divide(x, 2, rounding_mode=None),
    lambda m, x, y: m.true_divide(x, y, foo=1),
    lambda m, x, y: x.true_divide(y, rounding_mode="trunc"),
    lambda m, x, y: x.true_divide(other=y, rounding_mode="trunc"),
    lambda m, x, y: x.true_divide(y, foo=1),
    lambda m, x, y: x.clone().true_divide_(y, rounding_mode="floor"),
    lambda m, x, y: x.clone().true_divide_(2, rounding_mode=None),
])
def test_true_divide_has_no_rounding_mode(call):
    """torch's true_divide is div without rounding_mode: the function says "unexpected
    keyword", the methods list the arguments torch got (the first line of its message)."""
    errors = []
    for m in (torch, gradkit):
        with pytest.raises(TypeError) as error:
            call(m, m.tensor([5.0, -3.0]), m.tensor([2.0, 2.0]))
        errors.append(str(error.value).splitlines()[0])
    assert errors[1] == errors[0]


def test_true_divide_is_division():
    def program(m):
        x = m.tensor([5.0, -3.0, 1.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([2.0, 4.0, -8.0], dtype=m.float64)
        z = x * 1
        z.true_divide_(y)
        out = (m.true_divide(x, y), x.true_divide(other=y), m.true_divide(m.tensor([7, 2]), 2), z)
        assert out[0].grad_fn.name() == "DivBackward0" and z.grad_fn.name() == "DivBackward0"
        return out + m.autograd.grad(out[1].sum() + z.sum(), x)
    assert_same_as_torch(program)
