"""stft and istft against torch: values and dtypes over their options, the round trip, the
warnings, and every error with its message (gradients: the op_db rows "stft" and "istft")."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck
from signal_twins import assert_same as assert_same_as_torch, assert_same_error

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(7)
SIGNAL, BATCH = _rng.standard_normal(20), _rng.standard_normal((3, 17))
COMPLEX_SIGNAL = _rng.standard_normal(20) + 1j * _rng.standard_normal(20)
HANN = np.hanning(8)


def assert_same(program, rtol=1e-10, atol=1e-12):
    assert_same_as_torch(program, rtol=rtol, atol=atol)


def _stft(signal, n_fft=8, **options):
    def program(m):
        arrays = {k: m.tensor(v) for k, v in options.items() if isinstance(v, np.ndarray)}
        return m.stft(m.tensor(signal), n_fft, **{**options, **arrays})
    return program


@pytest.mark.parametrize("options", [
    {}, {"hop_length": 3}, {"win_length": 5, "window": np.hanning(5)}, {"center": False},
    {"normalized": True}, {"onesided": False}, {"pad_mode": "constant"},
    {"pad_mode": "replicate"}, {"pad_mode": "circular"}, {"window": HANN},
    {"center": False, "align_to_window": True, "win_length": 6, "window": np.ones(6)},
    {"center": False, "align_to_window": False, "win_length": 6},
    {"return_complex": False}, {"return_complex": False, "onesided": False}],
    ids=lambda options: ",".join(options) or "defaults")
def test_stft_matches_torch(options):
    options = {"return_complex": True, **options}
    assert_same(_stft(SIGNAL, **options))
    assert_same(_stft(BATCH, **options))


def test_stft_of_complex_signals_and_windows_matches_torch():
    assert_same(_stft(COMPLEX_SIGNAL))
    assert_same(_stft(COMPLEX_SIGNAL, window=HANN, normalized=True))
    assert_same(_stft(SIGNAL, window=HANN + 0.5j, return_complex=True))
    single = {"rtol": 1e-5, "atol": 1e-6}  # float32 steps round as torch's kernels may not
    assert_same(_stft(SIGNAL, window=HANN.astype(np.float32), return_complex=True), **single)
    assert_same(_stft(SIGNAL.astype(np.float32), window=HANN, return_complex=True), **single)
    assert_same(_stft(SIGNAL.astype(np.float32), window=HANN.astype(np.float32),
                      return_complex=True), **single)


@pytest.mark.parametrize("program", [
    _stft(SIGNAL), _stft(SIGNAL.astype(np.int32), return_complex=True),
    lambda m: m.stft(m.tensor(SIGNAL).reshape(1, 2, 10), 4, return_complex=True),
    _stft(SIGNAL, 30, center=False, return_complex=True),
    _stft(SIGNAL, 0, return_complex=True),
    _stft(SIGNAL, hop_length=0, return_complex=True),
    _stft(SIGNAL, win_length=9, return_complex=True),
    _stft(SIGNAL, window=np.ones(5, dtype=np.float32), return_complex=True),
    _stft(COMPLEX_SIGNAL, onesided=True),
    _stft(SIGNAL, window=HANN + 0j, onesided=True, return_complex=True),
    _stft(SIGNAL, align_to_window=True, return_complex=True),
    _stft(SIGNAL[:6], center=False, align_to_window=True, win_length=4, return_complex=True),
    _stft(SIGNAL[:3], return_complex=True),
    _stft(SIGNAL.astype(np.float16), return_complex=True),
    _stft(SIGNAL, pad_mode="mirror", return_complex=True)])
def test_stft_errors_match_torch(program):
    assert_same_error(program)


def test_stft_warns_as_torch():
    x = gradkit.tensor(SIGNAL)
    with pytest.warns(UserWarning, match="A window was not provided"):
        gradkit.stft(x, 8, return_complex=True)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        gradkit.stft(x, 8, window=gradkit.ones(8, dtype=gradkit.float64), return_complex=False)


SPECTRUM = torch.stft(torch.tensor(SIGNAL), 8, window=torch.tensor(HANN),
                      return_complex=True).numpy()


def _istft(spectrum=SPECTRUM, n_fft=8, **options):
    def program(m):
        arrays = {k: m.tensor(v) for k, v in options.items() if isinstance(v, np.ndarray)}
        return m.istft(m.tensor(spectrum), n_fft, **{**options, **arrays})
    return program


@pytest.mark.parametrize("options", [
    {"window": HANN}, {"window": HANN, "length": 10}, {"window": HANN, "length": 20},
    {"window": HANN, "center": False}, {"window": HANN, "normalized": True},
    {"window": np.ones(6), "win_length": 6}, {}, {"window": HANN, "hop_length": 3},
    {"window": HANN.astype(np.float32)}],
    ids=lambda options: ",".join(options) or "defaults")
def test_istft_matches_torch(options):
    single = {"rtol": 1e-5, "atol": 1e-6}  # float32 steps round as torch's kernels may not
    tolerance = single if "window" in options and options["window"].dtype == np.float32 else {}
    assert_same(_istft(**options), **tolerance)
    assert_same(_istft(np.stack([SPECTRUM, 2 * SPECTRUM]), **options), **tolerance)
    assert_same(_istft(SPECTRUM.astype(np.complex64), **options), **single)


def test_istft_two_sided_and_complex_outputs_match_torch():
    two_sided = np.fft.fft(_rng.standard_normal((8, 5)) + 1j * _rng.standard_normal((8, 5)),
                           axis=0)
    assert_same(_istft(two_sided, window=HANN, return_complex=True))
    assert_same(_istft(two_sided, window=HANN, onesided=False))
    assert_same(_istft(two_sided, window=HANN + 0.25j, return_complex=True, length=12))
    assert_same(_istft(np.ones((5, 4)) + 0j, center=False, hop_length=1, length=13))


def test_istft_of_side_by_side_frames_keeps_negative_zeros_as_torch():
    """hop == n_fft: torch copies the frames into place, so -0.0 stays (fuzz seed 2931)."""
    assert_same(lambda m: m.istft(m.tensor([[-0.0 + 0j, 1.0, 0.0]]), 1, hop_length=1,
                                  window=m.ones(1, dtype=m.float64), center=False), atol=0)
    assert_same(lambda m: m.istft(m.tensor([[-0.0 + 0j, 1.0], [0.5, 0.0]]), 2,
                                  hop_length=2, window=m.ones(2, dtype=m.float64),
                                  center=False), atol=0)


def test_istft_inverts_stft():
    x = gradkit.tensor(BATCH)
    window = gradkit.hann_window(8, dtype=gradkit.float64)
    spectrum = gradkit.stft(x, 8, window=window, return_complex=True)
    back = gradkit.istft(spectrum, 8, window=window, length=17)
    np.testing.assert_allclose(back.numpy(), BATCH, atol=1e-12)


@pytest.mark.parametrize("program", [
    _istft(SPECTRUM.real, window=HANN), _istft(SPECTRUM[:, :0], window=HANN),
    _istft(SPECTRUM[None, None], window=HANN), _istft(SPECTRUM[0], window=HANN),
    _istft(n_fft=10, window=HANN), _istft(onesided=False, window=HANN),
    _istft(hop_length=9, window=HANN), _istft(win_length=9, window=HANN),
    _istft(window=HANN[:5]), _istft(window=np.zeros(8)),
    _istft(window=HANN, length=30),
    _istft(window=HANN, return_complex=True), _istft(window=HANN + 0j)])
def test_istft_errors_match_torch(program):
    assert_same_error(program)


def test_istft_warns_without_a_window_as_torch():
    with pytest.warns(UserWarning, match="A rectangular window will be applied.Please provide "
                                         "the same window used by stft"):
        gradkit.istft(gradkit.tensor(SPECTRUM), 8)


def test_istft_warns_when_it_pads_as_torch():
    spectrum = gradkit.ones(5, 4, dtype=gradkit.complex128)
    with pytest.warns(UserWarning, match="The length of signal is shorter than the length"):
        gradkit.istft(spectrum, 8, center=False, hop_length=1, length=13)


def test_stft_and_istft_are_differentiable_to_second_order():
    """The window's gradient too (op_db checks the signal's against torch)."""
    signal = gradkit.tensor(_rng.standard_normal(12), requires_grad=True)
    window = gradkit.tensor(_rng.random(4) + 0.5, requires_grad=True)

    def roundtrip(s, w):
        spectrum = gradkit.stft(s, 4, window=w, return_complex=True)
        return gradkit.istft(spectrum * spectrum.abs(), 4, window=w, length=12)
    assert gradcheck(roundtrip, (signal, window))
    assert gradgradcheck(roundtrip, (signal, window))


def test_copying_pads_refuse_what_torch_refuses():
    for pad in ((1, 3, 1, 1), (1, 1, 1, 3)):
        assert_same(lambda m, pad=pad: m.nn.functional.pad(m.ones(1, 2, 3, 3), pad, "reflect"))
    assert_same(lambda m: m.nn.functional.pad(m.ones(2, 3), (3, 0), "reflect"))
    assert_same(lambda m: m.nn.functional.pad(m.ones(1, 2, 3, 3, 3), (1, 1, 1, 1, 3, 1),
                                              "reflect"))
    assert_same(lambda m: m.nn.functional.pad(m.ones(1, 2, 3, 3), (2, 2, 2, 2), "reflect"))
    for shape, pad in (((1, 0, 2), (1, 1)), ((0, 2), (1, 1)), ((0, 2, 3), (1, 1)),
                       ((1, 0, 2, 2), (1, 1, 1, 1)), ((2, 3, 0), (1, 1))):
        for mode in ("reflect", "replicate"):
            assert_same(lambda m, shape=shape, pad=pad, mode=mode: m.nn.functional.pad(
                m.zeros(shape), pad, mode))
