"""torch's test/test_nn.py (480k-640k): batch norm, recurrent layers, gradient clipping,
module conversion, fusion utilities, the transformer encoder layer and grid_sample.

Each program runs on gradkit and on torch 2.13 (``same_as_torch``); the parameters are set
from the same NumPy data (or torch's cos(arange) pattern) so both libraries compute alike.
"""
import io
import itertools
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import gradkit
from tensor_twins import data, same_as_torch


def _set_parameters(module, m, pattern="cos"):
    """Every parameter from the same numbers on both libraries (torch's transformer tests:
    cos(arange))."""
    with m.no_grad():
        for i, p in enumerate(module.parameters()):
            values = (np.cos(np.arange(p.numel())) if pattern == "cos"
                      else data(p.numel(), seed=i) * 0.3)
            p.copy_(m.tensor(values.reshape(tuple(p.shape)), dtype=p.dtype))
    return module


@pytest.mark.parametrize("training", (False, True))
def test_batchnorm_grad_and_gradgrad(training):
    def program(m):
        x = m.arange(4 * 5 * 6, dtype=m.float64).view(4, 5, 6).requires_grad_()
        weight = m.arange(1, 6, dtype=m.float64, requires_grad=True)
        bias = m.arange(5, dtype=m.float64, requires_grad=True)
        mean, var = 1 - m.arange(5, dtype=m.float64), 2 * m.arange(5, dtype=m.float64)
        inputs = (x, mean, var, weight, bias, training, 0.1, 0.0001)
        f = m.nn.functional.batch_norm
        return m.autograd.gradcheck(f, inputs), m.autograd.gradgradcheck(f, inputs)
    assert same_as_torch(program, count_warnings=False) == [True, True]


@pytest.mark.parametrize("ndim", (2, 3))
def test_batchnorm_eval_affine_and_simple_average(ndim):
    def program(m):
        bn = m.nn.BatchNorm1d(3).eval()
        x = m.tensor(np.random.default_rng(0).random([3] * ndim), dtype=m.float32,
                     requires_grad=True)
        grad = m.tensor(np.random.default_rng(1).random([3] * ndim), dtype=m.float32)
        outs = []
        for _ in range(2):
            x.grad = None
            out = bn(x)
            out.backward(grad)
            outs.append((out, x.grad))
        plain, affine = m.nn.BatchNorm1d(3, affine=False), m.nn.BatchNorm1d(3)
        for module in (affine, plain):
            x.grad = None
            out = module(x)
            out.backward(m.ones_like(out))
            outs.append((out, x.grad))
        return outs
    outs = same_as_torch(program, rtol=1e-5, atol=1e-5)  # (training grads of ones: ~0 each)
    for first, second in (outs[:2], outs[2:]):  # torch: eval repeats; unit affine is none
        np.testing.assert_array_equal(first[0][3], second[0][3])
        np.testing.assert_array_equal(first[1][3], second[1][3])


def test_batchnorm_track_running_stats_false_ignores_eval():
    def program(m):
        bn = m.nn.BatchNorm1d(3, track_running_stats=False)
        x = m.tensor(data(4, 3), dtype=m.float32, requires_grad=True)
        first = bn(x)
        return first, bn.eval()(x)
    first, second = same_as_torch(program)
    np.testing.assert_array_equal(first[3], second[3])


def test_batchnorm_simple_average_and_update_stats():
    def program(m):
        bn = m.nn.BatchNorm1d(3, momentum=None)
        d1, d2 = m.tensor(data(4, 3), dtype=m.float32), m.tensor(data(4, 3, seed=1),
                                                                  dtype=m.float32)
        stats = []
        for batch in (d1, d2):
            bn(batch)
            stats.append((bn.running_mean.clone(), bn.running_var.clone()))
            bn.reset_running_stats()
        res3, res4 = bn(d1), bn(d2)
        tracked = bn.num_batches_tracked.clone()
        bn.eval()
        before = bn.running_mean.clone()
        bn(d1)
        return stats, res3, res4, bn.running_mean, bn.running_var, tracked, before
    stats, _, _, mean, var, tracked, before = same_as_torch(program, rtol=1e-5)
    np.testing.assert_allclose(mean[3], (stats[0][0][3] + stats[1][0][3]) / 2, rtol=1e-6)
    np.testing.assert_allclose(var[3], (stats[0][1][3] + stats[1][1][3]) / 2, rtol=1e-6)
    assert tracked[3] == 2 and (before[3] == mean[3]).all()


@pytest.mark.parametrize("kind", ("LSTM", "GRU", "RNN"))
def test_rnn_retain_variables(kind):
    def program(m):
        rnn = _set_parameters(getattr(m.nn, kind)(10, 20, num_layers=2).double(), m, "data")
        x = m.tensor(data(5, 6, 10), requires_grad=True)
        out = rnn(x)
        grads = []
        for _ in range(3):
            rnn.zero_grad()
            x.grad = None
            out[0].sum().backward(retain_graph=True)
            grads.append([x.grad.clone()] + [p.grad.clone() for p in rnn.parameters()])
        return grads
    grads = same_as_torch(program)
    for again in grads[1:]:
        for a, b in zip(grads[0], again):
            np.testing.assert_array_equal(a[3], b[3])


@pytest.mark.parametrize("kind", ("LSTM", "GRU"))
@pytest.mark.parametrize("bias", (True, False))
def test_rnn_grad_and_gradgrad(kind, bias):
    def program(m):
        mod = _set_parameters(getattr(m.nn, kind)(4, 4, bias=bias).double(), m, "data")
        x = m.tensor(np.random.default_rng(0).random((1, 3, 4)), requires_grad=True)

        def flat(x):
            out = mod(x)
            return tuple(t if isinstance(t, m.Tensor) else tt for t in out for tt in t)
        return (m.autograd.gradcheck(flat, x, check_batched_grad=False),
                m.autograd.gradgradcheck(flat, x, check_batched_grad=False), flat(x))
    same_as_torch(program, count_warnings=False)


def test_save_lstm_compatibility():
    def program(m):
        model = _set_parameters(m.nn.LSTM(2, 3), m, "data")
        x = m.tensor(data(32, 5, 2), dtype=m.float32)
        expected = model(x)
        state = model.__dict__
        del state["proj_size"]  # a PyTorch 1.7 LSTM's state
        loaded = m.nn.LSTM(2, 3)
        loaded.__setstate__(state)
        return expected, loaded(x), loaded.proj_size
    same_as_torch(program, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("enforce_sorted, lengths", [(True, [5]), (False, [5]),
                                                     (True, [10, 10, 6, 2, 2, 1, 1]),
                                                     (False, [2, 1, 3, 2, 10, 5, 3])])
@pytest.mark.parametrize("proj_size", (0, 2))
@pytest.mark.parametrize("default_hiddens", (True, False))
def test_variable_sequence_packed_lstm(enforce_sorted, lengths, proj_size, default_hiddens):
    def program(m):
        utils = m.nn.utils.rnn
        lstm = _set_parameters(m.nn.LSTM(3, 4, bidirectional=True, num_layers=2,
                                         proj_size=proj_size), m, "data")
        x = m.tensor(data(max(lengths), len(lengths), 3), dtype=m.float32, requires_grad=True)
        hidden = None if default_hiddens else (
            m.tensor(data(4, len(lengths), proj_size or 4, seed=1), dtype=m.float32),
            m.tensor(data(4, len(lengths), 4, seed=2), dtype=m.float32))
        packed = utils.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
        out, (h, c) = lstm(packed, hidden)
        unpacked, unpacked_lengths = utils.pad_packed_sequence(out)
        unpacked.sum().backward()
        return unpacked, unpacked_lengths, h, c, x.grad, [p.grad for p in lstm.parameters()]
    same_as_torch(program, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("norm_type", (0.5, 1.5, 2, 4, "inf"))
@pytest.mark.parametrize("foreach", (False, True))
def test_clip_grad_norm(norm_type, foreach):
    def program(m):
        utils = m.nn.utils
        layer = m.nn.Linear(10, 10)
        grads = (m.arange(1., 101).view(10, 10), m.ones(10).div(1000))
        for p, g in zip(layer.parameters(), grads):
            p.grad = g.clone()
        norm = utils.clip_grad_norm_(layer.parameters(), 2, norm_type=norm_type, foreach=foreach)
        clipped = [p.grad.clone() for p in layer.parameters()]
        for p, g in zip(layer.parameters(), grads):
            p.grad = g.clone()
        total = utils.get_total_norm([p.grad for p in layer.parameters()], norm_type=norm_type,
                                     foreach=foreach)
        utils.clip_grads_with_norm_(layer.parameters(), 2, total, foreach=foreach)
        small = (m.tensor(np.random.default_rng(0).random((10, 10)), dtype=m.float32) / 10000,
                 m.ones(10) / 500)
        for p, g in zip(layer.parameters(), small):
            p.grad.copy_(g)
        small_norm = utils.clip_grad_norm_(layer.parameters(), 2, norm_type=norm_type,
                                           foreach=foreach)
        p1, p2 = m.zeros(10, 10), m.zeros(10, 10)
        p1.grad, p2.grad = grads[0].clone(), grads[0].clone()
        utils.clip_grad_norm_(p1, 2, norm_type=norm_type, foreach=foreach)
        utils.clip_grad_norm_([p2], 2, norm_type=norm_type, foreach=foreach)
        params = layer.parameters()
        for _ in params:
            pass
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            utils.clip_grad_norm_(params, 2, norm_type=norm_type, foreach=foreach)
        return (norm, clipped, total, [p.grad for p in layer.parameters()], small_norm,
                p1.grad, p2.grad, [str(w.message) for w in caught])
    out = same_as_torch(program, rtol=1e-5)
    assert out[-1] == ["`parameters` is an empty generator, no gradient clipping will occur."]


@pytest.mark.parametrize("foreach", (False, True))
def test_clip_grad_value(foreach):
    def program(m):
        layer = m.nn.Linear(10, 10)
        grad_w, grad_b = m.arange(-50., 50).view(10, 10).div_(5), m.ones(10).mul_(2)
        outs = []
        for grads in ([grad_w, grad_b], [grad_w, None]):
            for p, g in zip(layer.parameters(), grads):
                p.grad = None if g is None else g.clone()
            m.nn.utils.clip_grad_value_(layer.parameters(), 2.5, foreach=foreach)
            outs.append([p.grad for p in layer.parameters()])
        p1, p2 = m.zeros(10, 10), m.zeros(10, 10)
        p1.grad, p2.grad = grad_w.clone(), grad_w.clone()
        m.nn.utils.clip_grad_value_(p1, 2.5, foreach=foreach)
        m.nn.utils.clip_grad_value_([p2], 2.5, foreach=foreach)
        return outs, p1.grad, p2.grad
    same_as_torch(program)


@pytest.mark.parametrize("scalar", (math.inf, -math.inf, math.nan, 2e200))
@pytest.mark.parametrize("norm_type", (0.1, 1, 2, 3.5, math.inf, -1, -3.5, 0))
@pytest.mark.parametrize("one_elem, prefix", list(itertools.product((False, True), repeat=2)))
def test_clip_grad_norm_error_if_nonfinite(scalar, norm_type, one_elem, prefix):
    def program(m):
        param = m.ones(10, dtype=m.float64, requires_grad=True)
        (param[1] if one_elem else param).mul(scalar).sum().backward()
        params = [param]
        if prefix:
            first = m.ones(1, dtype=m.float64, requires_grad=True)
            first.mul(1).sum().backward()
            params = [first, param]
        before = [p.grad.clone() for p in params]
        outs = []
        for error in (False, True):
            try:
                outs.append(m.nn.utils.clip_grad_norm_(params, 1, norm_type=norm_type,
                                                       error_if_nonfinite=error))
            except RuntimeError as e:
                outs.append(str(e).split(",")[0])
            params = [p.grad.copy_(b) and p for p, b in zip(params, before)]
        return outs
    same_as_torch(program)


@pytest.mark.parametrize("dtype", ("complex64", "complex128", "float32"))
def test_module_to_complex_warns(dtype):  # torch's test_to_complex
    def program(m):
        layer = m.nn.Linear(3, 5)
        same = layer.to("cpu") is layer
        layer.to(getattr(m, dtype))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer.to(m.cfloat)
        return same, layer.weight.dtype, [str(w.message)[:33] for w in caught]
    same_as_torch(program, count_warnings=False)


@pytest.mark.parametrize("args, kwargs", [(("int64",), {}), ((), {"dtype": "bool"}),
                                          (("tensor",), {}), (("cpu", "int32"), {})])
def test_module_to_refuses_a_non_floating_dtype(args, kwargs):
    def program(m):
        def value(name):
            return m.zeros(1, dtype=m.int32) if name == "tensor" else (
                "cpu" if name == "cpu" else getattr(m, name))
        return m.nn.Linear(2, 2).to(*map(value, args), **{k: value(v) for k, v in kwargs.items()})
    assert "only accepts floating point or complex dtypes" in same_as_torch(program)[2]


def test_skip_init():
    def program(m):
        m.manual_seed(1)
        initialized = m.nn.Linear(5, 1)
        m.manual_seed(1)
        skipped = m.nn.utils.skip_init(m.nn.Linear, 5, 1)
        return (initialized.weight.shape == skipped.weight.shape,
                skipped.weight.device == initialized.weight.device)
    same_as_torch(program)


@pytest.mark.parametrize("kind", ("conv", "linear"))
def test_fuse_bn_weights_keep_requires_grad(kind):
    def program(m):
        layer = m.nn.Conv2d(3, 3, 3) if kind == "conv" else m.nn.Linear(3, 3)
        bn = m.nn.BatchNorm2d(3) if kind == "conv" else m.nn.BatchNorm1d(3)
        fuse = getattr(m.nn.utils, f"fuse_{kind}_bn_weights")
        flags = []
        for w_rg, b_rg in itertools.product((True, False), repeat=2):
            layer.weight.requires_grad, layer.bias.requires_grad = w_rg, b_rg
            weight, bias = fuse(layer.weight, layer.bias, bn.running_mean, bn.running_var,
                                bn.eps, bn.weight, bn.bias)
            flags.append((weight.requires_grad, bias.requires_grad))
        return flags
    assert same_as_torch(program) == [[True, True], [True, False], [False, True], [False, False]]


def _consume_prefix_program(m):
    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = m.nn.Conv2d(3, 3, 3, bias=True)
            self.conv2 = m.nn.Conv2d(3, 3, 3, bias=False)

    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear1 = m.nn.Linear(5, 5)
            self.linear2 = m.nn.Linear(5, 5)
            self.bn = m.nn.BatchNorm2d(2)
            self.block = Block()

    consume = m.nn.modules.utils.consume_prefix_in_state_dict_if_present
    outs = []
    for net in (m.nn.Module(), Net()):
        state = net.state_dict()
        consume(state, "module.")
        outs.append((list(state.keys()), list(state._metadata.keys())))
    state = net.state_dict()
    ddp = OrderedDict((f"module.{k}", v) for k, v in state.items())
    ddp._metadata = OrderedDict({"": state._metadata[""]})
    ddp._metadata.update(("module" if k == "" else f"module.{k}", v)
                         for k, v in state._metadata.items())
    consume(ddp, "module.")
    outs.append((list(ddp.keys()), list(ddp._metadata.keys())))
    plain = OrderedDict(a=1, b=2)
    consume(plain, "a")  # no _metadata: only the keys
    return outs, list(plain.keys())


def test_state_dict_metadata():
    def program(m):
        net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.Sequential(m.nn.BatchNorm1d(2)))
        seen = []
        net[1].register_state_dict_post_hook(lambda *args: seen.append(args[3]) and None)
        state = net.state_dict()
        given = net.state_dict(destination={})  # a plain dict gets none
        return dict(state._metadata), hasattr(given, "_metadata"), seen[0] is state._metadata["1"]
    metadata, given, same = same_as_torch(program)
    assert list(metadata) == ["", "0", "1", "1.0"] and metadata["1.0"] == {"version": 2}


def test_consume_prefix_in_state_dict_if_present():
    outs, plain = same_as_torch(_consume_prefix_program)
    assert outs[1] == outs[2] and plain == ["b", ""]


@pytest.mark.parametrize("batch_first", (True, False))
@pytest.mark.parametrize("training", (True, False))
@pytest.mark.parametrize("activation", ("relu", "gelu"))
def test_transformer_encoder_layer_deterministic(batch_first, training, activation):
    inputs = ([[[20., 30., 40., 50.]]], [[[1., 2., 3., 4.]], [[5., 6., 7., 8.]]],
              data(5, 2, 4, seed=4).tolist())

    def program(m):
        model = m.nn.TransformerEncoderLayer(4, 2, 16, 0.0, activation, batch_first=batch_first)
        _set_parameters(model, m)
        if not training:
            model.eval()
        outs = []
        with m.no_grad() if not training else m.enable_grad():
            for values in inputs:
                x = m.tensor(values)
                x = x.transpose(1, 0) if batch_first and x.shape[0] > 1 else x
                batch = x.shape[0] if batch_first else x.shape[1]
                length = x.shape[1] if batch_first else x.shape[0]
                mask = m.zeros(batch, length, dtype=m.bool)
                mask[0, -1] = length > 1
                outs.append((model(x), model(x, src_key_padding_mask=mask)))
        return outs
    outs = same_as_torch(program, rtol=1e-5, atol=1e-6)
    if activation == "relu":  # torch's reference numbers
        np.testing.assert_allclose(outs[0][0][3].reshape(-1),
                                   [2.258703, 0.127985, -0.697881, 0.170862], atol=1e-5)


@pytest.mark.parametrize("masks", ("src_mask", "src_key_padding_mask", "both"))
def test_transformer_encoder_layer_eval_takes_both_mask_kinds(masks):
    # torch's test_transformerencoderlayer_fast_path (d_model 512 there), float64, no_grad
    def program(m):
        model = m.nn.TransformerEncoderLayer(d_model=32, nhead=8, batch_first=True,
                                             dtype=m.float64, dropout=0)
        _set_parameters(model, m, "data")
        model.eval()
        src = m.tensor(np.random.default_rng(0).random((4, 10, 32)))
        kwargs = {}
        if masks != "src_key_padding_mask":
            kwargs["src_mask"] = m.zeros(10, 10).to(m.bool)
        if masks != "src_mask":
            kwargs["src_key_padding_mask"] = m.zeros(4, 10).to(m.bool)
        with m.no_grad():
            return model(src, **kwargs), model(src)
    with_masks, without = same_as_torch(program, rtol=1e-10)
    np.testing.assert_allclose(with_masks[3], without[3], rtol=1e-12)


def test_module_to_empty_non_recursive():
    # torch's test moves a meta module (gradkit has no meta device): the same on the CPU
    def program(m):
        class Layer(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = m.nn.Parameter(m.randn(5, 5))
                self.register_buffer("buf", m.randn(5))

        class Outer(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = m.nn.Parameter(m.randn(3, 5))
                self.register_buffer("buf1", m.randn(5))
                self.layer = Layer()
        outer = Outer()
        before = [outer.weight, outer.buf1, *outer.layer.parameters(), *outer.layer.buffers()]
        outer.to_empty(device="cpu", recurse=False)
        after = [outer.weight, outer.buf1, *outer.layer.parameters(), *outer.layer.buffers()]
        return ([a is b for a, b in zip(before, after)],
                isinstance(outer.weight, m.nn.Parameter), outer.weight.shape)
    assert same_as_torch(program)[0] == [True, False, True, True]  # (a parameter keeps its object)


@pytest.mark.parametrize("padding_mode", ("reflection", "border", "zeros"))
def test_grid_sample_nan_inf(padding_mode):
    def program(m):
        grid = m.tensor([[[[math.nan, 0], [0, math.inf]]]])
        return m.nn.functional.grid_sample(m.zeros([1, 1, 3, 3]), grid, mode="nearest",
                                           padding_mode=padding_mode, align_corners=False)
    assert not same_as_torch(program)[3].any()


@pytest.mark.parametrize("swap", (True, False))
@pytest.mark.parametrize("reduction", ("none", "mean", "sum"))
def test_triplet_margin_with_distance_loss(swap, reduction):
    def program(m):
        a, p, n = (m.tensor(data(5, 10, seed=s), requires_grad=True) for s in range(3))
        F = m.nn.functional

        def cosine(x, y):
            return 1.0 - F.cosine_similarity(x, y)
        outs = [F.triplet_margin_loss(a, p, n, margin=1.5, swap=swap, reduction=reduction),
                F.triplet_margin_with_distance_loss(a, p, n, margin=1.5, swap=swap,
                                                    reduction=reduction)]
        for fn in (m.nn.PairwiseDistance(), cosine):
            loss = m.nn.TripletMarginWithDistanceLoss(distance_function=fn, margin=0.5,
                                                      swap=swap, reduction=reduction)
            outs.append(loss(a, p, n))
            outs.append(m.autograd.gradcheck(loss, (a, p, n)))
        return outs
    outs = same_as_torch(program)
    np.testing.assert_allclose(outs[0][3], outs[1][3], rtol=1e-6, atol=1e-6)


def test_gradkit_has_no_torch_import():
    assert "torch" not in gradkit.nn.modules.__dict__


def test_state_dict_metadata_survives_save_and_load():
    def program(m):
        net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.BatchNorm1d(2))
        buffer = io.BytesIO()
        m.save(net.state_dict(), buffer)
        buffer.seek(0)
        return dict(m.load(buffer)._metadata)
    assert same_as_torch(program)["1"] == {"version": 2}


@pytest.mark.parametrize("with_metadata", (True, False))
def test_load_state_dict_pre_hooks_get_the_local_metadata(with_metadata):
    def program(m):
        net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.BatchNorm1d(2))
        seen = []
        for module in (net, net[1]):
            module.register_load_state_dict_pre_hook(
                lambda module, state, prefix, local, *rest: seen.append((prefix, dict(local))))
        state = net.state_dict()
        net.load_state_dict(state if with_metadata else dict(state))
        return seen
    seen = same_as_torch(program)
    assert seen[1] == ["1.", {"version": 2} if with_metadata else {}]


@pytest.mark.parametrize("dims", (2, 3))
def test_grid_sample_of_a_strided_view_is_the_contiguous_result(dims):
    # torch's test_grid_sample_large_index_2d/3d at a small size: a view with a large stride
    # samples (and takes gradients) as a contiguous copy does
    modes = ("nearest", "bilinear", "bicubic") if dims == 2 else ("nearest", "bilinear")

    def program(m):
        shape = (1, 1, 5, 6 * 8) if dims == 2 else (1, 1, 2, 5, 6 * 8)
        im = m.zeros(shape, dtype=m.float64)
        view = im[..., 7::8]
        small = m.tensor(np.random.default_rng(0).random(tuple(view.shape)))
        view[...] = small
        view.requires_grad, small.requires_grad = True, True
        coords = m.tensor(np.random.default_rng(1).random((1,) + (1,) * (dims - 2) + (4, 4, dims))
                          * 2.2 - 1.1)
        outs = []
        for mode, padding, align in itertools.product(modes, ("zeros", "border", "reflection"),
                                                      (True, False)):
            a = m.nn.functional.grid_sample(small, coords, mode=mode, padding_mode=padding,
                                            align_corners=align)
            b = m.nn.functional.grid_sample(view, coords, mode=mode, padding_mode=padding,
                                            align_corners=align)
            a.sum().backward()
            b.sum().backward()
            outs.append((a, b, small.grad.clone(), view.grad.clone()))
            small.grad.zero_()
            view.grad.zero_()
        return outs
    for a, b, grad_a, grad_b in same_as_torch(program, rtol=1e-10):
        np.testing.assert_array_equal(a[3], b[3])
        np.testing.assert_array_equal(grad_a[3], grad_b[3])


def test_fully_padded_sequence_in_eval_known_difference():
    # Known: torch's inference fast path (eval, no_grad, batch_first) gives NaN for a fully
    # padded sequence; gradkit has no fast path and gives what torch's other path gives
    # (test_transformerencoderlayer asserts both of torch's answers)
    def program(m, eval_mode):
        model = _set_parameters(m.nn.TransformerEncoderLayer(4, 2, 16, 0.0, batch_first=True), m)
        if eval_mode:
            model.eval()
        with m.no_grad():
            return model(m.tensor([[[20., 30., 40., 50.]]]),
                         src_key_padding_mask=m.tensor([[True]])).numpy()
    ours = program(gradkit, eval_mode=True)
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(ours, program(gradkit, eval_mode=False))
    torch = pytest.importorskip("torch")
    assert np.isnan(program(torch, eval_mode=True)).all()
    np.testing.assert_allclose(ours, program(torch, eval_mode=False), rtol=1e-6)
