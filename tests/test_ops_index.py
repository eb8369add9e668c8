"""The index ops (gradkit/ops/index_ops.py, scatter_reduce.py, searching.py, complex_build.py)
against torch: errors and their messages, repeated indices, empty and 0-d inputs, bool/int
dtypes, outputs without gradients, in-place forms on views, and scatter_reduce's gradients at
ties and zeros. Gradients of the differentiable ops on regular samples: tests/op_db.py."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradkit  # noqa: E402
from test_torch_numerics import assert_same_as_torch, with_grads  # noqa: E402


def _x(m, shape=(3, 4), dtype="float64"):
    return m.arange(int(m.tensor(shape).prod()), dtype=getattr(m, dtype)).reshape(shape) - 5


def _i(m, values, dtype="int64"):
    return m.tensor(values, dtype=getattr(m, dtype))


ERRORS = {
    "masked_select_int_mask": lambda m: m.masked_select(_x(m), _i(m, [[1, 0, 1, 0]] * 3)),
    "masked_select_shapes": lambda m: m.masked_select(_x(m), m.ones(3, 3, dtype=m.bool)),
    "take_out_of_range": lambda m: m.take(_x(m), _i(m, [1, 12])),
    "take_negative_out_of_range": lambda m: m.take(_x(m), _i(m, [-13])),
    "take_int32_index": lambda m: m.take(_x(m), _i(m, [1], "int32")),
    "take_float_index": lambda m: m.take(_x(m), m.tensor([1.0])),
    "take_along_dim_float": lambda m: m.take_along_dim(_x(m), m.tensor([[0.0]]), 1),
    "take_along_dim_ndim": lambda m: m.take_along_dim(_x(m), _i(m, [0]), 1),
    "take_along_dim_flat_negative": lambda m: m.take_along_dim(_x(m), _i(m, [3, -1])),
    "take_along_dim_flat_out_of_range": lambda m: m.take_along_dim(_x(m), _i(m, [12])),
    "gather_negative": lambda m: m.gather(_x(m), 1, _i(m, [[0, -1]])),
    "index_add_float_index": lambda m: _x(m).index_add(0, m.tensor([0.0]), _x(m)[:1]),
    "index_add_2d_index": lambda m: _x(m).index_add(0, _i(m, [[0]]), _x(m)[:1]),
    "index_add_out_of_range": lambda m: _x(m).index_add(0, _i(m, [3]), _x(m)[:1]),
    # alpha != 1, or a middle dim: torch's other kernel, an IndexError (breadth seed 1210)
    "index_add_alpha_negative": lambda m: _x(m).index_add(0, _i(m, [-1]), _x(m)[:1], alpha=2),
    "index_add_middle_dim": lambda m: _x(m, (2, 3, 2)).index_add(1, _i(m, [3]),
                                                                  _x(m, (2, 1, 2))),
    "index_add_dtype": lambda m: _x(m).index_add(0, _i(m, [0]), _x(m, (1, 4), "float32")),
    "index_add_count": lambda m: _x(m).index_add(0, _i(m, [0]), _x(m)[:2]),
    "index_add_shape": lambda m: _x(m).index_add(0, _i(m, [0]), _x(m)[:1, :2]),
    "index_add_dim": lambda m: _x(m).index_add(2, _i(m, [0]), _x(m)[:1]),
    "index_copy_float_index": lambda m: _x(m).index_copy(0, m.tensor([0.0]), _x(m)[:1]),
    "index_copy_out_of_range": lambda m: _x(m).index_copy(0, _i(m, [5]), _x(m)[:1]),
    "index_copy_dtype": lambda m: _x(m).index_copy(0, _i(m, [0]), _x(m, (1, 4), "float32")),
    "index_copy_count": lambda m: _x(m).index_copy(0, _i(m, [0]), _x(m)[:2]),
    "index_copy_2d_index": lambda m: _x(m).index_copy(0, _i(m, [[0]]), _x(m)[:1]),
    "index_fill_float_index": lambda m: _x(m).index_fill(0, m.tensor([0.0]), 1.0),
    "index_fill_out_of_range": lambda m: _x(m).index_fill(1, _i(m, [-5]), 1.0),
    "index_fill_2d_index": lambda m: _x(m).index_fill(0, _i(m, [[0]]), 1.0),
    "index_fill_1d_value": lambda m: _x(m).index_fill(0, _i(m, [0]), m.tensor([1.0])),
    "put_out_of_range": lambda m: _x(m).put(_i(m, [12]), _x(m, (1,))),
    "put_count": lambda m: _x(m).put(_i(m, [1, 2]), _x(m, (1,))),
    "put_dtype": lambda m: _x(m).put(_i(m, [1]), _x(m, (1,), "float32")),
    "put_float_index": lambda m: _x(m).put(m.tensor([1.0]), _x(m, (1,))),
    "masked_scatter_int_mask": lambda m: _x(m).masked_scatter(_i(m, [[1, 0, 0, 1]] * 3), _x(m)),
    "masked_scatter_dtype": lambda m: _x(m).masked_scatter(_x(m) > 0, _x(m, (12,), "float32")),
    "masked_scatter_short_source": lambda m: _x(m).masked_scatter(_x(m) > -9, _x(m, (2,))),
    "masked_scatter_shapes": lambda m: _x(m).masked_scatter(m.ones(3, 3, dtype=m.bool), _x(m)),
    "scatter_reduce_reduce": lambda m: _x(m).scatter_reduce(0, _i(m, [[0]]), _x(m), "multiply"),
    "scatter_reduce_float_index": lambda m: _x(m).scatter_reduce(0, m.tensor([[0.0]]), _x(m),
                                                                 "sum"),
    "scatter_reduce_out_of_range": lambda m: _x(m).scatter_reduce(0, _i(m, [[3]]), _x(m), "sum"),
    "scatter_reduce_dtype": lambda m: _x(m).scatter_reduce(0, _i(m, [[0]]),
                                                           _x(m, (3, 4), "float32"), "sum"),
    "scatter_reduce_ndim": lambda m: _x(m).scatter_reduce(0, _i(m, [0]), _x(m), "sum"),
    "scatter_reduce_index_too_big": lambda m: _x(m).scatter_reduce(
        0, m.zeros(4, 4, dtype=m.int64), _x(m), "amax"),
    "bucketize_2d_boundaries": lambda m: m.bucketize(_x(m), _x(m)),
    "searchsorted_side_and_right": lambda m: m.searchsorted(_x(m, (3,)), _x(m, (2,)), right=True,
                                                            side="left"),
    "searchsorted_bad_side": lambda m: m.searchsorted(_x(m, (3,)), _x(m, (2,)), side="up"),
    "searchsorted_leading_dims": lambda m: m.searchsorted(_x(m, (2, 3)), _x(m, (3, 1))),
    "searchsorted_0d_boundaries": lambda m: m.searchsorted(m.tensor(1.0), _x(m, (3,))),
    "searchsorted_sorter_size": lambda m: m.searchsorted(_x(m, (2,)), _x(m, (1,)),
                                                         sorter=_i(m, [1])),
    "searchsorted_sorter_range": lambda m: m.searchsorted(_x(m, (2,)), _x(m, (1,)),
                                                          sorter=_i(m, [1, 2])),
    "bucketize_bools": lambda m: m.bucketize(_x(m) > 0, m.tensor([True, False])),
    "searchsorted_complex": lambda m: m.searchsorted(_x(m, (2,)), m.tensor([1 + 1j])),
    "scatter_reduce_complex_autograd": lambda m: m.zeros(2, dtype=m.complex64).scatter_reduce(
        0, _i(m, [1]), m.ones(1, dtype=m.complex64, requires_grad=True), "sum"),
    "index_add_vector_negative": lambda m: m.zeros(3).index_add(0, _i(m, [-1]), m.ones(1)),
    "index_add_matrix_negative": lambda m: m.zeros(3, 2).index_add(1, _i(m, [-1]), m.ones(3, 1)),
    "index_add_0d_source": lambda m: m.zeros(3).index_add(0, _i(m, [0]), m.tensor(2.0)),
    "index_add_source_dim": lambda m: m.zeros(3, 2).index_add(1, _i(m, [0]), m.ones(3)),
    "index_copy_negative": lambda m: m.zeros(3).index_copy(0, _i(m, [-1]), m.ones(1)),
    "index_copy_dimensionality": lambda m: _x(m).index_copy(0, _i(m, [0]), m.ones(4)),
    "index_copy_slices": lambda m: m.zeros(2, 3, 4).index_copy(1, _i(m, [0]), m.ones(2, 1, 5)),
    "index_copy_scalar_source": lambda m: m.zeros(3).index_copy(0, _i(m, [0, 1]), m.tensor(1.0)),
    "take_along_dim_0d_dim": lambda m: m.take_along_dim(m.tensor(3.0), _i(m, 0), 0),
    "unique_dim_out_of_range": lambda m: m.unique(_i(m, [[1, 2]]), dim=2),
    "histc_nan_in_data": lambda m: m.histc(m.tensor([1.0, float("nan"), 2.0]), 3),
    "histc_one_nan": lambda m: m.histc(m.tensor([float("nan")]), 3),
    "histc_nan_min": lambda m: m.histc(m.tensor([1.0]), 3, -float("nan"), 2),
    "histc_int": lambda m: m.histc(_i(m, [1, 2]), 3),
    "histc_no_bins": lambda m: m.histc(_x(m), 0),
    "histc_min_above_max": lambda m: m.histc(_x(m), 3, 2, 1),
    "histc_infinite_range": lambda m: m.histc(_x(m), 3, 0, float("inf")),
    "complex_dtypes": lambda m: m.complex(_x(m, (2,), "float32"), _x(m, (2,))),
    "complex_ints": lambda m: m.complex(_i(m, [1]), _i(m, [1])),
    "complex_shapes": lambda m: m.complex(_x(m, (2,)), _x(m, (3,))),
    "polar_dtypes": lambda m: m.polar(_x(m, (2,), "float32"), _x(m, (2,))),
}


@pytest.mark.parametrize("program", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_are_torchs(program):
    with pytest.raises(Exception):  # noqa: B017,PT011 - assert_same_as_torch compares them
        program(torch)
    assert_same_as_torch(program)


def _sr(reduce, include_self=True):
    """scatter_reduce with ties and repeats: rows 0 and 2 of src land on row 0 of x."""
    def fn(m, x, src):
        index = _i(m, [[0, 1, 0], [2, 2, 1], [0, 0, 2]])
        return x.scatter_reduce(0, index, src, reduce, include_self=include_self)
    return fn


X3 = [[1.0, 2.0, 3.0], [4.0, 0.0, 6.0], [7.0, 8.0, 9.0]]
TIES = [[7.0, 2.0, 3.0], [7.0, 1.0, 9.0], [7.0, 8.0, 9.0]]  # equal to each other and to x
ZEROS = [[0.0, 2.0, 0.0], [4.0, 0.0, 6.0], [3.0, 0.0, 5.0]]  # one and two zeros per place

VALUES_AND_GRADIENTS = {
    **{f"scatter_reduce_{r}_{s}_ties": with_grads(_sr(r, s), X3, TIES)
       for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)},
    **{f"scatter_reduce_prod_{s}_zeros": with_grads(_sr("prod", s), X3, ZEROS)
       for s in (True, False)},
    "index_add_repeated": with_grads(lambda m, x, s: x.index_add(1, _i(m, [2, 0, 2]), s,
                                                                 alpha=-1.5),
                                     X3, [[1.0, 2.0, 3.0]] * 3),
    "scatter_reduce_max_min_spellings": with_grads(lambda m, x, s: _sr("max")(m, x, s) * _sr(
        "min", False)(m, x, s), X3, TIES),
    "index_fill_repeated_value": with_grads(lambda m, x, v: x.index_fill(0, _i(m, [1, 1]), v),
                                            X3, 2.5),
    "put_accumulate_repeated": with_grads(lambda m, x, s: x.put(_i(m, [4, 4, -1]), s, True),
                                          X3, [1.0, 2.0, 3.0]),
    "masked_scatter_short_mask": with_grads(lambda m, x, s: x.masked_scatter(x > 5, s),
                                            X3, [1.0, 2.0, 3.0, 4.0, 5.0]),
    "take_along_dim_wraps_along_dim": with_grads(lambda m, x: m.take_along_dim(
        x, _i(m, [[5, -1], [-7, 100], [3, 0]]), 1), X3),
    "take_along_dim_broadcast": with_grads(lambda m, x: m.take_along_dim(
        x[:1], _i(m, [[2], [0], [2]]), 1), X3),
    **{f"scatter_reduce_0d_{r}": with_grads(lambda m, x, s, r=r: x.scatter_reduce(
        0, _i(m, 0), s, r, include_self=r != "mean"), 2.0, -3.0) for r in ("sum", "prod", "mean",
                                                                          "amax", "amin")},
    "put_into_transposed": with_grads(lambda m, x, s: x.t().put(_i(m, [1, 4]), s), X3[:2],
                                      [9.0, 8.0]),
    "index_copy_0d": with_grads(lambda m, x, s: x.index_copy(0, _i(m, 0), s[0] * 3)
                                + s.index_copy(0, _i(m, [0]), x[None]).sum(), 1.0, [2.0]),
    "polar_at_zero_abs": with_grads(lambda m, a, t: m.polar(a, t).abs() + m.polar(a, t).real,
                                    [0.0, 1.0], [0.5, -2.0]),
    "complex_parts": with_grads(lambda m, r, i: (m.complex(r, i) * (2 - 1j)).real,
                                [1.0, -2.0], [0.5, 3.0]),
}


@pytest.mark.parametrize("program", list(VALUES_AND_GRADIENTS.values()),
                         ids=list(VALUES_AND_GRADIENTS))
def test_values_and_gradients_are_torchs(program):
    assert_same_as_torch(program, rtol=1e-12)


def _dtypes(dtype):
    def program(m):
        x = _x(m, (2, 3)).to(getattr(m, dtype))
        index = _i(m, [1, 0])
        flat = _i(m, [5, 0])
        return (m.masked_select(x, x > 0), x.take(flat), x.put(flat, x[0, :2]),
                x.index_add(1, index, x[:, :2]), x.index_copy(0, index, x.flip(0)),
                x.index_fill(1, index, 1), x.masked_scatter(x > 0, x.flip(1)),
                x.scatter_reduce(1, _i(m, [[2, 2], [0, 1]]), x, "amax", include_self=False),
                m.nonzero(x), m.unique(x), m.take_along_dim(x, _i(m, [[2], [1]]), 1))
    return program


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32", "complex64"])
def test_other_dtypes(dtype):
    if dtype == "complex64":  # torch has no complex unique, amax: their errors are compared
        assert_same_as_torch(lambda m: m.unique(_x(m).to(m.complex64)))
        for reduce in ("amax", "amin"):
            assert_same_as_torch(lambda m, reduce=reduce: _x(m).to(m.complex64).scatter_reduce(
                0, _i(m, [[1]]), _x(m).to(m.complex64), reduce))
        return
    if dtype == "bool":
        assert_same_as_torch(lambda m: (_x(m) > 0).scatter_reduce(0, _i(m, [[1]]), _x(m) > 0,
                                                                  "mean"))
    assert_same_as_torch(_dtypes(dtype))


def test_integer_mean_floors_and_sum_keeps_the_dtype():
    assert_same_as_torch(lambda m: tuple(
        _x(m, (2, 3), "int64").scatter_reduce(0, _i(m, [[1, 1, 0]]), _x(m, (2, 3), "int64"), r,
                                              include_self=s)
        for r in ("mean", "sum", "prod", "amin") for s in (True, False)))


EMPTY = {
    "masked_select": lambda m: m.masked_select(m.zeros(0, 3), m.zeros(0, 3, dtype=m.bool)),
    "take": lambda m: m.take(m.zeros(0), _i(m, [], "int64")),
    "index_add": lambda m: m.zeros(0, 2).index_add(1, _i(m, [1]), m.ones(0, 1)),
    "index_copy": lambda m: m.zeros(2, 3).index_copy(0, _i(m, []), m.ones(0, 3)),
    "index_fill": lambda m: m.zeros(2, 3).index_fill(1, _i(m, []), 1.0),
    "put": lambda m: m.zeros(2).put(_i(m, []), m.ones(0)),
    "masked_scatter": lambda m: m.zeros(2).masked_scatter(m.zeros(2, dtype=m.bool), m.ones(0)),
    "scatter_reduce": lambda m: m.zeros(2).scatter_reduce(0, _i(m, []), m.ones(0), "prod"),
    "scatter_reduce_float_index": lambda m: m.zeros(2, 3).scatter_reduce(
        0, m.tensor([[]]), m.ones(5), "amax", include_self=False),
    "scatter_reduce_src_dtype": lambda m: m.zeros(2, dtype=m.float64).scatter_reduce(
        0, m.tensor([]), m.ones(1), "sum"),
    "nonzero": lambda m: (m.nonzero(m.zeros(0, 3)), *m.nonzero(m.zeros(2, 0), as_tuple=True)),
    "nonzero_0d": lambda m: (m.nonzero(m.tensor(2.0)), m.nonzero(m.tensor(0.0)),
                             *m.nonzero(m.tensor(1.0), as_tuple=True), m.argwhere(m.tensor(3))),
    "bucketize": lambda m: m.bucketize(m.zeros(0), m.ones(3)),
    "searchsorted": lambda m: m.searchsorted(m.zeros(0), m.ones(2)),
    "unique": lambda m: m.unique(m.zeros(0), return_inverse=True, return_counts=True),
    "histc": lambda m: m.histc(m.zeros(0), 4),
}


@pytest.mark.parametrize("program", list(EMPTY.values()), ids=list(EMPTY))
def test_empty_and_0d_inputs(program):
    assert_same_as_torch(program)


FINDING = {
    "nonzero_as_tuple": lambda m: m.nonzero(_x(m) % 3 == 0, as_tuple=True),
    "argwhere": lambda m: m.argwhere(_x(m, (2, 3, 2)) % 2),
    "bucketize": lambda m: (m.bucketize(_x(m) / 2, m.tensor([-2.0, 0.0, 0.5, 3.0])),
                            m.bucketize(_x(m), m.tensor([-2, 0, 3]), right=True, out_int32=True),
                            m.bucketize(0.5, m.tensor([0.0, 0.5]))),
    "searchsorted_nan_in_sequence": lambda m: (
        m.searchsorted(m.tensor([1.0, float("nan"), 3.0]), m.tensor([0.0, 2.0, 4.0, float("nan")])),
        m.searchsorted(m.tensor([[float("nan"), 1.0, 2.0, 3.0, 5.0]]), m.tensor([[2.0, 6.0]]),
                       right=True)),
    "searchsorted_empty_bools": lambda m: (m.searchsorted(m.tensor([True]),
                                                          m.zeros(0, dtype=m.bool)),
                                           m.searchsorted(m.zeros(0), m.tensor([2, 3]))),
    "searchsorted": lambda m: (m.searchsorted(m.tensor([[0.0, 1, 2], [1, 1, 5]]),
                                              m.tensor([[1.0], [1.0]]), side="right"),
                               m.searchsorted(m.tensor([0.0, 1, 1, 2]), m.tensor([1, 3]),
                                              out_int32=True),
                               m.searchsorted(m.tensor([3.0, 1, 2]), 2.5,
                                              sorter=_i(m, [1, 2, 0])),
                               m.searchsorted(m.tensor([0.0, 1, 1, 2]), _x(m), right=True)),
    "scatter_reduce_complex_without_grad": lambda m: m.ones(2, dtype=m.complex64).scatter_reduce(
        0, _i(m, [1, 1]), m.ones(2, dtype=m.complex64) * 2j, "prod"),
    "unique": lambda m: m.unique(m.tensor([3.0, 1, float("nan"), 3, float("nan"), -0.0, 0.0]),
                                 sorted=False, return_inverse=True, return_counts=True),
    "unique_dim": lambda m: m.unique(m.tensor([[1, 2], [0, 5], [1, 2]]), dim=0,
                                     return_inverse=True, return_counts=True),
    "unique_dim_negative": lambda m: m.unique(m.tensor([[1, 1, 0], [2, 2, 0]]), dim=-1),
    "histc": lambda m: (m.histc(_x(m, (40,), "float32") / 7, 6),
                        m.histc(m.tensor([1.0, 2.0, 1.0, float("nan"), 9.0]), 4, 0, 3),
                        m.histc(m.tensor([2.0, 2.0]), 3)),
}


@pytest.mark.parametrize("program", list(FINDING.values()), ids=list(FINDING))
def test_finding_and_counting(program):
    assert_same_as_torch(program)


@pytest.mark.parametrize("name,call", [
    ("nonzero", lambda m, x: m.nonzero(x)), ("bucketize", lambda m, x: m.bucketize(x, x[:2])),
    ("searchsorted", lambda m, x: m.searchsorted(x[:2], x)), ("histc", lambda m, x: m.histc(x)),
    ("unique_inverse", lambda m, x: m.unique(x, return_inverse=True)[1]),
    ("unique_counts", lambda m, x: m.unique(x, return_counts=True)[1])])
def test_index_and_count_outputs_carry_no_gradient(name, call):
    for m in (gradkit, torch):
        out = call(m, m.tensor([1.0, 2.0, 1.0], requires_grad=True))
        assert not out.requires_grad and out.grad_fn is None


def test_unique_values_require_grad_but_backward_raises_as_torch():
    for m in (gradkit, torch):
        values = m.unique(m.tensor([1.0, 2.0, 1.0], requires_grad=True))
        assert values.requires_grad and type(values.grad_fn).__name__ == "Unique2Backward0"
        with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not "
                                                      "implemented."):
            values.sum().backward()


INPLACE = {
    "index_add_": lambda m, v, s: v.index_add_(0, _i(m, [1, 1]), s[:2], alpha=2),
    "index_copy_": lambda m, v, s: v.index_copy_(1, _i(m, [1, 0]), s.reshape(2, 3)[:, :2]),
    "index_fill_": lambda m, v, s: v.index_fill_(1, _i(m, [2]), s[0]),
    "put_": lambda m, v, s: v.put_(_i(m, [3, 0]), s[1:3], accumulate=True),
    "masked_scatter_": lambda m, v, s: v.masked_scatter_(v > 0, s),
    "scatter_reduce_": lambda m, v, s: v.scatter_reduce_(1, _i(m, [[0, 0], [2, 2]]),
                                                         s.reshape(3, 2)[:2], "prod"),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_write_into_a_view_reaches_the_base_gradient(name):
    """A view of a leaf's clone written in place: the clone's version moves, and the gradient
    reaches the leaf through the write, as torch's CopySlices."""
    def program(m):
        leaf = m.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [0.5, 0.0, 2.0]],
                        dtype=m.float64, requires_grad=True)
        source = m.tensor([2.0, -1.0, 0.5, 3.0, 1.5, -0.5], dtype=m.float64,
                          requires_grad=True)
        base = leaf.clone()
        view = base[1:]
        before = base._version
        out = INPLACE[name](m, view, source)
        assert out is view and base._version > before
        loss = (base * m.arange(9.0, dtype=m.float64).reshape(3, 3)).sum()
        return (base, *m.autograd.grad(loss, (leaf, source)))
    assert_same_as_torch(program)


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    x = gradkit.ones(3, dtype=gradkit.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        x.index_fill_(0, gradkit.tensor([0]), 2.0)


def test_scatter_reduce_prod_refuses_double_backward_through_two_zeros_as_torch():
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        src = m.tensor([0.0, 0.0, 3.0], dtype=m.float64, requires_grad=True)
        out = x.scatter_reduce(0, _i(m, [1, 1, 0]), src, "prod")
        grads = m.autograd.grad(out.sum(), (x, src), create_graph=True)
        assert type(grads[1].grad_fn).__name__ == "Error"
        return (*grads, *m.autograd.grad(grads[0].sum(), (x, src)),
                *m.autograd.grad(grads[1].sum(), (x, src)))
    assert_same_as_torch(program)


def test_node_names_are_torchs():
    def names(m):
        x = m.tensor([[1.0, -2.0], [3.0, 0.5], [-1.0, 2.0]], dtype=m.float64, requires_grad=True)
        value = m.tensor(1.5, dtype=m.float64, requires_grad=True)
        i = _i(m, [0, 2])
        outs = [x.index_add(0, i, x[:2]), x.index_copy(0, i, x[:2]), x.index_fill(0, i, 1.0),
                x.index_fill(0, i, value), x.put(i, x[0]), x.masked_scatter(x > 0, x),
                x.masked_select(x > 0), x.take(i), m.take_along_dim(x, i[:, None], 0),
                x.scatter_reduce(0, i[:, None].expand(2, 2), x[:2], "amin"),
                m.complex(x, x), m.polar(x, x)]
        return [type(out.grad_fn).__name__ for out in outs]
    assert names(gradkit) == names(torch)


def test_index_fill_value_gradient_refuses_negative_indices_as_torch():
    def program(m):
        x = m.ones(3, 2, dtype=m.float64, requires_grad=True)
        value = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        return m.autograd.grad(x.index_fill(0, _i(m, [-1]), value).sum(), (x, value))
    assert_same_as_torch(program)



@pytest.mark.parametrize("seed", range(40))
def test_histc_searchsorted_unique_on_random_inputs(seed):
    """Bins computed in x's dtype as torch's kernel does; torch's binary search with NaN and
    repeats in the sequence; unique along dims."""
    rng = np.random.default_rng(seed)
    dtype = str(rng.choice(["float32", "float64"]))
    values = (rng.standard_normal(int(rng.integers(0, 40))) * rng.choice([1, 10, 1e-3]))
    values = values.astype(dtype)
    low, high = (0, 0) if rng.random() < 0.4 else sorted(rng.standard_normal(2).round(2))
    bins = int(rng.integers(1, 20))
    assert_same_as_torch(lambda m: m.histc(m.tensor(values), bins, low, high))
    sequence = np.sort(rng.integers(-3, 4, int(rng.integers(0, 8)))).astype(dtype)
    if sequence.size and rng.random() < 0.3:
        sequence[rng.integers(0, sequence.size)] = np.nan
    wanted = rng.integers(-4, 5, 6).astype(dtype)
    assert_same_as_torch(lambda m: tuple(m.searchsorted(m.tensor(sequence), m.tensor(wanted),
                                                        right=right) for right in (False, True)))
    table = rng.integers(-3, 3, (4, 3))
    assert_same_as_torch(lambda m: tuple(
        out for dim in (None, 0, 1) for out in m.unique(m.tensor(table), return_inverse=True,
                                                        return_counts=True, dim=dim)))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_scatter_reduce_rounds_as_torch_in_low_precision(dtype):
    """torch's scatter_reduce and index_add (alpha 1) accumulate float16 in float32, rounding
    once, and a mean divides in x's dtype; put adds step by step."""
    rng = np.random.default_rng(5)
    x, src = (rng.standard_normal(n).astype(dtype) * 3 for n in (5, 40))
    index = rng.integers(0, 5, 40)
    assert_same_as_torch(lambda m: tuple(
        m.tensor(x).scatter_reduce(0, m.tensor(index), m.tensor(src), reduce, include_self=s)
        for reduce in ("sum", "mean", "prod", "amax") for s in (True, False)), rtol=0)
    matrix, rows = x.reshape(5, 1).repeat(2, 1), src.reshape(40, 1).repeat(2, 1)
    assert_same_as_torch(lambda m: tuple(
        m.tensor(a).index_add(0, m.tensor(index), m.tensor(b), alpha=alpha)
        for alpha in (1, 1.5) for a, b in ((x, src), (matrix, rows)))
        + (m.tensor(x).put(m.tensor(index), m.tensor(src), True),),
        rtol=0 if dtype == "float16" else 1e-6)  # float32 index_add may sum in another order
