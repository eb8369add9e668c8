"""gradkit.fft against torch.fft on the same programs: values, dtypes, shapes, gradients (with a
complex cotangent), node names, n/s cropping and zero padding, norms, and the errors with their
messages. gradcheck/gradgradcheck/jvp run from the op table (tests/op_db.py, "# lane fft")."""
import numpy as np
import pytest

import gradkit
from test_torch_numerics import assert_same_as_torch

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(515)
REAL = _rng.standard_normal((4, 5))
COMPLEX = _rng.standard_normal((4, 5)) + 1j * _rng.standard_normal((4, 5))
CUBE = _rng.standard_normal((2, 3, 4)) + 1j * _rng.standard_normal((2, 3, 4))
NORMS = (None, "backward", "ortho", "forward")


def _cotangent(m, out):
    """A fixed cotangent of out's shape and dtype (complex for a complex output)."""
    k = np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape))
    value = np.cos(k) + 1j * np.sin(3 * k) if out.is_complex() else np.cos(k)
    return m.tensor(value, dtype=out.dtype)


def _program(call, value, dtype):
    """call(m.fft, x) and its gradient for a leaf x of ``value`` in ``dtype``."""
    def program(m):
        x = m.tensor(value, dtype=getattr(m, dtype), requires_grad=True)
        out = call(m.fft, x)
        (grad,) = m.autograd.grad(out, x, _cotangent(m, out))
        return out, grad
    return program


def _check(call, value, dtype):
    precise = dtype in ("float64", "complex128")
    assert_same_as_torch(_program(call, value, dtype), rtol=1e-9 if precise else 2e-5,
                         atol=1e-12 if precise else 2e-5)


# (test id, gradkit.fft / torch.fft function, input)
ONE_D = [("fft_real", "fft", REAL), ("fft_complex", "fft", COMPLEX), ("ifft_real", "ifft", REAL),
         ("ifft_complex", "ifft", COMPLEX), ("rfft", "rfft", REAL), ("ihfft", "ihfft", REAL),
         ("irfft", "irfft", COMPLEX), ("hfft", "hfft", COMPLEX),
         ("irfft_real_input", "irfft", REAL)]
ONE_D_ARGS = [{}, {"n": 3}, {"n": 8}, {"n": 1}, {"dim": 0}, {"dim": -2, "n": 6},
              {"n": 7, "dim": 1}] + [{"norm": norm} for norm in NORMS]


@pytest.mark.parametrize("kwargs", ONE_D_ARGS, ids=str)
@pytest.mark.parametrize("name,function,value", ONE_D, ids=[row[0] for row in ONE_D])
def test_one_dimensional_transforms_match_torch(name, function, value, kwargs):
    if kwargs.get("n") == 1 and name.startswith(("irfft", "hfft")):
        kwargs = {**kwargs, "n": 2}
    dtype = "complex128" if np.iscomplexobj(value) else "float64"
    _check(lambda f, x: getattr(f, function)(x, **kwargs), value, dtype)


ND = [("fftn", "fftn", COMPLEX), ("fftn_real", "fftn", REAL), ("ifftn", "ifftn", COMPLEX),
      ("rfftn", "rfftn", REAL), ("ihfftn", "ihfftn", REAL), ("irfftn", "irfftn", COMPLEX),
      ("hfftn", "hfftn", COMPLEX), ("fft2", "fft2", COMPLEX), ("ifft2", "ifft2", REAL),
      ("rfft2", "rfft2", REAL), ("ihfft2", "ihfft2", REAL), ("irfft2", "irfft2", COMPLEX),
      ("hfft2", "hfft2", COMPLEX)]
ND_ARGS = [{}, {"s": (3, 7)}, {"s": (-1, 4)}, {"dim": 0}, {"dim": (1, 0)}, {"s": (6,)},
           {"s": [2, 3], "dim": [-1, 0]}] + [{"norm": norm} for norm in NORMS]


@pytest.mark.parametrize("kwargs", ND_ARGS, ids=str)
@pytest.mark.parametrize("name,function,value", ND, ids=[row[0] for row in ND])
def test_multi_dimensional_transforms_match_torch(name, function, value, kwargs):
    if name.endswith("2") and "dim" in kwargs and len(kwargs.get("s", (0, 0))) == 2:
        kwargs = {**kwargs, "dim": (-1, 0)}  # the 2-D forms need as many dims as s has
    if name.endswith("2") and kwargs.get("s") == (6,):
        kwargs = {**kwargs, "dim": (1,)}
    dtype = "complex128" if np.iscomplexobj(value) else "float64"
    _check(lambda f, x: getattr(f, function)(x, **kwargs), value, dtype)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "ihfftn", "irfftn", "hfftn"])
def test_three_dimensional_inputs(name):
    value = CUBE if name in ("fftn", "ifftn", "irfftn", "hfftn") else CUBE.real
    dtype = "complex128" if np.iscomplexobj(value) else "float64"
    _check(lambda f, x: getattr(f, name)(x, dim=(0, 2), s=(3, 5), norm="ortho"), value, dtype)
    _check(lambda f, x: getattr(f, name)(x), value, dtype)


@pytest.mark.parametrize("name,function,value", ONE_D + ND, ids=[row[0] for row in ONE_D + ND])
def test_single_precision_stays_single(name, function, value):
    _check(lambda f, x: getattr(f, function)(x), value,
           "complex64" if np.iscomplexobj(value) else "float32")


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "irfft", "hfft", "fftn",
                                  "rfftn", "ihfftn", "irfftn", "hfftn", "fft2"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_and_bool_inputs_promote_to_the_default_float(name, dtype):
    assert_same_as_torch(lambda m: getattr(m.fft, name)(
        m.tensor([[1, 0, 1], [0, 1, 1]], dtype=getattr(m, dtype))), rtol=2e-6, atol=2e-6)
    gradkit.set_default_dtype(gradkit.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert_same_as_torch(lambda m: getattr(m.fft, name)(m.tensor([3, 1, 4])), rtol=1e-12)
    finally:
        gradkit.set_default_dtype(gradkit.float32)
        torch.set_default_dtype(torch.float32)


def _top_nodes(m, name, value, dtype, **kwargs):
    x = m.tensor(value, dtype=getattr(m, dtype), requires_grad=True)
    node = getattr(m.fft, name)(x, **kwargs).grad_fn
    return node.name(), node.next_functions[0][0].name().replace("torch::autograd::", "")


@pytest.mark.parametrize("name,value,kwargs", [
    ("fft", REAL, {}), ("fft", COMPLEX, {}), ("ifft", REAL, {}), ("rfft", REAL, {}),
    ("irfft", COMPLEX, {}), ("hfft", COMPLEX, {}), ("ihfft", REAL, {}), ("fftn", REAL, {}),
    ("rfftn", REAL, {}), ("irfftn", COMPLEX, {}), ("hfftn", COMPLEX, {"dim": 0}),
    ("ihfftn", REAL, {"dim": 1}), ("fft", COMPLEX, {"n": 3}), ("fftshift", REAL, {})])
def test_graphs_have_torchs_nodes(name, value, kwargs):
    dtype = "complex128" if np.iscomplexobj(value) else "float64"
    assert _top_nodes(gradkit, name, value, dtype, **kwargs) == \
        _top_nodes(torch, name, value, dtype, **kwargs)


ERRORS = [
    ("fft_0d", lambda m: m.fft.fft(m.tensor(1.0))),
    ("fftn_0d_s", lambda m: m.fft.fftn(m.tensor(1.0), s=(1,))),
    ("fft2_1d", lambda m: m.fft.fft2(m.ones(3))),
    ("fft2_0d", lambda m: m.fft.fft2(m.tensor(1.0))),
    ("fft_n0", lambda m: m.fft.fft(m.ones(3), n=0)),
    ("fft_n_negative", lambda m: m.fft.fft(m.ones(3), n=-1)),
    ("fft_empty_dim", lambda m: m.fft.fft(m.ones(0, 3), dim=0)),
    ("fft_bad_dim", lambda m: m.fft.fft(m.ones(2, 3), dim=-3)),
    ("rfft_complex", lambda m: m.fft.rfft(m.ones(3, dtype=m.complex64))),
    ("rfft_complex_before_n", lambda m: m.fft.rfft(m.ones(3, dtype=m.complex128), n=0)),
    ("ihfft_complex", lambda m: m.fft.ihfft(m.ones(3, dtype=m.complex64))),
    ("rfftn_complex", lambda m: m.fft.rfftn(m.ones(3, dtype=m.complex64), dim=(0, 0))),
    ("ihfftn_complex", lambda m: m.fft.ihfftn(m.ones(2, 3, dtype=m.complex128))),
    ("ihfft2_complex", lambda m: m.fft.ihfft2(m.ones(2, 3, dtype=m.complex64))),
    ("fftn_duplicate_dims", lambda m: m.fft.fftn(m.ones(2, 3), dim=(0, -2))),
    ("fftn_dim_out_of_range", lambda m: m.fft.fftn(m.ones(2, 3), dim=(2,))),
    ("fftn_s_dim_lengths", lambda m: m.fft.fftn(m.ones(2, 3), s=(2, 3), dim=(0,))),
    ("fftn_s_too_long", lambda m: m.fft.fftn(m.ones(2, 3), s=(2, 3, 4))),
    ("fftn_s_zero", lambda m: m.fft.fftn(m.ones(2, 3), s=(0, 3))),
    ("fftn_s_negative", lambda m: m.fft.fftn(m.ones(2, 3), s=(-2, 3))),
    ("bad_norm", lambda m: m.fft.fft(m.ones(3), norm="bad")),
    ("bad_norm_after_n", lambda m: m.fft.fft(m.ones(3, dtype=m.complex64), n=0, norm="bad")),
    ("fftn_bad_norm", lambda m: m.fft.fftn(m.ones(3), norm="x")),
    ("irfft_one_point", lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64))),
    ("irfft_n0", lambda m: m.fft.irfft(m.ones(3, dtype=m.complex64), n=0)),
    ("hfftn_one_point", lambda m: m.fft.hfftn(m.ones(2, 1, dtype=m.complex64))),
    ("rfftn_no_dims", lambda m: m.fft.rfftn(m.ones(2, 3), dim=())),
    ("irfftn_no_dims", lambda m: m.fft.irfftn(m.ones(2, 3), dim=())),
    ("hfftn_no_dims", lambda m: m.fft.hfftn(m.ones(2, 3), s=())),
    ("ihfftn_no_dims", lambda m: m.fft.ihfftn(m.ones(2, 3), dim=())),
    ("ihfftn_complex_no_dims", lambda m: m.fft.ihfftn(m.ones(2, 3, dtype=m.complex64), dim=())),
    ("irfftn_0d", lambda m: m.fft.irfftn(m.tensor(1.0))),
    ("fft_half", lambda m: m.fft.fft(m.ones(3, dtype=m.float16))),
    ("rfft_half_before_n", lambda m: m.fft.rfft(m.ones(3, dtype=m.float16), n=0)),
    ("irfft_half", lambda m: m.fft.irfft(m.ones(3, dtype=m.float16))),
    ("fft_n_float", lambda m: m.fft.fft(m.ones(3), n=2.0)),
    ("fft_not_a_tensor", lambda m: m.fft.fft([1.0, 2.0])),
    ("rfft2_not_a_tensor", lambda m: m.fft.rfft2([[1.0, 2.0]])),
    ("fft2_dim_none", lambda m: m.fft.fft2(m.ones(2, 2), dim=None)),  # (int[1], not optional)
    ("ihfft2_dim_none", lambda m: m.fft.ihfft2(m.ones(2, 2), dim=None)),
    ("fftfreq_negative", lambda m: m.fft.fftfreq(-1)),
    ("rfftfreq_negative", lambda m: m.fft.rfftfreq(-4)),
    ("fftfreq_int", lambda m: m.fft.fftfreq(4, dtype=m.int64)),
    ("rfftfreq_int", lambda m: m.fft.rfftfreq(4, dtype=m.int32)),
    ("fftfreq_complex", lambda m: m.fft.fftfreq(4, dtype=m.complex64)),
    ("fftfreq_float_n", lambda m: m.fft.fftfreq(4.0)),
    ("fftshift_0d", lambda m: m.fft.fftshift(m.tensor(1.0))),
    ("fftshift_0d_dim", lambda m: m.fft.fftshift(m.tensor(1.0), dim=0)),
    ("fftshift_no_dims", lambda m: m.fft.ifftshift(m.ones(2, 3), dim=())),
    ("fftshift_bad_dim", lambda m: m.fft.fftshift(m.ones(2, 3), dim=3)),
]


@pytest.mark.parametrize("program", [p for _, p in ERRORS], ids=[n for n, _ in ERRORS])
def test_errors_match_torch(program):
    with pytest.raises(Exception):  # noqa: B017 - the type and message are compared below
        program(torch)
    assert_same_as_torch(program)


FREQUENCIES = [
    ("fftfreq_odd", lambda m: m.fft.fftfreq(5)),
    ("fftfreq_even", lambda m: m.fft.fftfreq(6, d=0.5, dtype=m.float64)),
    ("fftfreq_one", lambda m: m.fft.fftfreq(1, 3.0)),
    ("fftfreq_empty", lambda m: m.fft.fftfreq(0)),
    ("fftfreq_zero_spacing", lambda m: m.fft.fftfreq(5, d=0.0)),
    ("fftfreq_negative_zero_spacing", lambda m: m.fft.fftfreq(4, d=-0.0)),
    ("fftfreq_half", lambda m: m.fft.fftfreq(7, 0.1, dtype=m.float16)),
    ("rfftfreq_even", lambda m: m.fft.rfftfreq(6, 2.0)),
    ("rfftfreq_odd", lambda m: m.fft.rfftfreq(7, d=0.3, dtype=m.float64)),
    ("rfftfreq_minus_one", lambda m: m.fft.rfftfreq(-1)),
    ("rfftfreq_minus_three", lambda m: m.fft.rfftfreq(-3)),
    ("fftshift", lambda m: m.fft.fftshift(m.arange(12.0).reshape(3, 4))),
    ("ifftshift", lambda m: m.fft.ifftshift(m.arange(15.0).reshape(3, 5))),
    ("fftshift_dim", lambda m: m.fft.fftshift(m.arange(15.0).reshape(3, 5), dim=1)),
    ("ifftshift_dims", lambda m: m.fft.ifftshift(m.arange(15.0).reshape(3, 5), dim=(-1, 0))),
    ("fftshift_duplicate_dims", lambda m: m.fft.fftshift(m.arange(5.0), dim=(0, 0))),
    ("fftshift_empty", lambda m: m.fft.fftshift(m.ones(0, 3))),
    ("shift_round_trip", lambda m: m.fft.ifftshift(m.fft.fftshift(m.arange(7.0)))),
]


@pytest.mark.parametrize("program", [p for _, p in FREQUENCIES], ids=[n for n, _ in FREQUENCIES])
def test_frequencies_and_shifts_match_torch(program):
    assert_same_as_torch(program, rtol=0)


def test_fftfreq_options():
    freq = gradkit.fft.fftfreq(4, 0.25, dtype=gradkit.float64, requires_grad=True)
    assert freq.requires_grad and freq.is_leaf and freq.dtype == gradkit.float64
    assert freq.tolist() == [0.0, 1.0, -2.0, -1.0]  # [0, 1, -2, -1] / (4 * 0.25)
    assert gradkit.fft.rfftfreq(4, device="cpu").tolist() == [0.0, 0.25, 0.5]


def test_shift_gradients_match_torch():
    program = _program(lambda f, x: f.fftshift(f.fft(x), dim=0) * 2, COMPLEX, "complex128")
    assert_same_as_torch(program, rtol=1e-12)


def test_fft_of_rfft_half_is_consistent_with_closed_form():
    """rfft returns the first n // 2 + 1 bins of fft; irfft(rfft(x), n) is x."""
    x = gradkit.tensor(REAL)
    np.testing.assert_allclose(gradkit.fft.rfft(x).numpy(), gradkit.fft.fft(x).numpy()[:, :3],
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gradkit.fft.irfft(gradkit.fft.rfft(x), n=5).numpy(), REAL,
                               rtol=1e-5, atol=1e-6)


def test_empty_batches_transform_where_torch_cpu_fails():
    """torch's CPU (MKL) backend refuses an FFT of an empty batch ("MKL FFT error"); gradkit
    returns the empty result, as torch does on CUDA (docs/api.md)."""
    with pytest.raises(RuntimeError, match="MKL FFT error"):
        torch.fft.fft(torch.zeros(0, 3))
    x = gradkit.zeros(0, 3, requires_grad=True)
    for out, shape, dtype in ((gradkit.fft.fft(x), (0, 3), gradkit.complex64),
                              (gradkit.fft.rfft(x), (0, 2), gradkit.complex64),
                              (gradkit.fft.irfft(gradkit.fft.rfft(x)), (0, 2), gradkit.float32)):
        assert tuple(out.shape) == shape and out.dtype == dtype
    out = gradkit.fft.irfft(gradkit.fft.rfft(x))
    (grad,) = gradkit.autograd.grad(out.sum(), x)
    assert tuple(grad.shape) == (0, 3)


def test_module_docstring_example():
    import doctest

    import gradkit.fft
    result = doctest.testmod(gradkit.fft, extraglobs={"gradkit": gradkit})
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("name,value,kwargs", [
    ("rfft", REAL, {"n": 7}), ("irfft", COMPLEX, {"norm": "ortho"}), ("hfftn", COMPLEX, {}),
    ("ihfft2", REAL, {"s": (3, 4)}), ("fftn", COMPLEX, {"dim": (1, 0), "norm": "forward"})])
def test_double_backward_of_a_nonlinear_loss_matches_torch(name, value, kwargs):
    """d/dx of <grad, w> for L = sum |f(x)|^2, whose second derivative is not zero."""
    def program(m):
        dtype = m.complex128 if np.iscomplexobj(value) else m.float64
        x = m.tensor(value, dtype=dtype, requires_grad=True)
        loss = getattr(m.fft, name)(x, **kwargs).abs().pow(2).sum()
        (grad,) = m.autograd.grad(loss, x, create_graph=True)
        weights = m.tensor(np.cos(np.arange(grad.numel())).reshape(tuple(grad.shape)))
        (second,) = m.autograd.grad((grad * weights).real.sum() if grad.is_complex()
                                    else (grad * weights).sum(), x)
        return grad, second
    assert_same_as_torch(program, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,value,kwargs", [
    ("rfft", REAL, {}), ("irfft", COMPLEX, {"n": 6}), ("ihfftn", REAL, {"norm": "ortho"}),
    ("fft", REAL, {"n": 3, "dim": 0})])
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")  # torch's forward AD
def test_forward_mode_matches_torch(name, value, kwargs):
    def program(m):
        dtype = m.complex128 if np.iscomplexobj(value) else m.float64
        primal = m.tensor(value, dtype=dtype)
        tangent = m.tensor(np.sin(np.arange(value.size)).reshape(value.shape) * (1 + 0.5j)
                           if np.iscomplexobj(value) else np.sin(np.arange(value.size)).reshape(
                               value.shape), dtype=dtype)
        with m.autograd.forward_ad.dual_level():
            out = getattr(m.fft, name)(m.autograd.forward_ad.make_dual(primal, tangent), **kwargs)
            value_out, tangent_out = m.autograd.forward_ad.unpack_dual(out)
        return value_out, tangent_out
    assert_same_as_torch(program, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64"])
@pytest.mark.parametrize("call", [
    lambda fft, x: fft.ifft(x, n=3, norm="ortho"),
    lambda fft, x: fft.ifft(x),
    lambda fft, x: fft.fft(x, norm="forward"),
    lambda fft, x: fft.ifft2(x.reshape(2, 2)),
    lambda fft, x: fft.ihfft(x.real),
    lambda fft, x: fft.rfft(x.real, norm="ortho"),
])
def test_normalization_scales_real_and_imaginary_parts_apart(call, dtype):
    """An infinite entry keeps a zero other part through the 1/n or 1/sqrt(n) scale, as in
    torch (a complex product would make it inf * 0 = NaN; breadth seed 88869)."""
    value = np.array([-np.inf, 0.0, 0.0, 0.0]) if dtype == "float64" else \
        np.array([-np.inf + 0j, 0.0, 0.0, 0.0])
    assert_same_as_torch(lambda m: call(m.fft, m.tensor(value, dtype=getattr(m, dtype))))
