"""torch's expectations of autograd.functional not covered elsewhere: results of create_graph
differentiated from inside another function, the vectorized variants of the structure checks,
a v left out, the jacobian's dtypes, and the strategy arguments' errors."""
import numpy as np
import pytest

import gradkit

from .twin import assert_same, leaf, like_torch, raises_like_torch, torch


def F(lib):  # noqa: N802 - torch's tests call it autogradF
    return lib.autograd.functional


def _adder(x, y):
    return 2 * x + 3 * y, x * y


def _shifted_exp_sum(a, b):
    return (a + 3 * b[0:3]).exp().sum()


def _add_exp_reducer(x, y):
    return (x + y).exp().sum(dim=1)


def _add_pow_reducer(x, y):
    return (x + y).pow(3).sum()


def _nested(lib, name, vectorize):
    """torch's ``foo``: the functional's results feed a larger differentiated expression."""
    F_ = F(lib)

    def vector_product(*args):
        x, y, v = args[0].cos(), args[1], args[2:]
        fn = _adder if name in ("vjp", "jvp") else _shifted_exp_sum
        val, grad = getattr(F_, name)(fn, (x, y), v, create_graph=True)
        if name in ("vjp", "jvp"):
            return (val[0].exp() + val[1].exp() + grad[0].exp() + grad[1].exp() + x.exp()
                    + y.exp())
        return val.cos() + grad[0].cos().sum() + grad[1].cos() + x.cos().sum() + y.cos()

    def whole(x, y):
        x = x.cos()
        if name == "jacobian":
            val, jac = F_.jacobian(_add_exp_reducer, (x, y), create_graph=True,
                                   vectorize=vectorize)
            return (val[0].exp().sum() + val[1].exp().sum() + jac[0].exp().sum()
                    + jac[1].exp().sum() + x.exp().sum() + y.exp().sum())
        val, hess = F_.hessian(_add_pow_reducer, (x, y), create_graph=True, vectorize=vectorize)
        return (val[0].cos().sum() + val[1].cos().sum() + hess[0].cos().sum()
                + hess[1].cos().sum() + x.cos().sum() + y.cos().sum())

    return vector_product if name in ("vjp", "jvp", "hvp", "vhp") else whole


def _unit(lib, *shape: int, seed: int = 0):
    """A float64 leaf in [0, 1) (torch's tests use rand: a standard normal through exp and
    cos can make values so large that finite differences lose their digits)."""
    values = np.random.default_rng(seed).random(shape)
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _nested_inputs(lib, name):
    if name in ("vjp", "jvp"):
        return (leaf(lib, 2), leaf(lib, 2, seed=1),
                lib.tensor([1.0, 0.0], dtype=lib.float64, requires_grad=True),
                lib.tensor([1.0, 0.0], dtype=lib.float64, requires_grad=True))
    if name in ("hvp", "vhp"):
        return (_unit(lib, 3), _unit(lib, 4, seed=1), _unit(lib, 3, seed=2), _unit(lib, 4, seed=3))
    return _unit(lib, 2, 2), _unit(lib, 2, 2, seed=1)


@pytest.mark.parametrize("name,vectorize", [
    ("vjp", False), ("jvp", False), ("hvp", False), ("vhp", False),
    ("jacobian", False), ("jacobian", True), ("hessian", False), ("hessian", True)])
def test_create_graph_results_inside_a_differentiated_function_pass_gradgradcheck(name,
                                                                                 vectorize):
    # torch: test_{vjp,jvp,hvp,vhp,jacobian,hessian}_create_graph (the nested foo)
    def program(lib):
        fn, inputs = _nested(lib, name, vectorize), _nested_inputs(lib, name)
        return (fn(*inputs), lib.autograd.gradcheck(fn, inputs),
                lib.autograd.gradgradcheck(fn, inputs))

    _, *checks = like_torch(program)
    assert checks == [True, True]


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
def test_one_input_vector_products_with_create_graph_pass_gradgradcheck(name):
    # torch: test_{vjp,jvp,hvp,vhp}_create_graph (the one-input half)
    def program(lib):
        fn = (lambda a: a.sum(dim=1)) if name in ("vjp", "jvp") else (
            lambda a: 3 * a[0:3].exp().sum())
        x = leaf(lib, 2, 2) if name in ("vjp", "jvp") else leaf(lib, 4, 4)
        v = lib.ones(2, dtype=lib.float64, requires_grad=True) if name == "vjp" else (
            lib.ones_like(x).requires_grad_())
        out, val = getattr(F(lib), name)(fn, x, v, create_graph=True)

        def check(inp, vec):
            return getattr(F(lib), name)(fn, inp, vec, create_graph=True)

        return (out, val, out.grad_fn is not None, val.grad_fn is not None,
                lib.autograd.gradcheck(check, (x, v)), lib.autograd.gradgradcheck(check, (x, v)))

    assert like_torch(program)[2:] == (True, True, True, True)


@pytest.mark.parametrize("vectorize", [False, True])
def test_two_input_jacobian_and_hessian_with_create_graph_pass_gradgradcheck(vectorize):
    # torch: test_jacobian_create_graph, test_hessian_create_graph (the two-input half; the
    # Hessian's blocks flattened to a tuple of four)
    def program(lib):
        inputs = (leaf(lib, 2, 2), leaf(lib, 2, 2, seed=1))

        def jac(*inp):
            return F(lib).jacobian(_add_exp_reducer, inp, create_graph=True, vectorize=vectorize)

        def hes(*inp):
            blocks = F(lib).hessian(_add_pow_reducer, inp, create_graph=True,
                                    vectorize=vectorize)
            return tuple(block for row in blocks for block in row)

        graphs = [t.grad_fn is not None for t in jac(*inputs) + hes(*inputs)]
        return graphs, [lib.autograd.gradcheck(f, inputs) and lib.autograd.gradgradcheck(
            f, inputs) for f in (jac, hes)]

    graphs, checks = like_torch(program)
    assert all(graphs) and len(graphs) == 6 and checks == [True, True]


@pytest.mark.parametrize("vectorize", [False, True])
def test_vectorized_or_not_jacobian_and_hessian_keep_torchs_structure(vectorize):
    # torch: test_jacobian_output, test_jacobian_scalar, test_hessian_output,
    #        test_hessian_scalar, test_jacobian_err_check, test_hessian_err_check (the
    #        structure parts; vectorize parametrized)
    def program(lib):
        jac, hes = F(lib).jacobian, F(lib).hessian
        x4, x44, x0 = (leaf(lib, 4, requires_grad=False), leaf(lib, 4, 4, requires_grad=False),
                       leaf(lib, requires_grad=False))
        pair = (leaf(lib, 4, 4, requires_grad=False), leaf(lib, 4, 4, seed=1,
                                                          requires_grad=False))
        uneven = (leaf(lib, 4, requires_grad=False), leaf(lib, 5, seed=1, requires_grad=False))
        results = [
            jac(lambda t: t.exp().sum(dim=1), x44, vectorize=vectorize),
            jac(lambda t: t.clone(), x4, vectorize=vectorize),
            jac(lambda a, b: (a + b.exp()).sum(dim=1), pair, vectorize=vectorize),
            jac(lambda t: t.sum(), x44, vectorize=vectorize),
            jac(lambda t: t.unsqueeze(0).repeat(4), x0, vectorize=vectorize),
            jac(lambda t: 3 * t[0:3], x4, vectorize=vectorize),
            hes(lambda t: t.pow(3).sum(), x44, vectorize=vectorize),
            hes(lambda a, b: (a + b).pow(3).sum(), pair, vectorize=vectorize),
            hes(lambda t: t.sum(), x44, vectorize=vectorize),
            hes(lambda t: t.sum(), x0, vectorize=vectorize),
            hes(lambda t: t.sum().view(1, 1, 1), x44, vectorize=vectorize),
            hes(lambda t: 3 * t[0:3].exp().sum(), x4, vectorize=vectorize),
            hes(lambda a, b: (3 * b[0:3] * a[0:3]).sum(), uneven, vectorize=vectorize)]
        flat = [t for r in results for t in _flatten(r)]
        return results, [t.grad_fn is None for t in flat]

    results, no_graph = like_torch(program)
    assert all(no_graph)
    assert (results[1].numpy() == np.eye(4)).all()


def _flatten(value):
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v)]
    return [value]


@pytest.mark.parametrize("name", ["jacobian", "hessian"])
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("case,exception,match", [
    ("non-tensor input", TypeError, "The inputs given to {name} must be either a Tensor"),
    ("non-tensor output", TypeError,
     "The outputs of the user-provided function given to {name} must")])
def test_argument_type_errors_are_the_same_vectorized_or_not(name, vectorize, case, exception,
                                                            match):
    # torch: test_jacobian_err_check, test_hessian_err_check (vectorize parametrized)
    def program(lib):
        x = leaf(lib, 4, requires_grad=False)
        if case == "non-tensor input":
            getattr(F(lib), name)(lambda t, n: t.sum(), (x, 2), vectorize=vectorize)
        else:
            getattr(F(lib), name)(lambda t: (3 * t[0:3], "bar"), x, vectorize=vectorize)

    raises_like_torch(program, exception, match.format(name=name))


def test_jvp_of_a_zero_dim_input_without_v():
    # torch: test_jvp_scalar (expander called without v: a one-element input needs none)
    def program(lib):
        x = leaf(lib, requires_grad=False)
        return F(lib).jvp(lambda t: t.unsqueeze(0).repeat(4), x)

    out, tangent = like_torch(program)
    assert tangent.shape == (4,)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jacobian_blocks_take_the_inputs_dtype_in_reverse_mode_and_the_outputs_in_forward(dtype):
    # torch: test_jacobian_vectorize_correctness_different_dtype (and its comment: forward AD
    # gives the output's dtype, reverse AD the input's)
    def program(lib):
        x, y = (leaf(lib, 3, seed=i, requires_grad=False).to(getattr(lib, dtype))
                for i in range(2))

        def f(a, b):
            return (a * b).float(), (a * b).double()

        results = [F(lib).jacobian(f, (x, y), vectorize=vectorize) for vectorize in (False, True)]
        results.append(F(lib).jacobian(f, (x, y), vectorize=True, strategy="forward-mode"))
        dtypes = [[str(t.dtype).split(".")[-1] for t in _flatten(r)] for r in results]
        return [[t.double() for t in _flatten(r)] for r in results], dtypes

    values, dtypes = like_torch(program, rtol=1e-6)
    assert_same(values[1], values[0])
    assert_same(values[2], values[0], rtol=1e-6)
    assert dtypes[0] == dtypes[1] == [dtype] * 4
    assert dtypes[2] == ["float32", "float32", "float64", "float64"]


@pytest.mark.parametrize("name,argument", [("jacobian", "strategy"),
                                           ("hessian", "outer_jacobian_strategy")])
def test_forward_mode_needs_vectorize_and_refuses_create_graph(name, argument):
    # torch.autograd.functional's argument checks (the strategies torch's vectorize tests use)
    def call(lib, **kwargs):
        getattr(F(lib), name)(lambda t: (t ** 3).sum(), leaf(lib, 3), **{argument: "forward-mode"},
                              **kwargs)

    raises_like_torch(call, NotImplementedError, "Computing Jacobian using forward-AD or "
                      "forward-over-reverse Hessian isonly implemented for `vectorize=True`.")
    raises_like_torch(lambda lib: call(lib, vectorize=True, create_graph=True),
                      NotImplementedError, r"torch\.autograd\.functional\.jacobian: "
                      r"`create_graph=True` and `strategy=\"forward-mode\"` are not supported "
                      r"together \(yet\)\. Please either set `create_graph=False` or "
                      r"`strategy=\"reverse-mode\"`\.")


@pytest.mark.parametrize("name,argument", [("jacobian", "strategy"),
                                           ("hessian", "outer_jacobian_strategy")])
def test_an_unknown_strategy_is_refused_with_torchs_words(name, argument):
    # torch checks the strategy with a bare ``assert`` (an AssertionError, gone under
    # ``python -O``); gradkit raises a ValueError with the same words.
    def call(lib):
        getattr(F(lib), name)(lambda t: (t ** 3).sum(), leaf(lib, 3), **{argument: "sideways"})

    match = 'Expected strategy to be either "forward-mode" or "reverse-mode".'
    if torch is not None:
        with pytest.raises(AssertionError, match=match):
            call(torch)
    with pytest.raises(ValueError, match=match):
        call(gradkit)


def test_forward_mode_jacobian_and_hessian_of_tuples_are_tuples():
    # Known difference: torch 2.13's forward-mode jacobian (and a hessian with
    # outer_jacobian_strategy="forward-mode") of a tuple of inputs returns lists of lists,
    # where its documentation and its reverse mode give tuples; gradkit gives tuples always.
    def program(lib):
        x, y = leaf(lib, 3, requires_grad=False), leaf(lib, 3, seed=1, requires_grad=False)
        jac = F(lib).jacobian(lambda a, b: (a * b, a + b), (x, y), vectorize=True,
                              strategy="forward-mode")
        hes = F(lib).hessian(lambda a, b: (a * b * a).sum(), (x, y), vectorize=True,
                             outer_jacobian_strategy="forward-mode")
        return jac, hes, [type(r).__name__ for r in (jac, jac[0], hes, hes[0])]

    jac, hes, kinds = program(gradkit)
    assert kinds == ["tuple"] * 4
    if torch is not None:  # the values agree; only the container type differs
        assert_same((jac, hes), program(torch)[:2])
