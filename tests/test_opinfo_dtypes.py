"""torch's OpInfo samples at the dtypes beyond float64/int64 (float32, float16, the small
integers, complex64) agree with gradkit for the ops fixed from them (issue 15).

`tests/fuzz/opinfo_scan.py --dtypes float16,...` found each difference; the ops fixed here run
every sample torch's table has for them at those dtypes, and one program per fix shows the
difference itself (values, dtype and gradients compared with torch)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")  # the ops warn as torch does

import gradkit  # noqa: E402
from fuzz.opinfo_samples import differing_samples, op_db  # noqa: E402
from torch_expectations.twin import raises_like_torch  # noqa: E402

SMALL_INTS = ("uint8", "int8", "int16", "int32")
FIXED = {"nn.functional.rms_norm": ("float16", "float32", "complex64"),
         "addbmm": ("float16", "float32", "complex64") + SMALL_INTS,
         "index_add": ("float16", "float32") + SMALL_INTS,
         "constant_pad_nd": ("complex64", "float16") + SMALL_INTS,
         # their op is a method of torch's Tensor (the scan called gradkit.cfloat, a dtype)
         "cfloat": ("float16", "uint8"), "cdouble": ("float16", "int8"),
         "__radd__": ("float16", "uint8"), "__rxor__": ("int16",),
         # their in-place variant is partial(F.mish, inplace=True): gradkit's F.mish so
         "nn.functional.mish": ("float16", "float32"),
         "nn.functional.hardsigmoid": ("float16", "float32"),
         "sgn": ("float16", "float32", "complex64"),  # torch's gradient: a ZeroTensor
         # float16 was summed window by window in float16 (torch: float32, rounded once)
         "nn.functional.conv_transpose1d": ("float16",),
         "nn.functional.conv_transpose2d": ("float16", "float32"),
         "nn.functional.conv_transpose3d": ("float16",),
         "linalg.lstsq": ("float32", "complex64")}  # the residuals' gradient


def _cases():
    for opinfo in op_db:
        for dtype in FIXED.get(opinfo.name, ()):
            yield pytest.param(opinfo, dtype, id=f"{opinfo.name}-{dtype}")


def _torch_rounds_half_conv_transpose_once(d: int) -> bool:
    """Whether this CPU's torch sums a float16 conv_transpose{d}d in float32 and rounds once
    (its AVX-512 kernels, and gradkit); on CPUs without AVX-512 it rounds along the way."""
    x, w = torch.randn((2, 3) + (5,) * d).half(), torch.randn((3, 3) + (3,) * d).half()
    function = getattr(torch.nn.functional, f"conv_transpose{d}d")
    return torch.equal(function(x, w), function(x.float(), w.float()).half())


@pytest.mark.parametrize("opinfo, dtype", _cases())
def test_torch_samples_at_every_dtype_agree(opinfo, dtype):
    d = {"nn.functional.conv_transpose2d": 2, "nn.functional.conv_transpose3d": 3}.get(opinfo.name)
    if d and dtype == "float16" and not _torch_rounds_half_conv_transpose_once(d):
        pytest.skip(f"torch's float16 conv_transpose{d}d bits depend on the CPU: this one's "
                    "kernel rounds along the way (gradkit sums in float32 and rounds once)")
    dtype = getattr(torch, dtype)
    if dtype not in opinfo.supported_dtypes("cpu"):
        pytest.skip(f"torch's table has no {dtype} samples of {opinfo.name}")
    differing = differing_samples(opinfo, [dtype])
    assert not differing, differing


def _same(program, rtol: float = 0.0, atol: float = 0.0):
    """program(torch) and program(gradkit): the same dtypes and values (exact by default)."""
    expected, got = program(torch), program(gradkit)
    for e, g in zip(expected, got):
        assert str(g.dtype).split(".")[1] == str(e.dtype).split(".")[1]
        np.testing.assert_allclose(g.detach().numpy().astype(float),
                                   e.detach().numpy().astype(float), rtol=rtol, atol=atol)
    return got


def _rms_norm_half(lib, values, eps=None):
    x = lib.tensor(values, dtype=lib.float16, requires_grad=True)
    w = lib.tensor([0.5, 2.0, -1.0], dtype=lib.float16, requires_grad=True)
    out = lib.nn.functional.rms_norm(x, (3,), w, eps)
    return (out,) + lib.autograd.grad((out * lib.tensor([1.0, -2.0, 3.0],
                                                        dtype=lib.float16)).sum(), (x, w))


def test_rms_norm_of_float16_squares_in_float32():
    """x² of a half above 256 overflows float16: torch upcasts to float32 (rounding eps to
    float16 first) and casts back before the weight (gradkit gave 0 for every value)."""
    got = _same(lambda lib: _rms_norm_half(lib, [300.0, -700.0, 1000.0], 0.5))
    assert np.isfinite(got[0].detach().numpy()).all() and got[0].detach().numpy().any()
    _same(lambda lib: _rms_norm_half(lib, [300.0, -700.0, 1000.0], 0.1))  # eps in float16


def test_rms_norm_of_float16_defaults_eps_to_float32s():
    """eps=None is float32's epsilon for a float16 input (torch's opmath type), not float16's
    9.8e-4, which would swamp x² of values near 1e-3."""
    got = _same(lambda lib: _rms_norm_half(lib, [1e-3, -2e-3, 3e-3]))
    x, eps = np.float16([1e-3, -2e-3, 3e-3]).astype(float), float(np.finfo(np.float32).eps)
    expected = 0.5 * x[0] / np.sqrt(np.mean(x * x) + eps)
    np.testing.assert_allclose(got[0].detach().numpy()[0], expected, rtol=1e-3)


def _addbmm(lib, dtype, alpha=1, beta=1):
    x = lib.full((2, 2), 7, dtype=getattr(lib, dtype))
    a = lib.full((3, 2, 4), 11, dtype=getattr(lib, dtype))
    return (lib.addbmm(x, a, a.transpose(1, 2), alpha=alpha, beta=beta),
            x.addbmm(a, a.transpose(1, 2)))


@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_addbmm_of_small_integers_keeps_their_dtype(dtype):
    """torch adds each batch's product into the result in its dtype, wrapping (gradkit summed
    the batches as int64: the right sum in the wrong dtype)."""
    got = _same(lambda lib: _addbmm(lib, dtype, alpha=3, beta=2))
    assert int(got[0][0, 0]) == np.int64(2 * 7 + 3 * 3 * 4 * 121).astype(dtype)  # wrapped


def test_addbmm_of_float16_rounds_after_each_batch():
    """torch's float16 addbmm is one addmm_ per batch into the half result: each rounds once,
    from float32 (one sum in float32 differs by a float16 ulp)."""
    def program(lib):
        x = lib.tensor([[0.1, -3.0]], dtype=lib.float16, requires_grad=True)
        a = lib.tensor(np.linspace(-9, 9, 5 * 3 * 5).reshape(5, 3, 5) ** 2 / 7,
                       dtype=lib.float16, requires_grad=True)
        b = lib.tensor(np.linspace(-5, 8, 5 * 5 * 2).reshape(5, 5, 2),
                       dtype=lib.float16, requires_grad=True)
        out = lib.addbmm(x, a, b, beta=0.5, alpha=1.5)
        return (out,) + lib.autograd.grad(out.sum(), (x, a, b))
    _same(program)
    _same(lambda lib: _addbmm(lib, "float16", beta=0))


def _index_add(lib, dtype, alpha):
    x = lib.tensor([10, 20, 30], dtype=getattr(lib, dtype))
    return (x.index_add(0, lib.tensor([0, 2]), lib.tensor([1, 2], dtype=x.dtype), alpha=alpha),)


@pytest.mark.parametrize("dtype, alpha", [("uint8", -1), ("uint8", -255), ("uint8", 255),
                                          ("int8", 127), ("int8", -128), ("int16", -300)])
def test_index_add_casts_alpha_as_torch_checks_it(dtype, alpha):
    """torch casts alpha to the dtype with c10's check: an unsigned type takes a negative
    down to -max, wrapping (NumPy refused uint8 * -1 with an OverflowError)."""
    got = _same(lambda lib: _index_add(lib, dtype, alpha))
    assert int(got[0][2]) == np.int64(30 + 2 * alpha).astype(dtype)


@pytest.mark.parametrize("dtype, alpha, name", [("uint8", -256, "uint8_t"),
                                                ("uint8", 256, "uint8_t"),
                                                ("int8", 128, "int8_t"), ("int8", -129, "int8_t"),
                                                ("int32", 2**31, "int")])
def test_index_add_refuses_an_alpha_beyond_the_dtype(dtype, alpha, name):
    raises_like_torch(lambda lib: _index_add(lib, dtype, alpha), RuntimeError,
                      f"value cannot be converted to type {name} without overflow")


def test_constant_pad_nd_takes_a_complex_value():
    """torch.constant_pad_nd's value is any Scalar (F.pad's is a float): a complex tensor is
    padded with it, a real one with its real part when the imaginary part is 0."""
    def program(lib):
        z = lib.tensor([[1 - 1j, 2j]], dtype=lib.complex64, requires_grad=True)
        out = lib.constant_pad_nd(z, (1, 2), 1 + 2j)
        return out, lib.constant_pad_nd(lib.ones(2), (1, 1), 3 + 0j), \
            lib.autograd.grad((out * out).real.sum(), z)[0]
    got = _same(program)
    assert complex(got[0][0, 0]) == 1 + 2j


def test_constant_pad_nd_refuses_an_imaginary_part_for_a_real_tensor():
    raises_like_torch(lambda lib: lib.constant_pad_nd(lib.ones(2), (1, 1), 1 + 2j),
                      RuntimeError, "value cannot be converted to type float without overflow")


def _attention_half(lib, shape, magnitude):
    rng = np.random.default_rng(0)
    q, k, v = (lib.tensor(rng.standard_normal(shape) * magnitude, dtype=lib.float16,
                          requires_grad=True) for _ in range(3))
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    return (out,) + lib.autograd.grad((out.float() * lib.tensor(
        rng.standard_normal(shape), dtype=lib.float32)).sum(), (q, k, v))


@pytest.mark.parametrize("shape", [(2, 5, 8), (1, 2, 5, 8)])
def test_attention_of_float16_in_float32(shape):
    """torch's attention upcasts float16 to float32 (math backend) or accumulates in it (the
    4-d flash kernel) and rounds once: scores near 1e5 stay finite (gradkit's float16
    scores overflowed to inf, softmax NaN), small ones agree to float16's rounding."""
    # atol: torch's 4-d CPU flash kernel leaves float16 rounding noise (up to 7e-3 on an AVX2
    # CPU) in the query/key gradients its math backend, and gradkit, give as 0 (exp(-1e4))
    got = _same(lambda lib: _attention_half(lib, shape, 200.0), rtol=1e-2, atol=1e-2)
    assert all(np.isfinite(t.detach().numpy()).all() for t in got)
    _same(lambda lib: _attention_half(lib, shape, 1.0), rtol=2e-2, atol=2e-2)  # the scan's


def _lstsq_residual_grads(lib, complex_values: bool, driver: str):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    if complex_values:
        a, b = a + 1j * rng.standard_normal((4, 3)), b + 1j * rng.standard_normal((4, 2))
    a, b = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
    result = lib.linalg.lstsq(a, b, driver=driver)
    loss = (result.solution.abs() ** 2).sum() + (result.residuals * lib.tensor([2.0, -1.0])).sum()
    grads = lib.autograd.grad(loss, (a, b), create_graph=True)
    return grads + lib.autograd.grad(sum((g.abs() ** 2).sum() for g in grads), (a, b))


@pytest.mark.parametrize("complex_values", [False, True])
@pytest.mark.parametrize("driver", ["gels", "gelsd"])
def test_lstsq_residuals_are_differentiable(complex_values, driver):
    """torch differentiates the residuals |A X - B|² of a tall A (gradkit's were a constant:
    their share of the gradient was silently missing), to second order."""
    _same(lambda lib: _lstsq_residual_grads(lib, complex_values, driver), rtol=1e-9,
          atol=1e-9)


def test_lstsq_residuals_forward_gradient():
    def program(lib):
        rng = np.random.default_rng(2)
        a, t_a, b, t_b = (lib.tensor(rng.standard_normal(shape))
                          for shape in ((4, 3), (4, 3), (4,), (4,)))
        with lib.autograd.forward_ad.dual_level():
            result = lib.linalg.lstsq(lib.autograd.forward_ad.make_dual(a, t_a),
                                      lib.autograd.forward_ad.make_dual(b, t_b), driver="gels")
            return tuple(lib.autograd.forward_ad.unpack_dual(t).tangent
                         for t in (result.solution, result.residuals))
    _same(program, rtol=1e-9, atol=1e-12)
