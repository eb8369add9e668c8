"""torch's tests of vmap's API (test/functorch/test_vmap.py: TestVmapAPI; in_dims, out_dims,
chunk_size, randomness, nested structures and their errors, not the batching rules),
re-checked on gradkit.func.vmap against torch 2.13. gradkit's vmap runs the function once
per sample, so results never share memory with the inputs (torch's are often views)."""
from collections import OrderedDict

import pytest
from torch_expectations.twin import leaf, like_torch, raises_like_torch


def plain(lib, *shape, seed=0):
    return leaf(lib, *shape, seed=seed, requires_grad=False)


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
