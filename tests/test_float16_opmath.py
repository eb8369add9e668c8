"""float16 tensors with Python float operands, compared bit for bit with torch 2.13: torch's
CPU kernels compute in float32 (their "opmath") with the number unrounded and round the result
once, where NumPy rounds the number to float16 first (a third of products were an ulp off;
floor and trunc division too).
A number given first (``torch.mul(2.5, x)``) is a wrapped 0-d tensor in torch, rounded to
float16, and an ``alpha`` is rounded to float16 too; both as torch."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(16)
X = (RNG.standard_normal(1024) * 10).astype(np.float16)  # a multiple of torch's vector width:
Y = (RNG.standard_normal(1024) * 10).astype(np.float16)  # its scalar tail rounds alpha twice

PROGRAMS = {
    "mul": lambda lib, x, y, s: x * s, "rmul": lambda lib, x, y, s: s * x,
    "mul_number_first": lambda lib, x, y, s: lib.mul(s, x),
    "mul_": lambda lib, x, y, s: x.clone().mul_(s),
    "div": lambda lib, x, y, s: x / s, "rdiv": lambda lib, x, y, s: s / x,
    "div_number_first": lambda lib, x, y, s: lib.div(s, x),
    "div_": lambda lib, x, y, s: x.clone().div_(s),
    "add_alpha": lambda lib, x, y, s: x.add(y, alpha=s),
    "sub_alpha": lambda lib, x, y, s: lib.sub(x, y, alpha=s),
    "lerp": lambda lib, x, y, s: x.lerp(y, s / 10), "lerp_big": lambda lib, x, y, s: x.lerp(y, s),
    "lerp_": lambda lib, x, y, s: x.clone().lerp_(y, s / 10),
    "addcmul": lambda lib, x, y, s: x.addcmul(y, x, value=s),
    "addcdiv": lambda lib, x, y, s: x.addcdiv(y, x, value=s),
    "add": lambda lib, x, y, s: x + s, "rsub": lambda lib, x, y, s: s - x,
    # floor and trunc division too (an ulp of the quotient off, 382 in 9069 float16 values)
    "floordiv": lambda lib, x, y, s: x // s, "floor_divide": lambda lib, x, y, s:
    lib.floor_divide(x, s), "floor_divide_": lambda lib, x, y, s: x.clone().floor_divide_(s),
    "div_floor": lambda lib, x, y, s: x.div(s, rounding_mode="floor"),
    "div_trunc": lambda lib, x, y, s: x.div(s, rounding_mode="trunc"),
    "floordiv_0d": lambda lib, x, y, s: x // lib.tensor(s),
    "rfloordiv": lambda lib, x, y, s: s // x,
}


@pytest.mark.parametrize("number", [math.pi, 1 / 3, 0.1, 2.7182818, 7.1])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_float16_with_a_python_float_as_torch(name, number):
    ours, theirs = (PROGRAMS[name](lib, lib.tensor(X), lib.tensor(Y), number).numpy()
                    for lib in (gradkit, torch))
    assert ours.dtype == theirs.dtype == np.float16
    np.testing.assert_array_equal(ours, theirs)


def test_float16_gradients_keep_their_dtype():
    x = gradkit.tensor(X[:8], requires_grad=True)
    (x * math.pi).sum().backward()
    assert x.grad.dtype == gradkit.float16
    np.testing.assert_array_equal(x.grad.numpy(), np.full(8, np.float16(math.pi)))


# where exp(beta * x) overflows float16 (from 11.1 on) below softplus's threshold: its
# gradient was inf / inf = NaN (found by torch's module table, Softplus(beta=2) at float16)
@pytest.mark.parametrize("name,options", [
    ("softplus", {}), ("softplus", {"beta": 2.0}), ("softplus", {"beta": 0.5}), ("elu", {}),
    ("celu", {"alpha": 0.5}), ("selu", {}), ("silu", {}), ("mish", {}), ("gelu", {}),
    ("logsigmoid", {}), ("hardswish", {}), ("sigmoid", {}), ("tanh", {})])
def test_float16_activation_gradients_as_torch(name, options):
    x = np.concatenate([np.linspace(-60, 60, 481), [-1e4, 1e4, 65000]]).astype(np.float16)
    grads = []
    for lib in (gradkit, torch):
        leaf = lib.tensor(x, requires_grad=True)
        getattr(lib.nn.functional, name)(leaf, **options).sum().backward()
        grads.append(leaf.grad.numpy())
    assert grads[0].dtype == np.float16
    np.testing.assert_allclose(grads[0].astype(float), grads[1].astype(float), rtol=2e-3,
                               atol=2e-3)
