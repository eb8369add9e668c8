"""Arguments of every kind (NumPy integers, None, sublists, bools, non-tensors where a tensor
goes) as torch 2.13's parser reads them: each program runs in torch and in gradkit, and the
outcomes (dtypes, shapes, values, or the error's type and message) must match. Found by the
argument scan (issue 15): gradkit refused what torch computes, or computed what it refuses."""
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

F = "nn.functional."
X = np.random.default_rng(0).random((3, 3)) + 0.5
I64 = np.int64(1)

# torch computes these; gradkit refused them
COMPUTED = {
    "adaptive_avg_pool1d_zero": ("adaptive_avg_pool1d", 0),
    "adaptive_avg_pool1d_zero_tuple": ("adaptive_avg_pool1d", (0,)),
    "adaptive_avg_pool2d_zero": (F + "adaptive_avg_pool2d", (0, 2)),
    "adaptive_max_pool1d_zero": ("adaptive_max_pool1d", 0),
    "adaptive_max_pool2d_zero": (F + "adaptive_max_pool2d", (2, 0), True),
    "adaptive_avg_pool1d_i64": ("adaptive_avg_pool1d", I64),
    "adaptive_max_pool1d_i64": ("adaptive_max_pool1d", I64),
    "adaptive_avg_pool2d_i64s": (F + "adaptive_avg_pool2d", (np.int32(2), I64)),
    "avg_pool1d_i64": ("avg_pool1d", I64),
    "avg_pool1d_i64_stride": ("avg_pool1d", 1, I64),
    "avg_pool2d_i64": (F + "avg_pool2d", np.int64(2), np.int64(1)),
    "max_pool1d_i64": ("max_pool1d", I64),
    "max_pool1d_i64_stride": ("max_pool1d", 1, I64),
    "max_pool1d_with_indices_i64": ("max_pool1d_with_indices", 1, I64),
    "max_pool2d_i64": (F + "max_pool2d", np.int64(2)),
    "fractional_max_pool2d_i64": (F + "fractional_max_pool2d", I64, I64),
    "frobenius_norm_i64": ("frobenius_norm", I64),
    "histogram_i64": ("histogram", np.int64(2)),
    "histogramdd_i64": ("histogramdd", I64),
    "histogramdd_i64_list": ("histogramdd", [np.int64(2), 3, np.int32(1)]),
    "histogramdd_range_positional": ("histogramdd", 1, None),
    "histogramdd_all_positional": ("histogramdd", 2, [0.5, 1.5] * 3, None, True),
    "split_copy_i64": ("split_copy", I64),
    "unsafe_split_i64": ("unsafe_split", np.int64(2)),
    "nan_to_num_none": ("nan_to_num", None),
}

# torch refuses these (gradkit computed some, or raised another error)
REFUSED = {
    # nn.functional's Python reads len() of an output size that is not an int
    "adaptive_avg_pool2d_i64": (F + "adaptive_avg_pool2d", np.int32(2)),
    "adaptive_max_pool2d_i64": (F + "adaptive_max_pool2d", I64),
    "histogram_float_bins": ("histogram", 2.0),
    "histogram_bool_bins": ("histogram", True),
    "histogram_numpy_float_bins": ("histogram", np.float64(2)),
    "histogramdd_float_bins": ("histogramdd", 2.0),
    "histogramdd_bool_bins": ("histogramdd", True),
    "split_i64": ("split", I64),  # torch.split is Python: its isinstance(int) fails
}


def _call(lib, name, args):
    function = lib
    for part in name.split("."):
        function = getattr(function, part)
    x = lib.tensor(X)
    return function(x[None] if "2d" in name else x, *args)  # 2-d pools: (C, H, W)


def _outcome(lib, name, args):
    try:
        out = _call(lib, name, args)
    except (RuntimeError, TypeError, ValueError) as error:
        return type(error).__name__, str(error).split("\n")[0]
    flat = []
    for value in (out if isinstance(out, tuple) else (out,)):
        for t in (value if isinstance(value, tuple) else (value,)):
            flat.append((str(t.dtype).split(".")[-1], tuple(t.shape), t.tolist()))
    return flat


@pytest.mark.filterwarnings("ignore::UserWarning")  # frobenius_norm's deprecation
@pytest.mark.parametrize("case", sorted(COMPUTED))
def test_computed_as_torch_computes(case):
    name, *args = COMPUTED[case]
    theirs = _outcome(torch, name, args)
    assert isinstance(theirs, list)  # torch computes it
    ours = _outcome(gradkit, name, args)
    assert [value[:2] for value in ours] == [value[:2] for value in theirs]  # dtypes, shapes
    for (*_, values), (*_, expected) in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(values, expected, rtol=1e-15)  # (a norm: an ulp)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_as_torch_refuses(case):
    name, *args = REFUSED[case]
    theirs = _outcome(torch, name, args)
    assert isinstance(theirs, tuple)  # torch refuses it
    assert _outcome(gradkit, name, args) == theirs


def _einsum_outcome(lib, make_args):
    a = lib.tensor(X[:2], requires_grad=True)
    b = lib.tensor(X, requires_grad=True)
    try:
        out = lib.einsum(*make_args(a, b))
    except (RuntimeError, TypeError, ValueError) as error:
        return type(error).__name__, str(error)
    grads = lib.autograd.grad(out.sum(), (a, b), allow_unused=True, materialize_grads=True)
    return [np.asarray(v.detach().numpy()).round(12).tolist() for v in (out, *grads)]


EINSUM_SUBLISTS = {
    "with_output": lambda a, b: (a, [0, 1], b, [1, 2], [0, 2]),
    "implicit_output": lambda a, b: (a, [0, 1], b, [1, 2]),
    "ellipsis": lambda a, b: (a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]),
    "lower_case_range": lambda a, b: (a, [26, 51], b, [51, 30], [30]),
    "one_operand": lambda a, b: (b, [0, 1]),
    "out_of_range": lambda a, b: (a, [0, 52]),
    "negative": lambda a, b: (a, [-1, 0]),
    "no_operand": lambda a, b: (a,),
    "equation_only": lambda a, b: ("ij",),
    "repeated_size_mismatch": lambda a, b: (a, [0, 0]),
    "old_list_form": lambda a, b: ("ij,jk->ik", [a, b]),
}


@pytest.mark.parametrize("case", sorted(EINSUM_SUBLISTS))
def test_einsum_sublist_format(case):
    make_args = EINSUM_SUBLISTS[case]
    assert _einsum_outcome(gradkit, make_args) == _einsum_outcome(torch, make_args)


# a non-tensor where torch takes a tensor: torch's TypeError (gradkit raised AttributeError,
# its forward reading ``.shape`` of an int); plain functions declare their tensor parameters
# (gradkit/tensor_arguments.py), ops get it from their dispatch
NOT_TENSORS = {
    "mm_int": ("mm", 0), "mm_none": ("mm", None), "mv_float": ("mv", 1.5),
    "dot_tuple": ("dot", (0,)), "vdot_list": ("vdot", [0, 1]), "inner_int": ("inner", 0),
    "outer_numpy_int": ("outer", I64), "cross_int": ("cross", 0),
    "conv1d_int": ("conv1d", 0), "conv2d_int": ("conv2d", 0),
    "conv_transpose1d_float": ("conv_transpose1d", 0.5),
    "conv_transpose2d_int": ("conv_transpose2d", 0),
    "cdist_int": ("cdist", 0), "cosine_similarity_numpy": ("cosine_similarity", I64),
    "pairwise_distance_none": ("pairwise_distance", None),
    "kl_div_int": ("kl_div", 0), "kl_div_numpy_float": ("kl_div", np.float64(0.5)),
    "bce_logits_int": ("binary_cross_entropy_with_logits", 0),
    "hinge_embedding_loss_int": ("hinge_embedding_loss", 1, None),
    "margin_ranking_loss_int": ("margin_ranking_loss", 1, 0),
    "cosine_embedding_loss_int": ("cosine_embedding_loss", 1, 0),
    "triplet_margin_loss_int": ("triplet_margin_loss", 1, 0),
    "bilinear_int": ("bilinear", 1, 0), "prelu_int": ("prelu", 0),
    "prelu_numpy": ("prelu", I64), "embedding_int": ("embedding", 0),
    "embedding_bag_int": ("embedding_bag", 0), "take_along_dim_int": ("take_along_dim", 0),
    "bucketize_int": ("bucketize", 0), "cumulative_trapezoid_int": ("cumulative_trapezoid", 0),
    "trapezoid_int": ("trapezoid", 0), "slice_scatter_int": ("slice_scatter", 0),
    "diagonal_scatter_int": ("diagonal_scatter", 0),
    "cholesky_solve_int": ("cholesky_solve", 0), "triangular_solve_int": ("triangular_solve", 0),
    "lu_solve_int": ("lu_solve", 1, 0), "lu_unpack_int": ("lu_unpack", 0),
    "ormqr_int": ("ormqr", 1, 0),
    "block_diag_int": ("block_diag", 0), "broadcast_tensors_none": ("broadcast_tensors", None),
    "chain_matmul_int": ("chain_matmul", 0),
    "float_power_none": ("float_power", None), "quantile_tuple": ("quantile", (0,)),
    # ops: a None or a tuple where a tensor goes, a number where no number goes
    "add_none": ("add", None), "mul_tuple": ("mul", (0,)), "atan2_list": ("atan2", [0, 1]),
    "maximum_none": ("maximum", None), "fmax_tuple": ("fmax", (0,)),
    "heaviside_tuple": ("heaviside", (0,)), "ldexp_tuple": ("ldexp", (0,)),
    "bitwise_and_none": ("bitwise_and", None), "remainder_none": ("remainder", None),
    "pow_none": ("pow", None), "xlogy_none": ("xlogy", None),
    "addmm_int": ("addmm", 1, 0), "addmv_none": ("addmv", 1, None),
    "baddbmm_float": ("baddbmm", 1, 0.5), "addbmm_int": ("addbmm", 1, 0),
    "addr_int": ("addr", 1, 0), "gather_int_index": ("gather", 1, 0),
    "index_select_none": ("index_select", 1, None), "take_int": ("take", 0),
    "put_int": ("put", 1, 0), "masked_select_int": ("masked_select", 0),
    "masked_scatter_int": ("masked_scatter", 1, 0), "matmul_int": ("matmul", 0),
    "dist_int": ("dist", 0), "complex_int": ("complex", 0), "polar_float": ("polar", 0.5),
    "bmm_int": ("bmm", 0), "bmm_none": ("bmm", None),
    "layer_norm_int_shape": ("layer_norm", 3), "layer_norm_none_shape": ("layer_norm", None),
    "layer_norm_float_shape": ("layer_norm", (3.0,)),
    "layer_norm_int_weight": ("layer_norm", (3,), 1),
    "rms_norm_int_shape": ("rms_norm", 0), "rms_norm_tuple_weight": ("rms_norm", [3], (0,)),
}


@pytest.mark.parametrize("case", sorted(NOT_TENSORS))
def test_non_tensor_refused_as_torch_refuses(case):
    name, *args = NOT_TENSORS[case]
    theirs = _outcome(torch, name, args)
    assert theirs[0] == "TypeError"
    assert _outcome(gradkit, name, args) == theirs


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.kl_div(x, target=0),  # by keyword: no position
    lambda lib, x: lib.take_along_dim(x, indices=None),
    lambda lib, x: lib.nn.functional.conv_transpose1d(x[None], 0),
    lambda lib, x: lib.broadcast_tensors(x, x, 1.5),
    lambda lib, x: lib.dot(x[0], x[0], x[0]),  # too many positionals: Python's count first
    lambda lib, x: lib.nn.functional.conv2d(x[None], lib.ones(1, 1, 1, 1), bias=0),
])
def test_non_tensor_forms_refused_as_torch_refuses(call):
    outcomes = []
    for lib in (torch, gradkit):
        with pytest.raises(TypeError) as error:
            call(lib, lib.tensor(X))
        outcomes.append(str(error.value).split("\n")[0])
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.conv2d(x[None], lib.ones(1, 1, 1, 1).double(), None),
    lambda lib, x: lib.nn.functional.group_norm(x[None], 1, None, None),
    lambda lib, x: lib.float_power(x, 2),
    lambda lib, x: lib.quantile(x, 0.5),
    lambda lib, x: lib.gather(x, 1, lib.zeros(3, 1, dtype=lib.int64)),
    lambda lib, x: lib.mm(x, x.numpy() if lib is gradkit else x),  # derivative rules: arrays
])
def test_tensor_parameters_still_take_what_torch_takes(call):
    ours, theirs = call(gradkit, gradkit.tensor(X)), call(torch, torch.tensor(X))
    np.testing.assert_allclose(np.asarray(ours.tolist()), theirs.numpy(), rtol=1e-12)


# torch refuses these; gradkit computed them (silent leniencies)
LENIENCIES = {
    "isclose_int_other": lambda lib, x: lib.isclose(x, 0),
    "isclose_int_with_tolerance": lambda lib, x: lib.isclose(x, 1, 0),
    "isclose_tuple": lambda lib, x: lib.isclose(x, (0,)),
    "isclose_number_input": lambda lib, x: lib.isclose(1, x),
    "cholesky_inverse_int_upper": lambda lib, x: x.cholesky_inverse(1),
    "cholesky_inverse_int_upper_keyword": lambda lib, x: lib.cholesky_inverse(x, upper=0),
    "kron_numpy": lambda lib, x: lib.kron(x, I64),
    "masked_fill_number_mask": lambda lib, x: lib.masked_fill(x, 1, 0),
    "masked_fill_bool_mask": lambda lib, x: lib.masked_fill(x, True, 0.5),
    "where_float_condition": lambda lib, x: lib.where(x, 1, 0),
    "where_long_condition_method": lambda lib, x: x.where(x.long(), 0),
    "selu_extra": lambda lib, x: lib.selu(x, 1),
    "celu_extra": lambda lib, x: lib.celu(x, 1, 0),
    "threshold_inplace": lambda lib, x: lib.threshold(x, 1, 0, True),
    # bool parameters given another kind (the method form: torch's positions are the same)
    "qr_int_some": lambda lib, x: x.qr(1),
    "svd_int_some": lambda lib, x: x.svd(0),
    "svd_int_compute_uv": lambda lib, x: x.svd(True, 0),
    "svd_keyword": lambda lib, x: lib.svd(x, compute_uv=None),
    "lu_int_pivot": lambda lib, x: lib.lu(x, 1),
    "lu_tuple_pivot": lambda lib, x: x.lu((0,)),
    "median_int_keepdim": lambda lib, x: x.median(1, 0),
    "nanmedian_float_keepdim": lambda lib, x: x.nanmedian(0, 1.0),
    "unique_int_sorted": lambda lib, x: lib.unique(x, 1),
    "unique_none_sorted": lambda lib, x: x.unique(None),
    "unique_int_return_inverse": lambda lib, x: lib.unique(x, True, 1),
    "unique_float_return_counts": lambda lib, x: lib.unique(x, True, False, 0.0),
    "unique_dim_int_sorted": lambda lib, x: lib.unique(x, 1, dim=0),
}


@pytest.mark.parametrize("case", sorted(LENIENCIES))
def test_leniency_refused_as_torch_refuses(case):
    outcomes = []
    for lib in (torch, gradkit):
        with pytest.raises((TypeError, RuntimeError)) as error:
            LENIENCIES[case](lib, lib.tensor(X))
        outcomes.append((type(error.value).__name__, str(error.value).split("\n")[0]))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.isclose(x, x, 1, 0),
    lambda lib, x: lib.where(x.to(lib.uint8), x, 0),  # deprecated in torch (a warning)
    lambda lib, x: x.where(x > 1, 0),
    lambda lib, x: lib.celu(x, alpha=2.0),
    lambda lib, x: lib.threshold(x, threshold=1.0, value=2.0),
    lambda lib, x: x.cholesky_inverse(True),
    lambda lib, x: lib.lu(x, True, 0)[0],  # get_infos is read by torch's Python: any truth
    lambda lib, x: x.svd(False, True)[1],
    lambda lib, x: x.median(1, True)[0],
    lambda lib, x: lib.unique(x, False, True)[1],
    lambda lib, x: lib.layer_norm(x, [3]),
    lambda lib, x: lib.rms_norm(x, (3,), None),
])
def test_what_torch_still_takes(call):
    ours = call(gradkit, gradkit.tensor(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation of a uint8 condition
        theirs = call(torch, torch.tensor(X))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(ours.tolist()), theirs.numpy(), rtol=1e-12)
