"""torch's OpInfo samples and reference inputs agree with gradkit for the ops fixed from them
(the first scan's leftovers and ``opinfo_scan.py --reference``): each fixed op runs every
sample torch's table has for it, in the dtypes where it differed."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")  # the ops warn as torch does

import math  # noqa: E402

import numpy as np  # noqa: E402

import gradkit  # noqa: E402
from fuzz.opinfo_samples import differing_samples, op_db  # noqa: E402

# (OpInfo name, or name.variant, dtype, reference inputs too)
FIXED = [("constant_pad_nd", "complex128", False), ("constant_pad_nd", "float64", False),
         ("sum_to_size", "bool", False), ("sum_to_size", "float64", False),
         ("linalg.lstsq", "float64", False), ("linalg.lstsq", "complex128", False),
         ("nn.functional.pad", "float64", True), ("nn.functional.pad", "complex128", True),
         ("nn.functional.interpolate.nearest-exact", "float64", True),
         ("nn.functional.interpolate.nearest", "float64", True)]


def _differing(opinfo, dtype, reference: bool) -> list:
    return differing_samples(opinfo, [dtype], ("op", "method"), reference)


@pytest.mark.parametrize("name, dtype, reference", FIXED, ids=lambda v: str(v))
def test_torch_samples_of_fixed_ops_agree(name, dtype, reference):
    dtype = getattr(torch, dtype)
    opinfos = [o for o in op_db if name in (o.name, f"{o.name}.{o.variant_test_name}")]
    assert opinfos
    for opinfo in opinfos:
        assert not _differing(opinfo, dtype, reference)


@pytest.mark.parametrize("value", [1 + 2j, 1 + 0j, 2.5, 3])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool", "complex128"])
def test_constant_pad_nd_takes_any_number(dtype, value):
    """Its value is a Number (F.pad's a float): a complex one pads a complex input and is
    refused, as by torch, only where its imaginary part cannot be written."""
    results = []
    for lib in (torch, gradkit):
        x = lib.arange(1, 3).to(getattr(lib, dtype))
        try:
            results.append(lib.constant_pad_nd(x, (1, 2), value).tolist())
        except RuntimeError as e:
            results.append(str(e))
    assert results[0] == results[1]


def test_f_pad_still_refuses_a_complex_value():
    for lib in (torch, gradkit):
        with pytest.raises(TypeError, match="argument 'value' .* must be float, not complex"):
            lib.nn.functional.pad(lib.ones(2, dtype=lib.complex128), (1, 1), value=1j)


@pytest.mark.parametrize("shape, size", [((), ()), ((1,), ()), ((3,), ()), ((1,), (1,))])
@pytest.mark.parametrize("dtype", ["bool", "int8", "float64"])
def test_sum_to_size_of_an_empty_size_always_sums(shape, size, dtype):
    """torch's sum_to sums to a 0-d size even from a 0-d tensor: bool and int8 give int64."""
    a = torch.ones(shape, dtype=getattr(torch, dtype)).sum_to_size(size)
    b = gradkit.ones(shape, dtype=getattr(gradkit, dtype)).sum_to_size(size)
    assert (str(a.dtype), tuple(a.shape), a.tolist()) == \
        (str(b.dtype).replace("gradkit", "torch"), tuple(b.shape), b.tolist())


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("driver, rhs", [("gels", (4, 3)), ("gelsd", (4,)), ("gelss", (4, 1)),
                                         (None, (4, 2))])
def test_lstsq_residuals_are_differentiable(dtype, driver, rhs):
    """The residuals ||A X - B||^2 of a tall A have torch's gradients (2 R g X^H to A, -2 R g
    to B), also twice and forward; gelsy (the default) reports none."""
    rng = np.random.default_rng(1)
    complex_part = 1j if dtype == "complex128" else 0
    a_values = rng.standard_normal((4, 3)) + complex_part * rng.standard_normal((4, 3))
    b_values = rng.standard_normal(rhs) + complex_part * rng.standard_normal(rhs)
    grads = []
    for lib in (torch, gradkit):
        a = lib.tensor(a_values, dtype=getattr(lib, dtype), requires_grad=True)
        b = lib.tensor(b_values, dtype=getattr(lib, dtype), requires_grad=True)
        residuals = lib.linalg.lstsq(a, b, driver=driver).residuals
        assert residuals.requires_grad
        if not residuals.numel():
            assert driver is None
            continue
        weights = lib.arange(1.0, 1 + residuals.numel()).reshape(residuals.shape).double()
        grads.append([g.detach().numpy() for g in lib.autograd.grad((residuals * weights).sum(),
                                                                      (a, b))])
        if lib is gradkit:
            def both(a, b):
                return gradkit.linalg.lstsq(a, b, driver=driver)[:2]
            assert gradkit.autograd.gradcheck(both, (a, b), check_forward_ad=True)
            assert gradkit.autograd.gradgradcheck(both, (a, b))
    if grads:
        for expected, got in zip(*grads):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("pad", [(-4, 5, 0, 0), (0, 0, 2, -4), (-5, 7, 1, 1), (-2, -2, 0, 0),
                                 (-3, -3, 0, 0), (1, 2, 3, 4)])
def test_replicate_pad_cropping_past_the_edge_copies_it(pad):
    """Output j copies input clamp(j - left, 0, size - 1): a crop past the other side
    still copies that edge (values and gradients as torch's); a negative size is refused."""
    values = np.random.default_rng(2).standard_normal((2, 3, 4, 4))
    results = []
    for lib in (torch, gradkit):
        x = lib.tensor(values, requires_grad=True)
        try:
            y = lib.nn.functional.pad(x, pad, "replicate")
        except RuntimeError as e:
            results.append(str(e))
            continue
        weights = lib.arange(float(y.numel())).reshape(tuple(y.shape)).double()
        results.append((y.detach().numpy(), lib.autograd.grad((y * weights).sum(), x)[0].numpy()))
    if isinstance(results[0], str):
        assert results[0] == results[1]
        assert "negative dimension -2: [2, 3, 4, -2]" in results[1]
    else:
        for expected, got in zip(*results):
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", [((2, 3, 4, 4), (1, 1)), ((4,), (1, 1)),
                                        ((4, 4), (1, 1, 1, 1)), ((2,) * 6, (1,) * 6)])
def test_copying_pad_modes_refuse_other_dims(mode, shape, pad):
    for lib in (torch, gradkit):
        with pytest.raises(NotImplementedError, match=f"Padding size {len(pad)} is not "
                           f"supported for {len(shape)}D input tensor"):
            lib.nn.functional.pad(lib.ones(shape), pad, mode)


def test_as_strided_scatter_input_gradient_is_the_unscattered_part():
    """torch's as_strided_scatter_backward hands the input the gradient of the scattered
    positions (its own gradcheck fails; its OpInfo marks test_fn_grad an expected failure);
    gradkit's is the rest, the derivative of the values: gradcheck passes."""
    def scatter(lib):
        return lambda x, src: lib.as_strided_scatter(x, src, (2,), (2,), 1)
    x = torch.arange(6.0, dtype=torch.float64, requires_grad=True)
    src = torch.ones(2, dtype=torch.float64, requires_grad=True)
    assert not torch.autograd.gradcheck(scatter(torch), (x, src), raise_exception=False)
    gx = gradkit.arange(6.0, dtype=gradkit.float64, requires_grad=True)
    gsrc = gradkit.ones(2, dtype=gradkit.float64, requires_grad=True)
    assert gradkit.autograd.gradcheck(scatter(gradkit), (gx, gsrc))
    assert gradkit.autograd.gradgradcheck(scatter(gradkit), (gx, gsrc))
    g_x, g_src = gradkit.autograd.grad((scatter(gradkit)(gx, gsrc) * gx.detach()).sum(), (gx, gsrc))
    assert g_x.tolist() == [0.0, 0.0, 2.0, 0.0, 4.0, 5.0] and g_src.tolist() == [1.0, 3.0]


@pytest.mark.parametrize("name", ["hardtanh", "relu6", "hardshrink", "softshrink", "elu", "celu",
                                  "selu"])
def test_gradient_at_nan_is_torchs_scalar_loops(name):
    """One element runs torch's scalar loop, whose gradient at NaN gradkit gives everywhere
    (torch's vectorized loop differs: docs/numerics.md)."""
    grads = []
    for lib in (torch, gradkit):
        x = lib.tensor([float("nan")], dtype=lib.float64, requires_grad=True)
        grads.append(lib.autograd.grad(getattr(lib.nn.functional, name)(x).sum(), x)[0].item())
    assert grads[0] == grads[1]


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("resize", [{"size": 4}, {"size": 13}, {"scale_factor": 1.7},
                                    {"scale_factor": 0.6}])
def test_interpolate_nearest_exact(dims, resize):
    """Output i reads input floor((i + 0.5) * scale), clamped: values, gradients and node name
    as torch's."""
    values = np.random.default_rng(3).standard_normal((2, 1) + (5,) * dims)
    results = []
    for lib in (torch, gradkit):
        x = lib.tensor(values, requires_grad=True)
        y = lib.nn.functional.interpolate(x, mode="nearest-exact", **resize)
        weights = lib.arange(float(y.numel())).reshape(tuple(y.shape)).double()
        results.append((y.detach().numpy(), lib.autograd.grad((y * weights).sum(), x)[0].numpy(),
                        type(y.grad_fn).__name__))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
    assert results[1][2] == results[0][2] == f"UpsampleNearestExact{dims}DBackward0"


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_polygamma_far_below_zero_is_torchs_direct_sum(n):
    """Below q = -1000 torch's zeta sums -q terms one by one (gradkit stopped at 100,000 and
    gave polygamma(4, -4988429.2) = -1e-26 for 74935.5); gradkit's closed form agrees."""
    q = [-1000.3, -1234.56789, -12345.9, -999.7, -1500.25, -1000.75, -3.5, -4988429.2]
    expected = torch.polygamma(n, torch.tensor(q, dtype=torch.float64)).numpy()
    got = gradkit.polygamma(n, gradkit.tensor(q, dtype=gradkit.float64)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_polygamma_at_a_half_integer_far_below_zero_is_exact(n):
    """Known: at q = -1000.5 the terms cancel to zeta(n + 1, 1001.5); torch's long sum keeps
    its rounding (-2.3e-12 where the value is -1.2e-16 for n = 6), gradkit is exact."""
    got = gradkit.polygamma(n, gradkit.tensor([-1000.5], dtype=gradkit.float64))
    expected = torch.polygamma(n, torch.tensor([1001.5], dtype=torch.float64))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["hardtanh", "hardshrink", "softshrink", "relu6", "elu",
                                  "celu", "selu"])
def test_activation_gradient_at_nan_is_torchs_scalar_loop(name):
    """Known: torch's gradient at NaN depends on where the NaN sits (its SIMD loop, 8 float64
    at a time, gives 0 or NaN; its scalar loop for the rest passes the gradient through);
    gradkit gives the scalar loop's answer at every position, as torch does for one element."""
    values = [math.nan] * 9 + [math.inf, -math.inf, 0.25]
    expected = []
    for v in values:  # torch one element at a time: its scalar loop
        x = torch.tensor([v], dtype=torch.float64, requires_grad=True)
        getattr(torch.nn.functional, name)(x).backward(torch.tensor([1.3], dtype=torch.float64))
        expected.append(x.grad.item())
    x = gradkit.tensor(values, dtype=gradkit.float64, requires_grad=True)
    getattr(gradkit.nn.functional, name)(x).backward(gradkit.full((12,), 1.3,
                                                                  dtype=gradkit.float64))
    np.testing.assert_array_equal(x.grad.numpy(), expected)
