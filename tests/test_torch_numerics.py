"""Numerics against torch on the same programs: dtype promotion, integer arithmetic, NaN/inf and
subgradient conventions, and the errors torch raises (values, dtypes, gradients, messages).

Each program takes the module (``torch`` or ``gradkit``) and returns a tensor or a tuple of
tensors; both runs must agree on dtypes, shapes, values (NaN and the sign of zero included), or
raise the same error type with the same message.
"""
import math

import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _host(t):
    if isinstance(t, gradkit.Tensor):
        return t.detach().resolve_conj().numpy()  # a conj view stays one when detached
    return t.detach().resolve_conj().numpy(force=True)  # force: torch's ZeroTensor grads


def _outcome(program, module):
    """("raises", type, message) or ("ok", [(dtype name, array), ...]) of one run."""
    try:
        result = program(module)
    except Exception as e:  # noqa: BLE001 - the error is the outcome under test
        return ("raises", type(e).__name__, str(e))
    results = result if isinstance(result, tuple) else (result,)
    return ("ok", [(str(r.dtype).split(".")[-1], _host(r)) for r in results])


def assert_same_as_torch(program, rtol=1e-6, atol=0.0):
    expected, got = _outcome(program, torch), _outcome(program, gradkit)
    assert got[0] == expected[0], f"torch: {expected}, gradkit: {got}"
    if expected[0] == "raises":
        assert got[1:] == expected[1:]
        return
    assert len(got[1]) == len(expected[1])
    for (dtype, value), (t_dtype, t_value) in zip(got[1], expected[1], strict=True):
        assert dtype == t_dtype
        assert value.shape == t_value.shape
        if value.dtype.kind == "c":  # each part on its own: nan + 1j is not nan + nanj
            for part in (np.real, np.imag):
                np.testing.assert_allclose(part(value), part(t_value), rtol=rtol, atol=atol,
                                           equal_nan=True)
            continue
        np.testing.assert_allclose(value, t_value, rtol=rtol, atol=atol, equal_nan=True)
        if value.dtype.kind == "f":  # -0.0 and 0.0 differ too (NaN's sign bit is noise)
            numbers = ~np.isnan(t_value)
            np.testing.assert_array_equal(np.signbit(value[numbers]), np.signbit(t_value[numbers]))


def with_grads(fn, *values, dtype="float64", seed=None):
    """A program: fn of leaves made from ``values``, returning (fn(...), d/d each leaf)."""
    def program(m):
        leaves = [m.tensor(v, dtype=getattr(m, dtype), requires_grad=True) for v in values]
        out = fn(m, *leaves)
        g = m.ones_like(out) if seed is None else m.tensor(seed, dtype=out.dtype)
        grads = m.autograd.grad(out, leaves, g, allow_unused=True)
        return (out,) + tuple(m.zeros_like(x) if d is None else d
                              for x, d in zip(leaves, grads, strict=True))
    return program


def _cases(table):
    return pytest.mark.parametrize("program", [p for _, p in table], ids=[n for n, _ in table])


# -- type promotion: dimensioned tensors > 0-d tensors > Python numbers, by category ----------

def _t(m, values, dtype):
    return m.tensor(values, dtype=getattr(m, dtype))


PROMOTION = [
    ("float32_times_complex128_0d", lambda m: m.ones(2) * _t(m, 1j, "complex128")),
    ("float64_0d_keeps_float32", lambda m: m.ones(2) * _t(m, 2.0, "float64")),
    ("int64_plus_float64_0d", lambda m: _t(m, [1, 2], "int64") + _t(m, 2.5, "float64")),
    ("bool_plus_int_0d", lambda m: _t(m, [True, False], "bool") + m.tensor(3)),
    ("int32_plus_int64_0d", lambda m: _t(m, [1, 2], "int32") + m.tensor(3)),
    ("int_0d_plus_float", lambda m: m.tensor(1) + 1.5),
    ("bool_0d_times_float_0d", lambda m: m.tensor(True) * m.tensor(1.5)),
    ("int_plus_complex_number", lambda m: m.tensor([1, 2]) + 1j),
    ("float64_plus_complex_number", lambda m: _t(m, [1.0], "float64") + 2j),
    ("uint8_plus_300_wraps", lambda m: _t(m, [1, 2], "uint8") + 300),
    ("uint8_times_300_wraps", lambda m: _t(m, [1, 2], "uint8") * 300),
    ("int8_plus_1000_wraps", lambda m: _t(m, [1, 2], "int8") + 1000),
    ("uint8_and_int8", lambda m: _t(m, [3], "uint8") + _t(m, [5], "int8")),
    ("int64_and_float16", lambda m: _t(m, [3], "int64") * _t(m, [0.5], "float16")),
    ("float32_plus_numpy_0d", lambda m: m.ones(2) + np.array(2.0)),
    ("int64_plus_numpy_0d", lambda m: m.ones(2, dtype=m.int64) + np.array(2.5)),
    ("float32_plus_numpy_float64_scalar", lambda m: m.ones(2) + np.float64(2.0)),
    ("int64_plus_numpy_float64_scalar", lambda m: m.ones(2, dtype=m.int64) + np.float64(2.5)),
    ("cat_int32_float64", lambda m: m.cat([_t(m, [1, 2], "int32"), _t(m, [1.5], "float64")])),
    ("cat_int64_float16", lambda m: m.cat([_t(m, [1, 2], "int64"), _t(m, [1.5], "float16")])),
    ("cat_bool_uint8", lambda m: m.cat([_t(m, [True], "bool"), _t(m, [7], "uint8")])),
    ("stack_float32_complex64", lambda m: m.stack([m.ones(2), _t(m, [1j, 2], "complex64")])),
    ("where_int_float_tensors", lambda m: m.where(m.tensor([True, False]), m.tensor([1, 2]),
                                                  _t(m, [0.5, 1.5], "float16"))),
    ("logsumexp_int64", lambda m: m.logsumexp(m.tensor([1, 2, 3]), 0)),
    ("logsumexp_bool", lambda m: m.logsumexp(m.tensor([True, False]), 0)),
    ("square_bool", lambda m: m.square(m.tensor([True, False]))),
    ("square_uint8", lambda m: m.square(_t(m, [3, 20], "uint8"))),
    ("clamp_bool_min", lambda m: m.clamp(m.tensor([True, False]), min=0)),
    ("clamp_bool_max", lambda m: m.clamp(m.tensor([True, False]), max=0)),
    ("clamp_int_float_bound", lambda m: m.clamp(m.tensor([1, 5]), max=2.5)),
    ("clamp_int_tensor_bound", lambda m: m.clamp(m.tensor([1, 5]), min=m.tensor([2.5, 0.5]))),
    ("cumsum_int16", lambda m: m.cumsum(_t(m, [1, 2], "int16"), 0)),
    ("cumsum_uint8", lambda m: m.cumsum(_t(m, [200, 100], "uint8"), 0)),
    ("cumsum_bool", lambda m: m.cumsum(m.tensor([True, True]), 0)),
    ("prod_uint8", lambda m: m.prod(_t(m, [20, 30], "uint8"))),
    ("sum_int16", lambda m: m.sum(_t(m, [1, 2], "int16"))),
    ("all_uint8", lambda m: _t(m, [1, 2], "uint8").all()),
    ("any_uint8_dim", lambda m: _t(m, [[0, 2], [0, 0]], "uint8").any(0)),
    ("all_int8_is_bool", lambda m: _t(m, [1, 2], "int8").all()),
    ("sum_dtype", lambda m: m.sum(m.ones(2), dtype=m.float64)),
    ("sum_int_dtype_float", lambda m: m.tensor([1, 2]).sum(dtype=m.float32)),
    ("sum_float_dtype_int", lambda m: m.tensor([1.5, 2.5]).sum(dtype=m.int64)),
    ("mean_int_dtype", lambda m: m.tensor([1, 2]).mean(dtype=m.float64)),
    ("prod_dtype", lambda m: m.ones(2).prod(dtype=m.float64)),
    ("cumsum_dtype", lambda m: m.cumsum(m.ones(2), 0, dtype=m.float64)),
    ("cumsum_bool_dtype", lambda m: m.tensor([True, True]).cumsum(0, dtype=m.int32)),
    ("softmax_dtype", lambda m: m.softmax(m.ones(2), 0, dtype=m.float64)),
    ("softmax_empty", lambda m: m.softmax(m.ones(0), 0)),
    ("softmax_empty_dim", lambda m: m.softmax(m.ones(3, 0), 1)),
    ("log_softmax_empty", lambda m: m.log_softmax(m.ones(0, 2), 1)),
    ("sign_bool", lambda m: m.sign(m.tensor([True, False]))),
]


@_cases(PROMOTION)
def test_promotion_matches_torch(program):
    assert_same_as_torch(program)


def test_gradient_through_a_promoting_op_comes_back_in_the_leaf_dtype():
    assert_same_as_torch(with_grads(lambda m, x: x * m.tensor(2j, dtype=m.complex128),
                                    [1.0, 2.0], dtype="float32"))
    assert_same_as_torch(with_grads(lambda m, x: m.sum(x, dtype=m.float64), [1.0, 2.0],
                                    dtype="float32"))
    assert_same_as_torch(with_grads(lambda m, x, y: m.cat([x, y]), [1.0], [2.0, 3.0],
                                    dtype="float32"))


# -- pow -----------------------------------------------------------------------------------------

POW = [
    ("two_to_x", with_grads(lambda m, x: 2 ** x, [1.0, 2.0, -1.5])),
    ("two_point_zero_to_x", with_grads(lambda m, x: 2.0 ** x, [1.0, 2.0, -1.5])),
    ("i_to_x", with_grads(lambda m, x: 1j ** x, [1.0, 2.0])),
    ("zero_to_x", with_grads(lambda m, x: 0 ** x, [0.0, 2.0, -1.0])),
    ("negative_base_to_x", with_grads(lambda m, x: (-2.0) ** x, [1.0, 2.0, 0.5])),
    ("negative_real_base_complex_exponent",
     with_grads(lambda m, x: x ** m.tensor(0.5 + 1j, dtype=m.complex128), [-2.0, 3.0])),
    ("negative_real_base_complex_exponent_leaf",
     lambda m: with_grads(lambda m, x, y: x ** y.to(m.complex128), [-2.0, 3.0], [0.5, 1.5])(m)),
    ("negative_number_base_complex_exponent",
     with_grads(lambda m, x: (-2.0) ** x, [0.5 + 1j, 2.0], dtype="complex128")),
    ("complex_pow_both", with_grads(lambda m, x, y: x ** y, [-2.0 + 0j, 1 + 1j], [0.5 + 1j, 2j],
                                    dtype="complex128")),
    ("complex_zero_to_zero_tensor", with_grads(lambda m, x, y: x ** y, [0j], [0j],
                                               dtype="complex128")),
    ("complex_zero_base_tensor_exponents",
     lambda m: _t(m, [0j, 0j, 0j, 1j, 0j], "complex128")
     ** _t(m, [0j, 2 + 0j, 1j, 0j, -1 + 0j], "complex128")),
    ("complex_zero_base_number_exponents",
     lambda m: (_t(m, [0j], "complex128") ** 0, _t(m, [0j], "complex128") ** 0j,
                _t(m, [0j], "complex128") ** 2)),
    ("number_zero_to_complex_tensor", lambda m: 0 ** _t(m, [0j, 1 + 0j], "complex128")),
    ("complex_tensor_to_real_tensor", lambda m: _t(m, [0j, 1 + 1j], "complex64")
     ** _t(m, [0.0, 0.0], "float32")),
    ("int_to_negative_int_tensor", lambda m: m.tensor([2, 1, -1, -1, 0, 3])
     ** m.tensor([-2, -2, -3, -2, -1, 2])),
    ("int_to_negative_int_0d_tensor", lambda m: m.tensor([2, 3]) ** m.tensor(-1)),
    ("number_to_negative_int_tensor", lambda m: 2 ** m.tensor([-1, 2])),
    ("one_to_negative_int_tensor", lambda m: 1 ** m.tensor([-1, -2])),
    ("bool_to_negative_int_tensor", lambda m: m.tensor([True]) ** m.tensor([-1])),
    ("int_to_zero", lambda m: m.pow(m.tensor([1, 2]), 0)),
    ("int_to_negative_number_raises", lambda m: m.tensor([2, 3]) ** -1),
    ("int_0d_to_negative_number_raises", lambda m: m.tensor(2) ** -1),
    ("int_to_negative_float", lambda m: m.tensor([2, 3]) ** -1.0),
]


@_cases(POW)
def test_pow_matches_torch(program):
    assert_same_as_torch(program, rtol=1e-12, atol=1e-15)  # torch: exp(x log 1j) for 1j ** x


def test_pow_with_a_number_base_checks_to_second_order():
    x = gradkit.tensor([0.3, 1.2, -0.7], dtype=gradkit.float64, requires_grad=True)
    for base in (2, 2.5, 1j, 0.5 + 0.5j):
        assert gradcheck(lambda x, b=base: b ** x, (x,))
        assert gradgradcheck(lambda x, b=base: b ** x, (x,))


# -- inner, einsum, alpha ------------------------------------------------------------------------

def _arange(m, *shape, complex_=False, start=0.0):
    values = m.arange(start, start + float(np.prod(shape))).reshape(shape)
    return values * (1 + 1j) if complex_ else values


PRODUCTS = [
    ("inner_3x1_3x1x1_complex", lambda m: m.inner(_arange(m, 3, 1, complex_=True, start=1.0),
                                                  _arange(m, 3, 1, 1, start=5.0) * (2 - 1j))),
    ("inner_2x3_5x4x3", lambda m: m.inner(_arange(m, 2, 3), _arange(m, 5, 4, 3))),
    ("inner_1d_2d", lambda m: m.inner(_arange(m, 3), _arange(m, 2, 3))),
    ("inner_2d_1d", lambda m: m.inner(_arange(m, 2, 3), _arange(m, 3))),
    ("inner_0d", lambda m: m.inner(m.tensor(2.0), _arange(m, 2, 3))),
    ("inner_empty", lambda m: m.inner(m.ones(0, 3), _arange(m, 2, 3))),
    ("inner_mismatch_raises", lambda m: m.inner(m.ones(2, 3), m.ones(5, 4, 2))),
    ("einsum_bool_sum", lambda m: m.einsum("i->", m.tensor([True, True, False]))),
    ("einsum_bool_trace", lambda m: m.einsum("ii->", m.tensor([[True, False], [True, True]]))),
    ("einsum_bool_diagonal", lambda m: m.einsum("ii->i", m.tensor([[True, False], [True, True]]))),
    ("einsum_bool_column_sums", lambda m: m.einsum("ij->j", m.tensor([[True, False],
                                                                       [True, True]]))),
    ("einsum_bool_outer", lambda m: m.einsum("i,j->ij", m.tensor([True, False]),
                                             m.tensor([True, True]))),
    ("einsum_bool_separate_sums", lambda m: m.einsum("i,j->", m.tensor([True, False]),
                                                     m.tensor([True, True]))),
    ("einsum_bool_contraction_raises", lambda m: m.einsum("i,i->", m.tensor([True, False]),
                                                          m.tensor([True, True]))),
    ("einsum_bool_matmul_raises", lambda m: m.einsum("ij,jk->ik", m.ones(2, 2, dtype=m.bool),
                                                     m.ones(2, 2, dtype=m.bool))),
    ("einsum_bool_summed_then_contracted_raises",
     lambda m: m.einsum("ij,i->", m.ones(2, 2, dtype=m.bool), m.ones(2, dtype=m.bool))),
    ("einsum_uint8_sum_in_int64", lambda m: m.einsum("i->", _t(m, [200, 100], "uint8"))),
    ("einsum_uint8_contraction_wraps", lambda m: m.einsum("i,i->", _t(m, [200, 200], "uint8"),
                                                          _t(m, [1, 1], "uint8"))),
    ("einsum_int32_contraction", lambda m: m.einsum("ij,jk->ik", m.ones(2, 2, dtype=m.int32),
                                                    m.ones(2, 2, dtype=m.int32))),
    ("einsum_mixed_elementwise", lambda m: m.einsum("i,i->i", m.ones(2),
                                                    m.ones(2, dtype=m.float64))),
    ("einsum_mixed_contraction_raises", lambda m: m.einsum("i,i->", m.ones(2),
                                                           m.ones(2, dtype=m.float64))),
    ("add_bool_alpha_2", lambda m: m.add(m.tensor([True, False]), m.tensor([True, True]),
                                         alpha=2)),
    ("add_bool_alpha_true", lambda m: m.add(m.tensor([True, False]), m.tensor([False, False]),
                                            alpha=True)),
    ("sub_int_alpha", lambda m: m.sub(m.tensor([1, 2]), m.tensor([1, 1]), alpha=3)),
    ("add_float_alpha_on_ints_raises", lambda m: m.add(m.tensor([1]), m.tensor([1]), alpha=0.5)),
    ("add_float_alpha_on_bools_raises", lambda m: m.add(m.tensor([True]), m.tensor([True]),
                                                        alpha=0.5)),
    ("add_bool_alpha_on_ints_raises", lambda m: m.add(m.tensor([1]), m.tensor([1]), alpha=True)),
    ("add_complex_alpha_on_floats_raises", lambda m: m.add(m.ones(1), m.ones(1), alpha=1j)),
    ("add_complex_alpha", lambda m: m.add(m.ones(1), m.tensor([1j]), alpha=1j)),
    ("sub_bools_raises", lambda m: m.tensor([True]) - m.tensor([True])),
    ("sub_bool_and_int_raises", lambda m: m.tensor([True]) - m.tensor([1])),
    ("neg_bool_raises", lambda m: -m.tensor([True])),
    # a contraction of length 1: torch's gemm keeps the product's -0.0 (its gemv/dot/bmm do not)
    ("mm_k1_signed_zero", lambda m: m.tensor([[-0.0], [1.0], [0.0]]) @ m.tensor([[2.0, -0.0]])),
    ("mm_k1_signed_zero_float32", lambda m: m.full((3, 1), -0.0) @ m.ones(1, 4)),
    ("mm_k1_complex", lambda m: m.tensor([[-0.0 + 0j], [1j]]) @ m.tensor([[1.0 + 0j, -1j]])),
    ("mv_k1_signed_zero", lambda m: m.full((3, 1), -0.0) @ m.ones(1, 1)),
    ("bmm_k1_signed_zero", lambda m: m.full((2, 3, 1), -0.0) @ m.ones(2, 1, 3)),
    ("mm_k1_nan_inf", lambda m: m.tensor([[math.inf], [math.nan]]) @ m.tensor([[0.0, -1.0]])),
]


@_cases(PRODUCTS)
def test_products_and_alpha_match_torch(program):
    assert_same_as_torch(program)


def test_inner_gradients_match_torch_and_check():
    assert_same_as_torch(with_grads(lambda m, x, y: m.inner(x, y),
                                    np.arange(6.0).reshape(2, 3), np.ones((5, 4, 3)) * 0.5))
    assert_same_as_torch(with_grads(lambda m, x, y: m.inner(x, y),
                                    (np.arange(3.0) * (1 + 2j)).reshape(3, 1),
                                    (np.arange(3.0) * (2 - 1j)).reshape(3, 1, 1),
                                    dtype="complex128"), rtol=1e-12)
    x = gradkit.randn(2, 3, dtype=gradkit.float64, requires_grad=True)
    y = gradkit.randn(4, 1, 3, dtype=gradkit.complex128, requires_grad=True)
    assert gradcheck(gradkit.inner, (x.to(gradkit.complex128), y))
    assert gradgradcheck(gradkit.inner, (x, gradkit.randn(5, 3, dtype=gradkit.float64,
                                                           requires_grad=True)))


# -- NaN, inf, signed zeros and subgradients -----------------------------------------------------

SPECIAL = [NAN, 1.0, -1.0, 0.0, -0.0, INF, -INF]

CONVENTIONS = [
    ("sign_at_nan", with_grads(lambda m, x: m.sign(x), SPECIAL)),
    ("sgn_real_at_nan", lambda m: m.sgn(m.tensor(SPECIAL))),
    ("abs_at_nan", with_grads(lambda m, x: m.abs(x), SPECIAL)),
    ("relu_at_nan_and_signed_zero", with_grads(lambda m, x: m.relu(x), SPECIAL)),
    ("max_all_at_nan", with_grads(lambda m, x: m.max(x), [1.0, NAN, 2.0])),
    ("min_all_at_nan", with_grads(lambda m, x: m.min(x), [1.0, NAN, 2.0, NAN])),
    ("max_all_ties", with_grads(lambda m, x: m.max(x), [2.0, 1.0, 2.0])),
    ("amax_at_nan", with_grads(lambda m, x: m.amax(x, 0), [1.0, NAN, 2.0])),
    ("amin_nan_row", with_grads(lambda m, x: m.amin(x, 1), [[1.0, NAN], [2.0, 3.0]])),
    ("max_dim_at_nan", with_grads(lambda m, x: m.max(x, 0)[0], [1.0, NAN, 2.0])),
    ("max_dim_index_at_nan", lambda m: m.max(m.tensor([1.0, NAN, 2.0, NAN]), 0)[1]),
    ("maximum_at_nan", with_grads(lambda m, x, y: m.maximum(x, y), [NAN, 1.0, NAN, 2.0],
                                  [1.0, NAN, NAN, 2.0])),
    ("minimum_at_nan", with_grads(lambda m, x, y: m.minimum(x, y), [NAN, 1.0, NAN, 2.0],
                                  [1.0, NAN, NAN, 2.0])),
    ("clamp_at_nan", with_grads(lambda m, x: m.clamp(x, min=0.0, max=1.0),
                                [NAN, 0.5, -1.0, 2.0, 0.0, 1.0, -0.0])),
    ("clamp_nan_bound", with_grads(lambda m, x: m.clamp(x, min=NAN), [0.5, -1.0])),
    ("clamp_keeps_negative_zero", lambda m: (m.clamp(m.tensor([-0.0, 0.0]), min=0.0),
                                             m.clamp(m.tensor([-0.0, 0.0]), max=-0.0))),
    ("clamp_tensor_min_at_nan", with_grads(lambda m, x, lo: m.clamp(x, min=lo),
                                           [NAN, 0.5, -1.0, 1.0], [0.0, NAN, 0.0, 1.0])),
    ("clamp_tensor_bounds_crossed", with_grads(lambda m, x, lo, hi: m.clamp(x, lo, hi),
                                               [0.5, 3.0, -1.0, 0.7], [0.0, 0.0, 0.0, 1.0],
                                               [1.0, 1.0, 1.0, 0.5])),
    ("floor_inf_upstream", with_grads(lambda m, x: m.floor(x), [0.5, 1.5], seed=[INF, NAN])),
    ("ceil_inf_upstream", with_grads(lambda m, x: m.ceil(x), [0.5, 1.5], seed=[INF, NAN])),
    ("round_inf_upstream", with_grads(lambda m, x: m.round(x), [0.5, 1.5], seed=[INF, NAN])),
    ("trunc_inf_upstream", with_grads(lambda m, x: m.trunc(x), [0.5, 1.5], seed=[INF, NAN])),
    ("sign_inf_upstream", with_grads(lambda m, x: m.sign(x), [0.5, 1.5], seed=[INF, NAN])),
    ("elu_at_zero_and_nan", with_grads(lambda m, x: m.nn.functional.elu(x, alpha=2.0),
                                       [0.0, -0.0, NAN, 1.0, -1.0])),
    ("var_correction_2_one_element", with_grads(lambda m, x: m.var(x, correction=2), [1.5])),
    ("var_correction_2_two_elements", with_grads(lambda m, x: m.var(x, correction=2),
                                                 [1.5, 2.0])),
    ("var_correction_3_two_elements", with_grads(lambda m, x: m.var(x, correction=3),
                                                 [1.5, 2.0])),
    ("var_correction_equal_elements", with_grads(lambda m, x: m.var(x, correction=2),
                                                 [1.5, 1.5])),
    ("var_dim_correction_2", with_grads(lambda m, x: m.var(x, 0, correction=2), [[1.5], [2.0]])),
    ("std_correction_2_one_element", with_grads(lambda m, x: m.std(x, correction=2), [1.5])),
    ("remainder_signed_zeros", lambda m: m.remainder(
        m.tensor([-0.0, 0.0, -4.0, 4.0, -1.0, 5.0, -5.0, INF, 1.0, 3.0]),
        m.tensor([1.0, -1.0, 2.0, -2.0, 1.0, -3.0, 3.0, 2.0, INF, -INF]))),
    ("remainder_by_number", lambda m: m.tensor([-0.0, 0.0, -5.0, 5.0]) % 2.5),
    ("remainder_by_zero", lambda m: m.tensor([1.0, -1.0, 0.0]) % 0),
    ("remainder_integers", lambda m: m.tensor([5, -5, 5]) % m.tensor([-3, 3, 3])),
    ("floor_divide_by_zero_float", lambda m: m.tensor([1.0, -1.0, 0.0]) // 0),
    ("remainder_gradients", with_grads(lambda m, x, y: m.remainder(x, y), [5.0, -5.0, 4.5],
                                       [3.0, 3.0, -2.0])),
    ("complex_log_signed_zeros", lambda m: m.log(m.tensor(
        [complex(-1, 0.0), complex(-1, -0.0), complex(0.0, -0.0), complex(-0.0, 0.0)],
        dtype=m.complex128))),
    ("complex_plus_real_nan", lambda m: _t(m, [1 + 1j], "complex128") + _t(m, [NAN], "float64")),
    ("complex_plus_nan_number", lambda m: _t(m, [1 + 1j], "complex128") + NAN),
    ("nan_number_plus_complex", lambda m: NAN + _t(m, [1 + 1j], "complex128")),
    ("complex_minus_real_inf", lambda m: _t(m, [1 + 1j], "complex128") - _t(m, [INF], "float64")),
    ("real_nan_plus_complex", lambda m: _t(m, [NAN], "float64") + _t(m, [1 + 1j], "complex128")),
    ("real_minus_complex_nan", lambda m: _t(m, [1.0], "float64") - m.tensor([complex(NAN, 1)])),
    ("complex_add_alpha_2", lambda m: m.add(_t(m, [1 + 1j], "complex128"),
                                            _t(m, [NAN], "float64"), alpha=2)),
]


@_cases(CONVENTIONS)
def test_nan_inf_and_subgradient_conventions_match_torch(program):
    assert_same_as_torch(program, rtol=1e-12)


def test_elu_second_derivative_at_zero_matches_torch():
    def program(m):
        x = m.tensor([0.0, -0.0, NAN, 1.0, -1.0], dtype=m.float64, requires_grad=True)
        first, = m.autograd.grad(m.nn.functional.elu(x, alpha=2.0).sum(), x, create_graph=True)
        second, = m.autograd.grad(first.sum(), x)
        return first, second
    assert_same_as_torch(program, rtol=1e-12)


# -- errors torch raises -------------------------------------------------------------------------

def _complex(m):
    return m.ones(2, 2, dtype=m.complex64)


def _remainder_of_number_backward(m):
    x = m.tensor([1.5, 2.5], requires_grad=True)
    return m.autograd.grad((2 % x).sum(), x)


def _hook_changing_dtype(m, leaf):
    x = m.tensor([1.5, 2.5], requires_grad=True)
    y = x if leaf else x * 2
    y.register_hook(lambda g: g.double())
    (y * 2).sum().backward()
    return x.grad


ERRORS = [
    ("int_floor_divide_by_zero", lambda m: m.tensor([1, 2]) // 0),
    ("int_floor_divide_by_zero_tensor", lambda m: m.tensor([1, 2]) // m.tensor([0, 1])),
    ("int_remainder_by_zero", lambda m: m.tensor([1, 2]) % 0),
    ("uint8_floor_divide_by_zero", lambda m: _t(m, [5], "uint8") // 0),
    ("float_and_float", lambda m: m.ones(2) & m.ones(2)),
    ("float_and_int", lambda m: m.ones(2) & m.ones(2, dtype=m.int64)),
    ("float64_or", lambda m: m.ones(2, dtype=m.float64) | m.ones(2)),
    ("int_xor_float64", lambda m: m.ones(2, dtype=m.int64) ^ m.ones(2, dtype=m.float64)),
    ("int_and_float_number", lambda m: m.tensor([3]) & 1.0),
    ("invert_float", lambda m: ~m.ones(2)),
    ("relu_complex", lambda m: m.relu(_complex(m))),
    ("gelu_complex", lambda m: m.nn.functional.gelu(_complex(m))),
    ("gelu_tanh_complex", lambda m: m.nn.functional.gelu(_complex(m), approximate="tanh")),
    ("elu_complex", lambda m: m.nn.functional.elu(_complex(m))),
    ("leaky_relu_complex", lambda m: m.nn.functional.leaky_relu(_complex(m))),
    ("softplus_complex", lambda m: m.nn.functional.softplus(_complex(m))),
    ("logsigmoid_complex", lambda m: m.nn.functional.logsigmoid(_complex(m))),
    ("max_complex", lambda m: m.max(_complex(m))),
    ("min_complex", lambda m: m.min(_complex(m))),
    ("max_dim_complex", lambda m: m.max(_complex(m), 0)),
    ("min_dim_complex", lambda m: m.min(_complex(m), 0)),
    ("amax_complex", lambda m: m.amax(_complex(m))),
    ("amin_complex", lambda m: m.amin(_complex(m))),
    ("argmax_complex", lambda m: m.argmax(_complex(m))),
    ("maximum_complex", lambda m: m.maximum(_complex(m), _complex(m))),
    ("minimum_complex", lambda m: m.minimum(_complex(m), _complex(m))),
    ("max_other_complex", lambda m: m.max(_complex(m), _complex(m))),
    ("softmax_complex", lambda m: m.softmax(_complex(m), -1)),
    ("softmax_complex_dim0", lambda m: m.softmax(_complex(m), 0)),
    ("log_softmax_complex", lambda m: m.log_softmax(_complex(m), 1)),
    ("softmax_int", lambda m: m.softmax(m.ones(2, dtype=m.int64), 0)),
    ("clamp_complex", lambda m: m.clamp(_complex(m), min=0)),
    ("clamp_complex_tensor_bound", lambda m: m.clamp(_complex(m), min=m.ones(2))),
    ("floor_complex", lambda m: m.floor(_complex(m))),
    ("round_complex", lambda m: m.round(_complex(m))),
    ("sign_complex", lambda m: m.sign(_complex(m))),
    ("max_empty", lambda m: m.max(m.ones(0))),
    ("remainder_of_number_backward", _remainder_of_number_backward),
    ("hook_on_leaf_changes_dtype", lambda m: _hook_changing_dtype(m, leaf=True)),
    ("hook_on_nonleaf_changes_dtype", lambda m: _hook_changing_dtype(m, leaf=False)),
]


@_cases(ERRORS)
def test_errors_match_torch(program):
    assert_same_as_torch(program)


BITWISE = [
    ("uint8_and_int8", lambda m: _t(m, [3], "uint8") & _t(m, [5], "int8")),
    ("int_and_number", lambda m: m.tensor([3, 6]) & 1),
    ("bool_and_int", lambda m: m.tensor([True]) & 1),
    ("bool_or_bool", lambda m: m.tensor([True, False]) | m.tensor([False, False])),
    ("number_xor_int", lambda m: 1 ^ m.tensor([3])),
    ("int_invert", lambda m: ~m.tensor([3, -1])),
    ("bool_invert", lambda m: ~m.tensor([True, False])),
]


@_cases(BITWISE)
def test_bitwise_operators_match_torch(program):
    assert_same_as_torch(program)


def test_remainder_of_a_number_computes_forward_and_records_a_node():
    x = gradkit.tensor([1.5, 2.5], requires_grad=True)
    y = 2 % x
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
        y.sum().backward()


# -- gradient checks of the changed rules (float64, and complex where the op takes it) ----------

def _leaf(values, dtype=gradkit.float64):
    return gradkit.tensor(values, dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("fn,args", [
    (lambda x, lo, hi: gradkit.clamp(x, lo, hi),
     lambda: (_leaf([0.3, 2.0, -1.2, 0.7]), _leaf([0.0, 0.1, 0.2, 1.0]),
              _leaf([1.0, 1.5, 1.1, 0.4]))),
    (lambda x, lo: gradkit.clamp(x, min=lo), lambda: (_leaf([0.3, -1.2]), _leaf([0.0, 0.1]))),
    (lambda x: gradkit.clamp(x, min=-0.5, max=0.5), lambda: (_leaf([0.3, -1.2, 0.9]),)),
    (gradkit.maximum, lambda: (_leaf([0.3, -1.2, 2.0]), _leaf([0.1, 0.4, 1.0]))),
    (gradkit.minimum, lambda: (_leaf([0.3, -1.2, 2.0]), _leaf([0.1, 0.4, 1.0]))),
    (gradkit.max, lambda: (_leaf([0.3, -1.2, 2.0]),)),
    (gradkit.min, lambda: (_leaf([[0.3, -1.2], [2.0, 0.5]]),)),
    (lambda x: gradkit.amax(x, 1), lambda: (_leaf([[0.3, -1.2], [2.0, 0.5]]),)),
    (lambda x: gradkit.var(x, correction=2), lambda: (_leaf([0.3, -1.2, 2.0]),)),
    (lambda x: gradkit.var(x, 1, correction=0), lambda: (_leaf([[0.3, -1.2], [2.0, 0.5]]),)),
    (lambda x: gradkit.std(x, correction=2), lambda: (_leaf([0.3, -1.2, 2.0, 0.1]),)),
    (lambda x: gradkit.nn.functional.elu(x, alpha=1.5), lambda: (_leaf([0.3, -1.2, 2.0]),)),
    (gradkit.relu, lambda: (_leaf([0.3, -1.2, 2.0]),)),
    (gradkit.remainder, lambda: (_leaf([5.3, -5.2, 4.5]), _leaf([3.1, 3.3, -2.2]))),
    (lambda x, y: x + y, lambda: (_leaf([1.5, 2.6], gradkit.complex128), _leaf([0.5, -1.0]))),
    (lambda x, y: gradkit.sub(x, y, alpha=2),
     lambda: (_leaf([1.5j, 2.6], gradkit.complex128), _leaf([0.5, -1.0]))),
    (lambda x, y: x ** y, lambda: (_leaf([-1.5, 2.6]), _leaf([0.5 + 1j, 2.0], gradkit.complex128))),
    (lambda x, y: gradkit.einsum("ij,jk->ik", x, y),
     lambda: (_leaf(np.ones((2, 3)) * 0.5), _leaf(np.arange(6.0).reshape(3, 2)))),
])
def test_changed_rules_pass_gradcheck_and_gradgradcheck(fn, args):
    inputs = args()
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)
