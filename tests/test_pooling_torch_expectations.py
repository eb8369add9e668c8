"""torch's test/nn/test_pooling.py (TestAvgPool, TestPoolingNN, TestPoolingNNDeviceType),
re-run as programs under torch 2.13 and gradkit: same values, dtypes, shapes, indices,
gradients, or the same error (type and message).

Each test names the torch test it covers (argument checks and dtypes:
test_pooling_torch_expectations_arguments.py; indices, layouts and values:
test_pooling_torch_expectations_values.py). Out of scope (see docs/torch_expectations.md,
"Pooling"): CUDA/cudnn/MPS-only tests, quantized pooling, bfloat16, slow tests of huge inputs.
"""
import itertools
import math

import numpy as np
import pytest
from expectation_programs import made, same
from test_torch_numerics import with_grads

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG_SEED = 20261206
NAN, INF = math.nan, math.inf
POOLS = [f"{kind}_pool{d}d" for kind in ("max", "avg") for d in (1, 2, 3)]


def rng(offset: int = 0) -> np.random.Generator:
    return np.random.default_rng(RNG_SEED + offset)


def _block_mean(x: np.ndarray, kernel: tuple) -> np.ndarray:
    """The closed form of a floor-mode pooling with stride = kernel over x's trailing dims:
    each whole block of ``kernel`` averaged."""
    d = len(kernel)
    lead = x.shape[:-d]
    outs = [s // k for s, k in zip(x.shape[-d:], kernel, strict=True)]
    x = x[(...,) + tuple(slice(0, o * k) for o, k in zip(outs, kernel, strict=True))]
    x = x.reshape(lead + tuple(v for o, k in zip(outs, kernel, strict=True) for v in (o, k)))
    return x.mean(tuple(len(lead) + 2 * i + 1 for i in range(d)))


# -- TestAvgPool -------------------------------------------------------------------------------

def test_doubletensor_avg_pool2d():
    """test_doubletensor_avg_pool2d: every kernel (i, j) of a 5x8 plane (unbatched input) is
    the block mean (torch's test: an unfold sum over the kernel's size)."""
    x = rng().random((1, 1, 5, 8))
    kernels = list(itertools.product(range(1, 6), range(1, 9)))
    same(lambda m: [m.nn.functional.avg_pool2d(made(m, x, "float64")[0], k) for k in kernels],
         rtol=1e-15)
    for k in kernels:
        got = gradkit.nn.functional.avg_pool2d(gradkit.tensor(x[0]), k).numpy()
        np.testing.assert_allclose(got, _block_mean(x[0], k), rtol=1e-14)


def test_doubletensor_avg_pool2d_with_divisor():
    """test_doubletensor_avg_pool2d_with_divisor: divisor_override replaces the window size."""
    x = rng(1).random((1, 1, 3, 3))
    cases = [((i, j), d) for i in range(1, 4) for j in range(1, 4) for d in (1, 7, i * j)]
    same(lambda m: [m.nn.functional.avg_pool2d(made(m, x, "float64")[0], k, divisor_override=d)
                    for k, d in cases], rtol=1e-15)
    for k, d in cases:
        got = gradkit.nn.functional.avg_pool2d(gradkit.tensor(x[0]), k, divisor_override=d)
        np.testing.assert_allclose(got.numpy(), _block_mean(x[0], k) * math.prod(k) / d,
                                   rtol=1e-14)


@pytest.mark.parametrize("divisor", [None, 1, 7, "ij"])
def test_doubletensor_avg_pool3d(divisor):
    """test_doubletensor_avg_pool3d(_with_divisor): every kernel (i, j, k) of a 5x6x7 volume."""
    x = rng(2).random((1, 5, 6, 7))
    kernels = list(itertools.product(range(1, 6), range(1, 7), range(1, 8)))

    def override(k):
        return k[0] * k[1] if divisor == "ij" else divisor
    same(lambda m: [m.nn.functional.avg_pool3d(made(m, x, "float64"), k,
                                               divisor_override=override(k)) for k in kernels],
         rtol=1e-14)
    for k in kernels[::7]:
        got = gradkit.nn.functional.avg_pool3d(gradkit.tensor(x), k, divisor_override=override(k))
        scale = 1 if divisor is None else math.prod(k) / override(k)
        np.testing.assert_allclose(got.numpy(), _block_mean(x, k) * scale, rtol=1e-14)


@pytest.mark.parametrize("d,kwargs", [
    (1, dict(kernel_size=1, stride=2)),
    (2, dict(kernel_size=(1, 2), padding=(0, 1), stride=2)),
    (3, dict(kernel_size=(1, 2, 3), stride=2))])
def test_avg_pool_ceil_mode(d, kwargs):
    """test_avg_pool{1,2,3}d_ceil_mode (gh-36977): a last window that starts in the right
    padding is dropped, so no window divides by zero (no NaN)."""
    x = 10 * rng(3).standard_normal((1, 16) + (4,) * d)
    program = with_grads(lambda m, a: getattr(m.nn.functional, f"avg_pool{d}d")(
        a, ceil_mode=True, count_include_pad=True, **kwargs), x, dtype="float32")
    same(program, rtol=1e-6)
    assert not gradkit.isnan(program(gradkit)[0]).any()


# -- TestPoolingNN -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["AdaptiveMaxPool2d", "AdaptiveAvgPool2d", "AdaptiveMaxPool3d",
                                  "AdaptiveAvgPool3d"])
def test_adaptive_pooling_size_none(name):
    """test_adaptive_pooling_size_none: a None output size keeps the input's size there."""
    d = int(name[-2])
    x = rng(4).standard_normal((4,) * (d + 1))
    out = same(lambda m: getattr(m.nn, name)((2,) * (d - 1) + (None,))(made(m, x, "float32")))
    assert tuple(getattr(gradkit.nn, name)((2,) * (d - 1) + (None,))(
        gradkit.tensor(x)).shape) == (4,) + (2,) * (d - 1) + (4,)
    assert out is None


ADAPTIVE_SIZE_ERRORS = {
    "max1d_overflow": lambda m: m.nn.AdaptiveMaxPool1d(0x3FFFFFFFFFFFFFFF)(m.empty([2, 2, 2])),
    "avg1d_overflow": lambda m: m.nn.AdaptiveAvgPool1d(0x3FFFFFFFFFFFFFFF)(m.empty([2, 2, 2])),
    "max2d_overflow": lambda m: m.nn.AdaptiveMaxPool2d((2 ** 40, 2 ** 40))(m.empty([2, 2, 2])),
    "avg2d_overflow": lambda m: m.nn.AdaptiveAvgPool2d((2 ** 40, 2 ** 40))(m.empty([2, 2, 2])),
    "max3d_overflow": lambda m: m.nn.AdaptiveMaxPool3d(2 ** 30)(m.empty([2, 2, 2, 2])),
    "avg3d_overflow": lambda m: m.nn.AdaptiveAvgPool3d(2 ** 30)(m.empty([2, 2, 2, 2])),
    # an element count that fits int64 but a byte count that does not
    "max2d_bytes": lambda m: m.nn.AdaptiveMaxPool2d((2 ** 31, 2 ** 30))(m.empty([2, 2, 2])),
    "avg2d_bytes": lambda m: m.nn.AdaptiveAvgPool2d((2 ** 31, 2 ** 30))(
        m.empty([2, 2, 2], dtype=m.int32)),
    "max1d_negative": lambda m: m.nn.AdaptiveMaxPool1d(-1)(m.empty([2, 2, 2])),
    "max2d_negative": lambda m: m.nn.AdaptiveMaxPool2d((2, -1))(m.empty([2, 2, 2])),
    "max3d_negative": lambda m: m.nn.AdaptiveMaxPool3d((1, -2, 1))(m.empty([1, 2, 2, 2, 2])),
    "max2d_negative_int": lambda m: m.nn.AdaptiveMaxPool2d(-1)(m.ones([2, 2, 2], dtype=m.int64)),
    "avg1d_negative": lambda m: m.nn.AdaptiveAvgPool1d(-1)(m.empty([2, 2, 2])),
    "avg2d_negative": lambda m: m.nn.AdaptiveAvgPool2d((2, -1))(m.empty([2, 2, 2])),
    "avg3d_negative": lambda m: m.nn.AdaptiveAvgPool3d((2, -1, 3))(m.empty([2, 2, 2, 2])),
    "avg2d_negative_int": lambda m: m.nn.AdaptiveAvgPool2d((2 ** 31, -1))(
        m.empty([2, 2, 2], dtype=m.int32)),
}


@pytest.mark.parametrize("name", sorted(ADAPTIVE_SIZE_ERRORS))
def test_adaptive_pooling_size_overflow(name):
    """test_adaptive_pooling_size_overflow: an output size whose element (or byte) count
    overflows int64 is refused before anything is allocated, as a negative one is (torch's
    messages: average pooling checks the sizes itself, max pooling's allocation refuses)."""
    same(ADAPTIVE_SIZE_ERRORS[name])


@pytest.mark.parametrize("d,shape", [(1, (2, 3)), (2, (2, 3, 3)), (3, (2, 3, 3, 3)),
                                     (2, (0, 2, 3, 3)), (1, (0, 2, 3))])
@pytest.mark.parametrize("dtype", ["int32", "bool", "complex64", "float16", "float64"])
@pytest.mark.parametrize("output_size", [1, 2])
def test_adaptive_avg_pool_dtypes(d, shape, dtype, output_size):
    """(test_adaptive_pooling_no_suppot_input, beyond it) an output of size 1 is torch's mean
    over the planes, with mean's dtype rules (complex computes, integers are refused by mean);
    an empty input runs no 2-d kernel (any dtype gives zeros)."""
    same(lambda m: getattr(m.nn.functional, f"adaptive_avg_pool{d}d")(
        m.ones(shape, dtype=getattr(m, dtype)), output_size))


@pytest.mark.parametrize("name,out", [("adaptive_avg_pool2d", (7, 7)),
                                      ("adaptive_max_pool2d", (7, 7)),
                                      ("adaptive_avg_pool3d", (3, 2, 3)),
                                      ("adaptive_max_pool3d", (3, 2, 3))])
@pytest.mark.parametrize("layout", ["channels_last", "channels_last_strided"])
def test_adaptive_pooling_nhwc(name, out, layout):
    """test_adaptive_pooling_avg_nhwc(_non_contiguous), test_adaptive_pooling_max_nhwc: a
    channels-last input (or a strided slice of one) gives the contiguous input's values and
    gradients."""
    d = len(out)
    x = rng(5).integers(1, 10, (4, 8) + (8,) * d).astype(float)
    seed = rng(6).integers(1, 10, (4, 8) + out).astype(float)
    fmt = "channels_last" if d == 2 else "channels_last_3d"

    def program(m):
        a = made(m, x, "float32").contiguous(memory_format=getattr(m, fmt))
        g = made(m, seed, "float32")
        if layout.endswith("strided"):
            a, g = a[:, ::2], g[:, ::2]
        a.requires_grad_()
        result = getattr(m.nn.functional, name)(a, out)
        result.backward(g)
        results = result if isinstance(result, tuple) else (result,)
        return result, a.grad, [m.tensor(t.stride()) for t in (*results, a.grad)]
    same(program, rtol=1e-6)  # float32 sums in another order


def _pooled_for_unpool(m, x):
    """MaxPool2d(3, stride=2, return_indices=True) of float32 ``x`` (a module's pooling)."""
    return m.nn.MaxPool2d(3, stride=2, return_indices=True)(made(m, x, "float32"))


def test_MaxUnpool2d_output_size():  # noqa: N802 - torch's test name
    """test_MaxUnpool2d_output_size: an index past the default unpooled plane is refused; an
    output_size is taken within (default - stride, default + stride), with or without the
    batch dims, else a ValueError naming the dim and its bounds."""
    big = rng(7).random((1, 1, 6, 6))
    big[0, 0, 4, 4] = 100
    same(lambda m: m.nn.MaxUnpool2d(3, stride=2)(*_pooled_for_unpool(m, big)))
    small = rng(8).random((1, 1, 5, 5))
    small[:, :, 0:4:2, 0:4:2] = 100

    def program(m, size):
        return m.nn.MaxUnpool2d(3, stride=2)(*_pooled_for_unpool(m, small), output_size=size)
    for h, w in itertools.product(range(3, 10), range(3, 10)):
        size = (1, 1, h, w) if h == 6 else (h, w)
        same(lambda m, size=size: program(m, size))


def test_max_unpool2d_nhwc_cpu():
    """test_max_unpool2d_nhwc_cpu: channels-last pooling and unpooling give the contiguous
    tensors' values, indices and gradients, laid out channels last as torch's."""
    x = rng(9).standard_normal((2, 10, 9, 9))
    seed = rng(10).standard_normal((2, 10, 9, 9))

    def program(m):
        a = made(m, x, "float32").contiguous(memory_format=m.channels_last)
        out, ind = m.nn.MaxPool2d(3, stride=2, return_indices=True)(a)
        out.requires_grad_()
        up = m.nn.MaxUnpool2d(3, stride=2)(out, ind)
        up.backward(made(m, seed, "float32").contiguous(memory_format=m.channels_last))
        return out, ind, up, out.grad, [m.tensor(t.stride()) for t in (out, ind, up, out.grad)]
    same(program)


@pytest.mark.parametrize("d,shape", [(1, (1, 1, 5)), (2, (1, 1, 4, 4)), (3, (4, 4, 4, 4, 4))])
def test_max_unpool(d, shape):
    """test_max_unpool: stride defaults to kernel_size; output_size given as a Size or a
    list; gradcheck (forward AD too) of the unpooling in float64."""
    x = rng(11).standard_normal(shape)

    def program(m):
        F = m.nn.functional
        out, ind = getattr(F, f"max_pool{d}d")(made(m, x, "float64"), 2, stride=2,
                                              return_indices=True)
        unpool = getattr(F, f"max_unpool{d}d")
        t = made(m, x, "float64")
        return (unpool(out, ind, 2), unpool(out, ind, 2, stride=2),
                unpool(out, ind, 2, stride=2, output_size=t.shape),
                unpool(out, ind, 2, stride=2, output_size=list(t.size())))
    same(program)
    F = gradkit.nn.functional
    out, ind = getattr(F, f"max_pool{d}d")(gradkit.tensor(x), 2, stride=2, return_indices=True)
    out.requires_grad_()
    unpool = getattr(F, f"max_unpool{d}d")
    assert gradcheck(lambda o: unpool(o, ind, 2), (out,), check_forward_ad=True)
    assert gradgradcheck(lambda o: unpool(o, ind, 2), (out,))


UNPOOL_SIZE_ERRORS = {
    "3d_kernel_of_two": lambda m: m.nn.functional.max_unpool3d(
        m.ones(1, 3, 1, 1, 1), m.zeros((1, 3, 1, 1, 1), dtype=m.int64), [1, 1]),
    "3d_kernel_of_two_unbatched": lambda m: m.nn.functional.max_unpool3d(
        m.ones(3, 1, 1, 1), m.zeros((3, 1, 1, 1), dtype=m.int64), [1, 1]),
    "3d_kernel_of_two_int32_indices": lambda m: m.nn.functional.max_unpool3d(
        m.ones(1, 3, 1, 1, 1), m.zeros((1, 3, 1, 1, 1), dtype=m.int32), [1, 1]),
    "3d_kernel_of_two_3d_input": lambda m: m.nn.functional.max_unpool3d(
        m.ones(3, 1, 1), m.zeros((3, 1, 1), dtype=m.int64), [1, 1]),
    "3d_kernel_of_two_indices_shape": lambda m: m.nn.functional.max_unpool3d(
        m.ones(1, 3, 1, 1, 1), m.zeros((1, 3, 1, 2, 1), dtype=m.int64), [1, 1]),
    "2d_kernel_of_one": lambda m: m.nn.functional.max_unpool2d(
        m.ones(1, 3, 1, 1), m.zeros((1, 3, 1, 1), dtype=m.int64), [2]),
    "2d_kernel_of_one_2d_input": lambda m: m.nn.functional.max_unpool2d(
        m.ones(3, 1), m.zeros((3, 1), dtype=m.int64), [1]),
    "2d_kernel_of_one_int32_indices": lambda m: m.nn.functional.max_unpool2d(
        m.ones(1, 3, 1, 1), m.zeros((1, 3, 1, 1), dtype=m.int32), [1]),
    "2d_kernel_of_one_int_input": lambda m: m.nn.functional.max_unpool2d(
        m.ones(1, 3, 1, 1, dtype=m.int64), m.zeros((1, 3, 1, 1), dtype=m.int64), [1]),
    "2d_kernel_of_three": lambda m: m.nn.functional.max_unpool2d(
        m.ones(1, 3, 1, 1), m.zeros((1, 3, 1, 1), dtype=m.int64), [1, 1, 1]),
    "1d_int_input": lambda m: m.nn.functional.max_unpool1d(
        m.ones(1, 3, 1, dtype=m.int64), m.zeros((1, 3, 1), dtype=m.int64), 2),
}


@pytest.mark.parametrize("name", sorted(UNPOOL_SIZE_ERRORS))
def test_max_unpool3d_input_check(name):
    """test_max_unpool3d_input_check: a kernel_size of the wrong length gives an unpooled size
    of that length, refused in torch's words and order (and the neighbouring checks)."""
    same(UNPOOL_SIZE_ERRORS[name])


POOL_MODULES = [
    ("MaxPool1d", (3,), {}), ("MaxPool1d", (3, 2, 1, 2, True, True), {}),
    ("MaxPool2d", (3,), {}), ("MaxPool2d", ((3, 2), (1, 2), 1, 2, True, True), {}),
    ("MaxPool3d", (3,), {}), ("MaxPool3d", (3, 2, 1), {}), ("AvgPool1d", (3,), {}),
    ("AvgPool1d", (3, 2, 1, True, False), {}), ("AvgPool2d", (3,), {}),
    ("AvgPool2d", ((3, 2), 1, 1, True, False, 3), {}), ("AvgPool3d", (3, 2, 1, True, False, 2), {}),
    ("AdaptiveAvgPool1d", (3,), {}), ("AdaptiveAvgPool2d", ((3, None),), {}),
    ("AdaptiveAvgPool3d", (3,), {}), ("AdaptiveMaxPool1d", (3,), {}),
    ("AdaptiveMaxPool2d", (3, True), {}), ("AdaptiveMaxPool3d", ((3, 2, 1),), {}),
    ("LPPool1d", (2, 3), {}), ("LPPool2d", (2, 3, 1, True), {}), ("LPPool3d", (1.5, 3), {}),
    ("MaxUnpool1d", (3,), {}), ("MaxUnpool2d", (3, 1, 1), {}), ("MaxUnpool3d", ((3, 2, 1),), {}),
    ("FractionalMaxPool2d", (3,), dict(output_size=2)),
    ("FractionalMaxPool3d", (3,), dict(output_ratio=0.5)),
    ("FractionalMaxPool2d", (3,), dict(output_ratio=(0.5, 0.25), return_indices=True))]


@pytest.mark.parametrize("name,args,kwargs", POOL_MODULES)
def test_pooling_modules_repr_and_attributes(name, args, kwargs):
    """(Beyond the file: the modules its tests build) torch's positional order, attributes
    (MaxPool2d's return_indices among them) and repr."""
    def module(m):
        return getattr(m.nn, name)(*args, **kwargs)
    assert repr(module(gradkit)) == repr(module(torch))
    assert {k: repr(v) for k, v in vars(module(gradkit)).items() if not k.startswith("_")} == \
        {k: repr(v) for k, v in vars(module(torch)).items() if not k.startswith("_")}


# -- TestPoolingNNDeviceType: empty inputs -------------------------------------------------------

def _empty_module_run(module, shape, dtype="float32"):
    """torch's _test_module_empty_input: the module on an empty batch, then backward of the
    output's sum; the output and the (zero) gradient compared."""
    def program(m):
        x = m.ones(shape, dtype=getattr(m, dtype), requires_grad=True)
        out = module(m)(x)
        out = out[0] if isinstance(out, tuple) else out
        out.sum().backward()
        return out, x.grad
    return program


EMPTY_BATCHES = {
    "AdaptiveAvgPool1d": (lambda m: m.nn.AdaptiveAvgPool1d(5), (0, 10)),
    "AdaptiveAvgPool2d": (lambda m: m.nn.AdaptiveAvgPool2d((5, 5)), (0, 10, 10)),
    "AdaptiveAvgPool3d": (lambda m: m.nn.AdaptiveAvgPool3d((5, 5, 5)), (0, 10, 10, 10)),
    "FractionalMaxPool2d": (lambda m: m.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5)),
                            (0, 16, 50, 32)),
    "FractionalMaxPool3d": (lambda m: m.nn.FractionalMaxPool3d(3, output_ratio=(0.5,) * 3),
                            (0, 4, 10, 8, 8)),
    "MaxPool1d": (lambda m: m.nn.MaxPool1d(3, stride=2), (0, 16, 50)),
    "MaxPool2d": (lambda m: m.nn.MaxPool2d(3, stride=2), (0, 16, 50, 32)),
    "MaxPool3d": (lambda m: m.nn.MaxPool3d(3, stride=2), (0, 4, 10, 9, 7)),
    "AdaptiveMaxPool1d": (lambda m: m.nn.AdaptiveMaxPool1d(3), (0, 16, 50)),
    "AdaptiveMaxPool2d": (lambda m: m.nn.AdaptiveMaxPool2d(3), (0, 16, 50, 32)),
    "AdaptiveMaxPool3d": (lambda m: m.nn.AdaptiveMaxPool3d(3), (0, 4, 10, 9, 7)),
    "AvgPool1d": (lambda m: m.nn.AvgPool1d(3, stride=2), (0, 16, 20)),
    "AvgPool2d": (lambda m: m.nn.AvgPool2d(3, stride=2), (0, 16, 20, 32)),
    "AvgPool3d": (lambda m: m.nn.AvgPool3d(3, stride=2), (0, 4, 10, 9, 7)),
    "LPPool2d": (lambda m: m.nn.LPPool2d(2, 3, stride=2), (0, 16, 20, 32)),
}


@pytest.mark.parametrize("name", sorted(EMPTY_BATCHES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pooling_zero_batch(name, dtype):
    """test_adaptive_pooling_zero_batch, test_FractionalMaxPool{2,3}d_zero_batch,
    test_MaxPool_zero_batch_dim, test_AdaptiveMaxPool_zero_batch_dim, test_AvgPool2d_empty:
    an empty batch pools to an empty batch, and backward gives a zero gradient."""
    module, shape = EMPTY_BATCHES[name]
    same(_empty_module_run(module, shape, dtype))


EMPTY_NON_BATCH = {
    "FractionalMaxPool2d": lambda m: m.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(
        m.ones(1, 0, 50, 32)),
    "FractionalMaxPool3d": lambda m: m.nn.FractionalMaxPool3d(3, output_ratio=(0.5,) * 3)(
        m.ones(1, 0, 50, 32, 32)),
    "MaxPool1d": lambda m: m.nn.MaxPool1d(3, stride=2)(m.ones(1, 0, 50)),
    "MaxPool2d": lambda m: m.nn.MaxPool2d(3, stride=2)(m.ones(1, 0, 50, 32)),
    "MaxPool3d": lambda m: m.nn.MaxPool3d(3, stride=2)(m.ones(1, 0, 50, 44, 31)),
    "AdaptiveMaxPool1d": lambda m: m.nn.AdaptiveMaxPool1d(3)(m.ones(1, 0, 50)),
    "AdaptiveMaxPool2d": lambda m: m.nn.AdaptiveMaxPool2d(3)(m.ones(1, 0, 50, 32)),
    "AdaptiveMaxPool3d": lambda m: m.nn.AdaptiveMaxPool3d(3)(m.ones(1, 0, 50, 44, 31)),
    "AdaptiveAvgPool1d": lambda m: m.nn.AdaptiveAvgPool1d(3)(m.ones(1, 0, 50)),
    "AdaptiveAvgPool2d": lambda m: m.nn.AdaptiveAvgPool2d(3)(m.ones(1, 0, 50, 32)),
    "AdaptiveAvgPool3d": lambda m: m.nn.AdaptiveAvgPool3d(3)(m.ones(1, 0, 50, 44, 31)),
    "AvgPool1d": lambda m: m.nn.AvgPool1d(3, stride=2)(m.ones(16, 0, 20)),
    "AvgPool2d": lambda m: m.nn.AvgPool2d(3, stride=2)(m.ones(16, 0, 20, 32)),
    "AvgPool3d": lambda m: m.nn.AvgPool3d(3, stride=2)(m.ones(1, 0, 20, 32, 4)),
}


@pytest.mark.parametrize("name", sorted(EMPTY_NON_BATCH))
def test_pooling_empty_non_batch_dim(name):
    """The same tests' second half: an empty dim other than the batch is refused (torch's
    message of each kernel)."""
    same(EMPTY_NON_BATCH[name])


@pytest.mark.parametrize("d,size,shape", [(2, [0, 1], (16, 50, 32, 32)),
                                          (3, [0, 1, 1], (16, 50, 32, 32)),
                                          (2, [0, 1], (2, 5, 6))])
def test_FractionalMaxPool_zero_out_size(d, size, shape):  # noqa: N802 - torch's test name
    """test_FractionalMaxPool{2,3}d_zero_out_size: an output size of 0 gives an empty output
    (and a zero gradient)."""
    kernel = [2, 2] if d == 2 else [3, 2, 2]
    same(_empty_module_run(lambda m: getattr(m.nn, f"FractionalMaxPool{d}d")(
        kernel, output_size=size), shape))


@pytest.mark.parametrize("d", [2, 3])
def test_FractionalMaxPool_zero_samples(d):  # noqa: N802 - torch's test name
    """test_FractionalMaxPool{2,3}d_zero_samples: _random_samples of an empty batch serve an
    empty input, and are refused for a batch of one."""
    kernel, size = ([2, 2], [1, 1]) if d == 2 else ([3, 2, 2], [1, 1, 1])
    spatial = (32, 32) if d == 2 else (50, 32, 32)

    def module(m):
        return getattr(m.nn, f"FractionalMaxPool{d}d")(
            kernel, output_size=size, _random_samples=m.full((0, 16, d), 0.5))
    same(lambda m: module(m)(m.ones((0, 16) + spatial)))
    same(lambda m: module(m)(m.ones((1, 16) + spatial)))


def test_MaxUnpool_zero_batch_dim():  # noqa: N802 - torch's test name
    """test_MaxUnpool_zero_batch_dim: pooling then unpooling an empty batch, backward to both
    the input and the pooled tensor."""
    def program(m, d):
        pool = getattr(m.nn, f"MaxPool{d}d")(2, stride=2, return_indices=True)
        unpool = getattr(m.nn, f"MaxUnpool{d}d")(2, stride=2)
        x = m.randn((0, 10) + (10,) * d, requires_grad=True)
        output, indices = pool(x)
        output.retain_grad()
        out = unpool(output, indices)
        out.sum().backward()
        return out, x.grad, output.grad
    for d in (1, 2, 3):
        same(lambda m, d=d: program(m, d))
