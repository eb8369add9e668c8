"""torch's functorch tests of jvp and linearize (test/functorch/test_eager_transforms.py:
TestJvp, TestLinearize, TestVmapJvpInplaceView), re-checked on gradkit.func against torch
2.13. gradkit's jvp runs forward mode on dual tensors, as torch's (see
gradkit/func/transforms.py); the values, structures and errors are torch's."""
import pytest
from torch_expectations.twin import leaf, like_torch, plain, raises_like_torch


def test_jvp_of_one_and_several_inputs_and_outputs():
    # test_simple, test_multiple_inputs, test_pytree_inputs, test_unrelated_input,
    # test_unrelated_output, test_multiple_outputs, test_multiple_inputs_outputs,
    # test_jvp_new_tensor
    def program(lib):
        jvp = lib.func.jvp
        x, y, tx, ty = (plain(lib, 2, 3, seed=k) for k in range(4))
        one = lib.tensor(1.0)
        return (jvp(lib.sin, (x,), (tx,)), jvp(lambda a, b: a * b, (x, y), (tx, ty)),
                jvp(lambda a, b, c: a[0] + 2 * a[1] + 3 * b + 4 * c, ((one, one), one, one),
                    ((one, one), one, one)),
                jvp(lambda a, b: a, (x, y), (tx, ty)), jvp(lambda a: y, (x,), (tx,)),
                jvp(lambda a: (lib.sin(a), lib.cos(a)), (x,), (tx,)),
                jvp(lambda a, b: (2 * a + 3 * b, 4 * a + 5 * b), (x, y), (tx, ty)),
                jvp(lambda a: a + a.new_tensor(0.5), (x,), (lib.zeros_like(x),)))
    result = like_torch(program)
    assert all(isinstance(r, tuple) for r in result)


def test_jvp_of_pytree_outputs_and_aux():
    # test_outputs_can_any_pytree, test_aux_tensor, test_aux_pytree
    def program(lib):
        jvp = lib.func.jvp
        x, t, v, w = plain(lib, 2, 3), plain(lib, 2, 3, seed=1), plain(lib, 3), plain(lib, 3, 1)
        return (jvp(lambda a: [a, a.sum()], (x,), (t,)),
                jvp(lambda a: {"x": a, "xsum": a.sum()}, (x,), (t,)),
                jvp(lambda a: [(a.sum(), {"a": a, "out": [a, a.sum()]})], (x,), (t,)),
                jvp(lambda a: (a.sin(), a.cos()), (v,), (w.view(3),), has_aux=True),
                jvp(lambda a: (a.sin(), {"a": a.cos(), "b": [a.tan()]}), (v,), (w.view(3),),
                    has_aux=True))
    like_torch(program)


@pytest.mark.parametrize("primals, tangents, match", [
    ("one", "one", "Expected primals to be a tuple"),
    ("((one, one), one)", "(one, one)", "same python structure"),
    ("((one, one), 1)", "((one, one), one)", "only contain Tensors"),
    ("((one, one), 1)", "((1, one), one)", "only contain Tensors"),
    ("((),)", "((),)", "at least one Tensor"),
    ("(one,)", "(one, one)", "same python structure"),
    ("(one, one)", "(one, one, one)", "same python structure"),
    ("()", "()", "at least one Tensor"),
    ("(one,)", "one", "same python structure"),
    ("(one,)", "[one]", "same python structure"),
    ("(1.0,)", "(one,)", "primals to only contain Tensors"),
    ("(one,)", "(1.0,)", "tangents to only contain Tensors")])
def test_jvp_refuses_primals_and_tangents_of_other_structures(primals, tangents, match):
    # test_pytree_inputs_error_cases, test_primals_tangents_length_mismatch,
    # test_nonempty_primals_and_tangents, test_inputs_are_tuples_of_tensors
    def program(lib):
        one = lib.tensor(1.0)
        scope = {"one": one}
        lib.func.jvp(lambda *a: a[0], eval(primals, scope), eval(tangents, scope))
    raises_like_torch(program, RuntimeError, match)


@pytest.mark.parametrize("output", [None, (), 1, True, 12.2, "abc"])
def test_jvp_of_a_function_without_tensor_outputs(output):
    # test_outputs_can_any_pytree
    match = (r"jvp\(f, primals, tangents\): Expected f to be a function that has non-empty "
             "output" if output in (None, ()) else
             r"jvp\(f, primals, tangents\): expected f\(\*primals\) to return only tensors")
    raises_like_torch(lambda lib: lib.func.jvp(lambda _: output, (plain(lib, 2, 3),),
                                               (plain(lib, 2, 3),)), RuntimeError, match)


@pytest.mark.parametrize("output", ["list", "triple", "int", "float", "str", "list_with_int"])
def test_jvp_aux_errors(output):
    # test_aux_tensor, test_aux_pytree
    outputs = {"list": lambda t: [t, t], "triple": lambda t: (t, t + 2, t + 3),
               "int": lambda t: (t, 1), "float": lambda t: (t, 1.0),
               "str": lambda t: (t, "abc"), "list_with_int": lambda t: (t, [t, 1])}
    match = (r"jvp\(f, primals, tangents\): output of function f should be a tuple"
             if output in ("list", "triple") else "Expected tensors, got unsupported type")
    raises_like_torch(lambda lib: lib.func.jvp(outputs[output], (plain(lib, 3),),
                                               (plain(lib, 3),), has_aux=True),
                      RuntimeError, match)


@pytest.mark.parametrize("output", ["detached", "pair_with_detached", "captured",
                                    "pair_with_captured"])
def test_jvp_strict_refuses_outputs_independent_of_the_inputs(output):
    # test_strict_mode
    def program(lib):
        y = plain(lib, 2, 3, seed=1)
        outputs = {"detached": lambda a: a.detach(),
                   "pair_with_detached": lambda a: (a, a.detach()), "captured": lambda a: y,
                   "pair_with_captured": lambda a: (a * 2, y)}
        lib.func.jvp(outputs[output], (plain(lib, 2, 3),), (plain(lib, 2, 3),), strict=True)
    raises_like_torch(program, RuntimeError, r"jvp\(f, primals, tangents, strict=True\): The "
                      "output of f is independent of the inputs")


def test_jvp_strict_accepts_an_output_with_a_zero_derivative():
    # test_strict_mode: x * 0 depends on x
    like_torch(lambda lib: lib.func.jvp(lambda a: a * 0, (plain(lib, 3),), (plain(lib, 3),),
                                        strict=True))


def test_jvp_inside_a_custom_function_and_under_nested_vmap():
    # test_jvp_inside_autograd_function, test_zerotensor_vmapjvp_interaction
    def program(lib):
        f = lib.func

        class MySin(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                _, neg_sin_x = f.jvp(lib.cos, (x,), (lib.ones_like(x),))
                ctx.save_for_backward(x)
                return -neg_sin_x

            @staticmethod
            def backward(ctx, gx):
                (x,) = ctx.saved_tensors
                return gx * f.jvp(lib.sin, (x,), (lib.ones_like(x),))[1]
        x = leaf(lib)
        y = MySin.apply(x)
        x_tangent = plain(lib, 2, seed=1)

        def push_jvp(dummy, x):
            return f.jvp(lib.cov, (x,), (x_tangent,))
        return (y, lib.autograd.grad(y, x),
                f.vmap(f.vmap(push_jvp, (0, None)))(lib.ones(4, 1), plain(lib, 4, 2, seed=2)))
    like_torch(program)


def test_linearize_as_jvp():
    # TestLinearize: test_linearize_basic, test_linearize_return,
    # test_linearize_composition_vmap, test_linearize_composition_grad,
    # test_linearize_nested_input_nested_output
    def program(lib):
        f = lib.func
        x_p, x_t, xs_t = plain(lib, 3, 1), plain(lib, 3, 1, seed=1), plain(lib, 3, 3, 1, seed=2)
        out, jvp_fn = f.linearize(lambda x: x.cos(), x_p)
        pair = lambda x: (x.cos(), x.sum())  # noqa: E731
        pair_out, pair_fn = f.linearize(pair, x_p)

        def of_grad(x):
            return f.grad(lambda x: lib.ones(3, dtype=x.dtype) @ x)(x)
        v_p, v_t = plain(lib, 3, seed=3), plain(lib, 3, seed=4)
        _, grad_fn = f.linearize(of_grad, v_p)
        args = [{"x": plain(lib, 3, 1, seed=k), "yz": (plain(lib, 3, 1, seed=k + 1),
                                                        plain(lib, 3, 1, seed=k + 2))}
                for k in (5, 8)]

        def nested(arg):
            x, (y, z) = arg["x"], arg["yz"]
            return {"a": x.sum(), "b": {"c": y + z, "d": (x * z, y.exp())}}
        nested_out, nested_fn = f.linearize(nested, args[0])
        return (out, jvp_fn(x_t), f.jvp(lambda x: x.cos(), (x_p,), (x_t,)), pair_out,
                pair_fn(x_t), f.vmap(pair_fn)(xs_t),
                f.vmap(lambda t: f.jvp(pair, (x_p,), (t,))[1])(xs_t),
                grad_fn(v_t), f.jvp(of_grad, (v_p,), (v_t,))[1], nested_out, nested_fn(args[1]),
                f.jvp(nested, (args[0],), (args[1],)))
    like_torch(program)


@pytest.mark.parametrize("tangent, match", [
    ("(x_t, x_t)", "to have the same argspec as the primals"),
    ("x_t.unsqueeze(0)", "in flattened pytree doesn't match the shape"),
    ("x_t.to(lib.float32)", "in flattened pytree doesn't match the dtype")])
def test_linearize_refuses_tangents_unlike_the_primals(tangent, match):
    # test_linearize_errors (its CPU cases; the device case needs CUDA)
    def program(lib):
        _, jvp_fn = lib.func.linearize(lambda x: x.sin(), plain(lib, 3, 1))
        x_t = plain(lib, 3, 1, seed=1)
        jvp_fn(eval(tangent, {"x_t": x_t, "lib": lib}))
    raises_like_torch(program, RuntimeError, match)


def test_jvp_and_jacfwd_let_the_function_write_into_its_inputs():
    # TestJac.test_inplace's forward-mode half, and torch's dual tensors: the write lands in
    # the caller's tensor too (grad, vjp and jacrev refuse it: the input is a leaf there)
    def program(lib):
        x = plain(lib, 3)
        written = x.clone()
        out = lib.func.jvp(lambda t: t.mul_(2), (written,), (lib.ones(3, dtype=x.dtype),))
        return out, written, lib.func.jacfwd(lambda t: t.mul_(2))(x.clone())
    like_torch(program)


@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev"])
def test_reverse_transforms_refuse_writing_into_their_inputs(transform):
    def program(lib):
        f, x = lib.func, plain(lib, 3)
        calls = {"grad": lambda: f.grad(lambda t: t.mul_(2).sum())(x),
                 "vjp": lambda: f.vjp(lambda t: t.mul_(2), x),
                 "jacrev": lambda: f.jacrev(lambda t: t.mul_(2))(x)}
        calls[transform]()
    raises_like_torch(program, RuntimeError, "a leaf Variable that requires grad is being used "
                      "in an in-place operation.")


def _push_jvp(lib, f):
    return lambda x, xt, y, yt: lib.func.jvp(f, (x, y), (xt, yt))


def test_vmap_of_jvp_with_in_place_writes_and_views():
    # TestVmapJvpInplaceView: test_all_dual_no_view, test_all_dual_base_view_inplace,
    # test_all_dual_base_inplace
    def no_view(x, y):
        x.copy_(y)
        return x

    def view_then_write(x, y):
        view = x[:, ::2]
        view.copy_(y)
        return view, x

    def write_base(x, y):
        view = x[0, ::2]
        x.copy_(y)
        return x, view

    def program(lib):
        vmap, b = lib.func.vmap, 2
        x, xt, y, yt = (plain(lib, 3, b, seed=k) for k in range(4))
        results = [vmap(_push_jvp(lib, no_view), in_dims=1)(x, xt, y, yt), x]
        x, xt = plain(lib, 3, b, seed=4), plain(lib, 3, b, seed=5)
        y, yt = plain(lib, 3, 3, seed=6)[:, 1], plain(lib, 6, seed=7)[::2]
        results += [vmap(_push_jvp(lib, no_view), in_dims=(1, 1, None, None))(x, xt, y, yt), x]
        x, xt = plain(lib, 2, 6, b, seed=8), plain(lib, 2, 6, b, seed=9)
        y, yt = plain(lib, 2, b, 3, seed=10), plain(lib, 2, b, 3, seed=11)
        results += [vmap(_push_jvp(lib, view_then_write), in_dims=(2, 2, 1, 1))(x, xt, y, yt), x]
        x, xt = plain(lib, 2, b, 6, seed=12), plain(lib, 2, 6, b, seed=13)
        y, yt = plain(lib, 2, b, 6, seed=14), plain(lib, 2, b, 6, seed=15)
        results += [vmap(_push_jvp(lib, write_base), in_dims=(1, 2, 1, 1))(x.clone(), xt, y, yt),
                    vmap(write_base, in_dims=(1, 1))(x.clone(), y)]
        return results
    like_torch(program)


def test_vmap_of_jvp_writing_a_dual_into_a_plain_tensor():
    # TestVmapJvpInplaceView: test_right_dual_view_prop, test_right_dual_base_prop
    def into_view(x, y):
        x = x.clone()
        view = x[0]
        view.copy_(y)
        return view, x

    def into_base(x, y):
        x = x.clone()
        view = x[0]
        x.copy_(y)
        return view, x

    def program(lib):
        f, b = lib.func, 2

        def push(g):
            return lambda x, y, yt: f.jvp(lambda y: g(x, y), (y,), (yt,))
        x, y, yt = plain(lib, 2, b, 6), plain(lib, 6, b, seed=1), plain(lib, 6, b, seed=2)
        x2, y2, yt2 = (plain(lib, 2, b, 6, seed=3), plain(lib, 2, 6, b, seed=4),
                       plain(lib, 2, 6, b, seed=5))
        return (f.vmap(push(into_view), in_dims=(1, 1, 1))(x, y, yt),
                f.vmap(into_view, in_dims=(1, 1))(x.clone(), y),
                f.vmap(push(into_base), in_dims=(1, 2, 2))(x2, y2, yt2),
                f.vmap(into_base, in_dims=(1, 2))(x2, y2))
    like_torch(program)


def test_jvp_runs_forward_mode_through_no_grad_and_stops_at_detach():
    """Forward mode ignores grad mode: no_grad() inside func keeps the tangent, detach()
    drops it (h-fwdjvp: gradkit's jvp was a double backward pass, which no_grad() stopped)."""
    def program(lib):
        x, t = plain(lib, 3), plain(lib, 3, seed=1)

        def f(a):
            with lib.no_grad():
                b = a.sin() * a
            return b + a.detach() * a, lib.maximum(a, a)
        return lib.func.jvp(f, (x,), (t,))
    like_torch(program)


def test_jvp_nests_and_composes_with_reverse_mode():
    """jvp of jvp (the inner one gradkit's double-vjp fallback under the outer dual level),
    jvp of grad (forward over reverse), grad of jvp (reverse over forward), jacfwd of jacfwd
    and hessian, as torch's."""
    def program(lib):
        func = lib.func
        x, t = plain(lib, 2), plain(lib, 2, seed=1)
        xr = x.clone().requires_grad_()
        tangent = func.jvp(lambda a: a.exp() * a, (xr,), (t,))[1]
        return (func.jvp(lambda a: func.jvp(lambda b: b.sin() * b, (a,), (t,))[1], (x,),
                         (t * 0.5,)),
                func.jvp(func.grad(lambda a: (a.sin() * a ** 3).sum()), (x,), (t,)),
                lib.autograd.grad(tangent.sum(), xr),
                func.jacfwd(func.jacfwd(lambda a: a.sin() * a.sum()))(x),
                func.hessian(lambda a: (a.exp() * a.cos()).sum())(x))
    like_torch(program)


def test_jvp_inside_a_forward_ad_level_is_torchs_nested_error():
    """torch's jvp enters a dual level of its own: inside a user's dual_level that is
    "Nested forward mode AD is not supported" (gradkit's fell back to the double-vjp trick)."""
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(plain(lib, 2), plain(lib, 2, seed=1))
            lib.func.jvp(lambda a: a ** 3, (x,), (plain(lib, 2, seed=2),))
    raises_like_torch(program, RuntimeError, "Nested forward mode AD is not supported")


def test_jacfwd_writes_into_its_arguments_once():
    """jacfwd is one jvp per input element in gradkit (torch vmaps one call): func's writes
    into the differentiated input and into another argument land once in the caller's
    tensors."""
    def program(lib):
        x, w = plain(lib, 2), lib.zeros(2, dtype=lib.float64)
        jacobian = lib.func.jacfwd(lambda a, b: b.add_(1) * a.mul_(2))(x, w)
        return jacobian, x, w
    like_torch(program)
