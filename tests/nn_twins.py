"""Helpers of the nn-module tests against torch: a gradkit module holding a torch module's
parameters, a run of both on the same inputs comparing every output and gradient, and the
error both raise. Tests that use it import torch first (pytest.importorskip)."""
import numpy as np
import pytest

import gradkit


def twins(torch, make):
    """``make(lib)`` in both libraries, gradkit's holding torch's parameters (float64), after
    checking that state_dict keys, parameter shapes and repr agree."""
    torch.manual_seed(0)
    theirs = make(torch).double()
    ours = make(gradkit).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [tuple(p.shape) for p in ours.parameters()] == \
        [tuple(p.shape) for p in theirs.parameters()]
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: gradkit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def flat(result) -> list:
    """The tensors of a nested result, in order (None left out)."""
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in flat(item)]
    return [] if result is None else [result]


def same(ours, theirs, rtol=1e-10, atol=1e-12) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                               atol=atol)


def _convert(value, lib, grad: bool):
    if isinstance(value, tuple):
        return tuple(_convert(v, lib, grad) for v in value)
    if value is None or not isinstance(value, np.ndarray):
        return value
    return lib.tensor(value, requires_grad=grad and value.dtype == np.float64)


def compare(torch, make, inputs, kwargs=None, training=False, grad_inputs=True):
    """Run both modules on ``inputs`` (numpy arrays, tuples of them, or plain values) and
    ``kwargs`` (arrays become tensors without grad), backpropagate the same seeds, and compare
    every output, every parameter's gradient and every float input's gradient."""
    ours, theirs = twins(torch, make)
    ours.train(training)
    theirs.train(training)
    kwargs = kwargs or {}
    g_in = [_convert(v, gradkit, grad_inputs) for v in inputs]
    t_in = [_convert(v, torch, grad_inputs) for v in inputs]
    g_out = flat(ours(*g_in, **{k: _convert(v, gradkit, False) for k, v in kwargs.items()}))
    t_out = flat(theirs(*t_in, **{k: _convert(v, torch, False) for k, v in kwargs.items()}))
    assert len(g_out) == len(t_out)
    for g, t in zip(g_out, t_out, strict=True):
        same(g, t)
    g_out = [g for g in g_out if g.requires_grad]
    t_out = [t for t in t_out if t.requires_grad]
    rng = np.random.default_rng(1)
    seeds = [rng.standard_normal(tuple(t.shape)) for t in t_out]
    gradkit.autograd.backward(g_out, [gradkit.tensor(s) for s in seeds])
    torch.autograd.backward(t_out, [torch.tensor(s) for s in seeds])
    for g, t in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert (g.grad is None) == (t.grad is None)
        if t.grad is not None:
            same(g.grad, t.grad)
    for g, t in zip(flat(g_in), flat(t_in), strict=True):
        if getattr(t, "requires_grad", False):
            same(g.grad, t.grad)
    return ours, theirs


def errors(torch, make, call) -> list:
    """(type, message) of the exception of ``call(make(lib), lib)`` in torch, then gradkit;
    torch's "torch." in the message reads "gradkit."."""
    found = []
    for lib in (torch, gradkit):
        with pytest.raises(Exception) as info:
            call(make(lib), lib)
        found.append((type(info.value), str(info.value).replace("torch.", "gradkit.")))
    return found
