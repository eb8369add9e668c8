"""Tensor methods given arguments of every kind (issue 15, the method scan): each call runs on
a torch 2.13 tensor and on a gradkit one; torch's refusals must be gradkit's (the error's type
and first line), and what torch computes gradkit computes (dtypes, shapes, values). Methods
take forms their functions do not: an int list as separate ints (``x.squeeze(0, 1)``), a
later bool in it read as an int (``x.view(9, True)``)."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).random((3, 3)) + 0.5


def _outcome(lib, call):
    try:
        out = call(lib.tensor(X))
    except (RuntimeError, TypeError, ValueError, NotImplementedError, IndexError) as error:
        return type(error).__name__, str(error).split("\n")[0]
    flat = []
    for value in (out if isinstance(out, (tuple, list)) else (out,)):
        if not hasattr(value, "shape"):
            flat.append(value)  # a size or a stride
            continue
        values = np.asarray(value.tolist())
        flat.append((str(value.dtype).split(".")[-1], tuple(value.shape),
                     (values.round(12) if values.dtype.kind in "fc" else values).tolist()))
    return flat


REFUSED = {
    # int and bool parameters of methods
    "size_bool": lambda x: x.size(True),
    "stride_bool": lambda x: x.stride(False),
    "unfold_bool_step": lambda x: x.unfold(0, 1, True),
    "polygamma_bool": lambda x: x.polygamma(True),
    "polygamma_float": lambda x: x.polygamma(1.0),
    "polygamma_missing": lambda x: x.polygamma(),
    "polygamma_inplace_bool": lambda x: x.polygamma_(True),
    "polygamma_inplace_missing": lambda x: x.polygamma_(),
    "fill_diagonal_int_wrap": lambda x: x.fill_diagonal_(1, 0),
    "fill_diagonal_none_wrap": lambda x: x.fill_diagonal_(1, None),
    "copy_tuple": lambda x: x.copy_((0,)),
    "copy_none": lambda x: x.copy_(None),
    "copy_int_non_blocking": lambda x: x.copy_(x, 1),
    # sizes: one required, a first bool refused
    "new_zeros_missing": lambda x: x.new_zeros(),
    "new_ones_missing": lambda x: x.new_ones(),
    "new_empty_missing": lambda x: x.new_empty(),
    "sum_to_size_bool": lambda x: x.sum_to_size(True),
    "sum_to_size_bool_then_int": lambda x: x.sum_to_size(True, 3),
    "expand_bool_first": lambda x: x.expand(True, 3, 3),
    # None where torch's signatures take none
    "squeeze_none": lambda x: x.squeeze(None),
    "squeeze_inplace_none": lambda x: x.squeeze_(None),
    "squeeze_str_element": lambda x: x.squeeze(0, "a"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_as_torch_refuses(case):
    theirs = _outcome(torch, REFUSED[case])
    assert isinstance(theirs, tuple)  # torch refuses it
    assert _outcome(gradkit, REFUSED[case]) == theirs


COMPUTED = {
    # an int list as separate ints, a later bool read as 1
    "squeeze_dims": lambda x: x[None].squeeze(0, 1),
    "squeeze_dim_and_bool": lambda x: x[None].squeeze(0, True),
    "squeeze_inplace_dims": lambda x: x[None].clone().squeeze_(1, 0),
    "count_nonzero_dims": lambda x: x.count_nonzero(1, 0),
    "count_nonzero_dim_and_bool": lambda x: x.count_nonzero(0, True),
    "new_zeros_bool_element": lambda x: x.new_zeros(2, True),
    "new_size_bool_element": lambda x: x.new(0, 1, True),
    "view_bool_element": lambda x: x.view(9, True),
    "repeat_bool_element": lambda x: x.repeat(2, True),
    "permute_bool_element": lambda x: x.permute(0, True),
    "flip_bool_element": lambda x: x.flip(0, True),
    "tile_bool_element": lambda x: x.tile(2, True),
    "hsplit_ints": lambda x: x.hsplit(1, True),
    "sum_to_size_ints": lambda x: x.sum_to_size(1, 3),
    "sum_to_size_tuple": lambda x: x.sum_to_size((1, 3)),
    # what torch still takes
    "size_int": lambda x: x.size(1),
    "stride_int": lambda x: x.stride(0),
    "unfold_ints": lambda x: x.unfold(0, 2, 1),
    "polygamma_int": lambda x: x.polygamma(1),
    "copy_tensor": lambda x: x.clone().copy_(x * 2, True),
    "fill_diagonal_bool_wrap": lambda x: x.clone().fill_diagonal_(1, True),
    "new_zeros_tuple": lambda x: x.new_zeros((2, 3)),
}


@pytest.mark.parametrize("case", sorted(COMPUTED))
def test_computed_as_torch_computes(case):
    theirs = _outcome(torch, COMPUTED[case])
    assert isinstance(theirs, list)  # torch computes it
    assert _outcome(gradkit, COMPUTED[case]) == theirs
