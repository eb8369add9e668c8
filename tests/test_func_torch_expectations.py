"""torch's functorch eager-transform tests (test/functorch/test_eager_transforms.py,
TestGradTransform), re-checked on gradkit.func: each test runs one program under gradkit and,
when torch is installed, under torch 2.13, and compares results or errors. See the ledger in
docs/torch_expectations.md ("functorch eager transforms")."""
import pytest
from torch_expectations.twin import data, leaf, like_torch, plain, raises_like_torch


def test_grad_of_primitives_and_composites():
    # test_primitive, test_composite_simple, test_composite_complicated, test_fn_with_kwargs
    def program(lib):
        x, y, m = plain(lib), plain(lib, 3, seed=1), plain(lib, 3, 5, seed=2)
        return (lib.func.grad(lib.sin)(x),
                lib.func.grad(lambda t: lib.flatten(t).sum())(plain(lib, 2, 3, 4)),
                lib.func.grad(lambda a, b: (a @ b).sum())(y, m),
                lib.func.grad(lambda a, b: (a * b).sum())(y, b=plain(lib, 3, seed=3)))
    like_torch(program)


def test_grad_of_cross_entropy_and_of_linear_with_an_in_place_relu():
    # test_composite_two_ops, test_linear_nd_inplace_activation (its values; the dispatch
    # mode recording aten ops is out of scope)
    def program(lib):
        F = lib.nn.functional
        targets = lib.tensor([1, 4])
        x, w, b = plain(lib, 2, 3, 8), plain(lib, 16, 8, seed=1), plain(lib, 16, seed=2)
        return (lib.func.grad(F.cross_entropy)(plain(lib, 2, 5), targets),
                lib.func.grad(lambda x, w, b: F.linear(x, w, b).relu_().sum(),
                              argnums=(0, 1, 2))(x, w, b))
    like_torch(program)


def test_inputs_keep_their_attributes_inside_grad():
    # test_shape, test_dtype, test_is_cuda, test_numel
    def program(lib):
        seen = []

        def foo(x):
            seen.extend([tuple(x.shape), str(x.dtype).split(".")[1], x.is_cuda, x.numel()])
            return x.sum()
        lib.func.grad(foo)(plain(lib, 2, 3, 5))
        return seen
    like_torch(program)


def test_grad_through_in_place_ops_and_views():
    # test_inplace, test_inplace_on_view, test_inplace_on_view_base, test_view_inplace_simple
    def on_view(lib, x):
        y = x.clone()
        y[0].sin_()
        return y.sum()

    def on_base(lib, x):
        y = x.clone()
        y0 = y[0]
        y.sin_()
        return y0

    def view_inplace(lib, x):
        x = x.clone()
        x.view([]).sin_()
        return x

    def program(lib):
        x, s = plain(lib, 3), plain(lib)
        return (lib.func.grad(lambda t: t.clone().sin_())(s),
                lib.func.grad(lambda t: on_view(lib, t))(x),
                lib.func.grad(lambda t: on_base(lib, t))(x),
                lib.func.grad(lambda t: view_inplace(lib, t))(s.requires_grad_()))
    result = like_torch(program)
    assert result[0].allclose(plain(__import__("gradkit")).cos())


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "jacrev", "jacfwd"])
def test_transforms_refuse_writing_into_a_captured_tensor(transform):
    # test_inplace_on_captures (torch refuses any in-place op on a captured tensor, even one
    # writing a constant; gradkit notices after the function returns)
    def program(lib):
        captured = plain(lib, 3, seed=1)
        x = lib.tensor([1.0, 2.0, 3.0])

        def foo(t):
            captured.copy_(t) if transform == "grad" else captured.add_(1)
            return (t * captured).sum()
        f = lib.func
        calls = {"grad": lambda: f.grad(foo)(x), "vjp": lambda: f.vjp(foo, x),
                 "jvp": lambda: f.jvp(foo, (x,), (x,)), "jacrev": lambda: f.jacrev(foo)(x),
                 "jacfwd": lambda: f.jacfwd(foo)(x)}
        calls[transform]()
    raises_like_torch(program, RuntimeError, "mutate a captured Tensor")


def test_nested_grad_and_tensors_that_escape_grad():
    # test_nesting_simple, test_escaped_wrappers_are_ignored, test_manual_seed_inside_grad
    def program(lib):
        x, escaped = plain(lib), []

        def foo(t):
            y = t.sin()
            escaped.append(y)
            return y

        def seeded(t):
            lib.manual_seed(0)
            return t * lib.randn_like(t)
        first = lib.func.grad(foo)(x)
        # each library's own draws: grad reseeds as plain autograd does
        seeded_grad = lib.func.grad(seeded)(x)
        assert seeded_grad.equal(lib.autograd.grad(seeded(x.requires_grad_()), x)[0])
        return (lib.func.grad(lib.func.grad(lib.sin))(x), first, escaped[0].sum(),
                escaped[0].requires_grad)
    like_torch(program)


def test_vjp_and_compositions_of_grad_and_vjp():
    # test_vjp, test_vjp_two_outputs, test_grad_of_vjp_composition,
    # test_vjp_of_grad_composition, test_grad_of_vjp_of_grad_composition
    def program(lib):
        f = lib.func
        x, y = plain(lib), plain(lib, seed=1)
        out, vjp_fn = f.vjp(lib.sin, x)
        result, two_fn = f.vjp(lambda t: (t, t), lib.tensor(1.0))

        def grad_of_vjp(x, y):
            _, fn = f.vjp(lib.sin, x)
            return f.grad(lambda y: fn(y)[0])(y)

        def grad_of_vjp_of_grad(x, y):
            _, fn = f.vjp(f.grad(lambda x: -lib.cos(x)), x)
            return f.grad(lambda y: fn(y)[0])(y)
        return (out, vjp_fn(y), two_fn(result), grad_of_vjp(x, y),
                f.vjp(f.grad(lib.sin), x)[1](y), grad_of_vjp_of_grad(x, y))
    like_torch(program)


def test_grad_of_a_complex_conj_view():
    # test_conj_bit: the input is not conjugate, its conj() is; d|conj(x)| = sgn(x)
    def program(lib):
        flags = []

        def foo(x):
            y = x.conj()
            flags.extend([x.is_conj(), y.is_conj()])
            return y.abs()
        return lib.func.grad(foo)(lib.tensor(1 + 1j)).resolve_conj(), flags
    like_torch(program)


def test_grad_composes_with_autograd_outside():
    # test_composed_with_autograd, test_views
    def program(lib):
        x, y = leaf(lib), leaf(lib, seed=1)

        def silly_sin(t):
            return t.view([]).sin()
        z = lib.func.grad(silly_sin)(x) + lib.cos(y)
        return lib.autograd.grad(lib.func.grad(lib.sin)(x), x), lib.autograd.grad(z, [x, y])
    like_torch(program)


@pytest.mark.parametrize("argnums, match", [
    (-3, "but only"), (2, "but only"), ([0], "int or Tuple"), (("0",), "must be int"),
    ((0, 0), "must be unique"), ((0, -2), "must be unique"), (0.0, "int or Tuple"),
    ((), "must be non-empty"), (((0, 1), 2), "must be int")])
def test_invalid_argnums(argnums, match):
    # test_invalid_argnums, and TestSliceArgnums' cases through the public grad
    raises_like_torch(lambda lib: lib.func.grad(lib.mul, argnums=argnums)(
        plain(lib), plain(lib, seed=1)), RuntimeError, match)


def test_argnums_select_reorder_and_count_from_the_end():
    # test_argnums, test_out_of_order_argnums, test_negative_argnums
    def program(lib):
        x, y = plain(lib), plain(lib, seed=1)
        g = lib.func.grad
        return [g(lib.mul, argnums=a)(x, y)
                for a in (0, 1, (0,), (0, 1), (1, 0), -2, -1, (-2,), (-2, -1))]
    like_torch(program)


def test_grad_of_pytree_inputs_and_aux():
    # test_grad_pytree_inputs, test_grad_aux_tensor, test_grad_aux_pytree, test_zero_grad
    def program(lib):
        x, v = plain(lib), plain(lib, 3, seed=1)

        def f(a, b):
            return 1 * a[0] + 2 * a[1] + 3 * b["foo"]
        args = ((x, x), {"foo": x})
        g = lib.func.grad
        inputs = {"a": plain(lib, 10, seed=2) + 3, "b": plain(lib, 10, seed=3)}
        return (g(f)(*args), g(f, argnums=(0,))(*args), g(f, argnums=(0, 1))(*args),
                g(lambda t: (t.sin().sum(), t.cos()), has_aux=True)(v),
                g(lambda t: (t.sin().sum(), {"a": t.cos(), "b": [t.tan()]}), has_aux=True)(v),
                g(lambda d: (d["a"] ** 2.0).sum())(inputs))
    like_torch(program)


@pytest.mark.parametrize("transform", ["grad", "vjp"])
@pytest.mark.parametrize("output", ["list", "triple", "int", "float", "str", "list_with_int"])
def test_aux_errors(transform, output):
    # test_grad_aux_tensor, test_grad_aux_pytree, test_vjp_aux_tensor, test_vjp_aux_pytree
    outputs = {"list": lambda t: [t, t], "triple": lambda t: (t, t + 2, t + 3),
               "int": lambda t: (t.sum(), 1), "float": lambda t: (t.sum(), 1.0),
               "str": lambda t: (t.sum(), "abc"), "list_with_int": lambda t: (t.sum(), [t, 1])}
    match = ("Expected tensors, got unsupported type" if output not in ("list", "triple") else
             r"grad_and_value\(f\)\(\*args\): output of function f should be a tuple"
             if transform == "grad" else
             r"vjp\(f, \*primals\): output of function f should be a tuple")

    def program(lib):
        x = plain(lib, 3)
        if transform == "grad":
            lib.func.grad(outputs[output], has_aux=True)(x)
        else:
            lib.func.vjp(outputs[output], x, has_aux=True)
    raises_like_torch(program, RuntimeError, match)


def test_outputs_unrelated_to_the_inputs_give_zeros():
    # test_unrelated_grad, test_unrelated_vjp, test_unrelated_vjp_multiple_inputs_outputs,
    # test_unrelated_hessian
    def program(lib):
        w, x, y, v = (lib.tensor(3.0), lib.tensor(4.0), lib.tensor(2.0), lib.tensor(1.0))
        f = lib.func
        m = plain(lib, 5, 3)
        return (f.grad(lambda t: y)(x), f.vjp(lambda t: y, x)[1](v),
                f.vjp(lambda a, b: (y, y, b), w, x)[1]((v, v, v)),
                f.jacrev(f.jacrev(lambda t: m @ t))(plain(lib, 3, seed=1)))
    like_torch(program)


def test_vjp_of_pytree_inputs_and_outputs():
    # test_vjp_pytree_input, test_vjp_pytree_output, test_vjp_outputs_can_any_pytree,
    # test_vjp_aux_tensor, test_vjp_aux_pytree
    def program(lib):
        f = lib.func
        x, v1, v2, v3 = (plain(lib, seed=k) for k in range(4))
        m, t = plain(lib, 2, 3, seed=4), plain(lib, 2, 3, seed=5)
        out, fn = f.vjp(lambda p: p[0] * p[1][0], (x, (x, x)))
        _, tree_fn = f.vjp(lambda p: (p, (p, p)), x)
        as_list, list_fn = f.vjp(lambda p: [p, p.sum()], m)
        as_dict, dict_fn = f.vjp(lambda p: {"x": p, "xsum": p.sum()}, m)
        nested, nested_fn = f.vjp(lambda p: [(p.sum(), {"a": p, "out": [p, p.sum()]})], m)
        aux_out, aux_fn, aux = f.vjp(lambda p: (p.sin(), {"a": p.cos(), "b": [p.tan()]}), m,
                                     has_aux=True)
        return (out, fn(v1), tree_fn((v1, (v2, v3))), as_list, list_fn([t, t.sum()]), as_dict,
                dict_fn({"x": t, "xsum": t.sum()}), nested,
                nested_fn([(t.sum(), {"a": t, "out": [t, t.sum()]})]), aux_out, aux, aux_fn(t))
    like_torch(program)


@pytest.mark.parametrize("output", [None, (), 1, True, 12.2, "abc"])
def test_vjp_of_a_function_without_tensor_outputs(output):
    # test_vjp_outputs_can_any_pytree
    match = (r"vjp\(f, \*primals\): Expected f to be a function that has non-empty output"
             if output in (None, ()) else
             r"vjp\(f, \*primals\): expected f\(\*primals\) to return only tensors")

    def program(lib):
        _, vjp_fn = lib.func.vjp(lambda _: output, plain(lib, 2, 3))
        vjp_fn(plain(lib, 2, 3, seed=1))
    raises_like_torch(program, RuntimeError, match)


def test_vjp_cotangents_of_another_structure():
    # test_vjp_pytree_error
    def program(lib):
        _, vjp_fn = lib.func.vjp(lambda t: (t, (t, t)), plain(lib))
        vjp_fn(((plain(lib), (plain(lib), plain(lib))),))
    raises_like_torch(program, RuntimeError, "Expected pytree structure")


def test_grad_through_boolean_mask_indexing_and_new_tensors():
    # test_advanced_indexing, test_tensor_ctor_inside_grad
    def f(lib, value):
        log_prob = lib.ones(())
        log_prob[lib.zeros(()) > 0] = 0
        return value

    def f2(value):
        value = value.clone()
        value[value > 0] = 0
        return value.sum()

    def program(lib):
        x = plain(lib, 100)
        return (lib.func.grad(lambda v: f(lib, v))(plain(lib)), lib.func.grad(f2)(x),
                lib.func.grad(lambda t: t * lib.tensor(2.0))(lib.tensor(3.14)))
    like_torch(program)


def test_a_captured_tensor_prints_the_same_inside_a_transform():
    # test_print_captured_tensor_inside_transform
    def program(lib):
        x, printed = lib.tensor([1.0, 2.0, 3.0]), []

        def f(y):
            printed.append(repr(x))
            return y
        lib.func.vjp(f, plain(lib, 4))
        return printed == [repr(x)]
    assert like_torch(program)


def test_no_grad_around_and_inside_grad():
    # test_no_grad_outside, test_no_grad_inside, test_no_grad_mixed,
    # test_no_grad_nested_simple, test_no_grad_nested_complicated, test_no_grad_value
    def program(lib):
        g = lib.func.grad

        def f(x):
            with lib.no_grad():
                shift = x ** 2
            return x ** 2 - shift

        def h(x):
            with lib.no_grad():
                shift = g(lambda x: 0.25 * x ** 4)(x)
            return x ** 3 - shift

        def cubic(x):
            with lib.no_grad():
                shift = x ** 3
            return x ** 3 - shift

        def nested(x):
            first = g(cubic)(x)
            with lib.no_grad():
                shift = g(cubic)(x)
            return first - shift

        def value(x):
            with lib.no_grad():
                _, v = lib.func.grad_and_value(lambda x: x ** 3)(x)
            return x ** 3 - v
        x, r = plain(lib), leaf(lib, seed=1)
        with lib.no_grad():
            outside, mixed = g(lib.sin)(r), g(f)(r)
        results = [outside, outside.requires_grad, mixed, mixed.requires_grad, g(f)(x),
                   g(g(f))(x), lib.autograd.grad(g(f)(r), r)]
        for fn in (h, nested, value):
            y = g(fn)(r)
            results += [y, lib.autograd.grad(y, r)]
        return results
    like_torch(program)


def test_no_grad_around_vjp_and_its_vjp_fn():
    # test_no_grad_outside_vjp, test_no_grad_outside_vjp_fn, test_no_grad_outside_vjp_only
    # (torch: the vjp_fn of a vjp made under no_grad, called with grad on, gives a result
    # that requires grad and leads back to x)
    def program(lib):
        x, one = leaf(lib, positive=True), lib.tensor(1.0, dtype=lib.float64)
        square = lib.square
        with lib.no_grad():
            out, vjp_fn = lib.func.vjp(square, x)
            (y,) = vjp_fn(one)
        results = [out, y, out.requires_grad, y.requires_grad]
        out, vjp_fn = lib.func.vjp(square, x)
        with lib.no_grad():
            (y,) = vjp_fn(one)
        results += [y, y.requires_grad, out.requires_grad, lib.autograd.grad(out, x)]
        with lib.no_grad():
            out, vjp_fn = lib.func.vjp(square, x)
        (y,) = vjp_fn(one)
        return results + [y, out.requires_grad, y.requires_grad, lib.autograd.grad(y, x)]
    like_torch(program)


def test_transforms_under_inference_mode():
    # test_inference_mode_outside_{grad,vjp,jvp,jacrev,vmap_grad,grad_vmap},
    # test_inference_mode_nograd_outside_grad, test_inference_mode_nested_grad,
    # test_inference_mode_jacrev_grad, test_inference_mode_inside_grad,
    # test_inference_mode_restored
    def program(lib):
        f = lib.func
        x, xs, s = plain(lib, 3), plain(lib, 5, 3, seed=1), plain(lib, seed=2)
        squares = lambda t: (t ** 2).sum()  # noqa: E731

        def inside(t):
            with lib.inference_mode():
                c = t ** 2
            return (t - c).sum()
        with lib.inference_mode():
            results = [f.grad(squares)(x), f.vjp(squares, x)[1](lib.tensor(1.0).double()),
                       f.jvp(squares, (x,), (lib.ones_like(x),)), f.jacrev(lambda t: t ** 2)(x),
                       f.vmap(f.grad(squares))(xs),
                       f.grad(lambda t: f.vmap(lambda u: (u ** 2).sum())(t).sum())(x),
                       f.grad(f.grad(lambda t: t ** 3))(s),
                       f.jacrev(f.grad(lambda t: (t ** 3).sum()))(x), f.grad(inside)(x),
                       lib.is_inference_mode_enabled()]
            made_inside = plain(lib, 3, seed=3)  # an inference tensor
            flags = [r.is_inference() for r in results[:1] + results[3:5]]
            results += [f.grad(squares)(made_inside), flags, made_inside.is_inference(),
                        f.vmap(lambda t: t * 2)(x).is_inference()]
            with lib.no_grad():
                results.append(f.grad(squares)(x))
        return results + [lib.is_inference_mode_enabled()]
    like_torch(program)


def test_per_sample_gradients_by_vmap_of_grad():
    # TestVmapOfGrad: test_per_sample_grads_inplace_view, test_per_sample_grads_simple,
    # test_new_zeros_materializes_tensor, test_new_empty_materializes_tensor
    def program(lib):
        f = lib.func

        def squeezed(weight, x, t):
            return (x.mm(weight).squeeze_(0) - t).sum()

        def squared(weight, x, t):
            return ((x @ weight - t) ** 2).sum()

        def fill(y, x, new):
            result = getattr(x, new)((5,))
            result.copy_(y)
            return result.sum()
        weight, t = plain(lib, 16, 2), plain(lib, 8, 2, seed=1)
        xs, x3 = plain(lib, 8, 1, 16, seed=2), plain(lib, 8, 16, seed=3)
        results = []
        for loss, x in ((squeezed, xs), (squared, x3)):
            per_sample = f.vmap(lambda x, t, loss=loss: f.grad(loss)(weight, x, t))(x, t)
            looped = lib.stack([f.grad(loss)(weight, x[i], t[i]) for i in range(8)])
            results += [per_sample, looped]
        y, x = plain(lib, 3, 5, seed=4), plain(lib, 3, seed=5)
        return results + [f.vmap(f.grad(lambda y, x, new=new: fill(y, x, new)))(y, x)
                          for new in ("new_zeros", "new_empty")]
    like_torch(program)


def test_per_sample_gradients_of_an_embedding_net_through_functional_call():
    # test_per_sample_grads_embeddingnet (functional_call; functorch's make_functional is not
    # gradkit's), test_log_softmax
    def program(lib):
        nn, f = lib.nn, lib.func
        net = nn.Sequential(nn.Embedding(50, 4), nn.Flatten(), nn.Linear(20, 4), nn.ReLU(),
                            nn.Linear(4, 2)).double()
        with lib.no_grad():
            for seed, p in enumerate(net.parameters()):
                p.copy_(plain(lib, *p.shape, seed=seed))
        words = lib.tensor((abs(data(6, 5)) * 10).astype(int))
        targets = lib.tensor([0, 1, 1, 0, 1, 0])
        weights = dict(net.named_parameters())

        def loss(weights, data, target):
            out = f.functional_call(net, weights, (data.unsqueeze(0),))
            return nn.functional.cross_entropy(out, target.unsqueeze(0))
        per_sample = f.vmap(lambda d, t: f.grad(loss)(weights, d, t))(words, targets)
        x, v = plain(lib, 3, 5), plain(lib, 5, seed=1)

        def foo(x, v):
            _, vjp_fn = f.vjp(lambda t: lib.log_softmax(t, dim=-1), x)
            return vjp_fn(v)[0]
        return per_sample, f.vmap(foo, (0, None))(x, v)
    like_torch(program)


def test_jvp_with_an_inference_tangent_under_inference_mode():
    """A tangent made inside inference_mode: gradkit's jvp (a vjp of a vjp) saved it in the
    second pass's graph (x * x, sin) and raised "Inference tensors cannot be saved for
    backward"; torch's forward mode computes."""
    def program(lib):
        x = plain(lib, 3)
        with lib.inference_mode():
            return [lib.func.jvp(fn, (x,), (lib.ones_like(x),))[1] for fn in (
                lambda t: (t * t).sum(), lambda t: t.sin().sum(), lambda t: (t ** 2).sum())] + \
                [lib.func.jacfwd(lambda t: t * t)(x)]
    like_torch(program)
