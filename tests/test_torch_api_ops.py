"""torch's spellings and constructors, and the errors of the ops in ops/slicing.py, sorting.py,
triangular.py, polar.py: the same program under torch and gradkit gives the same result.

Gradients of these ops are checked through their rows in tests/op_db.py.
"""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

VALUES = np.arange(12.0).reshape(3, 4) * 0.37 - 1.5


def _run(lib, program):
    """``program(lib, x)`` on x = VALUES as a float32 tensor of that library."""
    return program(lib, lib.tensor(VALUES, dtype=lib.float32))


def _same(got, expected):
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _same(g, e)
        return
    if not isinstance(expected, torch.Tensor):
        assert got == expected
        return
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-5,
                               atol=1e-6)


NUMPY_KEYWORD_PROGRAMS = {
    "sum_axis_keepdims": lambda lib, x: x.sum(axis=1, keepdims=True),
    "sum_axis_tuple": lambda lib, x: lib.sum(x, axis=(0, 1)),
    "sum_dtype": lambda lib, x: x.sum(dtype=lib.float64),
    "sum_axis_dtype": lambda lib, x: lib.sum(x, axis=1, dtype=lib.float64),
    "mean_axis_dtype": lambda lib, x: x.mean(axis=0, dtype=lib.float64),
    "cumsum_axis_dtype": lambda lib, x: x.cumsum(axis=0, dtype=lib.float64),
    "softmax_dtype": lambda lib, x: lib.softmax(x, dim=1, dtype=lib.float64),
    "std_axis_keepdims": lambda lib, x: x.std(axis=0, keepdims=True),
    "var_axis": lambda lib, x: lib.var(x, axis=1),
    "amax_axis": lambda lib, x: x.amax(axis=0),
    "amin_axis_keepdims": lambda lib, x: lib.amin(x, axis=1, keepdims=True),
    "prod_axis_keepdims": lambda lib, x: x.prod(axis=0, keepdims=True),
    "argmax_axis_keepdims": lambda lib, x: lib.argmax(x, axis=1, keepdims=True),
    "argmin_axis": lambda lib, x: x.argmin(axis=0),
    "logsumexp_axis": lambda lib, x: lib.logsumexp(x, axis=1),
    "max_axis": lambda lib, x: tuple(lib.max(x, axis=0)),
    "min_method_axis_keepdims": lambda lib, x: tuple(x.min(axis=1, keepdims=True)),
    "var_mean_axis": lambda lib, x: lib.var_mean(x, axis=1),
    "std_mean_axis": lambda lib, x: lib.std_mean(x, axis=0, keepdims=True),
    "unbind_axis": lambda lib, x: x.unbind(axis=1),
    "sort_axis": lambda lib, x: tuple(x.sort(axis=0, descending=True)),
    "all_axis": lambda lib, x: lib.all(x > 0, axis=1),
}


@pytest.mark.parametrize("name", NUMPY_KEYWORD_PROGRAMS)
def test_numpy_keywords_as_torch(name):
    program = NUMPY_KEYWORD_PROGRAMS[name]
    _same(_run(gradkit, program), _run(torch, program))


def test_numpy_keyword_and_torch_keyword_together_is_refused_as_in_torch():
    x = gradkit.ones(2, 3)
    with pytest.raises(TypeError, match="sum\\(\\) got an unexpected keyword argument 'axis'"):
        x.sum(axis=1, dim=1)
    with pytest.raises(TypeError, match="max\\(\\) got an unexpected keyword argument 'axis'"):
        gradkit.max(x, axis=1, dim=1)


def test_sum_with_dtype_keeps_its_gradient_in_the_input_dtype():
    x = gradkit.ones(2, 3, requires_grad=True)
    x.sum(dtype=gradkit.float64).backward()
    assert x.grad.dtype is gradkit.float32
    assert x.grad.tolist() == [[1.0] * 3] * 2


CONSTRUCTOR_PROGRAMS = {
    "list_of_ints": lambda lib: lib.Tensor([1, 2]),
    "list_of_bools": lambda lib: lib.Tensor([True, False]),
    "nested_list": lambda lib: lib.Tensor([[1, 2], [3, 4]]),
    "tuple_is_data": lambda lib: lib.Tensor((2, 3)),
    "numpy_int_array": lambda lib: lib.Tensor(np.array([1, 2])),
    "list_of_0d_tensors": lambda lib: lib.Tensor([lib.tensor(1.0), lib.tensor(2.0)]),
    "empty": lambda lib: lib.Tensor(),
    "empty_list": lambda lib: lib.Tensor([]),
    "size_shape": lambda lib: lib.Tensor(2, 3).shape,
    "size_object": lambda lib: lib.Tensor(lib.Size([2, 3])).shape,
    "int_tensor_is_aliased_as_is": lambda lib: lib.Tensor(lib.tensor([1, 2])),
    "FloatTensor": lambda lib: lib.FloatTensor([1, 2]),
    "DoubleTensor_shape": lambda lib: lib.DoubleTensor(2).shape,
    "DoubleTensor_dtype": lambda lib: lib.DoubleTensor(2).dtype is lib.float64,
    "LongTensor_truncates": lambda lib: lib.LongTensor([1.5, 2]),
    "IntTensor": lambda lib: lib.IntTensor([1, 2]),
    "BoolTensor": lambda lib: lib.BoolTensor([1, 0]),
    "HalfTensor": lambda lib: lib.HalfTensor([1, 2]),
    "ByteTensor": lambda lib: lib.ByteTensor([1, 2]),
    "isinstance_same_dtype": lambda lib: isinstance(lib.ones(1), lib.FloatTensor),
    "isinstance_other_dtype": lambda lib: isinstance(lib.ones(1), lib.DoubleTensor),
    "isinstance_long": lambda lib: isinstance(lib.tensor([1]), lib.LongTensor),
    "isinstance_not_a_tensor": lambda lib: isinstance([1.0], lib.FloatTensor),
    "typed_result_is_a_tensor": lambda lib: type(lib.FloatTensor([1])) is lib.Tensor,
    "parameter_keeps_dtype": lambda lib: lib.nn.Parameter(lib.zeros(2, dtype=lib.float64)),
}


@pytest.mark.parametrize("name", CONSTRUCTOR_PROGRAMS)
def test_legacy_constructors_as_torch(name):
    program = CONSTRUCTOR_PROGRAMS[name]
    _same(program(gradkit), program(torch))


@pytest.mark.parametrize("spec, error, message", [
    (int, ValueError, "invalid type: 'int'"), (bool, ValueError, "invalid type: 'bool'"),
    (float, ValueError, "invalid type: 'float'"), (complex, ValueError, "invalid type: 'complex'"),
    (np.float64, ValueError, "invalid type: 'numpy.float64'"),
    (3, TypeError, "dtype must be a type, str, or dtype object"),
    ("cpu-device", TypeError, "dtype must be a type, str, or dtype object"),
])
def test_type_refuses_python_types_as_torch(spec, error, message):
    """``x.type()`` reads a class by its name, a tensor type's only: ``x.type(float)`` is
    refused where ``x.to(float)`` casts (gradkit cast both)."""
    for lib in (torch, gradkit):
        arg = lib.device("cpu") if spec == "cpu-device" else spec
        with pytest.raises(error, match=f"^{message}$"):
            lib.zeros(2).type(arg)
        with pytest.raises(error, match=f"^{message}$"):
            lib.zeros(2).type(dtype=arg)
        assert lib.zeros(2).to(float).dtype is lib.float64
        assert lib.zeros(2).to(bool).dtype is lib.bool
        assert lib.zeros(2).to(int).dtype is lib.int64


def test_tensor_follows_the_default_dtype():
    gradkit.set_default_dtype(gradkit.float64)
    try:
        assert gradkit.Tensor([1]).dtype is gradkit.float64
    finally:
        gradkit.set_default_dtype(gradkit.float32)


def test_tensor_of_a_tensor_is_an_alias_with_its_history():
    x = gradkit.arange(3.0).requires_grad_()
    y = gradkit.Tensor(x)
    assert y.grad_fn.name() == "AliasBackward0" and y.requires_grad and not y.is_leaf
    with gradkit.no_grad():
        x.add_(1)
    assert y._version == 1 and y.tolist() == [1.0, 2.0, 3.0]
    (y * y).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


@pytest.mark.parametrize("args,kwargs,error,message", [
    ((2, 3.0), {}, TypeError,
     "new\\(\\): argument 'size' failed to unpack the object at pos 2 with error \"type must be "
     "tuple of ints,but got float\""),
    (("a",), {}, TypeError, "new\\(\\): invalid data type 'str'"),
    ((3.5,), {}, TypeError, "new\\(\\): data must be a sequence \\(got float\\)"),
    ((-1,), {}, RuntimeError, "Trying to create tensor with negative dimension -1: \\[-1\\]"),
    (([1, 2],), {"requires_grad": True}, TypeError,
     "new\\(\\) received an invalid combination of arguments - got \\(list, requires_grad=bool\\)"),
    (([1, 2],), {"dtype": gradkit.float64}, TypeError,
     "new\\(\\) received an invalid combination of arguments - got \\(list, dtype=dtype\\)"),
])
def test_legacy_constructor_errors(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        gradkit.Tensor(*args, **kwargs)
    with pytest.raises(error):  # torch raises the same type
        torch.Tensor(*[torch.float64 if a is gradkit.float64 else a for a in args],
                     **{k: torch.float64 if v is gradkit.float64 else v
                        for k, v in kwargs.items()})


def test_typed_constructor_refuses_a_tensor_of_another_dtype():
    with pytest.raises(TypeError, match="expected gradkit.float32 tensor \\(got gradkit.int64"):
        gradkit.FloatTensor(gradkit.tensor([1, 2]))
    with pytest.raises(TypeError, match="expected TensorOptions\\(dtype=float"):
        torch.FloatTensor(torch.tensor([1, 2]))


OP_PROGRAMS = {
    "diagonal_write_through": lambda lib, x: (x.diagonal().fill_(7.0), x)[1],
    "diagonal_offset_write_through": lambda lib, x: (x.diagonal(-1).mul_(2.0), x)[1],
    "narrow_negative_start": lambda lib, x: lib.narrow(x, 1, -2, 2),
    "narrow_tensor_start": lambda lib, x: x.narrow(0, lib.tensor(1), 2),
    "narrow_write_through": lambda lib, x: (x.narrow(1, 1, 2).zero_(), x)[1],
    "select_negative_index": lambda lib, x: x.select(1, -1),
    "select_write_through": lambda lib, x: (x.select(0, 1).fill_(3.0), x)[1],
    "roll_flattened": lambda lib, x: lib.roll(x, 5),
    "roll_negative_dim": lambda lib, x: x.roll(-1, -1),
    "sort_ties_stable": lambda lib, x: tuple(lib.sort(lib.tensor([2.0, 1.0, 2.0, 1.0]))),
    "sort_descending_ties": lambda lib, x: tuple(
        lib.sort(lib.tensor([2.0, 1.0, 2.0, 1.0]), descending=True, stable=True)),
    "sort_nan_last": lambda lib, x: tuple(lib.sort(lib.tensor([2.0, float("nan"), 1.0]))),
    "sort_nan_first_descending": lambda lib, x: tuple(
        lib.sort(lib.tensor([2.0, float("nan"), 1.0]), descending=True)),
    "sort_ints": lambda lib, x: tuple(lib.sort(lib.tensor([3, 1, 2]))),
    "argsort_descending": lambda lib, x: lib.argsort(x, dim=0, descending=True),
    "topk_smallest": lambda lib, x: tuple(x.topk(2, largest=False)),
    "topk_0d": lambda lib, x: tuple(lib.topk(lib.tensor(3.0), 1)),
    "topk_k0": lambda lib, x: tuple(lib.topk(x, 0)),
    "angle_ints": lambda lib, x: lib.angle(lib.tensor([1, -2, 0])),
    "angle_nan_and_negative_zero": lambda lib, x: lib.angle(
        lib.tensor([-1.0, float("nan"), -0.0, 2.0])),
    "angle_complex": lambda lib, x: lib.angle(lib.tensor([1 + 1j, -2j, 0j])),
    "tril_batched": lambda lib, x: lib.tril(x.reshape(2, 2, 3), 1),
    "triu_method": lambda lib, x: x.triu(-1),
    "diag_method": lambda lib, x: x.diag(1),
    "diag_embed_dims": lambda lib, x: lib.diag_embed(x, 1, 0, 2),
    "allclose_broadcast": lambda lib, x: lib.allclose(x, x[:1]),
    "allclose_equal_nan": lambda lib, x: lib.allclose(
        lib.tensor([float("nan")]), lib.tensor([float("nan")]), equal_nan=True),
    "allclose_method": lambda lib, x: x.allclose(x + 1e-7),
}


@pytest.mark.parametrize("name", OP_PROGRAMS)
def test_ops_as_torch(name):
    program = OP_PROGRAMS[name]
    _same(_run(gradkit, program), _run(torch, program))


OP_ERRORS = {
    "tril_1d": (lambda lib, x: lib.tril(x[0]), RuntimeError,
                "tril: input tensor must have at least 2 dimensions"),
    "triu_1d": (lambda lib, x: lib.triu(x[0]), RuntimeError,
                "triu: input tensor must have at least 2 dimensions"),
    "diag_3d": (lambda lib, x: lib.diag(x[None]), RuntimeError,
                "diag\\(\\): Supports 1D or 2D tensors. Got 3D"),
    "diag_0d": (lambda lib, x: lib.diag(x[0, 0]), RuntimeError,
                "diag\\(\\): Supports 1D or 2D tensors. Got 0D"),
    "diagonal_same_dims": (lambda lib, x: lib.diagonal(x, 0, 1, 1), RuntimeError,
                           "diagonal dimensions cannot be identical 1, 1"),
    "diagonal_dim_out_of_range": (lambda lib, x: lib.diagonal(x, 0, 0, 2), IndexError,
                                  "Dimension out of range \\(expected to be in range of "
                                  "\\[-2, 1\\], but got 2\\)"),
    "narrow_too_long": (lambda lib, x: lib.narrow(x, 1, 3, 2), RuntimeError,
                        "start \\(3\\) \\+ length \\(2\\) exceeds dimension size \\(4\\)."),
    "narrow_start_out_of_range": (lambda lib, x: lib.narrow(x, 1, 5, 1), IndexError,
                                  "start out of range \\(expected to be in range of \\[-4, 4\\], "
                                  "but got 5\\)"),
    "narrow_negative_length": (lambda lib, x: lib.narrow(x, 1, 0, -1), RuntimeError,
                               "narrow\\(\\): length must be non-negative."),
    "select_index_out_of_range": (lambda lib, x: lib.select(x, 1, 4), IndexError,
                                  "select\\(\\): index 4 out of range for tensor of size "
                                  "\\[3, 4\\] at dimension 1"),
    "select_negative_out_of_range": (lambda lib, x: lib.select(x, 1, -5), IndexError,
                                     "select\\(\\): index -5 out of range"),
    "select_0d": (lambda lib, x: lib.select(x[0, 0], 0, 0), IndexError,
                  "select\\(\\) cannot be applied to a 0-dim tensor."),
    "roll_misaligned": (lambda lib, x: lib.roll(x, (1, 2), 0), RuntimeError,
                        "shifts and dimensions must align. shifts: 2, dims:1"),
    "roll_dim_out_of_range": (lambda lib, x: lib.roll(x, 1, 2), IndexError,
                              "Dimension out of range"),
    "topk_k_too_large": (lambda lib, x: lib.topk(x, 5), RuntimeError,
                         "selected index k out of range"),
    "topk_negative_k": (lambda lib, x: lib.topk(x, -1), RuntimeError,
                        "selected index k out of range"),
    "sort_dim_out_of_range": (lambda lib, x: lib.sort(x, dim=2), IndexError,
                              "Dimension out of range \\(expected to be in range of \\[-2, 1\\], "
                              "but got 2\\)"),
    "allclose_dtypes": (lambda lib, x: lib.allclose(x, x.double()), RuntimeError,
                        "Float did not match Double"),
    "allclose_shapes": (lambda lib, x: lib.allclose(x, x[:, :2]), RuntimeError,
                        "The size of tensor a \\(4\\) must match the size of tensor b \\(2\\) at "
                        "non-singleton dimension 1"),
    "allclose_number": (lambda lib, x: lib.allclose(x, 1.0), TypeError,
                        "allclose\\(\\): argument 'other' \\(position 2\\) must be Tensor, not "
                        "float"),
}


@pytest.mark.parametrize("build,node", [
    (lambda lib, x: lib.narrow(x, 1, 1, 2), "SliceBackward0"),
    (lambda lib, x: lib.select(x, 1, 2), "SelectBackward0"),
    (lambda lib, x: lib.roll(x, 1), "RollBackward0"),
    (lambda lib, x: lib.tril(x), "TrilBackward0"),
    (lambda lib, x: lib.triu(x), "TriuBackward0"),
    (lambda lib, x: lib.diagonal(x), "DiagonalBackward0"),
    (lambda lib, x: lib.diag(x[0]), "DiagEmbedBackward0"),
    (lambda lib, x: lib.sort(x).values, "SortBackward0"),
    (lambda lib, x: lib.topk(x, 2).values, "TopkBackward0"),
    (lambda lib, x: lib.angle(x), "AngleBackward0"),
])
def test_node_names_as_torch(build, node):
    for lib in (gradkit, torch):
        x = lib.tensor(VALUES, requires_grad=True)
        assert type(build(lib, x).grad_fn).__name__ == node or build(lib, x).grad_fn.name() == node


def test_indices_carry_no_gradient():
    x = gradkit.tensor(VALUES, requires_grad=True)
    values, indices = gradkit.sort(x)
    assert values.requires_grad and not indices.requires_grad and indices.dtype is gradkit.int64
    assert gradkit.argsort(x).grad_fn is None


# -- norms and gradkit.linalg (values and gradients are compared through op_db) -------------

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]

LINALG_ERRORS = {
    "inv_singular": (lambda lib: lib.linalg.inv(lib.tensor(SINGULAR)), RuntimeError,
                     "linalg.inv: The diagonal element 2 is zero, the inversion could not be "
                     "completed because the input matrix is singular."),
    "inv_singular_batch": (lambda lib: lib.linalg.inv(lib.stack([lib.eye(2),
                                                                 lib.tensor(SINGULAR)])),
                           RuntimeError, "linalg.inv: \\(Batch element 1\\): The diagonal element "
                           "2 is zero"),
    "inv_not_square": (lambda lib: lib.linalg.inv(lib.ones(3, 4)), RuntimeError,
                       "linalg.inv: A must be batches of square matrices, but they are 3 by 4 "
                       "matrices"),
    "inv_1d": (lambda lib: lib.linalg.inv(lib.ones(3)), RuntimeError,
               "linalg.inv: The input tensor A must have at least 2 dimensions."),
    "inv_integer": (lambda lib: lib.linalg.inv(lib.ones(2, 2, dtype=lib.int64)), RuntimeError,
                    "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    "det_integer": (lambda lib: lib.linalg.det(lib.ones(2, 2, dtype=lib.int64)), RuntimeError,
                    "linalg.det: Expected a floating point or complex tensor as input. Got Long"),
    "solve_singular": (lambda lib: lib.linalg.solve(lib.tensor(SINGULAR), lib.ones(2)),
                       RuntimeError, "torch.linalg.solve: The solver failed because the input "
                       "matrix is singular."),
    "solve_shapes": (lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(3)), RuntimeError,
                     "linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                     "\\(2x2 and 3x1\\)"),
    "solve_dtypes": (lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.float64)),
                     RuntimeError, "linalg.solve: Expected A and B to have the same dtype, but "
                     "found A of type Float and B of type Double instead"),
    "cholesky_not_pd": (lambda lib: lib.linalg.cholesky(-lib.eye(2)), RuntimeError,
                        "linalg.cholesky: The factorization could not be completed because the "
                        "input is not positive-definite \\(the leading minor of order 1 is not "
                        "positive-definite\\)."),
    "cholesky_not_pd_batch": (
        lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2), lib.tensor([[1.0, 2.0],
                                                                          [2.0, 1.0]])])),
        RuntimeError, "linalg.cholesky: \\(Batch element 1\\): The factorization could not be "
        "completed because the input is not positive-definite \\(the leading minor of order 2"),
    "eigh_1d": (lambda lib: lib.linalg.eigh(lib.ones(3)), RuntimeError,
                "linalg.eigh: The input tensor A must have at least 2 dimensions."),
    "eigh_uplo": (lambda lib: lib.linalg.eigh(lib.eye(2), UPLO="X"), RuntimeError,
                  "Expected UPLO argument to be 'L' or 'U', but got X"),
    "svd_1d": (lambda lib: lib.linalg.svd(lib.ones(3)), RuntimeError,
               "linalg.svd: The input tensor A must have at least 2 dimensions."),
    "qr_1d": (lambda lib: lib.linalg.qr(lib.ones(3)), RuntimeError,
              "linalg.qr: The input tensor A must have at least 2 dimensions."),
    "qr_mode": (lambda lib: lib.linalg.qr(lib.ones(3, 3), mode="x"), RuntimeError,
                "qr received unrecognized mode 'x' but expected one of 'reduced' \\(default\\), "
                "'r', or 'complete'"),
    "matrix_norm_order": (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), 3), RuntimeError,
                          "linalg.matrix_norm: Order 3 not supported."),
    "matrix_norm_1d": (lambda lib: lib.linalg.matrix_norm(lib.ones(3)), RuntimeError,
                       "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    "norm_3d_with_ord": (lambda lib: lib.linalg.norm(lib.ones(2, 2, 2), 2), RuntimeError,
                         "linalg.norm: If dim is not specified but ord is, the input must be 1D "
                         "or 2D. Got 3D."),
    "vector_norm_integer": (lambda lib: lib.norm(lib.tensor([1, 2])), RuntimeError,
                            "linalg.vector_norm: Expected a floating point or complex tensor as "
                            "input. Got Long"),
    "vector_norm_empty_inf": (lambda lib: lib.linalg.vector_norm(lib.ones(0), float("inf")),
                              RuntimeError, "linalg.vector_norm cannot compute the inf norm on an "
                              "empty tensor because the operation does not have an identity"),
    "norm_axis": (lambda lib: lib.norm(lib.ones(2), 2, axis=0), TypeError,
                  "norm\\(\\) got an unexpected keyword argument 'axis'"),
    "vector_norm_string_ord": (lambda lib: lib.linalg.vector_norm(lib.ones(2), "fro"), TypeError,
                               "linalg_vector_norm\\(\\): argument 'ord' \\(position 2\\) must be "
                               "Number, not str"),
}


ERRORS = {**OP_ERRORS, **{name: (lambda lib, x, program=program: program(lib), error, message)
                          for name, (program, error, message) in LINALG_ERRORS.items()}}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_torch(name):
    program, error, message = ERRORS[name]
    for lib in (gradkit, torch):
        with pytest.raises(error, match=message):
            _run(lib, program)


def test_singular_inputs_raise_linalg_error():
    with pytest.raises(gradkit.linalg.LinAlgError):
        gradkit.linalg.inv(gradkit.tensor(SINGULAR))
    with pytest.raises(gradkit.linalg.LinAlgError):
        gradkit.linalg.cholesky(-gradkit.eye(2))


def _leaf(lib, values, dtype=None):
    return lib.tensor(values, dtype=dtype or lib.float64, requires_grad=True)


def _hermitian(lib):
    h = lib.tensor(VALUES[:2, :2] + 1j * VALUES[1:3, 2:], dtype=lib.complex128)
    return (h + h.mH).requires_grad_()


GRADIENT_ERRORS = {
    "qr_mode_r": (lambda lib: lib.linalg.qr(_leaf(lib, VALUES[:3, :3]), mode="r").R.sum(),
                  "The derivative of linalg.qr depends on Q, which is not computed when "
                  "mode='r'."),
    "qr_complete_tall": (lambda lib: lib.linalg.qr(_leaf(lib, VALUES[:3, :2]),
                                                   mode="complete").Q.sum(),
                         "The QR decomposition is not differentiable when mode='complete' and "
                         "nrows > ncols."),
    "svd_phase": (lambda lib: lib.linalg.svd(_leaf(lib, VALUES[:3, :2] + 1j * VALUES[:3, 2:],
                                                   lib.complex128),
                                             full_matrices=False).U.real.sum(),
                  "svd_backward: The singular vectors in the complex case are specified up to "
                  "multiplication by e\\^{i phi}. The specified loss function depends on this "
                  "phase term, making it ill-defined."),
    "eigh_phase": (lambda lib: lib.linalg.eigh(_hermitian(lib)).eigenvectors.real.sum(),
                   "linalg_eigh_backward: The eigenvectors in the complex case are specified up "
                   "to multiplication by e\\^{i phi}."),
}


@pytest.mark.parametrize("name", GRADIENT_ERRORS)
def test_linalg_gradient_errors_as_torch(name):
    program, message = GRADIENT_ERRORS[name]
    for lib in (gradkit, torch):
        with pytest.raises(RuntimeError, match=message):
            program(lib).backward()


@pytest.mark.parametrize("build,node", [
    (lambda lib, x: lib.linalg.inv(x), "LinalgInvExBackward0"),
    (lambda lib, x: lib.inverse(x), "LinalgInvExBackward0"),
    (lambda lib, x: lib.linalg.det(x), "LinalgDetBackward0"),
    (lambda lib, x: x.det(), "LinalgDetBackward0"),
    (lambda lib, x: lib.linalg.slogdet(x).logabsdet, "LinalgSlogdetBackward0"),
    (lambda lib, x: lib.linalg.solve(x, x), "LinalgSolveExBackward0"),
    (lambda lib, x: lib.linalg.cholesky(x @ x.mT), "LinalgCholeskyExBackward0"),
    (lambda lib, x: lib.linalg.qr(x).Q, "LinalgQrBackward0"),
    (lambda lib, x: lib.linalg.svd(x).S, "LinalgSvdBackward0"),
    (lambda lib, x: lib.linalg.svdvals(x), "LinalgSvdBackward0"),
    (lambda lib, x: lib.linalg.eigh(x).eigenvalues, "LinalgEighBackward0"),
    (lambda lib, x: lib.linalg.eigvalsh(x), "LinalgEighBackward0"),
    (lambda lib, x: x.norm(), "LinalgVectorNormBackward0"),
    (lambda lib, x: lib.linalg.vector_norm(x, 3, 0), "LinalgVectorNormBackward0"),
    (lambda lib, x: lib.linalg.matrix_norm(x), "LinalgVectorNormBackward0"),
    (lambda lib, x: lib.linalg.norm(x, 1), "AmaxBackward0"),
    (lambda lib, x: lib.linalg.matrix_norm(x, -2), "AminBackward0"),
    (lambda lib, x: lib.linalg.matrix_norm(x, float("inf")), "AmaxBackward0"),
])
def test_linalg_node_names_as_torch(build, node):
    for lib in (gradkit, torch):
        x = lib.tensor(VALUES[:3, :3] + 3 * np.eye(3), requires_grad=True)
        assert build(lib, x).grad_fn.name() == node


LINALG_PROGRAMS = {
    "vector_norm_dtype": lambda lib, x: lib.linalg.vector_norm(x, dtype=lib.float64),
    "norm_method_p_dim_keepdim": lambda lib, x: x.norm(p=1, dim=1, keepdim=True),
    "norm_fro_dims": lambda lib, x: lib.norm(x, "fro", (0, 1)),
    "norm_p_none": lambda lib, x: lib.norm(x, None),
    "linalg_norm_keepdims": lambda lib, x: lib.linalg.norm(x, axis=1, keepdims=True),
    "matrix_norm_nuc_keepdim": lambda lib, x: lib.linalg.matrix_norm(x, "nuc", keepdim=True),
    "slogdet_of_negative_det": lambda lib, x: tuple(lib.linalg.slogdet(x[:2, :2])),
    "det_method": lambda lib, x: (x[:3, :3] + 3 * lib.eye(3)).det(),
    "inverse_method": lambda lib, x: (x[:3, :3] + 3 * lib.eye(3)).inverse(),
    "slogdet_top_level": lambda lib, x: tuple(lib.slogdet(x[:3, :3] + 3 * lib.eye(3))),
    "qr_r_mode": lambda lib, x: lib.linalg.qr(x, mode="r").R,
    "eigh_upper_triangle": lambda lib, x: lib.linalg.eigvalsh(x[:3, :3], UPLO="U"),
    "solve_left_false_vector_batch": lambda lib, x: lib.linalg.solve(
        x[:3, :3] + 3 * lib.eye(3), x[:, :3], left=False),
}


@pytest.mark.parametrize("name", LINALG_PROGRAMS)
def test_linalg_programs_as_torch(name):
    program = LINALG_PROGRAMS[name]
    _same(_run(gradkit, program), _run(torch, program))


def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix():
    """A deliberate difference (docs/api.md): torch 2.13 returns zeros at exactly singular
    matrices, though the cofactor matrix is the limit of its own gradient next to them."""
    a = _leaf(gradkit, SINGULAR)
    gradkit.linalg.det(a).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    near = torch.tensor(SINGULAR, dtype=torch.float64)
    near[1, 1] += 1e-9
    near.requires_grad_()
    torch.linalg.det(near).backward()
    np.testing.assert_allclose(a.grad.numpy(), near.grad.numpy(), atol=1e-6)
    from gradkit.autograd import gradcheck, gradgradcheck
    assert gradcheck(gradkit.linalg.det, (_leaf(gradkit, SINGULAR),))
    assert gradgradcheck(gradkit.linalg.det, (_leaf(gradkit, [[1.0, 0.0], [0.0, 0.0]]),))


def test_numpy_keywords_reach_plain_function_ops_and_ops_alike():
    """axis=/keepdims= are renamed once, at the op boundary (ops/keywords.py)."""
    from gradkit.ops.keywords import torch_keywords
    assert torch_keywords("sum", ("dim", "keepdim"), {"axis": 1, "keepdims": True}) == \
        {"dim": 1, "keepdim": True}
    assert torch_keywords("f", ("x",), {"axis": 1}) == {"axis": 1}  # no dim: left for the op
    assert torch_keywords("sum", ("dtype",), {"dtype": gradkit.float64})["dtype"] == np.float64


INPLACE_ON_VIEW_PROGRAMS = {
    "diagonal": lambda y: y.diagonal(1).mul_(3.0),
    "narrow": lambda y: y.narrow(1, 1, 2).mul_(3.0),
    "select": lambda y: y.select(0, -1).mul_(-1.5),
}


@pytest.mark.parametrize("name", INPLACE_ON_VIEW_PROGRAMS)
def test_inplace_through_new_views_rebases_the_history_as_torch(name):
    """An in-place write to a diagonal/narrow/select view of y changes its gradient as in torch."""
    grads = []
    for lib in (gradkit, torch):
        x = lib.tensor(VALUES, dtype=lib.float64, requires_grad=True)
        y = x * 2.0
        INPLACE_ON_VIEW_PROGRAMS[name](y)
        (y * y).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("make,spec", [
    (lambda lib: lib.ones(2), None), (lambda lib: lib.tensor([1]), None),
    (lambda lib: lib.tensor([True]), None), (lambda lib: lib.ones(2).half(), None),
    (lambda lib: lib.ones(2), "DoubleTensor"), (lambda lib: lib.ones(2), "torch.LongTensor"),
    (lambda lib: lib.ones(2), "float64"),
])
def test_type_names_and_casts_as_torch(make, spec):
    results = []
    for lib in (gradkit, torch):
        x = make(lib)
        if spec is None:
            results.append(x.type().split(".", 1)[1])  # gradkit.FloatTensor ~ torch.FloatTensor
            continue
        target = spec if spec.startswith("torch.") else getattr(lib, spec)
        results.append(str(x.type(target).dtype).split(".")[1])
    assert results[0] == results[1]


def test_type_refuses_an_unknown_name_as_torch():
    for lib in (gradkit, torch):
        with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
            lib.ones(2).type("torch.Foo")
