"""gradkit.func against torch.func: the same programs give the same values, shapes, dtypes,
requires_grad flags and errors."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t(lib, *shape, seed=0, requires_grad=False):
    return lib.tensor(data(*shape, seed=seed), dtype=lib.float64, requires_grad=requires_grad)


def _leaves(value, path="out"):
    if isinstance(value, (tuple, list)):
        return [(f"{type(value).__name__}", path)] + [
            x for i, v in enumerate(value) for x in _leaves(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [("dict" + repr(list(value)), path)] + [
            x for k, v in value.items() for x in _leaves(v, f"{path}[{k!r}]")]
    return [(value, path)]


def same(program, rtol=1e-7, atol=1e-10):
    """program(gradkit) and program(torch) return the same structure, tensors alike."""
    got, expected = _leaves(program(gradkit)), _leaves(program(torch))
    assert len(got) == len(expected), (got, expected)
    for (g, where), (e, _) in zip(got, expected):
        if isinstance(e, torch.Tensor):
            assert isinstance(g, gradkit.Tensor), where
            assert tuple(g.shape) == tuple(e.shape), where
            assert str(g.dtype).split(".")[1] == str(e.dtype).split(".")[1], where
            assert g.requires_grad == e.requires_grad, where
            np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=rtol,
                                       atol=atol, err_msg=where)
        else:
            assert g == e, where
    return program(gradkit)


def same_error(program):
    """program raises the same exception type and message under both libraries."""
    with pytest.raises(Exception) as expected:
        program(torch)
    with pytest.raises(expected.type) as got:
        program(gradkit)
    assert str(got.value).replace("gradkit", "torch") == str(expected.value)


# -- grad, grad_and_value ---------------------------------------------------------------

def test_grad_argnums_and_aux():
    def f(x, y):
        return (x.sin() * y).sum(), {"y2": y * 2}
    same(lambda lib: lib.func.grad(f, has_aux=True)(t(lib, 3), t(lib, 3, seed=1)))
    same(lambda lib: lib.func.grad(f, argnums=(0, 1), has_aux=True)(t(lib, 3), t(lib, 3, seed=1)))
    same(lambda lib: lib.func.grad(f, argnums=-1, has_aux=True)(t(lib, 3), t(lib, 3, seed=1)))
    same(lambda lib: lib.func.grad_and_value(f, has_aux=True)(t(lib, 3), t(lib, 3, seed=1)))


def test_grad_of_a_pytree_argument_and_kwargs():
    def f(params, x, scale=1.0):
        return ((params["w"] @ x + params["b"][0]) ** 2).sum() * scale
    same(lambda lib: lib.func.grad(f)({"w": t(lib, 2, 3), "b": [t(lib, 2, seed=1)]},
                                      t(lib, 3, seed=2), scale=3.0))


def test_grad_of_grad_and_captured_tensors_keep_their_graph():
    def program(lib):
        w = t(lib, 3, seed=1, requires_grad=True)
        x = t(lib, 3)
        g = lib.func.grad(lambda x: (x ** 3 * w).sum())(x)
        gg = lib.func.grad(lib.func.grad(lambda x: (x ** 3).sum()))
        (dw,) = lib.autograd.grad(g.sum(), w)
        return g, dw, gg(t(lib, seed=3))
    same(program)


def test_grad_of_an_input_that_requires_grad_composes_with_backward():
    def program(lib):
        x = t(lib, 3, requires_grad=True)
        g = lib.func.grad(lambda x: (x.exp() * x).sum())(x)
        g.sum().backward()
        return g, x.grad
    same(program)


def test_grad_of_a_constant_is_zero_and_no_grad_outside_gives_plain_results():
    same(lambda lib: lib.func.grad(lambda x: lib.ones((), dtype=lib.float64))(t(lib, 3)))

    def under_no_grad(lib):
        x = t(lib, 3, requires_grad=True)
        with lib.no_grad():
            return lib.func.grad(lambda x: (x ** 2).sum())(x)
    same(under_no_grad)


@pytest.mark.parametrize("program", [
    lambda lib: lib.func.grad(lambda a: a)(t(lib, 3)),
    lambda lib: lib.func.grad(lambda a: a.sum())(3.0),
    lambda lib: lib.func.grad(lambda a: a.sum(), argnums=1)(t(lib, 3)),
    lambda lib: lib.func.grad(lambda a: a.sum(), argnums=())(t(lib, 3)),
    lambda lib: lib.func.grad(lambda a: a.sum(), argnums=1.0)(t(lib, 3)),
    lambda lib: lib.func.grad(lambda a, b: a.sum(), argnums=(0, 0))(t(lib, 3), t(lib, 3)),
    lambda lib: lib.func.grad(lambda a: a.sum(), has_aux=True)(t(lib, 3)),
    lambda lib: lib.func.grad(lambda a: (a.sum(), 1), has_aux=True)(t(lib, 3)),
    lambda lib: lib.func.grad(lambda a: 1.0)(t(lib, 3)),
    lambda lib: lib.func.grad(lambda a: a.sum())(lib.ones(3, dtype=lib.long)),
], ids=["non-scalar", "not-tensor", "argnum-range", "argnums-empty", "argnums-type",
        "argnums-repeated", "aux-not-tuple", "aux-not-tensor", "output-not-tensor", "integer"])
def test_grad_errors(program):
    same_error(program)


# -- vjp, jvp, linearize ------------------------------------------------------------------

def test_vjp_pytrees_aux_and_repeated_calls():
    def f(x, d):
        return {"a": x * d["s"], "b": (x.sum(), d["s"].exp())}, x.cos()

    def program(lib):
        x, s = t(lib, 3), t(lib, 3, seed=1)
        out, vjp_fn, aux = lib.func.vjp(f, x, {"s": s}, has_aux=True)
        cot = {"a": t(lib, 3, seed=2), "b": (t(lib, seed=3), t(lib, 3, seed=4))}
        return out, aux, vjp_fn(cot), vjp_fn(cot)
    same(program)


def test_vjp_result_is_differentiable_for_an_outer_grad():
    def program(lib):
        def inner(x):
            _, vjp_fn = lib.func.vjp(lambda y: y.sin() * y, x)
            return vjp_fn(lib.ones_like(x))[0].sum()
        return lib.func.grad(inner)(t(lib, 4))
    same(program)


def test_jvp_and_linearize():
    def f(x, y):
        return x.sin() * y, (x @ y).exp()

    def program(lib):
        primals = (t(lib, 3), t(lib, 3, seed=1))
        tangents = (t(lib, 3, seed=2), t(lib, 3, seed=3))
        out, jvp_fn = lib.func.linearize(lambda x: x.tanh() ** 2, t(lib, 3))
        return (lib.func.jvp(f, primals, tangents),
                lib.func.jvp(lambda x: (x * 2, {"aux": x}), primals[:1], tangents[:1],
                             has_aux=True),
                out, jvp_fn(t(lib, 3, seed=4)))
    same(program)


def test_jvp_nests_in_grad_and_in_jvp():
    def program(lib):
        def directional(x):
            return lib.func.jvp(lambda y: (y ** 3).sum(), (x,), (lib.ones_like(x),))[1]
        second = lib.func.jvp(lambda x: lib.func.jvp(lambda y: y.sin(), (x,), (x,))[1],
                              (t(lib, 3),), (t(lib, 3, seed=1),))
        return lib.func.grad(directional)(t(lib, 3)), second
    same(program)


def test_vjp_fn_retain_graph_and_create_graph():
    def program(lib):
        x = t(lib, 3, requires_grad=True)
        _, vjp_fn = lib.func.vjp(lambda y: y.exp() * y, x)
        (kept,) = vjp_fn(lib.ones_like(x), create_graph=True)
        # retain_graph: in gradkit the vjp shares the graph of x's history (docs/func.md)
        (dx,) = lib.autograd.grad(kept.sum(), x, retain_graph=True)
        (last,) = vjp_fn(lib.ones_like(x), retain_graph=False)
        return kept, dx, last
    same(program)
    same_error(lambda lib: [f(lib.ones(2), retain_graph=False) for f in
                            [lib.func.vjp(lambda y: y.sin(), lib.ones(2))[1]] * 2])


def test_linearize_of_non_tensor_outputs_and_tangent_errors():
    same(lambda lib: lib.func.linearize(lambda a: 3.0, t(lib, 2))[0])
    for tangents in [(lambda lib: (lib.ones(3),)), (lambda lib: (lib.ones(2), lib.ones(2))),
                     (lambda lib: ((lib.ones(2),),))]:
        same_error(lambda lib, tangents=tangents:
                   lib.func.linearize(lib.sin, lib.ones(2))[1](*tangents(lib)))


@pytest.mark.parametrize("program", [
    lambda lib: lib.func.vjp(lambda a: a, 3.0),
    lambda lib: lib.func.vjp(lambda a: a, t(lib, 2))[1]((t(lib, 2),)),
    lambda lib: lib.func.vjp(lambda a: (a, a), t(lib, 2))[1](t(lib, 2)),
    lambda lib: lib.func.vjp(lambda a: 1.0, t(lib, 2)),
    lambda lib: lib.func.vjp(lambda a: a, t(lib, 2), has_aux=True),
    lambda lib: lib.func.jvp(lambda a: a, t(lib, 2), t(lib, 2)),
    lambda lib: lib.func.jvp(lambda a: a, (t(lib, 2),), (t(lib, 3),)),
    lambda lib: lib.func.jvp(lambda a: a, (t(lib, 2),), (t(lib, 2), t(lib, 2))),
    lambda lib: lib.func.jvp(lambda a: a, (t(lib, 2),), [t(lib, 2)]),
    lambda lib: lib.func.jvp(lambda a: 1.0, (t(lib, 2),), (t(lib, 2),)),
    lambda lib: lib.func.jvp(lambda a: a, (), ()),
    lambda lib: lib.func.jvp(lambda a: a, (t(lib, 2),), (t(lib, 2),), has_aux=True),
    lambda lib: lib.func.jvp(lambda a: a, (lib.ones(2, dtype=lib.long),),
                             (lib.ones(2, dtype=lib.long),)),
], ids=["vjp-not-tensor", "vjp-cotangent-structure", "vjp-cotangent-structure-2",
        "vjp-output-not-tensor", "vjp-aux", "jvp-not-tuple", "jvp-tangent-size",
        "jvp-structure", "jvp-structure-list", "jvp-output-not-tensor", "jvp-empty", "jvp-aux",
        "jvp-integer"])
def test_vjp_jvp_errors(program):
    same_error(program)


# -- jacrev, jacfwd, hessian ---------------------------------------------------------------

@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobians_nest_as_torch(jac):
    def f(x, y):
        return {"p": x[:, None] * y.sin(), "s": (x @ x) * y.sum()}, x.exp()

    def program(lib):
        transform = getattr(lib.func, jac)
        x, y = t(lib, 3), t(lib, 2, seed=1)
        return (transform(f, has_aux=True)(x, y), transform(f, argnums=(0, 1), has_aux=True)(x, y),
                transform(lambda d: d["a"] @ d["b"])({"a": t(lib, 2, 3), "b": t(lib, 3, seed=2)}))
    same(program)


def test_jacrev_chunk_size_and_outputs_without_a_path_to_the_input():
    same(lambda lib: lib.func.jacrev(lambda x, y: (x * 2, y), chunk_size=1)(t(lib, 2),
                                                                         t(lib, 3)))
    same(lambda lib: lib.func.jacfwd(lambda x: x[:0].sum() + x[:0])(t(lib, 2)))


def test_hessian_and_jacobian_of_jacobian():
    def f(x, y):
        return (x.sin() * y ** 2).sum()
    same(lambda lib: lib.func.hessian(f)(t(lib, 3), t(lib, 3, seed=1)))
    same(lambda lib: lib.func.hessian(f, argnums=(0, 1))(t(lib, 3), t(lib, 3, seed=1)))
    same(lambda lib: lib.func.jacfwd(lib.func.jacfwd(lambda x: x.sin() * x.sum()))(t(lib, 2)))


@pytest.mark.parametrize("program", [
    lambda lib: lib.func.jacrev(lambda a: a.sum(), argnums=2)(t(lib, 2)),
    lambda lib: lib.func.jacrev(lambda a: 1.0)(t(lib, 2)),
    lambda lib: lib.func.jacfwd(lambda a: 1.0)(t(lib, 2)),
    lambda lib: lib.func.jacfwd(lambda a: a, randomness="x")(t(lib, 2)),
    lambda lib: lib.func.jacrev(lambda a: a, chunk_size=0)(t(lib, 2)),
    lambda lib: lib.func.jacfwd(lambda a: a)(lib.ones(2, dtype=lib.long)),
    lambda lib: lib.func.jacrev(lambda a: a)(lib.ones(2, dtype=lib.long)),
    lambda lib: lib.func.jacrev(lambda a, b: a, argnums=(1,))(t(lib, 2), (t(lib, 2),
                                                                      lib.ones(2) * 1j)),
    lambda lib: lib.func.jacfwd(lambda a: a)(lib.ones(2) * 1j),
    lambda lib: lib.func.jacrev(lambda a: (a, (a * 1j).sum()))(t(lib, 2)),
    lambda lib: lib.func.jacfwd(lambda a: a * 1j)(t(lib, 2)),
], ids=["argnum-range", "jacrev-not-tensor", "jacfwd-not-tensor", "randomness", "chunk-size",
        "jacfwd-integer", "jacrev-integer", "jacrev-complex-input", "jacfwd-complex-input",
        "jacrev-complex-output", "jacfwd-complex-output"])
def test_jacobian_errors(program):
    same_error(program)


def _total(x):
    return x.sum()


# -- vmap ----------------------------------------------------------------------------------

def test_vmap_in_dims_and_out_dims():
    def f(x, d, k):
        return {"sum": x + d["y"] * k, "mm": x @ d["m"]}, x.sum()

    def program(lib):
        x, y, m = t(lib, 4, 3), t(lib, 3, 4, seed=1), t(lib, 3, 2, seed=2)
        return (lib.func.vmap(f, in_dims=(0, {"y": 1, "m": None}, None))(x, {"y": y, "m": m}, 2.0),
                lib.func.vmap(lambda a: (a, 3, [a, a]), out_dims=(0, None, [0, 1]))(x),
                lib.func.vmap(f, in_dims=(-2, {"y": -1, "m": None}, None),
                              out_dims=({"sum": 1, "mm": -1}, 0))(x, {"y": y, "m": m}, 2.0),
                lib.vmap(lib.dot, in_dims=(1, None))(t(lib, 3, 5), t(lib, 3, seed=3)))
    same(program)


def test_nested_vmap_vmap_of_grad_and_grad_of_vmap():
    def program(lib):
        outer = lib.func.vmap(lib.func.vmap(lambda a, b: a * b.sum(), in_dims=(0, None)),
                              in_dims=(None, 0))(t(lib, 3), t(lib, 2, 4, seed=1))
        per_sample = lib.func.vmap(lib.func.grad(lambda x: (x.sin() * x).sum()))(t(lib, 5, 3))
        through = lib.func.grad(lambda x: lib.func.vmap(lambda r: r.exp().sum())(x).sum())(
            t(lib, 2, 3))
        return outer, per_sample, through
    same(program)


def test_vmap_keeps_the_graph_to_its_inputs():
    def program(lib):
        x = t(lib, 3, 2, requires_grad=True)
        y = lib.func.vmap(lambda r: (r ** 2).sum())(x)
        y.sum().backward()
        return y, x.grad
    same(program)


def test_vmap_unbatched_outputs_and_empty_batches():
    def program(lib):
        w = t(lib, 3, seed=4)
        return (lib.func.vmap(lambda a: w, out_dims=None)(t(lib, 2)),
                lib.func.vmap(lambda a: w)(t(lib, 2)),
                lib.func.vmap(lambda a: (a.sum(), a * 2))(lib.ones(0, 3, dtype=lib.float64)))
    same(program)


def test_vmap_randomness_modes():
    def program(lib):
        lib.manual_seed(0)
        same_draws = lib.func.vmap(lambda a: a + lib.rand(2, dtype=lib.float64),
                                   randomness="same")(lib.zeros(3, 1, dtype=lib.float64))
        different = lib.func.vmap(lambda a: a + lib.rand(2, dtype=lib.float64),
                                  randomness="different")(lib.zeros(3, 1, dtype=lib.float64))
        return (bool((same_draws == same_draws[0]).all()),
                bool((different[0] != different[1]).any()), lib.rand(1).shape)
    same(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.func.vmap(lambda a, b: a + b)(lib.ones(3), lib.ones(4)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=None)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=(None,))(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=2)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=(0, 0))(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=0.5)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=(0,))(3.0),
    lambda lib: lib.func.vmap(lambda a, b: a, in_dims=(0, "x"))(lib.ones(2), lib.ones(2)),
    lambda lib: lib.func.vmap(lambda a: a, out_dims=0.5)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda d: d["a"], in_dims=({"b": 1},))({"a": lib.ones(2, 3)}),
    lambda lib: lib.func.vmap(lambda a: 3)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, out_dims=2)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, out_dims=(0, 0))(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a, out_dims=None)(t(lib, 3)),
    lambda lib: lib.func.vmap(lambda a: lib.rand(2))(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: lib.nn.functional.dropout(a, 0.5))(lib.ones(3, 2)),
    lambda lib: lib.func.vmap(lambda a: a, randomness="bad"),
    lambda lib: lib.func.vmap(lambda a: a, chunk_size=0)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a: a)(),
    lambda lib: lib.func.vmap(lib.func.grad(_total), out_dims=(0, 0))(lib.ones(2, 3)),
], ids=["sizes", "in_dims-None", "nothing-batched", "in_dim-range", "in_dims-structure",
        "in_dims-type", "non-tensor", "in_dim-type", "out_dims-type", "dict-keys",
        "output-not-tensor", "out_dim-range",
        "out_dims-structure", "out_dims-None-batched", "random", "dropout", "randomness",
        "chunk-size", "no-inputs", "wrapped-name"])
def test_vmap_errors(program):
    same_error(program)


def test_random_ops_work_again_after_a_refused_draw():
    with pytest.raises(RuntimeError, match="randomness error mode"):
        gradkit.func.vmap(lambda a: a + gradkit.rand(2))(gradkit.ones(3, 2))
    assert gradkit.rand(2).shape == (2,)


# -- functional_call and per-sample gradients -----------------------------------------------

def _mlp(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3)).double()
    with lib.no_grad():  # the same weights in both libraries
        for k, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(data(*p.shape, seed=10 + k)))
    return model


def test_per_sample_gradients_of_an_mlp():
    def program(lib):
        model = _mlp(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(params, x, y):
            logits = lib.func.functional_call(model, params, (x[None],))
            return lib.nn.functional.cross_entropy(logits, y[None])
        x, y = t(lib, 5, 4), lib.tensor([0, 2, 1, 1, 0])
        per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        mean_grads = lib.func.grad(
            lambda p: lib.nn.functional.cross_entropy(lib.func.functional_call(model, p, x), y)
        )(params)
        return per_sample, mean_grads, [p.requires_grad for p in model.parameters()]
    result = same(program)
    per_sample, mean_grads, _ = result
    for name, g in per_sample.items():  # the mean of per-sample gradients is the batch gradient
        np.testing.assert_allclose(g.mean(0).numpy(), mean_grads[name].numpy(), rtol=1e-10)


def test_functional_call_ties_and_restores():
    def program(lib):
        tied = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)).double()
        tied[1].weight = tied[0].weight
        with lib.no_grad():
            for p in tied.parameters():
                p.fill_(0.5)
        x = t(lib, 1, 2)
        w = t(lib, 2, 2, seed=1)
        return (lib.func.functional_call(tied, {"0.weight": w}, x),
                lib.func.functional_call(tied, {"0.weight": w}, x, tie_weights=False),
                lib.func.functional_call(tied, ({"0.weight": w}, {"1.bias": w[0]}), (x,)),
                lib.func.functional_call(tied, {"0.weight": w, "extra": w}, args=(x,)),
                tied(x), tied[0].weight is tied[1].weight, hasattr(tied, "extra"))
    same(program)


@pytest.mark.parametrize("program", [
    lambda lib, m, x: lib.func.functional_call(m, {"weight": x, "foo": x}, (x,), strict=True),
    lambda lib, m, x: lib.func.functional_call(m, {"weight": x}, (x,), strict=True),
    lambda lib, m, x: lib.func.functional_call(m, ({"weight": x}, {"weight": x}), (x,)),
    lambda lib, m, x: lib.func.functional_call(m, 3, (x,)),
    lambda lib, m, x: lib.func.functional_call(m, {"nope.x": x}, (x,)),
], ids=["strict-both", "strict-missing", "repeated", "not-dicts", "no-submodule"])
def test_functional_call_errors(program):
    same_error(lambda lib: program(lib, lib.nn.Linear(2, 2).double(), t(lib, 2, 2)))


def test_functional_call_tied_values_must_agree():
    def program(lib):
        tied = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 2))
        tied[1].weight = tied[0].weight
        return lib.func.functional_call(tied, {"0.weight": lib.zeros(2, 2),
                                               "1.weight": lib.ones(2, 2)}, lib.ones(1, 2))
    same_error(program)


def test_functional_call_restores_after_an_exception():
    model = gradkit.nn.Linear(2, 2)
    weight = model.weight
    with pytest.raises(RuntimeError):
        gradkit.func.functional_call(model, {"weight": gradkit.ones(3, 3)}, gradkit.ones(1, 2))
    assert model.weight is weight


# -- gradcheck through the transforms -------------------------------------------------------

@pytest.mark.parametrize("transform", [
    lambda f: gradkit.func.grad(lambda x: f(x).sum()),
    lambda f: gradkit.func.vmap(f),
    lambda f: gradkit.func.jacrev(f),
    lambda f: gradkit.func.jacfwd(f),
    lambda f: (lambda x: gradkit.func.jvp(f, (x,), (x.cos(),))[1]),
    lambda f: (lambda x: gradkit.func.vjp(f, x)[1](x.sin())[0]),
], ids=["grad", "vmap", "jacrev", "jacfwd", "jvp", "vjp"])
def test_transformed_functions_pass_gradcheck(transform):
    def f(x):
        return x.sin() * x.sum() + x ** 3
    x = gradkit.tensor(data(2, 3), requires_grad=True)
    assert gradkit.autograd.gradcheck(transform(f), (x,))
    assert gradkit.autograd.gradgradcheck(transform(f), (x,))


# -- pytree text ---------------------------------------------------------------------------

def test_treespec_text_is_torch_s():
    from torch.utils import _pytree
    from gradkit.func import pytree
    tree = {"b": 1, "a": (2, [3, {"c": 4}]), "d": []}
    assert repr(pytree.tree_flatten(tree)[1]) == repr(_pytree.tree_flatten(tree)[1])
    assert (pytree.treespec_pprint(pytree.tree_flatten(tree)[1])
            == _pytree.treespec_pprint(_pytree.tree_flatten(tree)[1]))
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves == _pytree.tree_flatten(tree)[0]
    assert pytree.tree_unflatten(leaves, spec) == tree
    with pytest.raises(ValueError, match="has length 1 but the spec refers to a pytree that "
                                         "holds 4 items"):
        pytree.tree_unflatten([1], spec)


@pytest.mark.parametrize("module", ["pytree", "transforms", "jacobians", "vmap",
                                    "functional_call"])
def test_docstring_examples(module):
    import doctest
    import importlib
    target = importlib.import_module(f"gradkit.func.{module}")
    names = dict(vars(target), gradkit=gradkit)
    result = doctest.testmod(target, extraglobs=names)
    assert result.attempted > 0 and result.failed == 0


def test_complex_and_float32_inputs():
    def program(lib):
        z = lib.tensor(data(3) + 1j * data(3, seed=1))
        x32 = lib.tensor(data(2, 3), dtype=lib.float32)
        return (lib.func.grad(lambda z: (z * z.conj()).real.sum() + z.abs().sum())(z),
                lib.func.vmap(lib.func.grad(lambda r: (r.exp() * r).sum()))(x32),
                lib.func.hessian(lambda r: (r ** 3).sum())(x32[0]))
    same(program, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("program", [
    lambda lib, w: lib.func.vmap(lambda a: w.mul_(a))(lib.ones(3, 3)),
    lambda lib, w: lib.func.vmap(lambda a, b: b.add_(a), in_dims=(0, None))(lib.ones(3, 3), w),
    lambda lib, w: lib.func.vmap(lib.nn.BatchNorm1d(3))(lib.ones(4, 2, 3)),
], ids=["captured", "unmapped-input", "batch-norm-running-stats"])
def test_vmap_refuses_in_place_writes_into_captured_tensors(program):
    with pytest.raises(RuntimeError):
        program(torch, torch.ones(3))
    with pytest.raises(RuntimeError, match=r"^vmap: .* wrote in place into a tensor it captured or "
                                           r"got with in_dim None\. gradkit's vmap runs the "
                                           r"function once per sample"):
        program(gradkit, gradkit.ones(3))


def test_vmap_in_place_on_its_own_samples_and_modules_in_eval_mode():
    def program(lib):
        x = t(lib, 3, 2)
        out = lib.func.vmap(lambda a: a.mul_(2) + x.shape[0])(x)  # x: mapped and captured
        norm = lib.nn.BatchNorm1d(2).double().eval()
        return out, x, lib.func.vmap(norm)(t(lib, 4, 3, 2))
    same(program)


def test_functional_call_with_kwargs_and_buffers():
    def program(lib):
        norm = lib.nn.BatchNorm1d(2).double()
        stats = {"running_mean": lib.zeros(2, dtype=lib.float64),
                 "running_var": lib.ones(2, dtype=lib.float64)}
        out = lib.func.functional_call(norm, stats, (t(lib, 4, 2),))
        bilinear = lib.nn.Bilinear(2, 3, 1).double()
        weights = {"weight": t(lib, 1, 2, 3, seed=5), "bias": t(lib, 1, seed=6)}
        both = lib.func.functional_call(bilinear, weights, args=(),
                                        kwargs={"input1": t(lib, 1, 2), "input2": t(lib, 1, 3)})
        return out, stats, norm.running_mean, both
    same(program)


def test_custom_functions_under_the_transforms():
    def program(lib):
        class Cube(lib.autograd.Function):
            generate_vmap_rule = True  # torch's vmap needs it; gradkit's runs per sample anyway

            @staticmethod
            def forward(x):
                return x ** 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x ** 2 * g

        x = t(lib, 4, 3)
        return (lib.func.vmap(Cube.apply)(x),
                lib.func.vmap(lib.func.grad(lambda r: Cube.apply(r).sum()))(x),
                lib.func.jacrev(Cube.apply)(x[0]))
    same(program)


def test_hessian_vector_products_by_composition():
    def f(x):
        return (x.sin() * x.roll(1)).sum()

    def program(lib):
        x, v = t(lib, 4), t(lib, 4, seed=1)
        forward_over_reverse = lib.func.jvp(lib.func.grad(f), (x,), (v,))[1]
        reverse_over_reverse = lib.func.vjp(lib.func.grad(f), x)[1](v)[0]
        batched = lib.func.vmap(lambda u: lib.func.jvp(lib.func.grad(f), (x,), (u,))[1])(
            t(lib, 3, 4, seed=2))
        return forward_over_reverse, reverse_over_reverse, batched, lib.func.hessian(f)(x) @ v
    same(program)
