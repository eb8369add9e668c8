"""The benchmarks' hand-written NumPy baselines compute what the autograd workloads compute,
so that "x times hand NumPy" compares the same work (tests/benchmarks/workloads.py)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import gradkit

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "benchmarks"))
import workloads  # noqa: E402


def test_hand_numpy_mlp_step_gives_gradkits_loss_and_gradients():
    rng = np.random.default_rng(0)
    x, y = workloads.mlp_data(rng, 32)
    raw = workloads.mlp_params(None, rng)
    params = [gradkit.tensor(p, requires_grad=True) for p in raw]
    loss = workloads.mlp_step(gradkit, params, gradkit.tensor(x), gradkit.tensor(y))
    hand_loss, hand_grads = workloads.mlp_step_numpy(raw, x, y)
    np.testing.assert_allclose(loss.item(), hand_loss, rtol=1e-5)
    for p, g in zip(params, hand_grads):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-4, atol=1e-6)


def test_hand_numpy_rnn_step_gives_gradkits_loss_and_gradients():
    rng = np.random.default_rng(1)
    raw = workloads.rnn_params(None, rng)
    for p in raw[2::3]:  # non-zero biases, so that their gradients are checked too
        p += rng.standard_normal(p.shape).astype(p.dtype) * 0.1
    xs = workloads.rnn_data(rng)
    params = [gradkit.tensor(p, requires_grad=True) for p in raw]
    loss = workloads.rnn_step(gradkit, params, gradkit.tensor(xs))
    hand_loss, hand_grads = workloads.rnn_step_numpy(raw, xs)
    np.testing.assert_allclose(loss.item(), hand_loss, rtol=1e-5)
    assert all(np.abs(g).max() > 0 for g in hand_grads)
    for p, g in zip(params, hand_grads):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-3, atol=1e-7)


def test_rnn_step_gives_torchs_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    raw = workloads.rnn_params(None, rng)
    xs = workloads.rnn_data(rng)
    ours = [gradkit.tensor(p, requires_grad=True) for p in raw]
    theirs = [torch.tensor(p, requires_grad=True) for p in raw]
    workloads.rnn_step(gradkit, ours, gradkit.tensor(xs))
    workloads.rnn_step(torch, theirs, torch.tensor(xs))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-3, atol=1e-7)
