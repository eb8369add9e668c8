"""Backward rules at NaN, inf and other special values against torch, on the programs the
differential fuzzer (tests/fuzz, classes ``special``, ``hooks``, ``mixed``) found wrong.

Each program runs in torch and in gradkit and must give the same values, gradients and errors
(see ``assert_same_as_torch``).
"""
import math

import pytest

import gradkit
from test_torch_numerics import assert_same_as_torch, with_grads

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _floor_divide_backward(m):
    x = m.tensor([0.5, 1.5], dtype=m.float64, requires_grad=True)
    y = x // m.tensor(0.7, dtype=m.float64)
    assert y.requires_grad and type(y.grad_fn).__name__ == "NotImplemented"
    return m.autograd.grad(y.sum(), x)


def _floor_divide_inplace_backward(m):
    x = m.tensor([0.5, 1.5], dtype=m.float64, requires_grad=True)
    y = x.clone()
    y //= 0.7
    return m.autograd.grad(y.sum(), x)


def _floor_divide_forward_ad(m):
    fw = m.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(m.tensor([0.5, 1.5], dtype=m.float64), m.ones(2, dtype=m.float64))
        return fw.unpack_dual(x // 0.7).tangent


def _remainder_second_derivative(m):
    x = m.tensor([5.0, -5.0, 4.5], dtype=m.float64, requires_grad=True)
    y = m.tensor([3.0, 3.0, -2.0], dtype=m.float64, requires_grad=True)
    gx, gy = m.autograd.grad((m.remainder(x, y) * y).sum(), (x, y), create_graph=True)
    return (gx, gy) + m.autograd.grad((gx * gy).sum(), (x, y))


def _accumulated_complex(m, first, second):
    """Two gradients of one leaf, the second infinite: torch adds it times alpha = 1 + 0j."""
    x = m.tensor([0.9 + 0.01j], dtype=m.complex128, requires_grad=True)
    y = x * m.tensor([complex(INF, 0.0)], dtype=m.complex128)
    weight = m.tensor([0.5 - 0.8j], dtype=m.complex128)
    loss = (y * weight).sum().real
    loss = (x * weight).sum().real + loss if first == "x" else loss + (x * weight).sum().real
    grad, = m.autograd.grad(loss, x, create_graph=second)
    return grad


def _dot_with_itself(m, create_graph):
    x = m.tensor([complex(-INF, 0.0)], dtype=m.complex128, requires_grad=True)
    y = x @ x
    if create_graph:
        return m.autograd.grad(y.real, x, create_graph=True)[0]
    y.real.backward()
    return x.grad


def _pow_zero_exponent_has_no_graph(m):
    x = m.tensor(NAN, dtype=m.float64, requires_grad=True)
    g, = m.autograd.grad(x ** 0, x, m.tensor(NAN, dtype=m.float64), create_graph=True)
    assert not g.requires_grad
    return g


def _pow_zero_exponent_forward_ad(m):
    fw = m.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(m.tensor([1.0, 2.0], dtype=m.float64),
                         m.tensor([NAN, 1.0], dtype=m.float64))
        return fw.unpack_dual(x ** 0).tangent, fw.unpack_dual(x ** 2).tangent


def _complex(m):
    return m.tensor([1 + 1j, complex(-INF, 0.0)], dtype=m.complex128)


SPECIAL_VALUE_PROGRAMS = [
    ("floor_divide_backward_refuses", _floor_divide_backward),
    ("floor_divide_forward_ad_refuses", _floor_divide_forward_ad),
    ("remainder_second_derivative", _remainder_second_derivative),
    # relu and clamp select the gradient (torch's threshold/clamp backward): NaN/inf stay out
    ("relu_masks_nan_and_inf_upstream", with_grads(
        lambda m, x: m.relu(x), [0.5, -1.0, NAN, 0.0, 2.0], seed=[INF, NAN, 1.0, INF, NAN])),
    ("clamp_masks_nan_and_inf_upstream", with_grads(
        lambda m, x: x.clamp(-1, 1), [0.5, -2.0, NAN, 1.0, 2.0], seed=[INF, NAN, 1.0, INF, NAN])),
    ("clamp_min_masks_nan_and_inf_upstream", with_grads(
        lambda m, x: x.clamp(min=0), [0.5, -2.0, NAN, 0.0], seed=[INF, NAN, 1.0, INF])),
    ("relu_then_amax_at_nan", with_grads(lambda m, x: m.relu(x).amax(0) + x.sum(),
                                         [0.03, NAN, -INF])),
    ("clamp_then_self_division_at_nan", with_grads(lambda m, x: x.clamp(-1, 1) / x.clamp(-1, 1),
                                                   NAN)),
    ("prod_of_0d_inf", with_grads(lambda m, x: x.prod(), -INF)),
    ("prod_dim_of_0d_inf", with_grads(lambda m, x: x.prod(0), INF)),
    ("prod_of_one_element_inf", with_grads(lambda m, x: x.prod(), [-INF])),
    ("var_of_0d_inf", with_grads(lambda m, x: x.var(), INF)),
    ("var_of_one_inf", with_grads(lambda m, x: x.var(), [INF])),
    ("var_of_one_finite", with_grads(lambda m, x: x.var(), [2.0])),
    ("accumulate_complex_inf_second", lambda m: _accumulated_complex(m, "x", False)),
    ("accumulate_complex_inf_first", lambda m: _accumulated_complex(m, "y", False)),
    ("accumulate_complex_inf_create_graph", lambda m: _accumulated_complex(m, "x", True)),
    ("dot_with_itself_at_inf_into_grad", lambda m: _dot_with_itself(m, False)),
    ("dot_with_itself_at_inf_create_graph", lambda m: _dot_with_itself(m, True)),
    ("zero_to_complex_power", with_grads(
        lambda m, x: 0.0 ** x, [0.5 + 0.7j, 0.5 + 0j, -0.5 + 0j, -0.5 + 0.1j, 0j],
        dtype="complex128")),
    ("complex_sqrt_at_inf", with_grads(
        lambda m, x: x.sqrt(), [complex(INF, 0), 4 + 0j, complex(0, INF), complex(-INF, 0),
                                complex(NAN, 1), 0.25 - 1j], dtype="complex128",
        seed=[0.3 - 0.2j] * 6)),
    # number / tensor is torch's reciprocal() * number: 1j / -0.0 is -inf - infj (fuzz 24575)
    ("complex_number_over_signed_zeros", with_grads(
        lambda m, x: (1 + 2j) / x, [-0.0, 0.0, 2.0, -INF])),
    ("number_over_integer_and_bool", lambda m: (
        2 / m.tensor([0, -1]), True / m.tensor([-0.0], dtype=m.float32), 1j / m.tensor([True]))),
    ("zero_to_real_power", with_grads(lambda m, x: 0.0 ** x, [0.5, 0.0, -0.5])),
    ("pow_zero_exponent_has_no_graph", _pow_zero_exponent_has_no_graph),
    ("pow_zero_exponent_forward_ad", _pow_zero_exponent_forward_ad),
    # no complex kernels: torch's NotImplementedError and message (NumPy raised TypeError)
    ("remainder_of_complex", lambda m: m.remainder(_complex(m), _complex(m))),
    ("complex_modulo_number", lambda m: _complex(m) % 2),
    ("number_modulo_complex", lambda m: 2 % _complex(m)),
    ("real_modulo_complex", lambda m: m.tensor([1.0]) % _complex(m)),
    ("floor_divide_of_complex", lambda m: m.floor_divide(_complex(m), _complex(m))),
    ("complex_floor_divided_by_number", lambda m: _complex(m) // 2),
    ("number_floor_divided_by_complex", lambda m: 2 // _complex(m)),
    # an empty reduction is refused before the dtype; amax/amin name the dim as given
    ("amax_of_empty_complex", lambda m: m.zeros(0, dtype=m.complex128).amax(-1)),
    ("amin_of_empty_rows", lambda m: m.zeros(2, 0).amin((0, -1))),
    ("amax_of_empty_all", lambda m: m.zeros(0).amax(())),
    ("max_dim_of_empty_complex", lambda m: m.zeros(0, dtype=m.complex128).max(-1)),
    ("max_of_empty_complex", lambda m: m.zeros(0, dtype=m.complex128).max()),
    ("argmax_of_empty_complex", lambda m: m.zeros(0, dtype=m.complex128).argmax(-1)),
    ("cumsum_of_negative_zeros", lambda m: (
        m.cumsum(m.tensor([-0.0, -0.0, 1.0]), 0), m.cumsum(m.tensor(-0.0), 0),
        m.cumsum(m.tensor([[-0.0], [-0.0]]), 1),
        m.cumsum(m.tensor([complex(-0.0, -0.0)] * 2), 0).imag)),
]


@pytest.mark.parametrize("program", [p for _, p in SPECIAL_VALUE_PROGRAMS],
                         ids=[n for n, _ in SPECIAL_VALUE_PROGRAMS])
def test_special_values_match_torch(program):
    assert_same_as_torch(program, rtol=1e-12)


def test_floor_divide_backward_names_the_op():
    x = gradkit.tensor([0.5, 1.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        (x // 2).sum().backward()


@pytest.mark.parametrize("m", [torch, gradkit], ids=["torch", "gradkit"])
def test_floor_divide_in_place_backward_refuses(m):
    # torch names the in-place op (floor_divide_)
    with pytest.raises(RuntimeError, match="^derivative for aten::floor_divide_ is not "
                                           "implemented$"):
        _floor_divide_inplace_backward(m)


def test_number_over_tensor_records_torch_nodes():
    names = [type((3 / m.tensor([-0.5, 2.0], requires_grad=True)).grad_fn).__name__
             for m in (torch, gradkit)]
    assert names[0] == names[1] == "MulBackward0"
