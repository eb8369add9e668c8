"""torch's test/nn/test_pooling.py, continued (see test_pooling_torch_expectations.py): the
argument checks (zero strides, padding limits, output sizes) and the dtypes of every pooling,
compared with torch 2.13 (same values, or the same error type and message)."""
import numpy as np
import pytest
from expectation_programs import made, same
from test_pooling_torch_expectations import POOLS, rng

torch = pytest.importorskip("torch")


# -- TestPoolingNNDeviceType: argument checks ----------------------------------------------------

@pytest.mark.parametrize("name", POOLS)
@pytest.mark.parametrize("module", [False, True])
def test_pooling_zero_stride(name, module):
    """test_pooling_zero_stride: stride 0 is refused by the function and by the module."""
    d = int(name[-2])

    def program(m):
        x = m.ones([1, 2] + d * [4])
        if module:
            cls = getattr(m.nn, f"{name[:3].title()}Pool{d}d")
            return cls(kernel_size=2, stride=0)(x)
        return getattr(m.nn.functional, name)(x, kernel_size=2, stride=0)
    same(program)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_pool_invalid_size(d):
    """test_pool_invalid_size: a configuration with no output (max pooling with indices and
    dilation, average pooling with a kernel past the input) is refused in torch's words."""
    same(lambda m: getattr(m.nn.functional, f"max_pool{d}d_with_indices")(
        m.ones([1, 1] + d * [4]), 3, stride=2, padding=0, dilation=2))
    same(lambda m: getattr(m.nn.functional, f"max_pool{d}d")(
        m.ones([1, 1] + d * [4]), 3, stride=2, padding=0, dilation=2))
    same(lambda m: getattr(m.nn.functional, f"avg_pool{d}d")(
        m.ones([1, 1] + d * [4]), 6, stride=2, padding=0))


ARGUMENTS = [("stride0", 2, dict(stride=0)), ("pad", 2, dict(stride=1, padding=2)),
             ("negpad", 2, dict(stride=1, padding=-1)), ("small", 5, dict(stride=2)),
             ("dil0", 2, dict(stride=1, dilation=0)), ("k0", 0, {}), ("kneg", -1, {}),
             ("kneg_stride1", -1, dict(stride=1)), ("sneg", 2, dict(stride=-1)),
             ("dilneg", 2, dict(stride=1, dilation=-1)), ("klong", "long", {}),
             ("slong", 2, dict(stride="long")), ("plong", 2, dict(padding="long")),
             ("dlong", 2, dict(dilation="long")), ("pad_past_kernel_half", 3,
                                                   dict(stride=1, padding=2, dilation=3)),
             ("pad_of_one_dim", (2, 3), dict(stride=1, padding=(-1, 3))),
             ("ok", 2, dict(stride=1, padding=1))]


ARGUMENT_CASES = [
    (name, *argument, flags) for name in POOLS for argument in ARGUMENTS
    for flags in ("plain", "requires_grad", "return_indices")
    # (average pooling has no dilation and no indices)
    if name.startswith("max") or not ("dil" in argument[0] or argument[0].startswith("pad_past")
                                      or flags == "return_indices")]


@pytest.mark.parametrize("name,label,kernel,kwargs,flags", ARGUMENT_CASES,
                         ids=["-".join((c[0], c[1], c[4])) for c in ARGUMENT_CASES])
def test_pooling_argument_errors(name, label, kernel, kwargs, flags):
    """(The padding limits of test_pooling_shape and test_pool_invalid_size, all arguments)
    torch checks the lengths, then each dim's stride and padding against the effective kernel,
    then positive sizes, the padding against the kernel's half, the output's size: the same
    errors (and values when valid), max_pool1d's own words unless the indices are asked for."""
    d = int(name[-2])
    if d == 1 and isinstance(kernel, tuple):
        kernel = kernel[1:]
    kwargs = {k: [1] * (d + 1) if v == "long" else v[-d:] if isinstance(v, tuple) else v
              for k, v in kwargs.items()}
    kernel = [2] * (d + 1) if kernel == "long" else kernel
    if flags == "return_indices":
        kwargs["return_indices"] = True
    same(lambda m: getattr(m.nn.functional, name)(
        m.ones((1, 1) + (4,) * d, requires_grad=flags == "requires_grad"), kernel, **kwargs))


# -- dtypes ---------------------------------------------------------------------------------------

DTYPE_POOLS = [("max_pool1d", 1), ("max_pool2d", 2), ("max_pool3d", 3), ("avg_pool1d", 1),
               ("avg_pool2d", 2), ("avg_pool3d", 3), ("adaptive_max_pool1d", 1),
               ("adaptive_max_pool2d", 2), ("adaptive_max_pool3d", 3), ("adaptive_avg_pool1d", 1),
               ("adaptive_avg_pool2d", 2), ("adaptive_avg_pool3d", 3), ("lp_pool1d", 1),
               ("lp_pool2d", 2), ("lp_pool3d", 3)]
POOL_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "bool",
               "complex64"]


DTYPE_CASES = [(name, d, indices) for name, d in DTYPE_POOLS
               for indices in ((False, True) if "max" in name else (False,))]


@pytest.mark.parametrize("name,d,return_indices", DTYPE_CASES)
@pytest.mark.parametrize("dtype", POOL_DTYPES)
def test_adaptive_pooling_no_suppot_input(name, d, return_indices, dtype):
    """test_adaptive_pooling_no_suppot_input (adaptive pooling of integers is refused), and
    every pooling over dtypes: torch's CPU kernels take floating types and (fixed windows)
    integers, avg pooling int64 only and its 3-d kernel no float16; the values otherwise."""
    x = np.arange(2 * 2 * 4 ** d).reshape((2, 2) + (4,) * d) % 7

    def program(m):
        t = made(m, x, dtype)
        if name.startswith("lp"):
            return getattr(m.nn.functional, name)(t, 2, 2)
        kwargs = dict(return_indices=True) if return_indices else {}
        return getattr(m.nn.functional, name)(t, 2, **kwargs)
    same(program, rtol=1e-3 if dtype == "float16" else 1e-6)


def test_lp_pool1d_kernel_size_as_a_list():
    """torch's lp_pool1d multiplies by kernel_size itself: a list is a TypeError (after the
    pooling's own checks); lp_pool2d takes one."""
    x = rng(12).standard_normal((1, 2, 6))
    same(lambda m: m.nn.functional.lp_pool1d(made(m, x, "float64"), 2.0, [2]))
    same(lambda m: m.nn.functional.lp_pool1d(made(m, x, "float64"), 2.0, (3,), 1))
    same(lambda m: m.nn.functional.lp_pool1d(made(m, x, "float64"), 2.0, [9]))
    same(lambda m: m.nn.functional.lp_pool2d(made(m, x, "float64"), 2.0, [2, 1]), rtol=1e-12)
