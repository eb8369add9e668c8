"""autograd.functional: vjp jvp jacobian hessian hvp vhp — closed forms, torch parity, errors."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd import functional as F  # noqa: N812 - torch idiom


def f64(values, requires_grad=False):
    return gradkit.tensor(values, dtype=gradkit.float64, requires_grad=requires_grad)


def as_numpy(result):
    """Nested tuples of tensors -> nested tuples of arrays (for either library)."""
    if isinstance(result, (tuple, list)):  # torch's vectorized jacobian may give lists
        return tuple(as_numpy(r) for r in result)
    return result if isinstance(result, np.ndarray) else result.detach().numpy()


def assert_same(ours, theirs):
    ours, theirs = as_numpy(ours), as_numpy(theirs)
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert_same(a, b)
        return
    assert not isinstance(ours, tuple)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


X = np.array([0.5, -1.0, 2.0])
Y = np.array([[1.0, 0.5], [-0.5, 2.0]])
V3 = np.array([1.0, 2.0, -1.0])


def single(lib):
    return lambda x: (x.sin() * x.sum()).exp()


def pair(lib):
    return lambda x, y: ((x[:2] * y).sum(0) ** 2, (x * 2).tanh())


def scalar_of_pair(lib):
    return lambda x, y: (x[:2] @ y @ x[:2].exp()) + (x ** 3).sum()


def _call(lib, fn_name, factory, inputs, *args, **kwargs):
    tensors = tuple(lib.tensor(a, dtype=lib.float64) for a in inputs)
    fn = getattr(lib.autograd.functional, fn_name)
    args = tuple(tuple(lib.tensor(b, dtype=lib.float64) for b in a) if isinstance(a, tuple)
                 else lib.tensor(a, dtype=lib.float64) for a in args)
    return fn(factory(lib), tensors[0] if len(tensors) == 1 else tensors, *args, **kwargs)


CASES = [
    ("vjp", single, (X,), (V3,)),
    ("vjp", pair, (X, Y), ((np.array([1.0, -1.0]), V3),)),
    ("jvp", single, (X,), (V3,)),
    ("jvp", pair, (X, Y), ((V3, np.ones((2, 2))),)),
    ("jacobian", single, (X,), ()),
    ("jacobian", pair, (X, Y), ()),
    ("hessian", lambda lib: lambda x: (x.exp() * x.sum()).sum(), (X,), ()),
    ("hessian", scalar_of_pair, (X, Y), ()),
    ("hvp", scalar_of_pair, (X, Y), ((V3, np.ones((2, 2))),)),
    ("vhp", scalar_of_pair, (X, Y), ((V3, np.ones((2, 2))),)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[2])}in")
def test_same_results_and_structure_as_torch(case):
    torch = pytest.importorskip("torch")
    name, factory, inputs, args = case
    ours = _call(gradkit, name, factory, inputs, *args)
    theirs = _call(torch, name, factory, inputs, *args)
    assert_same(ours, theirs)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
@pytest.mark.parametrize("factory", [single, pair], ids=["single", "pair"])
def test_vectorized_jacobian_strategies(strategy, factory):
    torch = pytest.importorskip("torch")
    inputs = (X,) if factory is single else (X, Y)
    kw = dict(vectorize=True, strategy=strategy)
    assert_same(_call(gradkit, "jacobian", factory, inputs, **kw),
                _call(torch, "jacobian", factory, inputs, **kw))


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_hessian_of_quadratic_form_is_the_matrix(strategy):
    a = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.5, -1.0, 4.0]])
    matrix = f64(a)
    h = F.hessian(lambda x: 0.5 * (x @ (matrix @ x)), f64(X), vectorize=True,
                  outer_jacobian_strategy=strategy)
    np.testing.assert_allclose(h.detach().numpy(), a, rtol=1e-12)
    _, hv = F.hvp(lambda x: 0.5 * (x @ (matrix @ x)), f64(X), f64(V3))
    np.testing.assert_allclose(hv.numpy(), a @ V3, rtol=1e-12)


def test_jacobian_of_linear_map_is_the_matrix():
    a = np.arange(6.0).reshape(2, 3)
    jac = F.jacobian(lambda x: f64(a) @ x, f64(X))
    np.testing.assert_array_equal(jac.numpy(), a)


def test_jvp_vjp_transposition_identity():
    fn = single(gradkit)
    u = np.array([0.3, -0.7, 1.1])
    _, jv = F.jvp(fn, f64(X), f64(V3))
    _, vj = F.vjp(fn, f64(X), f64(u))
    assert float(jv @ f64(u)) == pytest.approx(float(vj @ f64(V3)), rel=1e-12)


def test_create_graph_results_are_differentiable():
    x = f64(X, requires_grad=True)
    _, hv = F.hvp(lambda t: (t ** 3).sum(), x, f64(V3), create_graph=True)
    assert hv.requires_grad
    g, = gradkit.autograd.grad(hv.sum(), x)   # d/dx sum(6 x v) = 6 v
    np.testing.assert_allclose(g.numpy(), 6 * V3)
    _, plain = F.hvp(lambda t: (t ** 3).sum(), x, f64(V3))
    assert not plain.requires_grad


def test_unused_inputs_give_zeros_or_strict_errors():
    fn = lambda x, y: x * 2  # noqa: E731 - y unused
    _, grads = F.vjp(fn, (f64(X), f64(Y)), f64(V3))
    assert not grads[1].numpy().any()
    with pytest.raises(RuntimeError, match="The output of the user-provided function is "
                       "independent of input 1. This is not allowed in strict mode."):
        F.vjp(fn, (f64(X), f64(Y)), f64(V3), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                       "require gradients"):
        F.vjp(lambda x: f64(X), f64(X), f64(V3), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                       "independent of input 1"):
        F.jacobian(fn, (f64(X), f64(Y)), strict=True)
    with pytest.raises(RuntimeError, match="the jacobian of the user-provided function with "
                       "respect to input 0 is independent of the input"):
        F.hessian(lambda x: (x * 2).sum(), f64(X), strict=True)


def test_argument_errors():
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor or a "
                       "tuple of Tensors but the given inputs has type <class 'int'>"):
        F.vjp(lambda x: x, 3)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jvp "
                       "must be either a Tensor or a tuple of Tensors"):
        F.jvp(lambda x: 3, f64(X), f64(V3))
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided "
                       "function returns a single Tensor with a single element."):
        F.vjp(lambda x: x * 2, f64(X))
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the "
                       "user-provided function is a single Tensor with a single element."):
        F.hvp(lambda x: x.sum(), f64(X))
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be gradkit.Size\(\[3\]\) "
                       r"but got gradkit.Size\(\[2\]\)"):
        F.vjp(lambda x: x * 2, f64(X), f64([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1"):
        F.jvp(lambda x, y: x, (f64(X), f64(Y)), (f64(V3),))
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single "
                       "Tensor|should contain a single element"):
        F.hessian(lambda x: x * 2, f64(X))
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hvp "
                       "should contain a single element"):
        F.hvp(lambda x: x * 2, f64(X), f64(V3))


def test_jacobian_option_errors():
    with pytest.raises(ValueError, match='Expected strategy to be either "forward-mode" or '
                       '"reverse-mode"'):
        F.jacobian(lambda x: x, f64(X), strategy="sideways")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda x: x, f64(X), strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and `strategy=\"forward-"
                       "mode\"` are not supported together"):
        F.jacobian(lambda x: x, f64(X), strategy="forward-mode", vectorize=True,
                   create_graph=True)
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not "
                       "supported together"):
        F.jacobian(lambda x: x, f64(X), strict=True, vectorize=True)


def test_inputs_are_not_modified_and_need_no_grad():
    x = f64(X)
    F.jacobian(single(gradkit), x)
    assert not x.requires_grad and x.grad is None
