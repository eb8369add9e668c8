"""torch.linalg breadth against torch: errors and their messages, singular and non-finite input,
empty batches, the outputs op_db leaves out (permutations, pivots, info, ranks), and the
values LAPACK leaves where a factorization fails. Gradients: tests/op_db.py's rows."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(15)


def _outputs(out) -> list:
    return [t for o in out for t in _outputs(o)] if isinstance(out, (tuple, list)) else [out]


def _values(t) -> np.ndarray:
    if isinstance(t, gradkit.Tensor):
        return t.detach().numpy()
    return t.detach().resolve_conj().numpy()


def _run(program, m):
    try:
        return program(m), None
    except Exception as error:  # noqa: BLE001 - the test compares whatever each raises
        return None, error


def assert_same(program, single_atol: float = 1e-10) -> None:
    """``program(m)`` gives the same values, shapes and dtypes, or the same error, with m
    gradkit and m torch (``single_atol``: the absolute tolerance of float32/complex64 values,
    for sums that cancel)."""
    ours, our_error = _run(program, gradkit)
    theirs, their_error = _run(program, torch)
    if their_error is not None or our_error is not None:
        assert our_error is not None and their_error is not None, (our_error, their_error)
        assert type(our_error).__name__.lstrip("_") == type(their_error).__name__.lstrip("_")
        assert str(our_error) == str(their_error)
        return
    got, expected = _outputs(ours), _outputs(theirs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert tuple(g.shape) == tuple(e.shape)
        assert str(g.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
        single = str(e.dtype).endswith(("float32", "complex64"))  # other rounding, same result
        np.testing.assert_allclose(_values(g), _values(e), rtol=1e-5 if single else 1e-7,
                                   atol=single_atol if single else 1e-10)


def _t(m, array, **options):
    return m.tensor(np.asarray(array), **options)


SQUARE = _rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
SINGULAR = np.array([[[2.0, 1.0, 0.5], [0.3, 1.0, 2.0], [1.0, 0.1, 0.2]], np.zeros((3, 3))])
NOT_PD = np.array([[[4.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]])
RANK_TWO = np.outer([1.0, 2.0, 3.0], [1.0, 0.0, 1.0]) + np.outer([0.0, 1.0, 1.0], [2.0, 1.0, 0.0])
NAN = np.array([[1.0, math.nan], [0.5, 2.0]])
INF = np.array([[1.0, math.inf], [0.5, 2.0]])
TALL = _rng.standard_normal((2, 4, 3))
WIDE = _rng.standard_normal((2, 2, 5))

ERRORS = {
    "solve_triangular_vector_b": lambda m: m.linalg.solve_triangular(
        _t(m, SQUARE[0]), _t(m, [1.0, 2.0, 3.0]), upper=True),
    "solve_triangular_1d_a": lambda m: m.linalg.solve_triangular(
        _t(m, [1.0, 2.0]), _t(m, np.ones((2, 2))), upper=True),
    "solve_triangular_not_square": lambda m: m.linalg.solve_triangular(
        _t(m, np.ones((3, 2))), _t(m, np.ones((3, 2))), upper=True),
    "solve_triangular_shapes": lambda m: m.linalg.solve_triangular(
        _t(m, SQUARE[0]), _t(m, np.ones((4, 2))), upper=True),
    "solve_triangular_shapes_right": lambda m: m.linalg.solve_triangular(
        _t(m, SQUARE[0]), _t(m, np.ones((2, 4))), upper=True, left=False),
    "solve_triangular_int": lambda m: m.linalg.solve_triangular(
        _t(m, np.eye(2, dtype=np.int64)), _t(m, np.ones((2, 1), np.int64)), upper=True),
    "lu_factor_1d": lambda m: m.linalg.lu_factor(_t(m, [1.0, 2.0])),
    "lu_factor_int": lambda m: m.linalg.lu_factor(_t(m, np.eye(2, dtype=np.int64))),
    "lu_factor_singular": lambda m: m.linalg.lu_factor(_t(m, SINGULAR)),
    "lu_factor_ex_check": lambda m: m.linalg.lu_factor_ex(_t(m, SINGULAR), check_errors=True),
    "lu_factor_no_pivot": lambda m: m.linalg.lu_factor(_t(m, SQUARE), pivot=False),
    "lu_1d": lambda m: m.linalg.lu(_t(m, [1.0, 2.0])),
    "lu_solve_1d_b": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(_t(m, SQUARE)),
                                                 _t(m, [1.0, 2.0, 3.0])),
    "lu_solve_shapes": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(_t(m, SQUARE)),
                                                   _t(m, np.ones((4, 1)))),
    "lu_solve_dtype": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(_t(m, SQUARE)),
                                                  _t(m, np.ones((3, 1), np.float32))),
    "lu_solve_pivots_dtype": lambda m: m.linalg.lu_solve(
        m.linalg.lu_factor(_t(m, SQUARE))[0], m.linalg.lu_factor(_t(m, SQUARE))[1].long(),
        _t(m, np.ones((3, 1)))),
    "lu_solve_pivots_shape": lambda m: m.linalg.lu_solve(
        m.linalg.lu_factor(_t(m, SQUARE))[0], m.linalg.lu_factor(_t(m, SQUARE[0]))[1],
        _t(m, np.ones((3, 1)))),
    "lu_unpack_pivots_dtype": lambda m: m.lu_unpack(
        m.linalg.lu_factor(_t(m, SQUARE))[0], m.linalg.lu_factor(_t(m, SQUARE))[1].long()),
    "lu_unpack_1d": lambda m: m.lu_unpack(_t(m, [1.0]), _t(m, np.ones(1, np.int32))),
    "eig_not_square": lambda m: m.linalg.eig(_t(m, np.ones((3, 2)))),
    "eig_1d": lambda m: m.linalg.eig(_t(m, [1.0, 2.0])),
    "eig_long": lambda m: m.linalg.eig(_t(m, np.eye(2, dtype=np.int64))),
    "eig_nan": lambda m: m.linalg.eig(_t(m, NAN)),
    "pinv_1d": lambda m: m.linalg.pinv(_t(m, [1.0, 2.0])),
    "pinv_long": lambda m: m.linalg.pinv(_t(m, np.eye(2, dtype=np.int64))),
    "pinv_nan": lambda m: m.linalg.pinv(_t(m, NAN)),
    "lstsq_rows": lambda m: m.linalg.lstsq(_t(m, np.ones((3, 2))), _t(m, np.ones((4, 1)))),
    "lstsq_driver": lambda m: m.linalg.lstsq(_t(m, np.ones((3, 2))), _t(m, np.ones((3, 1))),
                                             driver="qr"),
    "lstsq_1d": lambda m: m.linalg.lstsq(_t(m, np.ones(3)), _t(m, np.ones((3, 1)))),
    "lstsq_dims": lambda m: m.linalg.lstsq(_t(m, np.ones((3, 2))), _t(m, np.ones((2, 2, 3, 1)))),
    "lstsq_dtype": lambda m: m.linalg.lstsq(_t(m, np.ones((3, 2))),
                                            _t(m, np.ones((3, 1), np.float32))),
    "matrix_exp_1d": lambda m: m.linalg.matrix_exp(_t(m, [1.0])),
    "matrix_exp_not_square": lambda m: m.linalg.matrix_exp(_t(m, np.ones((3, 2)))),
    "matrix_exp_long": lambda m: m.linalg.matrix_exp(_t(m, np.eye(2, dtype=np.int64))),
    "matrix_power_not_square": lambda m: m.linalg.matrix_power(_t(m, np.ones((3, 2))), 2),
    "matrix_power_1d": lambda m: m.linalg.matrix_power(_t(m, [1.0]), 2),
    "matrix_power_float_n": lambda m: m.linalg.matrix_power(_t(m, SQUARE), 2.0),
    "matrix_power_singular_inverse": lambda m: m.linalg.matrix_power(_t(m, SINGULAR), -1),
    "matrix_power_long_inverse": lambda m: m.linalg.matrix_power(
        _t(m, np.eye(2, dtype=np.int64)), -1),
    "cond_1d": lambda m: m.linalg.cond(_t(m, [1.0, 2.0])),
    "cond_order": lambda m: m.linalg.cond(_t(m, SQUARE), 3),
    "cond_order_text": lambda m: m.linalg.cond(_t(m, SQUARE), "foo"),
    "cond_not_square": lambda m: m.linalg.cond(_t(m, np.ones((3, 2))), 1),
    "cond_not_square_inf": lambda m: m.linalg.cond(_t(m, np.ones((3, 2))), -math.inf),
    "matrix_rank_1d": lambda m: m.linalg.matrix_rank(_t(m, [1.0, 2.0])),
    "matrix_rank_long": lambda m: m.linalg.matrix_rank(_t(m, np.eye(2, dtype=np.int64))),
    "multi_dot_one": lambda m: m.linalg.multi_dot([_t(m, [1.0])]),
    "multi_dot_first_3d": lambda m: m.linalg.multi_dot([_t(m, np.ones((2, 2, 2))),
                                                        _t(m, np.ones((2, 2)))]),
    "multi_dot_last_3d": lambda m: m.linalg.multi_dot([_t(m, np.ones((2, 2))),
                                                       _t(m, np.ones((2, 2, 2)))]),
    "multi_dot_middle_1d": lambda m: m.linalg.multi_dot([_t(m, np.ones((2, 2))), _t(m, [1.0, 2]),
                                                         _t(m, np.ones((2, 2)))]),
    "multi_dot_shapes": lambda m: m.linalg.multi_dot([_t(m, np.ones((3, 2))),
                                                      _t(m, np.ones((3, 2)))]),
    "multi_dot_dtypes": lambda m: m.linalg.multi_dot([_t(m, np.ones((2, 2), np.float32)),
                                                      _t(m, np.ones((2, 2)))]),
    "vecdot_dtypes": lambda m: m.linalg.vecdot(_t(m, np.ones(2, np.float32)), _t(m, np.ones(2))),
    "vecdot_long": lambda m: m.linalg.vecdot(_t(m, np.ones(2, np.int64)),
                                             _t(m, np.ones(2, np.int64))),
    "tensorinv_ind": lambda m: m.linalg.tensorinv(_t(m, np.ones((4, 2, 2))), ind=0),
    "tensorinv_shape": lambda m: m.linalg.tensorinv(_t(m, np.ones((4, 2, 3))), ind=1),
    "tensorinv_singular": lambda m: m.linalg.tensorinv(_t(m, np.zeros((4, 2, 2))), ind=1),
    "tensorsolve_shape": lambda m: m.linalg.tensorsolve(_t(m, np.ones((2, 3, 5))),
                                                        _t(m, np.ones((2, 3)))),
    "vander_n": lambda m: m.linalg.vander(_t(m, [1.0, 2.0]), N=1),
    "vander_bool": lambda m: m.linalg.vander(_t(m, [True, False])),
    "householder_1d": lambda m: m.linalg.householder_product(_t(m, [1.0]), _t(m, [1.0])),
    "householder_wide": lambda m: m.linalg.householder_product(_t(m, np.ones((2, 3))),
                                                               _t(m, [1.0])),
    "householder_tau_long": lambda m: m.linalg.householder_product(_t(m, np.ones((3, 2))),
                                                                   _t(m, np.ones(3))),
    "householder_tau_ndim": lambda m: m.linalg.householder_product(_t(m, np.ones((3, 2))),
                                                                   _t(m, np.ones((1, 2)))),
    "householder_tau_batch": lambda m: m.linalg.householder_product(
        _t(m, np.ones((2, 3, 2))), _t(m, np.ones((3, 2)))),
    "householder_tau_0d": lambda m: m.linalg.householder_product(_t(m, np.ones((3, 2))),
                                                                 _t(m, 1.0)),
    "householder_dtype": lambda m: m.linalg.householder_product(
        _t(m, np.ones((3, 2))), _t(m, np.ones(2, np.float32))),
    "householder_long": lambda m: m.linalg.householder_product(
        _t(m, np.ones((3, 2), np.int64)), _t(m, np.ones(2, np.int64))),
    "cond_nan": lambda m: m.linalg.cond(_t(m, NAN)),
    "matrix_rank_nan": lambda m: m.linalg.matrix_rank(_t(m, NAN)),
    "inv_ex_check": lambda m: m.linalg.inv_ex(_t(m, SINGULAR), check_errors=True),
    "cholesky_ex_check": lambda m: m.linalg.cholesky_ex(_t(m, NOT_PD), check_errors=True),
    "solve_ex_check": lambda m: m.linalg.solve_ex(_t(m, SINGULAR), _t(m, np.ones((2, 3))),
                                                  check_errors=True),
    "solve_right_vector": lambda m: m.linalg.solve(_t(m, SQUARE), _t(m, np.ones((2, 3))),
                                                   left=False),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same(ERRORS[name])


VALUES = {
    # LAPACK's leftovers where a factorization fails, and its info
    "lu_factor_ex_singular": lambda m: m.linalg.lu_factor_ex(_t(m, SINGULAR)),
    "inv_ex_singular": lambda m: m.linalg.inv_ex(_t(m, SINGULAR)),
    "inv_ex_rank_one": lambda m: m.linalg.inv_ex(_t(m, [[1.0, 2.0], [2.0, 4.0]])),
    "cholesky_ex_not_pd": lambda m: m.linalg.cholesky_ex(_t(m, NOT_PD)),
    "cholesky_ex_not_pd_upper": lambda m: m.linalg.cholesky_ex(_t(m, NOT_PD), upper=True),
    "solve_ex_singular": lambda m: m.linalg.solve_ex(_t(m, SINGULAR), _t(m, np.ones((2, 3)))),
    "solve_ex_singular_matrix": lambda m: m.linalg.solve_ex(_t(m, SINGULAR),
                                                            _t(m, np.ones((3, 2)))),
    "solve_triangular_zero_pivot": lambda m: m.linalg.solve_triangular(
        _t(m, np.zeros((2, 2))), _t(m, [[1.0, 0.0], [0.0, 0.0]]), upper=True),
    "lu_solve_zero_pivot": lambda m: m.linalg.lu_solve(
        *m.linalg.lu_factor_ex(_t(m, SINGULAR))[:2], _t(m, np.ones((3, 1)))),
    # the outputs op_db leaves out: permutations, pivots, ranks, residuals
    "lu_permutations": lambda m: m.linalg.lu(_t(m, TALL)),
    "lu_unpack_no_data": lambda m: m.lu_unpack(*m.linalg.lu_factor(_t(m, SQUARE)),
                                               unpack_data=False),
    "lu_unpack_no_pivots": lambda m: m.lu_unpack(*m.linalg.lu_factor(_t(m, SQUARE)),
                                                 unpack_pivots=False),
    "lu_factor_wide": lambda m: m.linalg.lu_factor(_t(m, WIDE)),
    "matrix_rank": lambda m: m.linalg.matrix_rank(_t(m, RANK_TWO)),
    "matrix_rank_hermitian": lambda m: m.linalg.matrix_rank(_t(m, RANK_TWO @ RANK_TWO.T),
                                                            hermitian=True),
    "matrix_rank_atol": lambda m: m.linalg.matrix_rank(_t(m, SQUARE), atol=3.0),
    "matrix_rank_atol_rtol": lambda m: m.linalg.matrix_rank(_t(m, SQUARE), atol=0.5, rtol=0.9),
    "matrix_rank_tol": lambda m: m.linalg.matrix_rank(_t(m, SQUARE), 3.0),
    "matrix_rank_empty": lambda m: m.linalg.matrix_rank(_t(m, np.zeros((2, 0, 3)))),
    "pinv_rank_two": lambda m: m.linalg.pinv(_t(m, RANK_TWO)),
    "pinv_rcond": lambda m: m.linalg.pinv(_t(m, SQUARE), 0.5),
    "pinv_inf": lambda m: m.linalg.pinv(_t(m, INF)),
    "pinv_1x1_inf": lambda m: m.linalg.pinv(_t(m, [[math.inf]])),
    "pinv_1x1_hermitian_nan": lambda m: m.linalg.pinv(_t(m, [[math.nan]]), hermitian=True),
    "pinv_hermitian_nan": lambda m: m.linalg.pinv(_t(m, NAN), hermitian=True),
    "pinv_1x1_small": lambda m: m.linalg.pinv(_t(m, [[1e-30], [1.0]])[:1], atol=1e-20),
    "pinv_empty": lambda m: m.linalg.pinv(_t(m, np.zeros((2, 0, 3)))),
    "cond_singular": lambda m: m.linalg.cond(_t(m, SINGULAR), 1),
    "cond_singular_fro": lambda m: m.linalg.cond(_t(m, SINGULAR), "fro"),
    "cond_empty": lambda m: m.linalg.cond(_t(m, np.zeros((2, 0, 0))), 1),
    "cond_nan_inverse_norm": lambda m: m.linalg.cond(_t(m, NAN), 1),
    "matrix_rank_nan_upper_hermitian": lambda m: m.linalg.matrix_rank(_t(m, NAN),
                                                                      hermitian=True),
    "lu_factor_nan": lambda m: m.linalg.lu_factor(_t(m, NAN)),
    "matrix_exp_nan": lambda m: m.linalg.matrix_exp(_t(m, NAN)),
    "matrix_exp_large": lambda m: m.linalg.matrix_exp(_t(m, 20 * SQUARE)),
    "matrix_exp_float32": lambda m: m.linalg.matrix_exp(_t(m, SQUARE, dtype=m.float32)),
    "matrix_power_zero": lambda m: m.linalg.matrix_power(_t(m, SQUARE), 0),
    "matrix_power_long": lambda m: m.linalg.matrix_power(_t(m, np.arange(4).reshape(2, 2)), 5),
    "vander_long": lambda m: m.linalg.vander(_t(m, [1, 2, 3]), N=4),
    "eigvals_inf": lambda m: m.linalg.eigvals(_t(m, [[1.0, math.inf], [0.0, 1.0]])),
    **{f"lstsq_{driver}": lambda m, driver=driver: m.linalg.lstsq(
        _t(m, RANK_TWO[:, :2]), _t(m, np.ones((3, 2))), driver=driver)
       for driver in ("gels", "gelsy", "gelsd", "gelss")},
    "lstsq_rank_deficient_gelsd": lambda m: m.linalg.lstsq(
        _t(m, np.ones((3, 2))), _t(m, [1.0, 2.0, 3.0]), driver="gelsd"),
    # empty batches and empty matrices
    **{f"{name}_empty": lambda m, call=call: call(m, _t(m, np.zeros((0, 3, 3))))
       for name, call in {
           "lu_factor": lambda m, a: m.linalg.lu_factor(a),
           "lu": lambda m, a: m.linalg.lu(a),
           "eig": lambda m, a: m.linalg.eig(a),
           "eigvals": lambda m, a: m.linalg.eigvals(a),
           "matrix_exp": lambda m, a: m.linalg.matrix_exp(a),
           "inv_ex": lambda m, a: m.linalg.inv_ex(a),
           "cholesky_ex": lambda m, a: m.linalg.cholesky_ex(a),
           "solve_triangular": lambda m, a: m.linalg.solve_triangular(a, a, upper=False),
           "lu_solve": lambda m, a: m.linalg.lu_solve(*m.linalg.lu_factor(a), a),
           "pinv": lambda m, a: m.linalg.pinv(a),
           "matrix_rank": lambda m, a: m.linalg.matrix_rank(a),
           "cond": lambda m, a: m.linalg.cond(a),
       }.items()},
    "householder_empty": lambda m: m.linalg.householder_product(_t(m, np.zeros((0, 4, 3))),
                                                                 _t(m, np.zeros((0, 2)))),
    "householder_no_columns": lambda m: m.linalg.householder_product(_t(m, np.zeros((4, 0))),
                                                                     _t(m, np.zeros(0))),
    "cholesky_ex_0x0": lambda m: m.linalg.cholesky_ex(_t(m, np.zeros((0, 0)))),
    "solve_ex_0x0": lambda m: m.linalg.solve_ex(_t(m, np.zeros((0, 0))), _t(m, np.zeros(0))),
    "matrix_exp_0x0": lambda m: m.linalg.matrix_exp(_t(m, np.zeros((2, 0, 0)))),
    "lu_long_0x0": lambda m: m.linalg.lu(_t(m, np.zeros((0, 0), np.int64))),
    "lu_solve_complex_inf_pivot": lambda m: m.linalg.lu_solve(
        *m.linalg.lu_factor(_t(m, [[complex(1.0, math.inf)]])), _t(m, [[1.0 + 0j]])),
    "eig_empty_matrices": lambda m: m.linalg.eig(_t(m, np.zeros((2, 0, 0)))),
    "lu_empty_matrices": lambda m: m.linalg.lu(_t(m, np.zeros((2, 0, 3)))),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_torch(name):
    assert_same(VALUES[name])


def test_lu_factor_never_hangs_on_nan():
    """getrf is written on arrays: NaN flows through, as LAPACK's does for torch."""
    lu, pivots = gradkit.linalg.lu_factor(gradkit.tensor(NAN))
    assert np.isnan(lu.numpy()).any() and pivots.dtype == gradkit.int32


def test_permutation_outputs_have_no_gradient():
    a = gradkit.tensor(SQUARE, requires_grad=True)
    p, lower, upper = gradkit.linalg.lu(a)
    assert not p.requires_grad and lower.requires_grad and upper.requires_grad
    lu, pivots, info = gradkit.linalg.lu_factor_ex(a)
    assert lu.grad_fn.name() == "LinalgLuFactorExBackward0"
    assert not pivots.requires_grad and not info.requires_grad


def test_node_names_are_torchs():
    a = gradkit.tensor(SQUARE, requires_grad=True)
    b = gradkit.tensor(np.ones((2, 3, 2)), requires_grad=True)
    names = {
        "LinalgSolveTriangularBackward0": gradkit.linalg.solve_triangular(a, b, upper=True),
        "LinalgEigBackward0": gradkit.linalg.eig(a)[0],
        "LinalgPinvBackward0": gradkit.linalg.pinv(a),
        "LinalgMatrixExpBackward0": gradkit.linalg.matrix_exp(a),
        "LinalgLstsqBackward0": gradkit.linalg.lstsq(a, b)[0],
        "LinalgLuSolveBackward0": gradkit.linalg.lu_solve(*gradkit.linalg.lu_factor(a), b),
        "LuUnpackBackward0": gradkit.lu_unpack(*gradkit.linalg.lu_factor(a))[1],
        "LinalgLuBackward0": gradkit.linalg.lu(a)[1],
        "LinalgHouseholderProductBackward0": gradkit.linalg.householder_product(a, b[..., 0]),
    }
    assert {name: out.grad_fn.name() for name, out in names.items()} == \
        {name: name for name in names}


def test_eig_refuses_a_loss_that_depends_on_the_phase():
    torch_a = torch.tensor(SQUARE[0], requires_grad=True)
    with pytest.raises(RuntimeError) as theirs:
        torch.linalg.eig(torch_a)[1].sum().abs().backward()
    a = gradkit.tensor(SQUARE[0], requires_grad=True)
    with pytest.raises(RuntimeError) as ours:
        gradkit.linalg.eig(a)[1].sum().abs().backward()
    assert str(ours.value) == str(theirs.value)


def test_ex_gradients_reach_the_matrices_that_succeed():
    """The matrices that succeed get the regular gradient; a failed one (the zero matrix,
    whose inverse LAPACK leaves infinite) gets 0 * inf = NaN from the regular formula, as
    torch's (h-scans: gradkit gave it 0)."""
    a = gradkit.tensor(SINGULAR, requires_grad=True)
    inverse, info = gradkit.linalg.inv_ex(a)
    assert info.tolist() == [0, 1]
    inverse[0].sum().backward()
    regular = gradkit.tensor(SINGULAR[0], requires_grad=True)
    gradkit.linalg.inv(regular).sum().backward()
    np.testing.assert_allclose(a.grad.numpy()[0], regular.grad.numpy())
    assert np.isnan(a.grad.numpy()[1]).all()
