"""torch's functorch tests of jacrev, jacfwd and hessian (test/functorch/
test_eager_transforms.py: TestJac, TestHessian), re-checked on gradkit.func against torch
2.13. Every TestJac test runs for both jacrev and jacfwd, as torch's does."""
import pytest
from torch_expectations.twin import leaf, like_torch, raises_like_torch

JACS = pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])


def plain(lib, *shape, seed=0):
    return leaf(lib, *shape, seed=seed, requires_grad=False)


@JACS
def test_jacobians_of_elementwise_and_indexing_functions(jac):
    # test_simple, test_simple_not_flat, test_take, test_diff_numel, test_dimensionality
    def program(lib):
        J = getattr(lib.func, jac)
        x = plain(lib, 5)
        return (J(lib.sin)(plain(lib, 3)), J(lib.sin)(plain(lib, 2, 3)),
                J(lambda t: lib.take(t, lib.ones(3, dtype=lib.long)))(x),
                lib.autograd.functional.jacobian(
                    lambda t: lib.take(t, lib.ones(3, dtype=lib.long)), x),
                J(lambda t: t[0, 1:].unsqueeze(-1))(plain(lib, 2, 4)),
                J(lambda t: t)(plain(lib)), J(lambda t: t)(plain(lib, 1)))
    like_torch(program)


@JACS
def test_jacobians_under_vmap_and_of_jacobians(jac):
    # test_vmap_on_jac_simple, test_nested_jac_simple
    def program(lib):
        J = getattr(lib.func, jac)
        return (lib.func.vmap(J(lib.sin))(plain(lib, 2, 3)),
                J(J(lambda t: t.sin().sum()))(plain(lib, 3)))
    like_torch(program)


@JACS
def test_jacobians_by_argnums_and_of_several_outputs(jac):
    # test_multiple_args, test_multiple_outputs_multiple_argnums,
    # test_multiple_outputs_single_argnums, test_multiple_outputs_pytree, test_argnums_tuple,
    # test_argnums_effect_on_return, test_unrelated_input, test_unrelated_output
    def program(lib):
        J = getattr(lib.func, jac)
        x, y, m = plain(lib, 3), plain(lib, 3, seed=1), plain(lib, 2, 3, seed=2)

        def pair(a, b):
            return 2 * a + 3 * b, 4 * a + 5 * b

        def named(a, b):
            return {"left": 2 * a + 3 * b, "right": 4 * a + 5 * b}
        return (J(lib.multiply, argnums=1)(x, y), J(pair, argnums=(0, 1))(x, y),
                J(pair, argnums=0)(x, y), J(pair, argnums=(0,))(x, y),
                J(named, argnums=(0, 1))(x, y), J(lib.multiply, argnums=(0, 1))(x, y),
                J(lib.multiply, argnums=(0,))(x, y), J(lambda a, b: a, argnums=(0, 1))(m, m + 1),
                J(lambda a: m)(m + 2))
    result = like_torch(program)
    assert isinstance(result[1], tuple) and isinstance(result[1][0], tuple)
    assert isinstance(result[6], tuple) and len(result[6]) == 1


@JACS
def test_jacobians_of_pytree_inputs_and_outputs(jac):
    # test_multiple_inputs_pytree, test_multiple_inputs_outputs_pytree,
    # test_multiple_inputs_outputs_pytree_multidim, test_outputs_can_any_pytree
    def program(lib):
        J = getattr(lib.func, jac)
        x, m = plain(lib), plain(lib, 2, 3, seed=1)
        args = ((x, x), x, x)

        def f(a, b, c):
            return a[0] + a[1] * 2 + b * 3 + c * 4

        def g(a, b, c):
            return a[0] + a[1] * 2, {"foo": b * 3 + c * 4}
        v = plain(lib, 3, seed=2)
        return (J(f, argnums=(0, 1, 2))(*args), J(f, argnums=(0,))(*args), J(f)(*args),
                J(g)(*args), J(g, argnums=(0,))(*args), J(g, argnums=(0, 1))(*args),
                J(lambda d: {"c": d["a"].sin(), "d": d["b"].cos()})({"a": v, "b": v}),
                J(lambda t: [t, t.sum()])(m), J(lambda t: {"x": t, "xsum": t.sum()})(m),
                J(lambda t: [(t.sum(), {"a": t, "out": [t, t.sum()]})])(m))
    like_torch(program)


@JACS
def test_jacobians_with_aux(jac):
    # test_aux_tensor, test_aux_pytree
    def program(lib):
        J = getattr(lib.func, jac)
        x = plain(lib, 3)

        def f(t):
            y = t.clone()
            return y, {"a": y.cos(), "b": [y.tan()]}
        return J(lambda t: (t.clone(), t.cos()), has_aux=True)(x), J(f, has_aux=True)(x)
    like_torch(program)


@JACS
@pytest.mark.parametrize("aux", [1, 1.0, "abc"])
def test_jacobians_refuse_an_aux_that_is_not_tensors(jac, aux):
    # test_aux_pytree
    for output in (lambda t: (t, aux), lambda t: (t, [t, aux])):
        raises_like_torch(lambda lib, output=output: getattr(lib.func, jac)(
            output, has_aux=True)(plain(lib, 3)), RuntimeError,
            "Expected tensors, got unsupported type")


@JACS
@pytest.mark.parametrize("output", [None, (), 1, True, 12.2, "abc"])
def test_jacobians_of_functions_without_tensor_outputs(jac, output):
    # test_outputs_can_any_pytree, test_empty_output
    match = (r"(vjp|jvp).+: Expected f to be a function that has non-empty output"
             if output in (None, ()) else
             r"(vjp|jvp).+: expected f\(\*primals\) to return only tensors")
    raises_like_torch(lambda lib: getattr(lib.func, jac)(lambda _: output)(plain(lib, 2, 3)),
                      RuntimeError, match)
