"""Forward mode agrees with reverse mode on the op table: <u, J v> == <J^T u, v>.

J v comes from gradkit.autograd.forward_ad (each op's jvp rule, or the fallback
the forward-AD engine derives); J^T u from the op's vjp rules. Inner products are
real parts of sum(conj(a) * b), the convention under which both agree for complex ops.
"""
import numpy as np
import pytest

import gradkit
import gradkit.autograd.forward_ad as fwad
from op_db import bind, cases, differentiable_outputs, gradkit_tensor

CASES = cases()


def _random_like(t, rng):
    v = rng.standard_normal(tuple(t.shape))
    if t.dtype.is_complex:
        v = v + 1j * rng.standard_normal(tuple(t.shape))
    return gradkit.tensor(np.asarray(v), dtype=t.dtype)


def _real_inner(a, b) -> float:
    a, b = (t.detach().resolve_conj().numpy() for t in (a, b))
    return float(np.real(np.sum(np.conj(a) * b)))


@pytest.mark.parametrize("info,sample", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_jvp_is_the_adjoint_of_vjp(info, sample):
    if "nonsmooth" in info.extra:  # the vjp departs from the true derivative on purpose
        pytest.skip(info.extra["nonsmooth"])
    if "no_forward_ad" in info.extra:
        pytest.skip(info.extra["no_forward_ad"])
    rng = np.random.default_rng(0)
    leaves, call = bind(info.op, sample, gradkit_tensor)
    tangents = [_random_like(x, rng) for x in leaves]
    with fwad.dual_level():
        duals = [fwad.make_dual(x.detach(), v) for x, v in zip(leaves, tangents, strict=True)]
        outs = differentiable_outputs(call(*duals))
        jv = [fwad.unpack_dual(o).tangent for o in outs]
    outs = differentiable_outputs(call(*leaves))
    seeds = [_random_like(o, rng) for o in outs]
    vjps = gradkit.autograd.grad(outs, leaves, seeds, allow_unused=True)
    forward = sum(_real_inner(u, t) for u, t in zip(seeds, jv, strict=True) if t is not None)
    reverse = sum(_real_inner(g, v) for g, v in zip(vjps, tangents, strict=True)
                  if g is not None)
    assert forward == pytest.approx(reverse, rel=1e-9, abs=1e-10)
