"""Arguments of every kind (NumPy integers, None, sublists, bools, non-tensors where a tensor
goes) as torch 2.13's parser reads them: each program runs in torch and in gradkit, and the
outcomes (dtypes, shapes, values, or the error's type and message) must match. Found by the
argument scan (issue 15): gradkit refused what torch computes, or computed what it refuses."""
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
