"""torch's own spectral tests (test/test_spectral_ops.py, TestFFT and TestFFTDocExamples),
re-run as programs under torch 2.13 and gradkit: same dtypes, shapes, values (within a
tolerance: pocketfft and MKL differ in the last bits), gradients, or the same error.

Each block names the torch tests it covers; data comes from seeded NumPy generators, so both
libraries see the same numbers. Out of scope (docs/torch_expectations.md, "Spectral ops"):
CUDA and cuFFT plans, out=, half/complex32 on CPU beyond torch's error, bfloat16, TorchScript,
librosa (torch is the reference instead).
"""
# Programs close over their loop's variables on purpose: assert_same runs each at once.
# ruff: noqa: B023
import doctest
import itertools

import numpy as np
import pytest
from spectral_twins import assert_same, assert_same_error

import gradkit

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(20261206)
NORMS = (None, "forward", "backward", "ortho")
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
ND = ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")
TWO_D = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")
REAL_ONLY = ("rfft", "ihfft", "rfftn", "ihfftn", "rfft2", "ihfft2")
SINGLE = 2e-5  # float32 / complex64: pocketfft and MKL round apart


def randn(*shape, dtype="float64"):
    """Seeded standard normal data (complex dtypes: both parts)."""
    values = RNG.standard_normal(shape)
    if dtype.startswith("complex"):
        values = values + 1j * RNG.standard_normal(shape)
    return values.astype(dtype)


def t(m, values):
    return m.from_numpy(np.array(values))


def cycled_shape(ndim, sizes=range(4, 9)):
    """torch's test shapes: 4, 5, 6, 7, 8, 4, ... for ``ndim`` dims."""
    return tuple(itertools.islice(itertools.cycle(sizes), ndim))


@pytest.fixture
def torch_warns_always():
    """torch warns once per process (TORCH_WARN_ONCE); its tests turn that off to see it."""
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    yield
    torch.set_warn_always(before)


def tol(dtype):
    return 1e-10 if dtype in ("float64", "complex128") else SINGLE


# -- test_reference_1d, test_fft_round_trip ----------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64", "complex128"])
@pytest.mark.parametrize("name", ONE_D)
def test_reference_1d(name, dtype):
    """Every 1-D transform over n (None, 50, 6: pad and trim), dim (-1, 0) and the four norm
    modes, on 1-3 dim inputs; and the middle dims of a 4-d input."""
    if name in REAL_ONLY and dtype.startswith("complex"):
        pytest.skip("a real-only transform (test_fft_invalid_dtypes covers complex input)")
    inputs = [randn(67, dtype=dtype), randn(80, dtype=dtype), randn(12, 14, dtype=dtype),
              randn(9, 6, 3, dtype=dtype)]
    cases = [(x, n, dim, norm) for x, n, dim, norm in
             itertools.product(inputs, (None, 50, 6), (-1, 0), NORMS)]
    cases += [(randn(4, 5, 6, 7, dtype=dtype), None, dim, norm)
              for dim, norm in itertools.product((1, 2, -2), NORMS)]
    for x, n, dim, norm in cases:
        assert_same(lambda m: getattr(m.fft, name)(t(m, x), n, dim, norm), tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_fft_round_trip(dtype):
    """ifft(fft(x)), irfft(rfft(x)), hfft(ihfft(x)) with n = the input's size give x back."""
    pairs = [("fft", "ifft")]
    if not dtype.startswith("complex"):
        pairs += [("rfft", "irfft"), ("ihfft", "hfft")]
    inputs = [randn(67, dtype=dtype), randn(80, dtype=dtype), randn(12, 14, dtype=dtype),
              randn(9, 6, 3, dtype=dtype)]
    for (forward, backward), x, dim, norm in itertools.product(pairs, inputs, (-1, 0), NORMS):
        def program(m):
            kwargs = {"n": x.shape[dim], "dim": dim, "norm": norm}
            return getattr(m.fft, backward)(getattr(m.fft, forward)(t(m, x), **kwargs), **kwargs)
        (_, y), = assert_same(program, tol(dtype))
        np.testing.assert_allclose(y, x, rtol=tol(dtype) * 10, atol=tol(dtype) * 10)


# -- errors: test_empty_fft, test_empty_ifft, test_fft_invalid_dtypes, half, nd and 2-d -------

ALL = ONE_D + ND + TWO_D


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("name", ALL)
def test_empty_fft(name, dtype):
    if name in REAL_ONLY and dtype == "complex64":  # refused for its dtype first
        assert_same(lambda m: getattr(m.fft, name)(m.empty(1, 0, dtype=m.complex64)))
        return
    assert_same_error(lambda m: getattr(m.fft, name)(m.empty(1, 0, dtype=getattr(m, dtype))),
                      RuntimeError, r"Invalid number of data points \([-\d]*\) specified")


@pytest.mark.parametrize("name", ["irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn"])
def test_empty_ifft(name):
    assert_same_error(lambda m: getattr(m.fft, name)(m.empty(2, 1, dtype=m.complex64)),
                      RuntimeError, r"Invalid number of data points \([-\d]*\) specified")


@pytest.mark.parametrize("name,match", [("rfft", "rfft expects a real input tensor"),
                                        ("rfftn", "rfftn expects a real-valued input tensor"),
                                        ("ihfft", "ihfft expects a real input tensor")])
def test_fft_invalid_dtypes(name, match):
    x = randn(64, dtype="complex128")
    assert_same_error(lambda m: getattr(m.fft, name)(t(m, x)), RuntimeError, match)


@pytest.mark.parametrize("name", ALL)
def test_fft_half_errors(name):
    """test_fft_half_and_bfloat16_errors (half; bfloat16 is not a gradkit dtype): CPU FFTs
    refuse float16 with torch's message."""
    x = randn(5, 5).astype("float16")
    assert_same_error(lambda m: getattr(m.fft, name)(t(m, x)), RuntimeError, "Unsupported dtype")


@pytest.mark.parametrize("dtype", ["int8", "float32", "float64", "complex64", "complex128"])
def test_fft_type_promotion(dtype):
    """fft gives the complex dtype of the input's precision (integers: the default float),
    hfft the real one, rfft the complex one."""
    x = RNG.integers(-2, 2, 64).astype(dtype) if dtype == "int8" else randn(64, dtype=dtype)
    names = ("fft", "hfft") if dtype.startswith("complex") else ("fft", "hfft", "rfft")
    for name in names:
        assert_same(lambda m: getattr(m.fft, name)(t(m, x)), tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("name", ND + TWO_D)
def test_fftn_invalid(name, dtype):
    """test_fftn_invalid and test_fft2_invalid: repeated dims, s and dim of different lengths,
    a dim out of range, s longer than the input's dims, complex input to rfftn/rfft2."""
    if name in REAL_ONLY and dtype == "complex64":
        pytest.skip("a real-only transform: refused for its dtype first (test_fft_invalid_dtypes)")
    x = RNG.random((10, 10, 10)).astype(dtype)
    f = lambda m, **kwargs: getattr(m.fft, name)(t(m, x), **kwargs)  # noqa: E731
    for kwargs in ({"dim": (0, 1, 0)}, {"dim": (2, -1)}, {"dim": (0, 0)}):
        assert_same_error(lambda m: f(m, **kwargs), RuntimeError, "dims must be unique")
    if name not in TWO_D:  # the 2-D forms' default dims make s=(1,) a length mismatch
        assert_same_error(lambda m: f(m, s=(1,), dim=(0, 1)), RuntimeError,
                          "dim and shape .* same length")
        assert_same_error(lambda m: f(m, dim=(3,)), IndexError, "Dimension out of range")
        assert_same_error(lambda m: f(m, s=(10, 10, 10, 10)), RuntimeError,
                          "tensor only has 3 dimensions")
    else:
        assert_same_error(lambda m: f(m, s=(1,)), RuntimeError, "dim and shape .* same length")
        assert_same_error(lambda m: f(m, dim=(2, 3)), IndexError, "Dimension out of range")
    if name in ("rfftn", "rfft2") and dtype == "float32":
        c = x + 1j * x
        assert_same_error(lambda m: getattr(m.fft, name)(t(m, c)), RuntimeError,
                          "rfftn expects a real-valued input")


# -- n-d and 2-d: test_reference_nd, test_fftn_round_trip, noop, hfftn/ihfftn, fft2 ------------

ND_DESC = [*itertools.product(range(2, 5), (None,), (None, (0,), (0, -1))),
           *itertools.product(range(2, 5), (None, (4, 10)), (None,)),
           (6, None, None), (5, None, (1, 3, 4)), (3, None, (1,)), (1, None, (0,)),
           (4, (10, 10), None), (4, (10, 10), (0, 1))]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ND)
def test_reference_nd(name, dtype):
    if name in REAL_ONLY:
        dtype = dtype.replace("complex128", "float64").replace("complex64", "float32")
    for ndim, s, dim in ND_DESC:
        x = randn(*cycled_shape(ndim), dtype=dtype)
        for norm in NORMS:
            assert_same(lambda m: getattr(m.fft, name)(t(m, x), s, dim, norm), tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_fftn_round_trip(dtype):
    pairs = [("fftn", "ifftn")]
    if not dtype.startswith("complex"):
        pairs += [("rfftn", "irfftn"), ("ihfftn", "hfftn")]
    descs = [*itertools.product(range(2, 5), (None, (0,), (0, -1))), (7, None), (5, (1, 3, 4)),
             (3, (1,)), (1, 0)]
    for (ndim, dim), (forward, backward), norm in itertools.product(descs, pairs, NORMS):
        x = randn(*cycled_shape(ndim), dtype=dtype)
        s = (x.shape if dim is None else [x.shape[d] for d in dim] if isinstance(dim, tuple)
             else x.shape[dim])
        kwargs = {"s": s, "dim": dim, "norm": norm}
        program = lambda m: getattr(m.fft, backward)(  # noqa: E731
            getattr(m.fft, forward)(t(m, x), **kwargs), **kwargs)
        (_, y), = assert_same(program, tol(dtype))
        np.testing.assert_allclose(y, x, rtol=tol(dtype) * 10, atol=tol(dtype) * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("name", ["fftn", "ifftn", "fft2", "ifft2"])
def test_fftn_noop_transform(name, dtype):
    """dim=[] transforms nothing: the input in its complex dtype."""
    x = randn(10, 10, dtype=dtype)
    (_, out), = assert_same(lambda m: getattr(m.fft, name)(t(m, x), dim=[]), 0)
    np.testing.assert_array_equal(out, x)


HERMITIAN_DESC = [*itertools.product(range(2, 5), (None, (0,), (0, -1))), (6, None),
                  (5, (1, 3, 4)), (3, (1,)), (1, (0,)), (4, (0, 1))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hfftn_and_ihfftn(dtype):
    """hfftn of the half of ifftn(x, norm="ortho") gives x; ihfftn(x) is that half."""
    for ndim, dim in HERMITIAN_DESC:
        shape = cycled_shape(ndim)
        actual_dims = list(range(ndim)) if dim is None else list(dim)
        x = randn(*shape, dtype=dtype)

        def half(m, y):
            index = [slice(None)] * ndim
            index[actual_dims[-1]] = slice(0, y.shape[actual_dims[-1]] // 2 + 1)
            return y[tuple(index)]

        def hfftn_program(m):
            spectrum = half(m, m.fft.ifftn(t(m, x), dim=dim, norm="ortho"))
            return m.fft.hfftn(spectrum, s=[shape[d] for d in actual_dims], dim=dim, norm="ortho")

        (_, back), = assert_same(hfftn_program, tol(dtype))
        np.testing.assert_allclose(back, x, rtol=tol(dtype) * 10, atol=tol(dtype) * 10)
        assert_same(lambda m: (m.fft.ihfftn(t(m, x), dim=dim, norm="ortho"),
                               half(m, m.fft.ifftn(t(m, x), dim=dim, norm="ortho"))), tol(dtype))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_fft2_numpy(dtype):
    """The 2-D transforms with dim defaulted and dim=(1, 0), s None or (4, 10), every norm;
    NumPy's fft2/ifft2/rfft2/irfft2 give the same values (torch's reference)."""
    names = ["fft2", "ifft2", "irfft2", "hfft2"] + (["rfft2", "ihfft2"] if dtype == "float64"
                                                     else [])
    for ndim, s in itertools.product(range(2, 5), (None, (4, 10))):
        x = randn(*cycled_shape(ndim), dtype=dtype)
        for name, norm in itertools.product(names, NORMS):
            (_, got), = assert_same(lambda m: getattr(m.fft, name)(t(m, x), s, norm=norm))
            if hasattr(np.fft, name):
                np.testing.assert_allclose(got, getattr(np.fft, name)(x, s, norm=norm),
                                           rtol=1e-10, atol=1e-10)
            assert_same(lambda m: getattr(m.fft, name)(t(m, x), s, (1, 0), norm))


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_fft2_fftn_equivalence(dtype):
    names = ["fft", "ifft", "irfft", "hfft"] + (["rfft", "ihfft"] if dtype == "float32" else [])
    descs = [*itertools.product(range(2, 5), (None, (4, 10)), (None, (1, 0))), (3, None, (0, 2))]
    for (ndim, s, dim), name, norm in itertools.product(descs, names, NORMS):
        x = randn(*cycled_shape(ndim), dtype=dtype)
        kwargs = {"s": s, "norm": norm, "dim": (-2, -1) if dim is None else dim}
        (_, two_d), (_, n_d) = assert_same(lambda m: (
            getattr(m.fft, name + "2")(t(m, x), **{k: v for k, v in kwargs.items()
                                                  if k != "dim" or dim is not None}),
            getattr(m.fft, name + "n")(t(m, x), **kwargs)), SINGLE)
        np.testing.assert_array_equal(two_d, n_d)


# -- helpers: test_fftfreq_numpy, test_fftshift_numpy, test_fftshift_frequencies ---------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_fftfreq_numpy(name, dtype):
    for n, d in itertools.product(range(1, 20), (None, 10.0)):
        args = (n,) if d is None else (n, d)
        (_, got), = assert_same(lambda m: getattr(m.fft, name)(*args, dtype=getattr(m, dtype)), 0)
        np.testing.assert_allclose(got, getattr(np.fft, name)(*args), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_fftshift_numpy(dtype):
    cases = [*itertools.product(((11,), (12,)), (None, 0, -1)),
             *itertools.product(((4, 5), (6, 6)), (None, 0, (-1,))),
             *itertools.product(((1, 1, 4, 6, 7, 2),), (None, (3, 4)))]
    for (shape, dim), name in itertools.product(cases, ("fftshift", "ifftshift")):
        x = randn(*shape, dtype=dtype)
        (_, got), = assert_same(lambda m: getattr(m.fft, name)(t(m, x), dim=dim), 0)
        np.testing.assert_array_equal(got, getattr(np.fft, name)(x, axes=dim))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fftshift_frequencies(dtype):
    for n in range(10, 15):
        def program(m):
            x = m.fft.fftfreq(n, d=1 / n, dtype=getattr(m, dtype))
            shifted = m.fft.fftshift(x)
            return x, shifted, shifted.sort().values, m.fft.ifftshift(shifted)
        _, (_, shifted), (_, in_order), _ = assert_same(program, 0)
        np.testing.assert_array_equal(shifted, in_order)
        np.testing.assert_array_equal(shifted, np.arange(-(n // 2), n - n // 2))


# -- test_fft_ifft_rfft_irfft (contiguous and strided inputs), input modification, plans -------

def _real_cases():
    return [((100,), 1, None), ((10, 1, 10, 100), 1, None), ((100, 100), 2, None),
            ((2, 2, 5, 80, 60), 2, None), ((50, 40, 70), 3, None), ((30, 1, 50, 25, 20), 3, None),
            ((165,), 1, lambda x: x.narrow(0, 25, 100)), ((100, 100, 3), 1, lambda x: x[:, :, 0]),
            ((100, 100), 2, lambda x: x.t()),
            ((20, 100, 10, 10), 2, lambda x: x.view(20, 100, 100)[:, :60]),
            ((65, 80, 115), 3, lambda x: x[10:60, 13:53, 10:80]),
            ((30, 20, 50, 25), 3, lambda x: x.transpose(1, 2).transpose(2, 3))]


def _complex_cases():
    return [((100,), 1, None), ((100, 100), 1, None), ((100, 100), 2, None),
            ((1, 20, 80, 60), 2, None), ((50, 40, 70), 3, None), ((6, 5, 50, 25, 20), 3, None),
            ((100,), 1, lambda x: x.expand(100, 100)),
            ((20, 90, 110), 2, lambda x: x[:, 5:85].narrow(2, 5, 100)),
            ((40, 60, 3, 80), 3, lambda x: x.transpose(2, 0).select(0, 2)[5:55, :, 10:]),
            ((30, 55, 50, 22), 3, lambda x: x[:, 3:53, 15:40, 1:21])]


@pytest.mark.parametrize("kind,case", [("real", c) for c in range(12)] +
                         [("complex", c) for c in range(10)])
def test_fft_ifft_rfft_irfft(kind, case):
    """Round trips over 1-3 trailing dims, of contiguous inputs and of views (narrowed,
    selected, transposed, expanded), norm None and "ortho"."""
    sizes, ndim, view = (_real_cases() if kind == "real" else _complex_cases())[case]
    x = randn(*sizes, dtype="float64" if kind == "real" else "complex128")
    dim = tuple(range(-ndim, 0))
    for norm in (None, "ortho"):
        def program(m):
            v = t(m, x) if view is None else view(t(m, x))
            if kind == "complex":
                return (v, m.fft.ifftn(m.fft.fftn(v, dim=dim, norm=norm), dim=dim, norm=norm),
                        m.fft.fftn(m.fft.ifftn(v, dim=dim, norm=norm), dim=dim, norm=norm))
            return (v, m.fft.irfftn(m.fft.rfftn(v, dim=dim, norm=norm), s=v.shape[-ndim:],
                                    dim=dim, norm=norm),
                    m.fft.ifftn(m.fft.fftn(v, dim=dim, norm=norm), dim=dim, norm=norm))
        (_, v), (_, first), (_, second) = assert_same(program)
        np.testing.assert_allclose(first, v, rtol=0, atol=1e-8)
        np.testing.assert_allclose(second, v, rtol=0, atol=1e-8)


def test_fft_input_modification():
    """FFTs leave their inputs as they were (gh-34551)."""
    def program(m):
        signal = m.ones((2, 2, 2))
        spectrum = m.fft.fftn(signal, dim=(-2, -1))
        spectrum_before = spectrum.clone()
        m.fft.ifftn(spectrum, dim=(-2, -1))
        half = m.fft.rfftn(signal, dim=(-2, -1))
        half_before = half.clone()
        m.fft.irfftn(half, s=(2, 2), dim=(-2, -1))
        return signal, spectrum, spectrum_before, half, half_before
    (_, signal), (_, spectrum), (_, spectrum_before), (_, half), (_, half_before) = \
        assert_same(program, 0)
    np.testing.assert_array_equal(signal, np.ones((2, 2, 2)))
    np.testing.assert_array_equal(spectrum, spectrum_before)
    np.testing.assert_array_equal(half, half_before)


@pytest.mark.parametrize("n", [2048, 3199, 5999])
def test_fft_plan_repeatable(n):
    a, b = randn(n, dtype="complex64"), randn(n)
    (_, first), (_, again), (_, half), (_, half_again) = assert_same(
        lambda m: (m.fft.fftn(t(m, a)), m.fft.fftn(t(m, a).clone()), m.fft.rfft(t(m, b)),
                   m.fft.rfft(t(m, b).clone())), SINGLE)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(half, half_again)


# -- gradients (test_cufft_context's program on the CPU; gradcheck of torch's argument sets) ---

def test_gradient_of_ifft_of_fft():
    """test_cufft_context: backward of ifft(fft(x)) with a zero and a nonzero cotangent."""
    x, cotangent = randn(32, dtype="complex128"), randn(32, dtype="complex128")

    def program(m):
        leaf = t(m, x).requires_grad_()
        out = m.fft.ifft(m.fft.fft(leaf))
        out.backward(m.zeros(32, dtype=m.complex128), retain_graph=True)
        zero_grad = leaf.grad.clone()
        (grad,) = m.autograd.grad(out, leaf, t(m, cotangent))
        return zero_grad, grad, m.fft.fft(m.fft.ifft(t(m, cotangent)))
    (_, zero_grad), (_, grad), (_, expected) = assert_same(program)
    np.testing.assert_array_equal(zero_grad, np.zeros(32))
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-12)


GRAD_CASES = [(name, kwargs) for name in ONE_D for kwargs in
              ({}, {"n": 7}, {"n": 3, "dim": 0}, {"norm": "ortho"}, {"norm": "forward"})] + \
             [(name, kwargs) for name in ND + TWO_D for kwargs in
              ({}, {"s": (3, 4)}, {"dim": (0,)}, {"s": (5, 2), "dim": (1, 0), "norm": "ortho"},
               {"norm": "forward"})]


@pytest.mark.parametrize("name,kwargs", GRAD_CASES, ids=str)
def test_gradients_and_double_backward(name, kwargs):
    """Gradients (complex cotangent) and the gradient of a nonlinear loss's gradient match
    torch's; gradcheck and gradgradcheck pass in float64."""
    if name.endswith("2") and kwargs.get("dim") == (0,):
        kwargs = {"dim": (0, 1)}
    dtype = "float64" if name in REAL_ONLY else "complex128"
    x = randn(4, 6, dtype=dtype)

    def program(m):
        leaf = t(m, x).requires_grad_()
        out = getattr(m.fft, name)(leaf, **kwargs)
        k = np.arange(out.numel()).reshape(tuple(out.shape))
        cotangent = m.tensor(np.cos(k) + 1j * np.sin(3 * k) if out.is_complex() else np.cos(k),
                             dtype=out.dtype)
        (grad,) = m.autograd.grad(out, leaf, cotangent)
        (loss_grad,) = m.autograd.grad(out.abs().pow(2).sum(), leaf, create_graph=True)
        weights = t(m, np.cos(np.arange(x.size)).reshape(x.shape))
        (second,) = m.autograd.grad((loss_grad * weights).real.sum(), leaf)
        return out, grad, loss_grad, second
    assert_same(program)
    leaf = gradkit.from_numpy(x).requires_grad_()
    f = lambda v: getattr(gradkit.fft, name)(v, **kwargs)  # noqa: E731
    assert gradkit.autograd.gradcheck(f, (leaf,))
    assert gradkit.autograd.gradgradcheck(f, (leaf,))


# -- stft / istft -------------------------------------------------------------------------------

def stft(m, x, *args, **kwargs):
    return m.stft(x, *args, **kwargs)


@pytest.mark.parametrize("center", [True, False])
def test_stft(center):
    """test_stft's programs (torch stands in for librosa): return_complex False and True, the
    default window, hop and win_length, random windows."""
    cases = [((10,), 7, None, None, None), ((10, 4000), 1024, None, None, None),
             ((10,), 7, 2, None, None), ((10, 4000), 1024, 512, None, None),
             ((10,), 7, 2, None, (7,)), ((10, 4000), 1024, 512, None, (1024,)),
             ((10,), 7, 2, 5, None), ((10, 4000), 1024, 512, 100, None)]
    for sizes, n_fft, hop, win_length, win_sizes in cases:
        x = randn(*sizes)
        window = None if win_sizes is None else randn(*win_sizes)

        def program(m):
            w = None if window is None else t(m, window)
            real = t(m, x).stft(n_fft, hop, win_length, w, center=center, return_complex=False)
            spectrum = t(m, x).stft(n_fft, hop, win_length, w, center=center,
                                    return_complex=True)
            return real, spectrum, m.view_as_complex(real)
        _, (_, spectrum), (_, viewed) = assert_same(program, 1e-9)
        np.testing.assert_array_equal(spectrum, viewed)


@pytest.mark.parametrize("sizes,n_fft,hop,kwargs", [
    ((10, 4, 2), 1, 1, {}), ((10,), 11, 1, {"center": False}), ((10,), -1, 1, {}),
    ((10,), 3, None, {"win_length": 5}), ((10,), 5, 4, {"win_sizes": (11,)}),
    ((10,), 5, 4, {"win_sizes": (1, 1)})])
def test_stft_errors(sizes, n_fft, hop, kwargs):
    x = randn(*sizes)
    window = None if "win_sizes" not in kwargs else randn(*kwargs["win_sizes"])
    options = {k: v for k, v in kwargs.items() if k != "win_sizes"}
    assert_same_error(lambda m: t(m, x).stft(n_fft, hop, window=None if window is None else
                                             t(m, window), return_complex=True, **options),
                      RuntimeError, "stft")


@pytest.mark.parametrize("center", [True, False])
def test_istft_against_torch(center):
    """test_istft_against_librosa's programs, torch as the reference."""
    cases = [(10, 7, None, None, None), (4000, 1024, None, None, None),
             (4000, 1024, None, None, 4000), (10, 7, 2, None, None),
             (4000, 1024, 512, None, None), (4000, 1024, 512, None, 4000),
             (10, 7, 2, (7,), None), (4000, 1024, 512, (1024,), None),
             (4000, 1024, 512, (1024,), 4000)]
    for size, n_fft, hop, win_sizes, length in cases:
        x = randn(size)
        window = None if win_sizes is None else RNG.random(win_sizes) + 0.5  # NOLA holds

        def program(m):
            w = None if window is None else t(m, window)
            spectrum = t(m, x).stft(n_fft, hop, None, w, center=center, onesided=True,
                                    return_complex=True)
            return spectrum.istft(n_fft, hop, None, w, length=length, center=center)
        assert_same(program, 1e-9)


STFT_ROUND_TRIP = list(itertools.product((600, 807, (12, 60)), (50, 27), (None, 10),
                                         ("constant", "reflect", "circular"), (True, False)))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_complex_stft_roundtrip(dtype):
    for size, n_fft, hop, pad_mode, normalized in STFT_ROUND_TRIP:
        x = randn(*np.atleast_1d(size), dtype=dtype)
        for onesided in ((True, False) if dtype == "float64" else (False,)):
            options = {"n_fft": n_fft, "hop_length": hop, "center": True,
                       "normalized": normalized, "onesided": onesided}

            def program(m):
                spectrum = m.stft(t(m, x), pad_mode=pad_mode, return_complex=True, **options)
                method = t(m, x).stft(pad_mode=pad_mode, return_complex=True, **options)
                return spectrum, method, m.istft(spectrum, return_complex=dtype != "float64",
                                                 length=x.shape[-1], **options)
            (_, spectrum), (_, method), (_, back) = assert_same(program, 1e-9)
            np.testing.assert_array_equal(spectrum, method)
            np.testing.assert_allclose(back, x, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_stft_roundtrip_complex_window(dtype):
    modes = ("constant", "reflect", "replicate", "circular")
    for size, n_fft, hop, _, normalized in STFT_ROUND_TRIP[::3]:
        x = randn(*np.atleast_1d(size), dtype=dtype)
        window = RNG.random(n_fft) + 1j * RNG.random(n_fft)
        for pad_mode in modes:
            def program(m):
                w = t(m, window)
                spectrum = m.stft(t(m, x), n_fft=n_fft, hop_length=hop, window=w, center=True,
                                  pad_mode=pad_mode, normalized=normalized)
                return spectrum, m.istft(spectrum, n_fft=n_fft, hop_length=hop, window=w,
                                         center=True, normalized=normalized,
                                         length=x.shape[-1], return_complex=True)
            (kind, spectrum), (_, back) = assert_same(program, 1e-9)
            assert kind == "complex128" and spectrum.shape[-2] == n_fft  # two-sided
            np.testing.assert_allclose(back, x, rtol=1e-7, atol=1e-9)


def test_complex_stft_definition():
    """stft(center=False) of a complex signal is the FFT of each windowed frame."""
    for size, n_fft, hop in itertools.product((600, 807), (50, 27), (10, 15)):
        x, window = randn(size, dtype="complex128"), randn(n_fft, dtype="complex128")
        (_, got), = assert_same(lambda m: m.stft(t(m, x), n_fft, hop, window=t(m, window),
                                                 center=False), 1e-9)
        frames = np.stack([x[s:s + n_fft] for s in range(0, size - n_fft + 1, hop)])
        np.testing.assert_allclose(got, np.fft.fft(frames * window).T, rtol=1e-9, atol=1e-9)


def test_complex_stft_real_equiv():
    """The stft of a complex signal is that of its real part plus 1j times that of its
    imaginary part (two-sided)."""
    cases = itertools.product(((600,), (807,), (14, 50), (6, 51)), (50, 27), (None, 10),
                              (None, 20), (False, True), ("constant", "reflect", "circular"),
                              (True, False))
    for sizes, n_fft, hop, win_length, center, pad_mode, normalized in list(cases)[::7]:
        x = RNG.random(sizes) + 1j * RNG.random(sizes)
        options = {"hop_length": hop, "win_length": win_length, "pad_mode": pad_mode,
                   "center": center, "normalized": normalized}

        def program(m):
            parts = [m.stft(part, n_fft, return_complex=True, onesided=False, **options)
                     for part in (t(m, x).real, t(m, x).imag)]
            return m.stft(t(m, x), n_fft, **options), parts[0] + 1j * parts[1]
        (_, actual), (_, expected) = assert_same(program, 1e-9)
        np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-9)


def test_complex_istft_real_equiv():
    """istft(return_complex=True) of a two-sided spectrum is the istft of its Hermitian part
    plus 1j times that of its anti-Hermitian part."""
    for sizes, hop, center, normalized in itertools.product(
            ((40, 20), (25, 1), (4, 20, 10)), (None, 10), (False, True), (True, False)):
        x = RNG.random(sizes) + 1j * RNG.random(sizes)
        n_fft = sizes[-2]
        mirrored = np.conj(np.roll(np.flip(x, axis=-2), 1, axis=-2))  # conj(x[-k])
        hermitian, anti = (x + mirrored) / 2, (x - mirrored) / 2
        half = (..., slice(None, n_fft // 2 + 1), slice(None))

        def program(m):
            options = {"hop_length": hop, "center": center, "normalized": normalized}
            real = m.istft(t(m, hermitian[half]), n_fft, onesided=True, **options)
            imag = m.istft(t(m, -1j * anti[half]), n_fft, onesided=True, **options)
            return (m.istft(t(m, x), n_fft, return_complex=True, **options),
                    m.complex(real, imag))
        (_, actual), (_, expected) = assert_same(program, 1e-9)
        np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-9)


def test_complex_stft_onesided():
    for x_dtype, window_dtype in itertools.product(("float64", "complex128"), repeat=2):
        x, window = RNG.random(100).astype(x_dtype), RNG.random(10).astype(window_dtype)
        program = lambda m: t(m, x).stft(10, window=t(m, window), pad_mode="constant",  # noqa: E731
                                         onesided=True, return_complex=True)
        if "complex" in x_dtype + window_dtype:
            assert_same_error(program, RuntimeError, "complex")
        else:
            (kind, y), = assert_same(program)
            assert kind == "complex128" and y.shape == (6, 51)
    x = RNG.random(100).astype("complex128")
    assert_same_error(lambda m: t(m, x).stft(10, pad_mode="constant", onesided=True),
                      RuntimeError, "complex")


def test_stft_requires_complex_and_align_to_window_and_window_warnings(torch_warns_always):
    """test_stft_requires_complex, test_stft_align_to_window_only_requires_non_center,
    test_stft_requires_window, test_istft_requires_window."""
    x = RNG.random(100)
    assert_same_error(lambda m: t(m, x).stft(10, pad_mode="constant"), RuntimeError,
                      "stft requires the return_complex parameter")
    for align in (True, False):
        assert_same_error(lambda m: t(m, x).stft(10, center=True, return_complex=True,
                                                 align_to_window=align),
                          RuntimeError, "align_to_window should only be set when center = false")
    spectrum = RNG.random((51, 5)) + 0j
    for m in (torch, gradkit):
        with pytest.warns(UserWarning, match="A window was not provided"):
            t(m, x).stft(10, pad_mode="constant", return_complex=True)
        with pytest.warns(UserWarning, match="A window was not provided"):
            m.istft(t(m, spectrum), n_fft=100, length=100)


def test_istft_round_trip_simple_cases():
    for values in (np.ones(4), np.zeros(4)):
        (_, back), = assert_same(lambda m: m.istft(
            m.stft(t(m, values), n_fft=4, return_complex=True), n_fft=4, length=4))
        np.testing.assert_allclose(back, values, atol=1e-12)


ISTFT_PATTERNS = [
    {"n_fft": 12, "hop_length": 4, "win_length": 12, "window": ("hann_window", 12),
     "center": True, "pad_mode": "reflect", "normalized": True, "onesided": True},
    {"n_fft": 12, "hop_length": 2, "win_length": 8, "window": ("hann_window", 8),
     "center": True, "pad_mode": "reflect", "normalized": False, "onesided": False},
    {"n_fft": 15, "hop_length": 3, "win_length": 11, "window": ("hamming_window", 11),
     "center": True, "pad_mode": "constant", "normalized": True, "onesided": False},
    {"n_fft": 5, "hop_length": 2, "win_length": 5, "window": ("hamming_window", 5),
     "center": True, "pad_mode": "constant", "normalized": False, "onesided": True}]


def _with_window(m, options):
    name, size = options["window"]
    return {**options, "window": getattr(m, name)(size, dtype=m.float64)}


@pytest.mark.parametrize("pattern", range(len(ISTFT_PATTERNS)))
def test_istft_round_trip_various_params(pattern):
    options = ISTFT_PATTERNS[pattern]
    for sizes in [(2, 20), (3, 15), (4, 10)]:
        for _ in range(5):  # torch runs 100 trials; the programs are the same
            x = randn(*sizes)

            def program(m):
                kwargs = _with_window(m, options)
                spectrum = m.stft(t(m, x), return_complex=True, **kwargs)
                del kwargs["pad_mode"]
                return m.istft(spectrum, length=x.shape[1], **kwargs)
            (_, back), = assert_same(program, 1e-9)
            np.testing.assert_allclose(back, x, rtol=0, atol=7e-6)


@pytest.mark.parametrize("size,options", [
    ((2, 20), {"n_fft": 3, "hop_length": 2, "win_length": 3, "window": ("hamming_window", 3),
               "center": False, "pad_mode": "reflect", "normalized": False, "onesided": False}),
    ((2, 500), {"n_fft": 256, "hop_length": 254, "win_length": 256,
                "window": ("hamming_window", 256), "center": True, "pad_mode": "constant",
                "normalized": False, "onesided": True})])
def test_istft_round_trip_with_padding(size, options, torch_warns_always):
    x = randn(*size)
    for m in (torch, gradkit):
        kwargs = _with_window(m, options)
        spectrum = m.stft(t(m, x), return_complex=True, **kwargs)
        del kwargs["pad_mode"]
        with pytest.warns(UserWarning, match="The length of signal is shorter than the length "
                                             "parameter."):
            m.istft(spectrum, length=x.shape[-1], **kwargs)

    def program(m):
        kwargs = _with_window(m, options)
        spectrum = m.stft(t(m, x), return_complex=True, **kwargs)
        del kwargs["pad_mode"]
        return spectrum, m.istft(spectrum, length=x.shape[-1], **kwargs)
    (_, spectrum), (_, back) = assert_same(program, 1e-9)
    frames = spectrum.shape[-1]
    n_fft, hop = options["n_fft"], options["hop_length"]
    kept = (n_fft // 2 if options["center"] else n_fft) + hop * (frames - 1)
    np.testing.assert_allclose(back[..., kept:], 0, atol=7e-6)
    np.testing.assert_allclose(back[..., :kept], x[..., :kept], rtol=0, atol=7e-6)


def test_istft_throws():
    """A window of 1 sample hopping 20 leaves gaps; a zero window fails NOLA; empty input."""
    spectrum = np.zeros((3, 5)) + 0j
    assert_same_error(lambda m: m.istft(t(m, spectrum), n_fft=4, hop_length=20, win_length=1,
                                        window=m.ones(1)), RuntimeError, "istft")
    assert_same_error(lambda m: m.istft(t(m, spectrum), n_fft=4, win_length=4,
                                        window=m.zeros(4)), RuntimeError, "window overlap add")
    for shape in ((3, 0), (0, 3)):
        assert_same_error(lambda m: m.istft(m.zeros(shape, dtype=m.complex64), 2),
                          RuntimeError, "istft")


@pytest.mark.parametrize("amplitude,length,n", [(123, 5, 1), (150, 5, 2), (111, 5, 3),
                                                (160, 7, 4), (145, 8, 5), (80, 9, 6), (99, 10, 7)])
def test_istft_of_sine(amplitude, length, n):
    """The istft of a spectrum with one sine's two bins is that sine."""
    def program(m):
        spectrum = m.zeros((length // 2 + 1, 2), dtype=m.complex128)
        if n < spectrum.shape[0]:
            spectrum[n].imag = m.tensor(-amplitude * length / 2.0, dtype=m.float64)
        if 0 <= length - n < spectrum.shape[0]:
            spectrum[length - n].imag = m.tensor(amplitude * length / 2.0, dtype=m.float64)
        return m.istft(spectrum, length, hop_length=length, win_length=length,
                       window=m.ones(length, dtype=m.float64), center=False, normalized=False)
    (_, inverse), = assert_same(program, 1e-9)
    x = np.arange(2 * length + 1)
    np.testing.assert_allclose(inverse, (amplitude * np.sin(2 * np.pi / length * x * n))[
        :inverse.shape[-1]], rtol=0, atol=1e-3)


@pytest.mark.parametrize("size,options", [
    ((2, 7, 7), {"n_fft": 12, "window": ("hann_window", 12), "center": True, "normalized": True,
                 "onesided": True}),
    ((2, 12, 7), {"n_fft": 12, "window": ("hann_window", 12), "center": True,
                  "normalized": False, "onesided": False}),
    ((2, 12, 7), {"n_fft": 12, "window": ("hamming_window", 12), "center": True,
                  "normalized": True, "onesided": False}),
    ((2, 7, 3), {"n_fft": 12, "window": ("hamming_window", 12), "center": False,
                 "normalized": False, "onesided": True})])
def test_istft_linearity(size, options):
    first, second = randn(*size, dtype="complex128"), randn(*size, dtype="complex128")
    a, b = RNG.random(2)

    def program(m):
        kwargs = _with_window(m, options)
        combined = a * t(m, first).istft(**kwargs) + b * t(m, second).istft(**kwargs)
        return combined, m.istft(a * t(m, first) + b * t(m, second), **kwargs)
    (_, combined), (_, direct) = assert_same(program, 1e-9)
    np.testing.assert_allclose(combined, direct, rtol=0, atol=1e-5)


def test_batch_istft():
    original = np.array([[4.0] * 5, [0.0] * 5, [0.0] * 5], dtype=np.complex64)
    (_, one), (_, single), (_, multi) = assert_same(lambda m: (
        m.istft(t(m, original), n_fft=4, length=4),
        m.istft(t(m, original).repeat(1, 1, 1), n_fft=4, length=4),
        m.istft(t(m, original).repeat(4, 1, 1), n_fft=4, length=4)), 1e-6)
    np.testing.assert_allclose(single, np.tile(one, (1, 1)), atol=1e-6)
    np.testing.assert_allclose(multi, np.tile(one, (4, 1)), atol=1e-6)


def test_stft_and_istft_gradients():
    """Gradients and double backward of stft (signal and window) and istft against torch's;
    gradcheck/gradgradcheck in float64."""
    x, window = randn(2, 20), RNG.random(8) + 0.5

    def program(m):
        signal, w = t(m, x).requires_grad_(), t(m, window).requires_grad_()
        spectrum = m.stft(signal, 8, 3, window=w, return_complex=True)
        back = m.istft(spectrum, 8, 3, window=w, length=20)
        loss = spectrum.abs().pow(2).sum() + back.pow(3).sum()
        grads = m.autograd.grad(loss, (signal, w), create_graph=True)
        second = m.autograd.grad(grads[0].sum() + grads[1].sum(), (signal, w))
        return spectrum, back, grads, second
    assert_same(program, 1e-9)
    signal = gradkit.from_numpy(x).requires_grad_()
    w = gradkit.from_numpy(window).requires_grad_()
    f = lambda s, v: gradkit.istft(gradkit.stft(s, 8, 3, window=v, return_complex=True),  # noqa: E731
                                   8, 3, window=v, length=20)
    assert gradkit.autograd.gradcheck(f, (signal, w))
    assert gradkit.autograd.gradgradcheck(f, (signal, w))


# -- TestFFTDocExamples: torch.fft's docstring examples, run under gradkit ----------------------

@pytest.mark.parametrize("name", [n for n in torch.fft.__all__
                                  if "Example" in (getattr(torch.fft, n).__doc__ or "")])
def test_torch_fft_doc_examples(name):
    """The examples in torch.fft's docstrings, with ``torch`` read as ``gradkit``, print what
    torch's docs print."""
    source = getattr(torch.fft, name).__doc__.replace("torch.", "gradkit.")
    test = doctest.DocTestParser().get_doctest(source, {"gradkit": gradkit}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.tries > 0 and runner.failures == 0
