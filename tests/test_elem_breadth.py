"""torch API breadth, run as the same program in torch and gradkit: the inverse hyperbolic
functions, in-place variants (comparisons, logical, triangular, in-place view ops) and small
Tensor/torch helpers. Values, dtypes, gradients and error messages must agree."""
import pytest

from test_torch_numerics import assert_same_as_torch

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _grads(fn, values, dtype="float64"):
    """A program: fn of one leaf made from ``values``, returning (fn(x), d sum(fn(x)) / dx)."""
    def program(m):
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        out = fn(m, x)
        grad, = m.autograd.grad(out.real.sum() if out.is_complex() else out.sum(), x)
        return out, grad
    return program


# -- acosh, asinh, atanh ---------------------------------------------------------------------
INVERSE_HYPERBOLIC = ("acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh")


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
def test_inverse_hyperbolic_values_and_gradients_at_the_domain_edges(name):
    # ±1 and 0 are where 1/sqrt(x² - 1) and 1/(1 - x²) blow up; 2 and -2 lie outside atanh's
    # domain and on both sides of acosh's
    edges = [1.0, -1.0, 0.0, 0.5, -0.5, 2.0, -2.0, 1e-8, INF, -INF, NAN]
    assert_same_as_torch(_grads(lambda m, x: getattr(m, name)(x), edges))
    assert_same_as_torch(_grads(lambda m, x: getattr(x, name)(), edges))


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
@pytest.mark.parametrize("dtype", ("int64", "bool", "float16", "float32", "complex64"))
def test_inverse_hyperbolic_dtypes(name, dtype):
    values = [0, 1, 1, 0] if dtype == "bool" else [0, 1, 2, -1]
    assert_same_as_torch(lambda m: getattr(m, name)(m.tensor(values, dtype=getattr(m, dtype))),
                         rtol=1e-3)


@pytest.mark.parametrize("name", ("acosh", "asinh", "atanh"))
def test_complex_gradients_follow_torchs_formula_in_every_quadrant(name):
    # acosh: rsqrt(z + 1) rsqrt(z - 1) for complex z, not the real formula's rsqrt(z² - 1),
    # which flips the sign where Re z < 0
    values = [-0.5 + 0.3j, 0.2 - 1j, -2 + 0.1j, -2 - 0.1j, 0.5 + 0j, 3 + 2j]
    assert_same_as_torch(_grads(lambda m, x: getattr(m, name)(x), values, "complex128"))


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
def test_inverse_hyperbolic_in_place_forms(name):
    def program(m):
        x = m.tensor([0.25, -0.5, 0.75], dtype=m.float64)
        out = getattr(x, name + "_")()
        z = m.tensor([0.125, 0.5])
        top = getattr(m, name + "_")(z)
        return x, z, top, m.tensor([out is x, top is z, x._version == 1])
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
def test_inverse_hyperbolic_in_place_records_a_node_whose_backward_raises(name):
    # torch has no derivative for acosh_, asinh_, atanh_ (AcoshBackward1 & co.)
    def backward(m):
        x = m.tensor([1.25, 1.5], dtype=m.float64, requires_grad=True)
        y = x * 1
        getattr(y, name + "_")()
        assert y.grad_fn.name() == name.replace("arc", "a").capitalize() + "Backward1"
        return m.autograd.grad(y.sum(), x)

    def forward_mode(m):
        with m.autograd.forward_ad.dual_level():
            x = m.autograd.forward_ad.make_dual(m.tensor([1.25, 1.5], dtype=m.float64),
                                                m.ones(2, dtype=m.float64))
            return getattr(x * 1, name + "_")()
    assert_same_as_torch(backward)
    assert_same_as_torch(forward_mode)


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
def test_inverse_hyperbolic_in_place_refusals(name):
    def on_leaf(m):
        return getattr(m.tensor([0.5], requires_grad=True), name + "_")()

    def on_integers(m):
        return getattr(m.tensor([1, 2]), name + "_")()
    assert_same_as_torch(on_leaf)
    assert_same_as_torch(on_integers)


def test_inverse_hyperbolic_double_backward_matches_torch():
    def program(m):
        x = m.tensor([0.3, -0.6, 1.5, 2.5], dtype=m.float64, requires_grad=True)
        outs = []
        for name, scale in (("asinh", 1.0), ("atanh", 0.5), ("acosh", 2.0)):
            y = getattr(m, name)(x * scale if name != "acosh" else x.abs() + 1.25)
            g, = m.autograd.grad(y.sum(), x, create_graph=True)
            gg, = m.autograd.grad(g.sum(), x)
            outs += [g, gg]
        return tuple(outs)
    assert_same_as_torch(program)
