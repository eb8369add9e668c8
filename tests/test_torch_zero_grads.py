"""torch's efficient zero tensors: ``sgn``'s backward of a real input is a zero tensor that the
backward formulas made of mul, div, add and views keep zero, so an inf or NaN they would have
multiplied it by stays out (``gradkit/autograd/zero_grads.py``). Compared with torch at
x = inf, where a plain zero would turn into NaN."""
import math

import numpy as np
import pytest

import gradkit
from gradkit.autograd.zero_grads import KnownZero

torch = pytest.importorskip("torch")

# f(m, x): the tensor whose sgn is differentiated; torch keeps the zero tensor through the
# first group, materializes it (then 0 * inf = NaN) in the second
KEEPS_ZERO = {
    "mul": lambda m, x: x * x, "square": lambda m, x: x.square(), "pow": lambda m, x: x ** 3,
    "exp": lambda m, x: x.exp(), "sin": lambda m, x: x.sin(), "cos": lambda m, x: x.cos(),
    "log": lambda m, x: (x * x).log(), "log1p": lambda m, x: (x * x).log1p(),
    "sqrt": lambda m, x: (x * x).sqrt(), "abs": lambda m, x: (x * x).abs(),
    "add": lambda m, x: x * x + x, "sub": lambda m, x: x * x - 1,
    "div_scalar": lambda m, x: (x * x) / 2, "scalar_base_pow": lambda m, x: 2 ** (x * x),
    "sum": lambda m, x: (x * x).sum(), "cat": lambda m, x: m.cat([x * x, x]),
    "stack": lambda m, x: m.stack([x * x, x]), "clone": lambda m, x: (x * x).clone(),
    "reshape": lambda m, x: (x * x).reshape(2, 1), "permute": lambda m, x: (x * x).reshape(
        1, 2).permute(1, 0), "unsqueeze": lambda m, x: (x * x).unsqueeze(0),
    "diag": lambda m, x: m.diag(x * x), "prod": lambda m, x: (x * x).prod(),
    "prod_dim": lambda m, x: (x * x).reshape(1, 2).prod(1, keepdim=True),  # ProdBackward1
    "amax": lambda m, x: (x * x).amax(), "logsumexp": lambda m, x: (x * x).logsumexp(0),
    "copy_": lambda m, x: m.zeros(2, dtype=x.dtype).copy_(x * x),
    "rsub_other": lambda m, x: m.rsub(m.ones((), dtype=x.dtype), x * x),  # RsubBackward0's +g
}
MATERIALIZES = {
    "neg": lambda m, x: -(x * x), "reciprocal": lambda m, x: (x * x).reciprocal(),
    "relu": lambda m, x: (x * x).relu(), "tanh": lambda m, x: (x * x).tanh(),
    "sigmoid": lambda m, x: (x * x).sigmoid(), "slice": lambda m, x: (x * x)[0:1],
    "index": lambda m, x: (x * x)[[0, 1]], "mean": lambda m, x: (x * x).mean(),
    "cumsum": lambda m, x: (x * x).cumsum(0), "flip": lambda m, x: (x * x).flip(0),
    "expand": lambda m, x: (x * x).sum().expand(2), "where": lambda m, x: m.where(
        x > 0, x * x, x), "matmul": lambda m, x: (x * x).unsqueeze(0) @ m.ones(
        2, 2, dtype=x.dtype), "softmax": lambda m, x: (x * x).softmax(0),
    # the -g of a subtracted tensor: sub's other, rsub's self, a number minus x (RsubBackward1)
    "sub_other": lambda m, x: m.ones((), dtype=x.dtype) - x * x,
    "rsub_self": lambda m, x: m.rsub(x * x, m.ones((), dtype=x.dtype)),
    "number_minus": lambda m, x: 1 - x * x,
}


def _host(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else t.detach().numpy()


def _grad_through_sgn(m, f):
    x = m.tensor([math.inf, 2.0], dtype=m.float64, requires_grad=True)
    g, = m.autograd.grad(m.sgn(f(m, x)).sum(), x)
    return _host(g)


@pytest.mark.parametrize("name", list(KEEPS_ZERO) + list(MATERIALIZES))
def test_sgn_gradient_through_other_nodes_matches_torch(name):
    f = KEEPS_ZERO.get(name) or MATERIALIZES[name]
    expected = _grad_through_sgn(torch, f)
    got = _grad_through_sgn(gradkit, f)
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got).any() == (name in MATERIALIZES)  # the table is torch's


@pytest.mark.parametrize("f", [
    lambda m, x: (x * x).abs(),  # fuzz special 83301
    lambda m, x: x.var().abs() if x.ndim else (x * 1).abs(),
    lambda m, x: (x.sin() * x).abs() + x,  # 99269
], ids=["abs_of_square", "abs_of_var", "abs_of_sin_times_x"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 2.0])
def test_abs_double_backward_matches_torch(f, value):
    """The second derivative of abs: its first derivative's ``sgn`` contributes torch's zero
    tensor, not 0 * (an inf or NaN upstream)."""
    def second(m):
        x = m.tensor(value, dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(f(m, x), x, create_graph=True)
        gg, = m.autograd.grad(g, x, allow_unused=True)
        return _host(g), None if gg is None else _host(gg)
    expected, got = second(torch), second(gradkit)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


def test_known_zeros_leave_the_engine_as_plain_writable_zeros():
    """Hooks, ``.grad`` and ``autograd.grad`` see ordinary zeros: writing into them in a hook
    cannot turn a known zero into a wrong value."""
    x = gradkit.tensor([2.0, -3.0], requires_grad=True)
    y = x * 1
    y.register_hook(lambda g: g.add_(5.0))  # the sgn gradient arrives here as zeros
    gradkit.sgn(y).sum().backward()
    assert type(x.grad.numpy()) is np.ndarray
    assert x.grad.tolist() == [5.0, 5.0]
    g, = gradkit.autograd.grad(gradkit.sgn(x * 2).sum(), x)
    assert type(g.numpy()) is np.ndarray and type(g.numpy()) is not KnownZero
    assert g.tolist() == [0.0, 0.0]


# g(m, y): nodes that keep the zero tensor for some inputs only (zero_grads.KNOWN_ZERO_BY_INPUT)
# or for their one input; y is x itself or sqrt(x), whose derivative at 0 is inf
BY_INPUT = {
    "pow_base": lambda m, y: y ** y.detach(), "pow_exponent": lambda m, y: y.detach() ** y,
    "pow_by_0d_tensor": lambda m, y: y ** m.tensor(0.87, dtype=m.float64),
    "pow_both": lambda m, y: y ** y, "div_dividend": lambda m, y: y / y.detach(),
    "div_divisor": lambda m, y: y.detach() / y, "div_both": lambda m, y: y / y,
    "xlogy_x": lambda m, y: m.xlogy(y, y.detach()), "xlogy_y": lambda m, y: m.xlogy(y.detach(), y),
    "xlogy_number_x": lambda m, y: m.xlogy(2.0, y), "xlogy_number_y": lambda m, y: m.xlogy(y, 2.0),
    "xlog1py_x": lambda m, y: m.special.xlog1py(y, y.detach()),
    "xlog1py_y": lambda m, y: m.special.xlog1py(y.detach(), y),
    "xlog1py_number_x": lambda m, y: m.special.xlog1py(2.0, y),
    "xlog1py_number_y": lambda m, y: m.special.xlog1py(y, 2.0),
    "log10": lambda m, y: m.log10(y), "acos": lambda m, y: m.acos(y),
    "acosh": lambda m, y: m.acosh(y), "asinh": lambda m, y: m.asinh(y),
    "atanh": lambda m, y: m.atanh(y), "erfc": lambda m, y: m.erfc(y),
    "erfinv": lambda m, y: m.erfinv(y), "lgamma": lambda m, y: m.lgamma(y),
    "digamma": lambda m, y: m.digamma(y), "sinc": lambda m, y: m.sinc(y),
}


def _values(t) -> np.ndarray:
    """A gradient's values; torch's zero tensor (no storage to read) is zeros."""
    try:
        return np.array(t.detach().tolist())
    except RuntimeError:
        assert t._is_zerotensor()
        return np.zeros(t.shape)


@pytest.mark.parametrize("upstream", ["leaf", "sqrt"])
@pytest.mark.parametrize("name", list(BY_INPUT))
def test_zero_tensor_kept_per_input_as_torch(name, upstream):
    """torch's PowBackward1 passes the zero tensor to the exponent but gives the base plain
    zeros (a where() selects), DivBackward0 passes it to the dividend only, XlogyBackward0 to
    y only, SincBackward0 selects plain zeros; log10, acos & co. pass it (special seeds
    1384749: the second derivative of abs(x ** e) at x = -0.0 was NaN, torch's -inf; 1444237:
    abs(y / x)'s was -inf, torch's NaN)."""
    def gradient(m):
        x = m.tensor([0.0, 0.25, 4.0, math.inf, 1.0], dtype=m.float64, requires_grad=True)
        y = x if upstream == "leaf" else m.sqrt(x)
        return _values(m.autograd.grad(BY_INPUT[name](m, y).sgn().sum(), x)[0])
    np.testing.assert_array_equal(gradient(gradkit), gradient(torch))


def test_abs_of_a_power_by_a_0d_tensor_second_derivative_at_minus_zero():
    """Fuzz special seed 1384749: abs(x ** e) with e a 0-d tensor, at x = -0.0."""
    def second(m):
        x = m.tensor([-0.0, 0.3], dtype=m.float64, requires_grad=True)
        power = x ** m.tensor(0.8769435928115299, dtype=m.float64)
        g, = m.autograd.grad((0.7 * power + 1.3 * power.abs()).sum(), x, create_graph=True)
        gg, = m.autograd.grad(g.sum(), x)
        return _host(g), _host(gg)
    expected, got = second(torch), second(gradkit)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


# f(m, x) of x = [v, 1]: the nodes breadth seed 1099941's probe (120 functions) added to
# PASSES_KNOWN_ZERO / KNOWN_ZERO_BY_INPUT; x * x is inf (or NaN) at v, so a plain zero gives NaN
PROBED = {
    "xlog1py_number_x": lambda m, x: m.special.xlog1py(math.inf, x * x),
    "xlog1py_number_y": lambda m, x: m.special.xlog1py(x * x, math.inf),  # runs: NaN
    "xlog1py_both": lambda m, x: m.special.xlog1py(x * x, x * x),
    "xlogy_number_x": lambda m, x: m.xlogy(math.inf, x * x),
    "xlogy_number_y": lambda m, x: m.xlogy(x * x, math.inf),  # runs: NaN
    "polygamma": lambda m, x: m.polygamma(1, x * x), "mvlgamma": lambda m, x: m.mvlgamma(
        x * x + 2, 1), "i0": lambda m, x: m.i0(x * x), "i0e": lambda m, x: m.special.i0e(x * x),
    "i1": lambda m, x: m.special.i1(x * x), "erfcx": lambda m, x: m.special.erfcx(x * x),
    "ndtri": lambda m, x: m.special.ndtri(x * x), "entr": lambda m, x: m.special.entr(x * x),
    "deg2rad": lambda m, x: m.deg2rad(x * x), "rad2deg": lambda m, x: m.rad2deg(x * x),
    "ldexp": lambda m, x: m.ldexp(x * x, m.tensor([1, 1])),
    "logaddexp": lambda m, x: m.logaddexp(x * x, x), "logaddexp2": lambda m, x: m.logaddexp2(
        x, x * x), "copysign": lambda m, x: m.copysign(x * x, x * x),
    "nan_to_num": lambda m, x: m.nan_to_num(x * x), "frac": lambda m, x: m.frac(x * x),
    "nansum": lambda m, x: m.nansum(x * x), "cumprod": lambda m, x: m.cumprod(x * x, 0),
    "dist": lambda m, x: m.dist(x * x, x), "dist_broadcast": lambda m, x: m.dist(
        x * x, x[:1]), "view_as_complex": lambda m, x: m.view_as_complex(
        m.stack([x * x, x * x], -1)).abs(),
}


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e200, 0.0])
@pytest.mark.parametrize("name", list(PROBED))
def test_zero_tensor_through_probed_nodes_as_torch(name, value):
    def gradient(m):
        x = m.tensor([value, 1.0], dtype=m.float64, requires_grad=True)
        return _values(m.autograd.grad(m.sgn(PROBED[name](m, x)).sum(), x)[0])
    np.testing.assert_array_equal(gradient(gradkit), gradient(torch))
