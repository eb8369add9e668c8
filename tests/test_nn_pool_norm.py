"""Pooling, normalization, convolution-variant and attention layers against torch: the modules'
state_dict keys, reprs, outputs, gradients and running statistics over train steps and in
eval mode; torch's errors; max pooling's ties and NaNs; 0-size batches.

The functions' values and gradients (to second order) are checked on their op_db rows.
"""
import doctest
import importlib
import inspect

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _numpy(t):
    return t.detach().numpy()


def _same(ours, theirs, rtol=1e-7, atol=1e-10):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(_numpy(ours), _numpy(theirs), rtol=rtol, atol=atol)


def _twins(make):
    """``make(lib)`` in both libraries, gradkit's with torch's parameters and buffers."""
    torch.manual_seed(0)
    theirs = make(torch).double()
    ours = make(gradkit).double()
    ours.load_state_dict({k: gradkit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


MODULES = {
    "BatchNorm1d": (lambda lib: lib.nn.BatchNorm1d(3, momentum=0.3), (4, 3)),
    "BatchNorm1d_3d": (lambda lib: lib.nn.BatchNorm1d(3), (4, 3, 5)),
    "BatchNorm1d_cumulative": (lambda lib: lib.nn.BatchNorm1d(3, momentum=None), (4, 3)),
    "BatchNorm1d_untracked": (lambda lib: lib.nn.BatchNorm1d(3, track_running_stats=False),
                              (4, 3)),
    "BatchNorm2d": (lambda lib: lib.nn.BatchNorm2d(2, affine=False), (3, 2, 3, 2)),
    "InstanceNorm2d": (lambda lib: lib.nn.InstanceNorm2d(2), (3, 2, 3, 2)),
    "InstanceNorm2d_tracked": (lambda lib: lib.nn.InstanceNorm2d(
        2, affine=True, track_running_stats=True), (3, 2, 3, 2)),
    "InstanceNorm2d_unbatched": (lambda lib: lib.nn.InstanceNorm2d(2), (2, 3, 2)),
    "GroupNorm": (lambda lib: lib.nn.GroupNorm(2, 4), (3, 4, 5)),
    "RMSNorm": (lambda lib: lib.nn.RMSNorm((2, 3), eps=1e-4), (4, 2, 3)),
    "RMSNorm_default_eps": (lambda lib: lib.nn.RMSNorm(3, elementwise_affine=False), (2, 3)),
    "Conv1d": (lambda lib: lib.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 7)),
    "ConvTranspose2d": (lambda lib: lib.nn.ConvTranspose2d(
        2, 4, (2, 3), stride=2, padding=1, output_padding=1, groups=2, dilation=1),
        (1, 2, 3, 4)),
    "MaxPool1d": (lambda lib: lib.nn.MaxPool1d(3, 2, 1, ceil_mode=True), (2, 3, 8)),
    "AvgPool1d": (lambda lib: lib.nn.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 3, 8)),
    "AvgPool2d": (lambda lib: lib.nn.AvgPool2d((2, 3), padding=1, divisor_override=4),
                  (2, 3, 5, 6)),
    "AdaptiveAvgPool2d": (lambda lib: lib.nn.AdaptiveAvgPool2d((3, None)), (2, 3, 5, 6)),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_matches_torch_over_train_steps_and_in_eval(name):
    make, shape = MODULES[name]
    ours, theirs = _twins(make)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(0)
    for training in (True, True, False):
        ours.train(training)
        theirs.train(training)
        x = rng.standard_normal(shape) * 2 + 0.5
        gx, tx = gradkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, t_out = ours(gx), theirs(tx)
        _same(out, t_out)
        seed = rng.standard_normal(tuple(t_out.shape))
        out.backward(gradkit.tensor(seed))
        t_out.backward(torch.tensor(seed))
        _same(gx.grad, tx.grad)
        for value, t_value in zip(ours.state_dict().values(),
                                         theirs.state_dict().values(), strict=True):
            _same(value, t_value)
        for p, t_p in zip(ours.parameters(), theirs.parameters(), strict=True):
            _same(p.grad, t_p.grad)
            p.grad, t_p.grad = None, None


def test_max_pool1d_module_returns_torch_indices():
    x = np.array([[[1.0, 3.0, 3.0, 0.5, 2.0, 2.0]]])
    ours = gradkit.nn.MaxPool1d(2, 1, return_indices=True)(gradkit.tensor(x))
    theirs = torch.nn.MaxPool1d(2, 1, return_indices=True)(torch.tensor(x))
    for o, t in zip(ours, theirs, strict=True):
        _same(o, t)


# -- errors, as torch words them -----------------------------------------------------------------

def _call(program, lib):
    try:
        program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return type(exc).__name__, str(exc).replace("gradkit.Size", "torch.Size")
    return None


def _r(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


ERRORS = {
    "bn1d_rank": lambda lib: lib.nn.BatchNorm1d(3)(_r(lib, 2, 3, 4, 5)),
    "bn2d_rank": lambda lib: lib.nn.BatchNorm2d(3)(_r(lib, 2, 3, 4)),
    "bn_one_value": lambda lib: lib.nn.BatchNorm1d(3)(_r(lib, 1, 3)),
    "bn_channels": lambda lib: lib.nn.functional.batch_norm(
        _r(lib, 2, 4), _r(lib, 3), _r(lib, 3), training=True),
    "bn_eval_no_stats": lambda lib: lib.nn.functional.batch_norm(_r(lib, 2, 4), None, None),
    "in_rank": lambda lib: lib.nn.InstanceNorm2d(3)(_r(lib, 2, 3)),
    "in_one_element": lambda lib: lib.nn.functional.instance_norm(_r(lib, 2, 3, 1)),
    "gn_groups": lambda lib: lib.nn.GroupNorm(3, 4),
    "gn_channels": lambda lib: lib.nn.functional.group_norm(_r(lib, 2, 4, 3), 3),
    "gn_weight": lambda lib: lib.nn.functional.group_norm(_r(lib, 2, 4, 3), 2, _r(lib, 3)),
    "rms_shape": lambda lib: lib.nn.functional.rms_norm(_r(lib, 2, 4), (3,)),
    "lrn_rank": lambda lib: lib.nn.functional.local_response_norm(_r(lib, 2, 4), 2),
    "conv1d_rank": lambda lib: lib.nn.Conv1d(3, 4, 2)(lib.ones(2, 3, 4, 5)),
    "conv1d_channels": lambda lib: lib.nn.functional.conv1d(_r(lib, 2, 3, 5), _r(lib, 4, 2, 2)),
    "conv1d_stride": lambda lib: lib.nn.functional.conv1d(_r(lib, 2, 3, 5), _r(lib, 4, 3, 2),
                                                          stride=(1, 2)),
    "conv1d_kernel": lambda lib: lib.nn.functional.conv1d(_r(lib, 2, 3, 5), _r(lib, 4, 3, 7)),
    "conv3d_rank": lambda lib: lib.nn.functional.conv3d(_r(lib, 2, 3, 4), _r(lib, 4, 3, 2, 2, 2)),
    "convT_channels": lambda lib: lib.nn.functional.conv_transpose1d(
        _r(lib, 2, 3, 5), _r(lib, 4, 3, 2)),
    "convT_output_padding": lambda lib: lib.nn.ConvTranspose2d(3, 3, 2, output_padding=1)(
        lib.ones(2, 3, 5, 5)),
    "convT_too_small": lambda lib: lib.nn.functional.conv_transpose2d(
        _r(lib, 2, 3, 1, 1), _r(lib, 3, 3, 2, 2), padding=2),
    "convT_bias": lambda lib: lib.nn.functional.conv_transpose2d(
        _r(lib, 2, 4, 5, 5), _r(lib, 4, 3, 2, 2), _r(lib, 3), groups=2),
    "max1d_padding": lambda lib: lib.nn.MaxPool1d(3, padding=2)(_r(lib, 2, 3, 8)),
    "max1d_stride": lambda lib: lib.nn.functional.max_pool1d(_r(lib, 2, 3, 8), 3, 0),
    "max1d_too_small": lambda lib: lib.nn.functional.max_pool1d(_r(lib, 2, 3, 8), 10),
    "max1d_rank": lambda lib: lib.nn.functional.max_pool1d(_r(lib, 2, 3, 4, 5), 2),
    "max1d_kernel": lambda lib: lib.nn.functional.max_pool1d(_r(lib, 2, 3, 4), (2, 2)),
    "max2d_kernel": lambda lib: lib.nn.functional.max_pool2d(_r(lib, 2, 3, 4, 4), (2, 2, 2)),
    "max2d_empty_dim": lambda lib: lib.nn.functional.max_pool2d(_r(lib, 2, 0, 4, 4), 2),
    "max3d_padding": lambda lib: lib.nn.functional.max_pool3d(_r(lib, 1, 2, 4, 4, 4), 3, None, 2),
    "max3d_stride": lambda lib: lib.nn.functional.max_pool3d(_r(lib, 1, 2, 4, 4, 4), 2, 0),
    "max3d_rank": lambda lib: lib.nn.functional.max_pool3d(_r(lib, 2, 3, 4), 2),
    "avg1d_too_small": lambda lib: lib.nn.AvgPool1d(10)(_r(lib, 2, 3, 8)),
    "avg1d_rank": lambda lib: lib.nn.functional.avg_pool1d(_r(lib, 2, 3, 4, 4), 2),
    "avg2d_rank": lambda lib: lib.nn.AvgPool2d(2)(_r(lib, 2, 3, 4, 5, 6)),
    "avg2d_stride": lambda lib: lib.nn.functional.avg_pool2d(_r(lib, 2, 3, 4), 2, 0),
    "avg2d_kernel": lambda lib: lib.nn.functional.avg_pool2d(_r(lib, 2, 3, 4, 4), (2, 2, 2)),
    "avg3d_divisor": lambda lib: lib.nn.functional.avg_pool3d(
        _r(lib, 1, 2, 4, 4, 4), 2, divisor_override=0),
    "adaptive_avg_rank": lambda lib: lib.nn.AdaptiveAvgPool2d(2)(_r(lib, 2, 3)),
    "adaptive_max_rank": lambda lib: lib.nn.functional.adaptive_max_pool2d(_r(lib, 2, 3), 2),
    "adaptive_1d_rank": lambda lib: lib.nn.functional.adaptive_avg_pool1d(_r(lib, 2, 3, 4, 5), 2),
    "sdpa_mask_and_causal": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _r(lib, 2, 3), _r(lib, 2, 3), _r(lib, 2, 3), attn_mask=lib.ones(2, 2, dtype=lib.bool),
        is_causal=True),
    "shuffle_channels": lambda lib: lib.nn.functional.pixel_shuffle(_r(lib, 2, 5, 3, 3), 2),
    "shuffle_rank": lambda lib: lib.nn.functional.pixel_shuffle(_r(lib, 2, 3), 2),
    "unshuffle_height": lambda lib: lib.nn.functional.pixel_unshuffle(_r(lib, 2, 4, 3, 4), 2),
    "unfold_rank": lambda lib: lib.nn.functional.unfold(_r(lib, 2, 3, 4, 4, 4), 2),
    "fold_channels": lambda lib: lib.nn.functional.fold(_r(lib, 2, 3, 4), (4, 4), 2),
    "fold_blocks": lambda lib: lib.nn.functional.fold(_r(lib, 2, 12, 5), (4, 4), 2),
    "interpolate_mode_rank": lambda lib: lib.nn.functional.interpolate(
        _r(lib, 2, 3, 4), size=5, mode="bilinear"),
    "interpolate_both": lambda lib: lib.nn.functional.interpolate(
        _r(lib, 2, 3, 4), size=5, scale_factor=2),
    "interpolate_neither": lambda lib: lib.nn.functional.interpolate(_r(lib, 2, 3, 4)),
    "interpolate_corners": lambda lib: lib.nn.functional.interpolate(
        _r(lib, 2, 3, 4), size=5, align_corners=True),
    "interpolate_size_rank": lambda lib: lib.nn.functional.interpolate(
        _r(lib, 2, 3, 4), size=(5, 5)),
    # found by the fuzzer's breadth class (tests/fuzz/ops_breadth.py, lane nnpool draws)
    "avg_bool": lambda lib: lib.nn.functional.avg_pool2d(lib.zeros(0, 1, 2, 2, dtype=lib.bool),
                                                         (1, 2)),
    "max_bool": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 2, 2, dtype=lib.bool), 2),
    "adaptive_long": lambda lib: lib.nn.functional.adaptive_avg_pool2d(
        lib.ones(1, 1, 3, 3, dtype=lib.int64), 2),
    "avg3d_kernel_past_input": lambda lib: lib.nn.functional.avg_pool3d(
        _r(lib, 1, 1, 2, 1, 1), 3, padding=(1, 0, 0), ceil_mode=True, count_include_pad=False,
        divisor_override=2),
    "gn_one_value": lambda lib: lib.nn.functional.group_norm(_r(lib, 1, 2, 1, 1), 2),
    "interpolate_to_nothing": lambda lib: lib.nn.functional.interpolate(
        _r(lib, 1, 1, 1), scale_factor=0.5, mode="linear", align_corners=True),
    "interpolate_to_nothing_2d": lambda lib: lib.nn.functional.interpolate(
        _r(lib, 1, 1, 1, 3), scale_factor=0.5),
    "sdpa_complex": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        *[lib.ones(2, 1, dtype=lib.complex64)] * 3),
    # dtypes the kernels lack
    "interpolate_linear_long": lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3, dtype=lib.int64), size=5, mode="linear"),
    "rms_long": lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3, dtype=lib.int64), (3,)),
    "unfold_long": lambda lib: lib.nn.functional.unfold(lib.ones(1, 1, 3, 3, dtype=lib.int64), 2),
    "fold_long": lambda lib: lib.nn.functional.fold(lib.ones(1, 4, 4, dtype=lib.int64), (3, 3), 2),
    "max1d_long": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 1, 4, dtype=lib.int64), 2),
    "instance_long": lambda lib: lib.nn.functional.instance_norm(
        lib.ones(2, 4, 3, dtype=lib.int64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    expected = _call(ERRORS[name], torch)
    assert expected is not None
    assert _call(ERRORS[name], gradkit) == expected


# -- max pooling: ties go to the first maximum, a NaN wins (the last one scanned) --------------

NAN, INF = float("nan"), float("inf")
TIES = {
    "max1d_ties_nan": (lambda nnf, x: nnf.max_pool1d(x, 3, 1, return_indices=True),
                       [[[1.0, NAN, 3.0, NAN, 5.0, 5.0, 2.0]]]),
    "max1d_neg_inf_padded": (lambda nnf, x: nnf.max_pool1d(x, 2, 1, 1, return_indices=True),
                             [[[-INF, -INF, 1.0]]]),
    "max2d_ties": (lambda nnf, x: nnf.max_pool2d(x, 2, 1, return_indices=True),
                   [[[[2.0, 2.0, 1.0], [2.0, 0.0, 2.0], [NAN, 1.0, NAN]]]]),
    "max3d_nan": (lambda nnf, x: nnf.max_pool3d(x, (1, 2, 2), return_indices=True),
                  [[[[[1.0, NAN], [NAN, 2.0]]]]]),
    "adaptive1d_ties_nan": (lambda nnf, x: nnf.adaptive_max_pool1d(x, 2, True),
                            [[[1.0, NAN, 3.0, NAN, 5.0, 5.0, 2.0]]]),
    "adaptive2d_ties": (lambda nnf, x: nnf.adaptive_max_pool2d(x, (2, 1), True),
                        [[[[4.0, 4.0], [4.0, 1.0], [NAN, 4.0]]]]),
}


@pytest.mark.parametrize("name", sorted(TIES))
def test_max_pooling_ties_and_nan_pick_torch_element(name):
    program, values = TIES[name]
    x = np.array(values)
    gx, tx = gradkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (out, indices), (t_out, t_indices) = program(gradkit.nn.functional, gx), \
        program(torch.nn.functional, tx)
    _same(out, t_out)
    _same(indices, t_indices)
    out.sum().backward()
    t_out.sum().backward()
    _same(gx.grad, tx.grad)


# -- 0-size batches ------------------------------------------------------------------------------

EMPTY = {
    "max_pool2d": (lambda nnf, x: nnf.max_pool2d(x, 2), (0, 2, 4, 4)),
    "max_pool1d": (lambda nnf, x: nnf.max_pool1d(x, 2), (0, 2, 4)),
    "avg_pool2d": (lambda nnf, x: nnf.avg_pool2d(x, 2, padding=1), (0, 2, 4, 5)),
    "adaptive_avg_pool2d": (lambda nnf, x: nnf.adaptive_avg_pool2d(x, 3), (0, 2, 4, 5)),
    "adaptive_max_pool2d": (lambda nnf, x: nnf.adaptive_max_pool2d(x, 3), (0, 2, 4, 5)),
    "conv1d": (lambda nnf, x: nnf.conv1d(x, x.new_ones(3, 2, 2)), (0, 2, 5)),
    "conv_transpose2d": (lambda nnf, x: nnf.conv_transpose2d(x, x.new_ones(2, 3, 2, 2), stride=2),
                         (0, 2, 2, 3)),
    "batch_norm": (lambda nnf, x: nnf.batch_norm(x, None, None, training=True), (0, 3, 2)),
    "group_norm": (lambda nnf, x: nnf.group_norm(x, 1), (0, 4, 3)),
    "instance_norm": (lambda nnf, x: nnf.instance_norm(x), (0, 2, 3)),
    "local_response_norm": (lambda nnf, x: nnf.local_response_norm(x, 2), (0, 4, 3)),
    "interpolate": (lambda nnf, x: nnf.interpolate(x, scale_factor=2, mode="linear"), (0, 2, 3)),
    "batch_norm_eval": (lambda nnf, x: nnf.batch_norm(x, x.new_zeros(3), x.new_ones(3)),
                        (0, 3, 2)),
    "unfold": (lambda nnf, x: nnf.unfold(x, 2), (0, 2, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_zero_size_batches_match_torch(name):
    program, shape = EMPTY[name]
    gx = gradkit.zeros(*shape, dtype=gradkit.float64, requires_grad=True)
    tx = torch.zeros(*shape, dtype=torch.float64, requires_grad=True)
    out, t_out = program(gradkit.nn.functional, gx), program(torch.nn.functional, tx)
    _same(out, t_out)
    out.sum().backward()
    t_out.sum().backward()
    _same(gx.grad, tx.grad)


def test_batch_norm_running_stats_stay_for_an_empty_batch():
    stats = [gradkit.zeros(3, dtype=gradkit.float64), gradkit.ones(3, dtype=gradkit.float64)]
    t_stats = [torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)]
    gradkit.nn.functional.batch_norm(gradkit.zeros(0, 3, dtype=gradkit.float64), *stats,
                                     training=True)
    torch.nn.functional.batch_norm(torch.zeros(0, 3, dtype=torch.float64), *t_stats,
                                   training=True)
    for s, t in zip(stats, t_stats, strict=True):
        _same(s, t)


@pytest.mark.parametrize("module", [
    "gradkit.nn.layers_more", "gradkit.ops.conv_more", "gradkit.ops.pooling_avg",
    "gradkit.ops.normalization", "gradkit.ops.attention", "gradkit.ops.interpolate"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), extraglobs={"gradkit": gradkit})
    assert result.attempted > 0 and result.failed == 0


def test_a_window_of_padding_only_gives_minus_inf_torch_index_and_no_gradient():
    """Dilation lets a window read padding only (fuzzer, breadth seeds 826, 1477)."""
    x = np.array([[[[0.5]]]])
    gx, tx = gradkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    args = ((2, 1), (2, 1), (1, 0), 2, True, True)
    (out, indices), (t_out, t_indices) = gradkit.nn.functional.max_pool2d(gx, *args), \
        torch.nn.functional.max_pool2d(tx, *args)
    _same(out, t_out)
    _same(indices, t_indices)
    out.sum().backward()
    t_out.sum().backward()
    _same(gx.grad, tx.grad)


def test_integer_average_pooling_truncates_as_torch():
    x = np.array([[[[-3, 2, 5], [1, 1, -7]]]])
    for kwargs in ({"kernel_size": 2}, {"kernel_size": 2, "padding": 1, "ceil_mode": True},
                   {"kernel_size": (1, 2), "divisor_override": 3}):
        _same(gradkit.nn.functional.avg_pool2d(gradkit.tensor(x), **kwargs),
              torch.nn.functional.avg_pool2d(torch.tensor(x), **kwargs))


NEW_FUNCTIONS = (
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm", "conv1d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "fold", "group_norm", "instance_norm",
    "interpolate", "local_response_norm", "lp_pool1d", "lp_pool2d", "max_pool1d", "max_pool3d",
    "pixel_shuffle", "pixel_unshuffle", "rms_norm", "scaled_dot_product_attention", "unfold")


def _parameters(function):
    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):  # a C builtin of torch's without a signature
        return None
    return None if names == ["args", "kwargs"] else names


@pytest.mark.parametrize("name", NEW_FUNCTIONS)
def test_functions_take_torch_parameter_names(name):
    expected = _parameters(getattr(torch.nn.functional, name))
    if expected is None:
        pytest.skip("torch's function has no Python signature")
    assert _parameters(getattr(gradkit.nn.functional, name)) == expected


@pytest.mark.parametrize("output_size", [(7, 9), [1, 2, 8, 10], (2, 2, 8, 9)])
def test_conv_transpose2d_output_size_picks_torch_output_padding(output_size):
    ours, theirs = _twins(lambda lib: lib.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1))
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 5))
    _same(ours(gradkit.tensor(x), output_size), theirs(torch.tensor(x), output_size))


def test_conv_transpose2d_output_size_errors_as_torch():
    def program(lib, size):
        lib.manual_seed(0)
        return lib.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1)(lib.ones(1, 2, 4, 5), size)
    for size in ((9, 8), (7,)):
        assert _call(lambda lib, s=size: program(lib, s), gradkit) == \
            _call(lambda lib, s=size: program(lib, s), torch)


def test_instance_norm_features_mismatch_warns_or_raises_as_torch():
    x = np.ones((1, 1, 1, 2))
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        gradkit.nn.InstanceNorm2d(2)(gradkit.tensor(x))
    assert _call(lambda lib: lib.nn.InstanceNorm2d(2, affine=True)(lib.ones(1, 1, 1, 2)),
                 gradkit) == _call(lambda lib: lib.nn.InstanceNorm2d(2, affine=True)(
                     lib.ones(1, 1, 1, 2)), torch)


@pytest.mark.filterwarnings("ignore:input's size at dim=1")
def test_double_backward_through_instance_norm_and_inplace_relu():
    """torch's test_inplace_view_backward (issue #10532), its first half: no error, x intact."""
    results = []
    for lib in (gradkit, torch):
        net = lib.nn.Sequential(lib.nn.InstanceNorm2d(2), lib.nn.ReLU(True))
        x = lib.tensor([[[[1.0, 1.0]]]], requires_grad=True)
        (g,) = lib.autograd.grad(net(x).pow(2), [x], grad_outputs=x.new_ones(x.shape),
                                 create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), [x])
        results.append((g, gg, x))
    for ours, theirs in zip(*results, strict=True):
        _same(ours, theirs)


def test_hook_on_batch_norm_output():
    """torch's test_hooks_cpp: a tensor hook on an eval BatchNorm1d's output runs once."""
    for lib in (gradkit, torch):
        bn = lib.nn.BatchNorm1d(5, affine=False).double().eval()
        counter = [0]

        def bw_hook(grad, counter=counter):
            counter[0] += 1
            return grad * 2
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        z = bn(x)
        z.register_hook(bw_hook)
        z.sum().backward()
        assert counter[0] == 1
        np.testing.assert_allclose(_numpy(x.grad), 2 / np.sqrt(1 + 1e-5) * np.ones((5, 5)))


def test_batch_norm_of_an_empty_integer_batch_runs_no_kernel_as_torch():
    """fuzzer, breadth seed 2792: torch's dtype check lives in a kernel an empty input skips."""
    for training in (False, True):
        out = gradkit.nn.functional.batch_norm(gradkit.ones(0, 3, 2, dtype=gradkit.int64),
                                               gradkit.zeros(3), gradkit.ones(3), training=training)
        expected = torch.nn.functional.batch_norm(torch.ones(0, 3, 2, dtype=torch.int64),
                                                  torch.zeros(3), torch.ones(3), training=training)
        _same(out, expected)


@pytest.mark.parametrize("name", ["BatchNorm1d_3d", "InstanceNorm2d_tracked", "ConvTranspose2d",
                                  "MaxPool1d", "AdaptiveAvgPool2d"])
def test_module_on_a_cuda_device_matches_the_cpu(monkeypatch, name):
    """On the strict CuPy stand-in (tests/strict_xp.py): no NumPy-only code in the layers."""
    import strict_xp
    strict_xp.install(monkeypatch)
    make, shape = MODULES[name]
    x = np.random.default_rng(0).standard_normal(shape)
    results = []
    for device in ("cpu", "cuda"):
        gradkit.manual_seed(0)
        module = make(gradkit).double().to(device)
        gx = gradkit.tensor(x, device=device, requires_grad=True)
        out = module(gx)
        out.sum().backward()
        module.eval()
        results.append([out.cpu(), gx.grad.cpu(), module(gx).cpu()]
                       + [v.cpu() for v in module.state_dict().values()])
    for cpu, gpu in zip(*results, strict=True):
        np.testing.assert_allclose(_numpy(gpu), _numpy(cpu), rtol=1e-12, atol=1e-12)
