"""The short-time Fourier transform and its inverse, as torch.stft and torch.istft.

Both are written with differentiable ops (index_select cuts the frames, index_add adds them
back, gradkit.fft transforms them), so their gradients, to any order, are those of torch's
formulas: stft is linear in the signal and in the window, istft divides by the window's
overlap-added square. The error messages repeat torch's description of the call.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from gradkit._tensor import Tensor
from gradkit.creation import arange, ones, zeros
from gradkit.int_arguments import invalid_combination, reads_as_int, type_name
from gradkit.ops.complex_views import view_as_real
from gradkit.ops.fft_transforms import fft, ifft, irfft, rfft
from gradkit.ops.index_ops import index_add
from gradkit.ops.indexing import index_select
from gradkit.ops.methods import tensor_method
from gradkit.ops.padding import pad
from gradkit.ops.piecewise import abs as absolute
from gradkit.ops.unary_helpers import scalar_type_name

NO_WINDOW_WARNING = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
NO_INVERSE_WINDOW_WARNING = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
REAL_OUTPUT_WARNING = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format.")


def _flag(value) -> str:
    """A bool as torch's messages print it (1/0), None as None."""
    return "None" if value is None else str(int(value))


def _tensor_type(x) -> str:
    """torch's toString() of a tensor: its legacy class name, CPUComplexFloatType & co. for
    the complex dtypes (which have none)."""
    if x.is_complex():
        return f"{x.device.type.upper()}{scalar_type_name(x)}Type"
    return f"gradkit.{scalar_type_name(x)}Tensor"


# the parameters torch's parser reads (stft's _VF call, after its Python padding; istft's own
# signature), in order, with their kinds ("?": None allowed)
_STFT_KINDS = (("n_fft", "int"), ("hop_length", "int?"), ("win_length", "int?"),
               ("window", "Tensor?"), ("normalized", "bool"), ("onesided", "bool?"),
               ("return_complex", "bool?"), ("align_to_window", "bool?"))
_ISTFT_KINDS = (("n_fft", "int"), ("hop_length", "int?"), ("win_length", "int?"),
                ("window", "Tensor?"), ("center", "bool"), ("normalized", "bool"),
                ("onesided", "bool?"), ("length", "int?"), ("return_complex", "bool"))


def _fits(value, kind: str) -> bool:
    if value is None:
        return kind.endswith("?")
    kind = kind.rstrip("?")
    if kind == "int":
        return reads_as_int(value)
    return type(value) is bool if kind == "bool" else isinstance(value, Tensor)


def _check_stft_kinds(input, values: dict) -> None:
    """torch's TypeError for stft arguments of the wrong kinds (its one-line form: torch lists
    its two signatures after it)."""
    if not all(_fits(values[name], kind) for name, kind in _STFT_KINDS):
        raise invalid_combination("stft", (input, *values.values()), {})


def _istft_parser(istft):
    """istft with torch's TypeError for its first argument of the wrong kind (with its
    position when given positionally)."""
    names = list(inspect.signature(istft).parameters)

    @functools.wraps(istft)
    def call(*args, **kwargs):
        values = dict(zip(names, args), **kwargs)
        for name, kind in _ISTFT_KINDS:
            value = values.get(name)
            if name in values and not _fits(value, kind):
                where = f" (position {names.index(name) + 1})" if name in names[:len(args)] \
                    else ""
                raise TypeError(f"istft(): argument '{name}'{where} must be "
                                f"{kind.rstrip('?')}, not {type_name(value)}")
        return istft(*args, **kwargs)
    return call


def _frame_indices(n_frames: int, size: int, hop: int, device) -> Tensor:
    """The flat positions of ``n_frames`` frames of ``size`` samples, ``hop`` apart."""
    starts = arange(n_frames, device=device).unsqueeze(1) * hop
    return (starts + arange(size, device=device)).reshape(-1)


def _overlap_add(frames: Tensor, length: int, hop: int) -> Tensor:
    """(batch, n_frames, size) frames added at ``hop`` apart into (batch, length) signals."""
    batch, n_frames, size = frames.shape
    if hop == size:  # side by side: nothing adds up (a -0.0 stays, as in torch's copy)
        return frames.reshape(batch, length)
    signal = zeros(batch, length, dtype=frames.dtype, device=frames.device)
    return index_add(signal, 1, _frame_indices(n_frames, size, hop, frames.device),
                     frames.reshape(batch, -1))


def _centered(window: Tensor | None, win_length: int, n_fft: int, like: Tensor) -> Tensor:
    """The window (ones when None) padded with zeros on both sides to ``n_fft`` samples."""
    if window is None:
        window = ones(win_length, dtype=like.real.dtype if like.is_complex() else like.dtype,
                      device=like.device)
    left = (n_fft - win_length) // 2
    return window if win_length == n_fft else pad(window, (left, n_fft - win_length - left))


@tensor_method()
def stft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: the FFT of windowed frames ``hop_length`` apart,
    shaped (batch?, frequencies, frames); ``center`` pads the signal by n_fft // 2 first."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:  # torch pads in Python, before the checks (their message shows the padded size)
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        padded = pad(input.reshape(extended), (n_fft // 2, n_fft // 2), pad_mode)
        input = padded.reshape(padded.shape[len(padded.shape) - signal_dim:])  # noqa: A001
    _check_stft_kinds(input, dict(
        n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
        normalized=normalized, onesided=onesided, return_complex=return_complex,
        align_to_window=align_to_window))
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(problem: str):
        shown = "None" if window is None else \
            f"{_tensor_type(window)}{{{list(window.shape)}}}"
        raise RuntimeError(
            f"stft({_tensor_type(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={shown}, normalized={_flag(normalized)}, "
            f"onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
            f"align_to_window={_flag(align_to_window)}) : {problem}")
    if window is None:
        warnings.warn(NO_WINDOW_WARNING, UserWarning, stacklevel=2)
    complex_result = return_complex if return_complex is not None else \
        input.is_complex() or (window is not None and window.is_complex())
    if not complex_result:
        if return_complex is None:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release.")
        warnings.warn(REAL_OUTPUT_WARNING, UserWarning, stacklevel=2)
    if not (input.is_floating_point() or input.is_complex()):
        fail("expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor")
    signal = input.unsqueeze(0) if input.dim() == 1 else input
    length = signal.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")  # sic: torch shows win
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size {list(window.shape)}")
    if align_to_window:  # frames of win_length samples: the window starts at each frame's start
        left = (n_fft - win) // 2
        signal = pad(signal, (left, n_fft - win - left))
        length = signal.shape[1]
    n_frames = 1 + (length - n_fft) // hop
    frames = index_select(signal, 1, _frame_indices(n_frames, n_fft, hop, signal.device))
    frames = frames.reshape(signal.shape[0], n_frames, n_fft)
    if window is not None or win < n_fft:
        frames = frames * _centered(window, win, n_fft, signal)
    if frames.dtype.itemsize == 2:  # float16 (complex32 is not a gradkit dtype)
        raise RuntimeError("MKL FFT doesn't support tensors of type: Half")
    norm = "ortho" if normalized else "backward"
    if frames.is_complex():
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spectrum = fft(frames, dim=-1, norm=norm)
    else:
        spectrum = (fft if onesided is False else rfft)(frames, dim=-1, norm=norm)
    spectrum = spectrum.transpose(1, 2)
    if input.dim() == 1:
        spectrum = spectrum.squeeze(0)
    return spectrum if complex_result else view_as_real(spectrum)


@tensor_method()
@_istft_parser
def istft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of stft: each frame's inverse FFT, windowed, overlap-added and divided by
    the overlap-added squared window (least squares), trimmed to ``length``."""
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")

    def fail(problem: str, separator: str = " : "):
        shown = "None" if window is None else \
            f"{_tensor_type(window)}{{{list(window.shape)}}}"
        raise RuntimeError(
            f"istft({_tensor_type(input)}{list(input.shape)}, n_fft={n_fft}, "
            f"hop_length={hop}, win_length={win}, window={shown}, center={_flag(center)}, "
            f"normalized={_flag(normalized)}, onesided={_flag(onesided)}, length={_flag(length)}, "
            f"return_complex={_flag(return_complex)}){separator}{problem}")
    real_dims = input.dim() + 1  # torch checks the view_as_real of the input
    if real_dims < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-real_dims}, "
                         f"{real_dims - 1}], but got -3)")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    if input.numel() == 0:
        fail("input tensor cannot be empty.")
    if real_dims not in (3, 4):
        fail(f"expected a tensor with 3 or 4 dimensions, but got {real_dims}")
    one_sided = fft_size != n_fft if onesided is None else onesided
    if one_sided and n_fft // 2 + 1 != fft_size:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not one_sided and n_fft != fft_size:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        fail("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail("expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail("Invalid window shape. window has to be 1D and length of `win_length`")
    if window is None:
        warnings.warn(NO_INVERSE_WINDOW_WARNING, UserWarning, stacklevel=2)
    full_window = _centered(window, win, n_fft, input)
    frames = (input.unsqueeze(0) if real_dims == 3 else input).transpose(1, 2)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = ifft(frames, dim=-1, norm=norm)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one_sided:
            frames = frames[..., :n_fft // 2 + 1]
        frames = irfft(frames, n=n_fft, dim=-1, norm=norm)
    expected_length = n_fft + hop * (n_frames - 1)
    signal = _overlap_add(frames * full_window, expected_length, hop)
    envelope = _overlap_add((full_window * full_window).expand(1, n_frames, n_fft),
                            expected_length, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else expected_length
    signal, envelope = signal[:, start:end], envelope[:, start:end]
    if bool((absolute(envelope).min() < 1e-11).item()):
        fail("1\n[ CPUBoolType{} ]", separator=" window overlap add min: ")
    signal = signal / envelope
    if real_dims == 3:
        signal = signal.squeeze(0)
    if end > expected_length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        signal = pad(signal, (0, end - expected_length))
    return signal
