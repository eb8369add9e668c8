"""Helpers of the tests rerunning torch's test/test_nn.py (characters 320k-480k) on gradkit:
modules whose parameters are set from NumPy data, so both libraries hold the same numbers."""
import numpy as np

from tests.tensor_twins import data


def filled(module, m, seed: int = 0):
    """``module`` with every parameter and floating buffer overwritten by deterministic data
    (buffers named running_var get positive values)."""
    with m.no_grad():
        for i, (name, p) in enumerate(list(module.named_parameters())
                                      + list(module.named_buffers())):
            if not p.is_floating_point():
                continue
            values = data(*p.shape, seed=seed + i)
            if name.endswith("running_var"):
                values = np.abs(values) + 0.5
            p.copy_(m.tensor(values, dtype=p.dtype))
    return module


def leaf(m, *shape, seed: int = 0, dtype=None):
    """A float64 leaf tensor that requires grad (``dtype`` casts it first)."""
    t = m.tensor(data(*shape, seed=seed), dtype=dtype or m.float64)
    return t.requires_grad_()


def grads(m, out, inputs, seed: int = 7):
    """The gradients of ``inputs`` when ``out`` is backpropagated with a fixed seed."""
    g = m.tensor(data(*out.shape, seed=seed), dtype=out.dtype)
    return m.autograd.grad(out, inputs, g, allow_unused=True)
