"""The op table against torch: same forward values, same gradients, on the same samples."""
import numpy as np
import pytest

import gradkit
from op_db import (
    bind, cases, differentiable_outputs, flat_outputs, gradkit_tensor, torch_function,
    torch_tensor)

torch = pytest.importorskip("torch")

CASES = [c for c in cases() if torch_function(c[1]) is not None]


def _host(t):
    if isinstance(t, gradkit.Tensor):
        return t.detach().resolve_conj().numpy()  # a conj view stays one when detached
    return t.detach().resolve_conj().numpy(force=True)  # force: torch's ZeroTensor grads


def _seeds(outputs, rng):
    """One random cotangent per differentiable output (complex where the output is)."""
    seeds = []
    for o in outputs:
        v = rng.standard_normal(tuple(o.shape))
        if o.dtype.is_complex:
            v = v + 1j * rng.standard_normal(tuple(o.shape))
        seeds.append(np.asarray(v))
    return seeds


@pytest.mark.filterwarnings("ignore:Using padding='same'")  # torch's own performance note
@pytest.mark.filterwarnings("ignore:The use of `x.T`", "ignore:Tensor.T is deprecated")
@pytest.mark.parametrize("info,sample", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_forward_and_gradients_match_torch(info, sample):
    leaves, call = bind(info.op, sample, gradkit_tensor)
    t_leaves, t_call = bind(torch_function(info), sample, torch_tensor)
    out, t_out = call(*leaves), t_call(*t_leaves)
    got, expected = flat_outputs(out), flat_outputs(t_out)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert tuple(g.shape) == tuple(e.shape)
        assert str(g.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
        np.testing.assert_allclose(_host(g), _host(e), rtol=1e-7, atol=1e-10)
    if not info.check_torch_grad:
        return
    outs, t_outs = differentiable_outputs(out), differentiable_outputs(t_out)
    seeds = _seeds(outs, np.random.default_rng(0))
    grads = gradkit.autograd.grad(outs, leaves, [gradkit.tensor(s) for s in seeds],
                                  allow_unused=True)
    t_grads = torch.autograd.grad(t_outs, t_leaves, [torch.tensor(s) for s in seeds],
                                  allow_unused=True)
    for g, e in zip(grads, t_grads, strict=True):
        if e is None:
            assert g is None or not np.any(_host(g))
            continue
        np.testing.assert_allclose(_host(g), _host(e), rtol=1e-7, atol=1e-10)
