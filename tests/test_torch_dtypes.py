"""Operators across dtypes against torch (found by the fuzzer's ``dtypes`` class): comparisons
and shifts in the promoted dtype, the dtypes torch has no kernel for (their error types and
messages), in-place casts, and the gradients of relu and floor_divide."""
import math

import pytest


torch = pytest.importorskip("torch")

from test_torch_numerics import assert_same_as_torch, with_grads  # noqa: E402


def _t(m, values, dtype):
    return m.tensor(values, dtype=getattr(m, dtype))


def _in_place(m, values, dtype, update):
    x = _t(m, values, dtype)
    update(m, x)
    return x


def _shl(m, x, n):
    x <<= n
    return x


def _iadd_int16(m, x):
    x += _t(m, [300, -3, 7], "int16")


def _iadd_int(m, x):
    x += m.tensor([1, 0, 1])


def _cases(table):
    return pytest.mark.parametrize("program", [p for _, p in table], ids=[n for n, _ in table])


CASES = [
    # comparisons promote first: the number wraps to uint8 (-2 is 254), complex has no order
    ("uint8_lt_negative", lambda m: _t(m, [0, 3, 200], "uint8") < -2),
    ("uint8_eq_300", lambda m: _t(m, [44, 3], "uint8") == 300),
    ("bool_lt_2", lambda m: _t(m, [True, False], "bool") < 2),
    ("complex_lt_number", lambda m: _t(m, [1j], "complex64") < 1),
    ("number_lt_complex", lambda m: 300 < _t(m, [1j], "complex128")),
    ("float_ge_complex_number", lambda m: m.ones(2) >= 1j),
    ("complex_le_tensor", lambda m: _t(m, [1j], "complex64") <= _t(m, [2.0], "float64")),
    ("complex_eq_number", lambda m: _t(m, [1j, 2], "complex64") == 1j),
    # shifts: a count out of [0, width) gives 0 (left) or the sign fill (right)
    ("shl_int64", lambda m: m.tensor([1, -3, 5, 7]) << m.tensor([2, 63, 64, -1])),
    ("shr_int64", lambda m: m.tensor([-9, -3, 5, 7]) >> m.tensor([1, 64, 70, -1])),
    ("shr_uint8_by_9", lambda m: _t(m, [200, 3], "uint8") >> 9),
    ("shl_uint8_by_300", lambda m: _t(m, [200, 3], "uint8") << 300),
    ("shl_int16_overflow", lambda m: _t(m, [800, -3], "int16") << 7),
    ("number_shl_tensor", lambda m: 2 << _t(m, [1, 3], "int32")),
    ("number_shr_tensor", lambda m: -64 >> _t(m, [1, 3], "int16")),
    ("bool_shl_int", lambda m: _t(m, [True, False], "bool") << 1),
    ("bool_shl_bool", lambda m: _t(m, [True], "bool") << _t(m, [True], "bool")),
    ("float_shl", lambda m: m.ones(2) << 1),
    ("int_shr_float", lambda m: m.tensor([4]) >> 1.5),
    ("shift_functions", lambda m: (m.bitwise_left_shift(m.tensor([3]), 2),
                                   m.bitwise_right_shift(m.tensor([-12]), 2))),
    ("shl_in_place", lambda m: _in_place(m, [3, 200], "uint8", lambda m, x: _shl(m, x, 1))),
    # pow: bool ** number stays bool; no bool exponent tensor; exponents checked before wrapping
    ("bool_pow_true", lambda m: _t(m, [True, False], "bool") ** True),
    ("bool_pow_false", lambda m: _t(m, [True, False], "bool") ** False),
    ("bool_pow_2", lambda m: _t(m, [True, False], "bool") ** 2),
    ("bool_pow_bool_tensor", lambda m: _t(m, [True], "bool") ** _t(m, [True], "bool")),
    ("true_pow_bool_tensor", lambda m: True ** _t(m, [True], "bool")),
    ("uint8_pow_negative", lambda m: _t(m, [2], "uint8") ** -2),
    ("uint8_pow_300", lambda m: _t(m, [2], "uint8") ** 300),
    ("number_300_pow_uint8", lambda m: 300 ** _t(m, [2, 3], "uint8")),
    ("int16_pow_70000", lambda m: _t(m, [2], "int16") ** 70000),
    # // and %: no bool or complex kernel
    ("complex_floor_divide", lambda m: _t(m, [1j], "complex128") // 2),
    ("float_floor_divide_complex", lambda m: m.ones(2) // (1 + 2j)),
    ("complex_remainder", lambda m: m.ones(2) % _t(m, [1j], "complex64")),
    ("bool_floor_divide_bool", lambda m: _t(m, [True], "bool") // _t(m, [True], "bool")),
    ("bool_remainder_true", lambda m: _t(m, [True], "bool") % True),
    ("bool_floor_divide_int", lambda m: _t(m, [True, False], "bool") // 2),
    # in place: any cast within a category (wrapping), none down a category
    ("uint8_iadd_int16", lambda m: _in_place(m, [1, 200, 3], "uint8", _iadd_int16)),
    ("bool_iadd_int", lambda m: _in_place(m, [True, False, True], "bool", _iadd_int)),
    ("bool_ipow_true", lambda m: _in_place(m, [True, False], "bool",
                                           lambda m, x: x.__ipow__(True))),
    # bool inputs torch has no kernel for
    ("abs_bool", lambda m: m.abs(_t(m, [True], "bool"))),
    ("floor_bool", lambda m: _t(m, [True], "bool").floor()),
    ("ceil_bool", lambda m: _t(m, [True], "bool").ceil()),
    ("round_bool", lambda m: _t(m, [True], "bool").round()),
    ("trunc_bool", lambda m: _t(m, [True], "bool").trunc()),
    ("relu_bool", lambda m: m.relu(_t(m, [True], "bool"))),
    ("argmax_bool", lambda m: _t(m, [True, False], "bool").argmax()),
    ("argmin_bool", lambda m: _t(m, [True, False], "bool").argmin(0)),
    ("sign_bool_is_fine", lambda m: _t(m, [True, False], "bool").sign()),
    ("matmul_bool_1d", lambda m: _t(m, [True], "bool") @ _t(m, [True], "bool")),
    ("matmul_bool_mv", lambda m: m.ones(2, 3, dtype=m.bool) @ m.ones(3, dtype=m.bool)),
    ("matmul_bool_mm", lambda m: m.ones(3, dtype=m.bool) @ m.ones(3, 2, dtype=m.bool)),
    ("matmul_bool_bmm", lambda m: m.ones(2, 3, dtype=m.bool) @ m.ones(4, 3, 2, dtype=m.bool)),
    ("matmul_bool_empty", lambda m: m.ones(3, 0, dtype=m.bool) @ m.ones(0, 2, dtype=m.bool)),
    ("matmul_bool_empty_rows", lambda m: m.ones(0, 3, dtype=m.bool) @ m.ones(2, 3, 2,
                                                                          dtype=m.bool)),
    ("dot_bool_empty", lambda m: m.ones(0, dtype=m.bool) @ m.ones(0, dtype=m.bool)),
    # integer and bool inputs of floating-only kernels
    ("gelu_int", lambda m: m.nn.functional.gelu(_t(m, [1, 2], "int32"))),
    ("silu_bool", lambda m: m.nn.functional.silu(_t(m, [True], "bool"))),
    ("elu_uint8", lambda m: m.nn.functional.elu(_t(m, [1], "uint8"))),
    ("softplus_int", lambda m: m.nn.functional.softplus(m.tensor([1]))),
    ("leaky_relu_int", lambda m: m.nn.functional.leaky_relu(_t(m, [1], "int16"))),
    ("logsigmoid_int", lambda m: m.nn.functional.logsigmoid(m.tensor([1]))),
    ("var_int", lambda m: m.tensor([1, 2]).var()),
    ("std_bool_dim", lambda m: m.tensor([True, False]).std(0)),
    ("var_mean_int", lambda m: m.var_mean(m.tensor([1, 2]))),
    ("std_mean_uint8", lambda m: m.std_mean(_t(m, [1, 2], "uint8"))),
    # einsum: mixed dtypes meet in torch's mul (its promotion) unless bmm contracts them
    ("einsum_int32_float32_broadcast", lambda m: m.einsum("i,i->", _t(m, [2], "int32"),
                                                          m.ones(3))),
    ("einsum_int32_float32_contracted", lambda m: m.einsum("i,i->", _t(m, [2, 1], "int32"),
                                                           m.ones(2))),
    ("einsum_uint8_0d_int32", lambda m: m.einsum("i,->i", _t(m, [2, 3], "uint8"),
                                                 _t(m, 2, "int32"))),
    ("einsum_int32_size1_both", lambda m: m.einsum("ij,jk->ik", _t(m, [[1], [2]], "int32"),
                                                   _t(m, [[1, 2, 3]], "int32"))),
    ("einsum_bool_sum_first", lambda m: m.einsum("i,i->", _t(m, [True, True], "bool"),
                                                 _t(m, [True], "bool"))),
    ("einsum_bool_bmm_first", lambda m: m.einsum("i,i->", _t(m, [True, True], "bool"),
                                                 m.ones(2))),
    # where's Python-int operand must fit an integer result (it is not wrapped there)
    ("where_uint8_256", lambda m: m.where(m.tensor([True]), _t(m, [1], "uint8"), 256)),
    ("where_uint8_minus_1", lambda m: m.where(m.tensor([False]), _t(m, [1], "uint8"), -1)),
    ("where_int16_70000", lambda m: m.where(m.tensor([True]), 70000, _t(m, [1], "int16"))),
    ("where_uint8_float", lambda m: m.where(m.tensor([False]), _t(m, [1], "uint8"), 300.5)),
]


@_cases(CASES)
def test_operators_across_dtypes_match_torch(program):
    assert_same_as_torch(program)


GRADIENTS = [
    # relu's backward selects (torch's threshold_backward): NaN/inf upstream where out <= 0 is 0
    ("relu_nan_gradient_masked", with_grads(lambda m, x: m.relu(x), [-1.0, 0.0, 2.0, math.nan],
                                            seed=[math.nan, math.inf, 1.0, 2.0])),
    # pow's exponent gradient at a zero base: a complex exponent counts as >= 0 only when real
    ("complex_pow_zero_base", with_grads(lambda m, x, y: x ** y, [0j, 0j, 0j, 1 + 1j],
                                         [2 + 0j, 1j, -1j, 2 + 0j], dtype="complex128")),
]


@_cases(GRADIENTS)
def test_gradients_across_dtypes_match_torch(program):
    assert_same_as_torch(program, atol=1e-12)  # complex powers round differently


def _floor_divide_backward(m, in_place):
    x = m.tensor([1.5, -2.0], requires_grad=True)
    y = x.clone().floor_divide_(2) if in_place else x // 2
    assert y.requires_grad and type(y.grad_fn).__name__ == "NotImplemented"
    y.sum().backward()


def test_floor_divide_records_a_node_whose_backward_raises():
    assert_same_as_torch(lambda m: _floor_divide_backward(m, in_place=False))


def test_in_place_floor_divide_backward_raises_too():
    """torch names the in-place overload: aten::floor_divide_."""
    assert_same_as_torch(lambda m: _floor_divide_backward(m, in_place=True))


def _complex_grads_meeting_inf(m):
    x = m.tensor([-0.25 + 0.25j, 0.75 - 0.5j], dtype=m.complex128, requires_grad=True)
    y = x / False  # made first, so its infinite gradient reaches x last (torch's order)
    infinite = (y * m.tensor([0.5 + 0.5j, -0.1 + 0.2j])).sum().real
    finite = (x * m.tensor([0.2 - 0.1j, 0.3 + 0.4j])).sum().real
    return m.autograd.grad(finite + infinite, x)[0]


def test_complex_gradients_sum_as_torch_does():
    """torch sums gradients as a + 1 * b with a complex 1: an infinite b gives NaN + NaN j."""
    assert_same_as_torch(_complex_grads_meeting_inf)


def _prod_0d_gradient(m):
    x = m.tensor(0.3 - 0.7j, dtype=m.complex64, requires_grad=True)
    g, = m.autograd.grad(x.prod(), x, m.tensor(1 + 1j), create_graph=True)
    return g, m.tensor(g.requires_grad)


def test_prod_of_a_0d_tensor_passes_the_gradient_through():
    """torch's prod_backward returns grad for a 0-d input: exact, and no graph through x."""
    assert_same_as_torch(_prod_0d_gradient, rtol=0.0)
