"""Probes of what this CPU's torch and NumPy kernels do where the answer depends on the CPU
(AVX-512 or not, oneDNN or not): tests that cite such a behaviour ask here first, then
assert gradkit agrees with torch where it can and the documented difference otherwise."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def torch_float32_gelu_is_nan_at_inf() -> bool:
    """Whether torch's float32 gelu of more than one element (its oneDNN kernel) is NaN at
    +inf, as on AVX-512 CPUs; on AVX2 ones it is inf, as gradkit's."""
    return math.isnan(torch.nn.functional.gelu(torch.tensor([math.inf, 1.0]))[0].item())


def numpy_log_of_a_negative_sets_the_sign_bit() -> bool:
    """Whether NumPy's float64 log of a negative (a short array) is -nan, as its AVX-512 loop
    makes it; its AVX2 one makes +nan, as torch's log does on both."""
    with np.errstate(invalid="ignore"):
        return bool(np.signbit(np.log(np.array([-0.5, 2.0])))[0])


def torch_runs_avx512_kernels() -> bool:
    """Whether torch runs its AVX-512 kernels here (its MKL's too): they round, sign zeros and
    order sums otherwise than its AVX2 ones (CI's CPUs), so a program that differs from
    gradkit by an AVX2 kernel's exact zero, signed zero or repeated eigenvalue may agree here,
    or differ by another documented rounding, and a sum bit-exact there is an ulp off here."""
    return torch.backends.cpu.get_cpu_capability().startswith("AVX512")


def assert_lapack_known(problems: list, known: str | None, entry: str) -> None:
    """A program pinned on MKL's AVX2 kernels differs as the documented ``entry`` says; with
    its AVX-512 kernels it may agree, or differ by another documented entry, never silently."""
    if torch_runs_avx512_kernels():
        assert not problems or known is not None, problems[0]
    else:
        assert problems and known is not None and known.startswith(entry), (problems, known)
