"""torch's test/nn/test_pooling.py, continued (see test_pooling_torch_expectations.py): max
pooling's indices and unbatched inputs, empty outputs, shapes, channels-last inputs, corner
cases, NaN/inf, fractional pooling and float16, compared with torch 2.13."""
import itertools
import math

import numpy as np
import pytest
from expectation_programs import made, same
from test_pooling_torch_expectations import INF, NAN, POOLS, rng
from test_torch_numerics import with_grads

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


# -- indices ---------------------------------------------------------------------------------------

NO_BATCH_CASES = [("MaxPool1d", (3, 5)), ("MaxPool2d", (3, 5, 6)), ("MaxPool3d", (3, 5, 6, 7)),
                  ("AdaptiveMaxPool1d", (3, 5)), ("AdaptiveMaxPool2d", (3, 5, 6)),
                  ("AdaptiveMaxPool3d", (3, 5, 6, 7)), ("FractionalMaxPool2d", (3, 5, 6)),
                  ("FractionalMaxPool3d", (3, 5, 6, 7))]


@pytest.mark.parametrize("name,shape", NO_BATCH_CASES)
def test_maxpool_indices_no_batch_dim(name, shape):
    """test_maxpool_indices_no_batch_dim: an unbatched input's indices are those of a batch of
    one; its node is the pooling's own (torch pools an unbatched input itself: no
    SqueezeBackward above), and its gradients and second derivatives are torch's."""
    x = rng(13).standard_normal(shape)

    def module(m):
        if name.startswith("Fractional"):
            samples = m.full((1, 3, len(shape) - 1), 0.5, dtype=m.float64)
            return getattr(m.nn, name)(2, output_size=2, return_indices=True,
                                       _random_samples=samples)
        return getattr(m.nn, name)(3 if "Adaptive" in name else 2, return_indices=True)

    def program(m):
        t = made(m, x, "float64").requires_grad_()
        values, indices = module(m)(t)
        batched = module(m)(t.unsqueeze(0))[1].squeeze(0)
        (grad,) = m.autograd.grad((values * values).sum(), t, create_graph=True)
        (grad2,) = m.autograd.grad(grad.sum(), t)
        return values, indices, batched, grad, grad2
    same(program)
    t = gradkit.tensor(x, requires_grad=True)
    t_torch = torch.tensor(x, requires_grad=True)
    assert module(gradkit)(t)[0].grad_fn.name() == module(torch)(t_torch)[0].grad_fn.name()
    assert gradcheck(lambda a: module(gradkit)(a)[0], (t,))
    assert gradgradcheck(lambda a: module(gradkit)(a)[0], (t,))


EMPTY_OUTPUT_CASES = [(name, shape, size) for name, shape in (
    ("adaptive_avg_pool2d", (1, 64, 10, 9)), ("adaptive_avg_pool3d", (1, 64, 10, 9)),
    ("adaptive_max_pool2d", (1, 64, 10, 9)), ("adaptive_max_pool3d", (1, 64, 10, 9)),
    ("adaptive_avg_pool1d", (1, 64)), ("adaptive_max_pool1d", (1, 64)),
    ("adaptive_avg_pool2d", (0, 2, 3, 3))) for size in (0, 1)] + [
    ("adaptive_avg_pool2d", (1, 64, 10, 9), (0, 1)), ("adaptive_max_pool2d", (1, 4, 5), (1, 0))]


@pytest.mark.parametrize("name,shape,output_size", EMPTY_OUTPUT_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adaptive_pooling_empty_output_size(name, shape, output_size, dtype):
    """test_adaptive_pooling_empty_output_size: an output size of 0 pools to an empty output,
    whose backward is refused (torch's "Expected grad_output to have non-zero size for
    non-batch dimensions"); a nonzero size runs."""
    x = rng(14).standard_normal(shape)
    same(with_grads(lambda m, a: getattr(m.nn.functional, name)(a, output_size).sum(), x,
                    dtype=dtype), rtol=1e-6)


# -- shapes, layouts, corner cases -----------------------------------------------------------------

@pytest.mark.parametrize("sizes,kwargs", [
    ((1, 1, 5, 6, 7), dict(kernel_size=1, stride=2, padding=0, ceil_mode=True)),
    ((1, 1, 3, 4, 5), dict(kernel_size=2, stride=2, padding=1, ceil_mode=False)),
    ((1, 1, 3, 4, 5), dict(kernel_size=2, stride=2, padding=1, ceil_mode=True))])
def test_pooling_shape(sizes, kwargs):
    """test_pooling_shape: the output shapes of max/avg pooling in 1-3 dims (ceil_mode drops a
    window that would start in the padding); gh-45357's (1, 1, 6, 7) case."""
    same(lambda m: [getattr(m.nn.functional, f"{kind}_pool{i}d")(
        m.ones(sizes[:i + 2]), **kwargs) for kind in ("max", "avg") for i in (1, 2, 3)])
    same(lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 6, 7), 1, stride=(2, 2), padding=0,
                                              ceil_mode=True))
    assert tuple(gradkit.nn.functional.max_pool2d(
        gradkit.ones(1, 1, 6, 7), 1, stride=(2, 2), padding=0, ceil_mode=True).shape) == \
        (1, 1, 3, 4)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "non_contiguous"])
@pytest.mark.parametrize("d", [2, 3])
def test_adaptive_avg_pool_output_size_one(layout, d):
    """test_adaptive_avg_pool{2,3}d_output_size_one: an output of size 1 is the mean over the
    planes, with torch's strides (channels last kept), and backward runs."""
    if d == 3 and layout == "channels_last":
        layout = "channels_last_3d"
    x = rng(15).integers(1, 10, (2, 3) + (6,) * d).astype(float)

    def program(m):
        t = made(m, x, "float32").requires_grad_()
        a = t[::2, ::2, ::2, ::2] if layout == "non_contiguous" else \
            t.contiguous(memory_format=getattr(m, layout, m.contiguous_format))
        out = getattr(m.nn, f"AdaptiveAvgPool{d}d")(1)(a)
        out.sum().backward()
        ref = a.contiguous().mean(tuple(range(-d, 0))).view(out.shape)
        return out, ref, t.grad, m.tensor(out.stride())
    same(program, rtol=1e-6)


NHWC_POOLS = [  # (kind, spatial dims, input shape, arguments)
    ("avg", 2, (4, 8, 8, 8), dict(kernel_size=3)),
    ("avg", 2, (4, 8, 8, 8), dict(kernel_size=3, count_include_pad=False, padding=1)),
    ("avg", 2, (4, 8, 8, 8), dict(kernel_size=3, count_include_pad=False, padding=1, stride=2)),
    ("avg", 2, (4, 8, 8, 8), dict(kernel_size=3, divisor_override=42)),
    ("avg", 2, (4, 8, 7, 7), dict(kernel_size=3, padding=1, stride=1)),
    ("avg", 2, (1, 129, 8, 8), dict(kernel_size=3, stride=2)),
    ("max", 2, (4, 8, 8, 8), dict(kernel_size=7)),
    ("max", 2, (4, 8, 7, 7), dict(kernel_size=3, stride=1)),
    ("max", 2, (1, 129, 8, 8), dict(kernel_size=3, stride=2)),
    ("max", 2, (4, 8, 10, 10), dict(kernel_size=2, stride=1, padding=1, dilation=2)),
    ("max", 2, (4, 8, 11, 11), dict(kernel_size=4, stride=2, padding=2, dilation=2)),
    ("max", 3, (4, 8, 8, 8, 8), dict(kernel_size=(5, 6, 7))),
    ("max", 3, (8, 7, 7, 7), dict(kernel_size=3, stride=1)),  # unbatched: no channels last
    ("max", 3, (1, 79, 4, 4, 4), dict(kernel_size=3, stride=2)),
    ("max", 3, (0, 79, 4, 4, 4), dict(kernel_size=3, stride=2))]


@pytest.mark.parametrize("kind,d,shape,kwargs", NHWC_POOLS)
@pytest.mark.parametrize("strided", [False, True])
def test_pooling_nhwc(kind, d, shape, kwargs, strided):
    """test_avg_pool2d_nhwc, test_max_pool2d_nhwc, test_max_pool3d_ndhwc, test_pooling_max_nhwc:
    a channels-last input (or a channel-strided slice of one) gives the contiguous input's
    values, indices and gradients, laid out as torch's (channels last kept by the 2-d kernels
    and max_pool3d's)."""
    x = rng(16).standard_normal(shape)
    fmt = "channels_last" if d == 2 else "channels_last_3d"

    def program(m):
        a = made(m, x, "float64")
        if len(shape) == d + 2:
            a = a.contiguous(memory_format=getattr(m, fmt))
        if strided:
            a = a[:, ::2]
        a.requires_grad_()
        pool = getattr(m.nn.functional, f"{kind}_pool{d}d")
        out = pool(a, **kwargs, **({"return_indices": True} if kind == "max" else {}))
        values = out[0] if kind == "max" else out
        seed = made(m, np.cos(np.arange(values.numel())).reshape(tuple(values.shape)), "float64")
        values.backward(seed)
        # (an empty input's own layout is contiguous()'s business, not the pooling's)
        laid_out = (*(out if kind == "max" else (out,)), *((a.grad,) if a.numel() else ()))
        return out, a.grad, [m.tensor(t.stride()) for t in laid_out]
    same(program, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x,args", [
    ([[1.0]], (1, None, 0, 1, False, False)), ([[1.0]], (2, None, 1, 2, False, False)),
    ([[1.0], [1.0]], (2, None, 1, 2, False, False)), ([[1.0, 2.0]], (2, 1, 1, 2, False, False)),
    ([[1.0, 2.0]], (2, 2, 1, 2, False, True))])
def test_max_pool1d_corner_cases(dtype, x, args):
    """test_max_pool1d_corner_cases: windows reading only padding give -inf (closed forms:
    [[1]], [[-inf]], [[2, 1]], [[2, 2]])."""
    out = same(lambda m: m.nn.MaxPool1d(*args)(made(m, np.array(x), dtype)))
    assert out is None


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("layout", ["contiguous_format", "channels_last"])
@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool2d_corner_cases(dtype, layout, return_indices):
    """test_max_pool2d_corner_cases: integer max pooling whose dilated windows read padding
    (the lowest integer) and one element: [[[[-4, -4], [-4, -4]]]]."""
    def program(m):
        x = made(m, np.array([[[[-1, -2], [-3, -4]]]]), dtype)
        return m.nn.MaxPool2d(2, 2, 1, 2, return_indices, True)(
            x.contiguous(memory_format=getattr(m, layout)))
    same(program)
    out = gradkit.nn.MaxPool2d(2, 2, 1, 2, False, True)(gradkit.tensor([[[[-1, -2], [-3, -4]]]]))
    assert out.tolist() == [[[[-4, -4], [-4, -4]]]]


def test_max_pool1d():
    """test_max_pool1d: max pooling with and without indices agree over random sizes,
    kernels, strides, dilations, paddings and ceil modes, and on non-contiguous inputs."""
    r = rng(17)
    cases = []
    for size, kernel, stride, dilation, ceil_mode in itertools.product(
            [tuple(int(v) for v in r.integers(8, 40, 3)) for _ in range(2)], (1, 2, 4),
            (1, 3), (1, 3), (True, False)):
        cases.append((r.standard_normal(size), kernel, stride,
                      int(r.integers(0, kernel // 2 + 1)), dilation, ceil_mode))

    def program(m):
        out = []
        for x, *args, ceil_mode in cases:
            t = made(m, x, "float64")
            plain = m.nn.MaxPool1d(*args, ceil_mode=ceil_mode)(t)
            out += [plain, m.nn.MaxPool1d(*args, ceil_mode=ceil_mode, return_indices=True)(t)]
        return out
    same(program)
    x = rng(18).standard_normal((5, 151, 33))
    same(lambda m: [
        m.nn.MaxPool1d(3, 2, 1, 2, ceil_mode=True)(made(m, x, "float32")[::2, ::3, ::2]),
        m.nn.MaxPool1d(3, 2, 1, 2, ceil_mode=True, return_indices=True)(
            made(m, x, "float32")[::2, ::3, ::2].transpose(1, 2))])


@pytest.mark.parametrize("name", ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AdaptiveMaxPool1d",
                                  "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"])
def test_MaxPool_indices(name):  # noqa: N802 - torch's test name
    """test_{,Adaptive}MaxPool{1,2,3}d_indices: arange inputs pool to the known maxima and
    indices (closed forms in torch's test), backward puts ones at them, indices need no grad;
    writing the indices in place makes backward fail; a -inf input gives index 0."""
    d = int(name[-2])

    def program(m):
        x = m.arange(1, 4 ** (d + 1) + 1).view(2, 2, *(4,) * d).float().requires_grad_()
        output, indices = getattr(m.nn, name)(2, return_indices=True)(x)
        output.backward(m.ones(output.size()), retain_graph=True)
        grad = x.grad.clone()
        indices.add_(1)
        try:
            output.backward(m.ones(output.size()))
            message = "no error"
        except RuntimeError as e:  # "...modified by an inplace operation...", the indices
            message = str(e).replace(m.__name__, "lib")  # named as a leaf: no node
        minus_inf = getattr(m.nn, name)(1, return_indices=True)(
            m.full((1, 1) + (1,) * d, -math.inf))
        return (output, indices, grad, m.tensor(output.requires_grad),
                m.tensor(indices.requires_grad), message, minus_inf)
    assert program(gradkit)[5] == program(torch)[5]
    same(lambda m: [t for i, t in enumerate(program(m)) if i != 5])
    if d == 1:  # torch's closed forms
        out, ind = getattr(gradkit.nn, name)(2, return_indices=True)(
            gradkit.arange(1.0, 17.0).view(2, 2, 4))
        assert out.tolist() == gradkit.arange(2.0, 17.0, 2).view(2, 2, 2).tolist()
        assert ind.tolist() == [[[1, 3]] * 2] * 2


@pytest.mark.parametrize("name", [f"{a}max_pool{d}d" for a in ("", "adaptive_")
                                  for d in (1, 2, 3)])
@pytest.mark.parametrize("value", [NAN, -INF])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_max_pool_nan_inf(name, value, dtype):
    """test_max_pool_nan_inf: a window of NaN pools to NaN, of -inf to -inf, with and without
    grad; backward runs (float16 too)."""
    d = int(name[-2])
    x = np.full([1, 1] + d * [3], value)
    seed = rng(19).standard_normal([1, 1] + [1] * d)
    k = 1 if "adaptive" in name else 3
    same(with_grads(lambda m, a: getattr(m.nn.functional, name)(a, k), x, dtype=dtype,
                    seed=seed))
    same(lambda m: getattr(m.nn.functional, name)(made(m, x, dtype), k))


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("value", [NAN, -INF])
def test_fractional_max_pool_nan_inf(d, value):
    """test_fractional_max_pool_nan_inf: fractional max pooling of NaN / -inf windows."""
    x = np.full([1, 1] + d * [3], value)
    samples = np.full((1, 1, d), 0.25)
    same(with_grads(lambda m, a: getattr(m.nn.functional, f"fractional_max_pool{d}d")(
        a, 2, output_size=1, _random_samples=made(m, samples, "float32")), x, dtype="float32"))


@pytest.mark.parametrize("d", [2, 3])
def test_fractional_max_pool(d):
    """test_fractional_max_pool{2,3}d: shapes for batched and unbatched inputs, gradcheck and
    gradgradcheck in float64, torch's kernel_size and output_size errors."""
    x = rng(20).standard_normal((1, 2) + (7,) * d)
    samples = rng(21).random((1, 2, d))

    def pool(m, a, kernel=(2,) * d, size=(3,) * d):
        return getattr(m.nn.functional, f"fractional_max_pool{d}d")(
            a, kernel, output_size=size, _random_samples=made(m, samples, "float64"))
    same(with_grads(lambda m, a: pool(m, a), x))
    same(with_grads(lambda m, a: pool(m, a), x[0]))
    for t in (gradkit.tensor(x, requires_grad=True), gradkit.tensor(x[0], requires_grad=True)):
        assert gradcheck(lambda a: pool(gradkit, a), (t,))
        assert gradgradcheck(lambda a: pool(gradkit, a), (t,))
    for kernel in [(), (1,)] + ([(1, 1)] if d == 3 else []):
        same(lambda m, kernel=kernel: pool(m, made(m, x[0], "float64"), kernel=kernel))
    sizes = [(9, 3), (3, 9), (3,), ()] if d == 2 else \
        [(9, 3, 3), (3, 9, 3), (3, 3, 9), (3, 3), (3,), ()]
    for size in sizes:
        same(lambda m, size=size: pool(m, made(m, x[0], "float64"), size=size))


@pytest.mark.parametrize("name", POOLS)
def test_pool_large_size(name):
    """test_pool_large_size: 16777217 (the first integer float32 cannot hold) positions pool
    to as many, kernel 1."""
    d = int(name[-2])
    shape = [1, 1, 16777217] + (d - 1) * [1]
    out = getattr(gradkit.nn.functional, name)(gradkit.ones(shape), 1, stride=1, padding=0)
    assert tuple(out.shape) == tuple(shape)
    assert out.dtype == gradkit.float32


@pytest.mark.parametrize("dim", [2, 3, 4])
def test_maxpool3d_non_square_backward(dim):
    """test_maxpool3d_non_square_backward: every position of a long dim gets its gradient
    (kernel 1: the gradient is all ones)."""
    shape = tuple(8 if i != dim else 64 for i in range(4))
    x = gradkit.randn(shape, requires_grad=True)
    gradkit.nn.functional.max_pool3d(x, kernel_size=(1, 1, 1)).sum().backward()
    assert (x.grad == 1).all()


LOWER_PRECISION = [("AdaptiveAvgPool2d", (3, 19, 8, 8), ((7, 7),)),
                   ("AdaptiveMaxPool2d", (3, 19, 8, 8), ((7, 7),)),
                   ("MaxPool2d", (4, 30, 8, 8), (7, 1)), ("MaxPool2d", (1, 19, 20, 10), (8, 2)),
                   ("MaxPool3d", (1, 19, 10, 10, 10), (8, 2)),
                   ("MaxPool3d", (4, 10, 3, 8, 8), (3, 1)),
                   ("AvgPool2d", (4, 30, 8, 8), (7, 1)), ("AvgPool2d", (1, 19, 20, 10), (8, 2))]


@pytest.mark.parametrize("name,shape,args", LOWER_PRECISION)
@pytest.mark.parametrize("layout", ["contiguous_format", "channels_last"])
def test_pooling_float16(name, shape, args, layout):
    """test_adaptive_pooling_lower_precision, test_max_pool_bfloat16_half,
    test_avg_pool2d_reduced_floating (their float16 half): float16 in, float16 out and
    gradient, torch's values (and within 0.1 of float32's)."""
    if layout == "channels_last" and len(shape) == 5:
        layout = "channels_last_3d"
    # values float16 holds, so both precisions pool the same numbers (torch's test: .float())
    x = (rng(22).integers(1, 10, shape) + rng(23).random(shape)).astype(np.float16)

    def program(m, dtype):
        a = made(m, x, dtype).contiguous(memory_format=getattr(m, layout)).requires_grad_()
        out = getattr(m.nn, name)(*args)(a)
        out.sum().backward()
        return out, a.grad
    same(lambda m: program(m, "float16"), rtol=1e-3, atol=1e-3)
    half, full = program(gradkit, "float16"), program(gradkit, "float32")
    for h, f in zip(half, full, strict=True):
        assert h.dtype == gradkit.float16
        np.testing.assert_allclose(h.detach().float().numpy(), f.detach().numpy(), atol=0.1,
                                   rtol=0.01)


@pytest.mark.parametrize("shape", [(4, 8, 1, 1), (4, 1, 3, 3), (2, 0, 3, 1), (2, 3, 4, 5),
                                   (1, 3, 1, 2, 2)])
def test_clone_to_channels_last_copies_with_torch_strides(shape):
    """(Found by the channels-last pooling tests) clone(memory_format=channels_last) is a copy
    with torch's strides even where the shape makes C order and channels last coincide (a
    size-1 dim's stride; it returned its input uncopied: a write went through)."""
    fmt = "channels_last" if len(shape) == 4 else "channels_last_3d"

    def program(m):
        a = m.zeros(shape)
        b = a.clone(memory_format=getattr(m, fmt))
        b.fill_(5)
        return a, b, m.tensor(b.stride()), m.tensor(b.is_contiguous(memory_format=getattr(m, fmt)))
    same(program)


@pytest.mark.parametrize("op", ["max_pool2d", "adaptive_max_pool1d", "sort", "max"])
def test_written_indices_are_named_as_leaves_in_the_version_error(op):
    """(From _test_maxpool_indices) a non-differentiable output saved for backward (max
    pooling's, sort's or max's indices) and written in place: torch's message names no node
    ("which is output 1 of ..." is for outputs with history)."""
    def program(m):
        x = m.arange(16.0).view(1, 1, 16).requires_grad_()
        out, indices = {
            "max_pool2d": lambda: m.nn.functional.max_pool2d(x.view(1, 1, 4, 4), 2,
                                                             return_indices=True),
            "adaptive_max_pool1d": lambda: m.nn.functional.adaptive_max_pool1d(x, 3, True),
            "sort": lambda: x.sort(-1), "max": lambda: x.max(-1)}[op]()
        indices.add_(1)
        try:
            out.sum().backward()
        except RuntimeError as e:
            return str(e).replace(m.__name__, "lib")
        return "no error"
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("name,size,shape,index", [
    ("MaxUnpool2d", (2, 2), (1, 3, 4, 5), -1), ("MaxUnpool2d", (2, 2), (1, 3, 4, 5), 80),
    ("MaxUnpool2d", (2, 2), (1, 3, 4, 5), 79), ("MaxUnpool2d", (2, 3), (2, 1, 4, 2), 48),
    ("MaxUnpool2d", (2, 3), (2, 1, 4, 2), 47), ("MaxUnpool3d", (2, 2, 2), (1, 3, 4, 5), -1),
    ("MaxUnpool3d", (2, 2, 2), (1, 3, 4, 5), 480), ("MaxUnpool3d", (2, 2, 2), (1, 3, 4, 5), 479),
    ("MaxUnpool3d", (2, 2, 2), (2, 3, 4, 1), 96), ("MaxUnpool3d", (2, 2, 2), (2, 3, 4, 1), 95)])
def test_MaxUnpool_index_errors(name, size, shape, index):  # noqa: N802 - torch's test name
    """test_MaxUnpool_index_errors (its CPU branch): an index outside the unpooled plane (or
    volume) is "Found an invalid max index"; the last valid one unpools."""
    def program(m):
        indices = m.zeros(shape, dtype=m.int64)
        indices.view(-1)[0] = index
        return getattr(m.nn, name)(size)(m.ones(shape), indices)
    same(program)


@pytest.mark.parametrize("name", ["adaptive_avg_pool2d", "adaptive_max_pool2d",
                                  "adaptive_avg_pool3d", "adaptive_max_pool3d"])
def test_adaptive_pool_odd_size(name):
    """test_adaptive_pool_odd_size (gh-81409), scaled down from its 5873x3693 images: odd
    input and output sizes whose windows overlap unevenly."""
    d = int(name[-2])
    shape = (3, 3, 59, 37) if d == 3 else (11, 59, 37)
    x = rng(24).integers(0, 256, shape).astype(float)
    size = (3, 35, 22) if d == 3 else (35, 22)
    same(lambda m: getattr(m.nn.functional, name)(made(m, x, "float32"), size), rtol=1e-6)
