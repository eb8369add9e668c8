"""torch's test/nn/test_init.py on gradkit and on torch 2.13.

Each test is a program of the library ``lib`` with torch's asserts (Kolmogorov-Smirnov
tests of the samples, shapes, fans, gains, errors and warnings); it runs on gradkit and, when
torch is installed, on torch. The samples differ between the libraries (each has its own
generator), so the statistics are checked on each, not compared. Left out: bfloat16, meta
tensors and torch.compile.
"""
import math
import random
import re
import string
import warnings

import numpy as np
import pytest

import gradkit
from torch_expectations.twin import both_libraries as both

try:
    import torch
except ImportError:
    torch = None

stats = pytest.importorskip("scipy.stats")
INITS = ("uniform_", "normal_", "trunc_normal_", "xavier_uniform_", "xavier_normal_",
         "kaiming_uniform_", "kaiming_normal_", "orthogonal_")


@pytest.fixture(autouse=True)
def _seeded():
    random.seed(123)  # torch's setUp: the sizes and parameters below
    gradkit.manual_seed(0)
    if torch is not None:
        torch.manual_seed(0)


def _values(tensor) -> list:
    return tensor.reshape(-1).double().tolist()


def _is_normal(tensor, mean, std) -> bool:
    return stats.kstest(_values(tensor), "norm", args=(mean, std))[1] > 0.0001


def _is_uniform(tensor, a, b) -> bool:
    return stats.kstest(_values(tensor), "uniform", args=(a, b - a))[1] > 0.0001


def _is_trunc_normal(tensor, mean, std, a, b) -> bool:
    z = [(x - mean) / std for x in _values(tensor)]
    return stats.kstest(z, "truncnorm", args=((a - mean) / std, (b - mean) / std))[1] > 0.0001


def _random_tensor(lib, dims, size_min, size_max):
    return lib.zeros([random.randint(size_min, size_max) for _ in range(dims)])


def _random_float(a, b):
    return (b - a) * random.random() + a


def _fans(tensor):
    receptive = tensor[0, 0].numel() if tensor.dim() > 2 else 1
    return tensor.size(1) * receptive, tensor.size(0) * receptive


@both
def test_calculate_gain(lib):
    init = lib.nn.init
    for name in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                 "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        gain = init.calculate_gain(name)
        assert gain == 1 and type(gain) is int
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("selu") == 0.75
    for param, slope in ((None, 0.01), (0, 0), (0.01, 0.01), (10, 10)):
        assert init.calculate_gain("leaky_relu", param) == math.sqrt(2.0 / (1 + slope ** 2))
    for param in (True, [1], {"a": "b"}):
        message = re.escape(f"negative_slope {param} not a valid number")
        with pytest.raises(ValueError, match=message):
            init.calculate_gain("leaky_relu", param)
    for n in (2, 5, 25):
        name = "".join(random.choice(string.ascii_lowercase) for _ in range(n))
        with pytest.raises(ValueError, match=f"^Unsupported nonlinearity {name}$"):
            init.calculate_gain(name)


@both
def test_uniform_and_normal(lib):
    for dims in (1, 2, 4):
        tensor = _random_tensor(lib, dims, 30, 50)
        a = _random_float(-3, 3)
        b = a + _random_float(1, 5)
        lib.nn.init.uniform_(tensor, a=a, b=b)
        assert _is_uniform(tensor, a, b)
        mean, std = _random_float(-3, 3), _random_float(1, 5)
        lib.nn.init.normal_(tensor, mean=mean, std=std)
        assert _is_normal(tensor, mean, std)


@both
def test_trunc_normal_generator(lib):
    gen = lib.Generator()
    gen.manual_seed(42)
    tensor = lib.empty(5)
    lib.nn.init.trunc_normal_(tensor, generator=gen)
    reference = lib.empty(5)
    lib.manual_seed(42)
    lib.nn.init.trunc_normal_(reference)
    assert lib.equal(tensor, reference)
    assert _is_trunc_normal(tensor, mean=0, std=1, a=-2, b=2)


@both
@pytest.mark.parametrize("name", INITS)
def test_every_generator_argument_is_followed(lib, name):
    """One seed gives one sample, through ``generator=`` or the default generator."""
    fill = getattr(lib.nn.init, name)
    first, second = lib.empty(6, 4), lib.empty(6, 4)
    fill(first, generator=lib.Generator().manual_seed(7))
    lib.manual_seed(7)
    fill(second)
    assert lib.equal(first, second)
    fill(second, generator=lib.Generator().manual_seed(8))
    assert not lib.equal(first, second)


@both
def test_constant_ones_zeros_and_eye(lib):
    for dims in (1, 2, 4):
        tensor = _random_tensor(lib, dims, 1, 5)
        val = _random_float(1, 10)
        lib.nn.init.constant_(tensor, val)
        assert lib.equal(tensor, tensor.clone().fill_(val))
        for fill, value in ((lib.nn.init.ones_, 1), (lib.nn.init.zeros_, 0)):
            fill(tensor)
            assert lib.equal(tensor, tensor.clone().fill_(value))
    tensor = _random_tensor(lib, 2, 1, 5)
    lib.nn.init.eye_(tensor)
    np.testing.assert_array_equal(tensor.numpy(), np.eye(*tensor.shape))
    for dims in (1, 3):
        with pytest.raises(ValueError, match="^Only tensors with 2 dimensions are supported$"):
            lib.nn.init.eye_(_random_tensor(lib, dims, 1, 3))


@both
def test_dirac_properties_and_errors(lib):
    for dims in (3, 4, 5):
        for groups in (1, 2, 3):
            a, c, d, e = (random.randint(1, 5) for _ in range(4))
            b = random.randint(1, 5 * groups)
            tensor = lib.randn((a * groups, b, c, d, e)[:dims])
            lib.nn.init.dirac_(tensor, groups)
            smallest = min(tensor.size(0) // groups, tensor.size(1))
            assert lib.nonzero(tensor).size(0) == smallest * groups
            assert tensor.sum().item() == smallest * groups
    for dims in (1, 2, 6):
        with pytest.raises(ValueError, match="^Only tensors with 3, 4, or 5 dimensions are "
                                             "supported$"):
            lib.nn.init.dirac_(_random_tensor(lib, dims, 1, 3))
    with pytest.raises(ValueError, match="^dim 0 must be divisible by groups$"):
        lib.nn.init.dirac_(lib.empty(3, 3, 3), groups=2)


@both
@pytest.mark.parametrize("groups", [1, 3])
def test_dirac_identity(lib, groups):
    """A Dirac-initialised convolution copies its input channels (1-d, 2-d and 3-d)."""
    batch, in_c, out_c, size, kernel = 8, 3, 9, 5, 3
    per_group = out_c // groups
    for conv, dims in ((lib.nn.functional.conv1d, 1), (lib.nn.functional.conv2d, 2),
                       (lib.nn.functional.conv3d, 3)):
        x = lib.randn(batch, in_c, *(size,) * dims)
        weight = lib.cat([lib.zeros(per_group, in_c, *(kernel,) * dims)] * groups)
        lib.nn.init.dirac_(weight, groups)
        out = conv(x, weight)
        inner = (slice(None), slice(None)) + (slice(1, -1),) * dims
        for g in range(groups):
            start = per_group * g
            assert lib.allclose(x[inner], out[:, start:start + in_c], atol=1e-6)
            assert lib.nonzero(out[:, start + in_c:per_group * (g + 1)]).numel() == 0


@both
def test_fewer_than_two_dimensions_refused(lib):
    init = lib.nn.init
    for dims in (0, 1):
        tensor = _random_tensor(lib, dims, 1, 1)
        for fill in (init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
                     init.kaiming_normal_):
            with pytest.raises(ValueError, match="^Fan in and fan out can not be computed "
                                                 "for tensor with fewer than 2 dimensions$"):
                fill(tensor)
    with pytest.raises(ValueError, match="^Only tensors with 2 or more dimensions are "
                                         "supported$"):
        init.orthogonal_(lib.empty(3))
    for dims in (1, 3):
        with pytest.raises(ValueError, match="^Only tensors with 2 dimensions are supported$"):
            init.sparse_(_random_tensor(lib, dims, 1, 3), _random_float(0.1, 0.9))


@both
@pytest.mark.parametrize("name", ["kaiming_uniform_", "kaiming_normal_"])
def test_kaiming_zero_element_warns_and_mode_errors(lib, name):
    fill = getattr(lib.nn.init, name)
    tensor = lib.empty(0, 1)
    with pytest.warns(UserWarning, match="^Initializing zero-element tensors is a no-op$"):
        assert fill(tensor) is tensor
    with pytest.raises(ValueError, match=r"^Mode fan_avg not supported, please use one of "
                                         r"\['fan_in', 'fan_out'\]$"):
        fill(lib.empty(3, 3), mode="fan_avg", nonlinearity="gelu")  # the mode is read first
    fill(lib.empty(3, 3), mode="FAN_OUT")  # any case
    with pytest.raises(ValueError, match="^Unsupported nonlinearity gelu$"):
        fill(lib.empty(3, 3), nonlinearity="gelu")


@both
@pytest.mark.parametrize("uniform", [True, False])
def test_xavier_statistics(lib, uniform):
    fill = lib.nn.init.xavier_uniform_ if uniform else lib.nn.init.xavier_normal_
    for use_gain in (True, False):
        for dims in (2, 4):
            tensor = _random_tensor(lib, dims, 20, 25)
            gain = _random_float(0.1, 2) if use_gain else 1
            fill(tensor, gain=gain) if use_gain else fill(tensor)
            fan_in, fan_out = _fans(tensor)
            std = gain * math.sqrt(2.0 / (fan_in + fan_out))
            bound = std * math.sqrt(3)
            assert _is_uniform(tensor, -bound, bound) if uniform else _is_normal(tensor, 0, std)


@both
@pytest.mark.parametrize("uniform", [True, False])
def test_kaiming_statistics(lib, uniform):
    fill = lib.nn.init.kaiming_uniform_ if uniform else lib.nn.init.kaiming_normal_
    for use_a in (True, False):
        for dims in (2, 4):
            for mode in ("fan_in", "fan_out"):
                tensor = _random_tensor(lib, dims, 20, 25)
                a = _random_float(0.1, 2) if use_a else 0
                fill(tensor, a=a, mode=mode) if use_a else fill(tensor, mode=mode)
                fan_in, fan_out = _fans(tensor)
                std = math.sqrt(2.0 / ((1 + a ** 2) * (fan_in if mode == "fan_in" else fan_out)))
                bound = std * math.sqrt(3.0)
                assert _is_uniform(tensor, -bound, bound) if uniform \
                    else _is_normal(tensor, 0, std)


@both
def test_sparse_default_std(lib):
    for use_random_std in (True, False):
        tensor = _random_tensor(lib, 2, 30, 35)
        rows = tensor.size(0)
        sparsity = _random_float(0.1, 0.2)
        std = _random_float(0.01, 0.2) if use_random_std else 0.01
        if use_random_std:
            lib.nn.init.sparse_(tensor, sparsity=sparsity, std=std)
        else:
            lib.nn.init.sparse_(tensor, sparsity=sparsity)
        for col in range(tensor.size(1)):
            column = tensor[:, col]
            assert column[column == 0].nelement() >= math.ceil(sparsity * rows)
        assert _is_normal(tensor[tensor != 0], 0, std)


@both
def test_orthogonal(lib):
    for use_gain in (True, False):
        for size in ([3, 4], [4, 3], [20, 2, 3, 4], [2, 3, 4, 5]):
            tensor = lib.zeros(size)
            gain = _random_float(0.1, 2) if use_gain else 1.0
            lib.nn.init.orthogonal_(tensor, gain=gain) if use_gain \
                else lib.nn.init.orthogonal_(tensor)
            rows, cols = size[0], math.prod(size[1:])
            flat = tensor.view(rows, cols)
            product = flat.t() @ flat if rows > cols else flat @ flat.t()
            assert lib.allclose(product, lib.eye(min(rows, cols)) * gain ** 2, atol=1e-6,
                                rtol=0)
    for empty in (lib.empty(0, 3), lib.empty(3, 0)):  # a no-op
        assert lib.nn.init.orthogonal_(empty) is empty


@both
@pytest.mark.parametrize("name,args", [
    ("uniform_", ()), ("normal_", ()), ("trunc_normal_", ()), ("kaiming_uniform_", ()),
    ("xavier_normal_", ()), ("orthogonal_", ())])
def test_integer_tensors_refused_by_the_sampling_kernels(lib, name, args):
    kernel = "check_uniform_bounds" if name in ("uniform_", "kaiming_uniform_") \
        else "normal_kernel_cpu"
    with pytest.raises(NotImplementedError, match=f"^\"{kernel}\" not implemented for "
                                                  "'Long'$"):
        getattr(lib.nn.init, name)(lib.zeros(3, 3, dtype=lib.int64), *args)


@both
def test_orthogonal_of_float16_and_complex_refused_as_torch(lib):
    with pytest.raises(NotImplementedError, match="^\"geqrf_cpu\" not implemented for "
                                                  "'Half'$"):
        lib.nn.init.orthogonal_(lib.zeros(3, 3, dtype=lib.float16))
    with pytest.raises(RuntimeError, match="torch.sign is not intended to support complex "
                                           "numbers. Please use torch.sgn instead."):
        lib.nn.init.orthogonal_(lib.zeros(3, 3, dtype=lib.complex64))


@both
def test_uniform_bounds_and_deprecated_spellings(lib):
    with pytest.raises(RuntimeError, match=r"^uniform_ expects to return a \[from, to\) range, "
                                           "but found from=1 > to=-1$"):
        lib.nn.init.uniform_(lib.zeros(3), 1, -1)
    with pytest.warns(FutureWarning, match=r"^`nn.init.normal` is now deprecated in favor of "
                                           r"`nn.init.normal_`.$"):
        lib.nn.init.normal(lib.randn(3, 3))


@both
@pytest.mark.parametrize("dims", [1, 2, 4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal_all_dtypes(lib, dims, dtype):
    dtype = getattr(lib, dtype)
    tensor = lib.zeros([random.randint(30, 50) for _ in range(dims)], dtype=dtype)
    mean, std = random.uniform(-3, 3), random.uniform(0.01, 1)
    a, b = random.uniform(mean - 2 * std, mean), random.uniform(mean, mean + 2 * std)
    lib.nn.init.trunc_normal_(tensor, mean=mean, std=std, a=a, b=b)
    assert tensor.min().item() >= lib.tensor(a, dtype=dtype).item()
    assert tensor.max().item() <= lib.tensor(b, dtype=dtype).item()
    assert _is_trunc_normal(tensor, mean, std, a, b)


@both
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("a,b", [(-2.0, 2.0), (2.0, 3.0), (5.0, 6.0)])
def test_trunc_normal_wide_narrow_and_far_intervals(lib, dtype, a, b):
    """torch's low-precision and narrow-interval tests, and an interval 5 std away (uniform
    proposals: it ends, and warns of the distant mean)."""
    tensor = lib.empty(10000, dtype=getattr(lib, dtype))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.nn.init.trunc_normal_(tensor, mean=0.0, std=1.0, a=a, b=b)
    warned = [str(w.message) for w in caught]
    assert warned == (["mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                       "distribution of values may be incorrect."] if a > 2 else [])
    assert tensor.min().item() >= a and tensor.max().item() <= b
    if dtype != "float16" or b - a > 1:  # float16 holds too few values in [5, 6] for KS
        assert _is_trunc_normal(tensor.float(), 0.0, 1.0, a, b)
    assert not tensor.isinf().any().item() and not tensor.isnan().any().item()


@both
@pytest.mark.parametrize("dtype,min_unique", [("float32", 5000), ("float64", 5000),
                                              ("float16", 3000)])
def test_trunc_normal_unique_values_and_no_boundary_values(lib, dtype, min_unique):
    tensor = lib.empty(10000, dtype=getattr(lib, dtype))
    lib.nn.init.trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0)
    assert tensor.unique().numel() > min_unique
    lib.nn.init.trunc_normal_(tensor, mean=0.0, std=0.1, a=-2.0, b=2.0)
    assert (tensor == -2.0).sum().item() == 0 and (tensor == 2.0).sum().item() == 0


@both
def test_trunc_normal_empty_or_reversed_interval(lib):
    tensor = lib.nn.init.trunc_normal_(lib.zeros(5), a=1.0, b=1.0)
    assert tensor.tolist() == [1.0] * 5
    with pytest.raises(RuntimeError, match=r"^uniform_ expects to return a \[from, to\) range, "
                                           "but found from=1 > to=-1$"):
        lib.nn.init.trunc_normal_(lib.zeros(3), a=1.0, b=-1.0)


@both
def test_initialising_a_parameter_records_no_graph(lib):
    weight = lib.nn.Parameter(lib.zeros(4, 3))
    for name in INITS:
        assert getattr(lib.nn.init, name)(weight) is weight
        assert weight.requires_grad and weight.grad_fn is None


@both
@pytest.mark.parametrize("fill,versions", [
    (lambda init, w: init.trunc_normal_(w, a=-100.0, b=100.0), 1),  # nothing redrawn
    (lambda init, w: init.trunc_normal_(w, a=-1.0, b=1.0), 2),  # normal draw, then the copy
    (lambda init, w: init.trunc_normal_(w, a=2.0, b=3.0), 2),  # uniform draw, then the copy
    (lambda init, w: init.orthogonal_(w), 2), (lambda init, w: init.kaiming_uniform_(w), 1),
    (lambda init, w: init.eye_(w), 1)])
def test_version_counter_bumps_as_torch(lib, fill, versions):
    weight = lib.empty(40, 20, dtype=lib.float64, requires_grad=True)
    fill(lib.nn.init, weight)
    assert weight._version == versions


@pytest.mark.parametrize("name,kwargs", [(name, {}) for name in INITS] + [
    ("trunc_normal_", {"a": 2.0, "b": 3.0}), ("sparse_", {"sparsity": 0.5}),
    ("eye_", {}), ("constant_", {"val": 0.5})])
def test_every_initializer_on_a_stand_in_gpu(monkeypatch, name, kwargs):
    """Same seed, same numbers on the host and on the device; the tensor stays there."""
    import strict_xp
    strict_xp.install(monkeypatch)
    fill = getattr(gradkit.nn.init, name)
    filled = []
    for device in ("cpu", "cuda"):
        gradkit.manual_seed(3)
        weight = gradkit.nn.Parameter(gradkit.empty(6, 4, device=device))
        assert fill(weight, **kwargs) is weight and weight.device.type == device
        filled.append(weight.detach().cpu().numpy())
    np.testing.assert_allclose(filled[1], filled[0], rtol=1e-6)


@both
def test_fans_of_every_rank_and_of_empty_tensors(lib):
    """fan_in = size(1) · receptive field, fan_out = size(0) · receptive field; a zero fan
    sum divides by zero in xavier as in torch, a zero-element kaiming is a no-op."""
    fans = lib.nn.init._calculate_fan_in_and_fan_out
    for shape, expected in (((2, 3), (3, 2)), ((4, 3, 5), (15, 20)), ((4, 3, 2, 2), (12, 16)),
                            ((0, 3), (3, 0)), ((3, 0, 2), (0, 6))):
        assert fans(lib.empty(shape)) == expected
    empty = lib.empty(0, 3)
    assert lib.nn.init.xavier_uniform_(empty) is empty
    with pytest.raises(ZeroDivisionError):
        lib.nn.init.xavier_normal_(lib.empty(0, 0))
