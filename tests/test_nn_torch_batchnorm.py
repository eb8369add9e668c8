"""torch's batch-norm tests of test/test_nn.py (h-nnB: test_batchnorm_nhwc_cpu,
test_batchnorm_half_overflow, test_batchnorm_non_contig_cpu, test_batchnorm_cudnn_half and
test_batchnorm_nonaffine_cuda_half_input on the CPU, test_batchnorm_raises_error_if_*,
test_batchnorm_buffer_update_when_stats_are_not_tracked, test_batchnorm_load_state_dict),
rerun on gradkit and compared with torch 2.13 on the same program.
"""
import numpy as np
import pytest

import gradkit
from tensor_twins import data, same_as_torch

F = gradkit.nn.functional


def _mixed_program(module: str, shape: tuple, layout: str, mixed: bool):
    """torch's helper of test_batchnorm_nhwc_cpu: a float16 input in ``layout``, the module
    float16 or (mixed) float32; what it gives and the gradients, with the layouts."""
    def program(m):
        fmt = getattr(m, layout)
        x = m.tensor(data(*shape), dtype=m.float16).contiguous(memory_format=fmt)
        x.requires_grad_()
        grad = m.tensor(data(*shape, seed=1), dtype=m.float16).contiguous(memory_format=fmt)
        bn = getattr(m.nn, module)(shape[1]).half()
        bn.weight.data.copy_(m.tensor(np.linspace(0.2, 0.9, shape[1])))
        bn.bias.data.copy_(m.tensor(np.linspace(-0.3, 0.4, shape[1])))
        if mixed:
            bn.float()
        out = bn(x)
        out.backward(grad)
        return (out.is_contiguous(memory_format=fmt), x.grad.is_contiguous(memory_format=fmt),
                out.float(), x.grad.float(), bn.weight.grad.float(), bn.bias.grad.float(),
                bn.running_mean.float(), bn.running_var.float(), out.dtype, bn.weight.grad.dtype)
    return program


@pytest.mark.parametrize("module,shape,layout", [
    ("BatchNorm2d", (4, 8, 5, 5), "channels_last"),
    ("BatchNorm2d", (4, 1, 9, 9), "channels_last"),
    ("BatchNorm2d", (4, 9, 1, 1), "channels_last"),
    ("BatchNorm3d", (4, 8, 2, 5, 5), "channels_last_3d"),
    ("BatchNorm3d", (4, 9, 1, 1, 1), "channels_last_3d"),
])
def test_mixed_float16_batch_norm_keeps_the_input_dtype_and_layout(module, shape, layout):
    """A float16 input with float32 parameters runs in float32 and gives float16 (gradkit gave
    float32), channels last in, channels last out (gradkit gave C order)."""
    got = same_as_torch(_mixed_program(module, shape, layout, True), rtol=2e-3, atol=2e-3)
    assert got[:2] == [True, True]
    assert got[8] == ("meta", "torch.float16") and got[9] == ("meta", "torch.float32")


@pytest.mark.parametrize("module,shape,layout", [
    ("BatchNorm2d", (4, 8, 5, 5), "channels_last"),
    ("BatchNorm3d", (4, 8, 2, 5, 5), "channels_last_3d"),
])
def test_float16_batch_norm_of_a_channels_last_input(module, shape, layout):
    same_as_torch(_mixed_program(module, shape, layout, False), rtol=1e-2, atol=1e-2)


def test_non_contiguous_input_that_reads_channels_last_gives_channels_last():
    """test_batchnorm_non_contig_cpu: (1, 3, 2, 1) permuted to (1, 2, 3, 1) is channels-last
    contiguous (not C-contiguous): torch's CPU kernel answers channels last; a float16 input
    with the float32 module stays float16."""
    def program(m):
        x = m.arange(6, dtype=m.float).reshape(1, 3, 2, 1).permute(0, 2, 1, 3)
        bn = m.nn.BatchNorm2d(2).float().eval()
        bn.weight.data.copy_(m.tensor([0.3, 0.7]))
        bn.bias.data.copy_(m.tensor([0.1, 0.2]))
        out = bn(x)
        half = m.arange(24, dtype=m.float16).reshape(1, 3, 2, 4).permute(0, 2, 1, 3)
        return (out.is_contiguous(memory_format=m.channels_last), out.stride(), out,
                bn(half), bn(half).stride())
    assert same_as_torch(program)[0] is True


@pytest.mark.parametrize("make", [
    lambda m: m.tensor(data(2, 3, 4, 5)).transpose(2, 3),
    lambda m: m.tensor(data(2, 3, 4, 5))[:, :, ::2],
    lambda m: m.tensor(data(2, 3, 4, 5)).permute(3, 1, 2, 0),
    lambda m: m.tensor(data(2, 3, 4)).transpose(0, 2),
    lambda m: m.tensor(data(2, 3, 4, 5, 6)).transpose(2, 4),
    lambda m: m.tensor(data(2, 3, 4, 5, 6)).contiguous(memory_format=m.channels_last_3d),
    lambda m: m.tensor(data(1, 3, 1, 1)).expand(2, 3, 4, 5),
    lambda m: m.tensor(data(4, 3, 5, 6)).contiguous(memory_format=m.channels_last)[:, :, ::2],
    lambda m: m.tensor(data(4, 1, 9, 9)).contiguous(memory_format=m.channels_last),
], ids=["transposed", "strided", "permuted", "3d", "5d", "cl3d", "expanded", "cl-sliced",
        "ambiguous"])
def test_result_layout_is_torchs_for_strided_inputs(make):
    """C order unless the input is channels-last contiguous and not C-contiguous (gradkit's
    NumPy arithmetic gave a transposed input's strides back)."""
    def program(m):
        x = make(m)
        c = x.shape[1]
        stats = (m.zeros(c, dtype=x.dtype), m.ones(c, dtype=x.dtype))
        f = m.nn.functional
        return [y.stride() for y in (f.batch_norm(x, None, None, training=True),
                                     f.batch_norm(x, *stats, training=False))]
    same_as_torch(program)


def test_half_overflow_is_avoided_with_float16_and_float32_parameters():
    """test_batchnorm_half_overflow, smaller: 80,000 float16 values per channel (their sum of
    squares overflows float16), float16 or float32 parameters, both layouts."""
    def program(m):
        results = []
        for params, fmt in ((m.half, m.contiguous_format), (m.half, m.channels_last),
                            (m.float, m.channels_last)):
            x = m.tensor(data(2, 2, 200, 200), dtype=m.half).contiguous(memory_format=fmt)
            bn = m.nn.BatchNorm2d(2).to(params)
            out = bn(x.requires_grad_())
            out.backward(m.ones_like(out))
            results += [out.isinf().any(), out.isnan().any(), x.grad.isnan().any(), out.dtype]
        return results
    same_as_torch(program)


@pytest.mark.parametrize("input_dtype,params", [
    ("float16", ("float32", "float32", "float32", "float32")),
    ("float16", ("float32", None, None, None)),
    ("float16", (None, None, "float32", "float32")),
    ("float16", ("float32", "float32", "float16", "float16")),
    ("float16", ("float16", "float16", "float32", "float32")),
    ("float64", ("float32", "float32", "float32", "float32")),
    ("float64", (None, None, "float32", "float32")),
    ("float32", ("float64", "float64", "float64", "float64")),
    ("float32", ("float16", "float16", None, None)),
    ("float32", ("float32", "float32", "float64", "float64")),
    ("float64", ("float64", "float64", "float32", "float32")),
])
@pytest.mark.parametrize("training", [True, False])
def test_parameter_dtypes_are_checked_as_torchs_cpu_kernel(input_dtype, params, training):
    """Mixed when the first given parameter's dtype differs from the input's: then every
    parameter must be float32 and the input float16; else each must be the input's dtype
    (gradkit promoted instead)."""
    if not training and params[2] is None:
        pytest.skip("evaluation needs the running statistics")

    def program(m):
        x = m.tensor(data(4, 3, 5), dtype=getattr(m, input_dtype), requires_grad=True)
        given = [None if d is None else m.tensor(v, dtype=getattr(m, d)) for d, v in
                 zip(params, (np.linspace(0.5, 1, 3), np.linspace(-1, 1, 3), np.zeros(3),
                              np.ones(3)))]
        out = m.nn.functional.batch_norm(x, given[2], given[3], given[0], given[1],
                                         training=training)
        out.float().sum().backward()
        return out, x.grad, given[2]
    same_as_torch(program, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("which", ["running_mean", "running_var"])
@pytest.mark.parametrize("training", [True, False])
def test_running_statistics_that_require_grad_are_refused(which, training):
    def program(m):
        stats = {"running_mean": m.zeros(2), "running_var": m.ones(2)}  # (float32: refused
        stats[which].requires_grad_()  # before the dtypes are)
        return m.nn.functional.batch_norm(m.tensor(data(3, 2, 5), dtype=m.float64),
                                          stats["running_mean"],
                                          stats["running_var"], training=training)
    same_as_torch(program)
    with gradkit.no_grad():  # torch's check is a grad-mode one
        F.batch_norm(gradkit.randn(3, 2, 5), gradkit.zeros(2, requires_grad=True),
                     gradkit.ones(2), training=training)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                       f"'{which}'"):
        stats = {"running_mean": gradkit.zeros(2), "running_var": gradkit.ones(2)}
        stats[which].requires_grad_()
        F.instance_norm(gradkit.randn(3, 2, 5), stats["running_mean"], stats["running_var"],
                        use_input_stats=False)


@pytest.mark.parametrize("duals", [(0,), (1,), (1, 2), (0, 1), (0, 1, 2), (3, 1), (4, 2), (0, 2)])
@pytest.mark.parametrize("training", [True, False])
def test_tangents_of_running_statistics(duals, training):
    """test_batchnorm_raises_error_if_running_var_or_running_mean_have_forward_grad (weight
    and bias added): refused in evaluation when the input, weight or bias has a tangent too;
    tangents on the statistics alone give the result none (gradkit's gave one)."""
    def program(m):
        fw = m.autograd.forward_ad
        args = [m.tensor(data(3, 2, 5)), m.tensor(data(2, seed=1)),
                m.tensor(np.array([0.5, 2.0])), m.tensor(data(2, seed=2)),
                m.tensor(data(2, seed=3))]
        with fw.dual_level():
            d = [fw.make_dual(a, m.tensor(data(*a.shape, seed=9))) if i in duals else a
                 for i, a in enumerate(args)]
            out = m.nn.functional.batch_norm(d[0], d[1].clone(), d[2].clone(), d[3], d[4],
                                             training=training, momentum=-1.2)
            return fw.unpack_dual(out)
    same_as_torch(program, count_warnings=False)  # (torch's first jvp warns of torch.jit)


def test_size_checks_and_one_value_per_channel():
    def program(m):
        f, x, outcomes = m.nn.functional, m.tensor(data(2, 10), dtype=m.float32), []
        for size in (9, 11):
            wrong, right = m.zeros(size), m.ones(10)
            for kwargs in ({"running_mean": wrong, "running_var": right},
                           {"running_mean": right, "running_var": wrong},
                           {"running_mean": right, "running_var": right, "weight": wrong},
                           {"running_mean": right, "running_var": right, "bias": wrong}):
                try:
                    f.batch_norm(x, **kwargs)
                except RuntimeError as error:
                    outcomes.append(str(error))
        return outcomes
    assert same_as_torch(program)[0] == "running_mean should contain 10 elements not 9"
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        gradkit.nn.BatchNorm1d(10)(gradkit.rand(10)[None, :, None])


def test_buffers_are_kept_when_stats_are_not_tracked_and_num_batches_tracked_loads():
    def program(m):
        bn = m.nn.BatchNorm1d(4, track_running_stats=True)
        bn.track_running_stats = False
        before = [t.clone() for t in (bn.num_batches_tracked, bn.running_mean, bn.running_var)]
        bn(m.tensor(data(32, 4), dtype=m.float32))
        kept = [m.equal(a, b) for a, b in
                zip(before, (bn.num_batches_tracked, bn.running_mean, bn.running_var))]
        bn2 = m.nn.BatchNorm2d(3)
        counts = [bn2.state_dict()["num_batches_tracked"]]
        bn2.num_batches_tracked = m.tensor(10)
        counts.append(bn2.state_dict()["num_batches_tracked"])
        bn2.load_state_dict({}, strict=False)
        return kept, counts + [bn2.state_dict()["num_batches_tracked"]]
    assert same_as_torch(program)[0] == [True, True, True]


def test_eval_results_agree_across_layouts():
    """test_batchnorm_nhwc_cuda on the CPU: the same values whatever the input's layout."""
    def program(m):
        model = m.nn.BatchNorm2d(8).eval()
        x = m.tensor(data(2, 8, 5, 5), dtype=m.float32)
        out = []
        for dtype in (m.float32, m.float16):
            model.to(dtype)
            y = x.to(dtype)
            out.append(m.equal(model(y), model(y.contiguous(memory_format=m.channels_last))))
        return out
    assert same_as_torch(program) == [True, True]


@pytest.mark.parametrize("case", ["basic", "one row", "none", "mean only", "3d", "float64",
                                  "float16 mixed", "float16", "int", "1d", "0d", "empty",
                                  "empty channels", "stats require grad", "keywords"])
def test_batch_norm_update_stats(case):
    """test_batch_norm_update_stats and its neighbours: (mean, biased variance), the running
    statistics updated with the unbiased one (gradkit had no batch_norm_update_stats)."""
    def program(m):
        x = m.tensor([[1., 2.], [3., 5.], [4., 0.]])
        rm, rv = m.zeros(2), m.ones(2)
        args = {"basic": (x, rm, rv), "one row": (x[:1], rm, rv), "none": (x, None, None),
                "mean only": (x, rm, None), "float64": (x.double(), rm, rv),
                "3d": (m.arange(12.).reshape(2, 3, 2), m.zeros(3), m.ones(3)),
                "float16 mixed": (x.half(), rm, rv), "float16": (x.half(), None, None),
                "int": (x.long(), None, None), "1d": (m.ones(3), None, None),
                "0d": (m.tensor(1.), None, None), "empty": (m.rand(0, 1), m.rand(1), m.rand(1)),
                "empty channels": (m.rand(2, 0), None, None),
                "stats require grad": (x, m.zeros(2, requires_grad=True), rv)}.get(case)
        if args is None:
            out = m.batch_norm_update_stats(input=x, running_mean=rm, running_var=rv,
                                            momentum=0.5)
        else:
            out = m.batch_norm_update_stats(*args, 0.1)
        return out, [o.requires_grad for o in out], rm, rv
    same_as_torch(program, rtol=1e-3 if "float16" in case else 1e-6)


def test_batch_norm_update_stats_has_no_derivative_and_native_statistics_of_mixed_inputs():
    def program(m):
        x = m.tensor(data(4, 3, 5), dtype=m.float32, requires_grad=True)
        mean, var = m.batch_norm_update_stats(x, None, None, 0.1)
        try:
            (mean.sum() + var.sum()).backward()
        except RuntimeError as error:
            refused = str(error)
        f = m.ones(3)
        native = [m.native_batch_norm(x.detach().half(), f, f, m.zeros(3), m.ones(3), training,
                                      0.1, 1e-5) for training in (True, False)]
        return refused, [[(t.dtype, t.shape) for t in n] for n in native]
    assert same_as_torch(program)[0] == \
        "derivative for aten::batch_norm_update_stats is not implemented"


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_size_of_a_dim_of_a_zero_dim_tensor(dim):
    """torch's wrap_scalar=False message (gradkit gave a range message or a bare IndexError)."""
    same_as_torch(lambda m: m.tensor(1.).size(dim))
    with pytest.raises(IndexError, match=f"Dimension specified as {dim} but tensor has no "
                       "dimensions"):
        gradkit.tensor(1.).size(dim)
