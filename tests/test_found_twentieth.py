"""Differences the fuzzer found in the twentieth session, each program run in gradkit and in
torch 2.13 (skipped without torch)."""
import numpy as np
import pytest
from cpu_kernels import torch_runs_avx512_kernels
from fuzz.known import diff_program
from fuzz.programs import RandomDrawer, generate

import gradkit

torch = pytest.importorskip("torch")


def _outcome(call):
    """("ok", value as a list, its bits) or (error type name, message)."""
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return type(error).__name__, str(error).replace("gradkit", "LIB").replace("torch", "LIB")
    array = np.asarray(value.detach().numpy())
    return "ok", array.tolist(), np.signbit(array).tolist()


_SINGULAR = [
    [[-0.784577390139372] * 2] * 2,  # OpenBLAS's LU: det 8.7e-17; MKL's: -0.0
    [[0.3, 0.7, 0.1], [0.6, 1.4, 0.2], [1.0, 2.0, 3.0]],  # MKL's: -0.0 of A, -9.4e-17 of A^T
    [[0.1, 0.3], [0.2, 0.6]],
    [[1.0, 2.0], [2.0, 4.0]]]
_LAYOUTS = {"contiguous": lambda t: t, "column_major": lambda t: t.mT.contiguous().mT,
            "batch": lambda t: t.expand(2, *t.shape)}


@pytest.mark.parametrize("entries", _SINGULAR)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layout", list(_LAYOUTS))
@pytest.mark.parametrize("name", ["det", "slogdet"])
def test_det_of_a_singular_matrix_is_torchs_bits_and_its_backward_computes(entries, dtype,
                                                                           layout, name):
    """torch's det is its LU's pivot sign times its diagonal's product (slogdet: the signs'
    product and the sum of log magnitudes), MKL's rounding of A^T for a contiguous A, of A
    otherwise: a singular matrix whose NumPy (OpenBLAS) LU left noise for a pivot has det ±0
    and logabsdet -inf there, or the noise of the transposed matrix's pivots; gradkit's det
    backward then solved with a matrix its own getrf found singular, and raised
    (strided_breadth seed 1751279). det's gradient there is the documented adjugate (torch's
    is zeros)."""
    def call(m):
        result = getattr(m.linalg, name)(_LAYOUTS[layout](m.tensor(entries,
                                                                   dtype=getattr(m, dtype))))
        return m.stack(list(result)) if name == "slogdet" else result
    ours, theirs = _outcome(lambda: call(gradkit)), _outcome(lambda: call(torch))
    if ours != theirs and not torch_runs_avx512_kernels():  # (where the replay was read)
        pytest.skip("this CPU's MKL getrf rounds this matrix otherwise than its AVX-512 one")
    assert ours == theirs
    grads = []
    for m in (gradkit, torch):
        a = m.tensor(entries, dtype=getattr(m, dtype), requires_grad=True)
        det = m.linalg.det(_LAYOUTS[layout](a))
        det.sum().backward()
        grads.append(a.grad.numpy())
    assert np.isfinite(grads[0]).all()
    if det.detach().ne(0).all():  # torch's plain backward through its LU, as gradkit's now
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)


def test_the_fuzzers_singular_det_is_known_or_agrees():
    problems, known = diff_program(generate(RandomDrawer(1751279), "strided_breadth"))
    assert not problems or known is not None and "adjugate" in known
