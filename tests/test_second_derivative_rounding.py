"""Second derivatives of binary ops bit for bit as torch's on random float64 inputs: torch's
backward formulas' operation order, the subexpressions they compute once for both inputs and
the order their generated nodes compute the inputs' gradients decide the double backward's
rounding (a probe of 100 random programs per op found these)."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _second_derivatives(m, op, seed: int):
    """grad of (g1 w1).sum() + (g2 w2).sum(), g = grad((op(x1, x2) w).sum()), as bits."""
    r = np.random.default_rng(seed)
    xs = [m.tensor(r.standard_normal(5) * 2, dtype=m.float64, requires_grad=True) for _ in range(2)]
    w, w1, w2 = (m.tensor(r.standard_normal(5), dtype=m.float64) for _ in range(3))
    g = m.autograd.grad((op(m, *xs) * w).sum(), xs, create_graph=True)
    return [t.detach().numpy().view(np.int64).tolist()
            for t in (*g, *m.autograd.grad((g[0] * w1).sum() + (g[1] * w2).sum(), xs))]


PROGRAMS = {
    # torch's atan2_backward: one reciprocal of x² + y² shared by both gradients (all 100 off)
    "atan2": lambda m, x, y: m.atan2(x, y),
    # torch's value / tensor2 is C++'s, a true quotient: Python's is reciprocal times value
    # (59 first derivatives and 86 second ones of 100 off)
    "addcdiv": lambda m, x, y: m.addcdiv(x * 1.3, x.sin(), y, value=0.7),
    # torch's ldexp: other's gradient is grad * result * ln 2 in that order (87 and 96 of 100
    # off; 24 still are, where NumPy's pow(2, other) is an ulp from SLEEF's: not these seeds)
    "ldexp": lambda m, x, y: m.ldexp(x, y),
    # torch's kl_div is xlogy(t, t) - t * input in C++, which computes t * input first: its
    # node runs last, so target's gradient adds xlogy's two terms first (81 first derivatives
    # of 100 off); XlogyBackward0 computes other's gradient first (66 second ones off)
    "kl_div": lambda m, x, y: m.nn.functional.kl_div(x, y.abs(), reduction="none"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_second_derivatives_round_as_torch(name):
    for seed in range(3):
        assert _second_derivatives(gradkit, PROGRAMS[name], seed) == \
            _second_derivatives(torch, PROGRAMS[name], seed), seed


@pytest.mark.parametrize("kind", ["integer divisor", "complex value"])
def test_addcdiv_gradient_of_tensor1_refuses_as_torchs_filled_quotient(kind):
    """torch's value / tensor2 fills a tensor like tensor2 with value and divides it in place:
    an integer tensor2 refuses the float quotient, a real one a complex value (in backward)."""
    def grads(m):
        complex_value = kind == "complex value"
        t1 = m.tensor([0.3, -1.7], dtype=m.complex128 if complex_value else m.float64,
                      requires_grad=True)
        t2 = m.tensor([3.0, -2.0], dtype=m.float64) if complex_value else m.tensor([3, -2])
        y = m.addcdiv(m.zeros(2, dtype=t1.dtype), t1, t2, value=0.7 + 0.1j if complex_value
                      else 0.7)
        return m.autograd.grad(y.abs().sum(), t1)[0]
    ours, theirs = (_outcome(lambda m=m: grads(m)) for m in (gradkit, torch))
    assert ours == theirs and ours[0] == "RuntimeError"


def _outcome(call):
    try:
        return "ok", call().detach().numpy().tolist()
    except RuntimeError as error:
        return "RuntimeError", str(error)


EXACT_POWERS = {  # bases powers of two (of four for ** 2.5), integer exponents: pow is exact
    "pow": (lambda m, x, y: m.pow(x, y), "positive"),
    "pow_number": (lambda m, x, y: m.pow(x, 2.5), "fourths"),
    "float_power": (lambda m, x, y: m.float_power(x, y), "positive"),
    "logaddexp2": (lambda m, x, y: m.logaddexp2(x, y), "signed"),
    "ldexp": (lambda m, x, y: m.ldexp(x, y), "signed"),
}


@pytest.mark.parametrize("name", sorted(EXACT_POWERS))
def test_powers_of_exact_operands_differentiate_as_torch(name):
    """Known difference (docs/torch_expectations.md, "Second derivatives of binary ops"):
    torch's float64 pow is SLEEF's, an ulp from NumPy's at times, and pow's derivatives carry
    it; where every power is exact the first and second derivatives are torch's bit for bit."""
    op, kind = EXACT_POWERS[name]

    def derivatives(m, seed):
        r = np.random.default_rng(seed)
        base = (4.0 if kind == "fourths" else 2.0) ** r.integers(-3, 4, 5)
        if kind == "signed":
            base *= r.choice([1.0, -1.0], 5)
        xs = [m.tensor(v, dtype=m.float64, requires_grad=True)
              for v in (base, r.integers(-3, 4, 5) * 1.0)]
        w, w1, w2 = (m.tensor(r.standard_normal(5), dtype=m.float64) for _ in range(3))
        g = m.autograd.grad((op(m, *xs) * w).sum(), xs, create_graph=True, allow_unused=True)
        s = sum((gi * wi).sum() for gi, wi in zip(g, (w1, w2)) if gi is not None)
        return [t.detach().numpy().view(np.int64).tolist() for t in
                (*[gi for gi in g if gi is not None], *m.autograd.grad(s, xs, allow_unused=True))
                if t is not None]
    for seed in range(5):
        assert derivatives(gradkit, seed) == derivatives(torch, seed), seed


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_target_gradient_where_input_equals_target_has_torchs_zero_sign(loss, reduction):
    """torch's target gradient is the loss's backward kernel with the operands swapped,
    (target - input) g, not the input's negated: at input == target it is a zero of g's sign
    (gradkit gave -0.0 for a positive g), in backward and under create_graph."""
    def grads(m):
        x = m.tensor([1.0, 2.0, -0.5], dtype=m.float64, requires_grad=True)
        y = m.tensor([1.0, 3.0, -0.5], dtype=m.float64, requires_grad=True)
        out = getattr(m.nn.functional, loss)(x, y, reduction=reduction)
        g = m.tensor([1.0, -2.0, -1.0], dtype=m.float64) if reduction == "none" else None
        return [np.signbit(t.detach().numpy()).tolist() + t.detach().numpy().tolist()
                for t in m.autograd.grad(out, (x, y), g, create_graph=True)]
    assert grads(gradkit) == grads(torch)


def test_mse_loss_mean_second_derivatives_are_its_backward_ops_as_torch():
    """torch's MseLossBackward0 calls the op mse_loss_backward (node MseLossBackwardBackward0),
    whose own derivative is 2 (gg g) / numel; gradkit's composite (x - y) (2 / numel) g gave
    (gg g) (2 / numel), an ulp apart (90 of 100 random programs)."""
    def derivatives(m, seed):
        r = np.random.default_rng(seed)
        xs = [m.tensor(r.standard_normal(5) * 2, dtype=m.float64, requires_grad=True)
              for _ in range(2)]
        w, w1, w2 = (m.tensor(r.standard_normal(5), dtype=m.float64) for _ in range(3))
        g = m.autograd.grad(m.nn.functional.mse_loss(*xs) * w[0], xs, create_graph=True)
        second = m.autograd.grad((g[0] * w1).sum() + (g[1] * w2).sum(), xs)
        return [t.detach().numpy().view(np.int64).tolist() for t in (*g, *second)] + \
            [t.grad_fn.name() for t in g]
    for seed in range(3):
        assert derivatives(gradkit, seed) == derivatives(torch, seed), seed
