"""Differences found in the twenty-third session (fuzzer seeds and the scans they led to), each
program run in gradkit and in torch 2.13 (skipped without torch)."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _bits(array) -> list:
    """Each value exactly, a NaN as 'nan' and a zero with its sign."""
    return ["nan" if math.isnan(v) else repr(float(v)) for v in np.asarray(array).ravel()]


def _logit_gradient(lib, eps, create_graph: bool, forward: bool, grad_mode: bool) -> list:
    x = lib.tensor([-0.0, 0.0, 1.0, 0.5, 2.0, -1e-310, math.nan], dtype=lib.float64)
    v = lib.tensor([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0], dtype=lib.float64)
    args = () if eps is None else (eps,)
    if forward:
        fa = lib.autograd.forward_ad
        with fa.dual_level(), lib.set_grad_enabled(grad_mode):
            return _bits(fa.unpack_dual(lib.logit(fa.make_dual(x, v), *args)).tangent.numpy())
    x.requires_grad_()
    g, = lib.autograd.grad(lib.logit(x, *args), x, v, create_graph=create_graph)
    return _bits(g.detach().numpy())


@pytest.mark.parametrize("eps", [None, -1.0, 0.0, 0.1])
@pytest.mark.parametrize("create_graph,forward,grad_mode",
                         [(False, False, True), (True, False, True), (False, True, True),
                          (False, True, False)])
def test_logit_gradient_at_zero_is_torchs(eps, create_graph, forward, grad_mode):
    """wide seed 271624: the logit_ of a -0.0 with upstream -1 had gradient +inf here and -inf
    in torch. Without grad mode torch runs its kernel, which gives dy * inf at x = 0 whatever
    the zero's sign; with grad mode, its composite formula divides by x (1 - x), -0.0 there."""
    assert _logit_gradient(gradkit, eps, create_graph, forward, grad_mode) == \
        _logit_gradient(torch, eps, create_graph, forward, grad_mode)
