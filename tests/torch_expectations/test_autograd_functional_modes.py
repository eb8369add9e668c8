"""torch's expectations of autograd.functional under no_grad, vectorize and forward-mode."""
import warnings

import pytest

from .twin import assert_same, leaf, like_torch, raises_like_torch


def F(lib):  # noqa: N802 - torch's tests call it autogradF
    return lib.autograd.functional


def _rowsum(x):
    return x.sum(dim=1)


def _exp_sum(x):
    return x.exp().sum()


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
def test_vector_products_under_no_grad_honour_create_graph(name):
    # torch: test_{vjp,jvp,hvp,vhp}_no_grad
    def program(lib):
        fn = _rowsum if name in ("vjp", "jvp") else _exp_sum
        x = leaf(lib, 4, 4, requires_grad=False)
        v = lib.ones(4, dtype=lib.float64) if name == "vjp" else lib.ones(4, 4, dtype=lib.float64)
        with lib.no_grad():
            plain = getattr(F(lib), name)(fn, x, v)
        x.requires_grad_()
        v.requires_grad_()
        with lib.no_grad():
            graphed = getattr(F(lib), name)(fn, x, v, create_graph=True)
        return ([t.grad_fn is None for t in plain], [t.grad_fn is not None for t in graphed],
                plain[1], graphed[1])

    no_graph, has_graph, *_ = like_torch(program)
    assert all(no_graph) and all(has_graph)


@pytest.mark.parametrize("name", ["jacobian", "hessian"])
def test_jacobian_hessian_under_no_grad_honour_create_graph(name):
    # torch: test_jacobian_no_grad, test_hessian_no_grad
    def program(lib):
        fn = (lambda t: t.exp().sum(dim=1)) if name == "jacobian" else (
            lambda t: t.pow(3).sum())
        x = leaf(lib, 2, 2, requires_grad=name == "hessian")
        with lib.no_grad():
            plain = getattr(F(lib), name)(fn, x)
            graphed = getattr(F(lib), name)(fn, x, create_graph=True)
        return plain.grad_fn is None, graphed.grad_fn is not None, plain, graphed

    no_graph, has_graph, *_ = like_torch(program)
    assert no_graph and has_graph


@pytest.mark.parametrize("name", ["jacobian", "hessian"])
def test_vectorize_gives_no_warning(name):
    # torch: test_jacobian_vectorize_raises_no_warnings, test_hessian_vectorize_raises_no_warnings
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(F(lib), name)(lambda a: (a ** 2).sum(), leaf(lib, 3), vectorize=True)
        return [str(w.message) for w in caught]

    assert like_torch(program) == []


@pytest.mark.parametrize("name", ["jacobian", "hessian"])
def test_strict_and_vectorize_together_are_refused(name):
    # torch: test_jacobian_err_check_strict_vectorize, test_hessian_err_check_strict_vectorize
    raises_like_torch(lambda lib: getattr(F(lib), name)(lambda x: (x ** 3).sum(), leaf(lib, 4),
                                                        strict=True, vectorize=True),
                      RuntimeError, "not supported together")


def _simple(lib):
    return (lambda x: 3 * x ** 2), (leaf(lib, 2, 3, 5, requires_grad=False),)


def _multi_input(lib):
    return ((lambda x, y: (x.cos() * x) @ y.sin()),
            (leaf(lib, 2, 3, requires_grad=False), leaf(lib, 3, 5, seed=1, requires_grad=False)))


def _multi_output(lib):
    return ((lambda x, y: ((x * x) @ y, x @ (x.sum(1) * y), y.sum())),
            (leaf(lib, 5, 3, requires_grad=False), leaf(lib, 3, 5, seed=1, requires_grad=False)))


def _unrelated(lib):
    return ((lambda x, y: (x, y, x, y)),
            (leaf(lib, 2, requires_grad=False), leaf(lib, 3, seed=1, requires_grad=False)))


def _zero_dim_output(lib):
    return ((lambda x, y: (x.sum(), y.sum(), x * y)),
            (leaf(lib, 3, requires_grad=False), leaf(lib, 3, seed=1, requires_grad=False)))


def _zero_dim_input(lib):
    return (lambda x: lib.stack([x, x, x])), (leaf(lib, requires_grad=False),)


def _mixed_zero_dim(lib):
    return ((lambda x, y: (y.sum(), x * y)),
            (leaf(lib, requires_grad=False), leaf(lib, 1, seed=1, requires_grad=False)))


JACOBIAN_CASES = [_simple, _multi_input, _multi_output, _unrelated, _zero_dim_output,
                  _zero_dim_input, _mixed_zero_dim]


@pytest.mark.parametrize("case", JACOBIAN_CASES, ids=lambda c: c.__name__.strip("_"))
def test_vectorized_and_forward_mode_jacobians_equal_the_plain_one(case):
    # torch: test_jacobian_vectorize_correctness_{simple,multi_input,
    #        multi_input_multi_output,unrelated_outputs,zero_dim}
    _three_ways_agree(case, "jacobian", "strategy")


def _three_ways_agree(case, api: str, strategy_argument: str) -> None:
    """Plain, vectorized and vectorized forward-mode results are the same (and torch's)."""
    def program(lib):
        fn, inputs = case(lib)
        inputs = inputs[0] if isinstance(inputs, tuple) and len(inputs) == 1 else inputs
        compute = getattr(F(lib), api)
        return (compute(fn, inputs, vectorize=False), compute(fn, inputs, vectorize=True),
                compute(fn, inputs, vectorize=True, **{strategy_argument: "forward-mode"}))

    plain, vectorized, forward = like_torch(program)
    assert_same(vectorized, plain)
    assert_same(forward, plain)


def _hessian_simple(lib):
    return (lambda x: (3 * x ** 2).sum()), leaf(lib, 2, 3, 5, requires_grad=False)


def _hessian_multi_input(lib):
    return ((lambda x, y, z: ((x.relu() * x) @ y.sin() @ z).sum()),
            tuple(leaf(lib, *s, seed=i, requires_grad=False)
                  for i, s in enumerate([(2, 3), (3, 5), (5, 5)])))


def _hessian_unrelated(lib):
    return ((lambda x, y: (x ** 2).sum()),
            (leaf(lib, 2, requires_grad=False), leaf(lib, 3, seed=1, requires_grad=False)))


def _hessian_constant(lib):
    return ((lambda x, y: lib.ones((), dtype=lib.float64)),
            (leaf(lib, 2, requires_grad=False), leaf(lib, 3, seed=1, requires_grad=False)))


@pytest.mark.parametrize("case", [_hessian_simple, _hessian_multi_input, _hessian_unrelated,
                                  _hessian_constant], ids=lambda c: c.__name__.strip("_"))
def test_vectorized_and_forward_over_reverse_hessians_equal_the_plain_one(case):
    # torch: test_hessian_vectorize_correctness_{simple,multi_input,unrelated_outputs}
    _three_ways_agree(case, "hessian", "outer_jacobian_strategy")


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_and_hessian_with_create_graph_pass_gradcheck_vectorized_or_not(vectorize):
    # torch: test_jacobian_create_graph, test_hessian_create_graph (vectorize parametrized)
    def program(lib):
        x = leaf(lib, 2, 2)

        def jac(inp):
            return F(lib).jacobian(lambda t: t.exp().sum(dim=1), inp, create_graph=True,
                                   vectorize=vectorize)

        def hes(inp):
            return F(lib).hessian(lambda t: t.pow(3).sum(), inp, create_graph=True,
                                  vectorize=vectorize)

        return [lib.autograd.gradcheck(f, x) and lib.autograd.gradgradcheck(f, x)
                for f in (jac, hes)]

    assert like_torch(program) == [True, True]


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_with_an_input_as_output_and_two_inputs(vectorize):
    # torch: test_jacobian_err_check (the structure part, vectorize parametrized)
    def program(lib):
        a, b = leaf(lib, 4, requires_grad=False), leaf(lib, 5, seed=1, requires_grad=False)
        return F(lib).jacobian(lambda p, q: (q, 3 * p[0:3]), (a, b), vectorize=vectorize)

    like_torch(program)
