"""Arguments of every kind, second pass (issue 15): what the argument scans (of functions, and
of Tensor methods) found after tests/test_argument_kinds.py. Each program runs in torch 2.13
and in gradkit; torch's refusals must be gradkit's (the error's type and first line), and what
torch computes gradkit computes (dtypes, shapes, values)."""
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).random((3, 3)) + 0.5
I64 = np.int64(1)


def _outcome(lib, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecations (frobenius_norm ...)
        try:
            out = call(lib, lib.tensor(X))
        except (RuntimeError, TypeError, ValueError, NotImplementedError) as error:
            return type(error).__name__, str(error).split("\n")[0]
    flat = []
    for value in (out if isinstance(out, (tuple, list)) else (out,)):
        for t in (value if isinstance(value, (tuple, list)) else (value,)):
            if not hasattr(t, "shape"):  # a size or a stride
                flat.append(t)
                continue
            values = np.asarray(t.tolist())
            flat.append((str(t.dtype).split(".")[-1], tuple(t.shape),
                         (values.round(12) if values.dtype.kind in "fc" else values).tolist()))
    return flat


# torch refuses these: keyword-only parameters given positionally
KEYWORD_ONLY = {
    "cumsum_dtype": lambda lib, x: lib.cumsum(x, 1, None),
    "cumprod_dtype": lambda lib, x: lib.cumprod(x, 1, None),
    "cumsum_dtype_method": lambda lib, x: x.cumsum(1, None),
    "clone_memory_format": lambda lib, x: lib.clone(x, None),
    "round_decimals": lambda lib, x: lib.round(x, 0),
    "round_none": lambda lib, x: lib.round(x, None),
    "full_like_dtype": lambda lib, x: lib.full_like(x, 1, None),
    "ones_like_dtype": lambda lib, x: lib.ones_like(x, None),
    "zeros_like_dtype": lambda lib, x: lib.zeros_like(x, None),
    "empty_like_dtype": lambda lib, x: lib.empty_like(x, None),
    # tile's function takes one tuple (its method, separate ints)
    "tile_missing": lambda lib, x: lib.tile(x),
    "tile_missing_method": lambda lib, x: x.tile(),
    "tile_int": lambda lib, x: lib.tile(x, 1),
    "tile_numpy_int": lambda lib, x: lib.tile(x, I64),
    "tile_two_ints": lambda lib, x: lib.tile(x, 1, 0),
}

# torch refuses these: a bool parameter given another kind (a NumPy bool too)
NOT_BOOLS = {
    "std_int_unbiased": lambda lib, x: lib.std(x, 1, 0),
    "std_none_unbiased": lambda lib, x: lib.std(x, 1, None),
    "var_float_unbiased": lambda lib, x: lib.var(x, 1, 0.5),
    "var_numpy_bool_unbiased": lambda lib, x: lib.var(x, 1, np.bool_(False)),
    "var_str_unbiased_method": lambda lib, x: x.var(1, "a"),
    "var_mean_str_unbiased": lambda lib, x: lib.var_mean(x, 1, "a"),
    "var_mean_none_unbiased": lambda lib, x: lib.var_mean(x, 1, None),
    "std_mean_int_unbiased": lambda lib, x: lib.std_mean(x, 1, 1),
    "var_mean_bool_dim_int": lambda lib, x: lib.var_mean(x, True, 1),
    "sum_numpy_bool_keepdim": lambda lib, x: lib.sum(x, 0, np.bool_(True)),
    "median_numpy_bool_keepdim_method": lambda lib, x: x.median(0, np.bool_(True)),
    # the function's words: positions and listings count the input
    "sum_int_keepdim": lambda lib, x: lib.sum(x, 0, 1),
    "var_float_dim": lambda lib, x: lib.var(x, 1.5),
    "cumsum_tuple_dim": lambda lib, x: lib.cumsum(x, (0,)),
    "cumsum_tuple_dim_method": lambda lib, x: x.cumsum((0,)),
    "softmax_functional_tuple_dim": lambda lib, x: lib.nn.functional.softmax(x, (0,)),
}

# torch refuses these: None, a tuple, a list or a str where a tensor or a number goes
# (NumPy would compare with them, or make an array of them)
NOT_OPERANDS = {
    "eq_tuple": lambda lib, x: lib.eq(x, (0,)),
    "eq_none": lambda lib, x: lib.eq(x, None),
    "ne_str": lambda lib, x: lib.ne(x, "a"),
    "eq_list": lambda lib, x: lib.eq(x, [1, 0, 1]),
    "ge_tuple": lambda lib, x: lib.ge(x, (0,)),
    "lt_tuple_method": lambda lib, x: x.lt((0,)),
    "greater_tuple_method": lambda lib, x: x.greater((0,)),  # a method alias: its own name
    "not_equal_none_method": lambda lib, x: x.not_equal(None),
    "fill_tuple": lambda lib, x: lib.fill(x, (0,)),
    "fill_none": lambda lib, x: lib.fill(x, None),
    "fill_str": lambda lib, x: lib.fill(x, "a"),
    "fill_inplace_none": lambda lib, x: lib.fill_(x, None),
    "fill_inplace_tuple_method": lambda lib, x: x.fill_((0,)),
    "logical_and_none": lambda lib, x: lib.logical_and(x, None),
    "logical_or_none_method": lambda lib, x: x.logical_or(None),
    "logical_xor_tuple": lambda lib, x: lib.logical_xor(x, (0,)),
    "nan_to_num_tuple": lambda lib, x: lib.nan_to_num(x, (0,)),
    "nan_to_num_posinf_tuple": lambda lib, x: lib.nan_to_num(x, 1, (0,)),
    "nan_to_num_list_method": lambda lib, x: x.nan_to_num([0, 1]),
    "nan_to_num_str": lambda lib, x: lib.nan_to_num(x, "a"),
    "nan_to_num_inplace_tuple": lambda lib, x: lib.nan_to_num_(x, (0,)),
    "nan_to_num_inplace_posinf_method": lambda lib, x: x.nan_to_num_(1, (0,)),
    "threshold_tuple_value": lambda lib, x: lib.threshold(x, 1, (0,)),
    "threshold_none_value": lambda lib, x: lib.threshold(x, 1, None),
    "threshold_none_threshold": lambda lib, x: lib.threshold(x, None, 1),
    "threshold_inplace_none_value": lambda lib, x: lib.threshold_(x, 1, None),
    "threshold_str_value": lambda lib, x: lib.threshold(x, 1, "a"),
    # an int parameter: None, a bool and a float refused
    "mvlgamma_none": lambda lib, x: lib.mvlgamma(x, None),
    "mvlgamma_bool": lambda lib, x: lib.mvlgamma(x, True),
    "mvlgamma_float_method": lambda lib, x: x.mvlgamma(1.0),
    "mvlgamma_missing": lambda lib, x: lib.mvlgamma(x),
    "mvlgamma_missing_method": lambda lib, x: x.mvlgamma(),
}

F = "nn.functional."


def _pool(name, *args):
    """A pooling call on (C, L) for 1-d pools, (C, H, W) for 2-d, (1, C, H, W) for 3-d."""
    def call(lib, x):
        function = lib
        for part in name.split("."):
            function = getattr(function, part)
        shaped = x if "1d" in name else x[None] if "2d" in name else x[None, None]
        return function(shaped, *args)
    return call


# torch's int[] pooling parameters: a bool, a float, None or a str refused (its parser's
# TypeError naming the argument); a negative adaptive output size refused by its kernels
POOLS = {
    "max_pool2d_bool_kernel": _pool(F + "max_pool2d", True),
    "max_pool2d_none_kernel": _pool(F + "max_pool2d", None),
    "max_pool2d_str_stride": _pool(F + "max_pool2d", 1, "a"),
    "max_pool2d_bool_padding": _pool(F + "max_pool2d", 2, 1, True),
    "max_pool2d_float_dilation": _pool(F + "max_pool2d", 2, 1, 0, 1.5),
    "max_pool3d_float_kernel": _pool(F + "max_pool3d", 1.0),
    "avg_pool2d_bool_kernel": _pool(F + "avg_pool2d", True),
    "avg_pool2d_str_padding": _pool(F + "avg_pool2d", 2, None, "a"),
    "avg_pool1d_bool_kernel": _pool("avg_pool1d", True),
    "avg_pool1d_bool_stride": _pool("avg_pool1d", 1, True),
    "avg_pool1d_bool_padding": _pool("avg_pool1d", 1, 1, True),
    "max_pool1d_bool_kernel": _pool("max_pool1d", True),
    "max_pool1d_bool_stride": _pool("max_pool1d", 1, False),
    "max_pool1d_with_indices_bool_kernel": _pool("max_pool1d_with_indices", True),
    "max_pool1d_with_indices_bool_stride": _pool("max_pool1d_with_indices", 1, True),
    "adaptive_avg_pool1d_bool": _pool("adaptive_avg_pool1d", True),
    "adaptive_max_pool1d_bool": _pool("adaptive_max_pool1d", False),
    "adaptive_avg_pool2d_bool": _pool(F + "adaptive_avg_pool2d", True),
    "adaptive_avg_pool1d_negative": _pool("adaptive_avg_pool1d", -1),
    "adaptive_max_pool1d_negative": _pool("adaptive_max_pool1d", -1),
    "adaptive_avg_pool2d_negative": _pool(F + "adaptive_avg_pool2d", (2, -1)),
    "adaptive_max_pool2d_negative": _pool(F + "adaptive_max_pool2d", (2, -1)),
    "adaptive_avg_pool3d_negative": _pool(F + "adaptive_avg_pool3d", (1, 2, -1)),
    "adaptive_max_pool3d_negative": _pool(F + "adaptive_max_pool3d", (1, -2, 1)),
}

# torch's split signatures take an int (sections), an int list (indices) or, tensor_split, a
# tensor; anything else matches none of them
SPLITS = {
    "hsplit_bool": lambda lib, x: lib.hsplit(x, True),
    "hsplit_float_method": lambda lib, x: x.hsplit(1.0),
    "hsplit_missing": lambda lib, x: lib.hsplit(x),
    "hsplit_missing_method": lambda lib, x: x.hsplit(),
    "hsplit_str": lambda lib, x: lib.hsplit(x, "a"),
    "hsplit_two_ints": lambda lib, x: lib.hsplit(x, 1, True),
    "vsplit_bool_method": lambda lib, x: x.vsplit(True),
    "vsplit_str_element": lambda lib, x: lib.vsplit(x, [1, "a"]),
    "dsplit_bool_before_rank": lambda lib, x: lib.dsplit(x, True),
    "dsplit_rank": lambda lib, x: lib.dsplit(x, 1),
    "tensor_split_bool": lambda lib, x: lib.tensor_split(x, True),
    "tensor_split_float_method": lambda lib, x: x.tensor_split(1.0),
    "tensor_split_none": lambda lib, x: lib.tensor_split(x, None),
    "tensor_split_none_method": lambda lib, x: x.tensor_split(None),
    "tensor_split_str": lambda lib, x: lib.tensor_split(x, "a"),
    "tensor_split_bool_with_dim_method": lambda lib, x: x.tensor_split(True, 1),
}

# the int, bool and float parameters of torch's legacy norms and of group_norm
NORMS = {
    "frobenius_norm_bool_dim": lambda lib, x: lib.frobenius_norm(x, True),
    "frobenius_norm_int_keepdim": lambda lib, x: lib.frobenius_norm(x, 1, 0),
    "frobenius_norm_numpy_keepdim": lambda lib, x: lib.frobenius_norm(x, 1, np.int64(1)),
    "nuclear_norm_none_dim": lambda lib, x: lib.nuclear_norm(x, None),
    "nuclear_norm_none_dim_keepdim": lambda lib, x: lib.nuclear_norm(x, None, True),
    "norm_except_dim_bool_pow": lambda lib, x: lib.norm_except_dim(x, True),
    "norm_except_dim_float_pow": lambda lib, x: lib.norm_except_dim(x, 1.0),
    "norm_except_dim_none_pow": lambda lib, x: lib.norm_except_dim(x, None),
    "norm_except_dim_bool_dim": lambda lib, x: lib.norm_except_dim(x, 1, True),
    "pinverse_tuple_rcond": lambda lib, x: lib.pinverse(x, (0,)),
    "pinverse_none_rcond": lambda lib, x: lib.pinverse(x, None),
    "pinverse_list_rcond_method": lambda lib, x: x.pinverse([0, 1]),
    "group_norm_bool_groups": lambda lib, x: lib.group_norm(x, True),
    "group_norm_float_groups": lambda lib, x: lib.group_norm(x, 1.0),
    "group_norm_functional_bool_groups": lambda lib, x: lib.nn.functional.group_norm(x[None],
                                                                                     True),
}

# None given where torch's default means "absent", and other kinds no signature takes
OTHERS = {
    "where_none_input": lambda lib, x: lib.where(x > 1, None),
    "where_none_other": lambda lib, x: lib.where(x > 1, 1, None),
    "where_method_none_other": lambda lib, x: x.where(x > 1, None),
    "where_method_missing_other": lambda lib, x: x.where(x > 1),
    "where_method_none_condition": lambda lib, x: x.where(None, 1),
    "trapezoid_none_x": lambda lib, x: lib.trapezoid(x, None),
    "trapezoid_keyword_none_x": lambda lib, x: lib.trapezoid(x, x=None),
    "trapz_none_x": lambda lib, x: lib.trapz(x, None),
    "cumulative_trapezoid_none_x": lambda lib, x: lib.cumulative_trapezoid(x, None),
    "squeeze_none_dim": lambda lib, x: lib.squeeze(x, None),
    "squeeze_none_dim_method": lambda lib, x: x.squeeze(None),
    "squeeze_copy_none_dim": lambda lib, x: lib.squeeze_copy(x, None),
    "unsqueeze_copy_none_dim": lambda lib, x: lib.unsqueeze_copy(x, None),
    "isin_bool_test": lambda lib, x: lib.isin(x, True),
    "isin_bool_elements": lambda lib, x: lib.isin(False, x),
    "repeat_interleave_bool": lambda lib, x: lib.repeat_interleave(x, True),
    "repeat_interleave_float": lambda lib, x: lib.repeat_interleave(x, 1.0),
    "repeat_interleave_numpy_float_method": lambda lib, x: x.repeat_interleave(np.float64(0.5)),
    "repeat_interleave_bool_with_dim": lambda lib, x: lib.repeat_interleave(x, True, 0),
    "slice_copy_bool_dim": lambda lib, x: lib.slice_copy(x, True),
    "slice_copy_bool_start": lambda lib, x: lib.slice_copy(x, 1, True),
    "slice_copy_bool_end": lambda lib, x: lib.slice_copy(x, 0, 0, True),
    "slice_copy_float_start": lambda lib, x: lib.slice_copy(x, 0, 1.0),
    "split_with_sizes_copy_int": lambda lib, x: lib.split_with_sizes_copy(x, 1),
    "split_with_sizes_copy_int_dim": lambda lib, x: lib.split_with_sizes_copy(x, 1, 0),
    "unsafe_split_with_sizes_int": lambda lib, x: lib.unsafe_split_with_sizes(x, 1),
    "unsafe_split_with_sizes_int_method": lambda lib, x: x.unsafe_split_with_sizes(1),
    # torch's layouts and memory formats are fixed objects
    "sub_alpha_then_bool": lambda lib, x: lib.sub(x, 1, True),  # a bool tensor subtracted
    "add_int_float_alpha_then_bool": lambda lib, x: lib.add(x.long(), 1.5, True),
    "layout_instance": lambda lib, x: lib.layout(),
    "memory_format_instance": lambda lib, x: lib.memory_format(1),
}

# a tensor (or another kind) where torch takes an int: its parser's TypeError before the op's
# own checks (gradkit's used the value first: "Boolean value of Tensor ... is ambiguous"); the
# int parameters are declared (int_parameters, tensor_parameters), read by one mechanism
INTS_FIRST = {
    "eye_tensor": lambda lib, x: lib.eye(x),
    "eye_tensor_m": lambda lib, x: lib.eye(2, x),
    "eye_float_m": lambda lib, x: lib.eye(2, 1.0),
    "eye_bool": lambda lib, x: lib.eye(True),
    "eye_none_m": lambda lib, x: lib.eye(2, None),
    "eye_three": lambda lib, x: lib.eye(2, 2, 1),
    "tril_indices_tensor": lambda lib, x: lib.tril_indices(x, 2),
    "tril_indices_float_offset": lambda lib, x: lib.tril_indices(2, 2, 1.0),
    "triu_indices_bool_col": lambda lib, x: lib.triu_indices(2, True),
    "vander_float_n": lambda lib, x: lib.vander(x[0], 1.0),
    "vander_int_increasing": lambda lib, x: lib.vander(x[0], 2, 1),
    "vander_keyword_float_n": lambda lib, x: lib.vander(x[0], N=1.0),
    "combinations_bool_r": lambda lib, x: lib.combinations(x, True),
    "combinations_int_replacement": lambda lib, x: lib.combinations(x[0], 2, 1),
    "cartesian_prod_int": lambda lib, x: lib.cartesian_prod(x, 1),
    "meshgrid_int": lambda lib, x: lib.meshgrid(x, 1),
    "pixel_shuffle_bool": lambda lib, x: lib.pixel_shuffle(x[None, None], True),
    "pixel_shuffle_float": lambda lib, x: lib.pixel_shuffle(x[None, None], 2.0),
    "pixel_unshuffle_none": lambda lib, x: lib.pixel_unshuffle(x[None, None], None),
    "channel_shuffle_bool": lambda lib, x: lib.channel_shuffle(x[None, None], True),
    "channel_shuffle_functional_none": lambda lib, x: lib.nn.functional.channel_shuffle(
        x[None, None], None),
    "native_channel_shuffle_float": lambda lib, x: lib.native_channel_shuffle(x[None, None],
                                                                              1.0),
    # removed functions: Python binds the arguments of torch's def first
    "solve_missing": lambda lib, x: lib.solve(x),
    "solve_three": lambda lib, x: lib.solve(x, x, 1),
    "lstsq_none": lambda lib, x: lib.lstsq(),
    "eig_three": lambda lib, x: lib.eig(x, 1, 2),
    "solve_removed": lambda lib, x: lib.solve(x, x),
    # a parameter's kind checked by torch's parser before the op's own checks
    "bincount_int_weights": lambda lib, x: lib.bincount(x, 0),
    "bincount_int_weights_method": lambda lib, x: x.bincount(1),
    "histc_bool_bins": lambda lib, x: lib.histc(x, False),
    "histc_float_bins_method": lambda lib, x: x.histc(1.5),
    "segment_reduce_int_reduce": lambda lib, x: lib.segment_reduce(x, 0),
    "constant_pad_nd_str_pad": lambda lib, x: lib.constant_pad_nd(x, "a"),
    "dist_bool_other": lambda lib, x: lib.dist(x, True),
    "dist_bool_other_method": lambda lib, x: x.dist(False),
    "dist_int_other": lambda lib, x: lib.dist(x, 2),
    "nuclear_norm_float_dim": lambda lib, x: lib.nuclear_norm(x, 1.0),
    "nuclear_norm_int_dim": lambda lib, x: lib.nuclear_norm(x, 0),
    "permute_copy_str_dims": lambda lib, x: lib.permute_copy(x, "a"),
    "expand_copy_str_size": lambda lib, x: lib.expand_copy(x, "a"),
    "split_copy_tuple_size": lambda lib, x: lib.split_copy(x, (0,)),
    "unsafe_split_tuple_size": lambda lib, x: lib.unsafe_split(x, (0,)),
    "unsafe_split_tuple_size_method": lambda lib, x: x.unsafe_split((0,)),
    "searchsorted_tuple_input": lambda lib, x: lib.searchsorted(x, (0,)),
    "searchsorted_none_input": lambda lib, x: lib.searchsorted(x, None),
    "where_tuple_other": lambda lib, x: lib.where(x, 1, (0,)),
    "where_str_other": lambda lib, x: lib.where(x, 1, "a"),
    "repeat_interleave_float_counts": lambda lib, x: lib.repeat_interleave(x),
    "reshape_str_shape": lambda lib, x: lib.reshape(x, "a"),
    "reshape_int_shape": lambda lib, x: lib.reshape(x, 9),
    "reshape_none_shape": lambda lib, x: lib.reshape(x, None),
    "broadcast_to_str_size": lambda lib, x: lib.broadcast_to(x, "a"),
    "group_norm_zero_groups": lambda lib, x: lib.group_norm(x, 0),
    "max_pool2d_bool_kernel_before_rank": lambda lib, x: lib.max_pool2d(x, True),
    "max_pool3d_none_kernel_before_rank": lambda lib, x: lib.max_pool3d(x, None),
    "native_channel_shuffle_missing": lambda lib, x: lib.native_channel_shuffle(x),
    "nuclear_norm_int_keepdim": lambda lib, x: lib.nuclear_norm(x, 1, 0),
    "repeat_interleave_none": lambda lib, x: lib.repeat_interleave(x, None),
    # add's alpha is keyword-only beside its deprecated (input, Number alpha, other)
    "add_alpha_then_none": lambda lib, x: lib.add(x, 1, None),
    "add_tensor_then_int": lambda lib, x: lib.add(x, x, 2),
    "sub_alpha_then_str": lambda lib, x: lib.sub(x, 1, "a"),
    "sub_inplace_alpha_then_none_method": lambda lib, x: x.sub_(1, None),
    "add_inplace_none_method": lambda lib, x: x.add_(None),
    "subtract_number_then_bool_alpha": lambda lib, x: lib.subtract(x, 1, True),
    "subtract_tensor_then_int": lambda lib, x: lib.subtract(x, x, 2),
    "cholesky_int_upper": lambda lib, x: lib.cholesky(x, 0),
    "cholesky_str_upper_method": lambda lib, x: x.cholesky("a"),
    "symeig_method_three": lambda lib, x: type(x.symeig(1, 0)),  # the method takes 1 to 2
    "symeig_method_removed": lambda lib, x: x.symeig(True),
}

# methods (the method scan): int and bool parameters, required sizes, None where no
# signature takes it
METHODS = {
    # int and bool parameters of methods
    "size_bool": lambda lib, x: x.size(True),
    "stride_bool": lambda lib, x: x.stride(False),
    "unfold_bool_step": lambda lib, x: x.unfold(0, 1, True),
    "polygamma_bool": lambda lib, x: x.polygamma(True),
    "polygamma_float": lambda lib, x: x.polygamma(1.0),
    "polygamma_missing": lambda lib, x: x.polygamma(),
    "polygamma_inplace_bool": lambda lib, x: x.polygamma_(True),
    "polygamma_inplace_missing": lambda lib, x: x.polygamma_(),
    "fill_diagonal_int_wrap": lambda lib, x: x.fill_diagonal_(1, 0),
    "fill_diagonal_none_wrap": lambda lib, x: x.fill_diagonal_(1, None),
    "copy_tuple": lambda lib, x: x.copy_((0,)),
    "copy_none": lambda lib, x: x.copy_(None),
    "copy_int_non_blocking": lambda lib, x: x.copy_(x, 1),
    # sizes: one required, a first bool refused
    "new_zeros_missing": lambda lib, x: x.new_zeros(),
    "new_ones_missing": lambda lib, x: x.new_ones(),
    "new_empty_missing": lambda lib, x: x.new_empty(),
    "sum_to_size_bool": lambda lib, x: x.sum_to_size(True),
    "sum_to_size_bool_then_int": lambda lib, x: x.sum_to_size(True, 3),
    "expand_bool_first": lambda lib, x: x.expand(True, 3, 3),
    # None where torch's signatures take none
    "squeeze_none": lambda lib, x: x.squeeze(None),
    "squeeze_inplace_none": lambda lib, x: x.squeeze_(None),
    "squeeze_str_element": lambda lib, x: x.squeeze(0, "a"),
    "view_as_none": lambda lib, x: x.view_as(None),
    "reshape_as_str": lambda lib, x: x.reshape_as("a"),
    "expand_as_numpy_int": lambda lib, x: x.expand_as(np.int64(1)),
    "broadcast_to_method_str": lambda lib, x: x.broadcast_to("a"),
    "broadcast_to_method_mismatch": lambda lib, x: x.broadcast_to(1, 0),
    "broadcast_to_int": lambda lib, x: lib.broadcast_to(x, 3),
    "permute_duplicate_dims": lambda lib, x: x.permute(1, -1),
    "repeat_negative": lambda lib, x: x.repeat(1, -1),
    "diff_bool_prepend_method": lambda lib, x: x.diff(0, 1, True),
    "diff_bool_prepend": lambda lib, x: lib.diff(x, 1, 0, True),
    "diff_float_prepend_keyword": lambda lib, x: lib.diff(x, prepend=1.5),
}

REFUSED = {**KEYWORD_ONLY, **NOT_BOOLS, **NOT_OPERANDS, **POOLS, **SPLITS, **NORMS, **OTHERS,
           **INTS_FIRST, **METHODS}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_as_torch_refuses(case):
    theirs = _outcome(torch, REFUSED[case])
    assert isinstance(theirs, tuple)  # torch refuses it
    assert _outcome(gradkit, REFUSED[case]) == theirs


# torch computes these
COMPUTED = {
    "tile_tuple": lambda lib, x: lib.tile(x, (2, 1)),
    "tile_method_ints": lambda lib, x: x.tile(1, 2),
    "tile_method_keyword": lambda lib, x: x.tile(dims=(2,)),
    "var_bool_unbiased": lambda lib, x: lib.var(x, 1, True),
    "std_mean_bool_unbiased": lambda lib, x: lib.std_mean(x, 1, False),
    "var_mean_lone_bool": lambda lib, x: lib.var_mean(x, True),
    # a later Python bool in an int list reads as an int (torch's element check takes it)
    "tile_bool_element": lambda lib, x: lib.tile(x, (2, True)),
    "tile_method_bool_element": lambda lib, x: x.tile(2, True),
    "new_zeros_bool_element": lambda lib, x: x.new_zeros(2, True),
    "new_ones_bool_element": lambda lib, x: x.new_ones((2, True)),
    "view_bool_element": lambda lib, x: x.view(9, True),
    "reshape_bool_element": lambda lib, x: x.reshape((9, True)),
    "repeat_bool_element": lambda lib, x: x.repeat(2, True),
    "permute_bool_element": lambda lib, x: x.permute(0, True),
    "flip_bool_element": lambda lib, x: x.flip((0, True)),
    "sum_bool_element": lambda lib, x: x.sum((0, True)),
    "amax_bool_element": lambda lib, x: lib.amax(x, (0, True)),
    "count_nonzero_bool_element": lambda lib, x: x.count_nonzero((0, True)),
    "nan_to_num_none": lambda lib, x: lib.nan_to_num(x, None),
    "nan_to_num_bool": lambda lib, x: lib.nan_to_num(x, True),
    "threshold_bool_value": lambda lib, x: lib.threshold(x, 1, True),
    "mvlgamma_numpy_int": lambda lib, x: lib.mvlgamma(x, np.int64(2)),
    "eq_number": lambda lib, x: lib.eq(x, 1),
    "fill_number_method": lambda lib, x: x.fill_(2),
    "max_pool2d_numpy_stride": _pool(F + "max_pool2d", 2, np.int64(1)),
    "max_pool2d_bool_element": _pool(F + "max_pool2d", (2, True)),
    "max_pool1d_numpy_kernel": _pool("max_pool1d", np.int64(2)),
    "adaptive_max_pool2d_none_element": _pool(F + "adaptive_max_pool2d", (2, None)),
    "hsplit_ints_method": lambda lib, x: x.hsplit(1, True),  # an int list as separate ints
    "hsplit_bool_element": lambda lib, x: lib.hsplit(x, (1, True)),
    "hsplit_numpy_int": lambda lib, x: lib.hsplit(x, np.int64(3)),
    "vsplit_list_method": lambda lib, x: x.vsplit([1, 2]),
    "tensor_split_list_dim": lambda lib, x: lib.tensor_split(x, [1, 2], 1),
    "tensor_split_keyword": lambda lib, x: lib.tensor_split(x, sections=2),
    "frobenius_norm_numpy_dim": lambda lib, x: lib.frobenius_norm(x, np.int64(1)),
    "frobenius_norm_dims_keepdim": lambda lib, x: lib.frobenius_norm(x, (0, 1), True),
    "nuclear_norm_keepdim": lambda lib, x: lib.nuclear_norm(x, True),
    "nuclear_norm_dims": lambda lib, x: lib.nuclear_norm(x, (0, 1)),
    "norm_except_dim_ints": lambda lib, x: lib.norm_except_dim(x, 3, -1),
    "pinverse_rcond": lambda lib, x: lib.pinverse(x, 0.1),
    "group_norm_int_groups": lambda lib, x: lib.group_norm(x, 1),
    "where_condition_alone": lambda lib, x: lib.where(x > 1),
    "where_method_number_other": lambda lib, x: x.where(x > 1, 2.0),
    "trapezoid_x": lambda lib, x: lib.trapezoid(x, x[0]),
    "squeeze_dims": lambda lib, x: lib.squeeze(x[None], (0, 1)),
    "repeat_interleave_numpy_int": lambda lib, x: lib.repeat_interleave(x, np.int64(2), 1),
    "slice_copy_none_bounds": lambda lib, x: lib.slice_copy(x, 0, None, None, 2),
    "split_with_sizes_copy_list": lambda lib, x: lib.split_with_sizes_copy(x, [1, 2], 1),
    "unsafe_split_with_sizes_method": lambda lib, x: x.unsafe_split_with_sizes([2, 1]),
    # torch's Python dispatcher reads the two flags from each other's positions: one given
    # positionally returns the other's (empty) slot
    "unique_consecutive_inverse_positional": lambda lib, x: lib.unique_consecutive(
        x.round(), True),
    "unique_consecutive_counts_positional": lambda lib, x: lib.unique_consecutive(
        x.round(), False, True),
    "unique_consecutive_both_positional": lambda lib, x: lib.unique_consecutive(
        x.round(), True, True),
    "unique_consecutive_inverse_keyword": lambda lib, x: lib.unique_consecutive(
        x.round(), return_inverse=True),
    "unique_consecutive_mixed": lambda lib, x: lib.unique_consecutive(x.round(), True,
                                                                      return_counts=False),
    "unique_consecutive_method": lambda lib, x: x.round().unique_consecutive(True, False, 0),
    # add/sub's deprecated (Number alpha, Tensor other) takes a number as other
    "add_alpha_then_bool": lambda lib, x: lib.add(x, 1, True),
    "add_alpha_then_false_method": lambda lib, x: x.add(2, False),
    "add_int_alpha_then_float": lambda lib, x: lib.add(x.long(), 2, 1.5),
    "add_inplace_alpha_then_bool": lambda lib, x: x.add_(1.5, True),
    "eye_ints": lambda lib, x: lib.eye(2, 3, dtype=lib.int64),
    "eye_int_tensor": lambda lib, x: lib.eye(lib.tensor(2)),
    "tril_indices_ints": lambda lib, x: lib.tril_indices(3, 3, -1),
    "vander_ints": lambda lib, x: lib.vander(x[0], 2, True),
    "combinations_ints": lambda lib, x: lib.combinations(x[0], 2, True),
    "meshgrid_list": lambda lib, x: lib.meshgrid([x[0], x[1]], indexing="ij"),
    "pixel_shuffle_int": lambda lib, x: lib.pixel_shuffle(x.reshape(1, 9, 1, 1), 3),
    "bincount_weights": lambda lib, x: lib.bincount(lib.tensor([0, 2, 2]), x[0]),
    "histc_bins": lambda lib, x: lib.histc(x, 3),
    "expand_copy_size": lambda lib, x: lib.expand_copy(x, (2, 3, 3)),
    "permute_copy_dims": lambda lib, x: lib.permute_copy(x, (1, 0)),
    "split_copy_int": lambda lib, x: lib.split_copy(x, 2),
    "searchsorted_number": lambda lib, x: lib.searchsorted(x[0], 1.0),
    "nuclear_norm_dims_list_keepdim": lambda lib, x: lib.nuclear_norm(x, [0, 1], True),
    "reshape_list_with_bool": lambda lib, x: lib.reshape(x, [9, True]),
    "broadcast_to_list": lambda lib, x: lib.broadcast_to(x, [2, 3, 3]),
    "add_zero_d_alpha_then_bool": lambda lib, x: lib.add(lib.tensor(True), lib.tensor(True),
                                                         True),
    "sub_zero_d_alpha_then_tensor": lambda lib, x: lib.sub(x, lib.tensor(2.0), x),
    "nuclear_norm_bool_keepdim": lambda lib, x: lib.nuclear_norm(x, (0, 1), False),
    "add_alpha_then_numpy_int": lambda lib, x: lib.add(x, 1, np.int64(1)),
    "add_alpha_then_numpy_bool": lambda lib, x: lib.add(x, 1, np.bool_(True)),
    "sub_alpha_then_numpy_float": lambda lib, x: lib.sub(x, 1, np.float64(0.5)),
    "subtract_number_then_alpha": lambda lib, x: lib.subtract(x, 1, 2.5),
    "subtract_keyword_alpha": lambda lib, x: lib.subtract(x, x, alpha=2),
}


# methods' own forms: an int list as separate ints (``x.squeeze(0, 1)``), a later bool in it
# read as an int; what torch still takes
COMPUTED.update({
    # an int list as separate ints, a later bool read as 1
    "squeeze_dims": lambda lib, x: x[None].squeeze(0, 1),
    "squeeze_dim_and_bool": lambda lib, x: x[None].squeeze(0, True),
    "squeeze_inplace_dims": lambda lib, x: x[None].clone().squeeze_(1, 0),
    "count_nonzero_dims": lambda lib, x: x.count_nonzero(1, 0),
    "count_nonzero_dim_and_bool": lambda lib, x: x.count_nonzero(0, True),
    "new_zeros_bool_element": lambda lib, x: x.new_zeros(2, True),
    "new_size_bool_element": lambda lib, x: x.new(0, 1, True),
    "view_bool_element": lambda lib, x: x.view(9, True),
    "repeat_bool_element": lambda lib, x: x.repeat(2, True),
    "permute_bool_element": lambda lib, x: x.permute(0, True),
    "flip_bool_element": lambda lib, x: x.flip(0, True),
    "tile_bool_element": lambda lib, x: x.tile(2, True),
    "hsplit_ints": lambda lib, x: x.hsplit(1, True),
    "sum_to_size_ints": lambda lib, x: x.sum_to_size(1, 3),
    "sum_to_size_tuple": lambda lib, x: x.sum_to_size((1, 3)),
    # what torch still takes
    "size_int": lambda lib, x: x.size(1),
    "stride_int": lambda lib, x: x.stride(0),
    "unfold_ints": lambda lib, x: x.unfold(0, 2, 1),
    "polygamma_int": lambda lib, x: x.polygamma(1),
    "copy_tensor": lambda lib, x: x.clone().copy_(x * 2, True),
    "fill_diagonal_bool_wrap": lambda lib, x: x.clone().fill_diagonal_(1, True),
    "new_zeros_tuple": lambda lib, x: x.new_zeros((2, 3)),
    "broadcast_to_method_ints": lambda lib, x: x[:, :1].broadcast_to(2, 3, True),
    "broadcast_to_method_tuple": lambda lib, x: x.broadcast_to((2, 3, 3)),
    "view_as_tensor": lambda lib, x: x.view_as(x.reshape(9)),
    "diff_prepend": lambda lib, x: x.diff(1, 0, None, x[:1]),
})


@pytest.mark.parametrize("case", sorted(COMPUTED))
def test_computed_as_torch_computes(case):
    theirs = _outcome(torch, COMPUTED[case])
    assert isinstance(theirs, list)  # torch computes it
    assert _outcome(gradkit, COMPUTED[case]) == theirs


@pytest.mark.parametrize("call", [
    lambda lib, x: x.view((True, 9)),  # a first bool does not read
    lambda lib, x: x.view((9, np.bool_(True))),  # nor a later NumPy bool
    lambda lib, x: x.view((9, 1.0)),
    lambda lib, x: x.expand(3, 3, True),  # a bool reads as 1: the size mismatches
])
def test_bool_elements_still_refused_as_torch_refuses(call):
    theirs = _outcome(torch, call)
    assert isinstance(theirs, tuple)
    assert _outcome(gradkit, call) == theirs
