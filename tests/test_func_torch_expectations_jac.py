"""torch's functorch tests of jacrev, jacfwd and hessian (test/functorch/
test_eager_transforms.py: TestJac, TestHessian), re-checked on gradkit.func against torch
2.13. Every TestJac test runs for both jacrev and jacfwd, as torch's does."""
import pytest
from torch_expectations.functions import setup_context_function
from torch_expectations.twin import assert_same, like_torch, plain, raises_like_torch

JACS = pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])


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


@JACS
@pytest.mark.parametrize("argnums, match", [
    ((), "must be non-empty"), (2, "only 1 positional inputs"), (-2, "only 1 positional inputs"),
    ((0, 0), "must be unique"), (0.0, "must be int or Tuple")])
def test_jacobians_refuse_bad_argnums(jac, argnums, match):
    # test_empty_argnums, test_out_of_bounds_argnums, test_negative_argnums,
    # test_repeated_argnums, test_float_argnums
    raises_like_torch(lambda lib: getattr(lib.func, jac)(lib.sin, argnums=argnums)(
        plain(lib, 3)), RuntimeError, match)


@JACS
def test_jacobians_refuse_a_float_among_argnums(jac):
    # test_float_argnums
    raises_like_torch(lambda lib: getattr(lib.func, jac)(lib.multiply, argnums=(1, 0.0))(
        plain(lib, 3), plain(lib, 3)), RuntimeError, "must be int")


def _reference_cases(lib):
    """test_against_reference_*: (function, inputs) pairs."""
    x3, y3 = plain(lib, 3), plain(lib, 3, seed=1)
    return [
        (lambda x: 3 * x ** 2, (plain(lib, 2, 3, 5),)),
        (lambda x, y: (x.cos() * x) @ y.sin(), (plain(lib, 2, 3), plain(lib, 3, 5, seed=1))),
        (lambda x, y: ((x * x) @ y, x @ (x.sum(1) * y), y.sum()),
         (plain(lib, 5, 3), plain(lib, 3, 5, seed=1))),
        (lambda x, y: (x, y, x, y), (plain(lib, 2), plain(lib, 3, seed=1))),
        (lambda x, y: (x.sum(), y.sum(), x * y), (x3, y3)),
        (lambda x: lib.stack([x, x, x]), (plain(lib),)),
        (lambda x, y: (y.sum(), x * y), (plain(lib), plain(lib, 1, seed=1))),
        (lambda x, y: (x * y, (x * y).to(device="cpu")), (x3, y3)),
        (lambda x, y, z=3.0: x * y * z, (x3, y3)),
        (lambda x: x * 2 + 1, (x3,))]


@JACS
def test_jacobians_against_autograd_functional(jac):
    # test_against_reference_{simple,multi_input,multi_input_multi_output,unrelated_outputs,
    # zero_dim,correctness_different_devices,default_arg}, test_argnums_defaults_to_zero,
    # test_jac_with_non_tensor_args, test_hessian_simple
    def program(lib):
        J = getattr(lib.func, jac)
        results = []
        for f, inputs in _reference_cases(lib):
            results.append(J(lambda inputs, f=f: f(*inputs))(inputs))
            results.append(lib.autograd.functional.jacobian(f, inputs))
        x, y = plain(lib, 3), plain(lib, 3, seed=1)
        return results + [J(lambda a, b: a * 2 + b * 3)(x, y),
                          J(lambda t, n: t + n)(plain(lib, 3, 3), 3),
                          lib.func.hessian(lambda t: t.sin())(x)]
    results = like_torch(program)
    for got, expected in zip(results[:20:2], results[1:20:2]):
        assert_same(got, expected)


@JACS
def test_jacobians_of_functions_writing_in_place(jac):
    # test_inplace
    def program(lib):
        J = getattr(lib.func, jac)

        def f(x, y):
            y.copy_(x)
            return y

        def g(x, y, z):
            x[:2] = y
            return lib.vstack([(x ** 2).sum(), (z ** 3).sum()])
        return (J(f, argnums=0)(plain(lib, 2), plain(lib, 2, seed=1)),
                J(g, argnums=(1, 2))(plain(lib, 3), plain(lib, 2, seed=1), plain(lib, 2, seed=2)))
    like_torch(program)


@pytest.mark.parametrize("preallocate", [True, False])
def test_jacrev_chunk_size(preallocate):
    # test_chunk_jacrev, test_chunk_jacrev_composition, test_chunk_jacrev_chunksize_one (its
    # values; the vmap error for nonzero with chunk_size=2 is a batching rule: gradkit
    # computes that Jacobian)
    def program(lib):
        jacrev = lib.func.jacrev
        x, y = plain(lib, 10, 2), plain(lib, 1, 2, seed=1)

        def f(x, y):
            return (x.sin(), x + y), (x + 2, x.sum())

        def g(x):
            return (x.sin(), x), (x + 2, x.sum())

        def data_dependent_backward(ctx, grad_output):
            grad_output.nonzero()
            return grad_output
        DynamicBackward = setup_context_function(lib, "DynamicBackward", forward=lambda x: x,
                                                 backward=data_dependent_backward)
        results = [jacrev(f, argnums=(0, 1), chunk_size=size, _preallocate_and_copy=preallocate)(
            x, y) for size in (None, 1, 2, 3, 4, 7, 10, 1000)]
        m = plain(lib, 3, 3, seed=2)
        return results + [
            lib.func.vmap(jacrev(jacrev(g, chunk_size=3, _preallocate_and_copy=preallocate),
                                 chunk_size=3))(x),
            jacrev(DynamicBackward.apply, chunk_size=1, _preallocate_and_copy=preallocate)(m),
            lib.autograd.functional.jacobian(DynamicBackward.apply, m, vectorize=False)]
    like_torch(program)


@pytest.mark.parametrize("chunk_size", [0, -2])
def test_jacrev_refuses_a_chunk_size_below_one(chunk_size):
    # test_chunk_jacrev
    raises_like_torch(lambda lib: lib.func.jacrev(lambda x: x, chunk_size=chunk_size)(
        plain(lib, 3)), ValueError, "jacrev: `chunk_size` should be greater than 0.")


@JACS
def test_jacobians_refuse_complex_inputs_and_outputs(jac):
    # test_complex_error
    raises_like_torch(lambda lib: getattr(lib.func, jac)(lambda x: x.conj())(
        lib.ones(1, dtype=lib.cfloat)), RuntimeError, f"{jac}: Expected all inputs")
    raises_like_torch(lambda lib: getattr(lib.func, jac)(lambda x: lib.conj(x * 0.5j))(
        lib.ones(1)), RuntimeError, f"{jac}: Expected all outputs")


def test_hessian_against_autograd_functional():
    # TestHessian: test_hessian_vectorize_correctness_{simple,multi_input,unrelated_outputs},
    # test_jacfwd_different_levels
    def program(lib):
        cases = [(lambda x: (3 * x ** 2).sum(), (plain(lib, 2, 3, 5),)),
                 (lambda x, y, z: ((x.relu() * x) @ y.sin() @ z).sum(),
                  (plain(lib, 2, 3), plain(lib, 3, 5, seed=1), plain(lib, 5, 5, seed=2))),
                 (lambda x, y: (x ** 2).sum(), (plain(lib, 2), plain(lib, 3, seed=1))),
                 (lambda x, y: lib.ones([], dtype=lib.float64),
                  (plain(lib, 2), plain(lib, 3, seed=1)))]
        results = []
        for f, inputs in cases:
            results += [lib.func.hessian(lambda inputs, f=f: f(*inputs))(inputs),
                        lib.autograd.functional.hessian(f, inputs)]
        x1 = plain(lib, 4, 10, 2, seed=3)
        a = 0.1 * plain(lib, 4, 2, 2, seed=4)

        def loss(a, x1, x2):
            return ((x2 - (a @ x1.T).T) ** 2).sum()
        f = lib.func
        return results + [f.vmap(f.jacrev(f.jacrev(loss)))(a, x1, x1),
                          f.vmap(f.hessian(loss))(a, x1, x1)]
    results = like_torch(program)
    assert results[-1].allclose(results[-2])


@pytest.mark.parametrize("activation", ["relu", "relu6", "hardtanh", "leaky_relu", "softshrink",
                                        "hardshrink", "threshold"])
def test_hessian_through_piecewise_linear_activations(activation):
    # found by test_hessian_vectorize_correctness_multi_input: the zero derivative of
    # relu's (and hardtanh's...) backward in its saved input had the batched gradient's
    # shape, not the input's, when jacrev's batched pass was differentiated again
    def program(lib):
        fn = getattr(lib.nn.functional, activation)
        act = (lambda t: fn(t, 0.1, 0.5)) if activation == "threshold" else fn
        return lib.func.hessian(lambda t: (act(t) * t).sum())(plain(lib, 2, 4))
    like_torch(program)
