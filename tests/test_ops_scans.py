"""Scans and order statistics against torch: errors and their messages, ties (torch's CPU index
choices), NaN, 0-d and empty inputs, dtype= and integer/bool inputs, gradients where the op
table's distinct values do not go (ties, zeros, NaN, inf). The op table (tests/op_db.py) runs
gradcheck, gradgradcheck and the torch comparison on tie-free samples."""
import math

import numpy as np
import pytest

import gradkit
from test_torch_numerics import assert_same_as_torch, with_grads

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _cases(table):
    return pytest.mark.parametrize("program", [p for _, p in table], ids=[n for n, _ in table])


def _t(m, values, dtype="float64"):
    return m.tensor(values, dtype=getattr(m, dtype))


E = [[]] * 2  # shape (2, 0)
ERRORS = [
    ("cumprod_dim", lambda m: m.cumprod(_t(m, [1.0, 2.0]), 1)),
    # an empty complex x passes the kernel; autograd refuses it (breadth seed 2383)
    ("median_of_empty_complex_with_grad", lambda m: m.median(m.zeros(
        0, dtype=m.complex128, requires_grad=True))),
    ("nanmedian_of_empty_complex_with_grad", lambda m: m.nanmedian(m.zeros(
        0, dtype=m.complex128, requires_grad=True))),
    ("cumprod_0d_dim", lambda m: m.cumprod(_t(m, 3.0), 1)),
    ("logcumsumexp_long", lambda m: m.logcumsumexp(_t(m, [1, 2], "int64"), 0)),
    ("logcumsumexp_bool", lambda m: m.logcumsumexp(_t(m, [True], "bool"), 0)),
    ("logcumsumexp_dim", lambda m: m.logcumsumexp(_t(m, [1.0]), -2)),
    ("cummax_complex", lambda m: m.cummax(_t(m, [1j], "complex64"), 0)),
    ("cummin_complex", lambda m: m.cummin(_t(m, [1j], "complex128"), 0)),
    ("cummax_dim", lambda m: m.cummax(_t(m, [1.0]), 1)),
    ("kthvalue_k0", lambda m: m.kthvalue(_t(m, [1.0, 2.0]), 0)),
    ("kthvalue_k_big", lambda m: m.kthvalue(_t(m, [[1.0, 2.0]]), 2, 0)),
    ("kthvalue_0d_k2", lambda m: m.kthvalue(_t(m, 1.0), 2)),
    ("kthvalue_bool", lambda m: m.kthvalue(_t(m, [True], "bool"), 1)),
    ("kthvalue_complex", lambda m: m.kthvalue(_t(m, [1j], "complex64"), 1)),
    ("kthvalue_empty_dim", lambda m: m.kthvalue(_t(m, E), 1, 1)),
    ("kthvalue_dim", lambda m: m.kthvalue(_t(m, [1.0]), 1, 1)),
    ("median_bool", lambda m: m.median(_t(m, [True], "bool"))),
    ("median_complex", lambda m: m.median(_t(m, [1j], "complex64"))),
    ("median_dim_bool", lambda m: m.median(_t(m, [True], "bool"), 0)),
    ("median_dim_complex", lambda m: m.median(_t(m, [1j], "complex64"), 0)),
    ("median_empty_dim", lambda m: m.median(_t(m, E), 1)),
    ("median_dim", lambda m: m.median(_t(m, [1.0]), 2)),
    ("nanmedian_bool", lambda m: m.nanmedian(_t(m, [True], "bool"))),
    ("nanmedian_dim_complex", lambda m: m.nanmedian(_t(m, [1j], "complex64"), 0)),
    ("nanmedian_empty_dim", lambda m: m.nanmedian(_t(m, E), -1)),
    ("mode_complex", lambda m: m.mode(_t(m, [1j], "complex64"))),
    ("mode_empty", lambda m: m.mode(_t(m, E))),
    ("mode_dim", lambda m: m.mode(_t(m, [1.0]), 1)),
    ("msort_complex", lambda m: m.msort(_t(m, [1j], "complex64"))),
    ("aminmax_empty", lambda m: m.aminmax(_t(m, E))),
    ("aminmax_empty_dim", lambda m: m.aminmax(_t(m, E), dim=1)),
    ("aminmax_complex", lambda m: m.aminmax(_t(m, [1j], "complex64"))),
    ("aminmax_dim_tuple", lambda m: m.aminmax(_t(m, [[1.0]]), dim=(0, 1))),
    ("aminmax_positional_dim", lambda m: m.aminmax(_t(m, [[1.0]]), 0)),
    ("count_nonzero_twice", lambda m: m.count_nonzero(_t(m, [[1.0]]), (0, -2))),
    ("count_nonzero_dim", lambda m: m.count_nonzero(_t(m, [1.0]), 1)),
    *((f"{name}_complex_grad", lambda m, name=name, args=args: getattr(m, name)(
        _t(m, 1j, "complex64").requires_grad_(True), *args))
      for name, args in (("kthvalue", (1,)), ("mode", ()), ("cummax", (0,)), ("cummin", (0,)))),
    *((f"cumprod_in_place_dtype_{dtype}", lambda m, dtype=dtype: _t(
        m, [1.0, 2.0], "float32").cumprod_(0, dtype=getattr(m, dtype)))
      for dtype in ("float64", "int32", "float16", "complex64")),
    ("equal_number", lambda m: m.equal(_t(m, [1.0]), 1)),
    ("equal_number_first", lambda m: m.equal(1.0, _t(m, [1.0]))),
]


@_cases(ERRORS)
def test_errors_match_torch(program):
    assert_same_as_torch(program)


TIES = [1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 1.0, 1.0, 2.0, 3.0, 0.0, 2.0, 3.0, 1.0, 1.0, 2.0, 0.0,
        3.0, 2.0, 2.0, 1.0]  # 21 values: mode's std::sort is past its insertion-sort size
TIES_NAN = [2.0, NAN, 1.0, 2.0, NAN, 1.0, 2.0, 0.0, NAN, 1.0, 2.0, 0.0, 1.0, 2.0, 2.0, 1.0, 0.0,
            1.0, NAN, 2.0]
ZEROS = [0.0, -0.0, 1.0, -0.0, 0.0, -1.0, -0.0, 0.0]
ALL_NAN = [[NAN] * n for n in (1, 4, 9)]


def _rows(m, values, width):
    """values cut into rows of ``width`` (the same ties in several rows and positions)."""
    return _t(m, [values[i:i + width] for i in range(0, len(values) - width + 1, 2)])


ORDER_STATISTICS = [
    *((f"kthvalue_ties_k{k}", lambda m, k=k: m.kthvalue(_t(m, TIES), k)) for k in (1, 6, 11, 21)),
    ("kthvalue_rows", lambda m: m.kthvalue(_rows(m, TIES, 7), 4, 1, True)),
    ("kthvalue_nan", lambda m: m.kthvalue(_t(m, TIES_NAN), 18)),
    ("kthvalue_nan_rows", lambda m: m.kthvalue(_rows(m, TIES_NAN, 6), 3)),
    ("kthvalue_zeros", lambda m: m.kthvalue(_t(m, ZEROS), 3)),
    ("kthvalue_int", lambda m: m.kthvalue(_t(m, [3, 1, 1, 2], "int32"), 2)),
    ("kthvalue_0d", lambda m: m.kthvalue(_t(m, 2.5), 1, 0, True)),
    ("kthvalue_empty_rows", lambda m: m.kthvalue(_t(m, E), 1, 0)),
    ("0d_of_any_dtype", lambda m: (*m.kthvalue(_t(m, True, "bool"), 1),
                                   *m.mode(_t(m, 1j, "complex64")),
                                   *m.cummax(_t(m, 2j, "complex128"), 0))),
    ("median", lambda m: m.median(_t(m, TIES))),
    ("median_nan", lambda m: m.median(_t(m, TIES_NAN))),
    ("median_rows", lambda m: m.median(_rows(m, TIES, 6), 1)),
    ("median_nan_rows", lambda m: m.median(_rows(m, TIES_NAN, 5), -1, True)),
    ("median_columns", lambda m: m.median(_rows(m, TIES, 4), 0)),
    ("median_zeros", lambda m: m.median(_t(m, ZEROS))),
    ("median_zeros_dim", lambda m: m.median(_t(m, ZEROS), 0)),
    ("median_int", lambda m: m.median(_t(m, [[5, 1, 1, 7], [2, 2, 9, 0]], "int64"), 1)),
    ("median_int_all", lambda m: m.median(_t(m, [5, 1, 1, 7], "int16"))),
    ("median_empty", lambda m: m.median(_t(m, E))),
    ("median_empty_int", lambda m: m.median(_t(m, E, "int64"))),
    ("median_empty_rows", lambda m: m.median(_t(m, E), 0)),
    ("median_empty_bool_complex", lambda m: (m.median(_t(m, [], "bool")),
                                             m.nanmedian(_t(m, [], "complex64")))),
    ("median_0d", lambda m: m.median(_t(m, 1.5), 0)),
    ("nanmedian", lambda m: m.nanmedian(_t(m, TIES_NAN))),
    ("nanmedian_rows", lambda m: m.nanmedian(_rows(m, TIES_NAN, 5), 1)),
    *((f"nanmedian_all_nan_{len(r)}", lambda m, r=r: m.nanmedian(_t(m, [r]), 1)) for r in ALL_NAN),
    ("nanmedian_all_nan", lambda m: m.nanmedian(_t(m, ALL_NAN[1]))),
    ("nanmedian_float32", lambda m: m.nanmedian(_t(m, TIES_NAN, "float32"), 0)),
    ("mode", lambda m: m.mode(_t(m, TIES))),
    ("mode_short_rows", lambda m: m.mode(_rows(m, TIES, 8), 1, True)),
    ("mode_long", lambda m: m.mode(_t(m, TIES * 3))),
    ("mode_nan", lambda m: m.mode(_t(m, TIES_NAN))),
    ("mode_nan_short", lambda m: m.mode(_t(m, [NAN, 1.0, NAN, 1.0]))),
    ("mode_zeros", lambda m: m.mode(_t(m, ZEROS))),
    ("mode_bool", lambda m: m.mode(_t(m, [True, False, True, False], "bool"))),
    ("mode_0d", lambda m: m.mode(_t(m, 4.0))),
    ("mode_empty_rows", lambda m: m.mode(_t(m, E), 0)),
    ("msort", lambda m: m.msort(_rows(m, TIES_NAN, 3))),
    ("msort_bool_0d", lambda m: (m.msort(_t(m, [True, False], "bool")), m.msort(_t(m, 2.0)))),
    ("aminmax", lambda m: m.aminmax(_rows(m, TIES_NAN, 4))),
    ("aminmax_dim", lambda m: m.aminmax(_rows(m, TIES_NAN, 4), dim=1, keepdim=True)),
    ("aminmax_zeros", lambda m: m.aminmax(_t(m, ZEROS))),
    ("aminmax_zeros_dim", lambda m: m.aminmax(_t(m, [ZEROS, ZEROS[::-1]]), dim=-1)),
    ("aminmax_keepdim_all", lambda m: m.aminmax(_t(m, [[1.0, 2.0]]), keepdim=True)),
    ("aminmax_int_bool", lambda m: (*m.aminmax(_t(m, [3, -1], "int8")),
                                    *m.aminmax(_t(m, [True, False], "bool"), dim=0))),
    ("aminmax_empty_rows", lambda m: m.aminmax(_t(m, E), dim=0)),
    ("count_nonzero", lambda m: m.count_nonzero(_t(m, [ZEROS, TIES_NAN[:8]]), -1)),
    ("count_nonzero_dims", lambda m: m.count_nonzero(_t(m, [[0, 1], [2, 0]], "int32"), [0, 1])),
    ("count_nonzero_kinds", lambda m: (m.count_nonzero(_t(m, [True, False], "bool")),
                                       m.count_nonzero(_t(m, [0j, 1j], "complex64")),
                                       m.count_nonzero(_t(m, 0.0), 0))),
    ("count_nonzero_empty", lambda m: m.count_nonzero(_t(m, E), 1)),
]


@_cases(ORDER_STATISTICS)
def test_order_statistics_match_torch(program):
    assert_same_as_torch(program)


SCANS = [
    ("cummax_ties", lambda m: m.cummax(_t(m, TIES), 0)),
    ("cummin_ties", lambda m: m.cummin(_rows(m, TIES, 5), 1)),
    ("cummax_nan", lambda m: m.cummax(_t(m, [1.0, NAN, 3.0, NAN, 0.0]), 0)),
    ("cummin_nan_rows", lambda m: m.cummin(_rows(m, TIES_NAN, 4), 0)),
    ("cummax_zeros", lambda m: m.cummax(_t(m, ZEROS), 0)),
    ("cummin_zeros", lambda m: m.cummin(_t(m, ZEROS), -1)),
    ("cummax_int_bool", lambda m: (*m.cummax(_t(m, [1, 3, 2], "int32"), 0),
                                   *m.cummin(_t(m, [True, False, True], "bool"), 0))),
    ("cummax_0d_empty", lambda m: (*m.cummax(_t(m, 2.0), -1), *m.cummin(_t(m, E), 1))),
    ("cumprod_int_bool", lambda m: (m.cumprod(_t(m, [2, 3, 4], "int32"), 0),
                                    m.cumprod(_t(m, [True, False], "bool"), 0),
                                    m.cumprod(_t(m, [2, 3], "uint8"), 0))),
    ("cumprod_dtype", lambda m: (m.cumprod(_t(m, [2, 3], "int64"), 0, dtype=m.float32),
                                 m.cumprod(_t(m, [1.5, 2.5], "float32"), 0, dtype=m.int32),
                                 m.cumprod(_t(m, [1.5, 2.5], "float32"), 0, dtype=m.float64))),
    ("cumprod_in_place", lambda m: (_t(m, [2, 3], "int32").cumprod_(0),
                                    _t(m, [1.5, 2.0]).cumprod_(-1, dtype=m.float64))),
    ("cumprod_0d_empty", lambda m: (m.cumprod(_t(m, 3.0), 0), m.cumprod(_t(m, E), 1))),
    ("cumprod_special", lambda m: m.cumprod(_t(m, [2.0, -0.0, INF, NAN, 3.0]), 0)),
    ("cumprod_complex_special", lambda m: m.cumprod(
        _t(m, [[INF + 0j, 1 + 1j, 2j], [1j, -INF + 0j, 0.5 + 0j]], "complex128"), 1)),
    ("logcumsumexp_special", lambda m: m.logcumsumexp(
        _t(m, [[-INF, -INF, 1.0, INF, 2.0], [INF, 1.0, NAN, 2.0, -0.0]]), 1)),
    ("logcumsumexp_first_zero", lambda m: m.logcumsumexp(_t(m, [-0.0, -1.0]), 0)),
    ("logcumsumexp_float32_0d", lambda m: (m.logcumsumexp(_t(m, [1.0, 2.0], "float32"), 0),
                                           m.logcumsumexp(_t(m, -0.0), 0))),
    ("logcumsumexp_complex", lambda m: m.logcumsumexp(
        _t(m, [[1 + 2j, -3 + 0.5j, 40 - 1j], [0j, 2 + 3j, -1j]], "complex128"), 1)),
    ("logcumsumexp_empty", lambda m: m.logcumsumexp(_t(m, E), 0)),
]


@_cases(SCANS)
def test_scans_match_torch(program):
    assert_same_as_torch(program)


def _double_backward(fn, values):
    """fn of a leaf, its gradient for a weight, and the gradient of that gradient's sum."""
    def program(m):
        x = _t(m, values).requires_grad_(True)
        out = fn(m, x)
        weight = m.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
        (g,) = m.autograd.grad(out, x, weight, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return out, g, gg
    return program


GRADIENTS = [
    ("cummax_ties", with_grads(lambda m, x: m.cummax(x, 0).values, TIES)),
    ("cummin_nan", with_grads(lambda m, x: m.cummin(x, 0).values, TIES_NAN)),
    ("cummax_rows", with_grads(lambda m, x: m.cummax(x, 1).values, [TIES[:7], TIES[7:14]])),
    ("kthvalue_ties", with_grads(lambda m, x: m.kthvalue(x, 6, 0).values, TIES)),
    ("median_ties", with_grads(lambda m, x: m.median(x), TIES)),
    ("median_nan", with_grads(lambda m, x: m.median(x), TIES_NAN)),
    ("nanmedian_nan", with_grads(lambda m, x: m.nanmedian(x), TIES_NAN)),
    ("median_dim_ties", with_grads(lambda m, x: m.median(x, 1).values, [TIES[:7], TIES[7:14]])),
    ("nanmedian_dim_nan", with_grads(lambda m, x: m.nanmedian(x, 0).values,
                                     [TIES_NAN[:5], TIES_NAN[5:10]])),
    ("mode_ties", with_grads(lambda m, x: m.mode(x).values, TIES)),
    ("aminmax_ties", with_grads(lambda m, x: m.aminmax(x).min * 2 + m.aminmax(x).max, TIES)),
    ("aminmax_dim_nan", with_grads(lambda m, x: m.stack(m.aminmax(x, dim=1)),
                                   [TIES_NAN[:5], TIES_NAN[5:10]])),
    ("aminmax_max_only", with_grads(lambda m, x: m.aminmax(x, dim=0).max, [1.0, 3.0, 3.0])),
    ("cumprod_zeros", with_grads(lambda m, x: m.cumprod(x, 1),
                                 [[2.0, 0.0, 3.0, 0.0, 4.0], [0.5, 1.5, 0.0, 2.0, 0.0]],
                                 seed=[[1.0, -2.0, 0.5, 3.0, 1.0], [2.0, 1.0, -1.0, 0.5, 2.0]])),
    ("cumprod_zero_then_inf", with_grads(lambda m, x: m.cumprod(x, 0), [2.0, 0.0, 3.0, INF, 1.0])),
    ("cumprod_float32_dtype", with_grads(lambda m, x: m.cumprod(x, 0, dtype=m.float64),
                                         [1.5, -2.0, 0.5], dtype="float32")),
    ("cumprod_inplace", with_grads(lambda m, x: (x * 1).cumprod_(0), [1.5, 0.0, -2.0])),
    ("logcumsumexp", with_grads(lambda m, x: m.logcumsumexp(x, 0), [0.5, -1.0, 2.0, 30.0],
                                seed=[1.0, -2.0, 0.0, 0.5])),
    ("logcumsumexp_complex", with_grads(lambda m, x: m.logcumsumexp(x, 0).abs(),
                                        [1 + 1j, -2 + 0.5j, 0.5j], dtype="complex128")),
    ("cumprod_double_backward_zeros", _double_backward(lambda m, x: m.cumprod(x, 0),
                                                       [2.0, 0.0, 3.0, 0.0, 1.5, -1.0])),
    ("cumprod_double_backward", _double_backward(lambda m, x: m.cumprod(x, 0),
                                                 [2.0, -0.5, 3.0, 1.5])),
    ("logcumsumexp_double_backward", _double_backward(lambda m, x: m.logcumsumexp(x, 0),
                                                      [0.5, -1.0, 2.0])),
]


@_cases(GRADIENTS)
def test_gradients_match_torch(program):
    assert_same_as_torch(program, rtol=1e-10, atol=1e-12)


def test_result_types_fields_methods_and_node_names_are_torchs():
    values = [[3.0, 1.0, 2.0], [0.5, 4.0, 4.0]]
    x, tx = gradkit.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    calls = [("cummax", (1,)), ("cummin", (0,)), ("kthvalue", (2,)), ("median", (1,)),
             ("nanmedian", (0,)), ("mode", (1,))]
    for name, args in calls:
        ours, theirs = getattr(x, name)(*args), getattr(tx, name)(*args)
        assert type(ours).__name__ == type(theirs).__name__ == name
        assert ours._fields == ("values", "indices") and ours.values.grad_fn.name() == \
            theirs.values.grad_fn.name()
    ours, theirs = x.aminmax(dim=0), tx.aminmax(dim=0)
    assert type(ours).__name__ == type(theirs).__name__ == "aminmax"
    assert ours._fields == ("min", "max") and ours.max.grad_fn.name() == theirs.max.grad_fn.name()
    np.testing.assert_array_equal(ours.min.detach().numpy(), theirs.min.detach().numpy())
    for name in ("cumprod", "logcumsumexp"):
        assert getattr(x, name)(0).grad_fn.name() == getattr(tx, name)(0).grad_fn.name()
    for name in ("median", "nanmedian", "msort"):
        assert getattr(x, name)().grad_fn.name() == getattr(tx, name)().grad_fn.name()
    assert x.count_nonzero().item() == tx.count_nonzero().item() == 6


def test_equal_is_torchs_python_bool():
    cases = [([1.0, 2.0], [1.0, 2.0]), ([1.0, 2.0], [1.0, 3.0]), ([1.0], [1.0, 1.0]),
             ([NAN], [NAN]), ([-0.0], [0.0]), ([[1.0]], [1.0]), (E, E)]
    for a, b in cases:
        ours = gradkit.equal(gradkit.tensor(a), gradkit.tensor(b))
        assert ours is torch.equal(torch.tensor(a), torch.tensor(b))
    mixed = (gradkit.tensor([True, False]), gradkit.tensor([1, 0]))
    assert mixed[0].equal(mixed[1]) is torch.tensor([True, False]).equal(torch.tensor([1, 0]))
    complex_ = gradkit.tensor([1 + 2j])
    assert gradkit.equal(complex_, complex_.clone()) is True


def test_cumprod_in_place_matches_torch_and_bumps_the_version():
    values = np.array([[1.5, -2.0, 0.5], [2.0, 0.0, 3.0]])
    x, tx = gradkit.tensor(values), torch.tensor(values)
    assert x.cumprod_(1) is x and x._version == 1
    tx.cumprod_(1)
    np.testing.assert_array_equal(x.numpy(), tx.numpy())


def test_large_tied_rows_take_torchs_indices():
    """Rows past the sizes where the replayed algorithms change strategy (heaps, partitions)."""
    rng = np.random.default_rng(0)
    values = rng.integers(0, 3, (6, 70)).astype(float)
    values[rng.random(values.shape) < 0.1] = NAN
    x, tx = gradkit.tensor(values), torch.tensor(values)
    for name, args in (("kthvalue", (35, 1)), ("mode", (1,)), ("median", (1,)),
                       ("nanmedian", (1,))):
        ours, theirs = getattr(x, name)(*args), getattr(tx, name)(*args)
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy(), err_msg=name)
    all_nan = np.full((2, 40), NAN)
    assert gradkit.tensor(all_nan).nanmedian(1).indices.tolist() == \
        torch.tensor(all_nan).nanmedian(1).indices.tolist()


@pytest.mark.parametrize("name", ["cummax", "cummin", "kthvalue", "mode"])
@pytest.mark.parametrize("shape", [(1, 0), (0,), (2,), (0, 3), ()])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_complex_inputs_pass_the_kernel_only_when_empty_or_0d(name, shape, requires_grad):
    """breadth seeds 3573, 5209, 5785: torch's kernels refuse complex x, except an empty or 0-d
    one (then autograd refuses it when it requires grad)."""
    args = (1, 0) if name == "kthvalue" else (0,)
    assert_same_as_torch(lambda m: getattr(m, name)(m.zeros(
        shape, dtype=m.complex64, requires_grad=requires_grad), *args)[0])


def test_logcumsumexp_backward_drops_a_nan_gradient_and_its_tangent_spreads_one_as_torch():
    """torch's backward splits the gradient by sign and a NaN is in neither part; its forward
    mode's cumsum spreads a NaN tangent from there on (gradkit shares the split: both)."""
    x, g = [0.3, -1.0, 2.0], [1.0, NAN, 2.0]
    grads, tangents = [], []
    for m in (torch, gradkit):
        leaf = _t(m, x).requires_grad_()
        m.logcumsumexp(leaf, 0).backward(_t(m, g))
        grads.append(leaf.grad.numpy())
        with m.autograd.forward_ad.dual_level():
            dual = m.autograd.forward_ad.make_dual(_t(m, x), _t(m, g))
            tangents.append(m.autograd.forward_ad.unpack_dual(m.logcumsumexp(dual, 0)).tangent
                            .numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-14)
    assert np.isfinite(grads[1]).all()
    np.testing.assert_allclose(tangents[1], tangents[0], rtol=1e-11)  # (log space: 5e-13)
    assert np.isnan(tangents[1][1:]).all()
