"""torch's tests of vmap's API (test/functorch/test_vmap.py: TestVmapAPI; in_dims, out_dims,
chunk_size, randomness, nested structures and their errors, not the batching rules),
re-checked on gradkit.func.vmap against torch 2.13. gradkit's vmap runs the function once
per sample, so results never share memory with the inputs (torch's are often views)."""
import collections
import functools
from collections import OrderedDict

import pytest

import gradkit
from torch_expectations.twin import leaf, like_torch, plain, raises_like_torch


@pytest.mark.parametrize("output, match", [
    (lambda x: 3.14, "got type <class 'float'>"), (lambda x: (x, 3), "got type <class 'int'>")])
def test_non_tensor_outputs_are_refused(output, match):
    # test_non_tensor_output_raises
    raises_like_torch(lambda lib: lib.func.vmap(output)(lib.ones(3)), ValueError, match)


@pytest.mark.parametrize("case", ["args", "tuple", "dict"])
def test_different_sizes_in_the_mapped_dimension_are_refused(case):
    # test_different_map_dim_size_raises
    def program(lib):
        x, y, vmap = plain(lib, 2), plain(lib, 3, seed=1), lib.func.vmap
        if case == "args":
            vmap(lib.mul)(x, y)
        elif case == "tuple":
            vmap(lambda z: z[0] + z[1], in_dims=((0, 0),))((x, y))
        else:
            vmap(lambda z: z["x"] + z["y"], in_dims=({"x": 0, "y": 0},))({"x": x, "y": y})
    raises_like_torch(program, ValueError,
                      "Expected all tensors to have the same size in the mapped dimension")


@pytest.mark.parametrize("arity", [0, 1])
def test_a_call_without_inputs_is_refused(arity):
    # test_func_with_no_inputs
    def program(lib):
        fn = (lambda: lib.zeros(3)) if arity == 0 else (lambda x: lib.zeros(3))
        lib.func.vmap(fn)()
    raises_like_torch(program, ValueError, "got no inputs")


def test_a_call_without_tensors_to_map_is_refused():
    # test_func_with_no_tensors
    raises_like_torch(lambda lib: lib.func.vmap(lambda x: lib.zeros(3), (None,))(1), ValueError,
                      "at least one Tensor")


def test_outputs_of_one_and_several_inputs_and_nesting():
    # test_constant_function, test_single_input, test_multiple_inputs, test_multiple_outputs,
    # test_multiple_outputs2, test_nested_with_same_map_dim, test_nested_with_diag_embed,
    # test_nested_with_different_map_dim, test_noop_in_inner_vmap
    def program(lib):
        vmap = lib.func.vmap
        x, y = plain(lib, 2, 3, 5), plain(lib, 2, 3, 5, seed=1)
        a, b, c = plain(lib, 2, 3, seed=2), plain(lib, 5, 3, seed=3), plain(lib, 7, 3, seed=4)
        v = plain(lib, 3, seed=5)
        return (vmap(lambda t: lib.tensor(3.14))(lib.ones(3)), vmap(lambda t: t * t)(a),
                vmap(lib.mul)(a, a + 1), vmap(lambda t: (t * t, t * t * t))(v),
                vmap(lambda t: (t, t))(v), vmap(lambda t: [t, t])(v), vmap(lambda t: [t])(v),
                vmap(vmap(lib.mul))(x, y), vmap(vmap(vmap(lib.mul)))(x, y),
                vmap(vmap(lib.diag_embed))(plain(lib, 3, 3, 5, seed=6)),
                vmap(lambda p: vmap(lambda q: p * q)(b))(a),
                vmap(lambda p: vmap(lambda q: vmap(lambda r: p * q * r)(c))(b))(a),
                vmap(lambda p: vmap(lambda q: p)(plain(lib, 5, seed=7)))(v))
    like_torch(program)


def test_out_dims_place_the_batch_dimension():
    # test_nonzero_out_dims (its values: torch's results are views of the input, gradkit's
    # are stacked copies), test_multiple_out_dims, test_nested_out_dims,
    # test_out_dims_edge_case
    def program(lib):
        vmap = lib.func.vmap
        t2, t4 = plain(lib, 2, 3), plain(lib, 2, 3, 5, 7, seed=1)
        o4 = plain(lib, 2, 3, 5, 7, seed=2)
        x, y = plain(lib, 2, 3, 5, seed=3), plain(lib, 2, 3, 5, seed=4)
        a, b = plain(lib, 2, 3, seed=5), plain(lib, 5, 3, seed=6)
        return (vmap(lambda t: t, out_dims=1)(t2), vmap(lambda t: t, out_dims=2)(t4),
                vmap(lambda t: t, out_dims=-1)(t4), vmap(lambda p, q: (p, q), out_dims=2)(t4, o4),
                vmap(lambda t: t, out_dims=2)(plain(lib, 2, *[1] * 9, seed=7)).shape,
                vmap(lambda p, q: (p, p * q, p * q * q), out_dims=1)(x, y),
                vmap(lambda t: (t, t), out_dims=(0, 1))(x),
                vmap(lambda p, q: (p, p, p, p * q), out_dims=(-1, 0, 1, 2))(x, y),
                vmap(lambda q: vmap(lambda p: p, out_dims=1)(q))(t4),
                vmap(lambda q: vmap(lambda p: p, out_dims=1)(q), out_dims=1)(t4),
                vmap(lambda q: vmap(lambda p: p, out_dims=-1)(q), out_dims=-1)(t4),
                vmap(lambda q: vmap(lambda p: p * q, out_dims=1)(a), out_dims=-1)(b),
                vmap(lambda t: t, out_dims=(1,))(t2))
    like_torch(program)


def test_out_dims_none_for_outputs_that_are_not_batched():
    # test_out_dims_none_tuple, test_out_dims_none, test_out_dims_normal_tensor
    def program(lib):
        vmap, tensor = lib.func.vmap, plain(lib, 2, 3)

        def add_and_constants(x):
            x.add_(1)
            return None, "hello world"

        def add_and_text(x):
            x.add_(1)
            return "hello world"
        first, text = vmap(lambda x: (x, "hello world"), out_dims=(0, None))(tensor)
        return (first.clone(), text,  # torch's first is a view of tensor, written below
                vmap(add_and_constants, out_dims=(None, None))(tensor),
                vmap(add_and_text, out_dims=None)(tensor), tensor,
                vmap(lambda x: lib.arange(3))(tensor), vmap(lambda x: lib.arange(3),
                                                             out_dims=None)(tensor))
    like_torch(program)


def test_out_dims_none_for_a_batched_output_is_refused():
    # test_out_dims_none
    raises_like_torch(lambda lib: lib.func.vmap(lambda x: x, out_dims=None)(plain(lib, 2, 3)),
                      ValueError, "can not return a BatchedTensor when out_dim is None")


def test_pytree_outputs_and_out_dims_that_broadcast_over_them():
    # test_pytree_returns, test_pytree_odict_returns, test_pytree_returns_outdims,
    # test_pytree_returns_broadcast_simple, test_pytree_returns_broadcast_nested
    def program(lib):
        vmap, x = lib.func.vmap, plain(lib, 2, 3)

        def nested(t):
            y = t.sin()
            return y, (y, y), [y, (y, y)]

        def pair(t):
            y = t.sin()
            return y, (y, y)
        odict = vmap(lambda t: OrderedDict([("sin", t.sin()), ("cos", t.cos())]))(x)
        return (vmap(nested)(x), odict, isinstance(odict, OrderedDict),
                vmap(pair, out_dims=(0, (0, 1)))(x), vmap(pair, out_dims=1)(x),
                vmap(pair, out_dims=(0, 1))(x))
    like_torch(program)


@pytest.mark.parametrize("out_dims", ["lol", ("lol",)])
def test_out_dims_must_be_ints(out_dims):
    # test_out_dims_must_be_int_or_collection_of_int_err_msg
    raises_like_torch(lambda lib: lib.func.vmap(lambda x: x, out_dims=out_dims)(
        plain(lib, 2, 3)), ValueError, "must be an int, None or a python collection of ints")


@pytest.mark.parametrize("n_outputs, out_dims", [(1, (0, 0)), (3, (0, 0, 0, 0)), (2, (0,)),
                                                 (3, (0, 0))])
def test_out_dims_of_another_structure_than_the_outputs(n_outputs, out_dims):
    # test_out_dims_and_num_outputs_mismatch_err_msg
    def program(lib):
        fn = (lambda x: x) if n_outputs == 1 else (lambda x: (x,) * n_outputs)
        lib.func.vmap(fn, out_dims=out_dims)(plain(lib, 2, 3, 5))
    raises_like_torch(program, ValueError, "not compatible")


@pytest.mark.parametrize("out_dims", [3, -4])
def test_out_dims_out_of_range(out_dims):
    # test_out_dim_out_of_bounds_err_msg
    raises_like_torch(lambda lib: lib.func.vmap(lambda x: x, out_dims=out_dims)(
        plain(lib, 2, 3, 5)), IndexError, "Dimension out of range")


def test_in_dims_none_negative_and_nested():
    # test_non_zero_in_dims, test_none_in_dims, test_nested_non_default_in_dims,
    # test_nested_negative_in_dims, test_non_default_in_dims_out_dims (values; torch's
    # identity results are views of the input)
    def program(lib):
        vmap = lib.func.vmap
        t, x, y = plain(lib, 2, 3, 5), plain(lib, 2, 3, seed=1), plain(lib, 3, 2, seed=2)
        a, b = plain(lib, 5, 2, 3, seed=3), plain(lib, 3, 5, 2, seed=4)
        double = lambda v: v * 2  # noqa: E731
        return (vmap(lambda v: v, (1,))(t), vmap(lib.mul, (0, 1))(x, y),
                vmap(lib.mul, (1, 0))(y, x), vmap(lib.mul, (0, None))(x, x + 1),
                vmap(lib.mul, (0, None))(x, 2), vmap(vmap(vmap(lib.mul), (1, 0)), (1, 2))(a, b),
                vmap(lib.mul, (-1, -1))(x, x + 1), vmap(lambda v: v, in_dims=1, out_dims=1)(t),
                vmap(lambda v: v, in_dims=2, out_dims=1)(t), vmap(double, in_dims=1, out_dims=1)(t),
                vmap(double, in_dims=2, out_dims=1)(t), vmap(vmap(double, 1, 1), 1, 1)(t))
    like_torch(program)


def test_nested_inputs_and_in_dims_of_their_structure():
    # test_accepts_nested_inputs
    def program(lib):
        vmap, x, y = lib.func.vmap, plain(lib, 2, 3), plain(lib, 2, 3, seed=1)
        pair = lambda z: z[0] + z[1]  # noqa: E731
        named = lambda z: z["x"] + z["y"]  # noqa: E731
        return (vmap(pair)((x, y)), vmap(pair, in_dims=(0,))((x, y)),
                vmap(pair, in_dims=((0, 0),))((x, y)), vmap(pair)([x, y]),
                vmap(pair, in_dims=(0,))([x, y]), vmap(pair, in_dims=([0, 0],))([x, y]),
                vmap(named)({"x": x, "y": y}), vmap(named, in_dims=(0,))({"x": x, "y": y}),
                vmap(named, in_dims=({"x": 0, "y": 0},))({"x": x, "y": y}),
                vmap(lambda z: z["x"][0] + z["x"][1][0] + z["y"][0] + z["y"][1])(
                    {"x": [x, (x,)], "y": [y, y]}))
    like_torch(program)


@pytest.mark.parametrize("in_dims, nested, match", [
    ([0, 0], False, "type"), ({0}, False, "type"), ("lol", False, "type"), ([0, 0], True, "type"),
    ((0,), False, "structure"), ((0, 0, 0), False, "structure"), (([0],), True, "structure"),
    (((0, 0),), True, "structure")])
def test_in_dims_of_a_wrong_type_or_structure(in_dims, nested, match):
    # test_in_dims_wrong_type_err_msg, test_not_enough_in_dims_err_msg
    def program(lib):
        x, y = plain(lib, 3), plain(lib, 3, seed=1)
        if nested:
            lib.func.vmap(lambda z: z[0] + z[1], in_dims=in_dims)([x, y])
        else:
            lib.func.vmap(lib.mul, in_dims)(x, y)
    raises_like_torch(program, ValueError, {
        "type": r"expected `in_dims` to be int or a \(potentially nested\) tuple",
        "structure": r"in_dims is not compatible with the structure of `inputs`"}[match])


@pytest.mark.parametrize("case", ["default", "tuple", "nested"])
def test_an_integer_in_dim_for_a_non_tensor(case):
    # test_integer_in_dim_but_not_tensor_input_err_msg
    def program(lib):
        x, vmap = plain(lib, 2, 3), lib.func.vmap
        if case == "default":
            vmap(lib.sum)(x, 0)
        elif case == "tuple":
            vmap(lib.sum, (0, 0))(x, 0)
        else:
            vmap(lambda z: z[0] + z[1], in_dims=([0, 0],))([x, 1])
    raises_like_torch(program, ValueError, "Got in_dim=0 for an input but the input is of type")
    like_torch(lambda lib: lib.func.vmap(lib.sum, (0, None))(plain(lib, 2, 3), 0))


@pytest.mark.parametrize("case", ["scalar", "scalar_tuple", "minus_three", "two", "nested"])
def test_an_in_dim_outside_the_input(case):
    # test_in_dim_not_in_tensor_err_msg
    def program(lib):
        x, y, vmap = plain(lib, 2, 3), plain(lib, 2, 3, seed=1), lib.func.vmap
        square = lambda v: v * v  # noqa: E731
        calls = {"scalar": lambda: vmap(square)(plain(lib)),
                 "scalar_tuple": lambda: vmap(square, in_dims=(0,))(plain(lib)),
                 "minus_three": lambda: vmap(square, in_dims=(-3,))(x),
                 "two": lambda: vmap(square, in_dims=(2,))(y),
                 "nested": lambda: vmap(lambda z: z[0] + z[1], in_dims=([3, 0],))([x, y])}
        calls[case]()
    raises_like_torch(program, ValueError, r"Got in_dim=-?\w for some input, but that input is "
                      r"a Tensor of dimensionality \w")


def test_ops_without_batching_rules_in_torch_give_the_same_values():
    # test_fallback_atan2, test_fallback_multiple_returns, test_inplace_fallback_unary,
    # test_inplace_fallback_nary_same_levels (values; torch returns the written input itself)
    def program(lib):
        vmap = lib.func.vmap
        x, y = plain(lib, 7, 11, 5), plain(lib, 5, 7, 11, seed=1)
        t3 = plain(lib, 2, 3, 10, seed=2)
        unary = (plain(lib, 2, 5, seed=3).abs() / 4)
        written = unary.clone()
        acos = vmap(lib.Tensor.acos_)(written)
        twice = unary.clone()
        transposed = vmap(lib.Tensor.acos_, out_dims=(1,))(twice)
        base, other = plain(lib, 7, 11, 5, seed=4), plain(lib, 5, 7, 11, seed=5)
        vmap(lib.Tensor.atan2_, (2, 0))(base, other)
        nested_base = plain(lib, 7, 11, 5, seed=6)
        vmap(vmap(lib.Tensor.atan2_), (2, 0))(nested_base, other)
        return (vmap(lib.copysign, (2, 0))(x, y), vmap(vmap(lib.copysign), (2, 0))(x, y),
                vmap(lib.var_mean)(t3[0]), vmap(vmap(lib.var_mean))(t3), acos, written,
                transposed, twice, base, nested_base)
    like_torch(program)


@pytest.mark.parametrize("case", ["item", "control_flow"])
def test_item_and_data_dependent_control_flow_work_per_sample(case):
    # test_item_throws, test_data_dependent_control_flow_throws: torch refuses both inside
    # vmap; gradkit's vmap runs each sample as a plain call, so they work (docs/func.md)
    def item(x):
        return x * x.item()

    def control_flow(x):
        return x if x else x * 0
    fn = {"item": item, "control_flow": control_flow}[case]
    match = r"item\(\) on a Tensor" if case == "item" else "data-dependent control flow"
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=match):
        torch.func.vmap(fn)(torch.tensor([1.0, 0.0, 2.0]))
    result = gradkit.func.vmap(fn)(gradkit.tensor([1.0, 0.0, 2.0]))
    assert result.tolist() == ([1.0, 0.0, 4.0] if case == "item" else [1.0, 0.0, 2.0])


def test_vmap_of_autograd_grad_modules_and_partials():
    # test_batched_gradient_basic, test_functools_partial, test_nn_module,
    # test_fallback_with_undefined_grad, test_batch_rule_does_not_need_to_handle_no_batched_input
    def program(lib):
        vmap, F = lib.func.vmap, lib.nn.functional
        x, y = leaf(lib, 3), plain(lib, 3, seed=1)
        images, weight = leaf(lib, 2, 3, 4, 5, seed=2), plain(lib, 3, 3, 1, 1, seed=3)
        model = lib.nn.Linear(3, 3, bias=False).double()
        with lib.no_grad():
            model.weight.copy_(plain(lib, 3, 3, seed=4))
        a, b = plain(lib, 7, 5, seed=5), plain(lib, 3, 2, seed=6)

        def f(p, q):
            return p + lib.dot(q, lib.ones(2, dtype=q.dtype))
        return (vmap(lambda v: lib.autograd.grad([x * y], [x], grad_outputs=[v])[0])(
                    lib.eye(3, dtype=lib.float64)),
                vmap(functools.partial(lib.mul, y))(plain(lib, 2, 3, seed=7)),
                vmap(model)(plain(lib, 2, 3, seed=8)),
                vmap(lambda v: lib.autograd.grad(F.conv2d(images, weight), images, v)[0])(
                    plain(lib, 4, 2, 3, 4, 5, seed=9)),
                vmap(vmap(f, in_dims=(0, None)), in_dims=(None, 0))(a, b))
    like_torch(program)


def _random_ops(lib):
    """TestRandomness' random functions of (t, ignored), t a float tensor of ones."""
    F = lib.nn.functional
    return {
        "randn": lambda t, _: lib.randn(3, 3), "rand": lambda t, _: lib.rand(3, 3),
        "randint": lambda t, _: lib.randint(100, (3, 3)),
        "randint_low": lambda t, _: lib.randint(5, 100, (3, 3)),
        "normal": lambda t, _: lib.normal(0.0, 1.0, (3, 3)),
        "randperm": lambda t, _: lib.randperm(10),
        "dropout": lambda t, _: F.dropout(lib.ones_like(t), training=True),
        "alpha_dropout": lambda t, _: F.alpha_dropout(lib.ones_like(t), training=True),
        "dropout2d": lambda t, _: F.dropout2d(lib.ones_like(t), training=True),
        "feature_alpha_dropout": lambda t, _: F.feature_alpha_dropout(lib.ones_like(t),
                                                                      training=True),
        "randint_like": lambda t, _: lib.randint_like(t, 20),
        "rand_like": lambda t, _: lib.rand_like(t), "randn_like": lambda t, _: lib.randn_like(t),
        "normal_": lambda t, _: t.clone().normal_(), "uniform_": lambda t, _: t.clone().uniform_(),
        "bernoulli_": lambda t, _: t.clone().bernoulli_(),
        "exponential_": lambda t, _: t.clone().exponential_(),
        "normal_tensor": lambda t, _: lib.normal(t, 1.0),
        "bernoulli": lambda t, _: lib.bernoulli(t - 0.5), "poisson": lambda t, _: lib.poisson(t),
        "multinomial": lambda t, _: lib.multinomial(t.flatten(), 10, replacement=True)}


RANDOM_OPS = [
    "randn", "rand", "randint", "randint_low", "normal", "randperm", "dropout", "alpha_dropout",
    "dropout2d", "feature_alpha_dropout", "randint_like", "rand_like", "randn_like", "normal_",
    "uniform_", "bernoulli_", "exponential_", "normal_tensor", "bernoulli", "poisson",
    "multinomial"]


@pytest.mark.parametrize("op", RANDOM_OPS)
def test_random_ops_are_refused_in_error_mode(op):
    # TestRandomness: the randomness="error" half of every test
    def program(lib):
        fn = _random_ops(lib)[op]
        lib.func.vmap(fn, in_dims=(0, 0))(lib.ones(4, 3, 3, 4, 4), plain(lib, 4))
    raises_like_torch(program, RuntimeError,
                      "called random operation while in randomness error mode")


@pytest.mark.parametrize("op", ["randn", "rand", "randint", "randint_low", "normal", "randperm",
                                "dropout", "rand_like", "randn_like", "normal_", "bernoulli",
                                "normal_tensor", "multinomial"])
def test_different_randomness_draws_as_one_batched_call(op):
    # TestRandomness (randomness="different"): every sample draws anew, and the results are
    # those of one call on the whole batch from the same seed (each library's own draws)
    def program(lib):
        fn = _random_ops(lib)[op]
        lib.manual_seed(1234567)
        batched = lib.func.vmap(fn, in_dims=(0, 0), randomness="different")(
            lib.ones(4, 3, 3, 4, 4), plain(lib, 4))
        unique = all(not bool((batched[i] == batched[j]).all())
                     for i in range(4) for j in range(i))
        if op in ("randperm", "dropout", "rand_like", "randn_like", "normal_", "bernoulli",
                  "normal_tensor", "multinomial"):
            return unique
        lib.manual_seed(1234567)
        whole = {"randn": lambda: lib.randn(4, 3, 3), "rand": lambda: lib.rand(4, 3, 3),
                 "randint": lambda: lib.randint(100, (4, 3, 3)),
                 "randint_low": lambda: lib.randint(5, 100, (4, 3, 3)),
                 "normal": lambda: lib.normal(0.0, 1.0, (4, 3, 3))}[op]()
        return unique, bool((batched == whole).all())
    result = like_torch(program)
    assert result in (True, (True, True))


@pytest.mark.parametrize("op", ["randn", "rand", "randint", "normal", "randperm", "dropout",
                                "rand_like", "randn_like"])
def test_same_randomness_gives_every_sample_one_draw(op):
    # TestRandomness (randomness="same", unbatched tensors): every slice equals one call's
    def program(lib):
        fn = _random_ops(lib)[op]
        ones = lib.ones(3, 3, 4, 4)
        lib.manual_seed(1234567)
        batched = lib.func.vmap(fn, in_dims=(None, 0), randomness="same")(ones, plain(lib, 4))
        lib.manual_seed(1234567)
        single = fn(ones, None)
        return all(bool((batched[i] == single).all()) for i in range(4))
    assert like_torch(program)


def test_randomness_of_jacfwd_chunk_size_and_unbatched_dropout():
    # test_jacfwd_with_random, test_vmap_chunksize, test_dropout_unbatched
    raises_like_torch(lambda lib: lib.func.jacfwd(lib.bernoulli)(lib.rand(3, 4)), RuntimeError,
                      "called random operation while in randomness error mode")

    def program(lib):
        f, x = lib.func, lib.rand(3, 4, dtype=lib.float64)
        shapes = [f.jacfwd(lib.bernoulli, randomness=mode)(x).shape for mode in ("same",
                                                                                 "different")]
        data = plain(lib, 4, 5, 6)
        unique = []
        for chunk_size in (1, 2, 3, 4, 7, 10, 16, 100):
            out = f.vmap(lambda a: a.sin() + lib.rand_like(a), in_dims=1, out_dims=2,
                         randomness="different", chunk_size=chunk_size)(data)
            unique.append(all(not bool((out[i] == out[j]).all()) for i in range(4)
                              for j in range(i)))

        def fn(a, b):
            return a + lib.nn.functional.dropout(b, p=0.5).mean(1)
        dropped = [f.vmap(fn, in_dims=(0, None), randomness=mode)(plain(lib, 3),
                                                                   plain(lib, 1, 3)).shape
                   for mode in ("same", "different")]
        return shapes, unique, dropped
    like_torch(program)
    raises_like_torch(lambda lib: lib.func.vmap(
        lambda a, b: a + lib.nn.functional.dropout(b, p=0.5).mean(1), in_dims=(0, None))(
        plain(lib, 3), plain(lib, 1, 3)), RuntimeError, "randomness error mode")


_SAME_DRAWS = {
    "bernoulli": lambda lib, t: lib.bernoulli(t - 0.5),
    "bernoulli_p": lambda lib, t: lib.bernoulli(t, 0.5),
    "bernoulli_int": lambda lib, t: lib.bernoulli(t.long()),
    "normal_mean": lambda lib, t: lib.normal(t, 1.0),
    "normal_std": lambda lib, t: lib.normal(0.0, t.abs()),
    "poisson": lambda lib, t: lib.poisson(t),
    "multinomial": lambda lib, t: lib.multinomial(t, 2),
    "binomial": lambda lib, t: lib.binomial(t * 10, t / 2),
    "bernoulli_into_unbatched": lambda lib, t: lib.ones(3).bernoulli_(t / 2),
    "captured_through_ops": lambda lib, t: lib.normal(t.sum() * lib.ones(3), 1.0),
    "through_a_list": lambda lib, t: lib.poisson(lib.cat([t, t]).abs()),
}


@pytest.mark.parametrize("case", sorted(_SAME_DRAWS))
def test_same_randomness_with_a_batched_tensor_input_is_refused(case):
    # TestRandomness: _assert_throws_in_same_mode_batched (bernoulli, normal, poisson, ...):
    # a draw parameterized by a tensor that depends on the mapped inputs
    raises_like_torch(lambda lib: lib.func.vmap(lambda t: _SAME_DRAWS[case](lib, t),
                                                randomness="same")(lib.ones(4, 3) / 2),
                      RuntimeError, "Vmap does not currently support same randomness with a "
                      "batched tensor input")


_SAME_ALLOWED = {
    "rand_like": lambda lib, t: lib.rand_like(t),
    "dropout": lambda lib, t: lib.nn.functional.dropout(t, 0.5),
    "bernoulli_into_batched": lambda lib, t: t.clone().bernoulli_(),
    "bernoulli_unbatched_p": lambda lib, t: t.clone().bernoulli_(lib.full((3,), 0.5)),
    "normal_into_batched": lambda lib, t: (t * 1).normal_(0.0, 2.0),
    "unbatched_parameters": lambda lib, t: lib.normal(lib.zeros(3), lib.ones(3)) + t,
    "multinomial_unbatched": lambda lib, t: lib.multinomial(lib.ones(3), 2) + t.long()[:2],
}


@pytest.mark.parametrize("case", sorted(_SAME_ALLOWED))
def test_same_randomness_allows_draws_not_parameterized_by_the_batch(case):
    # the draws torch allows under 'same': shapes from batched tensors, parameters unbatched
    def program(lib):
        out = lib.func.vmap(lambda t: _SAME_ALLOWED[case](lib, t), randomness="same")(
            lib.rand(4, 3))
        return tuple(out.shape), bool((out[0] == out[1]).all())
    assert like_torch(program)


def test_in_place_random_into_an_unbatched_tensor():
    # TestRandomness.test_random_unary_inplace (batched_input="none"): 'same' writes one draw,
    # 'different' is refused in torch's words
    def program(lib):
        x = lib.ones(3, 3)
        lib.func.vmap(lambda t, _: t.normal_(), in_dims=(None, 0), randomness="same")(
            x, plain(lib, 4))
        return bool((x != 1).any())
    assert like_torch(program)
    raises_like_torch(lambda lib: lib.func.vmap(lambda t, _: t.normal_(), in_dims=(None, 0),
                                                randomness="different")(lib.ones(3),
                                                                        plain(lib, 4)),
                      RuntimeError, "different inplace randomness on an unbatched tensor")


@pytest.mark.parametrize("op", ["normal_", "uniform_", "bernoulli_", "exponential_"])
def test_in_place_random_into_a_captured_tensor(op):
    # the same rule for a tensor the function captured: one draw under 'same' (every sample
    # writes it), torch's error under 'different'
    def program(lib):
        captured = lib.full((3,), 0.5, dtype=lib.float64)

        def f(_):
            getattr(captured, op)()
            return captured * 1
        out = lib.func.vmap(f, randomness="same")(plain(lib, 4))
        return bool((out == captured).all()), bool((out[0] == out[1]).all())
    assert like_torch(program) == (True, True)

    def different(lib):
        captured = lib.ones(3)
        lib.func.vmap(lambda _: getattr(captured, op)(), randomness="different")(plain(lib, 4))
    raises_like_torch(different, RuntimeError,
                      "different inplace randomness on an unbatched tensor")


def test_return_types_namedtuples_and_anomaly_mode_under_vmap():
    # TestVmapOperators: test_torch_return_types_returns, test_namedtuple_returns,
    # test_vmap_with_anomaly_detection
    point = collections.namedtuple("Point", ["x", "y"])

    def program(lib):
        vmap, t = lib.func.vmap, plain(lib, 3, 2, 2)
        kinds = [type(vmap(lib.min, (0, None))(t, 0)).__name__,
                 type(vmap(lib.max, (0, None))(t, 0)).__name__,
                 type(vmap(lib.topk, (0, None, None))(t, 1, 0)).__name__,
                 type(vmap(lambda a, b: point(x=a, y=b))(plain(lib, 2, 5),
                                                         plain(lib, 2, 3))).__name__]
        with lib.autograd.set_detect_anomaly(True):
            ones = vmap(lib.func.grad(lambda x: x.sum()))(lib.zeros(3) - 1)
        return kinds, ones
    assert like_torch(program)[0] == ["min", "max", "topk", "Point"]

    def bad(lib):
        with lib.autograd.set_detect_anomaly(True):
            lib.func.vmap(lib.func.grad(lambda x: x.sqrt().sum()))(lib.zeros(3) - 1)
    raises_like_torch(bad, RuntimeError,
                      "Function 'SqrtBackward0' returned nan values in its 0th output.")
