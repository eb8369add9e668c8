"""torch's test_nn.py (characters 320k-480k): LayerNorm, GroupNorm, InstanceNorm, BatchNorm,
LocalResponseNorm and rms_norm, each program run under gradkit and torch 2.13."""
import numpy as np
import pytest

import gradkit
from tests.nn_torch_programs import filled, grads, leaf
from tests.tensor_twins import data, same_as_torch


def positive(m, *shape, seed=0, dtype=None):
    """U(0, 10)-like data (torch's tests draw uniform_(0, 10)), as a leaf."""
    t = m.tensor(np.abs(data(*shape, seed=seed)) * 5, dtype=dtype or m.float64)
    return t.requires_grad_()


def test_layer_norm_grads_with_create_graph_flag():
    def program(m):
        x = leaf(m, 4, 4, 16)
        ln = m.nn.LayerNorm((16,), 1e-5, True).double()
        with m.no_grad():
            ln.weight = m.nn.Parameter(0.1 * m.ones_like(ln.weight))
        g1 = m.autograd.grad(ln(x).sum(), x, create_graph=False)[0]
        g2 = m.autograd.grad(ln(x).sum(), x, create_graph=True)[0]
        return g1, g2
    got = same_as_torch(program)
    np.testing.assert_allclose(got[0][3], got[1][3], atol=1e-12)


def test_layer_norm_eps():
    def program(m):
        x = m.Tensor([[[2.0, 2.0], [14.0, 14.0]], [[2.0, 2.0], [14.0, 14.0]]])
        return m.nn.LayerNorm(2, eps=1e-6, elementwise_affine=False).forward(x)
    assert not same_as_torch(program)[3].any()


@pytest.mark.parametrize("shape, ndim", [((3, 4), 1), ((3, 4, 5), 2), ((4, 3, 5, 3), 1),
                                         ((3, 5, 4, 3, 4), 3)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_layer_norm_general(shape, ndim, dtype):
    def program(m):
        x = positive(m, *shape, dtype=getattr(m, dtype))
        ln = m.nn.LayerNorm(shape[-ndim:], eps=0).to(getattr(m, dtype))
        with m.no_grad():
            ln.weight.fill_(1.3)
            ln.bias.fill_(0.4)
        out = ln(x)
        flat = out.view(*shape[:-ndim], -1)
        return out, flat.mean(-1), flat.var(-1, unbiased=False), grads(m, out, [x, ln.weight])
    # float16 gradients: torch's kernel sums in its own order (its test allows 1e-1)
    got = same_as_torch(program, rtol=1e-2 if dtype == "float16" else 1e-5, atol=1e-2)
    np.testing.assert_allclose(got[1][3].astype(float), 0.4, atol=2e-2)


@pytest.mark.parametrize("weight_dtype", ["float16", "float32"])
@pytest.mark.parametrize("shape, ndim", [((3, 5, 4, 3), 2), ((7, 33), 1), ((2, 3, 40), 1)])
def test_layer_norm_float16_rounds_once(shape, ndim, weight_dtype):
    """torch's float16 layer_norm computes in float32 and rounds once: bit for bit."""
    def program(m):
        x = m.tensor(np.abs(data(*shape)) * 5, dtype=m.float16)
        w, b = (m.tensor(data(*shape[-ndim:], seed=s), dtype=getattr(m, weight_dtype))
                for s in (1, 2))
        return m.nn.functional.layer_norm(x, shape[-ndim:], w, b)
    same_as_torch(program, rtol=0, atol=0)


@pytest.mark.parametrize("norm_shape, input_shape", [
    ((), ()), ((2, 3), (3,)), ((2,), (1, 2, 3)), ((10,), (2, 3)), (10, (2, 3))])
def test_layer_norm_bad_shapes(norm_shape, input_shape):
    got = same_as_torch(lambda m: m.nn.LayerNorm(norm_shape)(m.ones(input_shape)))
    assert got[:2] == ("raises", "RuntimeError")


def test_layer_norm_numeric():
    def program(m):
        shape = [16, 16, 9]
        ln = m.nn.LayerNorm(shape)
        x = m.tensor(np.abs(data(2, *shape)), dtype=m.float32)
        xv = x.view(-1, 16 * 16 * 9)
        ref = (xv - xv.mean(-1, keepdim=True)) / m.sqrt(
            xv.var(-1, unbiased=False, keepdim=True) + ln.eps)
        return ln(x), ref.view(*x.shape)
    got = same_as_torch(program, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0][3], got[1][3], atol=1e-5)


def test_rmsnorm_numeric_float16():
    def program(m):
        x = m.tensor(np.abs(data(1, 2, 3)), dtype=m.float16)
        w = m.tensor(np.abs(data(1, 2, 3, seed=1)), dtype=m.float16)
        y = m.nn.functional.rms_norm(x, (1, 2, 3), w, 0.5)
        xf = x.float()
        ref = (xf * m.rsqrt(xf.pow(2).mean(dim=[2, 1, 0], keepdim=True) + 0.5) * w).type_as(x)
        return y, ref
    got = same_as_torch(program, rtol=0, atol=0)
    np.testing.assert_allclose(got[0][3].astype(float), got[1][3].astype(float), rtol=1e-3)


GOOD_GROUPS = [((1, 2, 3, 4), 2), ((2, 3, 10), 3), ((3, 1, 1, 1, 2), 1), ((2, 6, 4, 2, 2), 3),
               ((1, 256, 1, 1), 32)]


@pytest.mark.parametrize("shape, groups", GOOD_GROUPS)
def test_group_norm_general(shape, groups):
    def program(m):
        x = positive(m, *shape)
        gn = filled(m.nn.GroupNorm(groups, shape[1], eps=0).double(), m)
        out = gn(x)
        flat = ((out.view(shape[0], shape[1], -1) - gn.bias.view(-1, 1))
                / gn.weight.view(-1, 1)).view(shape[0], groups, -1)
        return out, flat.mean(-1), flat.var(-1, unbiased=False), grads(m, out, [x, gn.weight])
    got = same_as_torch(program, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(got[2][3], 1, atol=1e-5)


@pytest.mark.parametrize("shape, groups", [((1, 2, 3, 4), 3), ((2, 3, 10), 2),
                                           ((3, 1, 1, 1, 2), 10), ((2, 6, 4, 2, 2), 4)])
def test_group_norm_bad_groups(shape, groups):
    got = same_as_torch(lambda m: m.nn.GroupNorm(groups, shape[1]))
    assert got[:2] == ("raises", "ValueError")


def test_group_norm_one_value_per_group_and_empty():
    got = same_as_torch(lambda m: m.nn.GroupNorm(10, 10)(m.rand(10)[None, :, None]))
    assert got[:2] == ("raises", "ValueError")

    def program(m):
        gn = filled(m.nn.GroupNorm(2, 4).double(), m)
        x = leaf(m, 0, 4, 2, 2)
        out = gn(x)
        return out, grads(m, out, [x, gn.weight, gn.bias])
    got = same_as_torch(program)
    assert not got[1][1][3].any()


@pytest.mark.parametrize("shape, groups, fmt", [
    ((4, 8, 10, 10), 4, "channels_last"), ((2, 30, 9, 9), 3, "channels_last"),
    ((2, 9, 7, 11, 15), 3, "channels_last_3d")])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_groupnorm_nhwc(shape, groups, fmt, dtype):
    def program(m):
        fmt_ = getattr(m, fmt)
        x = m.tensor(data(*shape), dtype=getattr(m, dtype))
        x = x.contiguous(memory_format=fmt_).requires_grad_()
        gn = filled(m.nn.GroupNorm(groups, shape[1]), m).to(getattr(m, dtype))
        out = gn(x)
        g = m.tensor(data(*shape, seed=3), dtype=x.dtype).contiguous(memory_format=fmt_)
        out.backward(g)
        return out, out.is_contiguous(memory_format=fmt_), x.grad, gn.weight.grad, gn.bias.grad
    rtol = {"float64": 1e-9, "float32": 1e-4, "float16": 1e-2}[dtype]
    got = same_as_torch(program, rtol=rtol, atol=rtol)
    assert got[1] is True


def test_group_norm_memory_format_of_input_and_grad():
    def program(m):
        out = []
        for fin in (m.contiguous_format, m.channels_last):
            for fgrad in (m.contiguous_format, m.channels_last):
                gn = m.nn.GroupNorm(2, 4).double()
                x = m.tensor(data(2, 4, 4, 4)).to(memory_format=fin).requires_grad_()
                y = gn(x)
                y.backward(m.tensor(data(2, 4, 4, 4, seed=1)).to(memory_format=fgrad))
                out += [y, x.grad]
        return out
    same_as_torch(program)


def test_group_norm_numeric():
    def program(m):
        gn = m.nn.GroupNorm(2, 8)
        x = m.tensor(np.abs(data(1, 8, 8, 8, 6)), dtype=m.float32)
        xv = x.view(1, 2, -1)
        ref = (xv - xv.mean(-1, keepdim=True)) / m.sqrt(
            xv.var(-1, unbiased=False, keepdim=True) + gn.eps)
        return gn(x), ref.view(*x.shape)
    got = same_as_torch(program, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0][3], got[1][3], atol=1e-5)


@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (4, 3, 9)),
                                         ("InstanceNorm2d", (3, 4, 7, 5)),
                                         ("InstanceNorm3d", (3, 3, 4, 2, 5))])
def test_instance_norm_general(name, shape):
    def program(m):
        cls = getattr(m.nn, name)
        c = shape[1]
        x = positive(m, *shape)
        norm = cls(c, eps=0).double()
        out = norm(x)
        g = grads(m, out, [x])
        norm.eval()
        out_eval = norm(x)
        tracked = cls(c, momentum=1, eps=0, track_running_stats=True).double()
        tracked(x)
        running = (tracked.running_mean, tracked.running_var)
        tracked.eval()
        delta = (tracked.running_var.sqrt() * m.arange(c, dtype=m.float64)).view(
            -1, *[1] * (len(shape) - 2))
        shifted = tracked(x + delta).transpose(0, 1).reshape(c, -1).mean(1)
        return out, g, out_eval, grads(m, out_eval, [x]), running, shifted
    got = same_as_torch(program, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got[5][3], np.arange(shape[1]), atol=1e-9)


@pytest.mark.parametrize("name", ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"])
@pytest.mark.parametrize("no_batch_dim", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_instancenorm_input_channels_not_num_features(name, no_batch_dim, affine):
    def program(m):
        norm = getattr(m.nn, name)(4, affine=affine)
        size = [2] * (int(name[-2]) + 1)  # torch's _get_no_batch_dim
        return norm(m.ones(size if no_batch_dim else [3] + size)).shape
    got = same_as_torch(program)
    if affine:
        assert got[:2] == ("raises", "ValueError") and "expected input's size at dim=" in got[2]


def test_instancenorm_too_few_values():
    got = same_as_torch(lambda m: m.nn.InstanceNorm1d(10)(m.rand(10)[None, :, None]))
    assert got[:2] == ("raises", "ValueError")

    def program(m):
        out = []
        for i, name in enumerate(["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]):
            norm = getattr(m.nn, name)(3, track_running_stats=True)
            x = m.ones(10, 3, *[1] * (i + 1))
            try:
                norm(x)
                out.append("ran")
            except ValueError as error:
                out.append(str(error))
            out.append(norm.eval()(x))
        return out
    same_as_torch(program)


def test_batchnorm_and_local_response_norm_empty():
    def program(m):
        bn = m.nn.BatchNorm2d(3).double()
        x = leaf(m, 0, 3, 2, 2)
        out = bn(x)
        g = grads(m, out, [x, bn.weight, bn.bias])
        lrn = m.nn.LocalResponseNorm(2)
        y = m.ones(0, 5, 24, 24, requires_grad=True)
        lout = lrn(y)
        return out, g, bn.running_mean, bn.running_var, lout, grads(m, lout, [y])
    got = same_as_torch(program)
    assert got[3][3].tolist() == [1.0, 1.0, 1.0]


NORMS = {
    "batch_norm": lambda f, x, w, b: f.batch_norm(x, None, None, w, b, training=True),
    "batch_norm_eval": lambda f, x, w, b: f.batch_norm(
        x, w.detach() * 0.1, w.detach() + 0.5, w, b, training=False),
    "instance_norm": lambda f, x, w, b: f.instance_norm(x, weight=w, bias=b),
    "group_norm": lambda f, x, w, b: f.group_norm(x, 4, w, b),
}


@pytest.mark.parametrize("param_dtype", ["float16", "float32"])
@pytest.mark.parametrize("name", sorted(NORMS))
def test_norms_of_float16_as_torch(name, param_dtype):
    """torch's _test_GroupNorm_cpu_mixed_dtype and kin with float16 (bfloat16 has no NumPy
    dtype): float32 math, the result in the input's dtype rounded once (with float16 saved
    statistics when every parameter is float16, for batch norm's forward), bit for bit; the
    gradients within torch's own summation order."""
    def program(m):
        x = m.tensor(data(2, 8, 5, 4) * 3, dtype=m.float16).requires_grad_()
        w, b = (m.tensor(np.abs(data(8, seed=s)) + 0.2, dtype=getattr(m, param_dtype))
                .requires_grad_() for s in (1, 2))
        return NORMS[name](m.nn.functional, x, w, b)
    # group norm: torch's kernel forms x * (rstd w) + (b - mean rstd w) in float32, where
    # gradkit forms (x - mean) rstd w + b: a float32 rounding apart, one float16 ulp at most
    tol = 1e-3 if name == "group_norm" else 0
    same_as_torch(program, rtol=tol, atol=0)

    def backward(m):
        x = m.tensor(data(2, 8, 5, 4) * 3, dtype=m.float16).requires_grad_()
        w, b = (m.tensor(np.abs(data(8, seed=s)) + 0.2, dtype=getattr(m, param_dtype))
                .requires_grad_() for s in (1, 2))
        return grads(m, NORMS[name](m.nn.functional, x, w, b), [x, w, b])
    same_as_torch(backward, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("weight_dtype", ["float16", "float32"])
@pytest.mark.parametrize("shape, ndim", [((3, 5, 4, 3), 2), ((7, 33), 1), ((64, 100), 1)])
def test_layer_norm_float16_input_gradient_as_torch(shape, ndim, weight_dtype):
    """torch's float16 backward reads the mean and rstd its forward saved (float16 ones with
    float16 parameters): the input's gradient within one float16 ulp (bit for bit but where
    float32 sums of a long row round differently), the parameters' within torch's summation
    order."""
    def program(m, part):
        x = m.tensor(np.abs(data(*shape)) * 5, dtype=m.float16).requires_grad_()
        w, b = (m.tensor(np.abs(data(*shape[-ndim:], seed=s)) + 0.2,
                         dtype=getattr(m, weight_dtype)).requires_grad_() for s in (1, 2))
        y = m.nn.functional.layer_norm(x, shape[-ndim:], w, b)
        return grads(m, y, [x, w, b])[part]
    same_as_torch(lambda m: program(m, 0), rtol=1e-3, atol=0)
    same_as_torch(lambda m: [program(m, 1), program(m, 2)], rtol=1e-2, atol=1e-2)


LAYOUTS = {  # (shape, how the input is laid out)
    "channels last": ((2, 4, 3, 5), lambda m, x: x.contiguous(memory_format=m.channels_last)),
    "sliced channels last": ((4, 4, 4, 4), lambda m, x: x.contiguous(
        memory_format=m.channels_last)[:, :, ::2]),
    "transposed": ((2, 4, 3, 5), lambda m, x: x.transpose(2, 3)),
    "batch and channel swapped": ((2, 4, 3, 5), lambda m, x: x.transpose(0, 1)),
    "expanded": ((4, 4, 4, 4), lambda m, x: x[:, :, :1].expand(4, 4, 4, 4)),
    "3-d transposed": ((2, 4, 3, 2, 2), lambda m, x: x.transpose(3, 4)),
    "channels last, size-1 height": ((2, 4, 1, 5), lambda m, x: x.contiguous(
        memory_format=m.channels_last)),
}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_batch_and_group_norm_result_layout_as_torch(layout, dtype):
    """torch's CPU kernels allocate the result channels last where the input's strides suggest
    it (batch norm's also where the input is channels-last contiguous), else in C order: a
    transposed input's result is C order (lanes nnB and nnC each had half of this)."""
    torch = pytest.importorskip("torch")
    shape, lay = LAYOUTS[layout]
    strides = []
    for m in (torch, gradkit):
        x = lay(m, m.tensor(data(*shape)).to(getattr(m, dtype)))
        c = x.shape[1]
        w, b = m.ones(c, dtype=x.dtype), m.zeros(c, dtype=x.dtype)
        outs = (m.nn.functional.batch_norm(x, None, None, w, b, training=True),
                m.nn.functional.batch_norm(x, m.zeros(c, dtype=x.dtype),
                                           m.ones(c, dtype=x.dtype), w, b),
                m.nn.functional.group_norm(x, 2, w, b))
        strides.append([tuple(o.stride()) for o in outs])
    assert strides[1] == strides[0]
