"""``gradkit.fft``: torch.fft's discrete Fourier transforms, with their gradients.

>>> import gradkit
>>> x = gradkit.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
>>> gradkit.fft.rfft(x)
tensor([10.+0.j, -2.+2.j, -2.+0.j], grad_fn=<FftR2CBackward0>)
>>> gradkit.fft.rfft(x).real.sum().backward()   # d/dx_n of sum_k cos(2 pi k n / 4), k = 0..2
>>> x.grad
tensor([3., 0., 1., 0.])
"""
from gradkit.ops.keywords import take_numpy_names
from gradkit.ops.fft_helpers import fftfreq, fftshift, ifftshift, rfftfreq  # noqa: F401
from gradkit.ops.fft_transforms import (  # noqa: F401
    fft, fft2, fftn, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ihfft, ihfft2, ihfftn, irfft, irfft2,
    irfftn, rfft, rfft2, rfftn)

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn",
           "rfft", "rfft2", "rfftfreq", "rfftn"]
take_numpy_names(globals(), __all__)  # x=, axis= ... as torch's parser takes them
