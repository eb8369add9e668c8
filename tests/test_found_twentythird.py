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


def _norm_and_derivatives(lib, p: float, v: float, shape: tuple, dim) -> list:
    x = lib.full(shape, v, dtype=lib.float64, requires_grad=True)
    y = lib.linalg.vector_norm(x, p, dim=dim)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    return _bits(y.detach().numpy()) + _bits(g.detach().numpy()) + _bits(gg.numpy())


@pytest.mark.parametrize("p", [2.0, 3.0, 1.5, -2.0])
@pytest.mark.parametrize("shape,dim", [((), None), ((), -1), ((), 0), ((), []), ((), (0,)),
                                       ((1,), None), ((1,), -1), ((1, 1), (0, 1))])
def test_the_norm_of_one_element_is_torchs(p, shape, dim):
    """wide seed 294545 (a triplet margin loss of 0-d tensors, so pairwise_distance's norm over
    dim -1 of a 0-d tensor): torch's norm of one element is its |x|, but a 0-d tensor's over
    a named dim is reduced as any other, (|x|^p)^(1/p), and sqrt(x²) for p = 2 (inf at
    1e300). gradkit took |x| for every one-element norm."""
    for v in (1e-6, 1e300, 2.5, -1e-200):
        assert _norm_and_derivatives(gradkit, p, v, shape, dim) == \
            _norm_and_derivatives(torch, p, v, shape, dim)


def test_pairwise_distance_of_0d_tensors_is_torchs():
    """The seed's own call: the distance of 0-d tensors reduces their difference + eps."""
    def distance(lib):
        x = lib.tensor(-0.53, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.pairwise_distance(x, x * 1, p=3.0)
        g, = lib.autograd.grad(y, x, create_graph=True)
        return _bits(y.detach().numpy()) + _bits(lib.autograd.grad(g, x)[0].numpy())
    assert distance(gradkit) == distance(torch)
