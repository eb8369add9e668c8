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
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_second_derivatives_round_as_torch(name):
    for seed in range(3):
        assert _second_derivatives(gradkit, PROGRAMS[name], seed) == \
            _second_derivatives(torch, PROGRAMS[name], seed), seed
