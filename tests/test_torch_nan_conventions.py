"""NaN, infinity and signed-zero conventions against torch, on the value and gradient
differences the differential fuzzer (tests/fuzz, class ``special``) found.

Each program runs in torch and in gradkit and must give the same values (the sign of zero
included), gradients and errors (see ``assert_same_as_torch``). Sizes stay below torch's
vector width where its kernels' ties depend on it (docs/numerics.md).
"""
import math

import pytest

from test_torch_numerics import assert_same_as_torch, with_grads

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf
TIES = [[0.0, -0.0], [-0.0, 0.0], [1.0, 0.0, -0.0], [-0.0, -1.0, 0.0], [NAN, -0.0, 0.0]]


def _rows(m, dtype="float32"):
    return m.tensor([[0.0, -0.0, -0.0], [-0.0, 0.0, -2.0], [-0.0, -0.0, 0.0]],
                    dtype=getattr(m, dtype))


NAN_CONVENTION_PROGRAMS = [
    # a tie of 0.0 and -0.0 keeps the first zero along the reduced elements (fuzz 549, 4981)
    *[(f"amax_amin_ties_{i}", lambda m, v=v: (m.tensor(v).amax(0), m.tensor(v).amin(0),
                                              m.tensor(v).amax(), m.tensor(v).amin()))
      for i, v in enumerate(TIES)],
    *[(f"max_min_dim_ties_{i}", lambda m, v=v: (m.tensor(v).max(0)[0], m.tensor(v).min(0)[0]))
      for i, v in enumerate(TIES)],
    ("amax_amin_ties_of_rows", lambda m: tuple(
        getattr(_rows(m, dt), f)(d) for dt in ("float32", "float64") for f in ("amax", "amin")
        for d in (0, 1, (0, 1), -1))),
    ("amax_ties_keepdim", lambda m: (_rows(m).amax(0, keepdim=True),
                                     _rows(m).amin((0, 1), keepdim=True))),
    # max()/min() of all elements keep the last zero (torch's all-element kernel)
    *[(f"max_min_all_ties_{i}", lambda m, v=v: (m.tensor(v).max(), m.tensor(v).min()))
      for i, v in enumerate(TIES)],
    # maximum/minimum keep their first operand at a tie (fuzz 2573, 25709, 40813)
    ("maximum_minimum_ties", lambda m: tuple(
        f(m.tensor(a), m.tensor(b)) for f in (m.maximum, m.minimum)
        for a, b in (([0.0, -0.0, NAN], [-0.0, 0.0, -0.0]), ([-0.0], [0.0, -0.0])))),
    ("maximum_ties_gradient", with_grads(lambda m, x: m.maximum(x, -x), [0.0, -0.0, 1.0])),
    # x ** -0.5 is rsqrt in torch (-inf at -0.0, NaN at -inf), also in x ** 0.5's gradient
    # (fuzz 18653, 29573, 42045); complex x ** -1 / -2 / -0.5 divide (inf + nanj at 0, 31885)
    ("pow_minus_half_at_signed_zeros", with_grads(
        lambda m, x: x ** -0.5, [-0.0, 0.0, -INF, INF, NAN, 4.0], dtype="float32")),
    ("pow_half_gradient_at_signed_zeros", with_grads(
        lambda m, x: x ** 0.5, [-0.0, 0.0, -INF, INF, NAN, 4.0], seed=[-0.5] * 6)),
    ("pow_half_second_derivative", lambda m: _second_derivative(
        m, lambda x: x ** 0.5, [-0.0, 0.0, -INF, 4.0])),
    *[(f"complex_pow_{e}_at_zero_and_inf", with_grads(
        lambda m, x, e=e: x ** e, [-0.0 + 0j, 0j, complex(0, INF), complex(INF, NAN), 1 + 1j],
        dtype="complex128")) for e in (-1, -0.5)],
    # pow's base gradient is 0 where the exponent is 0, even for a NaN upstream gradient
    # (torch selects after multiplying; fuzz 25509, 27597)
    ("pow_by_zero_tensor_second_derivative", lambda m: _second_derivative(
        m, lambda x: x ** m.relu(x), [-0.02, 0.5, -0.0])),
    ("pow_at_inf_base_and_zero_exponent", with_grads(
        lambda m, x: x.sum(0) * x.sum(0) ** x, [-0.0, INF], seed=[0.5, -0.25])),
    # prod() of two zeros or more: all gradients 0, also beside inf/NaN (fuzz 21437)
    ("prod_of_two_zeros_and_inf", with_grads(lambda m, x: x.prod(), [0.0, -0.0, INF, 2.0])),
    ("complex_prod_of_zeros_and_inf", with_grads(
        lambda m, x: x.prod(), [0j, complex(-INF, 0), -0.0 + 0j, 1 + 1j], dtype="complex128")),
    ("prod_dim_of_two_zeros_and_inf", with_grads(lambda m, x: x.prod(0), [0.0, -0.0, INF])),
    # remainder's divisor gradient -g * floor(x / y) differentiates, as zero (fuzz 61429)
    ("remainder_second_derivative_at_nan", lambda m: _second_derivative(
        m, lambda x: m.remainder(x.amax(), x.amax()), NAN)),
    ("remainder_second_derivative", lambda m: _second_derivative(
        m, lambda x: m.remainder(x, x.flip(0)), [5.0, -3.0, 2.5])),
    # complex pow by a tensor is C's cpow, exp(y log x) with C99's product (fuzz 8453, 26181)
    ("complex_pow_by_tensor_at_special_values", lambda m: _complex_power(m, [
        (-0.0 + 0j, complex(INF, NAN)), (complex(NAN, NAN), -0.0 + 0j), (0j, 0j),
        (complex(INF, 0), 0.5 + 0j), (complex(-INF, 0), -1 + 0.5j), (0j, -1 + 0j),
        (1 + 1j, complex(INF, 0)), (0.5 + 0j, complex(-INF, 1.0)), (2 - 1j, 0.5 + 2j)])),
]


def _complex_power(m, pairs):
    x, y = (m.tensor([p[i] for p in pairs], dtype=m.complex128) for i in (0, 1))
    return (x ** y).real, (x ** y).imag, (x[:1] ** y[:1]).real


def _second_derivative(m, fn, values):
    x = m.tensor(values, dtype=m.float64, requires_grad=True)
    g, = m.autograd.grad(fn(x).sum(), x, create_graph=True)
    return (g,) + m.autograd.grad(g.sum(), x)


@pytest.mark.parametrize("program", [p for _, p in NAN_CONVENTION_PROGRAMS],
                         ids=[n for n, _ in NAN_CONVENTION_PROGRAMS])
def test_nan_conventions_match_torch(program):
    assert_same_as_torch(program, rtol=1e-12)
